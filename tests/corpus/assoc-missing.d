BEGIN
{
	a[1] = 5;
	s["k"] = "v";
	printf("%d [%s] [%s]\n", a[2], s["m"], s["k"]);
	exit(0);
}

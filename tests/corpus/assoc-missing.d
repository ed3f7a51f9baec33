BEGIN
{
	a[1] = 5;
	s["k"] = "v";
	printf("%d %d [%s]\n", a[2], s["m"] == NULL, s["k"]);
	exit(0);
}

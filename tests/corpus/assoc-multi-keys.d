BEGIN
{
	b[1, "x"] = 5;
	b[1, "y"] = 6;
	b[2, "x"] = 7;
	printf("%d %d %d %d\n", b[1, "x"], b[1, "y"], b[2, "x"], b[2, "y"]);
	exit(0);
}

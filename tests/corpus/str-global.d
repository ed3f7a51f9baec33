BEGIN
{
	g = "first";
	printf("%s ", g);
	g = "second";
	printf("%s\n", g);
	exit(0);
}

BEGIN
{
	g = "set";
}

BEGIN
{
	printf("%s\n", g);
	exit(0);
}

BEGIN
{
	printf("%d %s %d %s %d %s\n", 1, "a", 2, "b", 3, "c");
	exit(0);
}

BEGIN
{
	printf("%d %d %d %d\n", 1 << 10, 3 << 4, 1 << 31, 1L << 40);
	exit(0);
}

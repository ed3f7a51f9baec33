BEGIN
{
	printf("%d %d %d %d %d\n", sizeof (2147483647), sizeof (2147483648), sizeof (0x7fffffff), sizeof (0x80000000), sizeof (0x100000000));
	exit(0);
}

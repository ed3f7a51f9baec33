BEGIN
{
	printf("%d %d %d %d\n", 0x7fffffff, 0xffffffff, 0x100000000, 0xffffffffffffffff);
	exit(0);
}

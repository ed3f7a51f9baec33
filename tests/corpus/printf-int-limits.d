BEGIN
{
	printf("%d %d %u %x\n", 2147483647, -2147483647 - 1, 0xffffffff, 0x80000000);
	exit(0);
}

BEGIN
{
	u = 0xf0000000;
	i = (int)0xf0000000;
	printf("%d %d %d %x %x %d\n", -16 >> 2, -1 >> 28, 256 >> 4, u >> 4, i >> 4, -16L >> 1);
	exit(0);
}

BEGIN
{
	x = 5;
	printf("%d %ld %lu %u\n", x << 0, 1L << 63, 1UL << 63, (unsigned int)1 << 31);
	exit(0);
}

BEGIN
{
	printf("%ld %lld %lu %lx %llu\n", 1L << 40, -5LL, 5UL, 255L, 18446744073709551615ULL);
	exit(0);
}

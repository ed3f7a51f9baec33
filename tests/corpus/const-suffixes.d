BEGIN
{
	printf("%d %d %d %d %d\n", 1u - 2, 1ul - 2, 1l - 2, 1ll - 2, 1ull - 2);
	exit(0);
}

BEGIN
{
	x = (long long)1 << 63;
	printf("%lld %lld %lld\n", x, -x, x - 1);
	exit(0);
}

BEGIN
{
	one = 1;
	n = 31;
	m = 63;
	printf("%d %d %d\n", (int)(one << n), (long)one << m == 1L << 63, (int)((long)one << 32));
	exit(0);
}

BEGIN
{
	printf("%d %d %d\n", -1u, -1ul, -(-5));
	exit(0);
}

BEGIN
{
	x = 7;
	printf("%d %d %d %d\n", -x, +x, -(-x), ~x);
	exit(0);
}

BEGIN
{
	x = -9000000000;
	printf("%d %d %d\n", x / 7, x % 7, x / -1000000000);
	exit(0);
}

BEGIN
{
	x = -9;
	y = 4;
	printf("%d %d %d %d\n", x / y, x % y, y / x, y % x);
	exit(0);
}

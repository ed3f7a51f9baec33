BEGIN
{
	y = (a = 1, b = 2, a + b);
	printf("%d %d %d\n", a, b, y);
	exit(0);
}

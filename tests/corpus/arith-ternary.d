BEGIN
{
	x = 5;
	printf("%d %d %d\n", x > 3 ? 10 : 20, x < 3 ? 10 : 20, x == 5 ? (x > 4 ? 1 : 2) : 3);
	exit(0);
}

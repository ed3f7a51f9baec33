BEGIN
{
	x = -1;
	y = 1u;
	z = -1L;
	printf("%d %d %d\n", x > y, x < y, z < y);
	exit(0);
}

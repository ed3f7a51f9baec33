BEGIN
{
	x = 0;
	z = 5;
	r = x != 0 && 10 / x > 1;
	s = x == 0 || 10 / x > 1;
	t = x != 0 ^^ 1;
	printf("%d %d %d %d\n", r, s, t, z);
	exit(0);
}

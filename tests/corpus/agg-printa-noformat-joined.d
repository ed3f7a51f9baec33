BEGIN
{
	@a[1] = count();
	@b[1] = sum(9);
	printa(@a, @b);
	exit(0);
}

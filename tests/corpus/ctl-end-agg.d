BEGIN
{
	@total = sum(5);
	exit(0);
}

END
{
	@total = sum(7);
	printa("total %@d\n", @total);
}

BEGIN
{
	@c = count();
	@c = count();
	@c = count();
	printa("count=%@d\n", @c);
	exit(0);
}

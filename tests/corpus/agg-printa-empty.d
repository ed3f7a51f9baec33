BEGIN
/0/
{
	@c = count();
}

BEGIN
{
	printa(@c);
	printa("%@d\n", @c);
	exit(0);
}

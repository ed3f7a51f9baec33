BEGIN
{
	@a = avg(-3);
	@a = avg(-4);
	printa("%@d\n", @a);
	exit(0);
}

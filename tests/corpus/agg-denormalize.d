BEGIN
{
	@s = sum(100);
	normalize(@s, 10);
	denormalize(@s);
	printa("%@d\n", @s);
	exit(0);
}

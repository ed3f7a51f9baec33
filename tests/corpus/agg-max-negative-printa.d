BEGIN
{
	@mx = max(-5);
	@mx = max(-9);
	@mn = min(-5);
	@mn = min(-9);
	printa("%@d %@d\n", @mx, @mn);
	exit(0);
}

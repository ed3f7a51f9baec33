#pragma D option aggsortkey

BEGIN
{
	@c["pear"] = count();
	@c["apple"] = count();
	@c["apple"] = count();
	@c["fig"] = count();
	@c["Zebra"] = count();
	printa("%s=%@d\n", @c);
	exit(0);
}

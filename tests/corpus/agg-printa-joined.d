BEGIN
{
	@a["x"] = count();
	@b["x"] = sum(7);
	printa("%s %@d %@d\n", @a, @b);
	exit(0);
}

BEGIN
{
	@a["x"] = count();
	@a["x"] = count();
	@a["y"] = count();
	@b["x"] = sum(10);
	@b["y"] = sum(20);
	@c["x"] = max(7);
	@c["y"] = max(-7);
	printa("%s %@d %@d %@d\n", @a, @b, @c);
	exit(0);
}

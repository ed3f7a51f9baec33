BEGIN
{
	@c["ab"] = count();
	@c["xyz"] = count();
	@c["xyz"] = count();
	printa("%-6s|%8@d|%-4@d|\n", @c);
	exit(0);
}

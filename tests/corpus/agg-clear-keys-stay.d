BEGIN
{
	@c["a"] = count();
	@c["b"] = count();
	clear(@c);
	printa("%s %@d\n", @c);
	exit(0);
}

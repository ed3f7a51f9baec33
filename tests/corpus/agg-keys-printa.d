BEGIN
{
	@c["a"] = count();
	@c["b"] = count();
	@c["b"] = count();
	@c["c"] = count();
	@c["c"] = count();
	@c["c"] = count();
	printa("%s %@d\n", @c);
	exit(0);
}

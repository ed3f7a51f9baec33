BEGIN
{
	@c["a"] = sum(1);
	@c["b"] = sum(2);
	@c["c"] = sum(3);
	@c["d"] = sum(4);
	trunc(@c, -2);
	printa("%s %@d\n", @c);
	exit(0);
}

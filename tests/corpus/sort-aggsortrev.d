#pragma D option aggsortrev

BEGIN
{
	@c["b"] = count();
	@c["b"] = count();
	@c["b"] = count();
	@c["a"] = count();
	@c["c"] = count();
	@c["c"] = count();
	printa("%s %@d\n", @c);
	exit(0);
}

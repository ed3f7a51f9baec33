#pragma D option aggsortkey

BEGIN
{
	@a["x"] = count();
	@b["y"] = sum(5);
	printa("%s %@d %@d\n", @a, @b);
	exit(0);
}

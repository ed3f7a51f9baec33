#pragma D option aggsortkey
#pragma D option aggsortkeypos=1

BEGIN
{
	@c["a", 2] = count();
	@c["b", 1] = count();
	@c["c", 3] = count();
	printa("%s %d %@d\n", @c);
	exit(0);
}

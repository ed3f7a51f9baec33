#pragma D option aggsortpos=1

BEGIN
{
	@a["x"] = sum(3);
	@a["y"] = sum(1);
	@a["z"] = sum(2);
	@b["x"] = sum(10);
	@b["y"] = sum(30);
	@b["z"] = sum(20);
	printa("%s %@d %@d\n", @a, @b);
	exit(0);
}

BEGIN
{
	@s["x"] = sum(100);
	@s["y"] = sum(35);
	normalize(@s, 10);
	printa("%s %@d\n", @s);
	exit(0);
}

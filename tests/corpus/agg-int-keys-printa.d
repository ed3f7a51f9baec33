BEGIN
{
	@s[1] = sum(10);
	@s[2] = sum(5);
	@s[3] = sum(7);
	printa("%d:%@d\n", @s);
	exit(0);
}

BEGIN
{
	@s = sum(5);
	@s = sum(-2);
	@s = sum(10);
	@mn = min(5);
	@mn = min(-2);
	@mn = min(10);
	@mx = max(5);
	@mx = max(-2);
	@mx = max(10);
	printa("sum %@d\n", @s);
	printa("min %@d\n", @mn);
	printa("max %@d\n", @mx);
	exit(0);
}

BEGIN
{
	@s = sum(100);
	normalize(@s, 4);
	exit(0);
}

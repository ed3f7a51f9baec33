BEGIN
{
	@m = min(3);
	@m = min(-4);
	exit(0);
}

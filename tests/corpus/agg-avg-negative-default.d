BEGIN
{
	@a = avg(-3);
	@a = avg(-4);
	exit(0);
}

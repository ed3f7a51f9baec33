BEGIN
{
	@a = avg(-10);
	@a = avg(4);
	@a = avg(-3);
	exit(0);
}

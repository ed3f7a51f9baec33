BEGIN
{
	@a = avg(1);
	@a = avg(2);
	exit(0);
}

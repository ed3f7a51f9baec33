BEGIN
{
	@a = avg(5);
	@a = avg(-2);
	@a = avg(10);
	printa("avg %@d\n", @a);
	exit(0);
}

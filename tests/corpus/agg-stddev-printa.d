BEGIN
{
	@sd = stddev(2);
	@sd = stddev(4);
	@sd = stddev(4);
	@sd = stddev(4);
	@sd = stddev(5);
	@sd = stddev(5);
	@sd = stddev(7);
	@sd = stddev(9);
	printa("stddev %@d\n", @sd);
	exit(0);
}

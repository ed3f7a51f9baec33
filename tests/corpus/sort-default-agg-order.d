BEGIN
{
	@z = sum(1);
	@a = sum(2);
	exit(0);
}

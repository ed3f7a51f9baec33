BEGIN
{
	@a = sum(3);
	@b = sum(1);
	exit(0);
}

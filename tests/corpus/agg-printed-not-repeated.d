BEGIN
{
	@a = count();
	@b = sum(5);
	printa("a %@d\n", @a);
	exit(0);
}

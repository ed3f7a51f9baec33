BEGIN
{
	@c[(long)5] = count();
	@c[1L << 40] = count();
	@c[1L << 40] = count();
	exit(0);
}

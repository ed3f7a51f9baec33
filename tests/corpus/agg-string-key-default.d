BEGIN
{
	@c["foo"] = count();
	@c["bar"] = count();
	@c["bar"] = count();
	exit(0);
}

BEGIN
{
	@c["x", 1] = sum(3);
	@c["y", -2] = sum(1);
	exit(0);
}

BEGIN
{
	@c["x"] = foo();
}

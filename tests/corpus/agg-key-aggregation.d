BEGIN
{
	@a = count();
	@b[@a] = count();
}

BEGIN
{
	@a[1][2] = count();
}

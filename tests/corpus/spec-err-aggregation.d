BEGIN
{
	speculate(1);
	@a = count();
}

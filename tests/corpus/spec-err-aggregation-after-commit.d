BEGIN
{
	commit(1);
	@a = count();
}

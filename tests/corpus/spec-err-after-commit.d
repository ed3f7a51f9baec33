BEGIN
{
	commit(1);
	speculate(1);
}

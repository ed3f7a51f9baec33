BEGIN
{
	commit();
}

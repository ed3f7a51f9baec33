BEGIN
{
	system();
}

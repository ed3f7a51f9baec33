BEGIN
{
	system("%d");
}

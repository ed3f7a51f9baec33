BEGIN
{
	chill("a");
}

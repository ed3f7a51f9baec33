BEGIN
{
	speculate(1);
	chill(1);
}

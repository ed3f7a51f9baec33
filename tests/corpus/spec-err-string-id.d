BEGIN
{
	speculate("a");
}

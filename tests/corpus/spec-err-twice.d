BEGIN
{
	speculate(1);
	speculate(2);
}

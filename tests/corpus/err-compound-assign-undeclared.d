BEGIN
{
	p -= trace(0);
}

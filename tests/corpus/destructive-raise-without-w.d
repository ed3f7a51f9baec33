BEGIN
{
	raise(9);
}

BEGIN
{
	x = raise(9);
}

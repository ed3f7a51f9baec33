BEGIN
{
	x = discard(1);
}

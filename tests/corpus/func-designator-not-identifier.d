BEGIN
{
	x = 1();
}

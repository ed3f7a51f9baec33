BEGIN
{
	panic(1);
}

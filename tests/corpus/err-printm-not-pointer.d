BEGIN
{
	printm(8, 123);
}

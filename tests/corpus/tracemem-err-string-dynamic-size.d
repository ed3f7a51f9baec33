BEGIN
{
	tracemem(0, 8, "x");
}

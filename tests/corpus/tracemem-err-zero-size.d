BEGIN
{
	tracemem(0, 0);
}

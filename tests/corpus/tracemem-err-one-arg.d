BEGIN
{
	tracemem(0);
}

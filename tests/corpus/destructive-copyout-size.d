BEGIN
{
	copyout(0, 0, "x");
}

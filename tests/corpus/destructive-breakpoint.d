BEGIN
{
	breakpoint();
}

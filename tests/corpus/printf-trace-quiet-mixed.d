BEGIN
{
	trace(1);
	trace(" ");
	trace("two");
	trace("\n");
	exit(0);
}

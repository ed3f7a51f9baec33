BEGIN
{
	trace(42);
	trace(-1);
	trace(1234567890123);
	exit(0);
}

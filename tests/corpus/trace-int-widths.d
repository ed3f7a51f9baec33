BEGIN
{
	trace((char)65);
	trace(" ");
	trace((short)-300);
	trace(" ");
	trace(2147483647);
	trace(" ");
	trace(-2147483647 - 1);
	trace(" ");
	trace((long)-5);
	trace("\n");
	exit(0);
}

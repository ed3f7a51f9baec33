BEGIN
{
	trace(9223372036854775807);
	trace("\n");
	trace(-9223372036854775807 - 1);
	trace("\n");
	trace(1L << 40);
	trace("\n");
	exit(0);
}

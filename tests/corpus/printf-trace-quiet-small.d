BEGIN
{
	trace((char)-2);
	trace("\n");
	trace((short)-2);
	trace("\n");
	trace((long long)-2);
	trace("\n");
	exit(0);
}

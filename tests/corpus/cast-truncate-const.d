BEGIN
{
	printf("%d %d %d %d %d %d %d %u %d\n", (char)300, (unsigned char)300, (char)200, (short)70000, (unsigned short)70000, (short)40000, (int)4294967297, (unsigned int)-1, (int)0x87654321);
	exit(0);
}

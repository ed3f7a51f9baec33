BEGIN
{
	v = 0x12345678;
	printf("%x %x %d %d\n", (unsigned short)v, (unsigned char)v, (short)0x8000, (char)0x80);
	exit(0);
}

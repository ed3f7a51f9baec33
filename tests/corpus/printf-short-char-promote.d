BEGIN
{
	printf("%d %d %x %u\n", (char)-128, (short)-32768, (unsigned char)0xab, (unsigned short)-1);
	exit(0);
}

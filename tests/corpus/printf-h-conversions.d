BEGIN
{
	printf("%hd %hu %hx %ho\n", (short)-5, (unsigned short)65535, (short)-1, (unsigned short)8);
	exit(0);
}

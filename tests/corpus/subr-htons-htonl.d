BEGIN
{
	printf("%x %x %x %x\n", htons(0x1234), htons(0x12345678), htonl(0x12345678), htonl(0xff));
	exit(0);
}

BEGIN
{
	printf("%x %x\n", htonll(0x0102030405060708), htonll(1));
	exit(0);
}

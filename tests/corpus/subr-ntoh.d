BEGIN
{
	printf("%x %x %x %d\n", ntohs(0x3412), ntohl(0x78563412), ntohll(0x0807060504030201), ntohs(htons(8080)));
	exit(0);
}

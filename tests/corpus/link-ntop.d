/*
 * link_ntop(): Ethernet and InfiniBand hardware addresses as colon-separated
 * lowercase hex bytes; another hardware type is an illegal operation.
 */
uint8_t ibaddr[20];

BEGIN
{
	this->eth = (uint64_t *)alloca(sizeof (uint64_t));
	*(this->eth) = htonll(0x000102030405 << 16);
	printf("%s\n", link_ntop(ARPHRD_ETHER, this->eth));
	*(this->eth) = htonll(0xffffffffffff << 16);
	printf("%s\n", link_ntop(ARPHRD_ETHER, this->eth));
	*(this->eth) = htonll(0x020820ac040e << 16);
	printf("%s\n", link_ntop(ARPHRD_ETHER, this->eth));
	ibaddr[0] = 0x80;
	ibaddr[1] = 0x0a;
	ibaddr[4] = 0xfe;
	ibaddr[18] = 0x31;
	ibaddr[19] = 0xcd;
	printf("%s\n", link_ntop(ARPHRD_INFINIBAND, ibaddr));
}

BEGIN
{
	printf("%s\n", link_ntop(-1, ibaddr));
}

ERROR
{
	printf("fault %d\n", arg4 == DTRACEFLT_ILLOP);
	exit(0);
}

/* in_addr_t is the IPv4 address type of <netinet/in.h>, as DTrace's D types declare it. */
BEGIN
{
	this->a = (in_addr_t *)alloca(sizeof (in_addr_t));
	*this->a = 0x0100007f;
	printf("%s %d\n", inet_ntoa(this->a), sizeof (in_addr_t));
	exit(0);
}

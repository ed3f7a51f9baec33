/*
 * BEGIN runs in dtrace itself, whose comm is "dtrace": its 16 bytes as an
 * IPv6 address end in zeros, its first four are an IPv4 address.
 */
BEGIN
{
	printf("%s\n", inet_ntop(AF_INET6, (void *)&curthread->comm));
	printf("%s\n", inet_ntoa6((in6_addr_t *)&curthread->comm));
	printf("%s\n", inet_ntop(AF_INET, (ipaddr_t *)&curthread->comm));
	printf("%d %d\n", AF_INET, AF_INET6);
	exit(0);
}

/*
 * BEGIN runs in dtrace itself, whose comm starts with "dtra": as an IPv4
 * address, 100.116.114.97. (The bytes after comm's NUL are whatever an
 * earlier name left there: the IPv6 cases are in the integration tests.)
 */
BEGIN
{
	printf("%s\n", inet_ntop(AF_INET, (ipaddr_t *)&curthread->comm));
	printf("%s\n", inet_ntoa((ipaddr_t *)&curthread->comm));
	printf("%d %d\n", AF_INET, AF_INET6);
	exit(0);
}

/*
 * ip.d's protocol numbers and address families, as scripts compare
 * ipv4_protocol and ipv6_nexthdr with them (dtrace-utils' ip tests).
 */
BEGIN
{
	printf("%d %d %d %d %d %d\n", IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMPV6, AF_INET, AF_INET6);
	exit(0);
}

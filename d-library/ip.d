/*
 * The ip provider's argument types, as Solaris' /usr/lib/dtrace/ip.d
 * declares them: args[0] pktinfo_t *, args[1] csinfo_t *, args[2]
 * ipinfo_t *, args[3] ifinfo_t *, args[4] ipv4info_t * (NULL for IPv6),
 * args[5] ipv6info_t * (NULL for IPv4). The entry program (bpf/ip.bpf.c)
 * fills the same structs, defined for C in bpf/ip.h; a unit test holds the
 * two to one layout. Solaris' `string` members are char arrays, which D
 * reads as strings (printf %s, comparisons, aggregation keys).
 */

/* Protocol numbers (<netinet/in.h>), for ipv4_protocol and ipv6_nexthdr. */
inline int IPPROTO_IP = 0;
inline int IPPROTO_ICMP = 1;
inline int IPPROTO_IGMP = 2;
inline int IPPROTO_IPIP = 4;
inline int IPPROTO_TCP = 6;
inline int IPPROTO_EGP = 8;
inline int IPPROTO_PUP = 12;
inline int IPPROTO_UDP = 17;
inline int IPPROTO_IDP = 22;
inline int IPPROTO_TP = 29;
inline int IPPROTO_DCCP = 33;
inline int IPPROTO_IPV6 = 41;
inline int IPPROTO_RSVP = 46;
inline int IPPROTO_GRE = 47;
inline int IPPROTO_ESP = 50;
inline int IPPROTO_AH = 51;
inline int IPPROTO_OSPF = 89;
inline int IPPROTO_MTP = 92;
inline int IPPROTO_BEETPH = 94;
inline int IPPROTO_ENCAP = 98;
inline int IPPROTO_PIM = 103;
inline int IPPROTO_COMP = 108;
inline int IPPROTO_SCTP = 132;
inline int IPPROTO_UDPLITE = 136;
inline int IPPROTO_RAW = 255;
inline int IPPROTO_MAX = 256;
inline int IPPROTO_HOPOPTS = 0;
inline int IPPROTO_ROUTING = 43;
inline int IPPROTO_FRAGMENT = 44;
inline int IPPROTO_ICMPV6 = 58;
inline int IPPROTO_NONE = 59;
inline int IPPROTO_DSTOPTS = 60;
inline int IPPROTO_MH = 135;

/* Address families (<sys/socket.h>). */
inline int AF_INET = 2;
inline int AF_INET6 = 10;

/* Hardware address types link_ntop() formats (<linux/if_arp.h>). */
inline int ARPHRD_ETHER = 1;
inline int ARPHRD_INFINIBAND = 32;

inline int TCP_MIN_HEADER_LENGTH = 20;

typedef struct pktinfo {
	uintptr_t pkt_addr;		/* the struct sk_buff */
} pktinfo_t;

typedef struct csinfo {
	uintptr_t cs_addr;		/* the socket (struct sock), 0 if none */
	uint64_t cs_cid;		/* connection ID: the socket's address */
	pid_t cs_pid;			/* process sending, where known; else 0 */
	int cs_zoneid;			/* 0 */
} csinfo_t;

typedef struct ipinfo {
	uint8_t ip_ver;			/* IP version (4, 6) */
	uint32_t ip_plength;		/* payload length (Solaris: 16 bits; BIG TCP's
					   GSO packets carry more than 64 KiB) */
	char ip_saddr[46];		/* source address */
	char ip_daddr[46];		/* destination address */
} ipinfo_t;

typedef struct ifinfo {
	char if_name[16];		/* interface name */
	int8_t if_local;		/* 1: loopback, delivered locally */
	uint32_t if_ipstack;		/* network namespace (inode number) */
	uintptr_t if_addr;		/* the struct net_device */
} ifinfo_t;

typedef struct ipv4info {
	uint8_t ipv4_ver;		/* IP version (4) */
	uint8_t ipv4_ihl;		/* header length, bytes */
	uint8_t ipv4_tos;		/* type of service field */
	uint16_t ipv4_length;		/* length (header + payload) */
	uint16_t ipv4_ident;		/* identification */
	uint8_t ipv4_flags;		/* IP flags: 0x40 don't fragment, 0x20 more */
	uint16_t ipv4_offset;		/* fragment offset, 8-byte units */
	uint8_t ipv4_ttl;		/* time to live */
	uint8_t ipv4_protocol;		/* next level protocol */
	char ipv4_protostr[16];		/* next level protocol, as a string */
	uint16_t ipv4_checksum;		/* header checksum */
	ipaddr_t ipv4_src;		/* source address (network byte order) */
	ipaddr_t ipv4_dst;		/* destination address */
	char ipv4_saddr[46];		/* source address, string */
	char ipv4_daddr[46];		/* destination address, string */
	uintptr_t ipv4_hdr;		/* the raw header (struct iphdr *) */
} ipv4info_t;

typedef struct ipv6info {
	uint8_t ipv6_ver;		/* IP version (6) */
	uint8_t ipv6_tclass;		/* traffic class */
	uint32_t ipv6_flow;		/* flow label */
	uint16_t ipv6_plen;		/* payload length */
	uint8_t ipv6_nexthdr;		/* next header protocol */
	char ipv6_nextstr[16];		/* next header protocol, as a string */
	uint8_t ipv6_hlim;		/* hop limit */
	uintptr_t ipv6_src;		/* source address (in6_addr_t *) */
	uintptr_t ipv6_dst;		/* destination address (in6_addr_t *) */
	char ipv6_saddr[46];		/* source address, string */
	char ipv6_daddr[46];		/* destination address, string */
	uintptr_t ipv6_hdr;		/* the raw header (struct ipv6hdr *) */
} ipv6info_t;


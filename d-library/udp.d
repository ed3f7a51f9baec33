/*
 * The udp provider's argument types, as illumos' /usr/lib/dtrace/udp.d
 * declares them: args[0] pktinfo_t *, args[1] csinfo_t *, args[2]
 * ipinfo_t * (ip.d), args[3] udpsinfo_t *, args[4] udpinfo_t *. The
 * entry programs (bpf/udp.bpf.c) fill the same structs, defined for C in
 * bpf/udp.h; a unit test holds the two to one layout.
 */

typedef struct udpsinfo {
	uintptr_t udps_addr;		/* the struct sock (send), 0 on receive */
	uint16_t udps_lport;		/* local port */
	uint16_t udps_rport;		/* remote port */
	char udps_laddr[46];		/* local address, as a string */
	char udps_raddr[46];		/* remote address, as a string */
} udpsinfo_t;

typedef struct udpinfo {
	uint16_t udp_sport;		/* source port */
	uint16_t udp_dport;		/* destination port */
	uint16_t udp_length;		/* header and payload, bytes */
	uint16_t udp_checksum;		/* checksum */
	uintptr_t udp_hdr;		/* the raw header (struct udphdr *) */
} udpinfo_t;

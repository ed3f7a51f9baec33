/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The udp provider's argument structs, as Solaris' (illumos') udp provider
 * documents them: udpsinfo_t (the socket's ends) and udpinfo_t (the
 * datagram's header); pktinfo_t, csinfo_t and ipinfo_t are the ip
 * provider's (bpf/ip.h). bpf/udp.bpf.c fills them; d-library/udp.d
 * declares the same structs for D scripts, and a unit test in
 * src/provider/udp.rs holds the two to one layout.
 */
#ifndef DTRACE_UDP_H
#define DTRACE_UDP_H

#include "ip.h"

struct udpsinfo {
	__u64 udps_addr;                  /* the struct sock, 0 if not known */
	__u16 udps_lport;
	__u16 udps_rport;
	char udps_laddr[DT_IP_ADDRSTRLEN];
	char udps_raddr[DT_IP_ADDRSTRLEN];
};

struct udpinfo {
	__u16 udp_sport;
	__u16 udp_dport;
	__u16 udp_length;                 /* header and payload, bytes */
	__u16 udp_checksum;
	__u64 udp_hdr;                    /* the header (struct udphdr *) */
};

/* One probe's arguments; args[n] of the probe point at its members. */
struct dt_udp_args {
	struct pktinfo pkt;
	struct csinfo cs;
	struct ipinfo ip;
	struct udpsinfo udps;
	struct udpinfo udp;
};

#endif

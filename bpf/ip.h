/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ip provider's argument structs, as Solaris' ip provider documents
 * them (pktinfo_t, csinfo_t, ipinfo_t, ifinfo_t, ipv4info_t, ipv6info_t).
 * bpf/ip.bpf.c fills them; d-library/ip.d declares the same structs for D
 * scripts. Solaris' `string` members are fixed-size char arrays here and
 * there, which D reads as strings. The unit test in src/provider/ip.rs
 * compares every member's name, offset and size and each struct's size in
 * this file's BTF (the compiled object) with the D declarations: a member
 * added on one side only fails it.
 *
 * ip_plength is 32 bits where Solaris has 16: a GSO packet on Linux (BIG
 * TCP) carries more than 64 KiB of payload.
 */
#ifndef DTRACE_IP_H
#define DTRACE_IP_H

#define DT_IP_ADDRSTRLEN 46 /* INET6_ADDRSTRLEN: the longest address text and its NUL */
#define DT_IP_PROTOSTRLEN 16
#define DT_IP_IFNAMSIZ 16 /* IFNAMSIZ */

struct pktinfo {
	__u64 pkt_addr; /* the struct sk_buff */
};

struct csinfo {
	__u64 cs_addr;   /* the socket (struct sock), 0 if none */
	__u64 cs_cid;    /* connection ID: the socket's address */
	__s32 cs_pid;    /* process sending, where known; else 0 */
	__s32 cs_zoneid; /* 0 */
};

struct ipinfo {
	__u8 ip_ver;                      /* 4 or 6 */
	__u32 ip_plength;                 /* payload length (after the IP header) */
	char ip_saddr[DT_IP_ADDRSTRLEN]; /* source address, text */
	char ip_daddr[DT_IP_ADDRSTRLEN]; /* destination address, text */
};

struct ifinfo {
	char if_name[DT_IP_IFNAMSIZ]; /* interface name */
	__s8 if_local;                /* 1: loopback (delivered locally), 0: not */
	__u32 if_ipstack;             /* network namespace (inode number) */
	__u64 if_addr;                /* the struct net_device */
};

struct ipv4info {
	__u8 ipv4_ver;
	__u8 ipv4_ihl;      /* header length, bytes */
	__u8 ipv4_tos;
	__u16 ipv4_length;  /* header + payload */
	__u16 ipv4_ident;
	__u8 ipv4_flags;    /* IP_DF 0x40, IP_MF 0x20 */
	__u16 ipv4_offset;  /* fragment offset, 8-byte units */
	__u8 ipv4_ttl;
	__u8 ipv4_protocol;
	char ipv4_protostr[DT_IP_PROTOSTRLEN];
	__u16 ipv4_checksum;
	__u32 ipv4_src;     /* network byte order */
	__u32 ipv4_dst;
	char ipv4_saddr[DT_IP_ADDRSTRLEN];
	char ipv4_daddr[DT_IP_ADDRSTRLEN];
	__u64 ipv4_hdr;     /* the header in the packet (struct iphdr *) */
};

struct ipv6info {
	__u8 ipv6_ver;
	__u8 ipv6_tclass;
	__u32 ipv6_flow;    /* flow label */
	__u16 ipv6_plen;    /* payload length */
	__u8 ipv6_nexthdr;
	char ipv6_nextstr[DT_IP_PROTOSTRLEN];
	__u8 ipv6_hlim;     /* hop limit */
	__u64 ipv6_src;     /* the address in the packet (in6_addr_t *) */
	__u64 ipv6_dst;
	char ipv6_saddr[DT_IP_ADDRSTRLEN];
	char ipv6_daddr[DT_IP_ADDRSTRLEN];
	__u64 ipv6_hdr;     /* the header in the packet (struct ipv6hdr *) */
};

/* One probe's arguments; args[n] of the probe point at its members. */
struct dt_ip_args {
	struct pktinfo pkt;
	struct csinfo cs;
	struct ipinfo ip;
	struct ifinfo ifc;
	struct ipv4info v4;
	struct ipv6info v6;
};

#endif

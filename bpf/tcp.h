/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tcp provider's argument structs, as Solaris' (illumos') tcp provider
 * documents them: tcpsinfo_t (the connection), tcpinfo_t (the segment's
 * header), tcplsinfo_t (the previous state); pktinfo_t, csinfo_t and
 * ipinfo_t are the ip provider's (bpf/ip.h). bpf/tcp.bpf.c fills them;
 * d-library/tcp.d declares the same structs for D scripts, and a unit test
 * in src/provider/tcp.rs holds the two to one layout.
 *
 * States are Solaris' numbers (TCPS_CLOSED -6 ... TCPS_TIME_WAIT 6), which
 * tcp.d names; the entry programs translate Linux's.
 */
#ifndef DTRACE_TCP_H
#define DTRACE_TCP_H

#include "ip.h"

#define DT_TCPS_CLOSED -6
#define DT_TCPS_IDLE -5
#define DT_TCPS_BOUND -4
#define DT_TCPS_LISTEN -3
#define DT_TCPS_SYN_SENT -2
#define DT_TCPS_SYN_RCVD -1
#define DT_TCPS_ESTABLISHED 0
#define DT_TCPS_CLOSE_WAIT 1
#define DT_TCPS_FIN_WAIT_1 2
#define DT_TCPS_CLOSING 3
#define DT_TCPS_LAST_ACK 4
#define DT_TCPS_FIN_WAIT_2 5
#define DT_TCPS_TIME_WAIT 6

struct tcpsinfo {
	__u64 tcps_addr;                  /* the struct sock, 0 if none */
	__s32 tcps_local;                 /* both ends on this host */
	__s32 tcps_active;                /* opened by connect() here */
	__u16 tcps_lport;
	__u16 tcps_rport;
	char tcps_laddr[DT_IP_ADDRSTRLEN];
	char tcps_raddr[DT_IP_ADDRSTRLEN];
	__s32 tcps_state;                 /* Solaris' TCPS_* */
	__u32 tcps_iss;                   /* initial sequence number sent */
	__u32 tcps_suna;                  /* sent, not yet acknowledged */
	__u32 tcps_snxt;                  /* next to send */
	__u32 tcps_rack;                  /* last acknowledged (rcv_wup) */
	__u32 tcps_rnxt;                  /* next expected */
	__u32 tcps_swnd;                  /* send window */
	__s32 tcps_snd_ws;                /* send window scale */
	__u32 tcps_rwnd;                  /* receive window */
	__s32 tcps_rcv_ws;                /* receive window scale */
	__u32 tcps_cwnd;                  /* congestion window, bytes */
	__u32 tcps_cwnd_ssthresh;         /* slow start threshold, bytes */
	__u32 tcps_sack_fack;             /* highest SACKed sequence number */
	__u32 tcps_sack_snxt;             /* next sequence number to retransmit */
	__u32 tcps_rto;                   /* retransmission timeout, ms */
	__u32 tcps_mss;                   /* maximum segment size */
	__s32 tcps_retransmit;            /* this send is a retransmission */
	__u32 tcps_rtt;                   /* smoothed round-trip time, ms */
	__u32 tcps_rtt_sd;                /* its deviation, ms */
	__u32 tcps_irs;                   /* initial sequence number received */
};

struct tcplsinfo {
	__s32 tcps_state;                 /* the previous state */
};

struct tcpinfo {
	__u16 tcp_sport;
	__u16 tcp_dport;
	__u32 tcp_seq;
	__u32 tcp_ack;
	__u8 tcp_offset;                  /* header length, bytes */
	__u8 tcp_flags;                   /* TH_* */
	__u16 tcp_window;
	__u16 tcp_checksum;
	__u16 tcp_urgent;
	__u64 tcp_hdr;                    /* the header (struct tcphdr *) */
};

/* One probe's arguments; args[n] of the probe point at its members. */
struct dt_tcp_args {
	struct pktinfo pkt;
	struct csinfo cs;
	struct ipinfo ip;
	struct tcpsinfo tcps;
	struct tcpinfo tcp;
	struct tcplsinfo tcpls;
};

#endif

/*
 * The tcp provider's argument types, as illumos' /usr/lib/dtrace/tcp.d
 * declares them. send, receive, connect-* and accept-*: args[0]
 * pktinfo_t *, args[1] csinfo_t *, args[2] ipinfo_t * (ip.d), args[3]
 * tcpsinfo_t *, args[4] tcpinfo_t *. state-change: args[1] csinfo_t *,
 * args[3] tcpsinfo_t * (the new state), args[5] tcplsinfo_t * (the old).
 * The entry programs (bpf/tcp.bpf.c) fill the same structs, defined for C
 * in bpf/tcp.h; a unit test holds the two to one layout.
 */

inline int32_t TCP_STATE_CLOSED = -6;
inline int32_t TCP_STATE_IDLE = -5;
inline int32_t TCP_STATE_BOUND = -4;
inline int32_t TCP_STATE_LISTEN = -3;
inline int32_t TCP_STATE_SYN_SENT = -2;
inline int32_t TCP_STATE_SYN_RECEIVED = -1;
inline int32_t TCP_STATE_ESTABLISHED = 0;
inline int32_t TCP_STATE_CLOSE_WAIT = 1;
inline int32_t TCP_STATE_FIN_WAIT_1 = 2;
inline int32_t TCP_STATE_CLOSING = 3;
inline int32_t TCP_STATE_LAST_ACK = 4;
inline int32_t TCP_STATE_FIN_WAIT_2 = 5;
inline int32_t TCP_STATE_TIME_WAIT = 6;

inline string tcp_state_string[int32_t state] =
	state == TCP_STATE_CLOSED ? "state-closed" :
	state == TCP_STATE_IDLE ? "state-idle" :
	state == TCP_STATE_BOUND ? "state-bound" :
	state == TCP_STATE_LISTEN ? "state-listen" :
	state == TCP_STATE_SYN_SENT ? "state-syn-sent" :
	state == TCP_STATE_SYN_RECEIVED ? "state-syn-received" :
	state == TCP_STATE_ESTABLISHED ? "state-established" :
	state == TCP_STATE_CLOSE_WAIT ? "state-close-wait" :
	state == TCP_STATE_FIN_WAIT_1 ? "state-fin-wait-1" :
	state == TCP_STATE_CLOSING ? "state-closing" :
	state == TCP_STATE_LAST_ACK ? "state-last-ack" :
	state == TCP_STATE_FIN_WAIT_2 ? "state-fin-wait-2" :
	state == TCP_STATE_TIME_WAIT ? "state-time-wait" :
	"<unknown>";

/* TCP header flags (tcp_flags). */
inline uint8_t TH_FIN = 0x01;
inline uint8_t TH_SYN = 0x02;
inline uint8_t TH_RST = 0x04;
inline uint8_t TH_PUSH = 0x08;
inline uint8_t TH_ACK = 0x10;
inline uint8_t TH_URG = 0x20;
inline uint8_t TH_ECE = 0x40;
inline uint8_t TH_CWR = 0x80;

typedef struct tcpsinfo {
	uintptr_t tcps_addr;		/* the struct sock, 0 if none */
	int tcps_local;			/* delivered locally (loopback) */
	int tcps_active;		/* active open: connect() here */
	uint16_t tcps_lport;		/* local port */
	uint16_t tcps_rport;		/* remote port */
	char tcps_laddr[46];		/* local address, as a string */
	char tcps_raddr[46];		/* remote address, as a string */
	int32_t tcps_state;		/* TCP state (TCP_STATE_*) */
	uint32_t tcps_iss;		/* initial sequence number sent */
	uint32_t tcps_suna;		/* sequence number sent but unacked */
	uint32_t tcps_snxt;		/* next sequence number to send */
	uint32_t tcps_rack;		/* sequence number we have acked */
	uint32_t tcps_rnxt;		/* next sequence number expected */
	uint32_t tcps_swnd;		/* send window size */
	int32_t tcps_snd_ws;		/* send window scaling */
	uint32_t tcps_rwnd;		/* receive window size */
	int32_t tcps_rcv_ws;		/* receive window scaling */
	uint32_t tcps_cwnd;		/* congestion window, bytes */
	uint32_t tcps_cwnd_ssthresh;	/* threshold for congestion avoidance */
	uint32_t tcps_sack_fack;	/* SACK sequence number we have acked */
	uint32_t tcps_sack_snxt;	/* next SACK sequence number to retransmit */
	uint32_t tcps_rto;		/* round-trip timeout, ms */
	uint32_t tcps_mss;		/* maximum segment size */
	int tcps_retransmit;		/* retransmitted segment, boolean */
	uint32_t tcps_rtt;		/* smoothed average round-trip time, ms */
	uint32_t tcps_rtt_sd;		/* its standard deviation, ms */
	uint32_t tcps_irs;		/* initial sequence number received */
} tcpsinfo_t;

typedef struct tcplsinfo {
	int32_t tcps_state;		/* the previous TCP state */
} tcplsinfo_t;

typedef struct tcpinfo {
	uint16_t tcp_sport;		/* source port */
	uint16_t tcp_dport;		/* destination port */
	uint32_t tcp_seq;		/* sequence number */
	uint32_t tcp_ack;		/* acknowledgment number */
	uint8_t tcp_offset;		/* data offset, bytes */
	uint8_t tcp_flags;		/* flags (TH_*) */
	uint16_t tcp_window;		/* window size */
	uint16_t tcp_checksum;		/* checksum */
	uint16_t tcp_urgent;		/* urgent data pointer */
	uintptr_t tcp_hdr;		/* the raw header (struct tcphdr *) */
} tcpinfo_t;

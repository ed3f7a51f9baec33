// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tcp provider, as Solaris' (illumos') tcp provider names its probes,
 * for IPv4 and IPv6 on every interface, loopback included.
 *
 * Segments are seen where the ip provider sees packets (bpf/ip.bpf.c):
 *  - send: net_dev_queue, every TCP segment a device sends (a GSO packet
 *    once, as the stack built it); connect-request is a sent SYN without
 *    ACK, accept-refused a sent RST+ACK with sequence number 0 (Linux's
 *    answer to a segment without ACK, i.e. a SYN, where nothing listens).
 *  - receive: netif_receive_skb, every TCP segment received, before the
 *    stack looks its socket up. The connection is found in dt_tcp_conns,
 *    which dt_tcp_track (inet_sock_set_state) and dt_tcp_learn (the
 *    sockets of sent segments, for connections older than dtrace) keep;
 *    a SYN to a listener gets the listener.
 * Connection events come from the socket's own state changes
 * (inet_sock_set_state): state-change, connect-established (SYN_SENT to
 * ESTABLISHED) and accept-established (SYN_RECV to ESTABLISHED); and
 * connect-refused from tcp_receive_reset in SYN_SENT. Those have no
 * segment at hand: ipinfo_t and tcpinfo_t are the inbound segment that
 * caused the event, rebuilt from the connection (addresses, ports, flags,
 * sequence numbers; no options, so tcp_offset and ip_plength are 20).
 *
 * Linux has no TIME_WAIT state change on the socket: it hands a closing
 * connection to a separate time-wait socket and closes the original. A
 * close from FIN_WAIT_1, FIN_WAIT_2 or CLOSING without an error is that
 * hand-over, reported as a change to TIME_WAIT.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "dtrace.h"
#include "inet.h"
#include "tcp.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/tcp.rs order. */
#define DT_TCP_SEND 0
#define DT_TCP_RECEIVE 1
#define DT_TCP_STATE_CHANGE 2
#define DT_TCP_CONNECT_REQUEST 3
#define DT_TCP_CONNECT_ESTABLISHED 4
#define DT_TCP_CONNECT_REFUSED 5
#define DT_TCP_ACCEPT_ESTABLISHED 6
#define DT_TCP_ACCEPT_REFUSED 7
#define DT_TCP_COUNT 8

/* Probe ID of slot s is dt_tcp_id_base + s. */
const volatile __u32 dt_tcp_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_TCP_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_tcp_progs SEC(".maps");

struct dt_tcp_work {
	struct dt_tcp_args a;
	struct dt_inet_fmt f;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_tcp_work);
} dt_tcp_work SEC(".maps");

/* Layout anchor: makes the skeleton carry the argument structs. */
struct dt_tcp_args dt_layout_tcp_args;

/* A connection by its addresses (a listener: remote all zero); ports in
 * host order. */
struct dt_tcp_key {
	__u8 family; /* 4 or 6 */
	__u8 pad;
	__u16 lport;
	__u16 rport;
	__u16 pad2;
	__u8 laddr[16];
	__u8 raddr[16];
};

#define DT_TCP_CONN_TIME_WAIT 1

struct dt_tcp_conn {
	__u64 sk;
	__u64 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct dt_tcp_key);
	__type(value, struct dt_tcp_conn);
} dt_tcp_conns SEC(".maps");

/* Linux's TCP states (include/net/tcp_states.h). */
#define L_ESTABLISHED 1
#define L_SYN_SENT 2
#define L_SYN_RECV 3
#define L_FIN_WAIT1 4
#define L_FIN_WAIT2 5
#define L_TIME_WAIT 6
#define L_CLOSE 7
#define L_CLOSE_WAIT 8
#define L_LAST_ACK 9
#define L_LISTEN 10
#define L_CLOSING 11
#define L_NEW_SYN_RECV 12

#define DT_AF_INET 2
#define DT_AF_INET6 10
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

static __always_inline __s32 solaris_state(int s)
{
	switch (s) {
	case L_ESTABLISHED: return DT_TCPS_ESTABLISHED;
	case L_SYN_SENT: return DT_TCPS_SYN_SENT;
	case L_SYN_RECV: return DT_TCPS_SYN_RCVD;
	case L_NEW_SYN_RECV: return DT_TCPS_SYN_RCVD;
	case L_FIN_WAIT1: return DT_TCPS_FIN_WAIT_1;
	case L_FIN_WAIT2: return DT_TCPS_FIN_WAIT_2;
	case L_TIME_WAIT: return DT_TCPS_TIME_WAIT;
	case L_CLOSE_WAIT: return DT_TCPS_CLOSE_WAIT;
	case L_LAST_ACK: return DT_TCPS_LAST_ACK;
	case L_LISTEN: return DT_TCPS_LISTEN;
	case L_CLOSING: return DT_TCPS_CLOSING;
	default: return DT_TCPS_CLOSED;
	}
}

static __always_inline bool is_full_socket(int state)
{
	return state != L_TIME_WAIT && state != L_NEW_SYN_RECV;
}

/* The key of socket `sk` (IPv4 for an IPv6 socket speaking to an IPv4
 * peer, as its segments are); false if it is not an inet socket. */
static __always_inline bool socket_key(struct sock *sk, struct dt_tcp_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	k->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	/* Closing gives the port back (skc_num 0) before the state change
	 * is traced; the connection's source port stays. */
	if (!k->lport)
		k->lport = bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	k->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (family == DT_AF_INET6) {
		BPF_CORE_READ_INTO(&k->laddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&k->raddr, sk, __sk_common.skc_v6_daddr);
		__u32 *r = (__u32 *)k->raddr;
		bool mapped = r[0] == 0 && r[1] == 0 && r[2] == bpf_htonl(0xffff);
		if (!mapped) {
			k->family = 6;
			return true;
		}
		__builtin_memset(k->laddr, 0, 16);
		__builtin_memset(k->raddr, 0, 16);
	} else if (family != DT_AF_INET) {
		return false;
	}
	k->family = 4;
	BPF_CORE_READ_INTO((__u32 *)k->laddr, sk, __sk_common.skc_rcv_saddr);
	BPF_CORE_READ_INTO((__u32 *)k->raddr, sk, __sk_common.skc_daddr);
	return true;
}

static __always_inline bool is_tcp_socket(struct sock *sk)
{
	return sk && BPF_CORE_READ(sk, sk_protocol) == DT_IPPROTO_TCP;
}

/* Kernel HZ, for the retransmission timeout in jiffies: the delayed-ACK
 * maximum is HZ/5 (TCP_DELACK_MAX) on every socket; older kernels lack
 * the field and get Debian's 250. */
static __always_inline __u32 kernel_hz(struct inet_connection_sock *icsk)
{
	if (bpf_core_field_exists(icsk->icsk_delack_max)) {
		__u32 hz = BPF_CORE_READ(icsk, icsk_delack_max) * 5;
		if (hz)
			return hz;
	}
	return 250;
}

/* tcpsinfo_t's connection members from a full socket in Linux state `state`. */
static __always_inline void fill_connection(struct tcpsinfo *t, struct sock *sk, int state)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	/* A passive connection is a clone of its listener, backlog included. */
	t->tcps_active = state != L_LISTEN && BPF_CORE_READ(sk, sk_max_ack_backlog) == 0;
	__u32 una = BPF_CORE_READ(tp, snd_una);
	__u32 rnxt = BPF_CORE_READ(tp, rcv_nxt);
	__u64 acked = BPF_CORE_READ(tp, bytes_acked);
	__u64 received = BPF_CORE_READ(tp, bytes_received);
	t->tcps_suna = una;
	t->tcps_snxt = BPF_CORE_READ(tp, snd_nxt);
	t->tcps_rack = BPF_CORE_READ(tp, rcv_wup);
	t->tcps_rnxt = rnxt;
	/* Each SYN takes one sequence number before the data. */
	t->tcps_iss = state == L_SYN_SENT ? una : una - (__u32)acked - 1;
	t->tcps_irs = state == L_SYN_SENT || state == L_LISTEN ? 0 : rnxt - (__u32)received - 1;
	t->tcps_swnd = BPF_CORE_READ(tp, snd_wnd);
	t->tcps_rwnd = BPF_CORE_READ(tp, rcv_wnd);
	t->tcps_snd_ws = BPF_CORE_READ_BITFIELD_PROBED(&tp->rx_opt, snd_wscale);
	t->tcps_rcv_ws = BPF_CORE_READ_BITFIELD_PROBED(&tp->rx_opt, rcv_wscale);
	__u32 mss = BPF_CORE_READ(tp, mss_cache);
	t->tcps_mss = mss;
	/* Linux counts the windows in segments; Solaris in bytes. */
	t->tcps_cwnd = BPF_CORE_READ(tp, snd_cwnd) * mss;
	__u32 ssthresh = BPF_CORE_READ(tp, snd_ssthresh);
	t->tcps_cwnd_ssthresh = ssthresh >= 0x7fffffff / (mss ? mss : 1) ? 0xffffffff : ssthresh * mss;
	t->tcps_sack_fack = una;
	t->tcps_sack_snxt = t->tcps_snxt;
	t->tcps_rto = (__u64)BPF_CORE_READ(icsk, icsk_rto) * 1000 / kernel_hz(icsk);
	t->tcps_rtt = (BPF_CORE_READ(tp, srtt_us) >> 3) / 1000;
	t->tcps_rtt_sd = (BPF_CORE_READ(tp, mdev_us) >> 2) / 1000;
}

static __always_inline void clear_connection(struct tcpsinfo *t)
{
	t->tcps_active = 0;
	t->tcps_iss = t->tcps_suna = t->tcps_snxt = t->tcps_rack = t->tcps_rnxt = 0;
	t->tcps_swnd = t->tcps_rwnd = t->tcps_cwnd = t->tcps_cwnd_ssthresh = 0;
	t->tcps_snd_ws = t->tcps_rcv_ws = 0;
	t->tcps_sack_fack = t->tcps_sack_snxt = t->tcps_rto = t->tcps_mss = 0;
	t->tcps_rtt = t->tcps_rtt_sd = t->tcps_irs = 0;
}

/* The connection of a received segment (see the file's comment). */
static __always_inline struct dt_tcp_conn *lookup_listener(struct dt_tcp_key *k)
{
	__builtin_memset(k->raddr, 0, 16);
	k->rport = 0;
	struct dt_tcp_conn *c = bpf_map_lookup_elem(&dt_tcp_conns, k);
	if (c)
		return c;
	__builtin_memset(k->laddr, 0, 16);
	c = bpf_map_lookup_elem(&dt_tcp_conns, k);
	if (c || k->family == 6)
		return c;
	k->family = 6; /* a dual-stack listener on [::] */
	return bpf_map_lookup_elem(&dt_tcp_conns, k);
}

static __always_inline void begin_args(void *ctx, struct dt_tcp_work *w, __u32 slot, bool packet, bool ls)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return;
	struct dt_tcp_args *a = &w->a;
	pc->probe_id = dt_tcp_id_base + slot;
	pc->args[0] = packet ? (__u64)&a->pkt : 0;
	pc->args[1] = (__u64)&a->cs;
	pc->args[2] = packet ? (__u64)&a->ip : 0;
	pc->args[3] = (__u64)&a->tcps;
	pc->args[4] = packet ? (__u64)&a->tcp : 0;
	pc->args[5] = ls ? (__u64)&a->tcpls : 0;
	for (int i = 6; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_tcp_progs, slot);
}

/* ---- segments --------------------------------------------------------- */

static __always_inline int dt_tcp_segment(void *ctx, __u32 slot, struct sk_buff *skb, bool send)
{
	__u32 zero = 0;
	struct dt_tcp_work *w = bpf_map_lookup_elem(&dt_tcp_work, &zero);
	if (!w)
		return 0;
	struct dt_tcp_args *a = &w->a;
	struct dt_inet_pkt p;
	if (!dt_inet_parse(&w->f, skb, send, &p, &a->ip) || p.proto != DT_IPPROTO_TCP)
		return 0;
	__u8 th[20];
	if (bpf_probe_read_kernel(th, sizeof(th), p.l4))
		return 0;
	__u8 flags = th[13];
	__u32 seq = ((__u32)th[4] << 24) | ((__u32)th[5] << 16) | ((__u32)th[6] << 8) | th[7];
	if (slot == DT_TCP_CONNECT_REQUEST && (flags & (TH_SYN | TH_ACK)) != TH_SYN)
		return 0;
	if (slot == DT_TCP_ACCEPT_REFUSED && ((flags & (TH_RST | TH_ACK)) != (TH_RST | TH_ACK) || seq))
		return 0;

	struct tcpinfo *ti = &a->tcp;
	ti->tcp_sport = (th[0] << 8) | th[1];
	ti->tcp_dport = (th[2] << 8) | th[3];
	ti->tcp_seq = seq;
	ti->tcp_ack = ((__u32)th[8] << 24) | ((__u32)th[9] << 16) | ((__u32)th[10] << 8) | th[11];
	ti->tcp_offset = (th[12] >> 4) * 4;
	ti->tcp_flags = flags;
	ti->tcp_window = (th[14] << 8) | th[15];
	ti->tcp_checksum = (th[16] << 8) | th[17];
	ti->tcp_urgent = (th[18] << 8) | th[19];
	ti->tcp_hdr = (__u64)p.l4;

	struct tcpsinfo *t = &a->tcps;
	struct dt_tcp_key k = {};
	k.family = p.ver;
	__u8 *hdr = w->f.hdr;
	/* The local end is the source of a sent segment, the destination of a
	 * received one. */
	if (send) {
		t->tcps_lport = ti->tcp_sport;
		t->tcps_rport = ti->tcp_dport;
		__builtin_memcpy(t->tcps_laddr, a->ip.ip_saddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(t->tcps_raddr, a->ip.ip_daddr, DT_IP_ADDRSTRLEN);
	} else {
		t->tcps_lport = ti->tcp_dport;
		t->tcps_rport = ti->tcp_sport;
		__builtin_memcpy(t->tcps_laddr, a->ip.ip_daddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(t->tcps_raddr, a->ip.ip_saddr, DT_IP_ADDRSTRLEN);
		k.lport = t->tcps_lport;
		k.rport = t->tcps_rport;
		if (p.ver == 4) {
			__builtin_memcpy(k.laddr, &hdr[16], 4);
			__builtin_memcpy(k.raddr, &hdr[12], 4);
		} else {
			__builtin_memcpy(k.laddr, &hdr[24], 16);
			__builtin_memcpy(k.raddr, &hdr[8], 16);
		}
	}
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	t->tcps_local = (BPF_CORE_READ(dev, flags) & DT_IFF_LOOPBACK) ? 1 : 0;

	struct sock *sk = 0;
	int state = L_CLOSE;
	if (send) {
		/* A reset from a port nothing owns goes out on a control
		 * socket, whose ports are not the segment's. */
		sk = BPF_CORE_READ(skb, sk);
		if (sk) {
			state = BPF_CORE_READ(sk, __sk_common.skc_state);
			if (BPF_CORE_READ(sk, __sk_common.skc_num) != t->tcps_lport) {
				sk = 0;
				state = L_CLOSE;
			}
		}
	} else {
		struct dt_tcp_conn *c = bpf_map_lookup_elem(&dt_tcp_conns, &k);
		if (c && (c->flags & DT_TCP_CONN_TIME_WAIT)) {
			state = L_TIME_WAIT;
		} else if (c) {
			sk = (struct sock *)c->sk;
			state = BPF_CORE_READ(sk, __sk_common.skc_state);
		} else if ((c = lookup_listener(&k))) {
			/* A SYN meets the listener; the handshake's last ACK a
			 * request socket, which Linux keeps out of sight. */
			if ((flags & (TH_SYN | TH_ACK)) == TH_SYN) {
				sk = (struct sock *)c->sk;
				state = L_LISTEN;
			} else {
				state = L_SYN_RECV;
			}
		}
	}
	t->tcps_addr = (__u64)sk;
	t->tcps_state = solaris_state(state);
	t->tcps_retransmit = 0;
	if (sk && is_full_socket(state)) {
		fill_connection(t, sk, state);
		__u32 payload = a->ip.ip_plength > ti->tcp_offset ? a->ip.ip_plength - ti->tcp_offset : 0;
		if (send && (payload || (flags & (TH_SYN | TH_FIN))))
			t->tcps_retransmit = (__s32)(seq - t->tcps_snxt) < 0;
	} else {
		clear_connection(t);
	}

	a->pkt.pkt_addr = (__u64)skb;
	a->cs.cs_addr = (__u64)sk;
	a->cs.cs_cid = (__u64)sk;
	a->cs.cs_pid = send ? sending_pid(&w->f, skb) : 0;
	a->cs.cs_zoneid = 0;
	begin_args(ctx, w, slot, true, false);
	return 0;
}

SEC("raw_tp/net_dev_queue")
int dt_tcp_send(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_tcp_segment(ctx, DT_TCP_SEND, (struct sk_buff *)ctx->args[0], true);
}

SEC("raw_tp/netif_receive_skb")
int dt_tcp_receive(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_tcp_segment(ctx, DT_TCP_RECEIVE, (struct sk_buff *)ctx->args[0], false);
}

SEC("raw_tp/net_dev_queue")
int dt_tcp_connect_request(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_tcp_segment(ctx, DT_TCP_CONNECT_REQUEST, (struct sk_buff *)ctx->args[0], true);
}

SEC("raw_tp/net_dev_queue")
int dt_tcp_accept_refused(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_tcp_segment(ctx, DT_TCP_ACCEPT_REFUSED, (struct sk_buff *)ctx->args[0], true);
}

/* ---- connection events ------------------------------------------------- */

/* tcpsinfo_t from socket `sk`, reported in Linux state `state`; for the
 * inbound events, ipinfo_t and tcpinfo_t of the segment that caused it,
 * rebuilt from the connection with `flags`. */
static __always_inline int dt_tcp_connection(void *ctx, __u32 slot, struct sock *sk, int state, int old,
					     __u8 flags)
{
	__u32 zero = 0;
	struct dt_tcp_work *w = bpf_map_lookup_elem(&dt_tcp_work, &zero);
	if (!w)
		return 0;
	struct dt_tcp_key k;
	if (!socket_key(sk, &k))
		return 0;
	struct dt_tcp_args *a = &w->a;
	struct tcpsinfo *t = &a->tcps;
	__u8 *hdr = w->f.hdr;
	if (k.family == 4) {
		__builtin_memcpy(&hdr[12], k.laddr, 4);
		__builtin_memcpy(&hdr[16], k.raddr, 4);
		fmt_ipv4(&w->f, &hdr[12], t->tcps_laddr);
		fmt_ipv4(&w->f, &hdr[16], t->tcps_raddr);
	} else {
		__builtin_memcpy(&hdr[8], k.laddr, 16);
		__builtin_memcpy(&hdr[24], k.raddr, 16);
		fmt_ipv6(&w->f, 0, t->tcps_laddr);
		fmt_ipv6(&w->f, 1, t->tcps_raddr);
	}
	t->tcps_addr = (__u64)sk;
	t->tcps_lport = k.lport;
	t->tcps_rport = k.rport;
	t->tcps_state = solaris_state(state);
	t->tcps_local = (BPF_CORE_READ(sk, sk_dst_cache, dev, flags) & DT_IFF_LOOPBACK) ? 1 : 0;
	t->tcps_retransmit = 0;
	fill_connection(t, sk, BPF_CORE_READ(sk, __sk_common.skc_state));
	a->tcpls.tcps_state = solaris_state(old);
	a->cs.cs_addr = (__u64)sk;
	a->cs.cs_cid = (__u64)sk;
	a->cs.cs_pid = flags ? 0 : dt_inet_process_pid(&w->f);
	a->cs.cs_zoneid = 0;
	if (flags) {
		a->pkt.pkt_addr = 0;
		a->ip.ip_ver = k.family;
		a->ip.ip_plength = 20;
		__builtin_memcpy(a->ip.ip_saddr, t->tcps_raddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(a->ip.ip_daddr, t->tcps_laddr, DT_IP_ADDRSTRLEN);
		struct tcpinfo *ti = &a->tcp;
		ti->tcp_sport = k.rport;
		ti->tcp_dport = k.lport;
		/* The SYN+ACK's sequence number is the one before rcv_nxt; a
		 * reset answering our SYN has none. */
		ti->tcp_seq = flags & TH_RST ? 0 : t->tcps_rnxt - ((flags & TH_SYN) ? 1 : 0);
		ti->tcp_ack = flags & TH_RST ? t->tcps_snxt : t->tcps_suna;
		ti->tcp_offset = 20;
		ti->tcp_flags = flags;
		ti->tcp_window = 0;
		ti->tcp_checksum = 0;
		ti->tcp_urgent = 0;
		ti->tcp_hdr = 0;
	}
	begin_args(ctx, w, slot, flags != 0, slot == DT_TCP_STATE_CHANGE);
	return 0;
}

/* Whether a close is Linux's hand-over to a time-wait socket. */
static __always_inline bool enters_time_wait(struct sock *sk, int old, int new)
{
	return new == L_CLOSE && (old == L_FIN_WAIT1 || old == L_FIN_WAIT2 || old == L_CLOSING) &&
	       BPF_CORE_READ(sk, sk_err) == 0;
}

SEC("raw_tp/inet_sock_set_state")
int dt_tcp_state_change(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk = (struct sock *)ctx->args[0];
	int old = ctx->args[1], new = ctx->args[2];
	if (!is_tcp_socket(sk))
		return 0;
	if (enters_time_wait(sk, old, new))
		new = L_TIME_WAIT;
	return dt_tcp_connection(ctx, DT_TCP_STATE_CHANGE, sk, new, old, 0);
}

SEC("raw_tp/inet_sock_set_state")
int dt_tcp_connect_established(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk = (struct sock *)ctx->args[0];
	if (ctx->args[1] != L_SYN_SENT || ctx->args[2] != L_ESTABLISHED || !is_tcp_socket(sk))
		return 0;
	return dt_tcp_connection(ctx, DT_TCP_CONNECT_ESTABLISHED, sk, L_ESTABLISHED, L_SYN_SENT, TH_SYN | TH_ACK);
}

SEC("raw_tp/inet_sock_set_state")
int dt_tcp_accept_established(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk = (struct sock *)ctx->args[0];
	if (ctx->args[1] != L_SYN_RECV || ctx->args[2] != L_ESTABLISHED || !is_tcp_socket(sk))
		return 0;
	return dt_tcp_connection(ctx, DT_TCP_ACCEPT_ESTABLISHED, sk, L_ESTABLISHED, L_SYN_RECV, TH_ACK);
}

SEC("raw_tp/tcp_receive_reset")
int dt_tcp_connect_refused(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk = (struct sock *)ctx->args[0];
	if (!sk || BPF_CORE_READ(sk, __sk_common.skc_state) != L_SYN_SENT)
		return 0;
	return dt_tcp_connection(ctx, DT_TCP_CONNECT_REFUSED, sk, L_SYN_SENT, L_SYN_SENT, TH_RST | TH_ACK);
}

/* ---- the connection table for received segments -------------------------- */

SEC("raw_tp/inet_sock_set_state")
int dt_tcp_track(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk = (struct sock *)ctx->args[0];
	int old = ctx->args[1], new = ctx->args[2];
	struct dt_tcp_key k;
	if (!is_tcp_socket(sk) || !socket_key(sk, &k) || !k.lport)
		return 0;
	if (new == L_CLOSE && !enters_time_wait(sk, old, new)) {
		bpf_map_delete_elem(&dt_tcp_conns, &k);
		return 0;
	}
	struct dt_tcp_conn c = { .sk = (__u64)sk, .flags = new == L_CLOSE ? DT_TCP_CONN_TIME_WAIT : 0 };
	bpf_map_update_elem(&dt_tcp_conns, &k, &c, BPF_ANY);
	return 0;
}

SEC("raw_tp/net_dev_queue")
int dt_tcp_learn(struct bpf_raw_tracepoint_args *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)ctx->args[0];
	struct sock *sk = BPF_CORE_READ(skb, sk);
	struct dt_tcp_key k;
	/* A request or time-wait socket is only a struct sock_common. */
	if (!sk || !is_full_socket(BPF_CORE_READ(sk, __sk_common.skc_state)) || !is_tcp_socket(sk))
		return 0;
	if (!socket_key(sk, &k) || !k.lport || !k.rport)
		return 0;
	/* An LRU map's update takes a free node before it looks: look first. */
	if (bpf_map_lookup_elem(&dt_tcp_conns, &k))
		return 0;
	struct dt_tcp_conn c = { .sk = (__u64)sk };
	bpf_map_update_elem(&dt_tcp_conns, &k, &c, BPF_NOEXIST);
	return 0;
}

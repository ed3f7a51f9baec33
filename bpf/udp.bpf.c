// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The udp provider: udp:::send and udp:::receive, as Solaris' (illumos')
 * udp provider names them, for IPv4 and IPv6 on every interface, seen
 * where the ip provider sees packets (bpf/ip.bpf.c): net_dev_queue for
 * every datagram a device sends, netif_receive_skb for every one
 * received, before the stack looks its socket up (so udps_addr is the
 * sending socket on send and 0 on receive).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "dtrace.h"
#include "inet.h"
#include "udp.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/udp.rs order. */
#define DT_UDP_SEND 0
#define DT_UDP_RECEIVE 1
#define DT_UDP_COUNT 2

/* Probe ID of slot s is dt_udp_id_base + s. */
const volatile __u32 dt_udp_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_UDP_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_udp_progs SEC(".maps");

struct dt_udp_work {
	struct dt_udp_args a;
	struct dt_inet_fmt f;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_udp_work);
} dt_udp_work SEC(".maps");

/* Layout anchor: makes the skeleton carry the argument structs. */
struct dt_udp_args dt_layout_udp_args;

static __always_inline int dt_udp_fire(void *ctx, __u32 slot, struct sk_buff *skb, bool send)
{
	__u32 zero = 0;
	struct dt_udp_work *w = bpf_map_lookup_elem(&dt_udp_work, &zero);
	if (!w)
		return 0;
	struct dt_udp_args *a = &w->a;
	struct dt_inet_pkt p;
	if (!dt_inet_parse(&w->f, skb, send, &p, &a->ip) || p.proto != DT_IPPROTO_UDP)
		return 0;
	__u8 uh[8];
	if (bpf_probe_read_kernel(uh, sizeof(uh), p.l4))
		return 0;
	struct udpinfo *ui = &a->udp;
	ui->udp_sport = (uh[0] << 8) | uh[1];
	ui->udp_dport = (uh[2] << 8) | uh[3];
	ui->udp_length = (uh[4] << 8) | uh[5];
	ui->udp_checksum = (uh[6] << 8) | uh[7];
	ui->udp_hdr = (__u64)p.l4;

	struct udpsinfo *u = &a->udps;
	struct sock *sk = send ? BPF_CORE_READ(skb, sk) : 0;
	/* The local end is the source of a sent datagram, the destination of
	 * a received one. */
	if (send) {
		u->udps_lport = ui->udp_sport;
		u->udps_rport = ui->udp_dport;
		__builtin_memcpy(u->udps_laddr, a->ip.ip_saddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(u->udps_raddr, a->ip.ip_daddr, DT_IP_ADDRSTRLEN);
	} else {
		u->udps_lport = ui->udp_dport;
		u->udps_rport = ui->udp_sport;
		__builtin_memcpy(u->udps_laddr, a->ip.ip_daddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(u->udps_raddr, a->ip.ip_saddr, DT_IP_ADDRSTRLEN);
	}
	u->udps_addr = (__u64)sk;

	a->pkt.pkt_addr = (__u64)skb;
	a->cs.cs_addr = (__u64)sk;
	a->cs.cs_cid = (__u64)sk;
	a->cs.cs_pid = send ? sending_pid(&w->f, skb) : 0;
	a->cs.cs_zoneid = 0;

	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = dt_udp_id_base + slot;
	pc->args[0] = (__u64)&a->pkt;
	pc->args[1] = (__u64)&a->cs;
	pc->args[2] = (__u64)&a->ip;
	pc->args[3] = (__u64)&a->udps;
	pc->args[4] = (__u64)&a->udp;
	for (int i = 5; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_udp_progs, slot);
	return 0;
}

SEC("raw_tp/net_dev_queue")
int dt_udp_send(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_udp_fire(ctx, DT_UDP_SEND, (struct sk_buff *)ctx->args[0], true);
}

SEC("raw_tp/netif_receive_skb")
int dt_udp_receive(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_udp_fire(ctx, DT_UDP_RECEIVE, (struct sk_buff *)ctx->args[0], false);
}

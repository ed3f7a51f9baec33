// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ip provider: ip:::send and ip:::receive, as Solaris' ip provider
 * names them, for IPv4 and IPv6 on every interface, loopback included.
 *
 * Hooks (raw tracepoints that carry the sk_buff; see ARCHITECTURE.md):
 *  - send: net_dev_queue(skb), in __dev_queue_xmit, where every IP packet
 *    leaving through a device passes once, before any queueing discipline,
 *    still in the sending process's context (net_dev_start_xmit would
 *    fire later from the qdisc's softirq, and again on a requeue). The IP
 *    header is at skb->head + skb->network_header.
 *  - receive: netif_receive_skb(skb), at the start of
 *    __netif_receive_skb_core, which every received packet passes once,
 *    whether it came through netif_rx (loopback, veth) or NAPI (netif_rx
 *    fires only for the former). The link header is already pulled: the
 *    IP header is at skb->data (network_header is set only after it).
 *
 * A packet that is not IPv4 or IPv6 (skb->protocol) returns at once. For an
 * IP packet the program fills the stable structs of bpf/ip.h, in this
 * CPU's entry of dt_ip_work, formatting the addresses as text, and passes
 * their kernel addresses as arg0..arg5 (arg4 is 0 for IPv6, arg5 for IPv4);
 * the D library types them (args[2] is an ipinfo_t *).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "dtrace.h"
#include "inet.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/ip.rs order. */
#define DT_IP_SEND 0
#define DT_IP_RECEIVE 1
#define DT_IP_COUNT 2

/* Probe ID of slot s is dt_ip_id_base + s. */
const volatile __u32 dt_ip_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_IP_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_ip_progs SEC(".maps");

/* The arguments and the formatter's work space (bpf/inet.h). */
struct dt_ip_work {
	struct dt_ip_args a;
	struct dt_inet_fmt f;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_ip_work);
} dt_ip_work SEC(".maps");

/* Layout anchor: makes the skeleton carry the argument structs. */
struct dt_ip_args dt_layout_ip_args;

static __always_inline int dt_ip_fire(void *ctx, __u32 slot, struct sk_buff *skb, bool send)
{
	__u32 zero = 0;
	struct dt_ip_work *w = bpf_map_lookup_elem(&dt_ip_work, &zero);
	if (!w)
		return 0;
	struct dt_ip_args *a = &w->a;
	struct dt_inet_pkt p;
	if (!dt_inet_parse(&w->f, skb, send, &p, &a->ip))
		return 0;
	__u8 *hdr = w->f.hdr;
	unsigned char *nh = p.nh;

	if (p.ver == 4) {
		struct ipv4info *v4 = &a->v4;
		__u16 frag = (hdr[6] << 8) | hdr[7];
		v4->ipv4_ver = 4;
		v4->ipv4_ihl = p.l3len;
		v4->ipv4_tos = hdr[1];
		v4->ipv4_length = (hdr[2] << 8) | hdr[3];
		v4->ipv4_ident = (hdr[4] << 8) | hdr[5];
		v4->ipv4_flags = (frag >> 8) & 0xe0;
		v4->ipv4_offset = frag & 0x1fff;
		v4->ipv4_ttl = hdr[8];
		v4->ipv4_protocol = hdr[9];
		protostr(v4->ipv4_protostr, hdr[9]);
		v4->ipv4_checksum = (hdr[10] << 8) | hdr[11];
		__builtin_memcpy(&v4->ipv4_src, &hdr[12], 4);
		__builtin_memcpy(&v4->ipv4_dst, &hdr[16], 4);
		__builtin_memcpy(v4->ipv4_saddr, a->ip.ip_saddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(v4->ipv4_daddr, a->ip.ip_daddr, DT_IP_ADDRSTRLEN);
		v4->ipv4_hdr = (__u64)nh;
	} else {
		struct ipv6info *v6 = &a->v6;
		v6->ipv6_ver = 6;
		v6->ipv6_tclass = ((hdr[0] & 0xf) << 4) | (hdr[1] >> 4);
		v6->ipv6_flow = ((hdr[1] & 0xf) << 16) | (hdr[2] << 8) | hdr[3];
		v6->ipv6_plen = (hdr[4] << 8) | hdr[5];
		v6->ipv6_nexthdr = hdr[6];
		protostr(v6->ipv6_nextstr, hdr[6]);
		v6->ipv6_hlim = hdr[7];
		v6->ipv6_src = (__u64)(nh + 8);
		v6->ipv6_dst = (__u64)(nh + 24);
		__builtin_memcpy(v6->ipv6_saddr, a->ip.ip_saddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(v6->ipv6_daddr, a->ip.ip_daddr, DT_IP_ADDRSTRLEN);
		v6->ipv6_hdr = (__u64)nh;
	}

	a->pkt.pkt_addr = (__u64)skb;
	struct sock *sk = BPF_CORE_READ(skb, sk);
	a->cs.cs_addr = (__u64)sk;
	a->cs.cs_cid = (__u64)sk;
	a->cs.cs_pid = send ? sending_pid(&w->f, skb) : 0;
	a->cs.cs_zoneid = 0;

	struct net_device *dev = BPF_CORE_READ(skb, dev);
	/* Zeros after the name: a renamed device may keep bytes of its old one. */
	__builtin_memset(a->ifc.if_name, 0, DT_IP_IFNAMSIZ);
	bpf_probe_read_kernel_str(a->ifc.if_name, DT_IP_IFNAMSIZ, dev->name);
	a->ifc.if_local = (BPF_CORE_READ(dev, flags) & DT_IFF_LOOPBACK) ? 1 : 0;
	a->ifc.if_ipstack = BPF_CORE_READ(dev, nd_net.net, ns.inum);
	a->ifc.if_addr = (__u64)dev;

	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = dt_ip_id_base + slot;
	pc->args[0] = (__u64)&a->pkt;
	pc->args[1] = (__u64)&a->cs;
	pc->args[2] = (__u64)&a->ip;
	pc->args[3] = (__u64)&a->ifc;
	pc->args[4] = p.ver == 4 ? (__u64)&a->v4 : 0;
	pc->args[5] = p.ver == 6 ? (__u64)&a->v6 : 0;
	for (int i = 6; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_ip_progs, slot);
	return 0;
}

SEC("raw_tp/net_dev_queue")
int dt_ip_send(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_ip_fire(ctx, DT_IP_SEND, (struct sk_buff *)ctx->args[0], true);
}

SEC("raw_tp/netif_receive_skb")
int dt_ip_receive(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_ip_fire(ctx, DT_IP_RECEIVE, (struct sk_buff *)ctx->args[0], false);
}

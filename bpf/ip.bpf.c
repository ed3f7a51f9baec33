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
#include "ip.h"

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

/* The arguments and the formatter's work space. The formatter's state
 * lives in this map, read back at each step, so that the verifier sees
 * unknown values at every join and checks each loop once per iteration,
 * not once per path through the address's digits. */
struct dt_ip_work {
	struct dt_ip_args a;
	__u8 hdr[40];  /* the IP header (IPv6's is 40 bytes; IPv4's first 20) */
	char buf[64];  /* text being formatted */
	__u32 len;     /* bytes of buf written */
	__u32 zstart;  /* IPv6: the longest run of zero groups */
	__u32 zlen;
	__u32 rstart;  /* the run being measured */
	__u32 rlen;
	__u64 sp;      /* sending_pid's stack address */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_ip_work);
} dt_ip_work SEC(".maps");

/* Layout anchor: makes the skeleton carry the argument structs. */
struct dt_ip_args dt_layout_ip_args;

#define DT_ETH_P_IP 0x0800
#define DT_ETH_P_IPV6 0x86DD
#define DT_IFF_LOOPBACK 0x8

#define VOL(x) (*(volatile __u32 *)&(x))

static __always_inline void put(struct dt_ip_work *w, char c)
{
	__u32 n = VOL(w->len);
	w->buf[n & 63] = c;
	VOL(w->len) = n + 1;
}

static __always_inline void put_dec(struct dt_ip_work *w, __u32 v)
{
	v &= 0xff;
	if (v >= 100)
		put(w, '0' + v / 100);
	if (v >= 10)
		put(w, '0' + (v / 10) % 10);
	put(w, '0' + v % 10);
}

static __always_inline void put_hex(struct dt_ip_work *w, __u32 v)
{
	/* Lower case, no leading zeros (RFC 5952). */
	for (int shift = 12; shift >= 0; shift -= 4) {
		__u32 d = (v >> shift) & 0xf;
		if (shift && (v >> shift) == 0)
			continue;
		put(w, d < 10 ? '0' + d : 'a' + d - 10);
	}
}

/* The text in buf, NUL-terminated, to dst (DT_IP_ADDRSTRLEN bytes). */
static __always_inline void take(struct dt_ip_work *w, char *dst)
{
	put(w, 0);
	__builtin_memcpy(dst, w->buf, DT_IP_ADDRSTRLEN);
}

/* Starts a text: empty, and zeros after it, so equal addresses are equal
 * bytes whoever compares them. */
static __always_inline void start(struct dt_ip_work *w)
{
	__builtin_memset(w->buf, 0, sizeof(w->buf));
	VOL(w->len) = 0;
}

static __always_inline void fmt_ipv4(struct dt_ip_work *w, const __u8 *a, char *dst)
{
	start(w);
	for (int i = 0; i < 4; i++) {
		if (i)
			put(w, '.');
		put_dec(w, a[i]);
	}
	take(w, dst);
}

/* RFC 5952: the longest run of two or more zero groups (the first of equal
 * runs) becomes "::"; IPv4-mapped addresses end in dotted decimal. */
static __always_inline void fmt_ipv6(struct dt_ip_work *w, __u32 which, char *dst)
{
	const __u8 *a = &w->hdr[which ? 24 : 8];
	start(w);
	VOL(w->zstart) = 8;
	VOL(w->zlen) = 0;
	VOL(w->rlen) = 0;
	for (__u32 i = 0; i < 8; i++) {
		__u32 g = (a[2 * i] << 8) | a[2 * i + 1];
		if (g) {
			VOL(w->rlen) = 0;
			continue;
		}
		if (VOL(w->rlen) == 0)
			VOL(w->rstart) = i;
		VOL(w->rlen) += 1;
		if (VOL(w->rlen) > VOL(w->zlen)) {
			VOL(w->zlen) = VOL(w->rlen);
			VOL(w->zstart) = VOL(w->rstart);
		}
	}
	if (VOL(w->zlen) < 2) {
		VOL(w->zstart) = 8;
		VOL(w->zlen) = 0;
	}
	bool mapped = VOL(w->zstart) == 0 && VOL(w->zlen) == 5 && a[10] == 0xff && a[11] == 0xff;
	for (__u32 i = 0; i < 8; i++) {
		__u32 zs = VOL(w->zstart);
		if (i >= zs && i < zs + VOL(w->zlen)) {
			if (i == zs)
				put(w, ':');
			continue;
		}
		if (mapped && i == 6)
			break;
		if (i)
			put(w, ':');
		put_hex(w, (a[2 * i] << 8) | a[2 * i + 1]);
	}
	if (mapped) {
		put(w, ':');
		for (int i = 12; i < 16; i++) {
			if (i > 12)
				put(w, '.');
			put_dec(w, a[i]);
		}
	} else if (VOL(w->zlen) && VOL(w->zstart) + VOL(w->zlen) == 8) {
		put(w, ':');
	}
	take(w, dst);
}

/* Solaris' names for the protocol numbers (illumos ip.d's protocols[]). */
static const char dt_ip_protonames[][DT_IP_PROTOSTRLEN] = {
	"<unknown>", "IP", "ICMP", "IGMP", "GGP", "ENCAP", "TCP", "EGP", "PUP",
	"UDP", "IDP", "IPV6", "ROUTING", "FRAGMENT", "RSVP", "GRE", "ESP", "AH",
	"ICMPV6", "NONE", "DSTOPTS", "HELLO", "ND", "EON", "OSPF", "PIM", "SCTP",
	"UDPLITE", "RAW",
};

static __always_inline __u32 proto_index(__u8 p)
{
	switch (p) {
	case 0: return 1;
	case 1: return 2;
	case 2: return 3;
	case 3: return 4;
	case 4: return 5;
	case 6: return 6;
	case 8: return 7;
	case 12: return 8;
	case 17: return 9;
	case 22: return 10;
	case 41: return 11;
	case 43: return 12;
	case 44: return 13;
	case 46: return 14;
	case 47: return 15;
	case 50: return 16;
	case 51: return 17;
	case 58: return 18;
	case 59: return 19;
	case 60: return 20;
	case 63: return 21;
	case 77: return 22;
	case 80: return 23;
	case 89: return 24;
	case 103: return 25;
	case 132: return 26;
	case 136: return 27;
	case 255: return 28;
	default: return 0;
	}
}

static __always_inline void protostr(char *dst, __u8 p)
{
	__u32 i = proto_index(p);
	if (i > 28)
		i = 0;
	bpf_probe_read_kernel(dst, DT_IP_PROTOSTRLEN, dt_ip_protonames[i]);
}

/* The process sending, when the packet is sent from a user process's
 * context on behalf of one of its sockets; else 0. A softirq (the reply
 * to a ping, a TCP acknowledgement) runs on the CPU's interrupt stack, or
 * in ksoftirqd, a kernel thread: this program's stack is on the current
 * task's own kernel stack only in process context. (A per-CPU preempt
 * count would say it too, but its address is not in kallsyms on every
 * kernel.) Kernels with KASAN have twice the stack: a sender in its upper
 * half reports 0. */
#define DT_THREAD_SIZE 16384
#define DT_PF_KTHREAD 0x00200000

static __always_inline __s32 sending_pid(struct dt_ip_work *w, struct sk_buff *skb)
{
	if (!BPF_CORE_READ(skb, sk))
		return 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, flags) & DT_PF_KTHREAD)
		return 0;
	volatile __u64 marker = 0;
	/* Through map memory, so that the stack address is a number. */
	*(volatile __u64 *)&w->sp = (__u64)&marker;
	__u64 sp = *(volatile __u64 *)&w->sp;
	__u64 stack = (__u64)BPF_CORE_READ(task, stack);
	if (sp - stack >= DT_THREAD_SIZE)
		return 0;
	return bpf_get_current_pid_tgid() >> 32;
}

static __always_inline int dt_ip_fire(void *ctx, __u32 slot, struct sk_buff *skb, bool send)
{
	__u16 proto = BPF_CORE_READ(skb, protocol);
	if (proto != bpf_htons(DT_ETH_P_IP) && proto != bpf_htons(DT_ETH_P_IPV6))
		return 0;
	__u32 zero = 0;
	struct dt_ip_work *w = bpf_map_lookup_elem(&dt_ip_work, &zero);
	if (!w)
		return 0;
	unsigned char *data = BPF_CORE_READ(skb, data);
	unsigned char *nh;
	if (send) {
		__u16 off = BPF_CORE_READ(skb, network_header);
		if (off == (__u16)~0U)
			return 0;
		nh = BPF_CORE_READ(skb, head) + off;
	} else {
		nh = data;
	}
	if (bpf_probe_read_kernel(w->hdr, 20, nh))
		return 0;
	__u8 ver = w->hdr[0] >> 4;
	struct dt_ip_args *a = &w->a;
	__u32 skb_len = BPF_CORE_READ(skb, len);
	__u32 before = nh > data ? nh - data : 0; /* link header bytes in skb->len */

	if (ver == 4 && proto == bpf_htons(DT_ETH_P_IP)) {
		struct ipv4info *v4 = &a->v4;
		__u8 ihl = (w->hdr[0] & 0xf) * 4;
		__u16 total = (w->hdr[2] << 8) | w->hdr[3];
		__u16 frag = (w->hdr[6] << 8) | w->hdr[7];
		v4->ipv4_ver = 4;
		v4->ipv4_ihl = ihl;
		v4->ipv4_tos = w->hdr[1];
		v4->ipv4_length = total;
		v4->ipv4_ident = (w->hdr[4] << 8) | w->hdr[5];
		v4->ipv4_flags = (frag >> 8) & 0xe0;
		v4->ipv4_offset = frag & 0x1fff;
		v4->ipv4_ttl = w->hdr[8];
		v4->ipv4_protocol = w->hdr[9];
		protostr(v4->ipv4_protostr, w->hdr[9]);
		v4->ipv4_checksum = (w->hdr[10] << 8) | w->hdr[11];
		__builtin_memcpy(&v4->ipv4_src, &w->hdr[12], 4);
		__builtin_memcpy(&v4->ipv4_dst, &w->hdr[16], 4);
		fmt_ipv4(w, &w->hdr[12], v4->ipv4_saddr);
		fmt_ipv4(w, &w->hdr[16], v4->ipv4_daddr);
		v4->ipv4_hdr = (__u64)nh;
		a->ip.ip_ver = 4;
		/* A GSO packet over 64 KiB (BIG TCP) has total length 0. */
		__u32 len = total ? total : skb_len - before;
		a->ip.ip_plength = len > ihl ? len - ihl : 0;
		__builtin_memcpy(a->ip.ip_saddr, v4->ipv4_saddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(a->ip.ip_daddr, v4->ipv4_daddr, DT_IP_ADDRSTRLEN);
	} else if (ver == 6 && proto == bpf_htons(DT_ETH_P_IPV6)) {
		if (bpf_probe_read_kernel(w->hdr, 40, nh))
			return 0;
		struct ipv6info *v6 = &a->v6;
		__u16 plen = (w->hdr[4] << 8) | w->hdr[5];
		v6->ipv6_ver = 6;
		v6->ipv6_tclass = ((w->hdr[0] & 0xf) << 4) | (w->hdr[1] >> 4);
		v6->ipv6_flow = ((w->hdr[1] & 0xf) << 16) | (w->hdr[2] << 8) | w->hdr[3];
		v6->ipv6_plen = plen;
		v6->ipv6_nexthdr = w->hdr[6];
		protostr(v6->ipv6_nextstr, w->hdr[6]);
		v6->ipv6_hlim = w->hdr[7];
		v6->ipv6_src = (__u64)(nh + 8);
		v6->ipv6_dst = (__u64)(nh + 24);
		fmt_ipv6(w, 0, v6->ipv6_saddr);
		fmt_ipv6(w, 1, v6->ipv6_daddr);
		v6->ipv6_hdr = (__u64)nh;
		a->ip.ip_ver = 6;
		/* A jumbogram (BIG TCP) has payload length 0. */
		__u32 len = skb_len - before;
		a->ip.ip_plength = plen ? plen : (len > 40 ? len - 40 : 0);
		__builtin_memcpy(a->ip.ip_saddr, v6->ipv6_saddr, DT_IP_ADDRSTRLEN);
		__builtin_memcpy(a->ip.ip_daddr, v6->ipv6_daddr, DT_IP_ADDRSTRLEN);
	} else {
		return 0;
	}

	a->pkt.pkt_addr = (__u64)skb;
	struct sock *sk = BPF_CORE_READ(skb, sk);
	a->cs.cs_addr = (__u64)sk;
	a->cs.cs_cid = (__u64)sk;
	a->cs.cs_pid = send ? sending_pid(w, skb) : 0;
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
	pc->args[4] = ver == 4 ? (__u64)&a->v4 : 0;
	pc->args[5] = ver == 6 ? (__u64)&a->v6 : 0;
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

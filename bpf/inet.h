/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the ip, tcp and udp providers' entry programs share: reading an IP
 * packet's header from the sk_buff at the two points they hook (see
 * bpf/ip.bpf.c), formatting addresses as text (IPv4 dotted, IPv6 per RFC
 * 5952), Solaris' protocol names, and whether a packet is sent from a
 * process's own context. Each provider keeps a struct dt_inet_fmt in its
 * own per-CPU work map: the formatter's state lives in map memory,
 * reloaded at each step, so that the verifier checks each loop once per
 * iteration rather than once per path through an address's digits.
 */
#ifndef DTRACE_INET_H
#define DTRACE_INET_H

#include "ip.h"

#define DT_ETH_P_IP 0x0800
#define DT_ETH_P_IPV6 0x86DD
#define DT_IFF_LOOPBACK 0x8
#define DT_IPPROTO_TCP 6
#define DT_IPPROTO_UDP 17

struct dt_inet_fmt {
	__u8 hdr[40];  /* the IP header (IPv6's is 40 bytes; IPv4's first 20); addresses being formatted */
	char buf[64];  /* text being formatted */
	__u32 len;     /* bytes of buf written */
	__u32 zstart;  /* IPv6: the longest run of zero groups */
	__u32 zlen;
	__u32 rstart;  /* the run being measured */
	__u32 rlen;
	__u64 sp;      /* dt_inet_sending_pid's stack address */
};

#define VOL(x) (*(volatile __u32 *)&(x))

static __always_inline void put(struct dt_inet_fmt *w, char c)
{
	__u32 n = VOL(w->len);
	w->buf[n & 63] = c;
	VOL(w->len) = n + 1;
}

static __always_inline void put_dec(struct dt_inet_fmt *w, __u32 v)
{
	v &= 0xff;
	if (v >= 100)
		put(w, '0' + v / 100);
	if (v >= 10)
		put(w, '0' + (v / 10) % 10);
	put(w, '0' + v % 10);
}

static __always_inline void put_hex(struct dt_inet_fmt *w, __u32 v)
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
static __always_inline void take(struct dt_inet_fmt *w, char *dst)
{
	put(w, 0);
	__builtin_memcpy(dst, w->buf, DT_IP_ADDRSTRLEN);
}

/* Starts a text: empty, and zeros after it, so equal addresses are equal
 * bytes whoever compares them. */
static __always_inline void start(struct dt_inet_fmt *w)
{
	__builtin_memset(w->buf, 0, sizeof(w->buf));
	VOL(w->len) = 0;
}

static __always_inline void fmt_ipv4(struct dt_inet_fmt *w, const __u8 *a, char *dst)
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
static __always_inline void fmt_ipv6(struct dt_inet_fmt *w, __u32 which, char *dst)
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
 * half reports 0. The programs that use this keep their tail call (the
 * provider sets EnableContext::on_task_stack): since 6.13 a program with
 * no tail call and a large frame runs on a per-CPU stack of its own. */
#define DT_THREAD_SIZE 16384
#define DT_PF_KTHREAD 0x00200000

/* The current process when this program runs in its own context (on its
 * task's kernel stack, not a kernel thread); else 0. */
static __always_inline __s32 dt_inet_process_pid(struct dt_inet_fmt *w)
{
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

static __always_inline __s32 sending_pid(struct dt_inet_fmt *w, struct sk_buff *skb)
{
	if (!BPF_CORE_READ(skb, sk))
		return 0;
	return dt_inet_process_pid(w);
}

/* An IP packet at one of the two hooks: where its IP header is, what
 * follows it, and ipinfo_t filled (addresses as text). */
struct dt_inet_pkt {
	unsigned char *nh;  /* the IP header */
	unsigned char *l4;  /* the transport header */
	__u8 ver;           /* 4 or 6 */
	__u8 proto;         /* IPv4 protocol, IPv6 next header */
	__u16 l3len;        /* IP header bytes */
};

/* Reads the IP header of `skb` into w->hdr (on send at the network
 * header, on receive at skb->data, where the link header is already
 * pulled) and fills `ip`. False for a packet that is not IPv4 or IPv6. */
static __always_inline bool dt_inet_parse(struct dt_inet_fmt *w, struct sk_buff *skb, bool send,
					  struct dt_inet_pkt *p, struct ipinfo *ip)
{
	__u16 proto = BPF_CORE_READ(skb, protocol);
	if (proto != bpf_htons(DT_ETH_P_IP) && proto != bpf_htons(DT_ETH_P_IPV6))
		return false;
	unsigned char *data = BPF_CORE_READ(skb, data);
	unsigned char *nh;
	if (send) {
		__u16 off = BPF_CORE_READ(skb, network_header);
		if (off == (__u16)~0U)
			return false;
		nh = BPF_CORE_READ(skb, head) + off;
	} else {
		nh = data;
	}
	if (bpf_probe_read_kernel(w->hdr, 40, nh) && bpf_probe_read_kernel(w->hdr, 20, nh))
		return false;
	__u8 ver = w->hdr[0] >> 4;
	__u32 skb_len = BPF_CORE_READ(skb, len);
	__u32 before = nh > data ? nh - data : 0; /* link header bytes in skb->len */
	p->nh = nh;
	p->ver = ver;
	if (ver == 4 && proto == bpf_htons(DT_ETH_P_IP)) {
		__u8 ihl = (w->hdr[0] & 0xf) * 4;
		__u16 total = (w->hdr[2] << 8) | w->hdr[3];
		p->proto = w->hdr[9];
		p->l3len = ihl;
		p->l4 = nh + ihl;
		ip->ip_ver = 4;
		/* A GSO packet over 64 KiB (BIG TCP) has total length 0. */
		__u32 len = total ? total : skb_len - before;
		ip->ip_plength = len > ihl ? len - ihl : 0;
		fmt_ipv4(w, &w->hdr[12], ip->ip_saddr);
		fmt_ipv4(w, &w->hdr[16], ip->ip_daddr);
		return true;
	}
	if (ver == 6 && proto == bpf_htons(DT_ETH_P_IPV6)) {
		__u16 plen = (w->hdr[4] << 8) | w->hdr[5];
		p->proto = w->hdr[6];
		p->l3len = 40;
		p->l4 = nh + 40;
		ip->ip_ver = 6;
		/* A jumbogram (BIG TCP) has payload length 0. */
		__u32 len = skb_len - before;
		ip->ip_plength = plen ? plen : (len > 40 ? len - 40 : 0);
		fmt_ipv6(w, 0, ip->ip_saddr);
		fmt_ipv6(w, 1, ip->ip_daddr);
		return true;
	}
	return false;
}

#endif

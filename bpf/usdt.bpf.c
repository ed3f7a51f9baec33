// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The USDT provider: uprobes on the probe sites that applications declare
 * in `.note.stapsdt` ELF notes (<sys/sdt.h>, DTrace's -h headers). Each
 * site says where its arguments are (a register, memory at a register
 * plus a displacement, or a constant, with a size and signedness); the
 * runtime decodes the note into a struct dt_usdt_spec per site in
 * dt_usdt_specs, and this program reads the arguments as the spec says.
 *
 * The attach cookie carries the probe ID (high 32 bits), the site's spec
 * (bits 8..31) and the slot of the probe's generated program in
 * dt_usdt_progs (bits 0..7). As for the pid provider, one multi-uprobe
 * link per file serves every site (Linux 6.6); dt_usdt_fire1 serves
 * kernels without multi-uprobe links, one link per site.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

#define DT_MAX_USDT_PROGS 256

enum dt_usdt_arg_kind {
	DT_USDT_NONE = 0,  /* absent, or an operand dtrace cannot decode: 0 */
	DT_USDT_CONST = 1, /* the value is `value` */
	DT_USDT_REG = 2,   /* the register at `reg_off` in pt_regs */
	DT_USDT_MEM = 3,   /* user memory at that register + `value` */
};

/* One argument of a probe site, decoded from its note by the runtime. */
struct dt_usdt_arg {
	__u64 value;     /* the constant, or the memory operand's displacement */
	__u32 kind;      /* enum dt_usdt_arg_kind */
	__u32 reg_off;   /* the register's offset in struct pt_regs */
	__u32 bitshift;  /* 64 - the argument's size in bits */
	__u32 is_signed; /* sign-extend from that size */
};

/* A probe site's arguments. */
struct dt_usdt_spec {
	struct dt_usdt_arg args[DT_NARGS];
	/* An is-enabled test of a probe no other site has: its uprobe holds
	 * the probe's semaphore and fires nothing. */
	__u32 enable_only;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_MAX_USDT_PROGS);
	__type(key, __u32);
	__type(value, __u32);
} dt_usdt_progs SEC(".maps");

/* Sized by the runtime to the number of enabled sites. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_usdt_spec);
} dt_usdt_specs SEC(".maps");

static __always_inline __u64 dt_usdt_arg(struct pt_regs *ctx, const struct dt_usdt_arg *a)
{
	__u64 v = 0;

	switch (a->kind) {
	case DT_USDT_CONST:
		return a->value;
	case DT_USDT_REG:
		if (bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + (a->reg_off & 0xff)))
			return 0;
		break;
	case DT_USDT_MEM:
		if (bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + (a->reg_off & 0xff)))
			return 0;
		/* Reads 8 bytes: on a little-endian machine the operand is the
		 * low ones, kept by the shifts below. */
		if (bpf_probe_read_user(&v, sizeof(v), (void *)(v + a->value)))
			return 0;
		break;
	default:
		return 0;
	}
	v <<= a->bitshift & 63;
	if (a->is_signed)
		return (__s64)v >> (a->bitshift & 63);
	return v >> (a->bitshift & 63);
}

static __always_inline int dt_usdt_fire(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 slot = cookie & (DT_MAX_USDT_PROGS - 1);
	__u32 site = (cookie >> 8) & 0xffffff;
	struct dt_usdt_spec *spec = bpf_map_lookup_elem(&dt_usdt_specs, &site);
	if (!spec || spec->enable_only)
		return 0;
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = cookie >> 32;
	for (int i = 0; i < DT_NARGS; i++)
		pc->args[i] = dt_usdt_arg(ctx, &spec->args[i]);
	bpf_tail_call(ctx, &dt_usdt_progs, slot);
	return 0;
}

SEC("uprobe.multi")
int dt_usdt_fire_multi(struct pt_regs *ctx)
{
	return dt_usdt_fire(ctx);
}

SEC("uprobe")
int dt_usdt_fire1(struct pt_regs *ctx)
{
	return dt_usdt_fire(ctx);
}

/* Layout anchor: makes the skeleton carry struct dt_usdt_spec's Rust type. */
struct dt_usdt_spec dt_layout_usdt_spec;

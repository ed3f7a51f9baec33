// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fbt provider: entry and return of kernel functions
 * (fbt:<module>:<function>:entry|return), by three mechanisms, best first
 * (src/provider/fbt.rs chooses per probe):
 *
 * - BPF trampolines: dt_fbt_entry_<n> (fentry) and dt_fbt_return_<n>
 *   (fexit) for a function of n arguments; the kernel refuses a program
 *   that reads past the function's prototype, hence one per count. Loaded
 *   once per function (the attach target is fixed at load time) with the
 *   probe's slot patched in (dt_copy_slot).
 * - One multi-kprobe link for many functions (Linux 5.18):
 *   dt_fbt_kprobe_multi and dt_fbt_kretprobe_multi, whose attach cookie
 *   is the probe's slot.
 * - Single kprobes: dt_fbt_kprobe and dt_fbt_kretprobe, loaded once per
 *   probe like the trampoline programs (kprobes have cookies only since 5.15).
 *
 * Entry: argN is the Nth argument. Return: arg1 is the return value and
 * arg0 the return instruction's offset, which neither a fexit program nor
 * a kretprobe knows (0).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"
#include "regs.h"

char LICENSE[] SEC("license") = "GPL";

/* Each sized at load time to the number of enabled probes: one per program
 * type a tail call may enter (trampoline, kprobe, multi-kprobe programs). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dt_fbt_tracing_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dt_fbt_kprobe_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dt_fbt_multi_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_slot_probe);
} dt_fbt_probes SEC(".maps");

/* `own_frame`: the stack at this program starts in the probed function
 * (at its entry, and in a trampoline's fexit), which `caller` looks past. */
static __always_inline struct dt_probe_ctx *dt_fbt_begin(void *ctx, __u32 slot, __u32 own_frame)
{
	struct dt_slot_probe *probe = bpf_map_lookup_elem(&dt_fbt_probes, &slot);
	if (!probe)
		return NULL;
	struct dt_probe_ctx *pc = dt_begin_probe_at(ctx, own_frame);
	if (!pc)
		return NULL;
	pc->probe_id = probe->probe_id;
	return pc;
}

/* fentry: ctx is the function's arguments, one u64 each. */
static __always_inline int dt_fbt_entry(__u64 *ctx, int nargs)
{
	__u32 slot = dt_copy_slot();
	struct dt_probe_ctx *pc = dt_fbt_begin(ctx, slot, 1);
	if (!pc)
		return 0;
	for (int i = 0; i < DT_NARGS; i++)
		pc->args[i] = i < nargs ? ctx[i] : 0;
	bpf_tail_call(ctx, &dt_fbt_tracing_progs, slot);
	return 0;
}

/* fexit: the arguments, then the return value. */
static __always_inline int dt_fbt_return(__u64 *ctx, int nargs)
{
	__u32 slot = dt_copy_slot();
	struct dt_probe_ctx *pc = dt_fbt_begin(ctx, slot, 1);
	if (!pc)
		return 0;
	pc->args[0] = 0;
	pc->args[1] = ctx[nargs];
	for (int i = 2; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_fbt_tracing_progs, slot);
	return 0;
}

#define DT_FBT_TRAMPOLINES(n)                          \
	SEC("fentry")                                  \
	int dt_fbt_entry_##n(__u64 *ctx)               \
	{                                              \
		return dt_fbt_entry(ctx, n);           \
	}                                              \
	SEC("fexit")                                   \
	int dt_fbt_return_##n(__u64 *ctx)              \
	{                                              \
		return dt_fbt_return(ctx, n);          \
	}

DT_FBT_TRAMPOLINES(0)
DT_FBT_TRAMPOLINES(1)
DT_FBT_TRAMPOLINES(2)
DT_FBT_TRAMPOLINES(3)
DT_FBT_TRAMPOLINES(4)
DT_FBT_TRAMPOLINES(5)
DT_FBT_TRAMPOLINES(6)

static __always_inline int dt_fbt_kprobe_fire(struct pt_regs *ctx, int ret)
{
	__u32 slot = dt_copy_slot();
	/* A kretprobe's registers are at the return address, in the caller. */
	struct dt_probe_ctx *pc = dt_fbt_begin(ctx, slot, !ret);
	if (!pc)
		return 0;
	dt_args_from_regs(pc, ctx, ret);
	bpf_tail_call(ctx, &dt_fbt_kprobe_progs, slot);
	return 0;
}

SEC("kprobe")
int dt_fbt_kprobe(struct pt_regs *ctx)
{
	return dt_fbt_kprobe_fire(ctx, 0);
}

SEC("kretprobe")
int dt_fbt_kretprobe(struct pt_regs *ctx)
{
	return dt_fbt_kprobe_fire(ctx, 1);
}

static __always_inline int dt_fbt_multi_fire(struct pt_regs *ctx, int ret)
{
	__u32 slot = bpf_get_attach_cookie(ctx);
	struct dt_probe_ctx *pc = dt_fbt_begin(ctx, slot, !ret);
	if (!pc)
		return 0;
	dt_args_from_regs(pc, ctx, ret);
	bpf_tail_call(ctx, &dt_fbt_multi_progs, slot);
	return 0;
}

SEC("kprobe.multi")
int dt_fbt_kprobe_multi(struct pt_regs *ctx)
{
	return dt_fbt_multi_fire(ctx, 0);
}

SEC("kretprobe.multi")
int dt_fbt_kretprobe_multi(struct pt_regs *ctx)
{
	return dt_fbt_multi_fire(ctx, 1);
}

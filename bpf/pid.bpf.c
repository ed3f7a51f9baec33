// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pid provider: uprobes (entry) and uretprobes (return) on functions of
 * the target process's executable and libraries. One program per
 * direction serves every probe: the runtime attaches it with multi-uprobe
 * links (Linux 6.6), one per file, whose attach cookie carries the probe ID
 * (high 32 bits) and the slot of the probe's generated program in
 * dt_pid_progs (low bits). The single-uprobe twins (dt_pid_entry1,
 * dt_pid_return1) serve kernels without multi-uprobe links.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"
#include "regs.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_MAX_PID_PROGS);
	__type(key, __u32);
	__type(value, __u32);
} dt_pid_progs SEC(".maps");

/* Set in the cookie of a probe at a function's first instruction. */
#define DT_PID_AT_ENTRY (1u << 31)

/* arg6..arg9 are read: at a function's first instruction they are on the
 * stack, past the return address (the x86-64 calling convention). */
const volatile bool dt_need_stack_args = false;

static __always_inline int dt_pid_fire(struct pt_regs *ctx, int ret)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	/* A mask, not a compare: the verifier sees the bound on any clang. */
	__u32 slot = cookie & (DT_MAX_PID_PROGS - 1);
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = cookie >> 32;
	/* ucaller exactly where the return address is known: at a function's
	 * first instruction it is at the stack pointer; a uretprobe's
	 * registers are at it. Elsewhere the stack walk's guess stands. */
	if (dt_need_ucaller && ret)
		pc->ucaller = PT_REGS_IP(ctx);
	else if (dt_need_ucaller && (cookie & DT_PID_AT_ENTRY))
		bpf_probe_read_user(&pc->ucaller, sizeof(pc->ucaller), (void *)PT_REGS_SP(ctx));
	dt_args_from_regs(pc, ctx, ret);
#if defined(__TARGET_ARCH_x86)
	if (dt_need_stack_args && !ret && (cookie & DT_PID_AT_ENTRY))
		bpf_probe_read_user(&pc->args[6], 4 * sizeof(__u64), (void *)(PT_REGS_SP(ctx) + 8));
#endif
	bpf_tail_call(ctx, &dt_pid_progs, slot);
	return 0;
}

SEC("uprobe.multi")
int dt_pid_entry(struct pt_regs *ctx)
{
	return dt_pid_fire(ctx, 0);
}

SEC("uretprobe.multi")
int dt_pid_return(struct pt_regs *ctx)
{
	return dt_pid_fire(ctx, 1);
}

SEC("uprobe")
int dt_pid_entry1(struct pt_regs *ctx)
{
	return dt_pid_fire(ctx, 0);
}

SEC("uretprobe")
int dt_pid_return1(struct pt_regs *ctx)
{
	return dt_pid_fire(ctx, 1);
}

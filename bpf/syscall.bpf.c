// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The syscall provider: one raw tracepoint on sys_enter and one on sys_exit
 * serve every system call, so `syscall:::entry` attaches in two steps rather
 * than hundreds. A probe fires only for the system calls the script enabled
 * (dt_sys_enabled, fixed at load time), and tail-calls the generated program
 * in its slot: entry at nr, return at DT_MAX_SYSCALLS + nr.
 *
 * A script that enables only a few system calls uses the per-syscall
 * tracepoints instead (syscalls/sys_enter_<name>, dt_sys_*_tp): then the
 * other system calls run no BPF at all. Their generated programs are of
 * tracepoint type and live in dt_sys_tp_progs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe ID of syscall entry probe nr is dt_sys_id_base + 2*nr, return +1. */
const volatile __u32 dt_sys_id_base = 0;
/* Bit 0: entry enabled, bit 1: return enabled. */
const volatile __u8 dt_sys_enabled[DT_MAX_SYSCALLS] = {};
/* Set before load when the script reads arguments: copying them from the
 * user registers is most of an entry probe's cost. */
const volatile bool dt_need_args = true;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2 * DT_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, __u32);
} dt_sys_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2 * DT_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, __u32);
} dt_sys_tp_progs SEC(".maps");

/* Starts entry probe nr; the caller fills args[0..5] when dt_need_args. */
static __always_inline struct dt_probe_ctx *dt_sys_entry_begin(void *ctx, __u32 nr)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return NULL;
	pc->probe_id = dt_sys_id_base + 2 * nr;
	if (dt_need_args)
		for (int i = 6; i < DT_NARGS; i++)
			pc->args[i] = 0;
	return pc;
}

/* Starts return probe nr: arg0 and arg1 are the return value, errno is set
 * when the kernel returns -errno (in [-4095, -1]). */
static __always_inline struct dt_probe_ctx *dt_sys_return_begin(void *ctx, __u32 nr, long ret)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return NULL;
	pc->probe_id = dt_sys_id_base + 2 * nr + 1;
	pc->args[0] = ret;
	pc->args[1] = ret;
	for (int i = 2; i < DT_NARGS; i++)
		pc->args[i] = 0;
	pc->errno_val = (ret < 0 && ret >= -4095) ? -ret : 0;
	return pc;
}

SEC("raw_tp/sys_enter")
int dt_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	long nr = ctx->args[1];
	if (nr < 0 || nr >= DT_MAX_SYSCALLS || !(dt_sys_enabled[nr] & 1))
		return 0;
	struct dt_probe_ctx *pc = dt_sys_entry_begin(ctx, nr);
	if (!pc)
		return 0;
	if (dt_need_args) {
		struct pt_regs regs;
		/* One read of the user registers instead of six. pt_regs is ABI. */
		if (bpf_probe_read_kernel(&regs, sizeof(regs), (void *)ctx->args[0]))
			return 0;
		pc->args[0] = PT_REGS_PARM1_SYSCALL(&regs);
		pc->args[1] = PT_REGS_PARM2_SYSCALL(&regs);
		pc->args[2] = PT_REGS_PARM3_SYSCALL(&regs);
		pc->args[3] = PT_REGS_PARM4_SYSCALL(&regs);
		pc->args[4] = PT_REGS_PARM5_SYSCALL(&regs);
		pc->args[5] = PT_REGS_PARM6_SYSCALL(&regs);
	}
	bpf_tail_call(ctx, &dt_sys_progs, nr);
	return 0;
}

SEC("raw_tp/sys_exit")
int dt_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = ctx->args[1];
	long nr = dt_sys_exit_nr(ctx);
	if (nr < 0 || nr >= DT_MAX_SYSCALLS || !(dt_sys_enabled[nr] & 2))
		return 0;
	if (!dt_sys_return_begin(ctx, nr, ret))
		return 0;
	bpf_tail_call(ctx, &dt_sys_progs, DT_MAX_SYSCALLS + nr);
	return 0;
}

/* The per-syscall events' records are dtrace.h's dt_syscall_*_rec:
 * dt_sys_enter_tp<N> reads N arguments, and the runtime attaches the
 * widest one the kernel accepts. */

static __always_inline int dt_sys_enter_tp(struct dt_syscall_enter_rec *ctx, int nargs)
{
	__u32 nr = ctx->nr;
	if (nr >= DT_MAX_SYSCALLS)
		return 0;
	struct dt_probe_ctx *pc = dt_sys_entry_begin(ctx, nr);
	if (!pc)
		return 0;
	if (dt_need_args) {
		/* Spelled out: the verifier wants constant offsets into ctx. */
		pc->args[0] = nargs > 0 ? ctx->args[0] : 0;
		pc->args[1] = nargs > 1 ? ctx->args[1] : 0;
		pc->args[2] = nargs > 2 ? ctx->args[2] : 0;
		pc->args[3] = nargs > 3 ? ctx->args[3] : 0;
		pc->args[4] = nargs > 4 ? ctx->args[4] : 0;
		pc->args[5] = nargs > 5 ? ctx->args[5] : 0;
	}
	bpf_tail_call(ctx, &dt_sys_tp_progs, nr);
	return 0;
}

#define DT_SYS_ENTER_TP(n)                                                \
	SEC("tracepoint")                                                 \
	int dt_sys_enter_tp##n(struct dt_syscall_enter_rec *ctx)         \
	{                                                                 \
		return dt_sys_enter_tp(ctx, n);                           \
	}

DT_SYS_ENTER_TP(0)
DT_SYS_ENTER_TP(1)
DT_SYS_ENTER_TP(2)
DT_SYS_ENTER_TP(3)
DT_SYS_ENTER_TP(4)
DT_SYS_ENTER_TP(5)
DT_SYS_ENTER_TP(6)

SEC("tracepoint")
int dt_sys_exit_tp(struct dt_syscall_exit_rec *ctx)
{
	__u32 nr = ctx->nr;
	long ret = ctx->ret;
	if (nr >= DT_MAX_SYSCALLS)
		return 0;
	if (!dt_sys_return_begin(ctx, nr, ret))
		return 0;
	bpf_tail_call(ctx, &dt_sys_tp_progs, DT_MAX_SYSCALLS + nr);
	return 0;
}

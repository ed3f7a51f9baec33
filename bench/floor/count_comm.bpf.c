// SPDX-License-Identifier: GPL-2.0
/* The floor: the least any tracer can do for `@[execname] = count()` on one
 * system call's entry -- the same raw tracepoint our syscall provider uses, a
 * compare, then count_comm.h. */
#include "vmlinux.h"
#include "count_comm.h"

SEC("raw_tp/sys_enter")
int count_comm(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] != TARGET_NR)
		return 0;
	count_comm_now();
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The dtrace provider: BEGIN, END and ERROR. dt_fire is never attached:
 * the consumer runs it with BPF_PROG_TEST_RUN, so BEGIN and END fire in the
 * dtrace process itself, as in DTrace. ERROR's clauses run inline in the
 * generated program that faults; its slot is filled all the same.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Generated clause programs for BEGIN, END and ERROR (DT_SLOT_*). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u32);
} dt_dtrace_progs SEC(".maps");

/*
 * args[0] = slot, [1] = probe id, [2..] = arg0... The context is read as
 * the u64 array it is: vmlinux.h's struct bpf_raw_tracepoint_args would
 * make each read a CO-RE relocation, and this object loads without the
 * kernel's BTF unless dt_need_ppid (src/provider/relocation.rs).
 */
SEC("raw_tp")
int dt_fire(__u64 *args)
{
	__u32 zero = 0;
	struct dt_probe_ctx *pc = bpf_map_lookup_elem(&dt_ctx, &zero);
	if (!pc)
		return 0;
	__u32 slot = args[0];
	pc->probe_id = args[1];
	pc->errno_val = 0;
	pc->timestamp = 0;
	if (dt_need_ustack)
		pc->ustack = 0;
	pc->task = 0;
	for (int i = 0; i < DT_NARGS - 2; i++)
		pc->args[i] = args[i + 2];
	pc->args[DT_NARGS - 2] = 0;
	pc->args[DT_NARGS - 1] = 0;
	if (dt_need_ppid) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		pc->ppid = BPF_CORE_READ(task, real_parent, tgid);
	}
	/* The kernel code that fired the probe is the bpf() system call's, as
	 * DTrace's is its ioctl's: the program and its test run are skipped. */
	if (dt_need_caller)
		pc->caller = dt_kernel_caller(args, 0);
	if (dt_need_ucaller)
		pc->ucaller = dt_user_caller(args);
	if (dt_need_stack_skip)
		pc->stack_skip = dt_kernel_machinery_frames(args);
	bpf_tail_call(args, &dt_dtrace_progs, slot);
	return 0;
}

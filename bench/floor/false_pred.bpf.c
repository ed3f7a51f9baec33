// SPDX-License-Identifier: GPL-2.0
/* Floor for a false predicate on one system call's entry: the compare that
 * selects the call, a second compare that fails, nothing else. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 hits;

SEC("raw_tp/sys_enter")
int false_pred(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] != TARGET_NR)
		return 0;
	if ((bpf_get_current_pid_tgid() >> 32) == 0)
		hits++;
	return 0;
}

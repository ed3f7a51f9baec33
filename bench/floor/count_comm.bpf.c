// SPDX-License-Identifier: GPL-2.0
/* The floor: the least any tracer can do for `@[execname] = count()` on one
 * system call's entry -- the same raw tracepoint our syscall provider uses, a
 * compare, the task's comm as a 16-byte key, one per-CPU hash update. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, char[16]);
	__type(value, __u64);
} counts SEC(".maps");

SEC("raw_tp/sys_enter")
int count_comm(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] != TARGET_NR)
		return 0;
	char comm[16];
	bpf_get_current_comm(comm, sizeof(comm));
	__u64 *v = bpf_map_lookup_elem(&counts, comm);
	if (v) {
		*v += 1;
		return 0;
	}
	__u64 one = 1;
	bpf_map_update_elem(&counts, comm, &one, BPF_NOEXIST);
	return 0;
}

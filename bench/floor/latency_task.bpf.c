// SPDX-License-Identifier: GPL-2.0
/* The second floor for entry-to-return latency (latency.bpf.c is the
 * first): the entry time in task-local storage (BPF_MAP_TYPE_TASK_STORAGE)
 * rather than a hash map keyed by thread, the delta's log2 bucket counted
 * in a per-CPU array at return. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} buckets SEC(".maps");

SEC("raw_tp/sys_enter")
int enter(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] != TARGET_NR)
		return 0;
	__u64 *ts = bpf_task_storage_get(&start, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/sys_exit")
int leave(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
#if defined(__TARGET_ARCH_x86)
	long nr = BPF_CORE_READ(regs, orig_ax);
#else
	long nr = BPF_CORE_READ(regs, syscallno);
#endif
	if (nr != TARGET_NR)
		return 0;
	__u64 *ts = bpf_task_storage_get(&start, bpf_get_current_task_btf(), 0, 0);
	if (!ts || !*ts)
		return 0;
	__u64 delta = bpf_ktime_get_ns() - *ts;
	__u32 bucket = 0;
	for (int shift = 32; shift > 0; shift /= 2) {
		if (delta >> shift) {
			delta >>= shift;
			bucket += shift;
		}
	}
	__u64 *n = bpf_map_lookup_elem(&buckets, &bucket);
	if (n)
		*n += 1;
	*ts = 0;
	return 0;
}

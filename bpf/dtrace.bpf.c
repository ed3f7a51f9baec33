// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The dtrace provider (BEGIN, END, ERROR) and the core object: it owns the
 * maps every other entry program shares (probe context, state, ring buffer,
 * drop counters). The runtime always loads it first.
 *
 * dt_fire is never attached: the consumer runs it with BPF_PROG_TEST_RUN, so
 * BEGIN and END fire in the dtrace process itself, as in DTrace.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Records for the consumer; max_entries (bufsize) is set before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} dt_events SEC(".maps");

/* Records lost because dt_events was full, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dt_drops SEC(".maps");

/* Aggregation updates lost because an aggregation's map was full, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dt_aggdrops SEC(".maps");

/* Speculations by ID (entry 0 unused), the IDs free for speculation(),
 * and how many speculations are being ended right now (a failed
 * speculation() is "busy" then); the sizes follow nspec, set before load.
 * Only generated code and the consumer use them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct dt_spec);
} dt_specs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);
	__type(value, __u32);
} dt_spec_free SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dt_spec_ending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_spec_stats);
} dt_spec_stats SEC(".maps");

/* Generated clause programs for BEGIN, END and ERROR (DT_SLOT_*). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u32);
} dt_dtrace_progs SEC(".maps");

/* Per-thread on-CPU time for vtimestamp (struct dt_vtime by thread ID);
 * least recently used threads make room for new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct dt_vtime);
} dt_vtime SEC(".maps");

/* Loaded and attached only for scripts that use vtimestamp. The raw
 * tracepoint's first three arguments are (preempt, prev, next) on every
 * kernel; later kernels add prev_state after them. */
SEC("raw_tp/sched_switch")
int dt_vtime_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = BPF_CORE_READ(prev, pid);
	struct dt_vtime *v = bpf_map_lookup_elem(&dt_vtime, &tid);
	if (v && v->since) {
		v->total += now - v->since;
		/* Read off the CPU (sched:::off-cpu runs after this), the
		 * thread's vtimestamp is its total. */
		v->since = now;
	}
	tid = BPF_CORE_READ(next, pid);
	v = bpf_map_lookup_elem(&dt_vtime, &tid);
	if (v)
		v->since = now;
	return 0;
}

/* ctx->args[0] = slot, [1] = probe id, [2..] = arg0.. */
SEC("raw_tp")
int dt_fire(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0;
	struct dt_probe_ctx *pc = bpf_map_lookup_elem(&dt_ctx, &zero);
	if (!pc)
		return 0;
	__u32 slot = ctx->args[0];
	pc->probe_id = ctx->args[1];
	pc->errno_val = 0;
	for (int i = 0; i < DT_NARGS - 2; i++)
		pc->args[i] = ctx->args[i + 2];
	pc->args[DT_NARGS - 2] = 0;
	pc->args[DT_NARGS - 1] = 0;
	if (dt_need_ppid) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		pc->ppid = BPF_CORE_READ(task, real_parent, tgid);
	}
	bpf_tail_call(ctx, &dt_dtrace_progs, slot);
	return 0;
}

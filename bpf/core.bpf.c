// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The core object: it owns the maps every entry program and every
 * generated clause program shares (probe context, state, ring buffer, drop
 * counters, speculations, vtimestamp's clock). The runtime loads it first
 * and hands its maps to each provider's object (reuse_fd). It serves no
 * probe; the layout anchors of dtrace.h give the Rust side its types.
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

/* Dynamic variable (associative array, self->) stores lost because the
 * variable's map was full, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dt_dyndrops SEC(".maps");

/* Faults in ERROR clauses, per CPU: DTrace's double errors, which fire no
 * ERROR probe again. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dt_dblerrors SEC(".maps");

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
	if (v) {
		v->since = now;
	} else {
		/* Kept from its first slice on, so a thread's first read of
		 * vtimestamp is its time on CPU since tracing began. */
		struct dt_vtime first = { .total = 0, .since = now };
		bpf_map_update_elem(&dt_vtime, &tid, &first, BPF_NOEXIST);
	}
	return 0;
}

/* Each process's command line by process ID, for pr_psargs of a process
 * other than the current one (whose memory BPF cannot read): recorded when
 * it execs or is forked, and by the runtime from /proc at start-up. Loaded
 * only for scripts that read it; least recently used processes make room. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_psargs);
} dt_psargs SEC(".maps");

/* Records the current process's command line as process pid's. */
static __always_inline void dt_psargs_record(__u32 pid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	unsigned long start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long end = BPF_CORE_READ(task, mm, arg_end);
	struct dt_psargs args = {};
	__u64 len = end - start;
	if (start == 0 || end <= start)
		return;
	if (len > sizeof(args.text) - 1)
		len = sizeof(args.text) - 1;
	if (bpf_probe_read_user(args.text, len & 0x7f, (void *)start))
		return;
	/* Every NUL before the last byte separates two arguments. */
	for (__u32 i = 0; i + 1 < len && i < sizeof(args.text) - 1; i++) {
		if (args.text[i] == 0)
			args.text[i] = ' ';
	}
	bpf_map_update_elem(&dt_psargs, &pid, &args, BPF_ANY);
}

/* sched_process_exec runs in the new image, its arguments on its stack. */
SEC("raw_tp/sched_process_exec")
int dt_psargs_exec(struct bpf_raw_tracepoint_args *ctx)
{
	dt_psargs_record(bpf_get_current_pid_tgid() >> 32);
	return 0;
}

/* Processes that exec'd or mapped a file's code, while a script's USDT
 * provider globs wait for processes started (or libraries loaded) after
 * tracing began: the consumer reads their notes (src/provider/usdt.rs,
 * Retained). Sized by the runtime. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);
	__type(value, __u32);
} dt_execs SEC(".maps");

SEC("raw_tp/sched_process_exec")
int dt_exec_notify(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	bpf_map_push_elem(&dt_execs, &pid, 0);
	return 0;
}

/* A process that maps a file to run its code (the dynamic linker, as a
 * program dlopen()s a library) may have new USDT sites: the consumer looks
 * at it again once the mapping is made. Threads between the two halves of
 * such an mmap(): */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} dt_exec_mmaps SEC(".maps");

#define DT_PROT_EXEC 0x4

SEC("tracepoint")
int dt_mmap_enter(struct dt_syscall_enter_rec *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;
	if ((ctx->args[2] & DT_PROT_EXEC) && (int)ctx->args[4] >= 0)
		bpf_map_update_elem(&dt_exec_mmaps, &tid, &one, BPF_ANY);
	return 0;
}

SEC("tracepoint")
int dt_mmap_exit(struct dt_syscall_exit_rec *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u32 pid = pid_tgid >> 32;
	if (!bpf_map_lookup_elem(&dt_exec_mmaps, &tid))
		return 0;
	bpf_map_delete_elem(&dt_exec_mmaps, &tid);
	/* An address, or -errno. */
	if ((unsigned long)ctx->ret < (unsigned long)-4095)
		bpf_map_push_elem(&dt_execs, &pid, 0);
	return 0;
}

/* sched_process_fork(parent, child) runs in the parent, whose command line
 * a new process shares until it execs; a new thread changes nothing. */
SEC("raw_tp/sched_process_fork")
int dt_psargs_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 pid = BPF_CORE_READ(child, tgid);
	if (pid != BPF_CORE_READ(parent, tgid))
		dt_psargs_record(pid);
	return 0;
}

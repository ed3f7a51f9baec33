// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sched provider: threads leaving and taking a CPU, going to sleep,
 * being preempted and woken, as Solaris' sched provider names it, on the
 * scheduler's tracepoints. One entry program per probe (dt_sched_<probe>);
 * the runtime loads and attaches only those of the probes a script
 * enables, in the order Solaris fires them at one context switch: sleep
 * or preempt, off-cpu, on-cpu (src/provider/sched.rs).
 *
 * sched_switch runs in the thread leaving the CPU. on-cpu fires for the
 * thread taking it, which has not run yet: the entry program names that
 * thread in the probe context (dt_probe_for_task), and pid, tid,
 * execname, curthread and self-> are its. The arguments are raw task
 * pointers; the D library types them (lwpsinfo_t *, psinfo_t *).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/sched.rs order. */
#define DT_SCHED_OFF_CPU 0
#define DT_SCHED_ON_CPU 1
#define DT_SCHED_SLEEP 2
#define DT_SCHED_PREEMPT 3
#define DT_SCHED_WAKEUP 4
#define DT_SCHED_COUNT 5

/* Probe ID of slot s is dt_sched_id_base + s. */
const volatile __u32 dt_sched_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_SCHED_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_sched_progs SEC(".maps");

/* task_struct's state before Linux 5.14. */
struct task_struct___old {
	long state;
};

static __always_inline struct dt_probe_ctx *dt_sched_begin(void *ctx, __u32 slot, __u64 a0, __u64 a1)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return NULL;
	pc->probe_id = dt_sched_id_base + slot;
	pc->args[0] = a0;
	pc->args[1] = a1;
	for (int i = 2; i < DT_NARGS; i++)
		pc->args[i] = 0;
	return pc;
}

/* Whether prev leaves the CPU to sleep (blocked), not preempted. */
static __always_inline bool dt_sched_blocks(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	if ((__u8)ctx->args[0]) /* preempt */
		return false;
	long state;
	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___old *)prev, state);
	return state != 0; /* not TASK_RUNNING */
}

/* sched_switch(preempt, prev, next, ...): off-cpu in prev; args[0] and
 * args[1] are the thread taking the CPU and its process. */
SEC("raw_tp/sched_switch")
int dt_sched_off_cpu(struct bpf_raw_tracepoint_args *ctx)
{
	if (!dt_sched_begin(ctx, DT_SCHED_OFF_CPU, ctx->args[2], ctx->args[2]))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_OFF_CPU);
	return 0;
}

/* on-cpu: for next, about to run. */
SEC("raw_tp/sched_switch")
int dt_sched_on_cpu(struct bpf_raw_tracepoint_args *ctx)
{
	struct dt_probe_ctx *pc = dt_sched_begin(ctx, DT_SCHED_ON_CPU, 0, 0);
	if (!pc)
		return 0;
	dt_probe_for_task(pc, (struct task_struct *)ctx->args[2]);
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_ON_CPU);
	return 0;
}

/* sleep: prev blocks (waits for an event). */
SEC("raw_tp/sched_switch")
int dt_sched_sleep(struct bpf_raw_tracepoint_args *ctx)
{
	if (!dt_sched_blocks(ctx) || !dt_sched_begin(ctx, DT_SCHED_SLEEP, 0, 0))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_SLEEP);
	return 0;
}

/* preempt: prev leaves the CPU still runnable. */
SEC("raw_tp/sched_switch")
int dt_sched_preempt(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	/* The idle thread is switched out, never preempted. */
	if (BPF_CORE_READ(prev, pid) == 0 || dt_sched_blocks(ctx) || !dt_sched_begin(ctx, DT_SCHED_PREEMPT, 0, 0))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_PREEMPT);
	return 0;
}

/* sched_wakeup(p), in the waker: args[0] and args[1] are the woken thread
 * and its process. */
SEC("raw_tp/sched_wakeup")
int dt_sched_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	if (!dt_sched_begin(ctx, DT_SCHED_WAKEUP, ctx->args[0], ctx->args[0]))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_WAKEUP);
	return 0;
}

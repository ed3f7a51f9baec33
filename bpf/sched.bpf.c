// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sched provider: threads leaving and taking a CPU, going to sleep,
 * being preempted, woken, queued and dequeued, their priority changing,
 * clock ticks and reschedule requests, as Solaris' sched provider names
 * them, on the scheduler's tracepoints. Entry programs are named
 * dt_sched_<probe>[_<event>]; the runtime loads and attaches only those of
 * the probes a script enables, in the order Solaris fires them at one
 * context switch: sleep or preempt, enqueue, dequeue, off-cpu, on-cpu
 * (src/provider/sched.rs).
 *
 * Queues are Solaris': a thread is enqueued when it becomes runnable
 * (woken, created, preempted, or moved to another CPU's queue while
 * waiting) and dequeued when it leaves the queue (it takes the CPU, or
 * moves). Linux keeps the running thread on its run queue, so Linux's own
 * enqueue/dequeue calls do not have this meaning.
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
#define DT_SCHED_ENQUEUE 5
#define DT_SCHED_DEQUEUE 6
#define DT_SCHED_CHANGE_PRI 7
#define DT_SCHED_TICK 8
#define DT_SCHED_SURRENDER 9
#define DT_SCHED_REMAIN_CPU 10
#define DT_SCHED_SCHEDCTL_NOPREEMPT 11
#define DT_SCHED_SCHEDCTL_PREEMPT 12
#define DT_SCHED_SCHEDCTL_YIELD 13
#define DT_SCHED_CPUCAPS_SLEEP 14
#define DT_SCHED_CPUCAPS_WAKEUP 15
#define DT_SCHED_COUNT 16

/* Probe ID of slot s is dt_sched_id_base + s. */
const volatile __u32 dt_sched_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_SCHED_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_sched_progs SEC(".maps");

/* The clock tick's hrtimer functions (tick_nohz_handler since Linux
 * 6.9, tick_sched_timer before), from kallsyms: 0 when absent. */
const volatile __u64 dt_sched_tick_fn[2] = {};

/* task_struct's state before Linux 5.14. */
struct task_struct___old {
	long state;
};

/* task_struct's CPU before Linux 5.16 (thread_info.cpu since). */
struct task_struct___cpu {
	unsigned int cpu;
};

/* The CPU whose run queue holds (or will hold) task. */
static __always_inline __u32 dt_sched_task_cpu(struct task_struct *task)
{
	if (bpf_core_field_exists(((struct task_struct___cpu *)task)->cpu))
		return BPF_CORE_READ((struct task_struct___cpu *)task, cpu);
	return BPF_CORE_READ(task, thread_info.cpu);
}

static __always_inline struct dt_probe_ctx *dt_sched_begin4(void *ctx, __u32 slot, __u64 a0, __u64 a1, __u64 a2,
							       __u64 a3)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return NULL;
	pc->probe_id = dt_sched_id_base + slot;
	pc->args[0] = a0;
	pc->args[1] = a1;
	pc->args[2] = a2;
	pc->args[3] = a3;
	for (int i = 4; i < DT_NARGS; i++)
		pc->args[i] = 0;
	return pc;
}

static __always_inline struct dt_probe_ctx *dt_sched_begin(void *ctx, __u32 slot, __u64 a0, __u64 a1)
{
	return dt_sched_begin4(ctx, slot, a0, a1, 0, 0);
}

/* Fires enqueue or dequeue for task on cpu's queue. */
static __always_inline int dt_sched_queue(void *ctx, __u32 slot, struct task_struct *task, __u32 cpu)
{
	if (!dt_sched_begin4(ctx, slot, (__u64)task, (__u64)task, dt_cpuinfo_of(cpu), 0))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, slot);
	return 0;
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

/* enqueue, woken: sched_wakeup(p) runs once p is on its CPU's queue. */
SEC("raw_tp/sched_wakeup")
int dt_sched_enqueue_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	return dt_sched_queue(ctx, DT_SCHED_ENQUEUE, p, dt_sched_task_cpu(p));
}

/* enqueue, created: sched_wakeup_new(p). */
SEC("raw_tp/sched_wakeup_new")
int dt_sched_enqueue_new(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	return dt_sched_queue(ctx, DT_SCHED_ENQUEUE, p, dt_sched_task_cpu(p));
}

/* enqueue, preempted: prev goes back to this CPU's queue. */
SEC("raw_tp/sched_switch")
int dt_sched_enqueue_preempt(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	if (BPF_CORE_READ(prev, pid) == 0 || dt_sched_blocks(ctx))
		return 0;
	return dt_sched_queue(ctx, DT_SCHED_ENQUEUE, prev, bpf_get_smp_processor_id());
}

/* dequeue, dispatched: next leaves this CPU's queue to run. */
SEC("raw_tp/sched_switch")
int dt_sched_dequeue_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	if (BPF_CORE_READ(next, pid) == 0)
		return 0;
	return dt_sched_queue(ctx, DT_SCHED_DEQUEUE, next, bpf_get_smp_processor_id());
}

/* Whether sched_migrate_task(p, dest) moves a thread waiting on a queue
 * (load balancing), not one being woken (not queued yet) or running. */
static __always_inline bool dt_sched_moves_queued(struct task_struct *p)
{
	if (BPF_CORE_READ(p, on_rq) == 0 || BPF_CORE_READ(p, on_cpu) != 0)
		return false;
	/* Since Linux 6.12 a thread that blocked may stay on its run queue
	 * until its lag is spent (a delayed dequeue): it sleeps. */
	if (bpf_core_field_exists(p->se.sched_delayed) && BPF_CORE_READ(p, se.sched_delayed))
		return false;
	return true;
}

/* dequeue, moved: from its CPU's queue (task_cpu is still the old one). */
SEC("raw_tp/sched_migrate_task")
int dt_sched_dequeue_migrate(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	if (!dt_sched_moves_queued(p))
		return 0;
	return dt_sched_queue(ctx, DT_SCHED_DEQUEUE, p, dt_sched_task_cpu(p));
}

/* enqueue, moved: onto dest's queue. */
SEC("raw_tp/sched_migrate_task")
int dt_sched_enqueue_migrate(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	if (!dt_sched_moves_queued(p))
		return 0;
	return dt_sched_queue(ctx, DT_SCHED_ENQUEUE, p, (__u32)ctx->args[1]);
}

/* change-pri: sched_pi_setprio(p, pi_task) runs before rt_mutex_setprio()
 * sets p->prio to the priority priority inheritance gives it: p's own
 * (normal_prio), or its top waiter's if that is better (lower). args[2]
 * is that priority; it fires only when it differs from p->prio. */
SEC("raw_tp/sched_pi_setprio")
int dt_sched_change_pri(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	struct task_struct *pi_task = (struct task_struct *)ctx->args[1];
	int prio = BPF_CORE_READ(p, normal_prio);
	if (pi_task) {
		int waiter = BPF_CORE_READ(pi_task, prio);
		if (waiter < prio)
			prio = waiter;
	}
	if (prio == BPF_CORE_READ(p, prio))
		return 0;
	if (!dt_sched_begin4(ctx, DT_SCHED_CHANGE_PRI, (__u64)p, (__u64)p, (__u64)(__s64)prio, 0))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_CHANGE_PRI);
	return 0;
}

/* tick: the clock tick's hrtimer expires on this CPU, in the thread it
 * interrupted (the idle thread is not charged a tick). */
SEC("raw_tp/hrtimer_expire_entry")
int dt_sched_tick(struct bpf_raw_tracepoint_args *ctx)
{
	struct hrtimer *timer = (struct hrtimer *)ctx->args[0];
	__u64 fn = (__u64)BPF_CORE_READ(timer, function);
	if (fn == 0 || (fn != dt_sched_tick_fn[0] && fn != dt_sched_tick_fn[1]))
		return 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, pid) == 0)
		return 0;
	if (!dt_sched_begin(ctx, DT_SCHED_TICK, (__u64)task, (__u64)task))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_TICK);
	return 0;
}

/* surrender: another CPU's reschedule interrupt arrives here; the thread
 * it interrupted is told to give up the CPU. */
SEC("raw_tp/reschedule_entry")
int dt_sched_surrender(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	if (!dt_sched_begin(ctx, DT_SCHED_SURRENDER, (__u64)task, (__u64)task))
		return 0;
	bpf_tail_call(ctx, &dt_sched_progs, DT_SCHED_SURRENDER);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sysinfo provider: one probe per `sys` statistic, fired just before the
 * statistic is incremented. Each statistic has its own entry program(s)
 * (dt_si_<name>), attached to the kernel event that means the same on Linux
 * (see src/provider/sysinfo.rs); the runtime loads and attaches only those
 * of the probes a script enables. The arguments are kstat.h's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"
#include "kstat.h"

char LICENSE[] SEC("license") = "GPL";

enum dt_si_stat {
#define DT_SI(name) DT_SI_##name,
#include "sysinfo_stats.h"
#undef DT_SI
	DT_SI_COUNT
};

/* Probe ID of statistic s is dt_si_id_base + s. */
const volatile __u32 dt_si_id_base = 0;

/* System call classes, by number, filled by the runtime from the
 * architecture's system call table. */
#define DT_SC_READ 0x01  /* read, readv, pread64, preadv, preadv2 */
#define DT_SC_WRITE 0x02 /* write, writev, pwrite64, pwritev, pwritev2 */
#define DT_SC_PATH 0x04  /* takes a path name: a lookup */
#define DT_SC_MSG 0x08   /* msgsnd, msgrcv */
#define DT_SC_SEM 0x10   /* semop, semtimedop */
#define DT_SC_FORK 0x20  /* fork, vfork, clone, clone3 */
const volatile __u8 dt_si_sysclass[DT_MAX_SYSCALLS] = {};
/* The architecture's O_DIRECT. */
const volatile __u32 dt_si_o_direct = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_kstat_totals);
} dt_si_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_SI_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_si_progs SEC(".maps");

static __always_inline int dt_si_fire(void *ctx, __u32 stat, __u64 inc)
{
	if (stat >= DT_SI_COUNT || !dt_kstat_begin(ctx, &dt_si_totals, dt_si_id_base, stat, inc))
		return 0;
	bpf_tail_call(ctx, &dt_si_progs, stat);
	return 0;
}

/* ---- system calls -------------------------------------------------------- */

static __always_inline __u8 dt_si_class(long nr)
{
	if (nr < 0 || nr >= DT_MAX_SYSCALLS)
		return 0;
	return dt_si_sysclass[nr];
}

/* readch/writech: after a successful read or write, by the bytes moved. */
SEC("raw_tp/sys_exit")
int dt_si_readch(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = ctx->args[1];
	if (ret > 0 && (dt_si_class(dt_sys_exit_nr(ctx)) & DT_SC_READ))
		return dt_si_fire(ctx, DT_SI_readch, ret);
	return 0;
}

SEC("raw_tp/sys_exit")
int dt_si_writech(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = ctx->args[1];
	if (ret > 0 && (dt_si_class(dt_sys_exit_nr(ctx)) & DT_SC_WRITE))
		return dt_si_fire(ctx, DT_SI_writech, ret);
	return 0;
}

/* procovf: a fork that failed for want of resources (EAGAIN). */
SEC("raw_tp/sys_exit")
int dt_si_procovf(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = ctx->args[1];
	if (ret == -11 && (dt_si_class(dt_sys_exit_nr(ctx)) & DT_SC_FORK))
		return dt_si_fire(ctx, DT_SI_procovf, 1);
	return 0;
}

#define DT_SI_ENTER(stat, class)                                        \
	SEC("raw_tp/sys_enter")                                         \
	int dt_si_##stat(struct bpf_raw_tracepoint_args *ctx)           \
	{                                                               \
		if (dt_si_class(ctx->args[1]) & (class))                \
			return dt_si_fire(ctx, DT_SI_##stat, 1);        \
		return 0;                                               \
	}

DT_SI_ENTER(sysread, DT_SC_READ)
DT_SI_ENTER(syswrite, DT_SC_WRITE)
DT_SI_ENTER(namei, DT_SC_PATH)
DT_SI_ENTER(msg, DT_SC_MSG)
DT_SI_ENTER(sema, DT_SC_SEM)

/* phread/phwrite: raw I/O, i.e. a read or write on a file opened O_DIRECT. */
static __always_inline int dt_si_direct(struct bpf_raw_tracepoint_args *ctx, __u8 class, __u32 stat)
{
	if (!(dt_si_class(ctx->args[1]) & class))
		return 0;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	unsigned int fd = PT_REGS_PARM1_CORE_SYSCALL(regs);
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	if (!file || !(BPF_CORE_READ(file, f_flags) & dt_si_o_direct))
		return 0;
	return dt_si_fire(ctx, stat, 1);
}

SEC("raw_tp/sys_enter")
int dt_si_phread(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_direct(ctx, DT_SC_READ, DT_SI_phread);
}

SEC("raw_tp/sys_enter")
int dt_si_phwrite(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_direct(ctx, DT_SC_WRITE, DT_SI_phwrite);
}

/* ---- processes and threads --------------------------------------------- */

SEC("raw_tp/sched_process_exec")
int dt_si_sysexec(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_fire(ctx, DT_SI_sysexec, 1);
}

#define DT_CLONE_VFORK 0x00004000
#define DT_CLONE_THREAD 0x00010000
#define DT_PF_KTHREAD 0x00200000

/* task_newtask(task, clone_flags) fires in the parent; kernel threads are
 * not the fork(2)s and threads the statistics count. */
static __always_inline __u64 dt_si_user_clone(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	if (BPF_CORE_READ(task, flags) & DT_PF_KTHREAD)
		return ~0ULL;
	return ctx->args[1];
}

SEC("raw_tp/task_newtask")
int dt_si_sysfork(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 flags = dt_si_user_clone(ctx);
	if (flags != ~0ULL && !(flags & (DT_CLONE_THREAD | DT_CLONE_VFORK)))
		return dt_si_fire(ctx, DT_SI_sysfork, 1);
	return 0;
}

SEC("raw_tp/task_newtask")
int dt_si_sysvfork(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 flags = dt_si_user_clone(ctx);
	if (flags != ~0ULL && (flags & DT_CLONE_VFORK))
		return dt_si_fire(ctx, DT_SI_sysvfork, 1);
	return 0;
}

SEC("raw_tp/task_newtask")
int dt_si_nthreads(struct bpf_raw_tracepoint_args *ctx)
{
	if (dt_si_user_clone(ctx) != ~0ULL)
		return dt_si_fire(ctx, DT_SI_nthreads, 1);
	return 0;
}

/* ---- the scheduler: sched_switch(preempt, prev, next[, prev_state]) ------ */

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

SEC("raw_tp/sched_switch")
int dt_si_pswitch(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] != ctx->args[2])
		return dt_si_fire(ctx, DT_SI_pswitch, 1);
	return 0;
}

/* Involuntary as the kernel counts nivcsw: preempted, or switched out while
 * runnable. Since 5.18 the tracepoint passes the state the kernel decided
 * on; before, the task's state is read (the kernel refuses to attach the
 * first program where the fourth argument does not exist). */
SEC("raw_tp/sched_switch")
int dt_si_inv_swtch_state(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] != ctx->args[2] && (ctx->args[0] || ctx->args[3] == 0))
		return dt_si_fire(ctx, DT_SI_inv_swtch, 1);
	return 0;
}

SEC("raw_tp/sched_switch")
int dt_si_inv_swtch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	if (ctx->args[1] == ctx->args[2])
		return 0;
	long state;
	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
	if (ctx->args[0] || state == 0)
		return dt_si_fire(ctx, DT_SI_inv_swtch, 1);
	return 0;
}

SEC("raw_tp/sched_switch")
int dt_si_idlethread(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	if (BPF_CORE_READ(next, pid) == 0)
		return dt_si_fire(ctx, DT_SI_idlethread, 1);
	return 0;
}

/* ---- interrupts, traps, cross calls, modules, locks --------------------- */

SEC("raw_tp/irq_handler_entry")
int dt_si_intrblk(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_fire(ctx, DT_SI_intrblk, 1);
}

SEC("raw_tp/page_fault_user")
int dt_si_trap_user(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_fault_not_serviced() ? 0 : dt_si_fire(ctx, DT_SI_trap, 1);
}

SEC("raw_tp/page_fault_kernel")
int dt_si_trap_kernel(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_fault_not_serviced() ? 0 : dt_si_fire(ctx, DT_SI_trap, 1);
}

/* The sending CPU, as Solaris counts xcalls. */
SEC("raw_tp/ipi_send_cpu")
int dt_si_xcalls_cpu(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_fire(ctx, DT_SI_xcalls, 1);
}

SEC("raw_tp/ipi_send_cpumask")
int dt_si_xcalls_mask(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_fire(ctx, DT_SI_xcalls, 1);
}

SEC("raw_tp/module_load")
int dt_si_modload(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_fire(ctx, DT_SI_modload, 1);
}

SEC("raw_tp/module_free")
int dt_si_modunload(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_si_fire(ctx, DT_SI_modunload, 1);
}

/* contention_begin(lock, flags): LCB_F_SPIN 1<<0, LCB_F_READ 1<<1,
 * LCB_F_WRITE 1<<2, LCB_F_RT 1<<3, LCB_F_MUTEX 1<<5. A contended mutex
 * begins with MUTEX|SPIN and begins again with MUTEX when it stops
 * spinning to sleep: one failed enter, counted at the first. */
SEC("raw_tp/contention_begin")
int dt_si_mutex_adenters(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 flags = ctx->args[1];
	if ((flags & (1 << 5) && flags & 1) || flags & (1 << 3))
		return dt_si_fire(ctx, DT_SI_mutex_adenters, 1);
	return 0;
}

SEC("raw_tp/contention_begin")
int dt_si_rw_rdfails(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] & (1 << 1))
		return dt_si_fire(ctx, DT_SI_rw_rdfails, 1);
	return 0;
}

SEC("raw_tp/contention_begin")
int dt_si_rw_wrfails(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] & (1 << 2))
		return dt_si_fire(ctx, DT_SI_rw_wrfails, 1);
	return 0;
}

/* ---- the block layer ------------------------------------------------------
 * Physical I/O is a request issued to the device (block_rq_issue), logical
 * I/O a bio submitted to the block layer (block_bio_queue), each with a
 * program per prototype (DT_KSTAT_BLOCK). */

static __always_inline int dt_si_request(void *ctx, struct request *rq, __u32 stat)
{
	__u32 flags = BPF_CORE_READ(rq, cmd_flags);
	__u32 op = flags & DT_REQ_OP_MASK;
	bool sync = flags & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC));
	if ((stat == DT_SI_bread && op == DT_REQ_OP_READ) || (stat == DT_SI_bwrite && op == DT_REQ_OP_WRITE) ||
	    (stat == DT_SI_bawrite && op == DT_REQ_OP_WRITE && !sync))
		return dt_si_fire(ctx, stat, 1);
	return 0;
}

static __always_inline int dt_si_bio(void *ctx, struct bio *bio, __u32 stat)
{
	__u32 op = BPF_CORE_READ(bio, bi_opf) & DT_REQ_OP_MASK;
	if ((stat == DT_SI_lread && op == DT_REQ_OP_READ) || (stat == DT_SI_lwrite && op == DT_REQ_OP_WRITE))
		return dt_si_fire(ctx, stat, 1);
	return 0;
}

#define DT_SI_BLOCK(stat, tp, fn, type) DT_KSTAT_BLOCK(dt_si_##stat, tp, fn, type, DT_SI_##stat)

DT_SI_BLOCK(bread, block_rq_issue, dt_si_request, request)
DT_SI_BLOCK(bwrite, block_rq_issue, dt_si_request, request)
DT_SI_BLOCK(bawrite, block_rq_issue, dt_si_request, request)
DT_SI_BLOCK(lread, block_bio_queue, dt_si_bio, bio)
DT_SI_BLOCK(lwrite, block_bio_queue, dt_si_bio, bio)

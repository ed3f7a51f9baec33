// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The proc provider: process and thread life cycle, as Solaris' proc
 * provider names it, on the scheduler's and signals' tracepoints. One entry
 * program per probe (dt_proc_<probe>; exit and lwp-exit share one); the
 * runtime loads and attaches only those of the probes a script enables. The probe's number in
 * src/provider/proc.rs is its slot in dt_proc_progs; the arguments are raw
 * (task pointers, numbers), and the D library gives them their types
 * (args[0] of proc:::create is the child's psinfo_t *).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/proc.rs order. */
#define DT_PROC_CREATE 0
#define DT_PROC_EXEC 1
#define DT_PROC_EXEC_SUCCESS 2
#define DT_PROC_EXEC_FAILURE 3
#define DT_PROC_EXIT 4
#define DT_PROC_LWP_CREATE 5
#define DT_PROC_LWP_EXIT 6
#define DT_PROC_SIGNAL_SEND 7
#define DT_PROC_SIGNAL_HANDLE 8
#define DT_PROC_SIGNAL_DISCARD 9
#define DT_PROC_SIGNAL_CLEAR 10
#define DT_PROC_FAULT 11
#define DT_PROC_START 12
#define DT_PROC_LWP_START 13
#define DT_PROC_COUNT 14

/* Probe ID of slot s is dt_proc_id_base + s. */
const volatile __u32 dt_proc_id_base = 0;
/* execve and execveat system call numbers of this architecture. */
const volatile __s64 dt_proc_nr_execve = -1;
const volatile __s64 dt_proc_nr_execveat = -1;
/* The system calls that make a process or thread, and sigtimedwait's. */
const volatile __s64 dt_proc_nr_fork = -1;
const volatile __s64 dt_proc_nr_vfork = -1;
const volatile __s64 dt_proc_nr_clone = -1;
const volatile __s64 dt_proc_nr_clone3 = -1;
const volatile __s64 dt_proc_nr_rt_sigtimedwait = -1;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_PROC_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_proc_progs SEC(".maps");

static __always_inline int dt_proc_fire(void *ctx, __u32 slot, __u64 a0, __u64 a1, __u64 a2)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = dt_proc_id_base + slot;
	pc->args[0] = a0;
	pc->args[1] = a1;
	pc->args[2] = a2;
	for (int i = 3; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_proc_progs, slot);
	return 0;
}

/* sched_process_fork(parent, child), in the parent: a new process, or a
 * new thread of the parent's process. */
SEC("raw_tp/sched_process_fork")
int dt_proc_create(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;
	return dt_proc_fire(ctx, DT_PROC_CREATE, (__u64)child, 0, 0);
}

SEC("raw_tp/sched_process_fork")
int dt_proc_lwp_create(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	if (BPF_CORE_READ(child, pid) == BPF_CORE_READ(child, tgid))
		return 0;
	return dt_proc_fire(ctx, DT_PROC_LWP_CREATE, (__u64)child, (__u64)child, 0);
}

static __always_inline bool dt_proc_is_exec(long nr)
{
	return nr >= 0 && (nr == dt_proc_nr_execve || nr == dt_proc_nr_execveat);
}

/* exec: the process is about to exec; arg0 the path (user memory). */
SEC("raw_tp/sys_enter")
int dt_proc_exec(struct bpf_raw_tracepoint_args *ctx)
{
	long nr = ctx->args[1];
	if (!dt_proc_is_exec(nr))
		return 0;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u64 path = nr == dt_proc_nr_execve ? PT_REGS_PARM1_CORE_SYSCALL(regs) : PT_REGS_PARM2_CORE_SYSCALL(regs);
	return dt_proc_fire(ctx, DT_PROC_EXEC, path, 0, 0);
}

/* exec-success: in the new program, once exec has replaced the image. */
SEC("raw_tp/sched_process_exec")
int dt_proc_exec_success(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_proc_fire(ctx, DT_PROC_EXEC_SUCCESS, 0, 0, 0);
}

/* exec-failure: execve returned an error; arg0 the errno. */
SEC("raw_tp/sys_exit")
int dt_proc_exec_failure(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = ctx->args[1];
	long nr = dt_sys_exit_nr(ctx);
	if (ret >= 0 || !dt_proc_is_exec(nr))
		return 0;
	return dt_proc_fire(ctx, DT_PROC_EXEC_FAILURE, -ret, 0, 0);
}

/* Solaris' exit reasons (CLD_*) from a wait status. */
static __always_inline __u64 dt_proc_exit_reason(int code)
{
	if ((code & 0x7f) == 0)
		return 1; /* CLD_EXITED */
	return (code & 0x80) ? 3 /* CLD_DUMPED */ : 2 /* CLD_KILLED */;
}

/* Processes whose exit probe fired: when threads exit together, several
 * see signal->live at 0, and only the first to claim the process fires
 * exit. Keyed by the signal_struct and the process ID, so a later process
 * reusing the address is not taken for this one. */
struct dt_proc_exit_key {
	__u64 signal;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct dt_proc_exit_key);
	__type(value, __u8);
} dt_proc_exited SEC(".maps");

/* sched_process_exit(task), in the exiting thread: exit for the
 * process's last thread (signal->live already counts it out). */
SEC("raw_tp/sched_process_exit")
int dt_proc_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	struct dt_proc_exit_key key = {
		.signal = (__u64)BPF_CORE_READ(task, signal),
		.tgid = BPF_CORE_READ(task, tgid),
	};
	__u8 claimed = 1;
	if (bpf_map_update_elem(&dt_proc_exited, &key, &claimed, BPF_NOEXIST) != 0)
		return 0;
	return dt_proc_fire(ctx, DT_PROC_EXIT, dt_proc_exit_reason(BPF_CORE_READ(task, exit_code)), 0, 0);
}

/* lwp-exit: every thread, the last one too (before exit, as Solaris'
 * proc_exit fires lwp-exit then exit; src/provider/proc.rs attaches this
 * program first). */
SEC("raw_tp/sched_process_exit")
int dt_proc_lwp_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_proc_fire(ctx, DT_PROC_LWP_EXIT, 0, 0, 0);
}

/* signal_generate(sig, info, task, group, result), in the sender. */
SEC("raw_tp/signal_generate")
int dt_proc_signal_send(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 task = ctx->args[2];
	return dt_proc_fire(ctx, DT_PROC_SIGNAL_SEND, task, task, ctx->args[0]);
}

/* signal-discard: the target ignores the signal, which the kernel drops
 * (TRACE_SIGNAL_IGNORED). */
#define DT_TRACE_SIGNAL_IGNORED 1

SEC("raw_tp/signal_generate")
int dt_proc_signal_discard(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 task = ctx->args[2];
	if ((int)ctx->args[4] != DT_TRACE_SIGNAL_IGNORED)
		return 0;
	return dt_proc_fire(ctx, DT_PROC_SIGNAL_DISCARD, task, task, ctx->args[0]);
}

/* signal-clear: sigtimedwait(2) (and sigwait, sigwaitinfo, which call it)
 * took a pending signal; arg0 the signal. */
SEC("raw_tp/sys_exit")
int dt_proc_signal_clear(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = ctx->args[1];
	long nr = dt_sys_exit_nr(ctx);
	if (ret <= 0 || nr < 0 || nr != dt_proc_nr_rt_sigtimedwait)
		return 0;
	return dt_proc_fire(ctx, DT_PROC_SIGNAL_CLEAR, ret, 0, 0);
}

/* fault: the kernel signals the current thread for a machine fault it
 * took (si_code > 0: SEGV_MAPERR, FPE_INTDIV, SI_KERNEL, ...; a kill or
 * raise has si_code <= 0). arg0 is Solaris' fault number (FLT* in
 * d-library/procfs.d), arg1 the siginfo. */
static __always_inline __u64 dt_proc_fault_code(int sig, int code)
{
	switch (sig) {
	case 4: /* SIGILL */
		return code == 5 /* ILL_PRVOPC */ || code == 6 /* ILL_PRVREG */ ? 2 /* FLTPRIV */ : 1 /* FLTILL */;
	case 5: /* SIGTRAP */
		return code == 2 /* TRAP_TRACE */ ? 4 /* FLTTRACE */ : 3 /* FLTBPT */;
	case 11: /* SIGSEGV */
		return code == 1 /* SEGV_MAPERR */ ? 6 /* FLTBOUNDS */ : 5 /* FLTACCESS */;
	case 7: /* SIGBUS */
		return 5; /* FLTACCESS */
	case 8: /* SIGFPE */
		return code == 1 /* FPE_INTDIV */ ? 8 /* FLTIZDIV */ : code == 2 /* FPE_INTOVF */ ? 7 /* FLTIOVF */ : 9 /* FLTFPE */;
	}
	return 0;
}

SEC("raw_tp/signal_generate")
int dt_proc_fault(struct bpf_raw_tracepoint_args *ctx)
{
	struct kernel_siginfo *info = (struct kernel_siginfo *)ctx->args[1];
	if (ctx->args[2] != bpf_get_current_task() || (__u64)info <= 2 /* SEND_SIG_NOINFO, SEND_SIG_PRIV */)
		return 0;
	int code = BPF_CORE_READ(info, si_code);
	__u64 fault = dt_proc_fault_code(ctx->args[0], code);
	if (code <= 0 || !fault)
		return 0;
	return dt_proc_fire(ctx, DT_PROC_FAULT, fault, (__u64)info, 0);
}

/* start and lwp-start: in the new process or thread, before its first
 * user instruction: its return of 0 from fork, vfork, clone or clone3. */
static __always_inline bool dt_proc_started(struct bpf_raw_tracepoint_args *ctx)
{
	long nr = dt_sys_exit_nr(ctx);
	return ctx->args[1] == 0 && nr >= 0 &&
	       (nr == dt_proc_nr_fork || nr == dt_proc_nr_vfork || nr == dt_proc_nr_clone || nr == dt_proc_nr_clone3);
}

SEC("raw_tp/sys_exit")
int dt_proc_start(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!dt_proc_started(ctx) || (__u32)id != id >> 32)
		return 0;
	return dt_proc_fire(ctx, DT_PROC_START, 0, 0, 0);
}

/* lwp-start: every new thread, a new process's first too (after start,
 * as Solaris fires start then lwp-start for a process's first LWP; start
 * is attached first). */
SEC("raw_tp/sys_exit")
int dt_proc_lwp_start(struct bpf_raw_tracepoint_args *ctx)
{
	if (!dt_proc_started(ctx))
		return 0;
	return dt_proc_fire(ctx, DT_PROC_LWP_START, 0, 0, 0);
}

/* signal_deliver(sig, info, ka), in the thread about to handle it. */
SEC("raw_tp/signal_deliver")
int dt_proc_signal_handle(struct bpf_raw_tracepoint_args *ctx)
{
	struct k_sigaction *ka = (struct k_sigaction *)ctx->args[2];
	return dt_proc_fire(ctx, DT_PROC_SIGNAL_HANDLE, ctx->args[0], ctx->args[1],
			    (__u64)BPF_CORE_READ(ka, sa.sa_handler));
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one definition of every layout shared between the BPF entry programs
 * in bpf/ and the code our Rust code generator emits at run time.
 *
 * Rust never hard-codes an offset into these structs: build.rs makes
 * skeletons from the entry programs, the skeletons carry these types (via the
 * dt_layout_* anchors below), and src/defs/layout.rs reads offsets from
 * them with offset_of!.
 */
#ifndef DTRACE_BPF_H
#define DTRACE_BPF_H

#define DT_NARGS 10          /* arg0 .. arg9 */
#define DT_MAX_SYSCALLS 1024 /* slots per direction in the syscall program array */
#define DT_MAX_PROFILE 64    /* profile/tick probes in one script */
#define DT_MAX_PID_PROGS 256 /* distinct clause lists of pid probes in one script */
#define DT_CALLER_FRAMES 8   /* kernel frames `caller` looks through */
#define DT_CALLER_SEARCH 17  /* binary search steps: up to 2^17 ranges in dt_caller_code */

/* Kernel memory read with plain loads that the kernel checks (and a
 * fault reads as 0), from a pointer made a read-only kernel one with
 * bpf_rdonly_cast (Linux 6.2): a helper call per read costs more than the
 * read. Before 6.2 dt_loads() is false and the verifier drops the loads'
 * code; the entry programs read with bpf_probe_read_kernel there. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#define dt_loads() bpf_ksym_exists(bpf_rdonly_cast)
#define DT_KPTR(type, p) ((type *)bpf_rdonly_cast((const void *)(p), bpf_core_type_id_kernel(type)))
/* The word at kernel address addr, as a number (struct rb_node begins
 * with one, on every kernel). A kernel pointer loaded as a pointer would
 * stay a typed pointer in the verifier's state, which forbids arithmetic
 * on it. */
#define DT_WORD(addr) (DT_KPTR(struct rb_node, (__u64)(addr))->__rb_parent_color)
/* Member `field` of *ptr, as a number: one load where dt_loads(), else
 * BPF_CORE_READ. The word is read whole and cut to the member's type
 * (little-endian machines). */
#define DT_GET(ptr, field)                                                                     \
	(dt_loads() ? (typeof((ptr)->field))DT_WORD((__u64)(ptr) + bpf_core_field_offset((ptr)->field)) : \
		      BPF_CORE_READ(ptr, field))

/* An address range of kernel code a probe's caller can be in: vmlinux's
 * and the modules' text without the tracing machinery (src/kallsyms.rs). */
struct dt_code_range {
	__u64 start;
	__u64 end;
};

/* A CPU as D sees it (d-library/sched.d): curcpu is a cpuinfo_t *, the
 * sysinfo provider's arg2 a cpu_t *, both into this CPU's entry of
 * dt_cpuinfo, which the runtime fills when a script uses either. */
struct dt_processor_info {
	__s32 pi_state;               /* P_ONLINE (2) */
	char pi_processor_type[16];   /* the machine, as uname -m */
	char pi_fputypes[32];
	__s32 pi_clock;               /* MHz */
};

struct dt_cpuinfo {
	__s32 cpu_id;
	__s32 cpu_pset;               /* -1: no processor sets */
	__s32 cpu_chip;               /* physical package */
	__s32 cpu_lgrp;               /* NUMA node */
	struct dt_processor_info cpu_info;
};

struct dt_cpu {
	__s32 cpu_id;
	__s32 cpu_seqid;
	__u16 cpu_flags;              /* CPU_RUNNING | CPU_READY | CPU_EXISTS | CPU_ENABLE */
	__s32 cpu_chip;
	__s32 cpu_lgrp;
	struct dt_processor_info cpu_type_info;
};

struct dt_cpu_data {
	struct dt_cpu cpu;
	struct dt_cpuinfo info;
};

/* dtrace provider probe slots (dt_dtrace_progs and the BEGIN/END/ERROR ids) */
#define DT_SLOT_BEGIN 0
#define DT_SLOT_END 1
#define DT_SLOT_ERROR 2

/* Per-CPU context: written by an entry program, read by the generated
 * clause program it tail-calls. */
struct dt_probe_ctx {
	__u64 args[DT_NARGS];
	__u32 probe_id;  /* the probe's ID as `dtrace -l` prints it */
	__s32 errno_val; /* errno for syscall return probes, else 0 */
	__u32 ppid;      /* filled only when dt_need_ppid is set */
	/* Frames of the BPF program and the code that ran it at the top of
	 * the kernel stack, which stack() and stackdepth leave out: filled
	 * only when dt_need_stack_skip is set. */
	__u32 stack_skip;
	/* timestamp is sampled once per probe firing, as DTrace does: the
	 * generated code reads the clock at its first use and keeps it here
	 * (0: not read yet in this firing). */
	__u64 timestamp;
	/* The firing's first ustack() value (0: none yet; reset only when
	 * dt_need_ustack is set), which every
	 * ustack() of that depth in the firing reuses: in an NMI (profile) a
	 * second bpf_get_stackid() of a build-ID stack map gets addresses
	 * where the first got build IDs (the mm's lock cannot be taken twice
	 * there), and the map refuses that as another stack in the same
	 * bucket (-EEXIST). */
	__u64 ustack;
	/* The thread a probe fires for when it is not the current one
	 * (sched:::on-cpu fires for the thread switched to, before it runs):
	 * its task_struct, and what the helpers would say of it. 0 when the
	 * probe fires for the current thread (dt_begin_probe); the generated
	 * code of scripts that enable such probes looks here first. */
	__u64 task;
	__u64 pid_tgid;  /* tgid << 32 | pid */
	__u64 uid_gid;   /* gid << 32 | uid */
	char comm[16];
	/* `caller` and `ucaller`: filled only when dt_need_caller and
	 * dt_need_ucaller are set (a stack walk each). */
	__u64 caller;
	__u64 ucaller;
};

/* State shared by every program; lives in the core object's dt_state map. */
struct dt_state {
	__u32 draining; /* nonzero: entry programs fire no probes (BEGIN has
	                 * not run yet, or exit() was called, or END is firing) */
	__u32 exit_status;
	__u32 only_cpu; /* the cpu option plus one: probes fire on that CPU only; 0: all */
	__u32 caller_ranges; /* entries of dt_caller_code in use */
	__u64 wall_offset_ns; /* walltimestamp = bpf_ktime_get_ns() + this */
	/* bpf_ktime_get_ns() once dt_vtime_switch was attached: a thread it
	 * has not switched in since has been on its CPU since then. */
	__u64 vtime_start_ns;
	/* Always 0. The verifier cannot know a map's contents, so a value
	 * with this added has no known range: a string compare's result
	 * then leaves no branch the verifier could decide and mark precise,
	 * and the states after the compare merge (else they double with
	 * each compare in a clause). */
	__u64 opaque_zero;
};

/* Header of every record in the dt_events ring buffer. */
struct dt_rec_hdr {
	__u32 epid;     /* enabled probe ID: which clause wrote the record */
	__u32 probe_id; /* probe that fired */
	__u32 cpu;
	__u32 spec;     /* tag of the speculation it belongs to (dt_spec); 0: none */
	__u64 present;  /* bit i set: action i of the clause ran (if/else may skip some); actions past 64: Clause::present_bit */
	__u64 timestamp; /* the firing's timestamp, for structured output; else 0 */
};

/* commit() and discard() end a speculation with a record that is just a
 * dt_rec_hdr with one of these epids and the speculation's tag in `spec`. */
#define DT_EPID_COMMIT 0xfffffffeu
#define DT_EPID_DISCARD 0xfffffffdu

/* A runtime fault (bad address, ...) reported to the consumer. Written
 * after a dt_rec_hdr whose epid is DT_EPID_FAULT. */
#define DT_EPID_FAULT 0xffffffffu
struct dt_fault_rec {
	__u32 epid;      /* clause that faulted */
	__u32 action;    /* action number in that clause, from 1 */
	__u32 kind;      /* DT_FAULT_* */
	__u32 pc;        /* the faulting instruction's index, or ~0 (none) */
	__u64 addr;
};
/* Numbered as DTrace's DTRACEFLT_* (the ERROR probe's arg4). */
#define DT_FAULT_BADADDR 1
#define DT_FAULT_ILLOP 3  /* e.g. inet_ntop() of an unknown address family */
#define DT_FAULT_DIVZERO 4

/* vtimestamp: a thread's time on CPU since tracing began, kept by
 * dt_vtime_switch in the dt_vtime map, keyed by thread ID, from the
 * thread's first switch-in. While the thread runs, its vtimestamp is
 * total + (now - since); a thread without an entry has run since
 * dt_state.vtime_start_ns. */
struct dt_vtime {
	__u64 total; /* ns on CPU before the current time slice */
	__u64 since; /* bpf_ktime_get_ns() when the current slice began */
};

/* A process's command line as psinfo_t's pr_psargs (Solaris' PRARGSZ):
 * arguments joined by spaces, NUL-terminated. */
struct dt_psargs {
	char text[80];
};

/* One speculation: entry ID (from 1) of dt_specs. speculation() takes a
 * free ID from the dt_spec_free queue and makes it active with a new tag;
 * commit() and discard() mark it ending, write their record and queue the
 * ID again. Records carry the tag, not the ID: a record of a speculation
 * that ended is never taken for one of the next speculation with its ID,
 * whatever order they reach the consumer in. */
struct dt_spec {
	__u64 state; /* DT_SPEC_* */
	__u64 bytes; /* bytes speculated so far, held against specsize */
	__u64 tag;   /* generation << 16 | ID: unique to each use of the ID */
};
#define DT_SPEC_FREE 0
#define DT_SPEC_ACTIVE 1
#define DT_SPEC_ENDING 2
#define DT_SPEC_TAG_STEP 0x10000 /* the next generation's tag; nspec < this */

/* Speculation troubles per CPU (dt_spec_stats), reported as DTrace's
 * speculative drops and failed speculations. */
struct dt_spec_stats {
	__u64 drops;   /* speculative records over specsize */
	__u64 busy;    /* speculation() failed while some were being ended */
	__u64 unavail; /* speculation() failed: every one in use */
};

/* Entry programs loaded once per probe (sdt, rawtp, fbt: a program per
 * tracepoint or function, as most kernels give these no attach cookie)
 * name their probe's slot with this immediate, which the runtime patches
 * in each copy (src/provider/copies.rs). The slot indexes the provider's
 * table of dt_slot_probe and its program array. */
#define DT_SLOT_MARKER 0x7e5107ed

/* How a tracepoint field becomes argN (sdt). */
struct dt_tp_field {
	__u16 offset; /* in the tracepoint's record */
	__u8 size;    /* bytes of a value: 1, 2, 4 or 8 */
	__u8 kind;    /* DT_FIELD_* */
};
#define DT_FIELD_UNSIGNED 0 /* the value, zero-extended */
#define DT_FIELD_SIGNED 1   /* the value, sign-extended */
#define DT_FIELD_ADDRESS 2  /* the field's address (an array: char comm[16]) */
#define DT_FIELD_DATA_LOC 3 /* __data_loc: the address of the data it locates */

/* One probe of a per-probe provider: its ID and, for a tracepoint, how
 * its fields become arguments. */
struct dt_slot_probe {
	__u32 probe_id;
	__u32 nfields;
	struct dt_tp_field fields[DT_NARGS];
};

#endif

/* ---- BPF side only from here: maps every entry program shares. ----
 * Each object declares them; the runtime loads the core object (core.bpf.c)
 * first and hands its map fds to the other objects (reuse_fd), so there is
 * one instance of each map. */
#ifdef __TARGET_ARCH_x86
#define DT_ARCH_X86 1
#endif

/* The system call whose return the sys_exit raw tracepoint reports (its
 * args[0] is the thread's registers). */
static __always_inline long dt_sys_exit_nr(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
#ifdef DT_ARCH_X86
	return BPF_CORE_READ(regs, orig_ax);
#else
	return BPF_CORE_READ(regs, syscallno);
#endif
}

/* The per-syscall events' records (syscalls/sys_{enter,exit}_<name>/format):
 * the common header, `int __syscall_nr`, then the arguments or the return
 * value. An event has only its system call's arguments, and the kernel
 * refuses to attach a program that reads past them. */
struct dt_syscall_enter_rec {
	__u64 common;
	int nr;
	unsigned long args[6];
};

struct dt_syscall_exit_rec {
	__u64 common;
	int nr;
	long ret;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_probe_ctx);
} dt_ctx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_state);
} dt_state SEC(".maps");

/* Sorted, disjoint; the runtime sizes and fills it when `caller` is used. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_code_range);
} dt_caller_code SEC(".maps");

/* Each CPU's struct dt_cpu_data, at its CPU number (the runtime sizes the
 * map to the possible CPUs): a probe may name another CPU than its own
 * (sched's enqueue and dequeue). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_cpu_data);
} dt_cpuinfo SEC(".maps");

/* CPU cpu's cpuinfo_t (its entry of dt_cpuinfo), as a D pointer: 0 for
 * a CPU the map does not describe. */
static __always_inline __u64 dt_cpuinfo_of(__u32 cpu)
{
	struct dt_cpu_data *data = bpf_map_lookup_elem(&dt_cpuinfo, &cpu);
	return data ? (__u64)&data->info : 0;
}

/* Layout anchors: unused globals that make the skeleton generator emit Rust
 * types for the shared structs (see src/defs/layout.rs). */
struct dt_probe_ctx dt_layout_ctx;
struct dt_state dt_layout_state;
struct dt_rec_hdr dt_layout_hdr;
struct dt_fault_rec dt_layout_fault;
struct dt_vtime dt_layout_vtime;
struct dt_spec dt_layout_spec;
struct dt_spec_stats dt_layout_spec_stats;
struct dt_slot_probe dt_layout_slot_probe;
struct dt_code_range dt_layout_code_range;
struct dt_cpu_data dt_layout_cpu_data;
struct dt_psargs dt_layout_psargs;

/* Set before load when the script uses ppid (costs two kernel reads). */
const volatile bool dt_need_ppid = false;
/* Set before load when the script uses caller or ucaller (a stack walk). */
const volatile bool dt_need_caller = false;
const volatile bool dt_need_ucaller = false;
const volatile bool dt_need_stack_skip = false;
/* Set before load when the script uses ustack() (dt_probe_ctx.ustack). */
const volatile bool dt_need_ustack = false;

/* Whether `addr` is code a caller can be in: the last range starting at or
 * below it (a branch-light binary search the verifier walks quickly). */
static __always_inline bool dt_is_caller_code(__u64 addr, __u32 nranges)
{
	__u32 base = 0, len = nranges;
	if (len == 0)
		return false;
	for (int i = 0; i < DT_CALLER_SEARCH && len > 1; i++) {
		__u32 half = len / 2, mid = base + half;
		struct dt_code_range *r = bpf_map_lookup_elem(&dt_caller_code, &mid);
		if (!r)
			return false;
		if (r->start <= addr)
			base = mid;
		len -= half;
	}
	struct dt_code_range *r = bpf_map_lookup_elem(&dt_caller_code, &base);
	return r && r->start <= addr && addr < r->end;
}

/* The `skip`th frame (from 0) of the kernel stack at `ctx` that is in
 * traced code, past the BPF program and the code that ran it: its index in
 * the stack, and its address in *addr; -1 when there is none. */
static __always_inline int dt_traced_frame(void *ctx, __u32 skip, __u64 *addr)
{
	__u64 frames[DT_CALLER_FRAMES] = {};
	__u32 zero = 0;
	struct dt_state *st = bpf_map_lookup_elem(&dt_state, &zero);
	if (!st)
		return -1;
	__u32 nranges = st->caller_ranges;
	long n = bpf_get_stack(ctx, frames, sizeof(frames), 0);
	if (n <= 0)
		return -1;
	for (int i = 0; i < DT_CALLER_FRAMES; i++) {
		if (i >= n / 8)
			break;
		if (!dt_is_caller_code(frames[i], nranges))
			continue;
		if (skip == 0) {
			*addr = frames[i];
			return i;
		}
		skip--;
	}
	return -1;
}

/* `caller`: the first frame in traced code, `skip` such frames further in
 * (1 where the first is the probed function's own). */
static __always_inline __u64 dt_kernel_caller(void *ctx, __u32 skip)
{
	__u64 addr = 0;
	dt_traced_frame(ctx, skip, &addr);
	return addr;
}

/* The frames at the top of the kernel stack that are not traced code (none
 * where the stack is taken from the probed code's registers: kprobes,
 * perf events): stack() and stackdepth skip them. */
static __always_inline __u32 dt_kernel_machinery_frames(void *ctx)
{
	__u64 addr;
	int first = dt_traced_frame(ctx, 0, &addr);
	return first < 0 ? 0 : first;
}

/* `ucaller`: the user frame the current thread was called from (the
 * second of its user stack). */
static __always_inline __u64 dt_user_caller(void *ctx)
{
	__u64 frames[2] = {};
	if (bpf_get_stack(ctx, frames, sizeof(frames), BPF_F_USER_STACK) < 16)
		return 0;
	return frames[1];
}

/* Starts a probe firing: NULL when probes must not fire now. `ctx` is the
 * entry program's; `caller_skip` counts the traced-code frames `caller`
 * looks past (the probed function's own, at its entry). */
static __always_inline struct dt_probe_ctx *dt_begin_probe_at(void *ctx, __u32 caller_skip)
{
	__u32 zero = 0;
	struct dt_state *st = bpf_map_lookup_elem(&dt_state, &zero);
	if (!st || st->draining)
		return NULL;
	if (st->only_cpu && bpf_get_smp_processor_id() + 1 != st->only_cpu)
		return NULL;
	struct dt_probe_ctx *pc = bpf_map_lookup_elem(&dt_ctx, &zero);
	if (!pc)
		return NULL;
	pc->errno_val = 0;
	pc->timestamp = 0;
	if (dt_need_ustack)
		pc->ustack = 0;
	pc->task = 0;
	if (dt_need_ppid) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		pc->ppid = BPF_CORE_READ(task, real_parent, tgid);
	}
	if (dt_need_caller)
		pc->caller = dt_kernel_caller(ctx, caller_skip);
	if (dt_need_ucaller)
		pc->ucaller = dt_user_caller(ctx);
	if (dt_need_stack_skip)
		pc->stack_skip = dt_kernel_machinery_frames(ctx);
	return pc;
}

/* Whether the current page fault is one the kernel will not service: taken
 * with page faults disabled, as a BPF program's reads of user memory (a
 * clause's copyin()) are. Fault probes skip these: they would fire nested
 * inside the clause, over its per-CPU context, and Solaris' as_fault sees
 * only faults it handles. */
static __always_inline bool dt_fault_not_serviced(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	/* The read itself (bpf_probe_read_kernel) runs with page faults
	 * disabled once: more than that is the faulting code's. */
	return BPF_CORE_READ(task, pagefault_disabled) > 1;
}

static __always_inline struct dt_probe_ctx *dt_begin_probe(void *ctx)
{
	return dt_begin_probe_at(ctx, 0);
}

/* Makes the probe being fired fire for `task` (not the current thread):
 * pid, tid, execname, uid, gid, ppid, curthread and self-> are its. */
static __always_inline void dt_probe_for_task(struct dt_probe_ctx *pc, struct task_struct *task)
{
	pc->task = (__u64)task;
	pc->pid_tgid = ((__u64)BPF_CORE_READ(task, tgid) << 32) | (__u32)BPF_CORE_READ(task, pid);
	const struct cred *cred = BPF_CORE_READ(task, cred);
	pc->uid_gid = ((__u64)BPF_CORE_READ(cred, gid.val) << 32) | BPF_CORE_READ(cred, uid.val);
	BPF_CORE_READ_STR_INTO(&pc->comm, task, comm);
	if (dt_need_ppid)
		pc->ppid = BPF_CORE_READ(task, real_parent, tgid);
}

/* The slot of the probe this copy of an entry program fires (see
 * DT_SLOT_MARKER): one move-immediate instruction the runtime rewrites. */
static __always_inline __u32 dt_copy_slot(void)
{
	__u64 slot;
	asm volatile("%0 = 0x7e5107ed" : "=r"(slot));
	return slot;
}

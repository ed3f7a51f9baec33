// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lockstat provider's contention probes, on the kernel's lock
 * contention tracepoints (Linux 5.19): contention_begin(lock, flags) when
 * a thread finds a lock held, contention_end(lock, ret) when it has the
 * lock (ret 0) or gave up (ret < 0). The flags say which kind of lock:
 *
 *   LCB_F_MUTEX|LCB_F_SPIN  a mutex's optimistic spin      adaptive-spin
 *   LCB_F_MUTEX             the same mutex, now sleeping    adaptive-block
 *   LCB_F_RT                an rt_mutex (PREEMPT_RT mutex)  adaptive-block
 *   LCB_F_READ|LCB_F_WRITE  an rwsem (or percpu rwsem)      rw-block
 *     with LCB_F_SPIN       a spinning rwlock_t             rw-spin
 *   LCB_F_SPIN              a spinlock                      spin-spin
 *   0                       a semaphore                     (none)
 *
 * dt_ls_begin keeps, per thread and lock, when the wait began and, for a
 * mutex that stops spinning to sleep, when the sleep began; dt_ls_end
 * fires the one probe that describes the wait (Solaris: at most one of
 * adaptive-block and adaptive-spin per acquisition) with the wait in
 * nanoseconds as arg1, or adaptive-acquire-error when a killable or
 * interruptible mutex wait fails.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/lockstat.rs order. */
#define DT_LS_ADAPTIVE_ACQUIRE 0
#define DT_LS_ADAPTIVE_BLOCK 1
#define DT_LS_ADAPTIVE_SPIN 2
#define DT_LS_ADAPTIVE_RELEASE 3
#define DT_LS_ADAPTIVE_ACQUIRE_ERROR 4
#define DT_LS_RW_ACQUIRE 5
#define DT_LS_RW_BLOCK 6
#define DT_LS_RW_SPIN 7
#define DT_LS_RW_RELEASE 8
#define DT_LS_SPIN_ACQUIRE 9
#define DT_LS_SPIN_SPIN 10
#define DT_LS_SPIN_RELEASE 11
#define DT_LS_COUNT 12

/* include/trace/events/lock.h (defines, not in BTF). */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)
#define LCB_F_WRITE (1U << 2)
#define LCB_F_RT (1U << 3)
#define LCB_F_PERCPU (1U << 4)
#define LCB_F_MUTEX (1U << 5)

/* Solaris' krw_t, as d-library/lockstat.d names them. */
#define DT_RW_WRITER 0
#define DT_RW_READER 1

/* kernel/locking/rwsem.c: bit 0 of count is the writer, readers from bit 8. */
#define DT_RWSEM_WRITER_LOCKED 1UL
#define DT_RWSEM_READER_SHIFT 8

/* Probe ID of slot s is dt_ls_id_base + s. */
const volatile __u32 dt_ls_id_base = 0;
/* Bit s set: slot s is enabled (dt_ls_end builds no context for others). */
const volatile __u32 dt_ls_enabled = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_LS_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_ls_progs SEC(".maps");

/* A wait is keyed by thread and lock: an interrupt handler that contends
 * a spinlock while its thread spins on a mutex waits for another lock. */
struct dt_ls_key {
	__u64 lock;
	__u32 tid;
	__u32 pad;
};

struct dt_ls_wait {
	__u64 begin;
	/* A mutex's sleep after its spin; 0 while it spins. */
	__u64 block_begin;
	/* An rwsem's state when the wait began: held by a writer, readers. */
	__u64 writer_held;
	__u64 readers;
	__u32 flags;
	__u32 pad;
};

/* LRU: a wait whose end the kernel never reports cannot fill the table. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dt_ls_key);
	__type(value, struct dt_ls_wait);
} dt_ls_waits SEC(".maps");

SEC("raw_tp/contention_begin")
int dt_ls_begin(struct bpf_raw_tracepoint_args *ctx)
{
	struct dt_ls_key key = { .lock = ctx->args[0], .tid = (__u32)bpf_get_current_pid_tgid() };
	__u32 flags = (__u32)ctx->args[1];
	__u64 now = bpf_ktime_get_ns();
	struct dt_ls_wait *w = bpf_map_lookup_elem(&dt_ls_waits, &key);
	/* A mutex that spun and now goes to sleep: the same wait goes on. */
	if (w && (w->flags & LCB_F_MUTEX) && (w->flags & LCB_F_SPIN) && !(flags & LCB_F_SPIN)) {
		if (!w->block_begin)
			w->block_begin = now;
		return 0;
	}
	struct dt_ls_wait fresh = { .begin = now, .flags = flags };
	if ((flags & (LCB_F_READ | LCB_F_WRITE)) && !(flags & (LCB_F_SPIN | LCB_F_PERCPU))) {
		long count = BPF_CORE_READ((struct rw_semaphore *)ctx->args[0], count.counter);
		fresh.writer_held = count & DT_RWSEM_WRITER_LOCKED;
		fresh.readers = (unsigned long)count >> DT_RWSEM_READER_SHIFT;
	}
	bpf_map_update_elem(&dt_ls_waits, &key, &fresh, BPF_ANY);
	return 0;
}

/* The probe a finished wait fires, and its arg1 (the wait in ns). */
static __always_inline int dt_ls_classify(struct dt_ls_wait *w, int ret, __u64 now, __u64 *wait)
{
	__u32 f = w->flags;
	*wait = now - w->begin;
	if (f & (LCB_F_MUTEX | LCB_F_RT)) {
		if (ret)
			return DT_LS_ADAPTIVE_ACQUIRE_ERROR;
		if (w->block_begin) {
			*wait = now - w->block_begin;
			return DT_LS_ADAPTIVE_BLOCK;
		}
		return (f & LCB_F_SPIN) ? DT_LS_ADAPTIVE_SPIN : DT_LS_ADAPTIVE_BLOCK;
	}
	if (ret)
		return -1;
	if (f & (LCB_F_READ | LCB_F_WRITE))
		return (f & LCB_F_SPIN) ? DT_LS_RW_SPIN : DT_LS_RW_BLOCK;
	if (f & LCB_F_SPIN)
		return DT_LS_SPIN_SPIN;
	return -1;
}

SEC("raw_tp/contention_end")
int dt_ls_end(struct bpf_raw_tracepoint_args *ctx)
{
	struct dt_ls_key key = { .lock = ctx->args[0], .tid = (__u32)bpf_get_current_pid_tgid() };
	struct dt_ls_wait *found = bpf_map_lookup_elem(&dt_ls_waits, &key);
	if (!found)
		return 0;
	struct dt_ls_wait w = *found;
	bpf_map_delete_elem(&dt_ls_waits, &key);
	int ret = (int)ctx->args[1];
	__u64 wait;
	int slot = dt_ls_classify(&w, ret, bpf_ktime_get_ns(), &wait);
	if (slot < 0 || !(dt_ls_enabled & (1U << slot)))
		return 0;
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = dt_ls_id_base + slot;
	pc->args[0] = key.lock;
	for (int i = 1; i < DT_NARGS; i++)
		pc->args[i] = 0;
	if (slot == DT_LS_ADAPTIVE_ACQUIRE_ERROR) {
		pc->args[1] = (__s64)ret;
	} else {
		pc->args[1] = wait;
		if (slot == DT_LS_RW_BLOCK || slot == DT_LS_RW_SPIN)
			pc->args[2] = (w.flags & LCB_F_WRITE) ? DT_RW_WRITER : DT_RW_READER;
		if (slot == DT_LS_RW_BLOCK) {
			pc->args[3] = w.writer_held;
			pc->args[4] = w.readers;
		}
	}
	bpf_tail_call(ctx, &dt_ls_progs, slot);
	return 0;
}

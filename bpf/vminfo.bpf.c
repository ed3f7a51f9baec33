// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The vminfo provider: one probe per statistic of Solaris' `vm` kstat,
 * fired just before the statistic is incremented, each on the Linux event
 * that means the same (src/provider/vminfo.rs lists them); the runtime
 * loads and attaches only the probes a script enables. The arguments are
 * kstat.h's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "dtrace.h"
#include "kstat.h"

char LICENSE[] SEC("license") = "GPL";

enum dt_vm_stat {
#define DT_VM(name) DT_VM_##name,
#include "vminfo_stats.h"
#undef DT_VM
	DT_VM_COUNT
};

/* Probe ID of statistic s is dt_vm_id_base + s. */
const volatile __u32 dt_vm_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_kstat_totals);
} dt_vm_totals SEC(".maps");

/* Clause programs by statistic: of raw tracepoints, and of perf events
 * for maj_fault (a program array holds one program type). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_VM_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_vm_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_VM_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_vm_perf_progs SEC(".maps");

static __always_inline int dt_vm_fire(void *ctx, __u32 stat, __u64 inc)
{
	if (stat >= DT_VM_COUNT || !dt_kstat_begin(ctx, &dt_vm_totals, dt_vm_id_base, stat, inc))
		return 0;
	bpf_tail_call(ctx, &dt_vm_progs, stat);
	return 0;
}

/* ---- page faults (x86: page_fault_user, page_fault_kernel) ----------------
 * (address, regs, error_code); the error code's bits are the hardware's:
 * P (a present page: a protection fault) and W (a write). */
#define DT_PF_PROT 0x1
#define DT_PF_WRITE 0x2
/* The lowest kernel address on x86-64 (the upper half). */
#define DT_KERNEL_BASE 0xffff800000000000UL

static __always_inline int dt_vm_fault(struct bpf_raw_tracepoint_args *ctx, __u32 stat)
{
	__u64 addr = ctx->args[0];
	__u64 error = ctx->args[2];
	bool kernel_space = addr >= DT_KERNEL_BASE;
	bool fired;
	if (dt_fault_not_serviced())
		return 0;
	switch (stat) {
	case DT_VM_kernel_asflt:
		fired = kernel_space;
		break;
	case DT_VM_as_fault:
		fired = !kernel_space && !(error & DT_PF_PROT);
		break;
	case DT_VM_cow_fault:
		fired = !kernel_space && (error & DT_PF_PROT) && (error & DT_PF_WRITE);
		break;
	default: /* prot_fault */
		fired = !kernel_space && (error & DT_PF_PROT) && !(error & DT_PF_WRITE);
	}
	return fired ? dt_vm_fire(ctx, stat, 1) : 0;
}

#define DT_VM_FAULT(stat)                                                 \
	SEC("raw_tp/page_fault_user")                                     \
	int dt_vm_##stat##_user(struct bpf_raw_tracepoint_args *ctx)      \
	{                                                                 \
		return dt_vm_fault(ctx, DT_VM_##stat);                    \
	}                                                                 \
	SEC("raw_tp/page_fault_kernel")                                   \
	int dt_vm_##stat##_kernel(struct bpf_raw_tracepoint_args *ctx)    \
	{                                                                 \
		return dt_vm_fault(ctx, DT_VM_##stat);                    \
	}

DT_VM_FAULT(as_fault)
DT_VM_FAULT(cow_fault)
DT_VM_FAULT(prot_fault)
DT_VM_FAULT(kernel_asflt)

/* maj_fault: the kernel's major-fault software event, counted where a
 * fault needed I/O (mm_account_fault), in the faulting thread. */
SEC("perf_event")
int dt_vm_maj_fault(struct bpf_perf_event_data *ctx)
{
	if (!dt_kstat_begin(ctx, &dt_vm_totals, dt_vm_id_base, DT_VM_maj_fault, 1))
		return 0;
	bpf_tail_call(ctx, &dt_vm_perf_progs, DT_VM_maj_fault);
	return 0;
}

/* ---- paging I/O: bios submitted to the block layer (block_bio_queue) ------
 * A program per prototype (DT_KSTAT_BLOCK). Swap I/O is what the kernel
 * marks REQ_SWAP (swap writes). */
#define DT_PAGE_SIZE 4096

static __always_inline int dt_vm_bio(void *ctx, struct bio *bio, __u32 stat)
{
	__u32 opf = BPF_CORE_READ(bio, bi_opf);
	__u32 op = opf & DT_REQ_OP_MASK;
	bool swap = opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SWAP));
	__u64 pages = (BPF_CORE_READ(bio, bi_iter.bi_size) + DT_PAGE_SIZE - 1) / DT_PAGE_SIZE;
	bool read = op == DT_REQ_OP_READ, write = op == DT_REQ_OP_WRITE;
	if (!pages)
		return 0;
	switch (stat) {
	case DT_VM_pgin:
		return read ? dt_vm_fire(ctx, stat, 1) : 0;
	case DT_VM_pgout:
		return write ? dt_vm_fire(ctx, stat, 1) : 0;
	case DT_VM_pgpgin:
		return read ? dt_vm_fire(ctx, stat, pages) : 0;
	case DT_VM_pgpgout:
		return write ? dt_vm_fire(ctx, stat, pages) : 0;
	case DT_VM_fspgin:
		return read && !swap ? dt_vm_fire(ctx, stat, pages) : 0;
	case DT_VM_fspgout:
		return write && !swap ? dt_vm_fire(ctx, stat, pages) : 0;
	case DT_VM_anonpgout:
	case DT_VM_pgswapout:
		return write && swap ? dt_vm_fire(ctx, stat, pages) : 0;
	}
	return 0;
}

#define DT_VM_BIO(stat) DT_KSTAT_BLOCK(dt_vm_##stat, block_bio_queue, dt_vm_bio, bio, DT_VM_##stat)

DT_VM_BIO(pgin)
DT_VM_BIO(pgout)
DT_VM_BIO(pgpgin)
DT_VM_BIO(pgpgout)
DT_VM_BIO(fspgin)
DT_VM_BIO(fspgout)
DT_VM_BIO(anonpgout)
DT_VM_BIO(pgswapout)

/* ---- the page scanner (vmscan) --------------------------------------------
 * mm_vmscan_lru_isolate(zone, order, nr_requested, nr_scanned, ...): pages
 * the scanner examined; mm_vmscan_lru_shrink_inactive(nid, nr_scanned,
 * nr_reclaimed, stat, priority, file): pages it freed, of files or
 * anonymous memory. kswapd and direct reclaim both scan. */
SEC("raw_tp/mm_vmscan_lru_isolate")
int dt_vm_scan(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 scanned = ctx->args[3];
	return scanned ? dt_vm_fire(ctx, DT_VM_scan, scanned) : 0;
}

static __always_inline int dt_vm_freed(struct bpf_raw_tracepoint_args *ctx, __u32 stat)
{
	__u64 reclaimed = ctx->args[2];
	int file = ctx->args[5];
	if (!reclaimed || (stat == DT_VM_fsfree && !file) || (stat == DT_VM_anonfree && file))
		return 0;
	return dt_vm_fire(ctx, stat, reclaimed);
}

SEC("raw_tp/mm_vmscan_lru_shrink_inactive")
int dt_vm_dfree(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_vm_freed(ctx, DT_VM_dfree);
}

SEC("raw_tp/mm_vmscan_lru_shrink_inactive")
int dt_vm_fsfree(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_vm_freed(ctx, DT_VM_fsfree);
}

SEC("raw_tp/mm_vmscan_lru_shrink_inactive")
int dt_vm_anonfree(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_vm_freed(ctx, DT_VM_anonfree);
}

/* pgrrun: the page daemon is asked to run (kswapd woken); rev: it starts a
 * round of reclaim (kswapd wakes up). */
SEC("raw_tp/mm_vmscan_wakeup_kswapd")
int dt_vm_pgrrun(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_vm_fire(ctx, DT_VM_pgrrun, 1);
}

SEC("raw_tp/mm_vmscan_kswapd_wake")
int dt_vm_rev(struct bpf_raw_tracepoint_args *ctx)
{
	return dt_vm_fire(ctx, DT_VM_rev, 1);
}

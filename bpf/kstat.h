/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the statistics providers (sysinfo, vminfo) share: each probe is a
 * Solaris kstat statistic, fired just before it is incremented. arg0 is
 * the increment, arg1 points at the statistic's 64-bit total as it was
 * before this increment (per CPU, counted while dtrace runs), arg2 the
 * CPU's cpu_t (struct dt_cpu in dtrace.h), as Solaris passes them.
 */
#ifndef DT_KSTAT_H
#define DT_KSTAT_H

#define DT_KSTAT_MAX 64 /* statistics per provider */

struct dt_kstat_totals {
	__u64 total[DT_KSTAT_MAX];
	/* The total before the increment being fired, which arg1 points to. */
	__u64 before[DT_KSTAT_MAX];
};

/* Fills the probe context for statistic `stat` (probe ID id_base + stat)
 * from `totals` (a one-entry per-CPU array of dt_kstat_totals); NULL when
 * the probe is not to fire. The caller tail-calls the statistic's clauses. */
static __always_inline struct dt_probe_ctx *dt_kstat_begin(void *ctx, void *totals, __u32 id_base, __u32 stat,
							    __u64 inc)
{
	__u32 zero = 0;
	if (stat >= DT_KSTAT_MAX)
		return NULL;
	struct dt_kstat_totals *t = bpf_map_lookup_elem(totals, &zero);
	if (!t)
		return NULL;
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return NULL;
	t->before[stat] = t->total[stat];
	t->total[stat] += inc;
	pc->probe_id = id_base + stat;
	pc->args[0] = inc;
	pc->args[1] = (__u64)&t->before[stat];
	__u32 cpu = bpf_get_smp_processor_id();
	pc->args[2] = (__u64)bpf_map_lookup_elem(&dt_cpuinfo, &cpu); /* its first member is the cpu_t */
	for (int i = 3; i < DT_NARGS; i++)
		pc->args[i] = 0;
	return pc;
}

/* The block layer's request operations (REQ_OP_*: the low byte of a
 * bio's bi_opf or a request's cmd_flags). */
#define DT_REQ_OP_MASK 0xff
#define DT_REQ_OP_READ 0
#define DT_REQ_OP_WRITE 1

/* Two entry programs for statistic `stat` on block tracepoint `tp`, which
 * kernels before 5.11 pass the queue first: `program` reads the request or
 * bio from args[0], `program`_q from args[1], and the kernel refuses to
 * attach the one that does not fit, which is how the runtime tells the two
 * prototypes apart. `fn(ctx, object, stat)` fires. */
#define DT_KSTAT_BLOCK(program, tp, fn, type, stat)                          \
	SEC("raw_tp/" #tp)                                                   \
	int program(struct bpf_raw_tracepoint_args *ctx)                     \
	{                                                                    \
		return fn(ctx, (struct type *)ctx->args[0], stat);           \
	}                                                                    \
	SEC("raw_tp/" #tp)                                                   \
	int program##_q(struct bpf_raw_tracepoint_args *ctx)                 \
	{                                                                    \
		return fn(ctx, (struct type *)ctx->args[1], stat);           \
	}

#endif

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rawtp provider: the kernel's raw tracepoints (rawtp:<group>::<name>),
 * whose arguments are the tracepoint's prototype's (btf_trace_<name>). One
 * program per argument count, dt_rawtp_<n>, reads args 0..n-1: the kernel
 * refuses a raw tracepoint program that reads past the prototype. It is
 * loaded once per probe with the probe's slot patched in (dt_copy_slot),
 * as raw tracepoint programs have no attach cookie before Linux 6.10.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Sized at load time to the number of enabled probes. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dt_rawtp_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_slot_probe);
} dt_rawtp_probes SEC(".maps");

static __always_inline int dt_rawtp_fire(struct bpf_raw_tracepoint_args *ctx, int nargs)
{
	__u32 slot = dt_copy_slot();
	struct dt_slot_probe *probe = bpf_map_lookup_elem(&dt_rawtp_probes, &slot);
	if (!probe)
		return 0;
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = probe->probe_id;
	for (int i = 0; i < DT_NARGS; i++)
		pc->args[i] = i < nargs ? ctx->args[i] : 0;
	bpf_tail_call(ctx, &dt_rawtp_progs, slot);
	return 0;
}

#define DT_RAWTP(n)                                              \
	SEC("raw_tp")                                            \
	int dt_rawtp_##n(struct bpf_raw_tracepoint_args *ctx)    \
	{                                                        \
		return dt_rawtp_fire(ctx, n);                    \
	}

DT_RAWTP(0)
DT_RAWTP(1)
DT_RAWTP(2)
DT_RAWTP(3)
DT_RAWTP(4)
DT_RAWTP(5)
DT_RAWTP(6)
DT_RAWTP(7)
DT_RAWTP(8)
DT_RAWTP(9)
DT_RAWTP(10)

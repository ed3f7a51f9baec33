// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The profile provider: profile-N and tick-N are software cpu-clock perf
 * events (profile-N on every CPU, tick-N on one). Each probe's event has a
 * sampling period of its own (the runtime makes equal rates differ by a
 * nanosecond), and dt_prof_probes maps the period to the probe ID (high 32
 * bits) and the probe's slot in dt_prof_progs (low bits). A period, unlike
 * an attach cookie (Linux 5.15), is in every kernel's perf context.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_MAX_PROFILE);
	__type(key, __u32);
	__type(value, __u32);
} dt_prof_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DT_MAX_PROFILE);
	__type(key, __u64);
	__type(value, __u64);
} dt_prof_probes SEC(".maps");

SEC("perf_event")
int dt_profile(struct bpf_perf_event_data *ctx)
{
	__u64 period = ctx->sample_period;
	__u64 *found = bpf_map_lookup_elem(&dt_prof_probes, &period);
	if (!found)
		return 0;
	__u64 cookie = *found;
	/* A mask, not a compare: the verifier sees the bound on any clang. */
	__u32 slot = cookie & (DT_MAX_PROFILE - 1);
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	/* arg0: kernel PC, arg1: user PC; the other is 0, as in DTrace.
	 * Kernel addresses are the upper half on x86_64 and arm64. */
	__u64 pc_addr = PT_REGS_IP(&ctx->regs);
	int in_kernel = (__s64)pc_addr < 0;
	pc->probe_id = cookie >> 32;
	pc->args[0] = in_kernel ? pc_addr : 0;
	pc->args[1] = in_kernel ? 0 : pc_addr;
	for (int i = 2; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_prof_progs, slot);
	return 0;
}

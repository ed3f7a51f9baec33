// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sdt provider: the kernel's tracepoints (sdt:<group>::<name>), as
 * dtrace-utils names them. One program serves every probe, loaded once per
 * probe with the probe's slot patched in (dt_copy_slot): a tracepoint
 * program learns nothing else of which tracepoint fired on kernels before
 * 5.15. Its slot's dt_slot_probe says the probe ID and where each field of
 * the tracepoint's record is; argN is the Nth field after the common ones,
 * as the tracepoint's format file lists them (src/provider/sdt.rs).
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
} dt_sdt_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_slot_probe);
} dt_sdt_probes SEC(".maps");

/* Set before load when the script reads arguments. */
const volatile bool dt_need_args = false;

static __always_inline __u64 dt_sdt_field(void *record, const struct dt_tp_field *f)
{
	void *at = record + f->offset;
	if (f->kind == DT_FIELD_ADDRESS)
		return (__u64)at;
	if (f->kind == DT_FIELD_DATA_LOC) {
		__u32 loc = 0;
		bpf_probe_read_kernel(&loc, sizeof(loc), at);
		return (__u64)(record + (loc & 0xffff));
	}
	__u64 v = 0;
	switch (f->size) {
	case 1: {
		__u8 x = 0;
		bpf_probe_read_kernel(&x, 1, at);
		v = f->kind == DT_FIELD_SIGNED ? (__u64)(__s64)(__s8)x : x;
		break;
	}
	case 2: {
		__u16 x = 0;
		bpf_probe_read_kernel(&x, 2, at);
		v = f->kind == DT_FIELD_SIGNED ? (__u64)(__s64)(__s16)x : x;
		break;
	}
	case 4: {
		__u32 x = 0;
		bpf_probe_read_kernel(&x, 4, at);
		v = f->kind == DT_FIELD_SIGNED ? (__u64)(__s64)(__s32)x : x;
		break;
	}
	default:
		bpf_probe_read_kernel(&v, 8, at);
	}
	return v;
}

SEC("tracepoint")
int dt_sdt_entry(void *ctx)
{
	__u32 slot = dt_copy_slot();
	struct dt_slot_probe *probe = bpf_map_lookup_elem(&dt_sdt_probes, &slot);
	if (!probe)
		return 0;
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = probe->probe_id;
	for (int i = 0; i < DT_NARGS; i++) {
		__u64 v = 0;
		if (dt_need_args && i < probe->nfields)
			v = dt_sdt_field(ctx, &probe->fields[i]);
		pc->args[i] = v;
	}
	bpf_tail_call(ctx, &dt_sdt_progs, slot);
	return 0;
}

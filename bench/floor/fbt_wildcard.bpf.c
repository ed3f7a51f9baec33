// SPDX-License-Identifier: GPL-2.0
/* Floor of `fbt::tcp_*:entry,fbt::security_*:entry { @ = count(); }`: a
 * multi-kprobe link per pattern (libbpf resolves it), one per-CPU counter
 * (bench/fbt.sh, in a guest). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} buckets SEC(".maps");

static __always_inline int count(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&buckets, &zero);
	if (v)
		*v += 1;
	return 0;
}

SEC("kprobe.multi/tcp_*")
int count_tcp(void *ctx)
{
	return count();
}

SEC("kprobe.multi/security_*")
int count_security(void *ctx)
{
	return count();
}

// SPDX-License-Identifier: GPL-2.0
/* `@[execname] = count()` as a hand-written program does it: the task's comm
 * as a 16-byte key, one per-CPU hash update. Shared by the floors that count
 * by comm, whatever their probe (floor.c prints the "counts" map). */
#ifndef FLOOR_COUNT_COMM_H
#define FLOOR_COUNT_COMM_H
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, char[16]);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void count_comm_now(void)
{
	/* Cleared: kernels before 2025 (6.1) leave what follows the NUL. */
	char comm[16] = {};
	bpf_get_current_comm(comm, sizeof(comm));
	__u64 *v = bpf_map_lookup_elem(&counts, comm);
	if (v) {
		*v += 1;
		return;
	}
	__u64 one = 1;
	bpf_map_update_elem(&counts, comm, &one, BPF_NOEXIST);
}
#endif

// SPDX-License-Identifier: GPL-2.0
/* The floor for `io:::start { @[execname] = sum(args[0]->b_bcount); }`: the
 * block_rq_issue raw tracepoint (Linux 5.11 or later: its one argument is
 * the request), the request's size, the task's comm as a 16-byte key, one
 * per-CPU hash update. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, char[16]);
	__type(value, __u64);
} counts SEC(".maps");

SEC("raw_tp/block_rq_issue")
int io_bytes(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	__u64 bytes = BPF_CORE_READ(rq, __data_len);
	char comm[16];
	bpf_get_current_comm(comm, sizeof(comm));
	__u64 *v = bpf_map_lookup_elem(&counts, comm);
	if (v) {
		*v += bytes;
		return 0;
	}
	bpf_map_update_elem(&counts, comm, &bytes, BPF_NOEXIST);
	return 0;
}

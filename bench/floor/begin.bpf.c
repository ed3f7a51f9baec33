// SPDX-License-Identifier: GPL-2.0
/* Start-up floor for `BEGIN { exit(0); }`: one program, run once. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 fired;

SEC("raw_tp")
int begin(void *ctx)
{
	fired = 1;
	return 0;
}

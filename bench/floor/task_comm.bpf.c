// SPDX-License-Identifier: GPL-2.0
/* Start-up floor for a script reading a kernel struct: the current task's
 * comm through CO-RE, in a program run once. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

char comm[16];

SEC("raw_tp")
int begin(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&comm, task, comm);
	return 0;
}

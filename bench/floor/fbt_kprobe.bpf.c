// SPDX-License-Identifier: GPL-2.0
/* Floor of `fbt::vfs_read:entry { @[execname] = count(); }` on a kprobe
 * (bench/fbt.sh, in a guest). */
#include "vmlinux.h"
#include "count_comm.h"

SEC("kprobe/vfs_read")
int count_vfs_read(void *ctx)
{
	count_comm_now();
	return 0;
}

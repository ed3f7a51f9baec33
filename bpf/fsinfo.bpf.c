// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fsinfo provider: file-system operations on open files, as Solaris'
 * fsinfo provider names them (read, write, open, close, getattr, ...),
 * each with the fileinfo_t of the file (io.h's struct dt_fileinfo, which
 * d-library/io.d declares) and, for read and write, the bytes moved.
 *
 * Linux has no tracepoint in its VFS: an operation fires when the system
 * call that asks for it returns (or, for close, when it is entered, while
 * the descriptor still names the file). The runtime fills dt_fsinfo_calls
 * with the system calls of the enabled probes (src/provider/fsinfo.rs):
 * which probe, where the descriptor is (an argument or the return value),
 * where the operation's offset is, and which calls count only with a
 * given flag (fcntl's F_SETFL, a file mmap, fstat's AT_EMPTY_PATH forms).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dtrace.h"
#include "io.h"
#include "fileinfo.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots: the order of src/provider/fsinfo.rs's PROBES. */
#define DT_FSINFO_COUNT 32

/* Probe ID of slot s is dt_fsinfo_id_base + s. */
const volatile __u32 dt_fsinfo_id_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_FSINFO_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_fsinfo_progs SEC(".maps");

/* Where an operation's descriptor, offset and bytes come from
 * (struct dt_fsinfo_call, by system call number). */
#define DT_FS_FD_ARG0 0
#define DT_FS_FD_RET 1
#define DT_FS_OFF_POS 0      /* the file's position now */
#define DT_FS_OFF_POS_BEFORE 1 /* the position before ret bytes moved */
#define DT_FS_OFF_ARG3 2     /* a positional read or write's offset */
#define DT_FS_ONLY_ALWAYS 0
#define DT_FS_ONLY_SETFL 1   /* fcntl(fd, F_SETFL, ...) */
#define DT_FS_ONLY_FILE_MAP 2 /* mmap of a file, not anonymous memory */
#define DT_FS_ONLY_EMPTY_PATH_ARG3 3 /* newfstatat(fd, "", st, AT_EMPTY_PATH) */
#define DT_FS_ONLY_EMPTY_PATH_ARG2 4 /* statx(fd, "", AT_EMPTY_PATH, ...) */

struct dt_fsinfo_call {
	__u8 slot_plus_one; /* 0: not traced */
	__u8 fd_from;
	__u8 offset_from;
	__u8 only;
	__u8 bytes;         /* args[1] is the bytes moved (the return value) */
	__u8 at_entry;      /* fires at sys_enter (close) */
};

#define DT_FS_NR_MAX 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DT_FS_NR_MAX);
	__type(key, __u32);
	__type(value, struct dt_fsinfo_call);
} dt_fsinfo_calls SEC(".maps");

/* The fileinfo_t the probe's args[0] points at, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_fileinfo);
} dt_fsinfo_file SEC(".maps");

#define DT_F_SETFL 4
#define DT_MAP_ANONYMOUS 0x20
#define DT_AT_EMPTY_PATH 0x1000

/* The current process's file of descriptor fd, or NULL. */
static __always_inline struct file *dt_fsinfo_getf(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = NULL;
	if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

static __always_inline int dt_fsinfo_fire(void *ctx, const struct dt_fsinfo_call *call, struct pt_regs *regs,
					  long ret)
{
	long fd = call->fd_from == DT_FS_FD_RET ? ret : (long)PT_REGS_PARM1_CORE_SYSCALL(regs);
	switch (call->only) {
	case DT_FS_ONLY_SETFL:
		if (PT_REGS_PARM2_CORE_SYSCALL(regs) != DT_F_SETFL)
			return 0;
		break;
	case DT_FS_ONLY_FILE_MAP:
		if (PT_REGS_PARM4_CORE_SYSCALL(regs) & DT_MAP_ANONYMOUS)
			return 0;
		fd = (long)(int)PT_REGS_PARM5_CORE_SYSCALL(regs);
		break;
	case DT_FS_ONLY_EMPTY_PATH_ARG3:
		if (!(PT_REGS_PARM4_CORE_SYSCALL(regs) & DT_AT_EMPTY_PATH))
			return 0;
		break;
	case DT_FS_ONLY_EMPTY_PATH_ARG2:
		if (!(PT_REGS_PARM3_CORE_SYSCALL(regs) & DT_AT_EMPTY_PATH))
			return 0;
		break;
	}
	struct file *file = dt_fsinfo_getf((long)(int)fd);
	if (!file)
		return 0;
	__u32 zero = 0;
	struct dt_fileinfo *fi = bpf_map_lookup_elem(&dt_fsinfo_file, &zero);
	if (!fi)
		return 0;
	__s64 pos = BPF_CORE_READ(file, f_pos);
	if (call->offset_from == DT_FS_OFF_ARG3)
		fi->fi_offset = (__s64)PT_REGS_PARM4_CORE_SYSCALL(regs);
	else if (call->offset_from == DT_FS_OFF_POS_BEFORE)
		fi->fi_offset = pos - ret;
	else
		fi->fi_offset = pos;
	bpf_probe_read_kernel_str(fi->fi_fs, DT_IO_FSLEN, BPF_CORE_READ(file, f_inode, i_sb, s_type, name));
	struct dentry *dentry = BPF_CORE_READ(file, f_path.dentry);
	struct vfsmount *vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	struct mount *mnt = (struct mount *)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
	__s64 offset = fi->fi_offset;
	if (dentry && vfsmnt)
		dt_io_path(dentry, mnt, fi, DT_FI_ALL);
	else
		dt_io_no_file(fi, dt_io_unknown);
	fi->fi_offset = offset;
	fi->fi_oflags = BPF_CORE_READ(file, f_flags);

	__u32 slot = call->slot_plus_one - 1;
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	pc->probe_id = dt_fsinfo_id_base + slot;
	pc->args[0] = (__u64)fi;
	pc->args[1] = call->bytes ? ret : 0;
	for (int i = 2; i < DT_NARGS; i++)
		pc->args[i] = 0;
	bpf_tail_call(ctx, &dt_fsinfo_progs, slot & (DT_FSINFO_COUNT - 1));
	return 0;
}

/* sys_exit(regs, ret): the operations that have happened. */
SEC("raw_tp/sys_exit")
int dt_fsinfo_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 nr = dt_sys_exit_nr(ctx);
	struct dt_fsinfo_call *call = bpf_map_lookup_elem(&dt_fsinfo_calls, &nr);
	long ret = (long)ctx->args[1];
	if (!call || !call->slot_plus_one || call->at_entry || ret < 0)
		return 0;
	return dt_fsinfo_fire(ctx, call, (struct pt_regs *)ctx->args[0], ret);
}

/* sys_enter(regs, nr): close, while its descriptor still names the file. */
SEC("raw_tp/sys_enter")
int dt_fsinfo_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 nr = ctx->args[1];
	struct dt_fsinfo_call *call = bpf_map_lookup_elem(&dt_fsinfo_calls, &nr);
	if (!call || !call->slot_plus_one || !call->at_entry)
		return 0;
	return dt_fsinfo_fire(ctx, call, (struct pt_regs *)ctx->args[0], 0);
}

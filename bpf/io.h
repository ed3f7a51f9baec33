/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The io provider's stable arguments, as the entry programs in io.bpf.c
 * fill them: args[0] points at a struct dt_bufinfo, args[1] at a struct
 * dt_devinfo, args[2] at a struct dt_fileinfo. The D library declares the
 * same layouts as bufinfo_t, devinfo_t and fileinfo_t (d-library/io.d);
 * a unit test (src/provider/io.rs) checks that every member has the same
 * offset and type size on both sides.
 */
#ifndef DTRACE_IO_H
#define DTRACE_IO_H

#define DT_IO_NAMELEN 32    /* device names: loop0, nvme0n1p2, /dev/vda */
#define DT_IO_PATHLEN 256   /* paths and file names */
#define DT_IO_FSLEN 16      /* file system type names: ext4 */

/* b_flags, with Solaris' values (sys/buf.h). */
#define DT_B_DONE 0x0002
#define DT_B_ERROR 0x0004
#define DT_B_PAGEIO 0x0010
#define DT_B_PHYS 0x0020
#define DT_B_READ 0x0040
#define DT_B_WRITE 0x0100
#define DT_B_ASYNC 0x0400

struct dt_bufinfo {
	__s32 b_flags;    /* B_* */
	__u64 b_bcount;   /* bytes in the request */
	__u64 b_addr;     /* first page of the buffer (B_PAGEIO), else 0 */
	__u64 b_blkno;    /* 512-byte sector on the disk */
	__u64 b_lblkno;   /* 512-byte sector in the partition */
	__u64 b_resid;    /* bytes not transferred (done) */
	__u64 b_bufsize;  /* bytes in the request */
	__u64 b_iodone;   /* the first bio's completion function */
	__u64 b_edev;     /* the kernel's dev_t of the partition or disk */
	__s32 b_error;    /* errno on failure (done), with B_ERROR */
};

/* The fileinfo_t members a script reads (dt_io_path's `want`): each string
 * costs a copy, the walk is needed for any of the path's. */
#define DT_FI_PATHNAME 0x01
#define DT_FI_NAME 0x02
#define DT_FI_DIRNAME 0x04
#define DT_FI_MOUNT 0x08
#define DT_FI_FS 0x10
#define DT_FI_ALL 0x1f

struct dt_devinfo {
	__s32 dev_major;
	__s32 dev_minor;
	__s32 dev_instance;                 /* the disk's index among its driver's disks */
	char dev_name[DT_IO_NAMELEN];       /* driver: virtio_blk, loop, nvme */
	char dev_statname[DT_IO_NAMELEN];   /* as /proc/diskstats: vda, sda1, loop0 */
	char dev_pathname[DT_IO_NAMELEN];   /* /dev/vda */
};

struct dt_fileinfo {
	char fi_name[DT_IO_PATHLEN];        /* basename of fi_pathname */
	char fi_dirname[DT_IO_PATHLEN];     /* dirname of fi_pathname */
	char fi_pathname[DT_IO_PATHLEN];    /* full path; <none>, <unknown> */
	__s64 fi_offset;                    /* byte offset in the file, or -1 */
	char fi_fs[DT_IO_FSLEN];            /* file system type: ext4 */
	char fi_mount[DT_IO_PATHLEN];       /* mount point of the file system */
	__s32 fi_oflags;                    /* the open file's flags (f_flags), or 0 */
};

/* What one io probe's arguments point at. */
struct dt_io_args {
	/* arg0: the struct request, the same at start, done and the waits
	 * (scripts key `start[arg0] = timestamp` and look it up at done). */
	__u64 request;
	struct dt_bufinfo buf;
	struct dt_devinfo dev;
	struct dt_fileinfo file;
};

#endif

/*
 * The io provider's arguments, as Solaris' io provider defines them:
 * args[0] bufinfo_t *, args[1] devinfo_t *, args[2] fileinfo_t *. The
 * entry programs (bpf/io.bpf.c) fill these structures with the layouts of
 * bpf/io.h; a test checks that the two agree member by member. Strings are
 * char arrays of fixed size, usable wherever D takes a string.
 */

typedef char *caddr_t;
typedef long long offset_t;

typedef struct bufinfo {
	int b_flags;		/* B_* flags */
	size_t b_bcount;	/* number of bytes */
	caddr_t b_addr;		/* first page of the buffer (B_PAGEIO), else NULL */
	uint64_t b_blkno;	/* 512-byte sector on the disk */
	uint64_t b_lblkno;	/* 512-byte sector on the disk */
	size_t b_resid;		/* bytes not transferred (done) */
	size_t b_bufsize;	/* size of the buffer */
	caddr_t b_iodone;	/* I/O completion routine (the first bio's) */
	dev_t b_edev;		/* device: getmajor(), getminor() */
	int b_error;		/* errno, with B_ERROR (done) */
} bufinfo_t;

typedef struct devinfo {
	int dev_major;			/* major number */
	int dev_minor;			/* minor number */
	int dev_instance;		/* the disk's index among its driver's */
	char dev_name[32];		/* driver: virtio_blk, nvme, loop */
	char dev_statname[32];		/* as /proc/diskstats: vda, sda1, loop0 */
	char dev_pathname[32];		/* device node: /dev/vda */
} devinfo_t;

typedef struct fileinfo {
	char fi_name[256];		/* basename of fi_pathname */
	char fi_dirname[256];		/* dirname of fi_pathname */
	char fi_pathname[256];		/* full path; <none>, <unknown> */
	offset_t fi_offset;		/* byte offset in the file, or -1 */
	char fi_fs[16];			/* file system type: ext4 */
	char fi_mount[256];		/* mount point of the file system */
} fileinfo_t;

inline int B_BUSY = 0x0001;
inline int B_DONE = 0x0002;
inline int B_ERROR = 0x0004;
inline int B_PAGEIO = 0x0010;
inline int B_PHYS = 0x0020;
inline int B_READ = 0x0040;
inline int B_WRITE = 0x0100;
inline int B_ASYNC = 0x0400;

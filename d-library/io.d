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
	int fi_oflags;			/* the open file's flags (O_*), or 0 */
} fileinfo_t;

inline int B_BUSY = 0x0001;
inline int B_DONE = 0x0002;
inline int B_ERROR = 0x0004;
inline int B_PAGEIO = 0x0010;
inline int B_PHYS = 0x0020;
inline int B_READ = 0x0040;
inline int B_WRITE = 0x0100;
inline int B_ASYNC = 0x0400;

/* open(2)'s flags, as Linux numbers them: fi_oflags. */
inline int O_ACCMODE = 03;
inline int O_RDONLY = 00;
inline int O_WRONLY = 01;
inline int O_RDWR = 02;
inline int O_CREAT = 0100;
inline int O_EXCL = 0200;
inline int O_NOCTTY = 0400;
inline int O_TRUNC = 01000;
inline int O_APPEND = 02000;
inline int O_NONBLOCK = 04000;
inline int O_NDELAY = 04000;
inline int O_DSYNC = 010000;
inline int O_SYNC = 04010000;
inline int O_RSYNC = 04010000;
inline int O_DIRECT = 040000;
inline int O_LARGEFILE = 0100000;
inline int O_DIRECTORY = 0200000;
inline int O_NOFOLLOW = 0400000;
inline int O_NOATIME = 01000000;
inline int O_CLOEXEC = 02000000;

/*
 * fileinfo_t of an open file, and fds[]: the current process's open files
 * by descriptor, as Solaris' io.d defines them. A descriptor that is not
 * open gives "<none>" names. d_path() names the file as the process sees
 * it (its mount namespace's mounts); fi_mount is its mount point.
 */
translator fileinfo_t < struct file *F > {
	fi_name = F == NULL ? "<none>" : stringof(F->f_path.dentry->d_name.name);
	fi_dirname = F == NULL ? "<none>" : dirname(d_path(&F->f_path));
	fi_pathname = F == NULL ? "<none>" : d_path(&F->f_path);
	fi_offset = F == NULL ? 0 : F->f_pos;
	fi_fs = F == NULL ? "<none>" : stringof(F->f_path.mnt->mnt_sb->s_type->name);
	fi_mount = F == NULL ? "<none>" : __dtrace_mountpoint(&F->f_path);
	fi_oflags = F == NULL ? 0 : F->f_flags;
};

inline fileinfo_t fds[int fd] = xlate <fileinfo_t> (
    fd >= 0 && fd < curthread->files->fdt->max_fds ?
    curthread->files->fdt->fd[fd] : NULL);

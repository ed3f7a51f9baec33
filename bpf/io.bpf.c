// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The io provider: block device I/O as Solaris' io provider describes it,
 * on the block layer's request tracepoints. io:::start is block_rq_issue,
 * io:::done block_rq_complete; wait-start is a thread switching out in
 * io_schedule() (task->in_iowait), wait-done that thread switching back
 * in (the probe fires for it: dt_probe_for_task).
 *
 * The entry programs fill the stable arguments themselves (io.h: bufinfo,
 * devinfo, fileinfo) in a per-CPU buffer and pass their addresses as
 * arg0-arg2, which the D library types as bufinfo_t *, devinfo_t * and
 * fileinfo_t * (d-library/io.d). The file is found from the request's first
 * bio: a page-cache page names its inode (mapping->host), an iomap direct
 * I/O names its struct file (bio->bi_private is the iomap_dio); the path
 * is built by walking dentries and mounts, and only when a script uses
 * args[2] (dt_io_want_file).
 *
 * Kernel differences are CO-RE field checks (request->rq_disk before 6.0,
 * hd_struct partitions before 5.11, page->index before folios,
 * super_block->s_mounts as a list before 6.17); block_rq_issue's
 * prototype, (q, rq) before 5.11 and (rq) since, is read from the running
 * kernel's BTF by the runtime (dt_io_rq_arg).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "dtrace.h"
#include "io.h"
#include "fileinfo.h"

char LICENSE[] SEC("license") = "GPL";

/* Probe slots, in src/provider/io.rs order. */
#define DT_IO_START 0
#define DT_IO_DONE 1
#define DT_IO_WAIT_START 2
#define DT_IO_WAIT_DONE 3
#define DT_IO_COUNT 4

/* Probe ID of slot s is dt_io_id_base + s. */
const volatile __u32 dt_io_id_base = 0;
/* Which raw argument of block_rq_issue is the request. */
const volatile __u32 dt_io_rq_arg = 0;
/* Fill bufinfo_t (a script uses args[0]), devinfo_t (args[1]) and
 * fileinfo_t (args[2]): reading them costs most of an event. b_flags is
 * always filled (wait-start needs it). */
const volatile bool dt_io_want_buf = false;
const volatile bool dt_io_want_dev = false;
const volatile bool dt_io_want_file = false;
/* Of bufinfo_t, b_edev (the device) and the members the request's pages
 * decide (b_flags' B_PAGEIO/B_PHYS, b_addr, b_iodone) are read: each costs
 * helper calls the other members do not. */
const volatile bool dt_io_want_edev = false;
const volatile bool dt_io_want_pages = false;
/* Which of fileinfo_t's strings are read, when dt_io_want_file. */
const volatile bool dt_io_want_fi_pathname = true;
const volatile bool dt_io_want_fi_name = true;
const volatile bool dt_io_want_fi_dirname = true;
const volatile bool dt_io_want_fi_mount = true;
const volatile bool dt_io_want_fi_fs = true;
#define dt_io_file_members                                                                   \
	((dt_io_want_fi_pathname ? DT_FI_PATHNAME : 0) | (dt_io_want_fi_name ? DT_FI_NAME : 0) | \
	 (dt_io_want_fi_dirname ? DT_FI_DIRNAME : 0) | (dt_io_want_fi_mount ? DT_FI_MOUNT : 0) | \
	 (dt_io_want_fi_fs ? DT_FI_FS : 0))
/* Remember each thread's last request for wait-start/wait-done. */
const volatile bool dt_io_want_waits = false;
/* log2 of the page size. */
const volatile __u32 dt_io_page_shift = 12;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, DT_IO_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} dt_io_progs SEC(".maps");

/* One argument buffer per probe kind and CPU: a completion interrupt may
 * fire done while start is being filled on the same CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DT_IO_COUNT);
	__type(key, __u32);
	__type(value, struct dt_io_args);
} dt_io_args SEC(".maps");

/* Each thread's last issued request: the arguments of wait-start and
 * wait-done. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct dt_io_args);
} dt_io_last SEC(".maps");

/* Threads that began waiting (wait-start fired) and have not taken a CPU
 * again (wait-done). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} dt_io_waiting SEC(".maps");


/* Layouts of older kernels, for CO-RE field checks. */
struct request___old {
	struct gendisk *rq_disk;
	void *part;
};
struct hd_struct___old {
	int partno;
	struct device __dev;
};
struct page___old {
	unsigned long index;
};
struct super_block___old {
	struct list_head s_mounts;
};
struct mount___old {
	struct list_head mnt_instance;
};

#define DT_S_IFMT 00170000
#define DT_S_IFBLK 0060000
#define DT_MINORBITS 20

/* Copies string constant src (at most n bytes with its NUL) to dst. */
static __always_inline void dt_copy_const(char *dst, const char *src, int n)
{
	for (int i = 0; i < n; i++) {
		dst[i] = src[i];
		if (!src[i])
			break;
	}
}

/* Appends the decimal digits of v (< 10^6) at dst; returns their count. */
static __always_inline int dt_put_decimal(char *dst, __u32 v)
{
	char digits[8];
	int n = 0;
	for (int i = 0; i < 7; i++) {
		digits[n++] = '0' + v % 10;
		v /= 10;
		if (v == 0)
			break;
	}
	for (int i = 0; i < 7; i++) {
		if (i >= n)
			break;
		dst[i] = digits[n - 1 - i];
	}
	return n;
}

static __always_inline int dt_strnlen(const char *s, int max)
{
	for (int i = 0; i < max; i++)
		if (s[i] == 0)
			return i;
	return max;
}

/* The first bytes of a struct request or bio, read with one helper call:
 * the fields io reads lie there on every kernel so far (each helper call
 * costs more than the rest of the work on a field). DT_HEAD reads field
 * `field` of `ptr` from its head, or alone if the running kernel puts it
 * further. */
#define DT_HEAD_BYTES 128
struct dt_head {
	__u8 bytes[DT_HEAD_BYTES];
};
#define DT_HEAD(head, ptr, type, field)                                                          \
	(dt_loads() ? (type)DT_WORD((__u64)(ptr) + bpf_core_field_offset(ptr->field)) :            \
	 bpf_core_field_offset(ptr->field) + sizeof(type) <= DT_HEAD_BYTES ?                      \
		 *(type *)&(head)->bytes[bpf_core_field_offset(ptr->field) & (DT_HEAD_BYTES - 1)] : \
		 (type)BPF_CORE_READ(ptr, field))

/* Reads the first bytes of *ptr, an object of type `type`, for DT_HEAD:
 * DT_HEAD_BYTES, or the whole object if it is smaller (what follows it
 * may not be mapped). */
#define DT_READ_HEAD(head, ptr, type)                                                             \
	(dt_loads() ? 0 :                                                                           \
		      bpf_probe_read_kernel((head)->bytes,                                          \
					    bpf_core_type_size(type) < DT_HEAD_BYTES ? bpf_core_type_size(type) : \
										       DT_HEAD_BYTES,     \
					    ptr))

/* The first bytes of a bio and of a file or inode (DT_HEAD), per CPU:
 * the stack cannot hold them beside the request's and the clauses'. */
struct dt_io_heads {
	struct dt_head bio;
	struct dt_head obj;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_io_heads);
} dt_io_heads SEC(".maps");

/* A kiocb's first members. */
struct dt_kiocb_head {
	struct file *ki_filp;
	__s64 ki_pos;
};

/* The numbers gendisk begins with, read at once when they are adjacent. */
struct dt_disk_numbers {
	int major;
	int first_minor;
	int minors;
};

/* The disk of request rq, whose first bytes are `head`. */
static __always_inline struct gendisk *dt_io_disk(struct request *rq, struct dt_head *head)
{
	struct request___old *old = (struct request___old *)rq;
	if (bpf_core_field_exists(old->rq_disk))
		return DT_HEAD(head, old, struct gendisk *, rq_disk);
	struct request_queue *q = DT_HEAD(head, rq, struct request_queue *, q);
	return DT_GET(q, disk);
}

/* b_edev and (if wanted) devinfo_t: the partition the request is for (the
 * disk when it names none). Returns the disk, or NULL when a script wants
 * neither; *part_out is the request's partition (a block_device, or
 * before 5.11 an hd_struct). */
static __always_inline struct gendisk *dt_io_device(struct request *rq, struct dt_head *head,
						    struct dt_devinfo *dev, struct dt_bufinfo *buf,
						    void **part_out)
{
	__u32 devt = 0;
	struct request___old *old = (struct request___old *)rq;
	void *part = DT_HEAD(head, old, void *, part);
	*part_out = part;
	/* fileinfo_t needs only the partition (and rarely the disk). */
	if (!dt_io_want_edev && !dt_io_want_dev)
		return NULL;
	struct gendisk *disk = dt_io_disk(rq, head);
	struct dt_disk_numbers n;
	if (bpf_core_field_offset(disk->major) == 0 && bpf_core_field_offset(disk->first_minor) == 4 &&
	    bpf_core_field_offset(disk->minors) == 8) {
		bpf_probe_read_kernel(&n, sizeof(n), disk);
	} else {
		n.major = BPF_CORE_READ(disk, major);
		n.first_minor = BPF_CORE_READ(disk, first_minor);
		n.minors = BPF_CORE_READ(disk, minors);
	}
	int major = n.major, first_minor = n.first_minor, minors = n.minors;

	if (part) {
		if (bpf_core_type_exists(struct hd_struct___old))
			devt = BPF_CORE_READ((struct hd_struct___old *)part, __dev.devt);
		else
			devt = BPF_CORE_READ((struct block_device *)part, bd_dev);
	}
	if (devt == 0)
		devt = ((__u32)major << DT_MINORBITS) | (__u32)first_minor;
	__u32 minor = devt & ((1u << DT_MINORBITS) - 1);
	__u32 partno = (devt >> DT_MINORBITS) == (__u32)major && minor >= (__u32)first_minor ? minor - first_minor : 0;

	buf->b_edev = devt;
	if (!dt_io_want_dev)
		return disk;
	dev->dev_major = devt >> DT_MINORBITS;
	dev->dev_minor = minor;
	dev->dev_instance = minors > 0 ? (__u32)first_minor / (__u32)minors : 0;

	/* dev_statname: the disk's name, and the partition's number (with a
	 * "p" after a name ending in a digit), as /proc/diskstats. */
	char *stat = dev->dev_statname;
	bpf_probe_read_kernel_str(stat, DT_IO_NAMELEN, BPF_CORE_READ(disk, disk_name));
	int len = dt_strnlen(stat, DT_IO_NAMELEN - 10);
	if (partno > 0 && len > 0 && len < DT_IO_NAMELEN - 10) {
		char last = stat[len - 1];
		if (last >= '0' && last <= '9')
			stat[len++] = 'p';
		if (len < DT_IO_NAMELEN - 9) {
			len += dt_put_decimal(stat + len, partno);
			if (len < DT_IO_NAMELEN)
				stat[len] = 0;
		}
	}
	/* dev_pathname: /dev/<statname>. */
	dt_copy_const(dev->dev_pathname, "/dev/", 5); /* without its NUL */
	bpf_probe_read_kernel_str(dev->dev_pathname + 5, DT_IO_NAMELEN - 5, stat);

	/* dev_name: the driver's module, or for a built-in driver the disk's
	 * name without its instance digits (loop0: loop). */
	const char *module = BPF_CORE_READ(disk, fops, owner, name);
	if (BPF_CORE_READ(disk, fops, owner)) {
		bpf_probe_read_kernel_str(dev->dev_name, DT_IO_NAMELEN, module);
	} else {
		bpf_probe_read_kernel_str(dev->dev_name, DT_IO_NAMELEN, BPF_CORE_READ(disk, disk_name));
		int end = dt_strnlen(dev->dev_name, DT_IO_NAMELEN - 1);
		for (int i = 0; i < DT_IO_NAMELEN - 1; i++) {
			if (end <= 1)
				break;
			char c = dev->dev_name[(end - 1) & (DT_IO_NAMELEN - 1)];
			if (c < '0' || c > '9')
				break;
			dev->dev_name[(end - 1) & (DT_IO_NAMELEN - 1)] = 0;
			end--;
		}
	}
	return disk;
}

/* A mount of super block sb that shows all of it (a bind mount may show
 * only a subtree): the first of its mounts whose root is the file
 * system's root. */
static __always_inline struct mount *dt_io_sb_mount(struct super_block *sb)
{
	struct dentry *root = BPF_CORE_READ(sb, s_root);
	struct mount *first = NULL, *m;
	bool linked = bpf_core_field_exists(((struct mount *)0)->mnt_next_for_sb);
	struct list_head *head = NULL, *pos = NULL;

	/* (The old layout's offsets only in its branches: CO-RE cannot
	 * relocate a field the running kernel lacks.) */
	if (linked) {
		m = BPF_CORE_READ(sb, s_mounts);
	} else {
		head = &((struct super_block___old *)sb)->s_mounts;
		pos = BPF_CORE_READ((struct super_block___old *)sb, s_mounts.next);
		m = pos && pos != head ? (struct mount *)((void *)pos - bpf_core_field_offset(struct mount___old, mnt_instance)) : NULL;
	}
	for (int i = 0; i < 16 && m; i++) {
		if (!first)
			first = m;
		if (BPF_CORE_READ(m, mnt.mnt_root) == root)
			return m;
		if (linked) {
			m = BPF_CORE_READ(m, mnt_next_for_sb);
		} else {
			pos = BPF_CORE_READ((struct mount___old *)m, mnt_instance.next);
			m = pos && pos != head ?
				(struct mount *)((void *)pos - bpf_core_field_offset(struct mount___old, mnt_instance)) : NULL;
		}
	}
	return first;
}

/* The request's first bio and the page its data starts in: what B_PAGEIO,
 * B_PHYS, b_addr and b_iodone say, and where fileinfo_t starts from. */
struct dt_io_buffer {
	struct bio *bio;
	struct bio_vec *vec; /* the bio's current segment */
	__u32 into_vec;      /* bytes of it already done */
	struct page *page;
	struct page *first;   /* the head of page's folio */
	void *private;        /* bio->bi_private: a direct I/O's iomap_dio */
	struct inode *inode;  /* a page-cache page's file (NULL: user memory) */
	struct super_block *sb;
	bool blockdev;        /* the inode is a block device's own */
	void *part;           /* the request's partition (dt_io_device) */
	struct request *rq;
	struct dt_head *rq_head; /* its first bytes */
};

/* A page's compound_head and mapping: the word after flags, and mapping,
 * read at once where they are close (every kernel so far). */
struct dt_page_words {
	unsigned long words[4];
};

static __always_inline unsigned long dt_page_mapping(struct page *page, struct page **first_out)
{
	__u32 head_at = bpf_core_field_offset(struct page, compound_head);
	__u32 mapping_at = bpf_core_field_offset(struct page, mapping);
	unsigned long head, mapping;
	if (dt_loads()) {
		head = DT_WORD((__u64)page + head_at);
		mapping = DT_WORD((__u64)page + mapping_at);
	} else if (head_at == 8 && mapping_at == 24) {
		struct dt_page_words w;
		bpf_probe_read_kernel(&w, sizeof(w), page);
		head = w.words[1];
		mapping = w.words[3];
	} else {
		head = BPF_CORE_READ(page, compound_head);
		mapping = (unsigned long)BPF_CORE_READ(page, mapping);
	}
	/* A tail page of a large folio: the head has the mapping. */
	struct page *first = page;
	if (head & 1) {
		first = (struct page *)(head - 1);
		mapping = (unsigned long)DT_GET(first, mapping);
	}
	*first_out = first;
	return mapping;
}

/* Fills `b` and bufinfo_t's buffer members: a page-cache page is B_PAGEIO,
 * anything else user memory (direct I/O), B_PHYS. False when the request
 * has no data pages. */
static __always_inline bool dt_io_buffer(struct request *rq, struct dt_head *rq_head, struct dt_io_buffer *b,
					 struct dt_bufinfo *buf)
{
	/* Locals, not b's members, go through BPF_CORE_READ: CO-RE would
	 * relocate the member accesses of struct dt_io_buffer too. */
	struct bio *bio = DT_HEAD(rq_head, rq, struct bio *, bio);
	if (!bio)
		return false;
	__u32 zero = 0;
	struct dt_io_heads *heads = bpf_map_lookup_elem(&dt_io_heads, &zero);
	if (!heads)
		return false;
	struct dt_head *bio_head = &heads->bio;
	DT_READ_HEAD(bio_head, bio, struct bio);
	buf->b_iodone = (__u64)DT_HEAD(bio_head, bio, void *, bi_end_io);
	/* A split bio shares its parent's vector: its own segment. */
	struct bio_vec *vec = DT_HEAD(bio_head, bio, struct bio_vec *, bi_io_vec);
	vec += DT_HEAD(bio_head, bio, __u32, bi_iter.bi_idx);
	struct page *page = DT_GET(vec, bv_page);
	if (!page)
		return false;
	struct page *first;
	unsigned long mapping = dt_page_mapping(page, &first);
	b->into_vec = DT_HEAD(bio_head, bio, __u32, bi_iter.bi_bvec_done);
	b->private = DT_HEAD(bio_head, bio, void *, bi_private);
	b->inode = NULL;
	if (mapping && !(mapping & 1)) {
		/* A file's page: the page cache's I/O, unless the file lives
		 * in no block device (tmpfs, or a MAP_SHARED anonymous buffer
		 * lent to direct I/O). */
		struct inode *host = DT_GET((struct address_space *)mapping, host);
		struct dt_head *h = &heads->obj;
		DT_READ_HEAD(h, host, struct inode);
		struct super_block *sb = DT_HEAD(h, host, struct super_block *, i_sb);
		bool blockdev = (DT_HEAD(h, host, umode_t, i_mode) & DT_S_IFMT) == DT_S_IFBLK;
		if (blockdev || DT_GET(sb, s_bdev)) {
			b->inode = host;
			b->sb = sb;
			b->blockdev = blockdev;
		}
	}
	if (b->inode) {
		buf->b_flags |= DT_B_PAGEIO;
		buf->b_addr = (__u64)page;
	} else {
		buf->b_flags |= DT_B_PHYS;
	}
	b->bio = bio;
	b->vec = vec;
	b->page = page;
	b->first = first;
	return true;
}

/* fileinfo_t, from the request's buffer `b` (dt_io_buffer). */
static __always_inline void dt_io_file(struct dt_io_buffer *b, struct gendisk *disk, struct dt_fileinfo *fi)
{
	struct bio *bio = b->bio;
	struct bio_vec *vec = b->vec;
	struct page *page = b->page, *first = b->first;
	struct inode *inode = NULL;
	struct super_block *sb = NULL;
	struct dentry *dentry = NULL;
	struct mount *mnt = NULL;
	__s64 offset;
	__s32 oflags = 0; /* page-cache I/O belongs to no open file */

	if (b->inode) {
		/* A page-cache page: its mapping's host is the file. */
		inode = b->inode;
		sb = b->sb;
		if (b->blockdev) {
			/* The block device's own cache: metadata, or raw I/O. */
			dt_io_no_file(fi, dt_io_none);
			return;
		}
		unsigned long index;
		if (bpf_core_field_exists(((struct page___old *)0)->index))
			index = BPF_CORE_READ((struct page___old *)first, index);
		else
			index = BPF_CORE_READ(first, __folio_index);
		index += ((unsigned long)page - (unsigned long)first) / bpf_core_type_size(struct page);
		offset = ((__s64)index << dt_io_page_shift) + DT_GET(vec, bv_offset) + b->into_vec;
		struct hlist_node *alias = DT_GET(inode, i_dentry.first);
		if (alias)
			dentry = (struct dentry *)((void *)alias - bpf_core_field_offset(struct dentry, d_u.d_alias));
		mnt = dt_io_sb_mount(sb);
	} else {
		/* User memory: direct I/O. Both iomap's (file systems) and the
		 * block device's direct I/O keep the kiocb first in the bio's
		 * private data; it is taken for one only if its file lives on
		 * the request's partition (or disk). */
		struct kiocb *iocb = NULL;
		struct file *file = NULL;
		struct vfsmount *vfsmnt = NULL;
		bool blockdev = false;
		struct dt_kiocb_head k = {};
		__u32 zero = 0;
		struct dt_io_heads *heads = bpf_map_lookup_elem(&dt_io_heads, &zero);
		if (!heads) {
			dt_io_no_file(fi, dt_io_unknown);
			return;
		}
		struct dt_head *h = &heads->obj;
		void *private = b->private;
		/* The front part of a bio split to the device's limits is a new
		 * bio whose private data is the original: look there too. */
		for (int level = 0; level < 2; level++) {
			if (level > 0)
				private = DT_GET(bio, bi_private);
			struct iomap_dio *dio = private;
			iocb = DT_GET(dio, iocb);
			if (dt_loads()) {
				k.ki_filp = DT_GET(iocb, ki_filp);
				k.ki_pos = DT_GET(iocb, ki_pos);
			} else if (bpf_core_field_offset(iocb->ki_filp) == 0 && bpf_core_field_offset(iocb->ki_pos) == 8) {
				bpf_probe_read_kernel(&k, sizeof(k), iocb);
			} else {
				k.ki_filp = BPF_CORE_READ(iocb, ki_filp);
				k.ki_pos = BPF_CORE_READ(iocb, ki_pos);
			}
			file = k.ki_filp;
			if (file) {
				DT_READ_HEAD(h, file, struct file);
				inode = DT_HEAD(h, file, struct inode *, f_inode);
				oflags = DT_HEAD(h, file, unsigned int, f_flags);
				dentry = DT_HEAD(h, file, struct dentry *, f_path.dentry);
				vfsmnt = DT_HEAD(h, file, struct vfsmount *, f_path.mnt);
				DT_READ_HEAD(h, inode, struct inode);
				blockdev = (DT_HEAD(h, inode, umode_t, i_mode) & DT_S_IFMT) == DT_S_IFBLK;
				sb = DT_HEAD(h, inode, struct super_block *, i_sb);
				if (blockdev)
					break;
				/* The file system's device is the request's partition
				 * (or, before 5.11, one on the request's disk). */
				struct block_device *sb_dev = DT_GET(sb, s_bdev);
				if (sb_dev && (void *)sb_dev == b->part)
					break;
				if (!disk)
					disk = dt_io_disk(b->rq, b->rq_head);
				if (sb_dev && BPF_CORE_READ(sb_dev, bd_disk) == disk)
					break;
			}
			file = NULL;
			bio = (struct bio *)dio;
		}
		if (!file) {
			dt_io_no_file(fi, dt_io_unknown);
			return;
		}
		if (blockdev) {
			dt_io_no_file(fi, dt_io_none);
			return;
		}
		/* Where the read or write system call began. */
		offset = k.ki_pos;
		if (vfsmnt)
			mnt = (struct mount *)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
	}
	if (!dentry || !mnt) {
		dt_io_no_file(fi, dt_io_unknown);
		return;
	}
	fi->fi_offset = offset;
	fi->fi_oflags = oflags;
	if (dt_io_file_members & DT_FI_FS)
		bpf_probe_read_kernel_str(fi->fi_fs, DT_IO_FSLEN, BPF_CORE_READ(sb, s_type, name));
	dt_io_path(dentry, mnt, fi, dt_io_file_members);
}

/* The request's bufinfo_t, devinfo_t and (if wanted) fileinfo_t, in the
 * buffer of probe slot `slot`; NULL for requests that move no data. */
static __always_inline struct dt_io_args *dt_io_fill(struct request *rq, __u32 slot)
{
	struct dt_head head;
	DT_READ_HEAD(&head, rq, struct request);
	__u32 flags = DT_HEAD(&head, rq, __u32, cmd_flags);
	__u32 op = flags & 0xff; /* REQ_OP_MASK */
	if (op > 1)              /* only REQ_OP_READ (0) and REQ_OP_WRITE (1) */
		return NULL;
	struct dt_io_args *a = bpf_map_lookup_elem(&dt_io_args, &slot);
	if (!a)
		return NULL;
	a->request = (__u64)rq;
	struct dt_bufinfo *buf = &a->buf;
	buf->b_flags = op == 1 ? DT_B_WRITE : DT_B_READ;
	/* The kernel waits for reads and for writes marked sync (REQ_SYNC,
	 * REQ_FUA, REQ_PREFLUSH); the rest is written back asynchronously. */
	__u32 sync_bits = (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)) |
			  (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)) |
			  (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH));
	if (op == 1 && !(flags & sync_bits))
		buf->b_flags |= DT_B_ASYNC;
	if (!dt_io_want_buf && !dt_io_want_dev && !dt_io_want_file)
		return a;
	__u32 bytes = DT_HEAD(&head, rq, __u32, __data_len);
	__u64 sector = DT_HEAD(&head, rq, __u64, __sector);
	buf->b_bcount = bytes;
	buf->b_bufsize = bytes;
	buf->b_addr = 0;
	buf->b_blkno = sector;
	buf->b_lblkno = sector;
	buf->b_resid = 0;
	buf->b_error = 0;
	buf->b_iodone = 0;
	buf->b_edev = 0;
	/* fileinfo_t needs the disk to tell a direct I/O's file. */
	struct gendisk *disk = NULL;
	struct dt_io_buffer b = { .rq = rq, .rq_head = &head };
	if (dt_io_want_edev || dt_io_want_dev || dt_io_want_file)
		disk = dt_io_device(rq, &head, &a->dev, buf, &b.part);
	bool has_data = (dt_io_want_pages || dt_io_want_file) && dt_io_buffer(rq, &head, &b, buf);
	if (dt_io_want_file) {
		if (has_data)
			dt_io_file(&b, disk, &a->file);
		else
			dt_io_no_file(&a->file, dt_io_none);
	}
	return a;
}

/* Fires probe `slot` with arguments `a`, for `task` (NULL: the current
 * thread). */
static __always_inline int dt_io_fire(void *ctx, __u32 slot, struct dt_io_args *a, struct task_struct *task)
{
	struct dt_probe_ctx *pc = dt_begin_probe(ctx);
	if (!pc)
		return 0;
	if (task)
		dt_probe_for_task(pc, task);
	pc->probe_id = dt_io_id_base + slot;
	/* arg0 names the I/O; args[0..2] are translated from the filled
	 * buffers, whose addresses ride in the last argument slots. */
	pc->args[0] = a->request;
	for (int i = 1; i < DT_NARGS - 3; i++)
		pc->args[i] = 0;
	pc->args[DT_NARGS - 3] = (__u64)&a->buf;
	pc->args[DT_NARGS - 2] = (__u64)&a->dev;
	pc->args[DT_NARGS - 1] = (__u64)&a->file;
	bpf_tail_call(ctx, &dt_io_progs, slot);
	return 0;
}

/* The thread that issues a synchronous request from its own context (not
 * a kernel worker) may wait for it: remember it for wait-start. Solaris
 * fires no wait probes for asynchronous I/O. */
static __always_inline void dt_io_remember(struct dt_io_args *a)
{
	if (a->buf.b_flags & DT_B_ASYNC)
		return;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, flags) & 0x00200000 /* PF_KTHREAD */)
		return;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_update_elem(&dt_io_last, &tid, a, BPF_ANY);
}

/* block_rq_issue: the request goes to the device driver. */
/* A request the driver could not take yet goes back to the queue
 * (block_rq_requeue) and is issued again: io:::start fires once per
 * request, at its first issue, as a buf is started once on Solaris. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} dt_io_requeued SEC(".maps");

/* Nonzero once a request was requeued: until then start looks nothing up. */
__u32 dt_io_requeues = 0;

/* block_rq_requeue(q, rq) before Linux 5.11, block_rq_requeue(rq) since. */
SEC("raw_tp/block_rq_requeue")
int dt_io_requeue(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 rq = dt_io_rq_arg ? ctx->args[1] : ctx->args[0];
	__u8 one = 1;
	bpf_map_update_elem(&dt_io_requeued, &rq, &one, BPF_ANY);
	__sync_fetch_and_add(&dt_io_requeues, 1);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int dt_io_start(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)(dt_io_rq_arg ? ctx->args[1] : ctx->args[0]);
	if (dt_io_requeues) {
		__u64 key = (__u64)rq;
		if (bpf_map_lookup_elem(&dt_io_requeued, &key)) {
			bpf_map_delete_elem(&dt_io_requeued, &key);
			return 0;
		}
	}
	struct dt_io_args *a = dt_io_fill(rq, DT_IO_START);
	if (!a)
		return 0;
	if (dt_io_want_waits)
		dt_io_remember(a);
	return dt_io_fire(ctx, DT_IO_START, a, NULL);
}

/* blk_status_t (or, before 5.13, a negative errno) as an errno. */
static __always_inline __s32 dt_io_errno(__s32 error)
{
	if (error < 0)
		return -error;
	switch (error) {
	case 0:
		return 0;
	case 1: /* BLK_STS_NOTSUPP */
		return 95;
	case 2: /* BLK_STS_TIMEOUT */
		return 110;
	case 3: /* BLK_STS_NOSPC */
		return 28;
	default:
		return 5; /* EIO */
	}
}

/* block_rq_complete(rq, error, nr_bytes): the device is done with
 * nr_bytes of the request. */
SEC("raw_tp/block_rq_complete")
int dt_io_done(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	struct dt_io_args *a = dt_io_fill(rq, DT_IO_DONE);
	if (!a)
		return 0;
	__u64 done = (__u32)ctx->args[2];
	a->buf.b_resid = a->buf.b_bcount > done ? a->buf.b_bcount - done : 0;
	a->buf.b_error = dt_io_errno((__s32)ctx->args[1]);
	if (a->buf.b_error) {
		/* Linux completes a failed request's bytes with the error: none
		 * of them were transferred. */
		a->buf.b_flags |= DT_B_ERROR;
		a->buf.b_resid = a->buf.b_bcount;
	}
	return dt_io_fire(ctx, DT_IO_DONE, a, NULL);
}

/* sched_switch(preempt, prev, next, ...), in prev: a thread that leaves the
 * CPU in io_schedule() (in_iowait) waits for I/O, taken to be the last
 * request it issued. */
SEC("raw_tp/sched_switch")
int dt_io_wait_start(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	if (!BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		return 0;
	__u32 tid = BPF_CORE_READ(prev, pid);
	struct dt_io_args *a = bpf_map_lookup_elem(&dt_io_last, &tid);
	if (!a)
		return 0;
	__u8 one = 1;
	bpf_map_update_elem(&dt_io_waiting, &tid, &one, BPF_ANY);
	return dt_io_fire(ctx, DT_IO_WAIT_START, a, NULL);
}

/* sched_switch(preempt, prev, next, ...): wait-done for next, a thread
 * that began waiting and now takes the CPU: the probe fires for it (its
 * pid, execname, self->), before it runs. */
SEC("raw_tp/sched_switch")
int dt_io_wait_done(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 tid = BPF_CORE_READ(next, pid);
	if (!bpf_map_lookup_elem(&dt_io_waiting, &tid))
		return 0;
	bpf_map_delete_elem(&dt_io_waiting, &tid);
	struct dt_io_args *a = bpf_map_lookup_elem(&dt_io_last, &tid);
	if (!a)
		return 0;
	a->buf.b_flags |= DT_B_DONE;
	return dt_io_fire(ctx, DT_IO_WAIT_DONE, a, next);
}

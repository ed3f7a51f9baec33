/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fileinfo_t (struct dt_fileinfo, io.h) of a dentry under a mount: its
 * path, built by walking dentries and crossing mounts, for the io and
 * fsinfo providers. Include after io.h.
 */
#ifndef DTRACE_FILEINFO_H
#define DTRACE_FILEINFO_H

#define DT_DEPTH 32 /* path components followed (a power of 2) */

/* A path built before, for the dentry and mount it starts at. It is used
 * while the walk up from there meets names of the same lengths and hashes
 * (d_name.hash_len), with their dentries' change counts (d_seq: a rename,
 * move or unhash counts) and mount crossings in the same places: the
 * walk's fingerprint (dt_io_path) is the same. Reading the names again
 * costs a helper call per component. */
struct dt_io_path_key {
	__u64 dentry;
	__u64 mnt;
};

struct dt_io_cached_path {
	__u64 fingerprint;
	__u32 name_start;
	__u32 mount_len;
	char text[DT_IO_PATHLEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct dt_io_path_key);
	__type(value, struct dt_io_cached_path);
} dt_io_paths SEC(".maps");

/* Where a path is assembled: its components' names, leaf first, and the
 * text, twice the path length so that a name read at any offset below
 * DT_IO_PATHLEN stays inside. */
struct dt_io_pathbuf {
	const unsigned char *names[DT_DEPTH];
	/* The loops' state lives here: read back from memory it is unknown
	 * to the verifier, which then checks each loop once instead of once
	 * per possible path depth and length. */
	volatile __s32 count;      /* names */
	volatile __s32 mount_at;   /* names[mount_at..] are the mount point's */
	volatile __u64 off;        /* bytes of the text so far */
	volatile __u64 mount_len;  /* bytes of the mount point's path */
	volatile __u64 name_start; /* where the last name begins */
	volatile __u64 link[3];    /* dt_read_mount_link's */
	char bytes[2 * DT_IO_PATHLEN];
	struct dt_io_cached_path staged; /* what goes into dt_io_paths */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_io_pathbuf);
} dt_io_pathbuf SEC(".maps");

static const char dt_io_none[16] = "<none>";
static const char dt_io_unknown[16] = "<unknown>";

/* fileinfo_t of I/O for no file (dt_io_none) or an unnamed one. */
static __always_inline void dt_io_no_file(struct dt_fileinfo *fi, const char *what)
{
	__builtin_memcpy(fi->fi_name, what, 16);
	__builtin_memcpy(fi->fi_dirname, what, 16);
	__builtin_memcpy(fi->fi_pathname, what, 16);
	__builtin_memcpy(fi->fi_fs, what, 16);
	__builtin_memcpy(fi->fi_mount, what, 16);
	fi->fi_offset = -1;
	fi->fi_oflags = 0;
}

/* off & (DT_IO_PATHLEN - 1), in a way the compiler cannot drop when it
 * knows off is smaller: the verifier needs to see the bound. */
static __always_inline __u64 dt_io_bound(__u64 off)
{
	asm volatile("%0 &= 255" : "+r"(off));
	return off;
}

/* A dentry's parent, name and change count (d_seq). Each helper call
 * costs more than the rest of a step up the path: they are read at once
 * where they lie together (d_seq, then d_parent, then d_name's hash_len
 * and name: every kernel so far without lockdep). */
struct dt_dentry_link {
	struct dentry *parent;
	__u64 hash_len; /* the name's length and hash */
	const unsigned char *name;
	__u32 seq;
};

struct dt_dentry_head {
	__u32 flags;
	__u32 seq;
	__u64 hash[2];
	struct dentry *parent;
	__u64 hash_len;
	const unsigned char *name;
};

static __always_inline void dt_read_dentry_link(struct dentry *d, struct dt_dentry_link *l)
{
	if (dt_loads()) {
		struct dentry *k = DT_KPTR(struct dentry, d);
		l->parent = k->d_parent;
		l->hash_len = k->d_name.hash_len;
		l->name = k->d_name.name;
		l->seq = k->d_seq.seqcount.sequence;
		return;
	}
	if (bpf_core_field_offset(struct dentry, d_seq) == 4 && bpf_core_field_offset(struct dentry, d_parent) == 24 &&
	    bpf_core_field_offset(struct dentry, d_name) == 32 && bpf_core_field_offset(struct qstr, name) == 8) {
		struct dt_dentry_head h;
		bpf_probe_read_kernel(&h, sizeof(h), d);
		l->parent = h.parent;
		l->hash_len = h.hash_len;
		l->name = h.name;
		l->seq = h.seq;
	} else {
		l->parent = BPF_CORE_READ(d, d_parent);
		l->hash_len = BPF_CORE_READ(d, d_name.hash_len);
		l->name = BPF_CORE_READ(d, d_name.name);
		/* A seqcount's count comes first, whatever wraps it. */
		bpf_probe_read_kernel(&l->seq, sizeof(l->seq), (void *)d + bpf_core_field_offset(struct dentry, d_seq));
	}
}

/* Folds v into a walk's fingerprint. */
static __always_inline __u64 dt_io_mix(__u64 fp, __u64 v)
{
	fp = (fp ^ v) * 0x9e3779b97f4a7c15ULL;
	return fp ^ (fp >> 29);
}

/* A mount's parent, where it is mounted in the parent, and its root
 * dentry: read at once where they lie together (mnt_parent,
 * mnt_mountpoint, then mnt.mnt_root: every kernel so far). */
struct dt_mount_link {
	struct mount *parent;
	struct dentry *mountpoint;
	struct dentry *root;
};

static __always_inline void dt_read_mount_link(struct mount *m, struct dt_mount_link *l, struct dt_io_pathbuf *pb)
{
	if (dt_loads()) {
		/* Through memory, the pointers become plain numbers: as
		 * kernel pointers in the walk's state they would keep the
		 * verifier from seeing that its iterations are alike. */
		struct mount *k = DT_KPTR(struct mount, m);
		pb->link[0] = (__u64)k->mnt_parent;
		pb->link[1] = (__u64)k->mnt_mountpoint;
		pb->link[2] = (__u64)k->mnt.mnt_root;
		l->parent = (struct mount *)pb->link[0];
		l->mountpoint = (struct dentry *)pb->link[1];
		l->root = (struct dentry *)pb->link[2];
		return;
	}
	__u32 at = bpf_core_field_offset(struct mount, mnt_parent);
	if (bpf_core_field_offset(struct mount, mnt_mountpoint) == at + 8 &&
	    bpf_core_field_offset(struct mount, mnt) == at + 16 && bpf_core_field_offset(struct vfsmount, mnt_root) == 0) {
		bpf_probe_read_kernel(l, sizeof(*l), (void *)m + at);
	} else {
		l->parent = BPF_CORE_READ(m, mnt_parent);
		l->mountpoint = BPF_CORE_READ(m, mnt_mountpoint);
		l->root = BPF_CORE_READ(m, mnt.mnt_root);
	}
}

/* Copies DT_IO_PATHLEN bytes between map values with loads and stores:
 * no helper call (each costs more than the copy). */
static __always_inline void dt_io_copy_path(char *dst, const char *src)
{
	for (int i = 0; i < DT_IO_PATHLEN / 8; i++)
		((__u64 *)dst)[i] = ((const __u64 *)src)[i];
}

/* The path of dentry d under mount mnt: fi_pathname, fi_dirname, fi_name
 * and fi_mount, those of them `want` names (DT_FI_*); the others keep
 * what they held. */
static __always_inline void dt_io_path(struct dentry *d, struct mount *mnt, struct dt_fileinfo *fi, __u32 want)
{
	if (!(want & (DT_FI_PATHNAME | DT_FI_NAME | DT_FI_DIRNAME | DT_FI_MOUNT)))
		return;
	__u32 zero = 0;
	struct dt_io_pathbuf *pb = bpf_map_lookup_elem(&dt_io_pathbuf, &zero);
	if (!pb)
		return;
	struct dt_io_path_key key = { (__u64)d, (__u64)mnt };
	struct dt_io_cached_path *cached = bpf_map_lookup_elem(&dt_io_paths, &key);
	__u64 fp = 0;
	bool settled = true; /* no rename under way (an odd d_seq) */
	pb->count = 0;
	pb->mount_at = -1;
	struct dt_mount_link ml;
	dt_read_mount_link(mnt, &ml, pb);

	/* Leaf to root: the names of the dentries, crossing mounts. */
	for (int i = 0; i < DT_DEPTH + 16; i++) {
		struct dt_dentry_link dl = {};
		/* A mount's root is known without reading it. */
		bool root = d == ml.root;
		if (!root)
			dt_read_dentry_link(d, &dl);
		if (root || d == dl.parent || !dl.parent) {
			if (!mnt || !ml.parent || ml.parent == mnt)
				break;
			/* Cross to the mount point, in the parent mount. */
			fp = dt_io_mix(fp, 0x6d6f756e74ULL); /* where the mount point's names begin */
			d = ml.mountpoint;
			mnt = ml.parent;
			dt_read_mount_link(mnt, &ml, pb);
			if (pb->mount_at < 0)
				pb->mount_at = pb->count;
			continue;
		}
		__s32 n = pb->count;
		if (n < 0 || n >= DT_DEPTH) {
			dt_io_no_file(fi, dt_io_unknown);
			return;
		}
		fp = dt_io_mix(fp, dl.hash_len);
		fp = dt_io_mix(fp, dl.seq);
		settled = settled && !(dl.seq & 1);
		pb->names[n & (DT_DEPTH - 1)] = dl.name;
		pb->count = n + 1;
		d = dl.parent;
	}
	if (pb->mount_at < 0)
		pb->mount_at = pb->count;

	char *path = pb->bytes;
	if (cached && settled && cached->fingerprint == fp) {
		dt_io_copy_path(path, cached->text);
		pb->name_start = cached->name_start;
		pb->mount_len = cached->mount_len;
		goto copy_out;
	}

	/* Root to leaf: the text. */
	pb->off = 0;
	pb->mount_len = 0;
	pb->name_start = 1;
	path[0] = '/';
	path[1] = 0;
	for (int j = DT_DEPTH - 1; j >= 0; j--) {
		if (j >= pb->count)
			continue;
		__u64 off = pb->off;
		if (off >= DT_IO_PATHLEN - 2)
			break;
		path[dt_io_bound(off)] = '/';
		off = dt_io_bound(off + 1);
		pb->name_start = off;
		long got = bpf_probe_read_kernel_str(&path[off], DT_IO_PATHLEN, pb->names[j]);
		if (got > 1)
			off += got - 1;
		if (off > DT_IO_PATHLEN - 1)
			off = DT_IO_PATHLEN - 1;
		pb->off = off;
		if (j == pb->mount_at)
			pb->mount_len = off;
	}
	path[dt_io_bound(pb->off)] = 0;
	if (settled) {
		pb->staged.fingerprint = fp;
		pb->staged.name_start = pb->name_start;
		pb->staged.mount_len = pb->mount_len;
		dt_io_copy_path(pb->staged.text, path);
		bpf_map_update_elem(&dt_io_paths, &key, &pb->staged, BPF_ANY);
	}

copy_out:

	if (want & DT_FI_PATHNAME) {
		dt_io_copy_path(fi->fi_pathname, path);
		fi->fi_pathname[DT_IO_PATHLEN - 1] = 0;
	}
	__u64 name_start = pb->name_start;
	if (want & DT_FI_NAME) {
		dt_io_copy_path(fi->fi_name, &path[dt_io_bound(name_start)]);
		fi->fi_name[DT_IO_PATHLEN - 1] = 0;
	}
	if (want & DT_FI_DIRNAME) {
		dt_io_copy_path(fi->fi_dirname, path);
		fi->fi_dirname[name_start > 1 ? dt_io_bound(name_start - 1) : 1] = 0;
	}
	if (want & DT_FI_MOUNT) {
		dt_io_copy_path(fi->fi_mount, path);
		__u64 mount_len = pb->mount_len;
		fi->fi_mount[mount_len > 0 ? dt_io_bound(mount_len) : 1] = 0;
	}
}

#endif

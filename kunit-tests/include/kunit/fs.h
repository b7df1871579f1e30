/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit fixtures for filesystem tests: mount a real image from a RAM disk and
 * stub ->acquire_dquot() on the mounted superblock.
 *
 * Every helper registers its own cleanup with the test, so a failed
 * assertion never leaves a mount, a device claim or a stubbed superblock
 * behind for the next case.  Each case marks its thread for kmemleak when it
 * writes its image; a suite that looks for the leaks of its cases ends with
 * kmemleak_kunit_suite_exit() as its ->suite_exit().
 */
#ifndef _KUNIT_FS_H
#define _KUNIT_FS_H

#include <linux/fs.h>
#include <linux/kmemleak.h>
#include <linux/quota.h>

struct kunit;
struct vfsmount;
struct super_block;
struct dentry;

/**
 * struct fs_kunit_run - one run of non-zero bytes of an image
 * @offset: where the run starts in the image
 * @len: its length in bytes
 * @data: the bytes
 */
struct fs_kunit_run {
	u32 offset;
	u32 len;
	const u8 *data;
};

#define FS_KUNIT_RUN(off, array) { .offset = (off), .len = sizeof(array), .data = (array) }

/**
 * struct fs_kunit_xz - one extent of an image that is not all zeroes
 * @offset: where the extent starts in the image
 * @len: its length in bytes
 * @xz: the extent as an xz stream (CRC32, LZMA2 only)
 * @xz_len: the stream's length in bytes
 */
struct fs_kunit_xz {
	u32 offset;
	u32 len;
	const u8 *xz;
	u32 xz_len;
};

#define FS_KUNIT_XZ(off, size, array) \
	{ .offset = (off), .len = (size), .xz = (array), .xz_len = sizeof(array) }

/**
 * struct fs_kunit_image - a filesystem image, compressed or as edits of another
 * @base: NULL, or the image this one is a variant of (a few bytes edited)
 * @size: the image's size in bytes
 * @xz: without @base: the extents of the image that are not all zeroes, or
 *	NULL for an image of zeroes and @runs.  Not one stream of the whole
 *	image: a 52 MiB f2fs image holds 94 KiB that are not zeroes, and
 *	decompressing the zeroes took longer than the test's mount.
 * @nr_xz: how many extents
 * @runs: bytes written over @base, the stream or zeroes: (offset, bytes) runs
 * @nr_runs: how many runs
 */
struct fs_kunit_image {
	const struct fs_kunit_image *base;
	u32 size;
	const struct fs_kunit_xz *xz;
	unsigned int nr_xz;
	const struct fs_kunit_run *runs;
	unsigned int nr_runs;
};

int fs_kunit_write_image(struct kunit *test, const struct fs_kunit_image *image);
u8 *fs_kunit_read_device(struct kunit *test, u32 size);
u8 *fs_kunit_image_bytes(struct kunit *test, const struct fs_kunit_image *image);
s64 fs_kunit_first_change(struct kunit *test, const struct fs_kunit_image *image);
int fs_kunit_try_mount(struct kunit *test, const char *fstype,
		       const struct fs_kunit_image *image, int flags,
		       const char *options, struct vfsmount **mnt);
int fs_kunit_try_mount_device(struct kunit *test, const char *fstype, int flags,
			      const char *options, struct vfsmount **mnt);
unsigned long fs_kunit_refused_mount_inodes(struct kunit *test, unsigned long max_ino);
struct vfsmount *fs_kunit_mount(struct kunit *test, const char *fstype,
				const struct fs_kunit_image *image, int flags,
				const char *options);
struct vfsmount *fs_kunit_mount_nodev(struct kunit *test, const char *fstype,
				      const char *options);
void fs_kunit_unmount(struct kunit *test, struct vfsmount *mnt);
void fs_kunit_set_stable_writes(struct kunit *test, bool stable);
struct dentry *fs_kunit_lookup(struct kunit *test, struct dentry *dir,
			       const char *name);

#define FS_KUNIT_ANY_ID ((qid_t)-1)

/**
 * struct fs_kunit_quota_stub - a superblock's dquot_operations with an
 * ->acquire_dquot() the test controls
 * @ops: the copy the superblock points to while the stub is in place
 * @orig: the superblock's own operations
 * @sb: the superblock
 * @err: what ->acquire_dquot() returns for matching dquots; 0: call @orig
 * @type: whose dquots fail: USRQUOTA, GRPQUOTA, PRJQUOTA or -1 for any
 * @id: which id fails, or FS_KUNIT_ANY_ID
 * @calls: calls of ->acquire_dquot() so far
 * @failed: how many of them returned @err
 */
struct fs_kunit_quota_stub {
	struct dquot_operations ops;
	const struct dquot_operations *orig;
	struct super_block *sb;
	int err;
	int type;
	qid_t id;
	unsigned int calls;
	unsigned int failed;
};

struct fs_kunit_quota_stub *fs_kunit_stub_acquire_dquot(struct kunit *test,
							struct super_block *sb);
void fs_kunit_unstub_acquire_dquot(struct kunit *test, struct fs_kunit_quota_stub *stub);

/**
 * fs_kunit_quota_fail() - make ->acquire_dquot() fail from now on
 * @stub: from fs_kunit_stub_acquire_dquot()
 * @err: the error to return; 0 passes every call through again
 * @type: whose dquots fail: USRQUOTA, GRPQUOTA, PRJQUOTA or -1 for any
 * @id: which id fails, or FS_KUNIT_ANY_ID
 */
static inline void fs_kunit_quota_fail(struct fs_kunit_quota_stub *stub, int err,
				       int type, qid_t id)
{
	stub->err = err;
	stub->type = type;
	stub->id = id;
}

void fs_kunit_expect_no_leaked_dquot_refs(struct kunit *test, struct super_block *sb,
					  struct kqid qid, struct inode *const *holders,
					  int nr_holders);
int fs_kunit_chown(struct dentry *dentry, int type, qid_t id);
const struct cred *fs_kunit_bound_by_hard_limits(struct kunit *test);
int fs_kunit_enforce_user_limits(struct super_block *sb, bool on);
int fs_kunit_quota_on(struct kunit *test, struct vfsmount *mnt, int type, const char *file);

/*
 * The objects of the namespace fixture of every filesystem quota suite:
 * each image holds them (copied in by mkfs, or made by the fixture on a bare
 * mkfs image or a fresh tmpfs), each with its own owner (uid 1101 + n, gid
 * 2101 + n), so a stub failing one uid fails exactly one of an operation's
 * dquot_initialize() calls.
 */
enum fs_kunit_obj {
	FS_KUNIT_D1,		/* /d1: source directory */
	FS_KUNIT_D2,		/* /d2: target directory */
	FS_KUNIT_VICTIM,	/* /d1/victim: unlinked, linked, renamed */
	FS_KUNIT_EMPTY,		/* /d1/empty: removed by rmdir */
	FS_KUNIT_EXISTING,	/* /d2/existing: replaced or exchanged by rename */
	FS_KUNIT_OWNED,		/* /owned: chown, chgrp */
	FS_KUNIT_NR_OBJS,
	FS_KUNIT_NEW = FS_KUNIT_NR_OBJS,	/* owner of new inodes (the caller) */
	FS_KUNIT_TARGET,			/* chown/chgrp target */
	FS_KUNIT_NR_IDS,
};

#define FS_KUNIT_OBJ_UID(obj)	(1101 + (obj))
#define FS_KUNIT_OBJ_GID(obj)	(2101 + (obj))

enum fs_kunit_op {
	FS_KUNIT_CREATE, FS_KUNIT_MKNOD, FS_KUNIT_MKDIR, FS_KUNIT_RMDIR, FS_KUNIT_UNLINK,
	FS_KUNIT_SYMLINK, FS_KUNIT_LINK, FS_KUNIT_RENAME_REPLACE, FS_KUNIT_RENAME_EXCHANGE,
	FS_KUNIT_TMPFILE, FS_KUNIT_CHOWN, FS_KUNIT_CHGRP, FS_KUNIT_OPEN_WRITE,
	FS_KUNIT_RENAME_WHITEOUT, FS_KUNIT_SETXATTR,
};

/**
 * struct fs_kunit_fault - one dquot_initialize() (or dqget()) call of an
 * operation, found by whose dquot fails
 * @op: the operation
 * @site: what the call initializes, e.g. "dir", "new inode"
 * @owner: the object whose owner's dquot fails
 * @type: whose dquot fails: USRQUOTA (uid, the default) or GRPQUOTA (gid)
 * @err: what ->acquire_dquot() returns; 0: -EIO
 *
 * A table has one row per call site and caller: two operations that reach
 * the same call through the same code are one row.
 */
struct fs_kunit_fault {
	enum fs_kunit_op op;
	const char *site;
	enum fs_kunit_obj owner;
	int type;
	int err;
};

/*
 * Rows of a fault table.  ENOSPC gets a row of its own only where the code
 * treats it differently from EIO (ext4 retries an inode allocation).
 */
#define FS_KUNIT_SITE(_op, _site, _owner) \
	{ .op = (_op), .site = (_site), .owner = (_owner) }
#define FS_KUNIT_CREATES(_op) \
	FS_KUNIT_SITE(_op, "dir", FS_KUNIT_D1), FS_KUNIT_SITE(_op, "new inode", FS_KUNIT_NEW)
/*
 * chown and chgrp through ->setattr(): the inode's own dquots (one call for
 * both), and the new owner's and the new group's, which dquot_transfer()
 * (or the filesystem) takes.
 */
#define FS_KUNIT_SETATTRS						\
	FS_KUNIT_SITE(FS_KUNIT_CHOWN, "inode", FS_KUNIT_OWNED),			\
	FS_KUNIT_SITE(FS_KUNIT_CHOWN, "new owner", FS_KUNIT_TARGET),		\
	{ .op = FS_KUNIT_CHGRP, .site = "new group", .owner = FS_KUNIT_TARGET,	\
	  .type = GRPQUOTA }

/**
 * struct fs_kunit_ns_suite - what a suite gives the shared cases
 * @fstype: filesystem type, e.g. "ext4"
 * @image: the image to mount
 * @options: mount options
 * @quota_files: quotaon aquota.user and aquota.group after mounting
 * @populate: a bare mkfs image: make the objects and quota files first
 * @in_memory: no device and no image (tmpfs): mounted from nothing and
 *	populated; what "the disk" holds is then what the mount holds, since
 *	it cannot be mounted again to be read back
 */
struct fs_kunit_ns_suite {
	const char *fstype;
	const struct fs_kunit_image *image;
	const char *options;
	bool quota_files;
	bool populate;
	bool in_memory;
};

/**
 * struct fs_kunit_ns - the fixture of one case, its test's ->priv
 * @suite: what was mounted
 * @sb: the mounted superblock
 * @mnt: the mount
 * @obj: the objects of enum fs_kunit_obj, looked up
 * @stub: the ->acquire_dquot() stub on @sb
 */
struct fs_kunit_ns {
	const struct fs_kunit_ns_suite *suite;
	struct super_block *sb;
	struct vfsmount *mnt;
	struct dentry *obj[FS_KUNIT_NR_OBJS];
	struct fs_kunit_quota_stub *stub;
};

const void *fs_kunit_ns_gen_params(const struct fs_kunit_fault *faults, int nr, bool traced,
				   const void *prev, char *desc);
int fs_kunit_ns_init(struct kunit *test, const struct fs_kunit_ns_suite *suite);
int fs_kunit_ns_run(struct kunit *test, enum fs_kunit_op op);
void fs_kunit_ns_unmount(struct kunit *test, struct fs_kunit_ns *ns);
void fs_kunit_ns_op_returns_error(struct kunit *test);
void fs_kunit_ns_failed_op_leaves_disk_unchanged(struct kunit *test);

/**
 * FS_KUNIT_NS_PARAMS() - the parameter generators of a fault table
 * @prefix: prefix##_gen_params() runs over every row of @faults,
 *	prefix##_traced_gen_params() over the rows whose operation leaves a trace
 *	on the disk when it wrongly succeeds (a tmpfile is gone again once
 *	closed; opening a file writes nothing)
 * @faults: the table, an array of struct fs_kunit_fault
 *
 * What KUNIT_ARRAY_PARAM() does for a plain array; each row's description is
 * its operation, call site and errno.
 */
#define FS_KUNIT_NS_PARAMS(prefix, faults)						\
	static const void *prefix##_gen_params(const void *prev, char *desc)		\
	{										\
		return fs_kunit_ns_gen_params(faults, ARRAY_SIZE(faults), false,	\
					      prev, desc);				\
	}										\
	static const void *prefix##_traced_gen_params(const void *prev, char *desc)	\
	{										\
		return fs_kunit_ns_gen_params(faults, ARRAY_SIZE(faults), true,	\
					      prev, desc);				\
	}

/**
 * FS_KUNIT_NS_CASES() - the shared cases, as rows of a suite's case table
 * @prefix: the prefix given to FS_KUNIT_NS_PARAMS()
 *
 * op_returns_dquot_error: each operation returns exactly the error of the
 * ->acquire_dquot() its row fails (fs_kunit_ns_op_returns_error()).
 * failed_op_leaves_disk_unchanged: after that failure no dquot reference is
 * kept, and what the filesystem reads back from the disk is what it read
 * before, quota on (fs_kunit_ns_failed_op_leaves_disk_unchanged()).  Both run on a
 * fresh mount made by fs_kunit_ns_init(), which the suite's ->init calls.
 */
#define FS_KUNIT_NS_CASES(prefix)								\
	{ .name = "op_returns_dquot_error",						\
	  .run_case = fs_kunit_ns_op_returns_error,					\
	  .generate_params = prefix##_gen_params,					\
	  .module_name = KBUILD_MODNAME },						\
	{ .name = "failed_op_leaves_disk_unchanged",					\
	  .run_case = fs_kunit_ns_failed_op_leaves_disk_unchanged,			\
	  .generate_params = prefix##_traced_gen_params,				\
	  .module_name = KBUILD_MODNAME }

#endif /* _KUNIT_FS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit fixtures for filesystem tests: mount a real image from a RAM disk and
 * stub ->acquire_dquot() on the mounted superblock.
 *
 * Every helper registers its own cleanup with the test, so a failed
 * assertion never leaves a mount, a device claim or a stubbed superblock
 * behind for the next case.
 */
#ifndef _KUNIT_FS_H
#define _KUNIT_FS_H

#include <linux/fs.h>
#include <linux/quota.h>

struct kunit;
struct vfsmount;
struct super_block;
struct dentry;

/* One run of non-zero bytes of an image (see images/bin2c.py). */
struct fs_kunit_run {
	u32 offset;
	u32 len;
	const u8 *data;
};

#define FS_KUNIT_RUN(off, array) { .offset = (off), .len = sizeof(array), .data = (array) }

/*
 * A filesystem image: every byte not covered by a run is zero, or, with a
 * @base, the base image's byte (a variant made by editing a few bytes).
 */
struct fs_kunit_image {
	const struct fs_kunit_image *base;
	u32 size;
	const struct fs_kunit_run *runs;
	unsigned int nr_runs;
};

int fs_kunit_write_image(struct kunit *test, const struct fs_kunit_image *image);
u8 *fs_kunit_read_device(struct kunit *test, u32 size);
s64 fs_kunit_first_change(struct kunit *test, const struct fs_kunit_image *image);
int fs_kunit_try_mount(struct kunit *test, const char *fstype,
		       const struct fs_kunit_image *image, int flags,
		       const char *options, struct vfsmount **mnt);
struct vfsmount *fs_kunit_mount(struct kunit *test, const char *fstype,
				const struct fs_kunit_image *image, int flags,
				const char *options);
void fs_kunit_unmount(struct kunit *test, struct vfsmount *mnt);
struct dentry *fs_kunit_lookup(struct kunit *test, struct dentry *dir,
			       const char *name);

#define FS_KUNIT_ANY_ID ((qid_t)-1)

/*
 * A copy of a superblock's dquot_operations whose ->acquire_dquot() counts
 * its calls and returns @err for dquots matching @type (-1: any) and @id
 * (FS_KUNIT_ANY_ID: any), and otherwise calls the real one.  @err == 0
 * passes every call through.
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

static inline void fs_kunit_quota_fail(struct fs_kunit_quota_stub *stub, int err,
				       int type, qid_t id)
{
	stub->err = err;
	stub->type = type;
	stub->id = id;
}

#endif /* _KUNIT_FS_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit fixtures shared by the filesystem test suites: a real image on a RAM
 * disk, mounted with vfs_kern_mount(), and a stub for ->acquire_dquot().
 *
 * Built-in KUnit tests run before userspace and before devtmpfs, so the
 * device node is made here, in rootfs, once the initramfs is unpacked.
 */
#include <kunit/fs.h>
#include <kunit/resource.h>
#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/initrd.h>
#include <linux/kmemleak.h>
#include <linux/major.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/quotaops.h>
#include <linux/mm.h>
#include <linux/slab.h>

#define FS_KUNIT_DEV		MKDEV(RAMDISK_MAJOR, 0)
#define FS_KUNIT_DEV_PATH	"/fs_kunit_ram0"

/*
 * Kernels with kmemleak: blame a leak on the case that made it.  kmemleak
 * names the pid that allocated each leaked object, and every case runs in a
 * thread of its own, so a case says which pid it has; fs_kunit_leak_scan()
 * then has kmemleak look for leaks (kmemleak.verbose=1 prints each one).
 */
static void fs_kunit_leak_mark(struct kunit *test)
{
	static pid_t marked;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK) || marked == current->pid)
		return;
	marked = current->pid;
	kunit_info(test, "kmemleak: case pid %d, jiffies %lu", current->pid, jiffies);
}

/**
 * fs_kunit_leak_scan() - kmemleak scans, for a suite's ->suite_exit()
 * @suite: the suite that ended
 *
 * kmemleak reports an object only when it is five seconds old at the start
 * of a scan and its contents were the same in the scan before (a first
 * scan only records them), so a leak of the suite's last case needs two
 * scans, the second five seconds after the case.  Without kmemleak (or with
 * kmemleak turned off at boot) this does nothing.
 */
void fs_kunit_leak_scan(struct kunit_suite *suite)
{
	unsigned long old_enough = jiffies + msecs_to_jiffies(5500);
	int err;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		return;
	err = kmemleak_scan_for_kunit();
	if (!err) {
		if (time_before(jiffies, old_enough))
			schedule_timeout_uninterruptible(old_enough - jiffies);
		err = kmemleak_scan_for_kunit();
	}
	if (err)
		pr_warn("%s: no kmemleak scan: %pe\n", suite->name, ERR_PTR(err));
	else
		pr_info("%s: kmemleak scan done\n", suite->name);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_leak_scan);

/* Our exclusive claim on the RAM disk; a mounted filesystem holds its own. */
static int fs_kunit_holder;

/*
 * Open the RAM disk exclusively.  A mount dropped from a kernel thread is
 * torn down later by a work item, so the device may still be claimed by the
 * previous case's filesystem for a moment: wait for it, within reason.
 */
static struct file *fs_kunit_open_device(blk_mode_t mode)
{
	struct file *file;
	int i;

	for (i = 0; i < 500; i++) {
		file = bdev_file_open_by_dev(FS_KUNIT_DEV, mode, &fs_kunit_holder, NULL);
		if (PTR_ERR_OR_ZERO(file) != -EBUSY)
			break;
		msleep(20);
	}
	return file;
}

KUNIT_DEFINE_ACTION_WRAPPER(fs_kunit_kvfree, kvfree, const void *);

/* Device-sized buffers are too big for kunit_kzalloc(). */
static void *fs_kunit_kvzalloc(struct kunit *test, size_t size)
{
	void *buf = kvzalloc(size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_kvfree, buf), 0);
	return buf;
}

static int fs_kunit_make_node(void)
{
	struct dentry *dentry;
	struct path path;
	int err;

	/* Rootfs is being filled asynchronously until then. */
	wait_for_initramfs();
	dentry = kern_path_create(AT_FDCWD, FS_KUNIT_DEV_PATH, &path, 0);
	if (IS_ERR(dentry))
		return PTR_ERR(dentry) == -EEXIST ? 0 : PTR_ERR(dentry);
	err = vfs_mknod(mnt_idmap(path.mnt), d_inode(path.dentry), dentry,
			S_IFBLK | 0600, FS_KUNIT_DEV);
	done_path_create(&path, dentry);
	return err;
}

static ssize_t fs_kunit_write_runs(struct file *file, const struct fs_kunit_image *image)
{
	unsigned int i;
	ssize_t ret = 0;

	if (image->base)
		ret = fs_kunit_write_runs(file, image->base);
	for (i = 0; !ret && i < image->nr_runs; i++) {
		loff_t pos = image->runs[i].offset;

		ret = kernel_write(file, image->runs[i].data, image->runs[i].len, &pos);
		ret = ret < 0 ? ret : (ret == image->runs[i].len ? 0 : -EIO);
	}
	return ret;
}

/*
 * brd frees the pages of a discarded range, which then read as zeros: much
 * cheaper than writing zeros over a device sized for the largest image.
 * The page cache is dropped too, or it would keep the old contents.
 */
static int fs_kunit_zero_device(struct file *file)
{
	struct block_device *bdev = file_bdev(file);
	loff_t pos = 0, size = bdev_nr_bytes(bdev);
	ssize_t ret;
	void *zero;

	ret = sync_blockdev(bdev);
	if (ret)
		return ret;
	if (!blkdev_issue_discard(bdev, 0, bdev_nr_sectors(bdev), GFP_KERNEL)) {
		invalidate_bdev(bdev);
		return 0;
	}
	zero = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!zero)
		return -ENOMEM;
	while (!ret && pos < size) {
		ret = kernel_write(file, zero, min_t(loff_t, PAGE_SIZE, size - pos), &pos);
		ret = ret < 0 ? ret : 0;
	}
	kfree(zero);
	return ret;
}

/**
 * fs_kunit_write_image() - make the RAM disk hold exactly @image
 * @test: the test
 * @image: the image; the rest of the device is zeroed
 *
 * Return: 0 or a negative error; nothing stays open either way.
 */
int fs_kunit_write_image(struct kunit *test, const struct fs_kunit_image *image)
{
	struct file *file;
	ssize_t ret;

	/* Every case starts by writing its image. */
	fs_kunit_leak_mark(test);
	file = fs_kunit_open_device(BLK_OPEN_READ | BLK_OPEN_WRITE);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = image->size > bdev_nr_bytes(file_bdev(file)) ? -ENOSPC : 0;
	if (!ret)
		ret = fs_kunit_zero_device(file);
	if (!ret)
		ret = fs_kunit_write_runs(file, image);
	if (!ret)
		ret = sync_blockdev(file_bdev(file));
	/* bdev_fput() lets go of the claim now, not when the file is freed. */
	bdev_fput(file);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_write_image);

/**
 * fs_kunit_read_device() - the first @size bytes of the RAM disk
 * @test: the test; the buffer is freed with it
 * @size: how many bytes
 *
 * Reads through the block device's page cache, which a mounted filesystem
 * writes through too, so it may be called while mounted.  Asserts on failure.
 *
 * Return: the bytes, in a buffer freed with the test.
 */
u8 *fs_kunit_read_device(struct kunit *test, u32 size)
{
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;
	u8 *buf;

	buf = fs_kunit_kvzalloc(test, size);
	file = bdev_file_open_by_dev(FS_KUNIT_DEV, BLK_OPEN_READ, NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	ret = kernel_read(file, buf, size, &pos);
	fput(file);
	KUNIT_ASSERT_EQ(test, ret, (ssize_t)size);
	return buf;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_read_device);

static void fs_kunit_apply_runs(u8 *buf, const struct fs_kunit_image *image)
{
	unsigned int i;

	if (image->base)
		fs_kunit_apply_runs(buf, image->base);
	for (i = 0; i < image->nr_runs; i++)
		memcpy(buf + image->runs[i].offset, image->runs[i].data, image->runs[i].len);
}

/**
 * fs_kunit_image_bytes() - @image as one buffer of @image->size bytes
 * @test: the test; the buffer is freed with it
 * @image: the image
 *
 * Return: the bytes, in a buffer freed with the test.
 */
u8 *fs_kunit_image_bytes(struct kunit *test, const struct fs_kunit_image *image)
{
	u8 *buf = fs_kunit_kvzalloc(test, image->size);

	fs_kunit_apply_runs(buf, image);
	return buf;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_image_bytes);

/**
 * fs_kunit_first_change() - where the RAM disk no longer holds @image
 * @test: the test
 * @image: the image that was written
 *
 * Return: the offset of the first byte that differs, or -1 if none does.
 */
s64 fs_kunit_first_change(struct kunit *test, const struct fs_kunit_image *image)
{
	u8 *want = fs_kunit_image_bytes(test, image);
	u8 *have = fs_kunit_read_device(test, image->size);
	u32 i;

	for (i = 0; i < image->size; i++)
		if (want[i] != have[i])
			return i;
	return -1;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_first_change);

struct fs_kunit_features {
	struct request_queue *q;
	blk_features_t stable;
};

static void fs_kunit_restore_features(void *data)
{
	struct fs_kunit_features *saved = data;
	struct queue_limits lim = queue_limits_start_update(saved->q);

	lim.features = (lim.features & ~BLK_FEAT_STABLE_WRITES) | saved->stable;
	if (queue_limits_commit_update(saved->q, &lim))
		pr_warn("fs_kunit: cannot restore the stable-writes feature of the RAM disk\n");
}

/**
 * fs_kunit_set_stable_writes() - make the RAM disk need stable pages, or not
 * @test: the test; the feature is restored when it ends
 * @stable: whether a page must not change while it is written back
 *
 * Call it before mounting: a filesystem learns it at mount time.
 */
void fs_kunit_set_stable_writes(struct kunit *test, bool stable)
{
	struct fs_kunit_features *saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);
	struct queue_limits lim;
	struct file *file;

	KUNIT_ASSERT_NOT_NULL(test, saved);
	file = fs_kunit_open_device(BLK_OPEN_READ);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	saved->q = bdev_get_queue(file_bdev(file));
	bdev_fput(file);
	lim = queue_limits_start_update(saved->q);
	saved->stable = lim.features & BLK_FEAT_STABLE_WRITES;
	if (stable)
		lim.features |= BLK_FEAT_STABLE_WRITES;
	else
		lim.features &= ~BLK_FEAT_STABLE_WRITES;
	KUNIT_ASSERT_EQ(test, queue_limits_commit_update(saved->q, &lim), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_restore_features, saved),
			0);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_set_stable_writes);

static void fs_kunit_unmount_action(void *data)
{
	struct vfsmount *mnt = data;
	struct file *file;

	mntput(mnt);
	/* Unmount finished once the filesystem has given the device back. */
	file = fs_kunit_open_device(BLK_OPEN_READ);
	if (IS_ERR(file))
		pr_warn("fs_kunit: " FS_KUNIT_DEV_PATH " still busy after unmount: %ld\n",
			PTR_ERR(file));
	else
		bdev_fput(file);
}

/**
 * fs_kunit_try_mount_device() - mount what the RAM disk holds now
 * @test: the test; the mount is dropped when it ends
 * @fstype: filesystem type, e.g. "ext4"
 * @flags: SB_* flags, e.g. SB_RDONLY
 * @options: mount options ("" for none)
 * @mnt: the mount, when 0 is returned
 *
 * For a second mount of an image a test changed.
 *
 * Return: 0 or the error of the mount.
 */
int fs_kunit_try_mount_device(struct kunit *test, const char *fstype, int flags,
			      const char *options, struct vfsmount **mnt)
{
	struct file_system_type *type;
	struct vfsmount *m;
	char *opts;
	int err;

	type = get_fs_type(fstype);
	KUNIT_ASSERT_NOT_NULL_MSG(test, type, "%s is not built in", fstype);
	/* Option parsing writes into the string. */
	opts = kunit_kstrdup(test, options, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, opts);
	m = vfs_kern_mount(type, flags, FS_KUNIT_DEV_PATH, opts);
	module_put(type->owner);
	if (IS_ERR(m))
		return PTR_ERR(m);
	err = kunit_add_action_or_reset(test, fs_kunit_unmount_action, m);
	KUNIT_ASSERT_EQ(test, err, 0);
	*mnt = m;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_try_mount_device);

/**
 * fs_kunit_try_mount() - write @image to the RAM disk and mount it
 * @test: the test; the mount is dropped when it ends
 * @fstype: filesystem type, e.g. "ext4"
 * @image: the image
 * @flags: SB_* flags, e.g. SB_RDONLY
 * @options: mount options ("" for none)
 * @mnt: the mount, when 0 is returned
 *
 * For tests that expect a mount to fail.
 *
 * Return: 0 or the error of the mount.
 */
int fs_kunit_try_mount(struct kunit *test, const char *fstype,
		       const struct fs_kunit_image *image, int flags,
		       const char *options, struct vfsmount **mnt)
{
	int err;

	err = fs_kunit_make_node();
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cannot make " FS_KUNIT_DEV_PATH);
	err = fs_kunit_write_image(test, image);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cannot write the image to the RAM disk");
	return fs_kunit_try_mount_device(test, fstype, flags, options, mnt);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_try_mount);

/**
 * fs_kunit_mount() - fs_kunit_try_mount() that asserts success
 * @test: the test; the mount is dropped when it ends
 * @fstype: filesystem type, e.g. "ext4"
 * @image: the image
 * @flags: SB_* flags, e.g. SB_RDONLY
 * @options: mount options ("" for none)
 *
 * Return: the mount.
 */
struct vfsmount *fs_kunit_mount(struct kunit *test, const char *fstype,
				const struct fs_kunit_image *image, int flags,
				const char *options)
{
	struct vfsmount *mnt = NULL;
	int err;

	err = fs_kunit_try_mount(test, fstype, image, flags, options, &mnt);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "mounting the %s image failed", fstype);
	return mnt;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_mount);

/**
 * fs_kunit_unmount() - unmount now and wait until the device is released
 * @test: the test that mounted @mnt
 * @mnt: from fs_kunit_mount() or fs_kunit_try_mount_device()
 */
void fs_kunit_unmount(struct kunit *test, struct vfsmount *mnt)
{
	kunit_release_action(test, fs_kunit_unmount_action, mnt);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_unmount);

KUNIT_DEFINE_ACTION_WRAPPER(fs_kunit_dput, dput, struct dentry *);

/**
 * fs_kunit_lookup() - look @name up in @dir
 * @test: the test; the reference is dropped when it ends
 * @dir: the directory
 * @name: the name
 *
 * Return: the dentry, which may be negative.
 */
struct dentry *fs_kunit_lookup(struct kunit *test, struct dentry *dir, const char *name)
{
	struct dentry *dentry;

	dentry = lookup_one_len_unlocked(name, dir, strlen(name));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dentry);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_dput, dentry), 0);
	return dentry;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_lookup);

/* Suites without quota (block_stable_writes) build these fixtures too. */
#if IS_ENABLED(CONFIG_QUOTA)
static int fs_kunit_acquire_dquot(struct dquot *dquot)
{
	/* dquot_operations has no context pointer: the copy is embedded. */
	struct fs_kunit_quota_stub *stub =
		container_of(dquot->dq_sb->dq_op, struct fs_kunit_quota_stub, ops);
	qid_t id = from_kqid(&init_user_ns, dquot->dq_id);

	stub->calls++;
	if (stub->err && (stub->type < 0 || stub->type == dquot->dq_id.type) &&
	    (stub->id == FS_KUNIT_ANY_ID || stub->id == id)) {
		stub->failed++;
		return stub->err;
	}
	return stub->orig->acquire_dquot(dquot);
}

static void fs_kunit_restore_dquot_ops(void *data)
{
	struct fs_kunit_quota_stub *stub = data;

	stub->sb->dq_op = stub->orig;
}

/**
 * fs_kunit_stub_acquire_dquot() - give @sb a ->acquire_dquot() the test controls
 * @test: the test; the original operations come back when it ends
 * @sb: a mounted superblock with quota operations
 *
 * The stub passes every call through until fs_kunit_quota_fail() is called.
 *
 * Return: the stub.
 */
struct fs_kunit_quota_stub *fs_kunit_stub_acquire_dquot(struct kunit *test,
							struct super_block *sb)
{
	struct fs_kunit_quota_stub *stub;

	KUNIT_ASSERT_NOT_NULL(test, sb->dq_op);
	stub = kunit_kzalloc(test, sizeof(*stub), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stub);
	stub->ops = *sb->dq_op;
	stub->ops.acquire_dquot = fs_kunit_acquire_dquot;
	stub->orig = sb->dq_op;
	stub->sb = sb;
	stub->type = -1;
	stub->id = FS_KUNIT_ANY_ID;
	sb->dq_op = &stub->ops;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_restore_dquot_ops, stub), 0);
	return stub;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_stub_acquire_dquot);

/**
 * fs_kunit_unstub_acquire_dquot() - give the superblock its own operations back now
 * @test: the test that made @stub
 * @stub: from fs_kunit_stub_acquire_dquot()
 *
 * Before an unmount in the middle of a test: the stub must not outlive its
 * superblock.
 */
void fs_kunit_unstub_acquire_dquot(struct kunit *test, struct fs_kunit_quota_stub *stub)
{
	kunit_release_action(test, fs_kunit_restore_dquot_ops, stub);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_unstub_acquire_dquot);
#endif /* CONFIG_QUOTA */

MODULE_DESCRIPTION("KUnit fixtures for filesystem tests");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

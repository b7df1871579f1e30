// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit fixtures shared by the filesystem test suites: a real image on a RAM
 * disk of the test's own, mounted with vfs_kern_mount(), and a stub for
 * ->acquire_dquot().
 */
#include <kunit/fs.h>
#include <kunit/resource.h>
#include <kunit/test.h>
#include <kunit/test-bug.h>
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/buffer_head.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/initrd.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/quotaops.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>
#include <linux/xz.h>

/*
 * Kernels with kmemleak: every case runs in a thread of its own, and says
 * which pid it has, so that each leak the suite's last scans print
 * (kmemleak_kunit_suite_exit(), with kmemleak.verbose=1) can be blamed on
 * the case that made it.
 */
static void fs_kunit_leak_mark(struct kunit *test)
{
	static pid_t marked;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK) || marked == current->pid)
		return;
	marked = current->pid;
	kunit_info(test, KMEMLEAK_KUNIT_CASE, current->pid, jiffies);
}

/*
 * Device-sized buffers (a RAM disk's contents, an image's bytes) are too big
 * for kunit_kzalloc(), so kunit cannot tell whether they were freed.  They
 * are counted until they are: MODE=modules reads the count before a test
 * module is loaded and after it is unloaded (harness/modules-init.sh), from
 * /sys, since its kernel has no /proc and so no vmallocinfo
 * (kunitconfig.noproc).
 */
static atomic_t fs_kunit_buffers = ATOMIC_INIT(0);

static void *fs_kunit_count(void *buf)
{
	if (buf)
		atomic_inc(&fs_kunit_buffers);
	return buf;
}

static void fs_kunit_free(const void *buf)
{
	if (buf)
		atomic_dec(&fs_kunit_buffers);
	kvfree(buf);
}

static int fs_kunit_get_count(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops fs_kunit_count_ops = {
	.get = fs_kunit_get_count,
};
module_param_cb(buffers, &fs_kunit_count_ops, &fs_kunit_buffers, 0444);
MODULE_PARM_DESC(buffers, "device-sized buffers of the fixtures not freed yet");

#ifdef CONFIG_QUOTA
/* The dquots allocated, as fs.quota.allocated_dquots has it, for a kernel without sysctl. */
static int fs_kunit_get_dquots(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n",
			  percpu_counter_sum_positive(&dqstats.counter[DQST_ALLOC_DQUOTS]));
}

static const struct kernel_param_ops fs_kunit_dquots_ops = {
	.get = fs_kunit_get_dquots,
};
module_param_cb(allocated_dquots, &fs_kunit_dquots_ops, NULL, 0444);
MODULE_PARM_DESC(allocated_dquots, "dquots allocated");
#endif

KUNIT_DEFINE_ACTION_WRAPPER(fs_kunit_kvfree, fs_kunit_free, const void *);

static void *fs_kunit_kvzalloc(struct kunit *test, size_t size)
{
	void *buf = fs_kunit_count(kvzalloc(size, GFP_KERNEL));

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_kvfree, buf), 0);
	return buf;
}

/*
 * Each test gets a RAM disk of its own, made the size of the first image it
 * writes and removed when the test ends.  A test loaded on a running system
 * then touches no device, node or memory that it did not make, and a
 * filesystem that needs a big device gets one of exactly its image's size.
 */
struct fs_kunit_disk {
	struct kunit_resource res;
	struct gendisk *disk;	/* NULL until the first image is written */
	void *data;		/* the disk's contents */
	u32 size;
	bool stable;		/* BLK_FEAT_STABLE_WRITES */
	bool node_made;		/* made in rootfs by us, removed with the disk */
	struct file *keep;	/* open from the first mount on: see fs_kunit_do_mount() */
	const void *sb_key;	/* the last mount's: see fs_kunit_refused_mount_inodes() */
	char path[DISK_NAME_LEN + 8];
};

#define FS_KUNIT_DISK	"fs_kunit_disk"

static atomic_t fs_kunit_disk_ids = ATOMIC_INIT(0);

static void fs_kunit_submit_bio(struct bio *bio)
{
	struct fs_kunit_disk *d = bio->bi_bdev->bd_disk->private_data;
	u64 pos = (u64)bio->bi_iter.bi_sector << SECTOR_SHIFT;
	struct bvec_iter iter;
	struct bio_vec bv;

	/* Flushes have no data and were completed before they got here. */
	if (bio_op(bio) != REQ_OP_READ && bio_op(bio) != REQ_OP_WRITE) {
		bio_io_error(bio);
		return;
	}
	/* The superblock reading us holds the claim while it reads. */
	if (READ_ONCE(bio->bi_bdev->bd_holder_ops) == &fs_holder_ops)
		WRITE_ONCE(d->sb_key, READ_ONCE(bio->bi_bdev->bd_holder));
	/* The block layer has checked the range against the capacity. */
	bio_for_each_segment(bv, bio, iter) {
		if (op_is_write(bio_op(bio)))
			memcpy_from_bvec(d->data + pos, &bv);
		else
			memcpy_to_bvec(&bv, d->data + pos);
		pos += bv.bv_len;
	}
	bio_endio(bio);
}

static const struct block_device_operations fs_kunit_disk_ops = {
	.owner = THIS_MODULE,
	.submit_bio = fs_kunit_submit_bio,
};

/* Our exclusive claim on the disk; a mounted filesystem holds its own. */
static int fs_kunit_holder;

/*
 * How long a filesystem may keep the device after its unmount was asked
 * for.  A mount dropped from a kernel thread is torn down by a work item
 * (delayed_mntput_work), which lets go of the device within milliseconds
 * here; a wait over a second is logged.  The limit only bounds a device
 * that is never released, so it is generous enough for a machine many
 * times slower than ours.
 */
#define FS_KUNIT_RELEASE_TIMEOUT_MS	60000

/* Open the disk exclusively, once the filesystem has let go of it. */
static struct file *fs_kunit_open_device(struct fs_kunit_disk *d, blk_mode_t mode)
{
	unsigned long start = jiffies;
	struct file *file;

	for (;;) {
		file = bdev_file_open_by_dev(disk_devt(d->disk), mode, &fs_kunit_holder, NULL);
		if (PTR_ERR_OR_ZERO(file) != -EBUSY ||
		    time_after(jiffies, start + msecs_to_jiffies(FS_KUNIT_RELEASE_TIMEOUT_MS)))
			break;
		msleep(20);
	}
	if (time_after(jiffies, start + HZ))
		pr_info("fs_kunit: %s released after %u ms\n", d->path,
			jiffies_to_msecs(jiffies - start));
	return file;
}

static void fs_kunit_remove_node(struct fs_kunit_disk *d)
{
	const char *name = d->path + 1;
	struct dentry *dentry;
	struct path root;

	if (!d->node_made || kern_path("/", 0, &root))
		return;
	inode_lock_nested(d_inode(root.dentry), I_MUTEX_PARENT);
	dentry = lookup_one_len(name, root.dentry, strlen(name));
	if (!IS_ERR(dentry)) {
		if (d_is_positive(dentry) &&
		    vfs_unlink(mnt_idmap(root.mnt), d_inode(root.dentry), dentry, NULL))
			pr_warn("fs_kunit: cannot remove %s\n", d->path);
		dput(dentry);
	}
	inode_unlock(d_inode(root.dentry));
	path_put(&root);
}

static void fs_kunit_disk_free(struct kunit_resource *res)
{
	struct fs_kunit_disk *d = res->data;

	if (d->keep)
		bdev_fput(d->keep);
	fs_kunit_remove_node(d);
	if (d->disk) {
		del_gendisk(d->disk);
		put_disk(d->disk);
	}
	fs_kunit_free(d->data);
	/* d itself is the test's (kunit_kzalloc()): kunit reads d->res after this. */
}

/* The test's disk, made (without a device yet) on first use. */
static struct fs_kunit_disk *fs_kunit_disk(struct kunit *test)
{
	struct kunit_resource *res = kunit_find_named_resource(test, FS_KUNIT_DISK);
	struct fs_kunit_disk *d;

	if (res) {
		d = res->data;
		kunit_put_resource(res);
		return d;
	}
	/* Added first, so freed after the resource embedded in it. */
	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	KUNIT_ASSERT_EQ(test, kunit_add_named_resource(test, NULL, fs_kunit_disk_free, &d->res,
						       FS_KUNIT_DISK, d), 0);
	return d;
}

/*
 * A path to the disk, for vfs_kern_mount().  On a running system devtmpfs
 * made /dev/<name> when the disk was added.  Built-in tests run before
 * devtmpfs is mounted: the node is made in rootfs, and removed with the disk.
 */
static void fs_kunit_find_node(struct kunit *test, struct fs_kunit_disk *d)
{
	struct dentry *dentry;
	struct path path;
	bool ours = false;
	int err;

	snprintf(d->path, sizeof(d->path), "/dev/%s", d->disk->disk_name);
	if (!kern_path(d->path, LOOKUP_FOLLOW, &path)) {
		ours = S_ISBLK(d_inode(path.dentry)->i_mode) &&
		       d_inode(path.dentry)->i_rdev == disk_devt(d->disk);
		path_put(&path);
	}
	if (ours)
		return;
	if (system_state == SYSTEM_RUNNING)
		kunit_skip(test, "no %s: devtmpfs is not mounted on /dev", d->path);
	/* Rootfs is being filled asynchronously until then. */
	wait_for_initramfs();
	snprintf(d->path, sizeof(d->path), "/%s", d->disk->disk_name);
	dentry = kern_path_create(AT_FDCWD, d->path, &path, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, dentry, "cannot make %s", d->path);
	err = vfs_mknod(mnt_idmap(path.mnt), d_inode(path.dentry), dentry,
			S_IFBLK | 0600, disk_devt(d->disk));
	done_path_create(&path, dentry);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cannot make %s", d->path);
	d->node_made = true;
}

static void fs_kunit_add_disk(struct kunit *test, struct fs_kunit_disk *d, u32 size)
{
	struct queue_limits lim = {
		.physical_block_size = PAGE_SIZE,
		.features = BLK_FEAT_SYNCHRONOUS | BLK_FEAT_NOWAIT |
			    (d->stable ? BLK_FEAT_STABLE_WRITES : 0),
	};
	struct gendisk *disk;

	/* Leave the running system most of what it has. */
	if (size > (si_mem_available() << PAGE_SHIFT) / 4)
		kunit_skip(test, "a %u KiB RAM disk would take over a quarter of free memory",
			   size >> 10);
	d->data = fs_kunit_count(vzalloc(size));
	if (!d->data)
		kunit_skip(test, "no memory for a %u KiB RAM disk", size >> 10);
	d->size = size;
	disk = blk_alloc_disk(&lim, NUMA_NO_NODE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, disk);
	disk->fops = &fs_kunit_disk_ops;
	disk->private_data = d;
	disk->flags |= GENHD_FL_NO_PART;
	snprintf(disk->disk_name, DISK_NAME_LEN, "fs_kunit%d",
		 atomic_inc_return(&fs_kunit_disk_ids) - 1);
	set_capacity(disk, size >> SECTOR_SHIFT);
	if (add_disk(disk)) {
		put_disk(disk);
		KUNIT_FAIL_AND_ABORT(test, "cannot add the RAM disk");
	}
	d->disk = disk;
	fs_kunit_find_node(test, d);
}

/* An xz stream into @buf, exactly @size bytes of it. */
static int fs_kunit_unxz(u8 *buf, u32 size, const u8 *in, u32 len)
{
	struct xz_buf b = { .in = in, .in_size = len, .out = buf, .out_size = size };
	struct xz_dec *xz;
	enum xz_ret ret;

	/* Single-call mode: no dictionary, the output buffer is the window. */
	xz = xz_dec_init(XZ_SINGLE, 0);
	if (!xz)
		return -ENOMEM;
	ret = xz_dec_run(xz, &b);
	xz_dec_end(xz);
	return ret == XZ_STREAM_END && b.out_pos == size ? 0 : -EINVAL;
}

/* @image's bytes into @buf, zeroed, of @image->size bytes. */
static int fs_kunit_unpack(u8 *buf, const struct fs_kunit_image *image)
{
	unsigned int i;
	int err = 0;

	if (image->base)
		err = fs_kunit_unpack(buf, image->base);
	for (i = 0; i < image->nr_xz && !err; i++)
		err = fs_kunit_unxz(buf + image->xz[i].offset, image->xz[i].len,
				    image->xz[i].xz, image->xz[i].xz_len);
	if (err)
		return err;
	for (i = 0; i < image->nr_runs; i++)
		memcpy(buf + image->runs[i].offset, image->runs[i].data, image->runs[i].len);
	return 0;
}

/**
 * fs_kunit_write_image() - make the test's RAM disk hold exactly @image
 * @test: the test
 * @image: the image
 *
 * The first image a test writes makes its RAM disk, of the image's size; a
 * later image must not be bigger.  The case is skipped if the memory for the
 * disk cannot be had.
 *
 * Return: 0 or a negative error; nothing stays open either way.
 */
int fs_kunit_write_image(struct kunit *test, const struct fs_kunit_image *image)
{
	struct fs_kunit_disk *d = fs_kunit_disk(test);
	struct file *file;
	int ret;

	/* Every case starts by writing its image. */
	fs_kunit_leak_mark(test);
	if (!d->disk)
		fs_kunit_add_disk(test, d, image->size);
	if (image->size > d->size)
		return -ENOSPC;
	/* The claim keeps filesystems off while the contents change under the cache. */
	file = fs_kunit_open_device(d, BLK_OPEN_READ | BLK_OPEN_WRITE);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = sync_blockdev(file_bdev(file));
	if (!ret) {
		memset(d->data, 0, d->size);
		ret = fs_kunit_unpack(d->data, image);
		invalidate_bdev(file_bdev(file));
	}
	/* bdev_fput() lets go of the claim now, not when the file is freed. */
	bdev_fput(file);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_write_image);

/**
 * fs_kunit_read_device() - the first @size bytes of the test's RAM disk
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
	struct fs_kunit_disk *d = fs_kunit_disk(test);
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;
	u8 *buf;

	KUNIT_ASSERT_NOT_NULL_MSG(test, d->disk, "no image was written");
	buf = fs_kunit_kvzalloc(test, size);
	file = bdev_file_open_by_dev(disk_devt(d->disk), BLK_OPEN_READ, NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	ret = kernel_read(file, buf, size, &pos);
	/* Not fput(): from a kernel thread it is deferred, past the disk's removal. */
	bdev_fput(file);
	KUNIT_ASSERT_EQ(test, ret, (ssize_t)size);
	return buf;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_read_device);

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

	KUNIT_ASSERT_EQ_MSG(test, fs_kunit_unpack(buf, image), 0, "a corrupt image");
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

/**
 * fs_kunit_set_stable_writes() - make the RAM disk need stable pages, or not
 * @test: the test
 * @stable: whether a page must not change while it is written back
 *
 * Call it before mounting: a filesystem learns it at mount time.
 */
void fs_kunit_set_stable_writes(struct kunit *test, bool stable)
{
	struct fs_kunit_disk *d = fs_kunit_disk(test);
	struct queue_limits lim;

	d->stable = stable;
	if (!d->disk)
		return;	/* fs_kunit_add_disk() sets it */
	lim = queue_limits_start_update(d->disk->queue);
	if (stable)
		lim.features |= BLK_FEAT_STABLE_WRITES;
	else
		lim.features &= ~BLK_FEAT_STABLE_WRITES;
	KUNIT_ASSERT_EQ(test, queue_limits_commit_update(d->disk->queue, &lim), 0);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_set_stable_writes);

static struct fs_kunit_disk *fs_kunit_find_disk(struct kunit *test)
{
	struct kunit_resource *res;
	struct fs_kunit_disk *d;

	res = test ? kunit_find_named_resource(test, FS_KUNIT_DISK) : NULL;
	if (!res)
		return NULL;
	d = res->data;
	kunit_put_resource(res);
	return d->disk ? d : NULL;
}

/* Which blocks of the device's cache a buffer_head still holds, and how often. */
static void fs_kunit_report_held(struct kunit *test, struct fs_kunit_disk *d,
				 struct address_space *mapping, unsigned long held)
{
	pgoff_t index, last = (d->size - 1) >> PAGE_SHIFT;
	struct buffer_head *bh, *head;
	struct folio *folio;

	KUNIT_FAIL(test, "%s: %lu pages of its cache still held after the filesystem let go",
		   d->path, held);
	for (index = 0; index <= last; index++) {
		folio = filemap_get_folio(mapping, index);
		if (IS_ERR(folio))
			continue;
		head = folio_buffers(folio);
		bh = head;
		do {
			if (bh && atomic_read(&bh->b_count))
				kunit_info(test, "%s: block %llu held by %d buffer_head references\n",
					   d->path, (unsigned long long)bh->b_blocknr,
					   atomic_read(&bh->b_count));
			bh = bh ? bh->b_this_page : NULL;
		} while (bh && bh != head);
		if (!head)
			kunit_info(test, "%s: page %lu held without buffers (%d references)\n",
				   d->path, index, folio_ref_count(folio) - 1);
		folio_put(folio);
	}
}

/*
 * Once a filesystem has given the device back (unmounted, or refused to
 * mount), nothing of it may be left: a device still claimed, or a buffer_head
 * it did not brelse(), which pins its folio in the device's cache
 * (try_to_free_buffers() refuses it) and which nothing else would notice.
 * Either fails the case that mounted, not the next one.
 */
static void fs_kunit_expect_device_released(struct kunit *test)
{
	struct fs_kunit_disk *d = fs_kunit_find_disk(test);
	struct block_device *bdev;
	unsigned long held;
	struct file *file;

	if (!d)
		return;
	file = fs_kunit_open_device(d, BLK_OPEN_READ);
	if (IS_ERR(file)) {
		KUNIT_FAIL(test, "%s still busy %d s after unmount: %pe", d->path,
			   FS_KUNIT_RELEASE_TIMEOUT_MS / 1000, file);
		return;
	}
	bdev = file_bdev(file);
	sync_blockdev(bdev);
	invalidate_bdev(bdev);
	held = bdev->bd_mapping->nrpages;
	if (held)
		fs_kunit_report_held(test, d, bdev->bd_mapping, held);
	bdev_fput(file);
}

static void fs_kunit_unmount_action(void *data)
{
	mntput(data);
	fs_kunit_expect_device_released(kunit_get_current_test());
}

/* Mount @source as @fstype; the mount is dropped when the test ends. */
static int fs_kunit_do_mount(struct kunit *test, const char *fstype, int flags,
			     const char *source, const char *options, struct vfsmount **mnt)
{
	struct file_system_type *type;
	struct fs_kunit_disk *d;
	struct vfsmount *m;
	char *opts;
	int err;

	type = get_fs_type(fstype);
	if (!type)
		kunit_skip(test, "filesystem %s is not available", fstype);
	/*
	 * The filesystem's last close of the device would drop the device's
	 * cache (kill_bdev()), and with it every folio a buffer_head it did not
	 * release still pins: held open here, the cache stays for
	 * fs_kunit_expect_device_released() to look at.
	 */
	d = fs_kunit_find_disk(test);
	if (d && !d->keep) {
		d->keep = bdev_file_open_by_dev(disk_devt(d->disk), BLK_OPEN_READ, NULL, NULL);
		if (IS_ERR(d->keep)) {
			err = PTR_ERR(d->keep);
			d->keep = NULL;
			module_put(type->owner);
			KUNIT_FAIL_AND_ABORT(test, "opening %s: %pe", d->path, ERR_PTR(err));
		}
	}
	/* Option parsing writes into the string. */
	opts = kunit_kstrdup(test, options, GFP_KERNEL);
	if (!opts)
		module_put(type->owner);
	KUNIT_ASSERT_NOT_NULL(test, opts);
	if (d)
		WRITE_ONCE(d->sb_key, NULL);
	m = vfs_kern_mount(type, flags, source, opts);
	module_put(type->owner);
	if (IS_ERR(m)) {
		fs_kunit_expect_device_released(test);
		return PTR_ERR(m);
	}
	err = kunit_add_action_or_reset(test, fs_kunit_unmount_action, m);
	KUNIT_ASSERT_EQ(test, err, 0);
	*mnt = m;
	return 0;
}

/**
 * fs_kunit_refused_mount_inodes() - inodes a refused mount left in the cache
 * @test: the test whose last mount of its RAM disk was refused
 * @max_ino: one past the highest inode number the filesystem gives
 *
 * An inode a refused mount forgot to put is seen by nothing else: it stays
 * in the inode hash, so kmemleak finds it referenced, and the VFS looks for
 * busy inodes only when a mounted filesystem is shut down.  It is found by
 * its superblock's address, remembered from the mount's reads of the disk,
 * and only compared, never followed: the superblock is gone.  That address
 * is freed an RCU grace period after the refusal at the earliest, so another
 * superblock there with an inode of such a number is not a worry.
 *
 * Return: how many inodes of the refused mount's superblock, numbered below
 * @max_ino, are in the inode cache.
 */
unsigned long fs_kunit_refused_mount_inodes(struct kunit *test, unsigned long max_ino)
{
	struct fs_kunit_disk *d = fs_kunit_disk(test);
	struct super_block *sb = (struct super_block *)READ_ONCE(d->sb_key);
	unsigned long ino, n = 0;

	KUNIT_ASSERT_NOT_NULL_MSG(test, sb, "the refused mount read nothing from %s", d->path);
	rcu_read_lock();
	for (ino = 0; ino < max_ino; ino++)
		if (find_inode_by_ino_rcu(sb, ino))
			n++;
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_refused_mount_inodes);

/**
 * fs_kunit_try_mount_device() - mount what the test's RAM disk holds now
 * @test: the test; the mount is dropped when it ends
 * @fstype: filesystem type, e.g. "ext4"
 * @flags: SB_* flags, e.g. SB_RDONLY
 * @options: mount options ("" for none)
 * @mnt: the mount, when 0 is returned
 *
 * For a second mount of an image a test changed.  The case is skipped if
 * @fstype is not available.
 *
 * Return: 0 or the error of the mount.
 */
int fs_kunit_try_mount_device(struct kunit *test, const char *fstype, int flags,
			      const char *options, struct vfsmount **mnt)
{
	struct fs_kunit_disk *d = fs_kunit_disk(test);

	KUNIT_ASSERT_NOT_NULL_MSG(test, d->disk, "no image was written");
	return fs_kunit_do_mount(test, fstype, flags, d->path, options, mnt);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_try_mount_device);

/**
 * fs_kunit_try_mount() - write @image to the test's RAM disk and mount it
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
 * fs_kunit_mount_nodev() - mount a filesystem that needs no device (tmpfs)
 * @test: the test; the mount is dropped when it ends
 * @fstype: filesystem type, e.g. "tmpfs"
 * @options: mount options ("" for none)
 *
 * The case is skipped if @fstype is not available.
 *
 * Return: the mount; failures are assertions.
 */
struct vfsmount *fs_kunit_mount_nodev(struct kunit *test, const char *fstype,
				      const char *options)
{
	struct vfsmount *mnt = NULL;
	int err;

	/* Every case starts by mounting, as the others by writing their image. */
	fs_kunit_leak_mark(test);
	err = fs_kunit_do_mount(test, fstype, 0, fstype, options, &mnt);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "mounting %s failed", fstype);
	return mnt;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_mount_nodev);

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

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that UDF never modifies a volume it may not write.
 *
 * Commit 9181f8bf5abf ("udf: Don't modify filesystem for read-only mounts")
 * made udf_fill_super() close the Logical Volume Integrity Descriptor only
 * if it opened it.  In 6.12 a read-write mount of a volume that forbids
 * writing fails with -EACCES instead of falling back to read-only, and must
 * leave every byte of the volume as it was.
 *
 * The images are made by mkudffs (super_kunit_images.h says how); variants
 * edit one descriptor field and fix its tag checksum and CRC.  Every case
 * writes a pristine image to a RAM disk first.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/blkdev.h>
#include <linux/crc-itu-t.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mount.h>
#include <linux/namei.h>

#include "ecma_167.h"
#include "super_kunit_images.h"

#define UDF_KUNIT_BLOCK	2048

/* The tag checksum, computed here rather than by the code under test. */
static u8 udf_kunit_checksum(const struct tag *tag)
{
	const u8 *p = (const u8 *)tag;
	u8 sum = 0;
	int i;

	for (i = 0; i < sizeof(*tag); i++)
		if (i != offsetof(struct tag, tagChecksum))
			sum += p[i];
	return sum;
}

/* The LVID on the device: the block whose valid tag says it is one. */
static struct logicalVolIntegrityDesc *udf_kunit_lvid(struct kunit *test, u8 *dev, u32 size)
{
	u32 off;

	for (off = 0; off < size; off += UDF_KUNIT_BLOCK) {
		struct tag *tag = (struct tag *)(dev + off);

		if (le16_to_cpu(tag->tagIdent) == TAG_IDENT_LVID &&
		    udf_kunit_checksum(tag) == tag->tagChecksum)
			return (struct logicalVolIntegrityDesc *)tag;
	}
	KUNIT_FAIL_AND_ABORT(test, "no LVID with a valid tag checksum on the device");
	return NULL;
}

static u32 lvid_state_on_device(struct kunit *test)
{
	u8 *dev = fs_kunit_read_device(test, udf_kunit_valid.size);

	return le32_to_cpu(udf_kunit_lvid(test, dev, udf_kunit_valid.size)->integrityType);
}

/* A remount as mount(2) would do it, reduced to what decides it. */
static int udf_kunit_remount(struct vfsmount *mnt, unsigned int sb_flags)
{
	struct super_block *sb = mnt->mnt_sb;
	struct fs_context *fc;
	int err;

	fc = fs_context_for_reconfigure(mnt->mnt_root, sb_flags, SB_RDONLY);
	if (IS_ERR(fc))
		return PTR_ERR(fc);
	/*
	 * reconfigure_super() is not exported; udf_reconfigure() is what
	 * refuses a read-write remount, and is called the same way.
	 */
	down_write(&sb->s_umount);
	err = fc->ops->reconfigure(fc);
	up_write(&sb->s_umount);
	put_fs_context(fc);
	return err;
}

static void udf_rw_mount_marks_lvid_open(struct kunit *test)
{
	fs_kunit_mount(test, "udf", &udf_kunit_valid, 0, "");
	KUNIT_EXPECT_EQ(test, lvid_state_on_device(test), LVID_INTEGRITY_TYPE_OPEN);
}

static void udf_unmount_closes_lvid(struct kunit *test)
{
	struct logicalVolIntegrityDesc *lvid;
	u8 *dev;
	u16 len;

	fs_kunit_unmount(test, fs_kunit_mount(test, "udf", &udf_kunit_valid, 0, ""));
	dev = fs_kunit_read_device(test, udf_kunit_valid.size);
	lvid = udf_kunit_lvid(test, dev, udf_kunit_valid.size);
	len = le16_to_cpu(lvid->descTag.descCRCLength);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(lvid->integrityType), LVID_INTEGRITY_TYPE_CLOSE);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(lvid->descTag.descCRC),
			crc_itu_t(0, (u8 *)lvid + sizeof(struct tag), len));
}

/* Volumes that must mount read-only and stay untouched. */
struct udf_kunit_volume {
	const char *name;
	const struct fs_kunit_image *image;
};

static const struct udf_kunit_volume udf_kunit_ro_volumes[] = {
	{ "valid volume", &udf_kunit_valid },
	{ "write-incompatible revision", &udf_kunit_write_rev },
	{ "read-only partition", &udf_kunit_ro_partition },
	{ "corrupt unallocated space table", &udf_kunit_bad_unalloc_table },
	/* Allocation information it may never write is not even read. */
	{ "read-only partition, unreadable space table",
	  &udf_kunit_ro_partition_unreadable_table },
	{ "virtual allocation table", &udf_kunit_vat },
};

KUNIT_ARRAY_PARAM_DESC(udf_kunit_ro_volumes, udf_kunit_ro_volumes, name);

static void udf_ro_mount_writes_nothing(struct kunit *test)
{
	const struct udf_kunit_volume *v = test->param_value;

	fs_kunit_unmount(test, fs_kunit_mount(test, "udf", v->image, SB_RDONLY, ""));
	KUNIT_EXPECT_EQ(test, fs_kunit_first_change(test, v->image), -1);
}

/* Mounts that must be refused. */
struct udf_kunit_refusal {
	const char *name;
	const struct fs_kunit_image *image;
	int flags;
	int err;
};

#define UDF_KUNIT_WRITE_REV \
	{ "rw, write-incompatible revision", &udf_kunit_write_rev, 0, -EACCES }
#define UDF_KUNIT_RO_PARTITION \
	{ "rw, read-only partition", &udf_kunit_ro_partition, 0, -EACCES }
#define UDF_KUNIT_READ_REV_RW \
	{ "rw, read-incompatible revision", &udf_kunit_read_rev, 0, -EINVAL }
/* Space the driver cannot account for: read-only (udf_fill_partdesc_info()). */
#define UDF_KUNIT_BAD_UNALLOC_TABLE \
	{ "rw, corrupt unallocated space table", &udf_kunit_bad_unalloc_table, 0, -EACCES }
/*
 * A CD-R: a write-once partition with a virtual one (a VAT) on it, which the
 * driver cannot write; it refuses before it reads the VAT.
 */
#define UDF_KUNIT_VAT \
	{ "rw, virtual allocation table", &udf_kunit_vat, 0, -EACCES }

/* Refusals whose error is the seed's: the volume may not be written, or read. */
static const struct udf_kunit_refusal udf_kunit_refusals[] = {
	UDF_KUNIT_WRITE_REV, UDF_KUNIT_RO_PARTITION, UDF_KUNIT_READ_REV_RW,
	UDF_KUNIT_BAD_UNALLOC_TABLE, UDF_KUNIT_VAT,
	{ "ro, read-incompatible revision", &udf_kunit_read_rev, SB_RDONLY, -EINVAL },
	/* Refused after the VAT's inode was read, which the refusal gives back. */
	{ "ro, virtual allocation table, read-incompatible revision", &udf_kunit_vat_read_rev,
	  SB_RDONLY, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(udf_kunit_refusals, udf_kunit_refusals, name);

/*
 * Read-write mounts refused after the LVID could have been opened: a volume
 * without a fileset is refused late, after the checks of the others.  (A
 * read-only mount never opens the LVID: udf_ro_mount_writes_nothing.)
 */
static const struct udf_kunit_refusal udf_kunit_rw_refusals[] = {
	UDF_KUNIT_WRITE_REV, UDF_KUNIT_RO_PARTITION, UDF_KUNIT_READ_REV_RW,
	UDF_KUNIT_BAD_UNALLOC_TABLE, UDF_KUNIT_VAT,
	{ "rw, no fileset", &udf_kunit_no_fileset, 0, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(udf_kunit_rw_refusals, udf_kunit_rw_refusals, name);

static int udf_kunit_try(struct kunit *test, const struct udf_kunit_refusal *p)
{
	struct vfsmount *mnt;
	int err = fs_kunit_try_mount(test, "udf", p->image, p->flags, "", &mnt);

	if (!err)
		fs_kunit_unmount(test, mnt);
	return err;
}

static void udf_refused_mount_returns_error(struct kunit *test)
{
	const struct udf_kunit_refusal *p = test->param_value;

	KUNIT_EXPECT_EQ(test, udf_kunit_try(test, p), p->err);
}

static void udf_refused_mount_writes_nothing(struct kunit *test)
{
	const struct udf_kunit_refusal *p = test->param_value;

	udf_kunit_try(test, p);
	KUNIT_EXPECT_EQ(test, fs_kunit_first_change(test, p->image), -1);
}

/*
 * A mount refused after it read the VAT's inode puts it back, or the inode
 * outlives its superblock in the inode cache.  UDF numbers an inode by the
 * block that holds it, so every number is below the device's sector count.
 */
static void udf_mount_refused_after_vat_drops_its_inode(struct kunit *test)
{
	const struct fs_kunit_image *image = &udf_kunit_vat_read_rev;
	struct vfsmount *mnt;

	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount(test, "udf", image, SB_RDONLY, "", &mnt), -EINVAL);
	KUNIT_EXPECT_EQ(test, fs_kunit_refused_mount_inodes(test, image->size / SECTOR_SIZE), 0);
}

static void udf_rw_remount_of_write_incompatible_returns_eacces(struct kunit *test)
{
	struct vfsmount *mnt = fs_kunit_mount(test, "udf", &udf_kunit_write_rev, SB_RDONLY, "");

	KUNIT_EXPECT_EQ(test, udf_kunit_remount(mnt, 0), -EACCES);
}

static void udf_rw_remount_of_write_incompatible_writes_nothing(struct kunit *test)
{
	struct vfsmount *mnt = fs_kunit_mount(test, "udf", &udf_kunit_write_rev, SB_RDONLY, "");

	udf_kunit_remount(mnt, 0);
	fs_kunit_unmount(test, mnt);
	KUNIT_EXPECT_EQ(test, fs_kunit_first_change(test, &udf_kunit_write_rev), -1);
}

/*
 * A remount that leaves a read-only mount read-only neither opens nor
 * closes the LVID: udf_reconfigure() changes it only when the mode changes.
 */
static void udf_ro_remount_ro_writes_nothing(struct kunit *test)
{
	struct vfsmount *mnt = fs_kunit_mount(test, "udf", &udf_kunit_valid, SB_RDONLY, "");

	KUNIT_EXPECT_EQ(test, udf_kunit_remount(mnt, SB_RDONLY), 0);
	fs_kunit_unmount(test, mnt);
	KUNIT_EXPECT_EQ(test, fs_kunit_first_change(test, &udf_kunit_valid), -1);
}

/*
 * A read-write mount of a writable volume loads the partition's space
 * bitmap, which only volumes that may not be written go without: a new
 * file gets its blocks.
 */
static void udf_rw_mount_allocates(struct kunit *test)
{
	struct vfsmount *mnt = fs_kunit_mount(test, "udf", &udf_kunit_valid, 0, "");
	struct inode *dir = d_inode(mnt->mnt_root);
	struct dentry *dentry;
	int err;

	inode_lock(dir);
	dentry = lookup_one_len("new", mnt->mnt_root, 3);
	err = PTR_ERR_OR_ZERO(dentry);
	if (!err) {
		err = vfs_create(&nop_mnt_idmap, dir, dentry, S_IFREG | 0644, true);
		dput(dentry);
	}
	inode_unlock(dir);
	KUNIT_EXPECT_EQ(test, err, 0);
}

/*
 * The root directory cannot be read: the mount fails with EIO after opening
 * the LVID, and closes it again on its way out.
 */
static void udf_rw_mount_failing_late_closes_lvid(struct kunit *test)
{
	struct vfsmount *mnt;
	int err;

	err = fs_kunit_try_mount(test, "udf", &udf_kunit_root_unreadable, 0, "", &mnt);
	if (!err)
		fs_kunit_unmount(test, mnt);
	KUNIT_EXPECT_EQ(test, err, -EIO);
	KUNIT_EXPECT_EQ(test, lvid_state_on_device(test), LVID_INTEGRITY_TYPE_CLOSE);
}

static struct kunit_case udf_kunit_cases[] = {
	KUNIT_CASE(udf_rw_mount_marks_lvid_open),
	KUNIT_CASE(udf_unmount_closes_lvid),
	KUNIT_CASE_PARAM(udf_ro_mount_writes_nothing, udf_kunit_ro_volumes_gen_params),
	KUNIT_CASE_PARAM(udf_refused_mount_returns_error, udf_kunit_refusals_gen_params),
	KUNIT_CASE_PARAM(udf_refused_mount_writes_nothing, udf_kunit_rw_refusals_gen_params),
	KUNIT_CASE(udf_mount_refused_after_vat_drops_its_inode),
	KUNIT_CASE(udf_rw_remount_of_write_incompatible_returns_eacces),
	KUNIT_CASE(udf_rw_remount_of_write_incompatible_writes_nothing),
	KUNIT_CASE(udf_ro_remount_ro_writes_nothing),
	KUNIT_CASE(udf_rw_mount_allocates),
	KUNIT_CASE(udf_rw_mount_failing_late_closes_lvid),
	{}
};

static struct kunit_suite udf_kunit_suite = {
	.name = "udf_super",
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = udf_kunit_cases,
};

kunit_test_suite(udf_kunit_suite);

MODULE_DESCRIPTION("KUnit tests that UDF never modifies a volume it may not write");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

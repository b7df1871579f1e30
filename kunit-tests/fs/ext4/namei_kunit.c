// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that ext4 and ext3 namespace and setattr operations return the
 * error of dquot_initialize() and change nothing.
 *
 * Since commit a7cdadee0e89 ("ext4: Handle error from dquot_initialize()")
 * every operation checks each of its dquot_initialize() calls; commit
 * 926631c2012d fixed a leak on one of those error paths, and ext3 volumes are
 * served by this driver since commit c290ea01abb7 ("fs: Remove ext3
 * filesystem driver").  The cases are shared with ext2 (fs/kunit_fs_ns.c):
 * this file says which dquot_initialize() calls each operation makes, found
 * by whose dquot fails (include/kunit/fs.h has the owners).
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/mount.h>

#include "namei_kunit_images.h"

#define EVERY(op)		FS_KUNIT_EVERY(op)
#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)

/* ext4_*() in namei.c and inode.c, __ext4_new_inode() in ialloc.c. */
static const struct fs_kunit_fault ext4_kunit_faults[] = {
	CREATES(FS_KUNIT_CREATE), CREATES(FS_KUNIT_MKNOD), CREATES(FS_KUNIT_MKDIR),
	CREATES(FS_KUNIT_SYMLINK_SHORT), CREATES(FS_KUNIT_SYMLINK_LONG),
	CREATES(FS_KUNIT_TMPFILE),
	EVERY(FS_KUNIT_RMDIR), SITE(FS_KUNIT_RMDIR, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RMDIR, "inode", FS_KUNIT_EMPTY),
	EVERY(FS_KUNIT_UNLINK), SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_UNLINK, "inode", FS_KUNIT_VICTIM),
	EVERY(FS_KUNIT_LINK), SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	EVERY(FS_KUNIT_RENAME), SITE(FS_KUNIT_RENAME, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME, "old inode", FS_KUNIT_VICTIM),
	EVERY(FS_KUNIT_RENAME_ACROSS), SITE(FS_KUNIT_RENAME_ACROSS, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_ACROSS, "old inode", FS_KUNIT_VICTIM),
	SITE(FS_KUNIT_RENAME_ACROSS, "new dir", FS_KUNIT_D2),
	EVERY(FS_KUNIT_RENAME_REPLACE), SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "old inode", FS_KUNIT_VICTIM),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "new inode", FS_KUNIT_EXISTING),
	EVERY(FS_KUNIT_RENAME_EXCHANGE), SITE(FS_KUNIT_RENAME_EXCHANGE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_EXCHANGE, "new dir", FS_KUNIT_D2),
	FS_KUNIT_SETATTRS,
};

static const struct fs_kunit_ns_suite ext4_kunit_ns = {
	.fstype = "ext4", .image = &ext4_kunit_image, .options = "",
};

static const struct fs_kunit_ns_suite ext3_kunit_ns = {
	.fstype = "ext3", .image = &ext3_kunit_image, .options = "usrquota,grpquota",
	.quota_files = true,
};

/* ext3 is a name of this driver now, not a driver of its own. */
static void ext3_volume_is_served_by_ext4(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct file_system_type *ext4 = get_fs_type("ext4");

	KUNIT_ASSERT_NOT_NULL(test, ext4);
	KUNIT_EXPECT_STREQ(test, ns->sb->s_type->name, "ext3");
	KUNIT_EXPECT_PTR_EQ(test, ns->sb->s_type->init_fs_context, ext4->init_fs_context);
	KUNIT_EXPECT_PTR_EQ(test, ns->sb->s_type->owner, ext4->owner);
	module_put(ext4->owner);
}

FS_KUNIT_NS_SUITE(ext4_kunit, "ext4_dquot", ext4_kunit_faults, &ext4_kunit_ns);
FS_KUNIT_NS_SUITE(ext3_kunit, "ext3_dquot", ext4_kunit_faults, &ext3_kunit_ns,
		  KUNIT_CASE(ext3_volume_is_served_by_ext4));

kunit_test_suites(&ext4_kunit_suite, &ext3_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in ext4 and ext3");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that reiserfs namespace and setattr operations return the
 * error of dquot_initialize() and change nothing.
 *
 * Since commit 2e6c97ea4ce6 ("reiserfs: Handle error from
 * dquot_initialize()") every operation checks each of its
 * dquot_initialize() calls.  The cases are shared with ext2, ext3 and ext4
 * (fs/kunit_fs_ns.c); this file says which calls each reiserfs operation
 * makes in 6.12, found by whose dquot fails.  New inodes are initialized by
 * new_inode_init(); unlink and rmdir initialize only the directory;
 * reiserfs has neither ->tmpfile nor RENAME_EXCHANGE.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/fs.h>

#include "namei_kunit_images.h"

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)

/* reiserfs_*() in namei.c and inode.c. */
static const struct fs_kunit_fault reiserfs_kunit_faults[] = {
	CREATES(FS_KUNIT_CREATE), CREATES(FS_KUNIT_MKNOD), CREATES(FS_KUNIT_MKDIR),
	CREATES(FS_KUNIT_SYMLINK),
	SITE(FS_KUNIT_RMDIR, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	FS_KUNIT_SETATTRS,
};

static const struct fs_kunit_ns_suite reiserfs_kunit_ns = {
	.fstype = "reiserfs", .image = &reiserfs_kunit_image, .options = "usrquota,grpquota",
	.quota_files = true, .populate = true,
};

FS_KUNIT_NS_PARAMS(reiserfs_kunit, reiserfs_kunit_faults);

static int reiserfs_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &reiserfs_kunit_ns);
}

static struct kunit_case reiserfs_kunit_cases[] = {
	FS_KUNIT_NS_CASES(reiserfs_kunit),
	{}
};

static struct kunit_suite reiserfs_kunit_suite = {
	.name = "reiserfs_dquot",
	.init = reiserfs_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = reiserfs_kunit_cases,
};

kunit_test_suite(reiserfs_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in reiserfs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

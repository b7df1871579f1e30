// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that jfs namespace and setattr operations return the
 * error of dquot_initialize() and change nothing.
 *
 * Since commit acc84b05b1f4 ("jfs: Handle error from dquot_initialize()")
 * every operation checks each of its
 * dquot_initialize() calls.  The cases are shared with the other
 * filesystems (fs/kunit_fs_ns.c); this file says which calls each jfs
 * operation makes in 6.12, found by whose dquot fails.
 * New inodes are initialized by ialloc(); unlink and rmdir initialize the
 * directory and the inode, a rename onto an existing file the file it
 * replaces; jfs has neither ->tmpfile nor RENAME_EXCHANGE.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/fs.h>

#include "namei_kunit_images.h"

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)

/* jfs_*() in namei.c and file.c, ialloc() in jfs_inode.c. */
static const struct fs_kunit_fault jfs_kunit_faults[] = {
	CREATES(FS_KUNIT_CREATE), CREATES(FS_KUNIT_MKNOD), CREATES(FS_KUNIT_MKDIR),
	CREATES(FS_KUNIT_SYMLINK),
	SITE(FS_KUNIT_RMDIR, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_RMDIR, "inode", FS_KUNIT_EMPTY),
	SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_UNLINK, "inode", FS_KUNIT_VICTIM),
	SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "new inode", FS_KUNIT_EXISTING),
	FS_KUNIT_SETATTRS,
};

static const struct fs_kunit_ns_suite jfs_kunit_ns = {
	.fstype = "jfs", .image = &jfs_kunit_image, .options = "usrquota,grpquota",
	.quota_files = true, .populate = true,
};

FS_KUNIT_NS_PARAMS(jfs_kunit, jfs_kunit_faults);

static int jfs_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &jfs_kunit_ns);
}

static struct kunit_case jfs_kunit_cases[] = {
	FS_KUNIT_NS_CASES(jfs_kunit),
	{}
};

static struct kunit_suite jfs_kunit_suite = {
	.name = "jfs_dquot",
	.init = jfs_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = jfs_kunit_cases,
};

kunit_test_suite(jfs_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in jfs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

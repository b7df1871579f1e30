// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that ext2 namespace and setattr operations return the error of
 * dquot_initialize() and change nothing.
 *
 * Since commit c2edb305d684 ("ext2: Handle error from dquot_initalize()")
 * every operation checks each of its dquot_initialize() calls.  The cases are
 * shared with ext4 (fs/kunit_fs_ns.c); this file says which calls each ext2
 * operation makes in 6.12, found by whose dquot fails.  ext2_unlink() (and
 * so rmdir) initializes only the directory, ext2_tmpfile() only the new
 * inode, and ext2 has no RENAME_EXCHANGE.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/fs.h>

#include "namei_kunit_images.h"

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)

/* ext2_*() in namei.c and inode.c, ext2_new_inode() in ialloc.c. */
static const struct fs_kunit_fault ext2_kunit_faults[] = {
	CREATES(FS_KUNIT_CREATE), CREATES(FS_KUNIT_MKNOD), CREATES(FS_KUNIT_MKDIR),
	CREATES(FS_KUNIT_SYMLINK),
	/*
	 * No tmpfile: ext2_tmpfile() initializes only the new inode, and
	 * opening it (dquot_file_open()) initializes it again and fails too.
	 */
	/* ext2_rmdir() is ext2_unlink() and more: its own error path. */
	SITE(FS_KUNIT_RMDIR, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	FS_KUNIT_SETATTRS,
};

static const struct fs_kunit_ns_suite ext2_kunit_ns = {
	.fstype = "ext2", .image = &ext2_kunit_image, .options = "usrquota,grpquota",
	.quota_files = true,
};

FS_KUNIT_NS_PARAMS(ext2_kunit, ext2_kunit_faults);

static int ext2_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &ext2_kunit_ns);
}

static struct kunit_case ext2_kunit_cases[] = {
	FS_KUNIT_NS_CASES(ext2_kunit),
	{}
};

static struct kunit_suite ext2_kunit_suite = {
	.name = "ext2_dquot",
	.init = ext2_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = ext2_kunit_cases,
};

kunit_test_suite(ext2_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in ext2");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

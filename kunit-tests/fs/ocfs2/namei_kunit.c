// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that ocfs2 namespace and setattr operations return the
 * error of dquot_initialize() and change nothing.
 *
 * Since commit 9c89fe0af826 ("ocfs2: Handle error from
 * dquot_initialize()") every operation checks each of its
 * dquot_initialize() calls.  The cases are shared with the other
 * filesystems (fs/kunit_fs_ns.c); this file says which calls each ocfs2
 * operation makes in 6.12, found by whose dquot fails.
 * create, mknod and mkdir are ocfs2_mknod(); new inodes are initialized by
 * ocfs2_get_init_inode(); unlink and rmdir initialize only the directory;
 * setattr takes the new owner's dquots with dqget(); a file opened for
 * writing is initialized by ocfs2_file_open().  ocfs2 has neither ->tmpfile
 * nor RENAME_EXCHANGE.  The image is mounted locally (no cluster stack),
 * with quota as a filesystem feature.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/fs.h>

#include "namei_kunit_images.h"

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)

/* ocfs2_*() in namei.c and file.c. */
static const struct fs_kunit_fault ocfs2_kunit_faults[] = {
	/* ocfs2_create() and ocfs2_mkdir() are ocfs2_mknod() and nothing else. */
	CREATES(FS_KUNIT_MKNOD), CREATES(FS_KUNIT_SYMLINK),
	/* ->rmdir is ocfs2_unlink() itself. */
	SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	FS_KUNIT_SETATTRS,
	SITE(FS_KUNIT_OPEN_WRITE, "inode", FS_KUNIT_OWNED),
};

static const struct fs_kunit_ns_suite ocfs2_kunit_ns = {
	.fstype = "ocfs2", .image = &ocfs2_kunit_image,
	.options = "heartbeat=none,usrquota,grpquota",
	.populate = true,
};

FS_KUNIT_NS_SUITE(ocfs2_kunit, "ocfs2_dquot", ocfs2_kunit_faults, &ocfs2_kunit_ns);

kunit_test_suite(ocfs2_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in ocfs2");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

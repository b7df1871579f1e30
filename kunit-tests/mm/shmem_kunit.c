// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that tmpfs namespace and setattr operations return the error
 * of a failing dquot_initialize() or dquot_transfer() and change nothing.
 *
 * tmpfs keeps its quota in memory (mm/shmem_quota.c, since 6.6), and its
 * operations initialize no directory's quota: shmem_get_inode() initializes
 * the quota of each inode it makes, for mknod (create and mkdir through it),
 * symlink, tmpfile and the whiteout of a rename, and shmem_setattr()
 * transfers a chown or chgrp.  shmem_setattr()'s own dquot_initialize() of
 * the inode finds the dquots every inode gets when it is made, so no fault
 * reaches it.  The cases are the namespace fixture's (fs/kunit_fs_ns.c) on
 * a tmpfs mounted with usrquota,grpquota that the fixture populates; a
 * tmpfs cannot be mounted again, so "the disk" there is what the mount
 * holds after the operation.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/quotaops.h>
#include <linux/statfs.h>

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)

/*
 * One row per caller of shmem_get_inode() whose error path is its own:
 * create is shmem_mknod() itself, mkdir counts the directory's new link
 * only after it, and a rename makes its whiteout with it before it moves
 * anything.
 */
static const struct fs_kunit_fault tmpfs_kunit_faults[] = {
	SITE(FS_KUNIT_MKNOD, "new inode", FS_KUNIT_NEW),
	SITE(FS_KUNIT_MKDIR, "new inode", FS_KUNIT_NEW),
	SITE(FS_KUNIT_SYMLINK, "new inode", FS_KUNIT_NEW),
	SITE(FS_KUNIT_TMPFILE, "new inode", FS_KUNIT_NEW),
	SITE(FS_KUNIT_RENAME_WHITEOUT, "whiteout", FS_KUNIT_NEW),
	SITE(FS_KUNIT_CHOWN, "new owner", FS_KUNIT_TARGET),
	{ .op = FS_KUNIT_CHGRP, .site = "new group", .owner = FS_KUNIT_TARGET,
	  .type = GRPQUOTA },
};

static const struct fs_kunit_ns_suite tmpfs_kunit_ns = {
	.fstype = "tmpfs", .options = "usrquota,grpquota", .populate = true,
	.in_memory = true,
};

FS_KUNIT_NS_PARAMS(tmpfs_kunit, tmpfs_kunit_faults);

/*
 * over_inode_limit_drops_the_new_inodes_dquots() - when the new owner is at
 * its inode hard limit, shmem_get_inode() has already attached the owner's
 * dquots to the inode it made: the -EDQUOT of dquot_alloc_inode() must
 * drop them with the inode, and nothing is made.  The limit lives only in
 * tmpfs's memory (shmem_quota.c), set as quotactl sets it.
 */
static void over_inode_limit_drops_the_new_inodes_dquots(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct kqid uid = make_kqid_uid(make_kuid(&init_user_ns,
						  FS_KUNIT_OBJ_UID(FS_KUNIT_NEW)));
	struct kqid gid = make_kqid_gid(make_kgid(&init_user_ns,
						  FS_KUNIT_OBJ_GID(FS_KUNIT_NEW)));
	struct qc_dqblk limit = { .d_fieldmask = QC_INO_HARD, .d_ino_hardlimit = 1 };
	struct path root = { .mnt = ns->mnt, .dentry = ns->mnt->mnt_root };
	const struct cred *old;
	struct inode *made;
	struct kstatfs sfs;
	u64 files_free;
	int err;

	/* The new owner's one inode, then its limit: one. */
	KUNIT_ASSERT_EQ(test, fs_kunit_ns_run(test, FS_KUNIT_CREATE), 0);
	made = d_inode(fs_kunit_lookup(test, ns->obj[FS_KUNIT_D1], "new"));
	KUNIT_ASSERT_NOT_NULL(test, made);
	KUNIT_ASSERT_EQ(test, dquot_set_dqblk(ns->sb, uid, &limit), 0);
	KUNIT_ASSERT_EQ(test, vfs_statfs(&root, &sfs), 0);
	files_free = sfs.f_ffree;

	/* A caller that may go over hard limits would not meet this one. */
	old = fs_kunit_bound_by_hard_limits(test);
	err = fs_kunit_ns_run(test, FS_KUNIT_TMPFILE);
	revert_creds(old);

	KUNIT_EXPECT_EQ(test, err, -EDQUOT);
	KUNIT_ASSERT_EQ(test, vfs_statfs(&root, &sfs), 0);
	KUNIT_EXPECT_EQ_MSG(test, sfs.f_ffree, files_free, "free inodes");
	fs_kunit_expect_no_leaked_dquot_refs(test, ns->sb, uid, &made, 1);
	fs_kunit_expect_no_leaked_dquot_refs(test, ns->sb, gid, &made, 1);
}

static int tmpfs_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &tmpfs_kunit_ns);
}

static struct kunit_case tmpfs_kunit_cases[] = {
	FS_KUNIT_NS_CASES(tmpfs_kunit),
	KUNIT_CASE(over_inode_limit_drops_the_new_inodes_dquots),
	{}
};

static struct kunit_suite tmpfs_kunit_suite = {
	.name = "tmpfs_dquot",
	.init = tmpfs_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = tmpfs_kunit_cases,
};

kunit_test_suite(tmpfs_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot errors in tmpfs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

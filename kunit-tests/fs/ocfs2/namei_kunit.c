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
 *
 * A reflink (OCFS2_IOC_REFLINK) initializes the quota of the directory
 * that gets the new name, in ocfs2_vfs_reflink().
 *
 * The last dqget() caller is quota recovery: after a crash the local quota
 * file still holds usage the global file has not seen, and
 * ocfs2_recover_local_quota_file() takes the dquot of every id in it.
 *
 * On this local mount the cluster locks do nothing; whether an operation
 * drops a lock it never took shows only in ocfs2_inode_unlock()'s static
 * stub.
 *
 * Every mount needs what the stack glue makes at its init, in any kernel
 * configuration: the ocfs2_stackglue suite runs first and checks that.
 */
#include <kunit/fs.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/quotaops.h>
#include <linux/workqueue.h>

#include "ocfs2.h"
#include "dlmglue.h"
#include "quota.h"
/* What refcounttree.h declares its functions with. */
#include "inode.h"
#include "alloc.h"
#include "suballoc.h"
#include "xattr.h"
#include "refcounttree.h"
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

/* Whose usage the crash leaves to recover: the owner of new inodes. */
static struct kqid ocfs2_kunit_crash_qid(void)
{
	return make_kqid_uid(make_kuid(&init_user_ns, FS_KUNIT_OBJ_UID(FS_KUNIT_NEW)));
}

static qsize_t ocfs2_kunit_crash_inodes(struct kunit *test, struct super_block *sb)
{
	struct qc_dqblk di;

	KUNIT_ASSERT_EQ(test, dquot_get_dqblk(sb, ocfs2_kunit_crash_qid(), &di), 0);
	return di.d_ino_count;
}

/*
 * A crash: a new file charged to the owner of new inodes, synced to the
 * local quota file and the journal, and the device copied as it is then,
 * local quota file in use.  The periodic sync to the global file is
 * stopped first, or it could leave nothing to recover.  The copy is taken
 * through the block device's page cache, which holds what the filesystem
 * wrote.  Returns the copy as an image; @inodes is that owner's inode
 * count at the crash.
 */
static const struct fs_kunit_image *ocfs2_kunit_crash(struct kunit *test, qsize_t *inodes)
{
	struct fs_kunit_ns *ns = test->priv;
	struct super_block *sb = ns->sb;
	struct fs_kunit_image *image;
	struct fs_kunit_run *run;
	int type, err;

	for (type = USRQUOTA; type <= GRPQUOTA; type++) {
		struct ocfs2_mem_dqinfo *oinfo = sb_dqinfo(sb, type)->dqi_priv;

		cancel_delayed_work_sync(&oinfo->dqi_sync_work);
	}
	KUNIT_ASSERT_EQ(test, fs_kunit_ns_run(test, FS_KUNIT_CREATE), 0);
	down_read(&sb->s_umount);
	err = sync_filesystem(sb);
	up_read(&sb->s_umount);
	KUNIT_ASSERT_EQ(test, err, 0);
	*inodes = ocfs2_kunit_crash_inodes(test, sb);

	image = kunit_kzalloc(test, sizeof(*image), GFP_KERNEL);
	run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, image);
	KUNIT_ASSERT_NOT_NULL(test, run);
	run->len = ns->suite->image->size;
	run->data = fs_kunit_read_device(test, run->len);
	image->size = run->len;
	image->runs = run;
	image->nr_runs = 1;
	fs_kunit_ns_unmount(test, ns);
	return image;
}

/*
 * Mount the crashed volume read-only, then read-write: quota goes on, and
 * its recovery runs, only at the remount.  The stub is in place before
 * that, failing ->acquire_dquot() of the crash's owner with @err (0: none).
 * Returns once the recovery work has run.
 */
static struct fs_kunit_quota_stub *
ocfs2_kunit_recover_at_remount(struct kunit *test, const struct fs_kunit_image *crashed, int err)
{
	struct fs_kunit_ns *ns = test->priv;
	const struct fs_kunit_ns_suite *suite = ns->suite;
	struct fs_kunit_quota_stub *stub;
	struct super_block *sb;
	char *options;
	int flags = 0, ret;

	KUNIT_ASSERT_EQ(test, fs_kunit_write_image(test, crashed), 0);
	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount_device(test, suite->fstype, SB_RDONLY,
							suite->options, &ns->mnt), 0);
	ns->sb = ns->mnt->mnt_sb;
	sb = ns->sb;
	KUNIT_ASSERT_FALSE(test, sb_any_quota_loaded(sb));
	/* Kept in the fixture: fs_kunit_ns_unmount() must unstub before it unmounts. */
	stub = fs_kunit_stub_acquire_dquot(test, sb);
	ns->stub = stub;
	if (err)
		fs_kunit_quota_fail(stub, err, USRQUOTA, FS_KUNIT_OBJ_UID(FS_KUNIT_NEW));
	options = kunit_kstrdup(test, suite->options, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, options);
	/* reconfigure_super() is not exported; ocfs2_remount() clears SB_RDONLY itself. */
	down_write(&sb->s_umount);
	ret = sb->s_op->remount_fs(sb, &flags, options);
	up_write(&sb->s_umount);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remounting read-write failed");
	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(sb, USRQUOTA));
	flush_workqueue(OCFS2_SB(sb)->ocfs2_wq);
	return stub;
}

/*
 * ocfs2_quota_recovery_at_rw_remount_restores_usage() - a volume that
 * crashed, mounted read-only and then read-write, gets its quota usage
 * back: the remount recovers the local quota file (patch "ocfs2: Recover
 * quota when a read-only mount becomes read-write").
 */
static void ocfs2_quota_recovery_at_rw_remount_restores_usage(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	const struct fs_kunit_image *crashed;
	struct fs_kunit_quota_stub *stub;
	qsize_t inodes;

	crashed = ocfs2_kunit_crash(test, &inodes);
	stub = ocfs2_kunit_recover_at_remount(test, crashed, 0);
	KUNIT_EXPECT_GT_MSG(test, stub->calls, 0, "no dquot was acquired: no recovery ran");
	KUNIT_EXPECT_EQ(test, ocfs2_kunit_crash_inodes(test, ns->sb), inodes);
}

/*
 * ocfs2_quota_recovery_stops_at_dquot_error_and_keeps_usage() - when
 * ->acquire_dquot() fails for an id the recovery must move, it stops there
 * (since 6184fc0b8dd7 dqget() returns the error, not NULL), and the usage
 * stays in the local quota file for the next recovery, neither lost nor
 * counted twice.
 */
static void ocfs2_quota_recovery_stops_at_dquot_error_and_keeps_usage(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	const struct fs_kunit_ns_suite *suite = ns->suite;
	const struct fs_kunit_image *crashed;
	struct fs_kunit_quota_stub *stub;
	qsize_t inodes;

	crashed = ocfs2_kunit_crash(test, &inodes);
	stub = ocfs2_kunit_recover_at_remount(test, crashed, -EIO);
	KUNIT_EXPECT_GT_MSG(test, stub->failed, 0, "the recovery never asked for the dquot");
	fs_kunit_ns_unmount(test, ns);
	/* A plain mount recovers what is left, with nothing failing now. */
	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount_device(test, suite->fstype, 0, suite->options,
							&ns->mnt), 0);
	ns->sb = ns->mnt->mnt_sb;
	flush_workqueue(OCFS2_SB(ns->sb)->ocfs2_wq);
	KUNIT_EXPECT_EQ(test, ocfs2_kunit_crash_inodes(test, ns->sb), inodes);
}

FS_KUNIT_NS_PARAMS(ocfs2_kunit, ocfs2_kunit_faults);

/* The rows whose failing dquot_initialize() is of a directory. */
static const void *ocfs2_kunit_dir_gen_params(const void *prev, char *desc)
{
	const struct fs_kunit_fault *f = prev;

	do {
		f = ocfs2_kunit_gen_params(f, desc);
	} while (f && f->owner != FS_KUNIT_D1 && f->owner != FS_KUNIT_D2);
	return f;
}

/*
 * The exclusive unlocks of a few inodes' cluster locks in the running case.
 * The path walk before an operation takes and drops the directory's lock
 * shared (permission, lookup); the operations take it exclusive.
 */
#define OCFS2_KUNIT_COUNTED	4
static struct {
	struct inode *inode[OCFS2_KUNIT_COUNTED];
	int count[OCFS2_KUNIT_COUNTED];
	int system_dirs;	/* the orphan directories: the system directories locked */
} ocfs2_kunit_unlocks;

/* On a local mount the real ocfs2_inode_unlock() does nothing either. */
static void ocfs2_kunit_count_unlock(struct inode *inode, int ex)
{
	int i;

	if (!ex || !inode)
		return;
	for (i = 0; i < OCFS2_KUNIT_COUNTED; i++)
		if (inode == ocfs2_kunit_unlocks.inode[i])
			ocfs2_kunit_unlocks.count[i]++;
	if (S_ISDIR(inode->i_mode) && (OCFS2_I(inode)->ip_flags & OCFS2_INODE_SYSTEM_FILE))
		ocfs2_kunit_unlocks.system_dirs++;
}

/* Count from now on the exclusive unlocks of @inodes (up to four). */
static void ocfs2_kunit_count_unlocks(struct kunit *test, struct inode **inodes, int n)
{
	memset(&ocfs2_kunit_unlocks, 0, sizeof(ocfs2_kunit_unlocks));
	memcpy(ocfs2_kunit_unlocks.inode, inodes, n * sizeof(*inodes));
	kunit_activate_static_stub(test, ocfs2_inode_unlock, ocfs2_kunit_count_unlock);
}

/*
 * dir_dquot_error_unlocks_no_dir_lock() - an operation whose
 * dquot_initialize() of a directory fails has not locked the directory
 * yet, so it must not unlock it either.  On a cluster mount such an unlock
 * drops another task's holder or hits the BUG() in ocfs2_dec_holders(); on
 * this local mount only the count of ocfs2_inode_unlock() calls, through
 * its static stub, shows it (patch "ocfs2: Do not unlock the directory
 * when ocfs2_symlink() cannot initialize its quota").
 */
static void dir_dquot_error_unlocks_no_dir_lock(struct kunit *test)
{
	const struct fs_kunit_fault *f = test->param_value;
	struct fs_kunit_ns *ns = test->priv;

	struct inode *dir = d_inode(ns->obj[f->owner]);

	KUNIT_ASSERT_TRUE(test, ocfs2_mount_local(OCFS2_SB(ns->sb)));
	ocfs2_kunit_count_unlocks(test, &dir, 1);
	fs_kunit_quota_fail(ns->stub, -EIO, USRQUOTA, FS_KUNIT_OBJ_UID(f->owner));
	KUNIT_EXPECT_EQ(test, fs_kunit_ns_run(test, f->op), -EIO);
	kunit_deactivate_static_stub(test, ocfs2_inode_unlock);
	KUNIT_EXPECT_EQ_MSG(test, ocfs2_kunit_unlocks.count[0], 0,
			    "the directory's cluster lock was dropped, never taken");
}

/*
 * An operation whose quota calls succeeded goes on to lock what it changes,
 * and its way out (the same labels its quota errors jump to) must drop each
 * of those locks exactly once.  A rename over a file in another directory
 * takes the most: both directories, both files and the orphan directory
 * that the replaced file is moved to.  The replaced file stays referenced
 * by the fixture, so it is not deleted (and locked again) inside the case.
 */
static void rename_over_a_file_drops_each_lock_once(struct kunit *test)
{
	static const char * const names[] = {
		"old dir", "new dir", "moved file", "replaced file",
	};
	struct fs_kunit_ns *ns = test->priv;
	struct inode *inodes[] = {
		d_inode(ns->obj[FS_KUNIT_D1]), d_inode(ns->obj[FS_KUNIT_D2]),
		d_inode(ns->obj[FS_KUNIT_VICTIM]), d_inode(ns->obj[FS_KUNIT_EXISTING]),
	};
	int i;

	ocfs2_kunit_count_unlocks(test, inodes, ARRAY_SIZE(inodes));
	KUNIT_EXPECT_EQ(test, fs_kunit_ns_run(test, FS_KUNIT_RENAME_REPLACE), 0);
	kunit_deactivate_static_stub(test, ocfs2_inode_unlock);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		KUNIT_EXPECT_EQ_MSG(test, ocfs2_kunit_unlocks.count[i], 1,
				    "%s: exclusive cluster lock dropped %d times", names[i],
				    ocfs2_kunit_unlocks.count[i]);
	KUNIT_EXPECT_EQ_MSG(test, ocfs2_kunit_unlocks.system_dirs, 1,
			    "orphan dir: exclusive cluster lock dropped %d times",
			    ocfs2_kunit_unlocks.system_dirs);
}

/* A chown that succeeds drops the inode's lock once, after the transfer. */
static void chown_drops_the_inode_lock_once(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct inode *owned = d_inode(ns->obj[FS_KUNIT_OWNED]);

	ocfs2_kunit_count_unlocks(test, &owned, 1);
	KUNIT_EXPECT_EQ(test, fs_kunit_ns_run(test, FS_KUNIT_CHOWN), 0);
	kunit_deactivate_static_stub(test, ocfs2_inode_unlock);
	KUNIT_EXPECT_EQ(test, i_uid_read(owned), FS_KUNIT_OBJ_UID(FS_KUNIT_TARGET));
	KUNIT_EXPECT_EQ_MSG(test, ocfs2_kunit_unlocks.count[0], 1,
			    "exclusive cluster lock dropped %d times",
			    ocfs2_kunit_unlocks.count[0]);
}

/* ->mark_dirty(), for the stub's operations: the quota file cannot be written. */
static int ocfs2_kunit_mark_dirty_fails(struct dquot *dquot)
{
	return -EIO;
}

/*
 * chown_returns_transfer_error() - ocfs2_setattr() takes the new owner's
 * dquot itself and calls __dquot_transfer(), whose error (here: writing the
 * changed dquots) fails the chown before the new owner is set.
 */
static void chown_returns_transfer_error(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct inode *owned = d_inode(ns->obj[FS_KUNIT_OWNED]);

	ns->stub->ops.mark_dirty = ocfs2_kunit_mark_dirty_fails;
	KUNIT_EXPECT_EQ(test, fs_kunit_ns_run(test, FS_KUNIT_CHOWN), -EIO);
	KUNIT_EXPECT_EQ(test, i_uid_read(owned), FS_KUNIT_OBJ_UID(FS_KUNIT_OWNED));
}

/*
 * ocfs2_vfs_reflink() of /d1/victim to /d2/reflinked, called as the ioctl
 * does, with the directory locked.  Returns the new name's dentry, for the
 * caller to put, or the error of its lookup; *@err is the reflink's.
 */
static struct dentry *ocfs2_kunit_reflink(struct fs_kunit_ns *ns, int *err)
{
	struct dentry *dir = ns->obj[FS_KUNIT_D2];
	struct inode *di = d_inode(dir);
	struct dentry *dentry;

	inode_lock_nested(di, I_MUTEX_PARENT);
	dentry = lookup_one_len("reflinked", dir, strlen("reflinked"));
	if (!IS_ERR(dentry))
		*err = ocfs2_vfs_reflink(ns->obj[FS_KUNIT_VICTIM], di, dentry, true);
	inode_unlock(di);
	return dentry;
}

/*
 * reflink_returns_dir_dquot_error() - ocfs2_vfs_reflink() initializes the
 * quota of the directory that gets the new name before it creates
 * anything: when that fails, the reflink fails with the error and the name
 * stays unused.
 */
static void reflink_returns_dir_dquot_error(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct dentry *dentry;
	int err = 0;

	fs_kunit_quota_fail(ns->stub, -EIO, USRQUOTA, FS_KUNIT_OBJ_UID(FS_KUNIT_D2));
	dentry = ocfs2_kunit_reflink(ns, &err);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dentry);
	KUNIT_EXPECT_EQ(test, err, -EIO);
	KUNIT_EXPECT_TRUE_MSG(test, d_really_is_negative(dentry),
			      "the reflink was made although the directory's quota failed");
	dput(dentry);
}

/*
 * reflink_makes_the_link() - with the directory's quota working,
 * ocfs2_vfs_reflink() goes on to make the reflink: it returns 0 only with
 * the new name there.
 */
static void reflink_makes_the_link(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct dentry *dentry;
	int err = -EINVAL;

	dentry = ocfs2_kunit_reflink(ns, &err);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dentry);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE_MSG(test, d_really_is_positive(dentry), "no reflink was made");
	dput(dentry);
}

/*
 * stack_glue_made_its_kset() - ocfs2_fill_super() adds each volume under
 * /sys/fs/ocfs2, the kset that ocfs2_stack_glue_init() makes.  Built in,
 * ocfs2 registers its filesystem even when that init failed, so a failure
 * there shows first as an oops at mount.  Without CONFIG_SYSCTL the init
 * once took register_sysctl()'s stub NULL for a failure.
 */
static void stack_glue_made_its_kset(struct kunit *test)
{
	KUNIT_EXPECT_NOT_NULL_MSG(test, ocfs2_kset,
				  "the stack glue failed its init: a mount would dereference NULL");
}

static struct kunit_case ocfs2_stackglue_kunit_cases[] = {
	KUNIT_CASE(stack_glue_made_its_kset),
	{}
};

/* No fixture: it must run before the first mount, so it comes first. */
static struct kunit_suite ocfs2_stackglue_kunit_suite = {
	.name = "ocfs2_stackglue",
	.test_cases = ocfs2_stackglue_kunit_cases,
};

static int ocfs2_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &ocfs2_kunit_ns);
}

static struct kunit_case ocfs2_kunit_cases[] = {
	FS_KUNIT_NS_CASES(ocfs2_kunit),
	KUNIT_CASE_PARAM(dir_dquot_error_unlocks_no_dir_lock, ocfs2_kunit_dir_gen_params),
	KUNIT_CASE(rename_over_a_file_drops_each_lock_once),
	KUNIT_CASE(chown_returns_transfer_error),
	KUNIT_CASE(chown_drops_the_inode_lock_once),
	KUNIT_CASE(reflink_returns_dir_dquot_error),
	KUNIT_CASE(reflink_makes_the_link),
	KUNIT_CASE(ocfs2_quota_recovery_at_rw_remount_restores_usage),
	KUNIT_CASE(ocfs2_quota_recovery_stops_at_dquot_error_and_keeps_usage),
	{}
};

static struct kunit_suite ocfs2_kunit_suite = {
	.name = "ocfs2_dquot",
	.init = ocfs2_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = ocfs2_kunit_cases,
};

kunit_test_suites(&ocfs2_stackglue_kunit_suite, &ocfs2_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in ocfs2");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

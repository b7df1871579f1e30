// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that f2fs namespace, setattr and project operations return
 * the error of dquot_initialize(), dquot_transfer() or dqget() and change
 * nothing.
 *
 * Every f2fs namespace operation checks each of its dquot_initialize()
 * calls, and f2fs_transfer_project_quota() returns the error of its dqget()
 * (the twin of ext4_ioctl_setproject(), which this series fixes).  The cases are shared with the
 * other filesystems (fs/kunit_fs_ns.c); this file says which calls each
 * f2fs operation makes in 6.12, found by whose dquot fails
 * (include/kunit/fs.h has the owners).  The image is a bare mkfs.f2fs with
 * the quota feature (user, group and project quota in hidden inodes, on at
 * mount), populated by the fixture.
 *
 * The fixture skips a case whose filesystem is not registered (a test
 * module loaded where it cannot run); f2fs_registered, first, tells that
 * apart from an f2fs that failed its own init.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/cred.h>
#include <linux/fileattr.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/quotaops.h>
#include <linux/statfs.h>

#include "namei_kunit_images.h"

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)

/*
 * f2fs_*() in namei.c and file.c: each operation initializes its
 * directories, then f2fs_new_inode() the new inode.  rmdir is
 * f2fs_unlink(); a rename onto an existing file initializes it, but not
 * the inode it moves.  A tmpfile's new inode is initialized again when it
 * is opened (dquot_file_open()), which fails too: only its dir is a row.
 * A whiteout is made, through the same __f2fs_tmpfile(), before the rename
 * initializes anything: its new inode is the rename's first call, and a
 * failure after it must let go of the whiteout made.
 * f2fs_setxattr() initializes the inode it changes.
 */
static const struct fs_kunit_fault f2fs_kunit_faults[] = {
	CREATES(FS_KUNIT_CREATE), CREATES(FS_KUNIT_MKNOD), CREATES(FS_KUNIT_MKDIR),
	CREATES(FS_KUNIT_SYMLINK),
	SITE(FS_KUNIT_TMPFILE, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RMDIR, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_RMDIR, "inode", FS_KUNIT_EMPTY),
	SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_UNLINK, "inode", FS_KUNIT_VICTIM),
	SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "new inode", FS_KUNIT_EXISTING),
	SITE(FS_KUNIT_RENAME_EXCHANGE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_EXCHANGE, "new dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_WHITEOUT, "whiteout", FS_KUNIT_NEW),
	SITE(FS_KUNIT_RENAME_WHITEOUT, "new dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_WHITEOUT, "new inode", FS_KUNIT_EXISTING),
	FS_KUNIT_SETATTRS,
	SITE(FS_KUNIT_OPEN_WRITE, "inode", FS_KUNIT_OWNED),
	SITE(FS_KUNIT_SETXATTR, "inode", FS_KUNIT_OWNED),
};

static const struct fs_kunit_ns_suite f2fs_kunit_ns = {
	.fstype = "f2fs", .image = &f2fs_kunit_image, .options = "", .populate = true,
};

FS_KUNIT_NS_PARAMS(f2fs_kunit, f2fs_kunit_faults);

static int f2fs_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &f2fs_kunit_ns);
}

/*
 * Project quota: FS_IOC_FSSETXATTR moves a file to another project with
 * f2fs_ioc_setproject(), which initializes the file's dquots and then
 * takes the new project's with f2fs_transfer_project_quota()'s own dqget().
 */
#define F2FS_KUNIT_PROJECT	7

/* Whose dquot cannot be read: the new project's, or the file owner's. */
struct f2fs_kunit_project_fault {
	const char *name;
	int type;
	qid_t id;
};

static const struct f2fs_kunit_project_fault f2fs_kunit_project_faults[] = {
	{ "new project", PRJQUOTA, F2FS_KUNIT_PROJECT },
	{ "owner", USRQUOTA, FS_KUNIT_OBJ_UID(FS_KUNIT_OWNED) },
};

KUNIT_ARRAY_PARAM_DESC(f2fs_kunit_project_faults, f2fs_kunit_project_faults, name);

KUNIT_DEFINE_ACTION_WRAPPER(f2fs_kunit_path_put, path_put, const struct path *);

static int f2fs_kunit_set_project(struct dentry *dentry, u32 projid)
{
	struct fileattr fa;

	fileattr_fill_xflags(&fa, 0);
	fa.fsx_projid = projid;
	return vfs_fileattr_set(&nop_mnt_idmap, dentry, &fa);
}

/*
 * Mount what the disk holds now (after unmounting @mnt, if any), with
 * @options: quota must be on again, all three kinds.  A filesystem that
 * marked its quota files for repair skips loading them.
 */
static struct vfsmount *f2fs_kunit_remount(struct kunit *test, struct vfsmount *mnt,
					   const char *options)
{
	int type;

	if (mnt)
		fs_kunit_unmount(test, mnt);
	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount_device(test, "f2fs", 0, options, &mnt), 0);
	for (type = USRQUOTA; type <= PRJQUOTA; type++)
		KUNIT_EXPECT_TRUE_MSG(test, sb_has_quota_active(mnt->mnt_sb, type),
				      "quota of type %d is off after the remount", type);
	return mnt;
}

/* /owned on @mnt; let go with kunit_release_action() before an unmount. */
static struct path *f2fs_kunit_owned(struct kunit *test, struct vfsmount *mnt)
{
	struct path *owned = kunit_kzalloc(test, sizeof(*owned), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, owned);
	KUNIT_ASSERT_EQ(test, vfs_path_lookup(mnt->mnt_root, mnt, "owned", 0, owned), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, f2fs_kunit_path_put, owned), 0);
	return owned;
}

static u32 f2fs_kunit_project(struct kunit *test, struct path *path)
{
	struct fileattr fa;

	KUNIT_ASSERT_EQ(test, vfs_fileattr_get(path->dentry, &fa), 0);
	return fa.fsx_projid;
}

/*
 * A dquot of the move cannot be read: the error is returned, and the disk
 * holds the file in its project, which its usage is charged to, and quota
 * that loads.
 */
static void setproject_fails_on_acquire_error(struct kunit *test)
{
	const struct f2fs_kunit_project_fault *p = test->param_value;
	struct fs_kunit_ns *ns = test->priv;
	struct vfsmount *mnt;
	int err;

	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(ns->sb, PRJQUOTA));
	fs_kunit_quota_fail(ns->stub, -EIO, p->type, p->id);
	err = f2fs_kunit_set_project(ns->obj[FS_KUNIT_OWNED], F2FS_KUNIT_PROJECT);
	fs_kunit_quota_fail(ns->stub, 0, -1, FS_KUNIT_ANY_ID);
	KUNIT_EXPECT_EQ(test, err, -EIO);
	KUNIT_EXPECT_GT_MSG(test, ns->stub->failed, 0, "the %s's dquot was never acquired",
			    p->name);
	fs_kunit_ns_unmount(test, ns);
	mnt = f2fs_kunit_remount(test, NULL, "");
	KUNIT_EXPECT_EQ_MSG(test, f2fs_kunit_project(test, f2fs_kunit_owned(test, mnt)), 0,
			    "the project changed, its usage did not");
}

/* A change that would take an id over its inode hard limit. */
struct f2fs_kunit_over_limit {
	const char *name;
	int type;
	const char *options;	/* the mount option that enforces the limit */
};

static const struct f2fs_kunit_over_limit f2fs_kunit_over_limits[] = {
	{ "chgrp", GRPQUOTA, "grpquota" },
	{ "project change", PRJQUOTA, "prjquota" },
};

KUNIT_ARRAY_PARAM_DESC(f2fs_kunit_over_limits, f2fs_kunit_over_limits, name);

/*
 * A chgrp or project change refused with -EDQUOT changes nothing, and so
 * leaves nothing to repair: the disk holds the file as it was, and quota
 * loads at the next mount.  The owner of a file may chgrp it to any group
 * of theirs: were quota marked for repair here, any user could turn it off
 * for every later mount, until fsck.f2fs repairs the files.
 */
static void over_limit_change_keeps_quota_on(struct kunit *test)
{
	const struct f2fs_kunit_over_limit *p = test->param_value;
	struct qc_dqblk limit = { .d_fieldmask = QC_INO_HARD, .d_ino_hardlimit = 1 };
	struct fs_kunit_ns *ns = test->priv;
	const struct cred *old;
	struct vfsmount *mnt;
	struct path *owned;
	struct kqid qid;
	int err;

	/* The id holds one inode already (pad/target; the project gets /d2): its limit. */
	if (p->type == PRJQUOTA) {
		KUNIT_ASSERT_EQ(test, f2fs_kunit_set_project(ns->obj[FS_KUNIT_D2],
							     F2FS_KUNIT_PROJECT), 0);
		qid = make_kqid_projid(make_kprojid(&init_user_ns, F2FS_KUNIT_PROJECT));
	} else {
		qid = make_kqid_gid(make_kgid(&init_user_ns, FS_KUNIT_OBJ_GID(FS_KUNIT_TARGET)));
	}
	fs_kunit_ns_unmount(test, ns);
	mnt = f2fs_kunit_remount(test, NULL, p->options);
	KUNIT_ASSERT_TRUE(test, sb_has_quota_limits_enabled(mnt->mnt_sb, p->type));
	KUNIT_ASSERT_EQ(test, dquot_set_dqblk(mnt->mnt_sb, qid, &limit), 0);
	owned = f2fs_kunit_owned(test, mnt);

	/* A caller that may go over hard limits would not meet this one. */
	old = fs_kunit_bound_by_hard_limits(test);
	if (p->type == PRJQUOTA)
		err = f2fs_kunit_set_project(owned->dentry, F2FS_KUNIT_PROJECT);
	else
		err = fs_kunit_chown(owned->dentry, GRPQUOTA, FS_KUNIT_OBJ_GID(FS_KUNIT_TARGET));
	revert_creds(old);
	KUNIT_EXPECT_EQ(test, err, -EDQUOT);

	kunit_release_action(test, f2fs_kunit_path_put, owned);
	mnt = f2fs_kunit_remount(test, mnt, p->options);
	owned = f2fs_kunit_owned(test, mnt);
	KUNIT_EXPECT_EQ(test, i_gid_read(d_inode(owned->dentry)),
			FS_KUNIT_OBJ_GID(FS_KUNIT_OWNED));
	KUNIT_EXPECT_EQ(test, f2fs_kunit_project(test, owned), 0);
}

/*
 * statfs of a directory in a project, with project limits on, shows the
 * project's limits; when the project's dquot cannot be read it shows the
 * filesystem's own figures (f2fs_statfs() goes on without the dquot that
 * f2fs_statfs_project() did not get, which must not touch it).
 */
static void statfs_of_project_dir_survives_acquire_error(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct fs_kunit_quota_stub *stub;
	struct vfsmount *mnt;
	struct kstatfs st;
	struct fileattr fa;
	struct path root;

	fileattr_fill_xflags(&fa, FS_XFLAG_PROJINHERIT);
	fa.fsx_projid = F2FS_KUNIT_PROJECT;
	KUNIT_ASSERT_EQ(test, vfs_fileattr_set(&nop_mnt_idmap, ns->obj[FS_KUNIT_D1], &fa), 0);
	/* Mounted again with limits on, so that no dquot of the project is cached. */
	fs_kunit_ns_unmount(test, ns);
	mnt = f2fs_kunit_remount(test, NULL, "prjquota");
	KUNIT_ASSERT_TRUE(test, sb_has_quota_limits_enabled(mnt->mnt_sb, PRJQUOTA));
	stub = fs_kunit_stub_acquire_dquot(test, mnt->mnt_sb);
	fs_kunit_quota_fail(stub, -EIO, PRJQUOTA, F2FS_KUNIT_PROJECT);
	KUNIT_ASSERT_EQ(test, vfs_path_lookup(mnt->mnt_root, mnt, "d1", 0, &root), 0);
	KUNIT_EXPECT_EQ(test, vfs_statfs(&root, &st), 0);
	path_put(&root);
	KUNIT_EXPECT_GT_MSG(test, stub->failed, 0, "the project's dquot was never acquired");
	KUNIT_EXPECT_GT(test, st.f_blocks, 0);
}

/*
 * f2fs_is_registered() - this code is linked with f2fs, built in or as the
 * module it needs, so f2fs ran its init; a failed init leaves f2fs
 * unregistered and every case of f2fs_dquot skipped.  Without
 * CONFIG_PROC_FS the init once took proc_mkdir()'s stub NULL for a failure.
 */
static void f2fs_is_registered(struct kunit *test)
{
	struct file_system_type *type = get_fs_type("f2fs");

	KUNIT_ASSERT_NOT_NULL_MSG(test, type, "f2fs failed its init: it was never registered");
	module_put(type->owner);
}

static struct kunit_case f2fs_registered_kunit_cases[] = {
	KUNIT_CASE(f2fs_is_registered),
	{}
};

static struct kunit_suite f2fs_registered_kunit_suite = {
	.name = "f2fs_registered",
	.test_cases = f2fs_registered_kunit_cases,
};

static struct kunit_case f2fs_kunit_cases[] = {
	FS_KUNIT_NS_CASES(f2fs_kunit),
	KUNIT_CASE_PARAM(setproject_fails_on_acquire_error, f2fs_kunit_project_faults_gen_params),
	KUNIT_CASE(statfs_of_project_dir_survives_acquire_error),
	KUNIT_CASE_PARAM(over_limit_change_keeps_quota_on, f2fs_kunit_over_limits_gen_params),
	{}
};

static struct kunit_suite f2fs_kunit_suite = {
	.name = "f2fs_dquot",
	.init = f2fs_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = f2fs_kunit_cases,
};

kunit_test_suites(&f2fs_registered_kunit_suite, &f2fs_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for quota errors in f2fs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

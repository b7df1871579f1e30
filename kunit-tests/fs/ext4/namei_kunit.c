// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that ext4 namespace and setattr operations return the error of
 * dquot_initialize() and change nothing, and that ext3 volumes are served
 * by this driver as ext3.
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
#include <linux/file.h>
#include <linux/fileattr.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/quotaops.h>
#include <linux/statfs.h>

#include "ext4.h"
#include "namei_kunit_images.h"

#define SITE(op, site, owner)	FS_KUNIT_SITE(op, site, owner)
#define CREATES(op)		FS_KUNIT_CREATES(op)
/* ext4 retries an inode allocation that failed with ENOSPC: its own path. */
#define NEW_INODE_ENOSPC(_op) \
	{ .op = (_op), .site = "new inode", .owner = FS_KUNIT_NEW, .err = -ENOSPC }

/* ext4_*() in namei.c and inode.c, __ext4_new_inode() in ialloc.c. */
static const struct fs_kunit_fault ext4_kunit_faults[] = {
	CREATES(FS_KUNIT_CREATE), NEW_INODE_ENOSPC(FS_KUNIT_CREATE),
	CREATES(FS_KUNIT_MKNOD), NEW_INODE_ENOSPC(FS_KUNIT_MKNOD),
	CREATES(FS_KUNIT_MKDIR), NEW_INODE_ENOSPC(FS_KUNIT_MKDIR),
	CREATES(FS_KUNIT_SYMLINK), NEW_INODE_ENOSPC(FS_KUNIT_SYMLINK),
	/*
	 * A tmpfile's new inode is initialized again when it is opened
	 * (dquot_file_open()), which fails too: only its dir is a row.
	 */
	SITE(FS_KUNIT_TMPFILE, "dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RMDIR, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_RMDIR, "inode", FS_KUNIT_EMPTY),
	SITE(FS_KUNIT_UNLINK, "dir", FS_KUNIT_D1), SITE(FS_KUNIT_UNLINK, "inode", FS_KUNIT_VICTIM),
	SITE(FS_KUNIT_LINK, "dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_REPLACE, "old inode", FS_KUNIT_VICTIM),
	SITE(FS_KUNIT_RENAME_REPLACE, "new dir", FS_KUNIT_D2),
	SITE(FS_KUNIT_RENAME_REPLACE, "new inode", FS_KUNIT_EXISTING),
	SITE(FS_KUNIT_RENAME_EXCHANGE, "old dir", FS_KUNIT_D1),
	SITE(FS_KUNIT_RENAME_EXCHANGE, "new dir", FS_KUNIT_D2),
	FS_KUNIT_SETATTRS,
};

static const struct fs_kunit_ns_suite ext4_kunit_ns = {
	.fstype = "ext4", .image = &ext4_kunit_image, .options = "",
};

FS_KUNIT_NS_PARAMS(ext4_kunit, ext4_kunit_faults);

static int ext4_kunit_init(struct kunit *test)
{
	return fs_kunit_ns_init(test, &ext4_kunit_ns);
}

/*
 * EXT4_IOC_SWAP_BOOT swaps a file with the boot loader inode and takes the
 * file's blocks out of its owner's usage: the boot loader's are charged to
 * no one.  With the quota feature, quota is journalled, so the usage is
 * written in the swap's own transaction, which must have the credits for
 * it: otherwise the handle runs out, the quota write fails, and ext4
 * records a filesystem error.
 */
static void swap_boot_moves_usage_in_its_transaction(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct kqid owner = make_kqid_uid(KUIDT_INIT(FS_KUNIT_OBJ_UID(FS_KUNIT_OWNED)));
	struct qc_dqblk before, after;
	struct inode *inode;
	struct file *file;
	loff_t bytes, left;
	int errors;
	long err;

	/* Every assertion that can stop the case comes before the open. */
	inode = d_inode(ns->obj[FS_KUNIT_OWNED]);
	bytes = inode_get_bytes(inode);
	KUNIT_ASSERT_GT(test, bytes, 0);
	KUNIT_ASSERT_EQ(test, dquot_get_dqblk(ns->sb, owner, &before), 0);
	file = file_open_root_mnt(ns->mnt, "owned", O_RDWR, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	err = file->f_op->unlocked_ioctl(file, EXT4_IOC_SWAP_BOOT, 0);
	KUNIT_EXPECT_EQ(test, dquot_get_dqblk(ns->sb, owner, &after), 0);
	left = inode_get_bytes(inode);
	errors = READ_ONCE(EXT4_SB(ns->sb)->s_add_error_count);
	__fput_sync(file);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ_MSG(test, errors, 0, "the swap's handle ran out of credits");
	/* The boot loader inode had never been used: the file is empty now. */
	KUNIT_EXPECT_EQ(test, left, 0);
	KUNIT_EXPECT_EQ(test, after.d_space, before.d_space - bytes);
}

/*
 * A new inode over its owner's inode hard limit: dquot_alloc_inode() refuses
 * it after __ext4_new_inode() has read the inode bitmap and taken a bit in
 * it.  The way out gives the bit and the bitmap's buffer back and leaves the
 * usage as it was; a buffer still held is found by the fixture's device
 * check when the case unmounts.
 */
static void create_over_inode_limit_holds_nothing(struct kunit *test)
{
	struct fs_kunit_ns *ns = test->priv;
	struct kqid owner = make_kqid_uid(KUIDT_INIT(FS_KUNIT_OBJ_UID(FS_KUNIT_NEW)));
	struct qc_dqblk limit = { .d_fieldmask = QC_INO_HARD, .d_ino_hardlimit = 1 };
	struct path root = { .mnt = ns->mnt, .dentry = ns->mnt->mnt_root };
	struct kstatfs before, after;
	struct qc_dqblk usage, left;
	const struct cred *old;
	int err;

	/* The new owner has an inode of the image's: a limit of one, enforced. */
	KUNIT_ASSERT_EQ(test, dquot_get_dqblk(ns->sb, owner, &usage), 0);
	KUNIT_ASSERT_GE(test, usage.d_ino_count, 1);
	KUNIT_ASSERT_EQ(test, dquot_set_dqblk(ns->sb, owner, &limit), 0);
	KUNIT_ASSERT_EQ(test, fs_kunit_enforce_user_limits(ns->sb, true), 0);
	KUNIT_ASSERT_EQ(test, vfs_statfs(&root, &before), 0);

	old = fs_kunit_bound_by_hard_limits(test);
	err = fs_kunit_ns_run(test, FS_KUNIT_CREATE);
	revert_creds(old);

	KUNIT_EXPECT_EQ(test, err, -EDQUOT);
	KUNIT_ASSERT_EQ(test, dquot_get_dqblk(ns->sb, owner, &left), 0);
	KUNIT_EXPECT_EQ(test, left.d_ino_count, usage.d_ino_count);
	KUNIT_ASSERT_EQ(test, vfs_statfs(&root, &after), 0);
	KUNIT_EXPECT_EQ_MSG(test, after.f_ffree, before.f_ffree, "free inodes");
}

static struct kunit_case ext4_kunit_cases[] = {
	FS_KUNIT_NS_CASES(ext4_kunit),
	KUNIT_CASE(swap_boot_moves_usage_in_its_transaction),
	KUNIT_CASE(create_over_inode_limit_holds_nothing),
	{}
};

static struct kunit_suite ext4_kunit_suite = {
	.name = "ext4_dquot",
	.init = ext4_kunit_init,
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = ext4_kunit_cases,
};

/*
 * ext3 volumes, served by this driver under the name ext3 since commit
 * c290ea01abb7: each case mounts by that name itself.
 */
static int ext3_kunit_mount(struct kunit *test, const struct fs_kunit_image *image,
			    struct vfsmount **mnt)
{
	return fs_kunit_try_mount(test, "ext3", image, 0, "", mnt);
}

static void ext3_volume_is_served_by_ext4(struct kunit *test)
{
	struct file_system_type *ext4 = get_fs_type("ext4");
	struct file_system_type *ext3;
	struct vfsmount *mnt;

	KUNIT_ASSERT_NOT_NULL(test, ext4);
	module_put(ext4->owner);
	/* The fixture skips a case whose type is missing: here that is the bug. */
	ext3 = get_fs_type("ext3");
	KUNIT_ASSERT_NOT_NULL_MSG(test, ext3, "ext4 does not register the ext3 type");
	module_put(ext3->owner);
	KUNIT_ASSERT_EQ(test, ext3_kunit_mount(test, &ext3_kunit_image, &mnt), 0);
	KUNIT_EXPECT_STREQ(test, mnt->mnt_sb->s_type->name, "ext3");
	KUNIT_EXPECT_PTR_EQ(test, mnt->mnt_sb->s_type->init_fs_context, ext4->init_fs_context);
}

/* A volume with features ext3 never had (extents, flex_bg, ...) is not ext3. */
static void ext3_mount_refuses_ext4_features(struct kunit *test)
{
	struct vfsmount *mnt;

	KUNIT_EXPECT_EQ(test, ext3_kunit_mount(test, &ext4_kunit_image, &mnt), -EINVAL);
}

/*
 * The driver writes what the volume's features allow, not what it could
 * write: a file made on an ext3 volume maps its blocks the ext3 way, or
 * ext3 tools and older kernels could no longer read it.
 */
static void ext3_new_file_is_block_mapped(struct kunit *test)
{
	static const char data[] = "ext3";
	struct fileattr fa = {};
	struct vfsmount *mnt;
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;
	int err;

	KUNIT_ASSERT_EQ(test, ext3_kunit_mount(test, &ext3_kunit_image, &mnt), 0);
	file = file_open_root_mnt(mnt, "ext3-file", O_WRONLY | O_CREAT | O_EXCL, 0644);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	ret = kernel_write(file, data, sizeof(data), &pos);
	err = vfs_fileattr_get(file->f_path.dentry, &fa);
	__fput_sync(file);
	KUNIT_ASSERT_EQ(test, ret, (ssize_t)sizeof(data));
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_FALSE_MSG(test, fa.flags & FS_EXTENT_FL, "an ext3 file with extents");
}

static struct kunit_case ext3_kunit_cases[] = {
	KUNIT_CASE(ext3_volume_is_served_by_ext4),
	KUNIT_CASE(ext3_mount_refuses_ext4_features),
	KUNIT_CASE(ext3_new_file_is_block_mapped),
	{}
};

static struct kunit_suite ext3_kunit_suite = {
	.name = "ext3_on_ext4",
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = ext3_kunit_cases,
};

/*
 * Project quota: an image with the project feature, project quota on at
 * mount, and /owned in project 0.  FS_IOC_FSSETXATTR moves a file to
 * another project with ext4_ioctl_setproject(), which takes the new
 * project's dquot with its own dqget().
 */
#define EXT4_KUNIT_PROJECT	7

KUNIT_DEFINE_ACTION_WRAPPER(ext4_kunit_path_put, path_put, const struct path *);

/* Whose dquot cannot be read: the new project's, or the file owner's. */
struct ext4_kunit_project_fault {
	const char *name;
	int type;
	qid_t id;
};

static const struct ext4_kunit_project_fault ext4_kunit_project_faults[] = {
	{ "new project", PRJQUOTA, EXT4_KUNIT_PROJECT },
	{ "owner", USRQUOTA, 1001 },	/* /owned's uid in the image */
};

KUNIT_ARRAY_PARAM_DESC(ext4_kunit_project_faults, ext4_kunit_project_faults, name);

/*
 * A dquot of the move cannot be read (the new project's, taken by
 * ext4_ioctl_setproject()'s own dqget(), or the owner's, by its
 * dquot_initialize()): the file stays in its project, whose usage it is
 * charged to, and the error is returned.  Only -ESRCH, project quota off,
 * lets the project change with no usage to move.
 */
static void setproject_fails_on_acquire_error(struct kunit *test)
{
	const struct ext4_kunit_project_fault *p = test->param_value;
	struct fs_kunit_quota_stub *stub;
	struct vfsmount *mnt;
	struct fileattr fa;
	struct path *path;
	int err;

	path = kunit_kzalloc(test, sizeof(*path), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, path);
	mnt = fs_kunit_mount(test, "ext4", &ext4_kunit_project_image, 0, "");
	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(mnt->mnt_sb, PRJQUOTA));
	KUNIT_ASSERT_EQ(test, vfs_path_lookup(mnt->mnt_root, mnt, "owned", 0, path), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, ext4_kunit_path_put, path), 0);
	stub = fs_kunit_stub_acquire_dquot(test, mnt->mnt_sb);
	fs_kunit_quota_fail(stub, -EIO, p->type, p->id);
	fileattr_fill_xflags(&fa, 0);
	fa.fsx_projid = EXT4_KUNIT_PROJECT;
	err = vfs_fileattr_set(&nop_mnt_idmap, path->dentry, &fa);
	fs_kunit_quota_fail(stub, 0, -1, FS_KUNIT_ANY_ID);
	KUNIT_EXPECT_EQ(test, err, -EIO);
	KUNIT_EXPECT_GT_MSG(test, stub->failed, 0, "the %s's dquot was never acquired", p->name);
	KUNIT_ASSERT_EQ(test, vfs_fileattr_get(path->dentry, &fa), 0);
	KUNIT_EXPECT_EQ_MSG(test, fa.fsx_projid, 0, "the project changed, its usage did not");
}

/*
 * statfs of a directory in a project, with project limits on, shows the
 * project's limits; when the project's dquot cannot be read it shows the
 * filesystem's own figures (ext4_statfs() goes on without the dquot it did
 * not get, and must not touch it).
 */
static void statfs_of_project_dir_survives_acquire_error(struct kunit *test)
{
	struct fs_kunit_quota_stub *stub;
	struct vfsmount *mnt;
	struct kstatfs st;
	struct fileattr fa;
	struct path root;

	mnt = fs_kunit_mount(test, "ext4", &ext4_kunit_project_image, 0, "prjquota");
	fileattr_fill_xflags(&fa, FS_XFLAG_PROJINHERIT);
	fa.fsx_projid = EXT4_KUNIT_PROJECT;
	KUNIT_ASSERT_EQ(test, vfs_fileattr_set(&nop_mnt_idmap, mnt->mnt_root, &fa), 0);
	/* Mounted again, so that no dquot of the project is cached. */
	fs_kunit_unmount(test, mnt);
	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount_device(test, "ext4", 0, "prjquota", &mnt), 0);
	KUNIT_ASSERT_TRUE(test, sb_has_quota_limits_enabled(mnt->mnt_sb, PRJQUOTA));
	stub = fs_kunit_stub_acquire_dquot(test, mnt->mnt_sb);
	fs_kunit_quota_fail(stub, -EIO, PRJQUOTA, EXT4_KUNIT_PROJECT);
	root.mnt = mnt;
	root.dentry = mnt->mnt_root;
	KUNIT_EXPECT_EQ(test, vfs_statfs(&root, &st), 0);
	KUNIT_EXPECT_GT_MSG(test, stub->failed, 0, "the project's dquot was never acquired");
	KUNIT_EXPECT_GT(test, st.f_blocks, 0);
}

static struct kunit_case ext4_project_kunit_cases[] = {
	KUNIT_CASE_PARAM(setproject_fails_on_acquire_error, ext4_kunit_project_faults_gen_params),
	KUNIT_CASE(statfs_of_project_dir_survives_acquire_error),
	{}
};

static struct kunit_suite ext4_project_kunit_suite = {
	.name = "ext4_project_dquot",
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = ext4_project_kunit_cases,
};

kunit_test_suites(&ext4_kunit_suite, &ext3_kunit_suite, &ext4_project_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for dquot_initialize() errors in ext4, and for ext3 volumes");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

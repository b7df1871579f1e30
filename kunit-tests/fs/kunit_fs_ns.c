// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace fixture of the filesystem quota suites (ext4, ext2,
 * reiserfs, jfs, ocfs2, tmpfs): run one namespace or setattr operation on a
 * mounted image while ->acquire_dquot() fails, and check that the operation
 * returns the error and that the disk, read again after an unmount, holds
 * what it held before (tmpfs, which has no disk: what the mount holds).
 *
 * The suites only say which image to mount and which dquot_initialize()
 * calls each operation makes (struct fs_kunit_fault); the cases are here, so
 * every filesystem is held to exactly the same standard.
 */
#include <kunit/fs.h>
#include <kunit/resource.h>
#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/quotaops.h>
#include <linux/sched.h>
#include <linux/statfs.h>
#include <linux/timekeeping.h>
#include <linux/xattr.h>

static const char *const fs_kunit_op_names[] = {
	[FS_KUNIT_CREATE] = "create", [FS_KUNIT_MKNOD] = "mknod", [FS_KUNIT_MKDIR] = "mkdir",
	[FS_KUNIT_RMDIR] = "rmdir", [FS_KUNIT_UNLINK] = "unlink", [FS_KUNIT_SYMLINK] = "symlink",
	[FS_KUNIT_LINK] = "link", [FS_KUNIT_RENAME_REPLACE] = "rename onto an existing file",
	[FS_KUNIT_RENAME_EXCHANGE] = "rename exchange", [FS_KUNIT_TMPFILE] = "tmpfile",
	[FS_KUNIT_CHOWN] = "chown", [FS_KUNIT_CHGRP] = "chgrp",
	[FS_KUNIT_OPEN_WRITE] = "open for writing",
	[FS_KUNIT_RENAME_WHITEOUT] = "rename leaving a whiteout",
	[FS_KUNIT_SETXATTR] = "setxattr",
};

/* What FS_KUNIT_SETXATTR sets on /owned, where the state looks for it. */
#define FS_KUNIT_XATTR	"user.fs_kunit"

static const char *const fs_kunit_obj_paths[FS_KUNIT_NR_OBJS] = {
	[FS_KUNIT_D1] = "d1", [FS_KUNIT_D2] = "d2", [FS_KUNIT_VICTIM] = "d1/victim",
	[FS_KUNIT_EMPTY] = "d1/empty", [FS_KUNIT_EXISTING] = "d2/existing",
	[FS_KUNIT_OWNED] = "owned",
};

/* Every name an operation can add or remove. */
static const struct {
	enum fs_kunit_obj dir;
	const char *name;
} fs_kunit_names[] = {
	{ FS_KUNIT_D1, "victim" }, { FS_KUNIT_D1, "empty" }, { FS_KUNIT_D1, "new" },
	{ FS_KUNIT_D2, "existing" }, { FS_KUNIT_D2, "linked" },
};

/*
 * Longer than the 60 bytes of i_block, so the target needs a block: every
 * filesystem here makes its dquot_initialize() calls before it decides
 * between an inline and a block target, so one length covers both.
 */
static const char fs_kunit_long_target[] =
	"a-symlink-target-long-enough-not-to-fit-in-the-inode/a-symlink-target-long-enough";

/**
 * fs_kunit_chown() - chown(2) or chgrp(2) @dentry to @id, through notify_change()
 * @dentry: the file
 * @type: USRQUOTA for the owner, GRPQUOTA for the group
 * @id: the new uid or gid
 *
 * Return: what notify_change() returned.
 */
int fs_kunit_chown(struct dentry *dentry, int type, qid_t id)
{
	struct inode *inode = d_inode(dentry);
	struct iattr attr = { .ia_valid = ATTR_CTIME };
	int err;

	if (type == USRQUOTA) {
		attr.ia_valid |= ATTR_UID;
		attr.ia_vfsuid = VFSUIDT_INIT(make_kuid(&init_user_ns, id));
	} else {
		attr.ia_valid |= ATTR_GID;
		attr.ia_vfsgid = VFSGIDT_INIT(make_kgid(&init_user_ns, id));
	}
	inode_lock(inode);
	err = notify_change(&nop_mnt_idmap, dentry, &attr, NULL);
	inode_unlock(inode);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_chown);

/**
 * fs_kunit_bound_by_hard_limits() - the caller, as one whom quota hard limits bind
 * @test: the test
 *
 * Hard limits do not bind CAP_SYS_RESOURCE, which KUnit's threads have: the
 * caller's credentials without it, as an unprivileged user's operation has
 * them.  Credentials are the task's own, so the caller gives them back with
 * revert_creds(), not in an action (which KUnit runs in another thread).
 *
 * Return: the credentials to give revert_creds().
 */
const struct cred *fs_kunit_bound_by_hard_limits(struct kunit *test)
{
	struct cred *cred = prepare_creds();
	const struct cred *old;

	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_SYS_RESOURCE);
	old = override_creds(cred);
	put_cred(cred);
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_bound_by_hard_limits);

/**
 * fs_kunit_enforce_user_limits() - turn the enforcement of user quota limits
 * on or off, as Q_XQUOTAON/OFF do on a filesystem whose quota files are its own
 * @sb: the superblock; its quota is on, usage only (the quota feature)
 * @on: enforce them, or stop
 *
 * Return: what ->quota_enable() or ->quota_disable() returned.
 */
int fs_kunit_enforce_user_limits(struct super_block *sb, bool on)
{
	int err;

	/* Under s_umount, as quotactl(2) calls them. */
	down_write(&sb->s_umount);
	err = on ? sb->s_qcop->quota_enable(sb, FS_QUOTA_UDQ_ENFD) :
		   sb->s_qcop->quota_disable(sb, FS_QUOTA_UDQ_ENFD);
	up_write(&sb->s_umount);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_enforce_user_limits);

/**
 * fs_kunit_expect_no_leaked_dquot_refs() - the dquot of @qid is referenced by
 * the inodes in @holders that point at it, and by nothing else
 * @test: the test
 * @sb: the superblock
 * @qid: the dquot
 * @holders: inodes that may legitimately hold it
 * @nr_holders: how many
 *
 * A surplus reference is a leak: it fails the test and is dropped again,
 * since unmount would otherwise wait for it forever and take every later
 * case down with it.
 */
void fs_kunit_expect_no_leaked_dquot_refs(struct kunit *test, struct super_block *sb,
					  struct kqid qid, struct inode *const *holders,
					  int nr_holders)
{
	struct dquot *dquot = dqget(sb, qid);
	int expected = 0, refs, i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dquot);
	for (i = 0; i < nr_holders; i++) {
		struct dquot *held;

		held = rcu_access_pointer(sb->s_op->get_dquots(holders[i])[qid.type]);

		expected += held == dquot;
	}
	refs = atomic_read(&dquot->dq_count) - 1;	/* ours */
	KUNIT_EXPECT_EQ_MSG(test, refs, expected, "references held on %s dquot %u",
			    qid.type == USRQUOTA ? "user" : "group",
			    from_kqid(&init_user_ns, qid));
	while (refs-- > expected)
		dqput(dquot);
	dqput(dquot);
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_expect_no_leaked_dquot_refs);

/**
 * fs_kunit_quota_on() - quotaon(8) of @file, a quota file in vfsv1 format
 * @test: the test
 * @mnt: the mount holding @file
 * @type: USRQUOTA or GRPQUOTA
 * @file: path of the quota file, relative to the root of @mnt
 *
 * Return: 0 or the error of dquot_quota_on().
 */
int fs_kunit_quota_on(struct kunit *test, struct vfsmount *mnt, int type, const char *file)
{
	struct super_block *sb = mnt->mnt_sb;
	struct path path;
	int err;

	err = vfs_path_lookup(mnt->mnt_root, mnt, file, 0, &path);
	if (err)
		return err;
	/* Q_QUOTAON holds s_umount exclusively, as quotactl_block() does. */
	down_write(&sb->s_umount);
	err = sb->s_qcop->quota_on(sb, type, QFMT_VFS_V1, &path);
	up_write(&sb->s_umount);
	path_put(&path);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_quota_on);

static bool fs_kunit_op_leaves_trace(enum fs_kunit_op op)
{
	return op != FS_KUNIT_TMPFILE && op != FS_KUNIT_OPEN_WRITE;
}

static int fs_kunit_fault_err(const struct fs_kunit_fault *f)
{
	return f->err ?: -EIO;
}

/**
 * fs_kunit_ns_gen_params() - the rows of a fault table, as KUnit parameters
 * @faults: the suite's table
 * @nr: its length
 * @traced: only rows whose operation leaves a trace on the disk
 * @prev: the previous row, NULL for the first
 * @desc: the row's description, "op: site ERRNO"
 *
 * Return: the next row, or NULL after the last.
 */
const void *fs_kunit_ns_gen_params(const struct fs_kunit_fault *faults, int nr, bool traced,
				   const void *prev, char *desc)
{
	const struct fs_kunit_fault *f = prev ? (const struct fs_kunit_fault *)prev + 1 : faults;

	while (f < faults + nr && traced && !fs_kunit_op_leaves_trace(f->op))
		f++;
	if (f >= faults + nr)
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %s %s", fs_kunit_op_names[f->op], f->site,
		 fs_kunit_fault_err(f) == -ENOSPC ? "ENOSPC" : "EIO");
	return f;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_ns_gen_params);

KUNIT_DEFINE_ACTION_WRAPPER(fs_kunit_dput_action, dput, struct dentry *);

/*
 * Quota files made for an image own nothing: give every id the operations
 * touch an entry (a limit) now, so that no operation under test allocates a
 * quota file block to create one.  Then turn quota off and on again, which
 * empties the dquot cache, so that every dquot is acquired again, through
 * the stub, by the operations.
 */
static void fs_kunit_ns_prime_quota_files(struct kunit *test, struct fs_kunit_ns *ns)
{
	struct super_block *sb = ns->sb;
	int obj, type, err;

	for (type = USRQUOTA; type <= GRPQUOTA; type++) {
		KUNIT_ASSERT_EQ(test, fs_kunit_quota_on(test, ns->mnt, type,
							type == USRQUOTA ? "aquota.user" :
									   "aquota.group"), 0);
		for (obj = 0; obj < FS_KUNIT_NR_IDS; obj++) {
			struct qc_dqblk di = { .d_fieldmask = QC_INO_SOFT,
					       .d_ino_softlimit = 1000000 };
			struct kqid qid = type == USRQUOTA ?
				make_kqid_uid(make_kuid(&init_user_ns, FS_KUNIT_OBJ_UID(obj))) :
				make_kqid_gid(make_kgid(&init_user_ns, FS_KUNIT_OBJ_GID(obj)));

			KUNIT_ASSERT_EQ(test, dquot_set_dqblk(sb, qid, &di), 0);
		}
		/* An assertion under s_umount would end the case with it held. */
		down_write(&sb->s_umount);
		err = sb->s_qcop->quota_off(sb, type);
		up_write(&sb->s_umount);
		KUNIT_ASSERT_EQ(test, err, 0);
		KUNIT_ASSERT_EQ(test, fs_kunit_quota_on(test, ns->mnt, type,
							type == USRQUOTA ? "aquota.user" :
									   "aquota.group"), 0);
	}
}

#include "kunit_fs_quota_files.h"

/* Runs the caller as @uid/@gid: what it creates is theirs, charged to them. */
static const struct cred *fs_kunit_ns_become(struct kunit *test, uid_t uid, gid_t gid)
{
	struct cred *cred = prepare_creds();
	const struct cred *old;

	KUNIT_ASSERT_NOT_NULL(test, cred);
	cred->fsuid = make_kuid(&init_user_ns, uid);
	cred->fsgid = make_kgid(&init_user_ns, gid);
	old = override_creds(cred);
	put_cred(cred);
	return old;
}

/* mkdir or create @path (its parent exists) as @uid/@gid. */
static void fs_kunit_ns_make(struct kunit *test, struct vfsmount *mnt, const char *path,
			     umode_t mode, uid_t uid, gid_t gid)
{
	const char *name = strrchr(path, '/');
	char parent[16] = ".";
	const struct cred *old;
	struct dentry *dentry;
	struct path dir;
	int err;

	if (name)
		strscpy(parent, path, min_t(size_t, name - path + 1, sizeof(parent)));
	name = name ? name + 1 : path;
	KUNIT_ASSERT_EQ(test, vfs_path_lookup(mnt->mnt_root, mnt, parent, 0, &dir), 0);
	old = fs_kunit_ns_become(test, uid, gid);
	inode_lock_nested(d_inode(dir.dentry), I_MUTEX_PARENT);
	dentry = lookup_one_len(name, dir.dentry, strlen(name));
	err = PTR_ERR_OR_ZERO(dentry);
	if (!err) {
		err = S_ISDIR(mode) ? vfs_mkdir(&nop_mnt_idmap, d_inode(dir.dentry), dentry, mode) :
			vfs_create(&nop_mnt_idmap, d_inode(dir.dentry), dentry, mode, true);
		dput(dentry);
	}
	inode_unlock(d_inode(dir.dentry));
	revert_creds(old);
	path_put(&dir);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cannot make /%s", path);
}

/* A root-owned quota file holding @image, as quotacheck would leave it. */
static void fs_kunit_ns_write_quota_file(struct kunit *test, struct vfsmount *mnt,
					 const char *name, const struct fs_kunit_image *image)
{
	u8 *data = fs_kunit_image_bytes(test, image);
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;

	file = file_open_root_mnt(mnt, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	ret = kernel_write(file, data, image->size, &pos);
	__fput_sync(file);
	KUNIT_ASSERT_EQ_MSG(test, ret, (ssize_t)image->size, "cannot write /%s", name);
}

/*
 * What tools/testing/fs_kunit/make-ext.sh copies into its images, made here for filesystems
 * whose mkfs cannot copy a tree in: the objects with their owners; pad/ with
 * a file for each of the two ids no object has, so that every id the cases
 * use has a quota entry before the operation under test runs; the quota
 * files.
 */
static void fs_kunit_ns_populate(struct kunit *test, struct fs_kunit_ns *ns,
				 const struct fs_kunit_ns_suite *suite)
{
	int i;

	for (i = 0; i < FS_KUNIT_NR_OBJS; i++) {
		bool dir = i == FS_KUNIT_D1 || i == FS_KUNIT_D2 || i == FS_KUNIT_EMPTY;

		fs_kunit_ns_make(test, ns->mnt, fs_kunit_obj_paths[i],
				 dir ? S_IFDIR | 0755 : S_IFREG | 0644,
				 FS_KUNIT_OBJ_UID(i), FS_KUNIT_OBJ_GID(i));
	}
	/*
	 * Quota kept in memory has no file to give entries to, and an inode of
	 * the new owner's would keep its dquots cached: then nothing the
	 * operations do would call ->acquire_dquot().
	 */
	if (suite->in_memory)
		return;
	fs_kunit_ns_make(test, ns->mnt, "pad", S_IFDIR | 0755, 0, 0);
	fs_kunit_ns_make(test, ns->mnt, "pad/new", S_IFREG | 0644,
			 FS_KUNIT_OBJ_UID(FS_KUNIT_NEW), FS_KUNIT_OBJ_GID(FS_KUNIT_NEW));
	fs_kunit_ns_make(test, ns->mnt, "pad/target", S_IFREG | 0644,
			 FS_KUNIT_OBJ_UID(FS_KUNIT_TARGET), FS_KUNIT_OBJ_GID(FS_KUNIT_TARGET));
	if (suite->quota_files) {
		fs_kunit_ns_write_quota_file(test, ns->mnt, "aquota.user", &fs_kunit_aquota_user);
		fs_kunit_ns_write_quota_file(test, ns->mnt, "aquota.group",
					     &fs_kunit_aquota_group);
	}
}

static void fs_kunit_ns_quota_on(struct kunit *test, struct fs_kunit_ns *ns)
{
	KUNIT_ASSERT_EQ(test, fs_kunit_quota_on(test, ns->mnt, USRQUOTA, "aquota.user"), 0);
	KUNIT_ASSERT_EQ(test, fs_kunit_quota_on(test, ns->mnt, GRPQUOTA, "aquota.group"), 0);
}

/*
 * Objects just made have the coarse clock's present time as their ctime,
 * and so would anything an operation changed within the same tick: wait
 * for the next one, so that every change shows.
 */
static void fs_kunit_ns_next_tick(void)
{
	struct timespec64 made, now;

	ktime_get_coarse_real_ts64(&made);
	do {
		schedule_timeout_uninterruptible(1);
		ktime_get_coarse_real_ts64(&now);
	} while (timespec64_equal(&now, &made));
}

/* Unmount, and mount what the device holds now: nothing cached survives. */
static void fs_kunit_ns_mount_again(struct kunit *test, struct fs_kunit_ns *ns)
{
	const struct fs_kunit_ns_suite *suite = ns->suite;

	fs_kunit_unmount(test, ns->mnt);
	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount_device(test, suite->fstype, 0, suite->options,
							&ns->mnt), 0);
	ns->sb = ns->mnt->mnt_sb;
}

/**
 * fs_kunit_ns_init() - suite init: mount the image with quota on, find the
 * objects, stub ->acquire_dquot()
 * @test: the test
 * @suite: what to mount, and how
 *
 * Return: 0; failures are assertions.
 */
int fs_kunit_ns_init(struct kunit *test, const struct fs_kunit_ns_suite *suite)
{
	struct fs_kunit_ns *ns;
	int i;

	ns = kunit_kzalloc(test, sizeof(*ns), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ns);
	ns->suite = suite;
	if (suite->in_memory)
		ns->mnt = fs_kunit_mount_nodev(test, suite->fstype, suite->options);
	else
		ns->mnt = fs_kunit_mount(test, suite->fstype, suite->image, 0, suite->options);
	ns->sb = ns->mnt->mnt_sb;
	if (suite->populate) {
		fs_kunit_ns_populate(test, ns, suite);
		/*
		 * Mount the result afresh, as the other suites mount an image
		 * made with its objects: nothing cached, so every dquot is
		 * acquired again, through the stub.  In memory, only the
		 * objects' own owners have their dquots cached.
		 */
		if (!suite->in_memory)
			fs_kunit_ns_mount_again(test, ns);
		else
			fs_kunit_ns_next_tick();
	}
	if (suite->quota_files)
		fs_kunit_ns_prime_quota_files(test, ns);
	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(ns->sb, USRQUOTA));
	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(ns->sb, GRPQUOTA));
	for (i = 0; i < FS_KUNIT_NR_OBJS; i++) {
		struct path path;

		KUNIT_ASSERT_EQ_MSG(test, vfs_path_lookup(ns->mnt->mnt_root, ns->mnt,
							  fs_kunit_obj_paths[i], 0, &path), 0,
				    "/%s is not in the image", fs_kunit_obj_paths[i]);
		ns->obj[i] = dget(path.dentry);
		path_put(&path);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_dput_action,
								ns->obj[i]), 0);
		KUNIT_ASSERT_EQ(test, i_uid_read(d_inode(ns->obj[i])), FS_KUNIT_OBJ_UID(i));
	}
	ns->stub = fs_kunit_stub_acquire_dquot(test, ns->sb);
	test->priv = ns;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_ns_init);

static int fs_kunit_in_dir(struct fs_kunit_ns *ns, enum fs_kunit_op op)
{
	struct mnt_idmap *idmap = &nop_mnt_idmap;
	struct dentry *dir = ns->obj[op == FS_KUNIT_LINK ? FS_KUNIT_D2 : FS_KUNIT_D1];
	const char *name = op == FS_KUNIT_RMDIR ? "empty" : op == FS_KUNIT_UNLINK ? "victim" :
			   op == FS_KUNIT_LINK ? "linked" : "new";
	struct inode *di = d_inode(dir);
	struct dentry *dentry;
	int err;

	inode_lock_nested(di, I_MUTEX_PARENT);
	dentry = lookup_one_len(name, dir, strlen(name));
	if (IS_ERR(dentry)) {
		inode_unlock(di);
		return PTR_ERR(dentry);
	}
	switch (op) {
	case FS_KUNIT_CREATE:
		err = vfs_create(idmap, di, dentry, S_IFREG | 0644, true);
		break;
	case FS_KUNIT_MKNOD:
		err = vfs_mknod(idmap, di, dentry, S_IFIFO | 0644, 0);
		break;
	case FS_KUNIT_MKDIR:
		err = vfs_mkdir(idmap, di, dentry, 0755);
		break;
	case FS_KUNIT_RMDIR:
		err = vfs_rmdir(idmap, di, dentry);
		break;
	case FS_KUNIT_UNLINK:
		err = vfs_unlink(idmap, di, dentry, NULL);
		break;
	case FS_KUNIT_SYMLINK:
		err = vfs_symlink(idmap, di, dentry, fs_kunit_long_target);
		break;
	default:
		err = vfs_link(ns->obj[FS_KUNIT_VICTIM], idmap, di, dentry, NULL);
		break;
	}
	dput(dentry);
	inode_unlock(di);
	return err;
}

/*
 * d1/victim onto d2/existing, or exchanged with it: the one rename that
 * reaches every dquot_initialize() call of a ->rename() (both directories,
 * the file moved and the file replaced).
 */
static int fs_kunit_rename(struct fs_kunit_ns *ns, enum fs_kunit_op op)
{
	struct dentry *odir = ns->obj[FS_KUNIT_D1];
	struct dentry *ndir = ns->obj[FS_KUNIT_D2];
	const char *nname = "existing";
	struct renamedata rd = {
		.old_mnt_idmap = &nop_mnt_idmap, .old_dir = d_inode(odir),
		.new_mnt_idmap = &nop_mnt_idmap, .new_dir = d_inode(ndir),
		.flags = op == FS_KUNIT_RENAME_EXCHANGE ? RENAME_EXCHANGE :
			 op == FS_KUNIT_RENAME_WHITEOUT ? RENAME_WHITEOUT : 0,
	};
	struct dentry *trap;
	int err;

	trap = lock_rename(odir, ndir);
	if (IS_ERR(trap))
		return PTR_ERR(trap);
	rd.old_dentry = lookup_one_len("victim", odir, strlen("victim"));
	err = PTR_ERR_OR_ZERO(rd.old_dentry);
	if (!err) {
		rd.new_dentry = lookup_one_len(nname, ndir, strlen(nname));
		err = PTR_ERR_OR_ZERO(rd.new_dentry);
		if (!err) {
			err = vfs_rename(&rd);
			dput(rd.new_dentry);
		}
		dput(rd.old_dentry);
	}
	unlock_rename(odir, ndir);
	return err;
}

static int fs_kunit_tmpfile(struct fs_kunit_ns *ns)
{
	struct path parent = { .mnt = ns->mnt, .dentry = ns->obj[FS_KUNIT_D1] };
	struct file *file;

	file = kernel_tmpfile_open(&nop_mnt_idmap, &parent, S_IFREG | 0600, O_RDWR,
				   current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	/* A kernel thread's fput() is deferred; the inode must go now. */
	__fput_sync(file);
	return 0;
}

/* /owned, opened for writing and closed. */
static int fs_kunit_open_write(struct fs_kunit_ns *ns)
{
	struct path path = { .mnt = ns->mnt, .dentry = ns->obj[FS_KUNIT_OWNED] };
	struct file *file;

	file = dentry_open(&path, O_WRONLY, current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	__fput_sync(file);
	return 0;
}

/* An extended attribute on /owned, which is left there. */
static int fs_kunit_setxattr(struct fs_kunit_ns *ns)
{
	static const char value[] = "fs_kunit";

	return vfs_setxattr(&nop_mnt_idmap, ns->obj[FS_KUNIT_OWNED], FS_KUNIT_XATTR, value,
			    sizeof(value), 0);
}

/**
 * fs_kunit_ns_run() - run @op as the owner of new inodes (FS_KUNIT_NEW)
 * @test: the test; its ->priv is the struct fs_kunit_ns of the suite's init
 * @op: the operation, on the fixture's objects
 *
 * Return: what the operation returned.
 */
int fs_kunit_ns_run(struct kunit *test, enum fs_kunit_op op)
{
	struct fs_kunit_ns *ns = test->priv;
	const struct cred *old;
	int err;

	/* New inodes get an owner whose dquots nothing has cached yet. */
	old = fs_kunit_ns_become(test, FS_KUNIT_OBJ_UID(FS_KUNIT_NEW),
				 FS_KUNIT_OBJ_GID(FS_KUNIT_NEW));
	switch (op) {
	case FS_KUNIT_RENAME_REPLACE:
	case FS_KUNIT_RENAME_EXCHANGE:
	case FS_KUNIT_RENAME_WHITEOUT:
		err = fs_kunit_rename(ns, op);
		break;
	case FS_KUNIT_TMPFILE:
		err = fs_kunit_tmpfile(ns);
		break;
	case FS_KUNIT_CHOWN:
		err = fs_kunit_chown(ns->obj[FS_KUNIT_OWNED], USRQUOTA,
				     FS_KUNIT_OBJ_UID(FS_KUNIT_TARGET));
		break;
	case FS_KUNIT_CHGRP:
		err = fs_kunit_chown(ns->obj[FS_KUNIT_OWNED], GRPQUOTA,
				     FS_KUNIT_OBJ_GID(FS_KUNIT_TARGET));
		break;
	case FS_KUNIT_OPEN_WRITE:
		err = fs_kunit_open_write(ns);
		break;
	case FS_KUNIT_SETXATTR:
		err = fs_kunit_setxattr(ns);
		break;
	default:
		err = fs_kunit_in_dir(ns, op);
		break;
	}
	revert_creds(old);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_ns_run);

static void fs_kunit_ns_arm(struct fs_kunit_ns *ns, const struct fs_kunit_fault *f)
{
	if (f->type == GRPQUOTA)
		fs_kunit_quota_fail(ns->stub, fs_kunit_fault_err(f), GRPQUOTA,
				    FS_KUNIT_OBJ_GID(f->owner));
	else
		fs_kunit_quota_fail(ns->stub, fs_kunit_fault_err(f), USRQUOTA,
				    FS_KUNIT_OBJ_UID(f->owner));
}

/**
 * fs_kunit_ns_op_returns_error() - the operation returns exactly the error of
 * the failing dquot_initialize()
 * @test: the test; its parameter is a struct fs_kunit_fault
 */
void fs_kunit_ns_op_returns_error(struct kunit *test)
{
	const struct fs_kunit_fault *f = test->param_value;
	struct fs_kunit_ns *ns = test->priv;
	struct timespec64 ctime[FS_KUNIT_NR_OBJS] = {};
	int i;

	for (i = 0; i < FS_KUNIT_NR_OBJS; i++)
		if (d_really_is_positive(ns->obj[i]))
			ctime[i] = inode_get_ctime(d_inode(ns->obj[i]));
	fs_kunit_ns_arm(ns, f);
	KUNIT_EXPECT_EQ(test, fs_kunit_ns_run(test, f->op), fs_kunit_fault_err(f));
	KUNIT_EXPECT_GT_MSG(test, ns->stub->failed, 0, "the stub never failed: wrong site?");
	/*
	 * Nothing changed before the error, not even in memory, where
	 * failed_op_leaves_disk_unchanged cannot see it: every change of an
	 * inode sets its ctime.
	 */
	for (i = 0; i < FS_KUNIT_NR_OBJS; i++) {
		struct timespec64 now;

		if (!d_really_is_positive(ns->obj[i]))
			continue;
		now = inode_get_ctime(d_inode(ns->obj[i]));
		KUNIT_EXPECT_TRUE_MSG(test, timespec64_equal(&now, &ctime[i]),
				      "ctime of /%s changed", fs_kunit_obj_paths[i]);
	}
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_ns_op_returns_error);

/*
 * What the filesystem shows of the objects: entries, link counts, owner,
 * FS_KUNIT_XATTR, free counts.
 */
struct fs_kunit_ns_state {
	unsigned long ino[ARRAY_SIZE(fs_kunit_names)];	/* 0: no such entry */
	unsigned int nlink[FS_KUNIT_NR_OBJS];		/* 0: gone */
	uid_t uid;
	gid_t gid;
	bool xattr;		/* set on /owned (no user xattrs: never) */
	u64 files_free;
	u64 blocks_free;
};

/* The inode at @path below the root, or NULL; *@path_out holds it until path_put(). */
static struct inode *fs_kunit_ns_find(struct fs_kunit_ns *ns, const char *path,
				      struct path *path_out)
{
	if (vfs_path_lookup(ns->mnt->mnt_root, ns->mnt, path, 0, path_out))
		return NULL;
	return d_inode(path_out->dentry);
}

/*
 * Looked up by name from the root, not through the dentries the test holds,
 * so that after a fresh mount it is what the disk holds.  Free inodes:
 * reiserfs reports none at all, and ocfs2 counts only its global bitmap,
 * not the slot's inode allocator; there the entries and link counts are
 * what shows an inode that was made or freed.
 */
static void fs_kunit_ns_state(struct kunit *test, struct fs_kunit_ns *ns,
			      struct fs_kunit_ns_state *st)
{
	struct path root = { .mnt = ns->mnt, .dentry = ns->mnt->mnt_root };
	struct kstatfs sfs;
	struct inode *inode;
	struct path path;
	char name[32];
	int i;

	for (i = 0; i < ARRAY_SIZE(fs_kunit_names); i++) {
		snprintf(name, sizeof(name), "%s/%s", fs_kunit_obj_paths[fs_kunit_names[i].dir],
			 fs_kunit_names[i].name);
		inode = fs_kunit_ns_find(ns, name, &path);
		st->ino[i] = inode ? inode->i_ino : 0;
		if (inode)
			path_put(&path);
	}
	for (i = 0; i < FS_KUNIT_NR_OBJS; i++) {
		inode = fs_kunit_ns_find(ns, fs_kunit_obj_paths[i], &path);
		st->nlink[i] = inode ? inode->i_nlink : 0;
		if (inode && i == FS_KUNIT_OWNED) {
			st->uid = i_uid_read(inode);
			st->gid = i_gid_read(inode);
			st->xattr = vfs_getxattr(&nop_mnt_idmap, path.dentry, FS_KUNIT_XATTR,
						 NULL, 0) >= 0;
		}
		if (inode)
			path_put(&path);
	}
	KUNIT_ASSERT_EQ(test, vfs_statfs(&root, &sfs), 0);
	st->files_free = sfs.f_ffree;
	st->blocks_free = sfs.f_bfree;
}

/*
 * No dquot reference kept: every inode that may hold one is counted,
 * including one an operation that wrongly succeeded made, or its
 * references would pass for leaks.  The dentries looked up here are
 * dropped again before returning, so that the filesystem can be unmounted.
 */
static void fs_kunit_ns_expect_no_leaks(struct kunit *test, struct fs_kunit_ns *ns)
{
	struct inode *holders[FS_KUNIT_NR_OBJS + ARRAY_SIZE(fs_kunit_names)];
	struct dentry *found[ARRAY_SIZE(fs_kunit_names)] = {};
	int i, j, obj, nr = 0;

	for (i = 0; i < FS_KUNIT_NR_OBJS; i++)
		if (d_really_is_positive(ns->obj[i]))
			holders[nr++] = d_inode(ns->obj[i]);
	for (i = 0; i < ARRAY_SIZE(fs_kunit_names); i++) {
		const char *name = fs_kunit_names[i].name;
		struct dentry *d;

		d = lookup_one_len_unlocked(name, ns->obj[fs_kunit_names[i].dir], strlen(name));
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, d);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fs_kunit_dput_action, d), 0);
		found[i] = d;
		if (!d_really_is_positive(d))
			continue;
		for (j = 0; j < nr && holders[j] != d_inode(d); j++)
			;
		if (j == nr)
			holders[nr++] = d_inode(d);
	}
	for (obj = 0; obj < FS_KUNIT_NR_IDS; obj++) {
		struct kqid uid = make_kqid_uid(make_kuid(&init_user_ns, FS_KUNIT_OBJ_UID(obj)));
		struct kqid gid = make_kqid_gid(make_kgid(&init_user_ns, FS_KUNIT_OBJ_GID(obj)));

		fs_kunit_expect_no_leaked_dquot_refs(test, ns->sb, uid, holders, nr);
		fs_kunit_expect_no_leaked_dquot_refs(test, ns->sb, gid, holders, nr);
	}
	for (i = 0; i < ARRAY_SIZE(fs_kunit_names); i++)
		kunit_release_action(test, fs_kunit_dput_action, found[i]);
}

/**
 * fs_kunit_ns_unmount() - let go of the stub, the objects and the mount
 * @test: the test that set @ns up
 * @ns: its fixture; ->mnt and ->sb are NULL afterwards
 *
 * For a case that mounts the device again in its own way.
 */
void fs_kunit_ns_unmount(struct kunit *test, struct fs_kunit_ns *ns)
{
	int i;

	if (ns->stub)
		fs_kunit_unstub_acquire_dquot(test, ns->stub);
	ns->stub = NULL;
	for (i = 0; i < FS_KUNIT_NR_OBJS; i++) {
		if (ns->obj[i])
			kunit_release_action(test, fs_kunit_dput_action, ns->obj[i]);
		ns->obj[i] = NULL;
	}
	fs_kunit_unmount(test, ns->mnt);
	ns->mnt = NULL;
	ns->sb = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_ns_unmount);

/* Let go of the mount and mount the device again, quota on as before. */
static void fs_kunit_ns_remount(struct kunit *test, struct fs_kunit_ns *ns)
{
	const struct fs_kunit_ns_suite *suite = ns->suite;

	/* Its memory is all there is: an unmount would throw it away. */
	if (suite->in_memory)
		return;
	fs_kunit_ns_unmount(test, ns);
	KUNIT_ASSERT_EQ(test, fs_kunit_try_mount_device(test, suite->fstype, 0, suite->options,
							&ns->mnt), 0);
	ns->sb = ns->mnt->mnt_sb;
	if (suite->quota_files)
		fs_kunit_ns_quota_on(test, ns);
}

/**
 * fs_kunit_ns_failed_op_leaves_disk_unchanged() - after the failure, no dquot
 * reference is kept and, read again from the disk after an unmount, quota is
 * on, no entry was added or removed and link counts, ownership, the extended
 * attribute FS_KUNIT_SETXATTR sets and free inodes and blocks are as before
 * @test: the test; its parameter is a struct fs_kunit_fault
 *
 * The caches alone would not do: an operation that wrote the disk and then
 * failed leaves the dentry cache and the in-memory link counts as they were.
 */
void fs_kunit_ns_failed_op_leaves_disk_unchanged(struct kunit *test)
{
	const struct fs_kunit_fault *f = test->param_value;
	struct fs_kunit_ns *ns = test->priv;
	struct fs_kunit_ns_state before, after;
	int i;

	/* The mount is fresh: what it shows is what the disk holds. */
	fs_kunit_ns_state(test, ns, &before);
	fs_kunit_ns_arm(ns, f);
	fs_kunit_ns_run(test, f->op);
	fs_kunit_quota_fail(ns->stub, 0, -1, FS_KUNIT_ANY_ID);
	fs_kunit_ns_expect_no_leaks(test, ns);
	fs_kunit_ns_remount(test, ns);
	/*
	 * A filesystem that takes the failure for damage to its quota files
	 * marks them for repair and comes back without quota.
	 */
	KUNIT_EXPECT_TRUE_MSG(test, sb_has_quota_active(ns->sb, USRQUOTA),
			      "user quota is off after the remount");
	KUNIT_EXPECT_TRUE_MSG(test, sb_has_quota_active(ns->sb, GRPQUOTA),
			      "group quota is off after the remount");
	fs_kunit_ns_state(test, ns, &after);
	for (i = 0; i < ARRAY_SIZE(fs_kunit_names); i++)
		KUNIT_EXPECT_EQ_MSG(test, after.ino[i], before.ino[i], "entry %s/%s",
				    fs_kunit_obj_paths[fs_kunit_names[i].dir],
				    fs_kunit_names[i].name);
	for (i = 0; i < FS_KUNIT_NR_OBJS; i++)
		KUNIT_EXPECT_EQ_MSG(test, after.nlink[i], before.nlink[i], "link count of /%s",
				    fs_kunit_obj_paths[i]);
	KUNIT_EXPECT_EQ(test, after.uid, before.uid);
	KUNIT_EXPECT_EQ(test, after.gid, before.gid);
	KUNIT_EXPECT_EQ_MSG(test, after.xattr, before.xattr, "%s on /owned", FS_KUNIT_XATTR);
	KUNIT_EXPECT_EQ_MSG(test, after.files_free, before.files_free, "free inodes");
	KUNIT_EXPECT_EQ_MSG(test, after.blocks_free, before.blocks_free, "free blocks");
}
EXPORT_SYMBOL_IF_KUNIT(fs_kunit_ns_failed_op_leaves_disk_unchanged);

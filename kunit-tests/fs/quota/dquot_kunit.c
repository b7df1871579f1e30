// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for errors from ->acquire_dquot().
 *
 * Since commit 6184fc0b8dd7 ("quota: Propagate error from ->acquire_dquot()")
 * dqget() returns the error of ->acquire_dquot() (EIO, ENOSPC, ...) instead
 * of NULL, which callers took for "quota is off" and ignored.  Quota that is
 * off is -ESRCH, which dquot_initialize() and dquot_transfer() tolerate.
 *
 * Every case mounts a real ext4 image with the quota feature (user and group
 * quota on) from a RAM disk, and gives its superblock an ->acquire_dquot()
 * that fails for the ids the case chooses.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <kunit/test-bug.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/quotaops.h>

#include "dquot_kunit_image.h"

#define OWNER_UID	1001	/* owner of /owned in the image */
#define OWNER_GID	2001
#define OTHER_UID	1002	/* ids nothing in the image uses */
#define OTHER_GID	2002

struct dquot_kunit {
	struct super_block *sb;
	struct dentry *owned;
	struct fs_kunit_quota_stub *stub;
	/* what the stubbed ->get_inode_usage() and ->get_next_id() give */
	int usage_err;
	qsize_t usage;
	int next_id_err;
};

/* Which of the owner's two dquots fails to be acquired. */
struct dquot_kunit_owner_fault {
	const char *name;
	int type;
	qid_t id;
	int err;
};

static const struct dquot_kunit_owner_fault dquot_kunit_owner_faults[] = {
	{ "user", USRQUOTA, OWNER_UID, -EIO },
	{ "group", GRPQUOTA, OWNER_GID, -EIO },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_owner_faults, dquot_kunit_owner_faults, name);

/* A chown or a chgrp to an id whose dquot fails to be acquired. */
struct dquot_kunit_change {
	const char *name;
	int type;
	int err;
};

static const struct dquot_kunit_change dquot_kunit_changes[] = {
	{ "chown", USRQUOTA, -EIO },
	{ "chgrp", GRPQUOTA, -EIO },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_changes, dquot_kunit_changes, name);

static struct kqid user(qid_t id)
{
	return make_kqid_uid(make_kuid(&init_user_ns, id));
}

static struct kqid group(qid_t id)
{
	return make_kqid_gid(make_kgid(&init_user_ns, id));
}

static struct kqid project(qid_t id)
{
	return make_kqid_projid(make_kprojid(&init_user_ns, id));
}

static struct dquot *inode_dquot(struct inode *inode, int type)
{
	return rcu_access_pointer(inode->i_sb->s_op->get_dquots(inode)[type]);
}

/* The only reference left on the dquot of @qid may be /owned's own. */
static void expect_no_leaked_refs(struct kunit *test, struct kqid qid)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *owned = d_inode(ctx->owned);

	fs_kunit_expect_no_leaked_dquot_refs(test, ctx->sb, qid, &owned, 1);
}

static qsize_t dquot_inodes(struct kunit *test, struct kqid qid)
{
	struct dquot *dquot = dqget(((struct dquot_kunit *)test->priv)->sb, qid);
	qsize_t inodes;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dquot);
	inodes = dquot->dq_dqb.dqb_curinodes;
	dqput(dquot);
	return inodes;
}

static int dquot_kunit_init(struct kunit *test)
{
	struct dquot_kunit *ctx;
	struct vfsmount *mnt;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	mnt = fs_kunit_mount(test, "ext4", &dquot_kunit_image, 0, "");
	ctx->sb = mnt->mnt_sb;
	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(ctx->sb, USRQUOTA));
	KUNIT_ASSERT_TRUE(test, sb_has_quota_active(ctx->sb, GRPQUOTA));
	KUNIT_ASSERT_FALSE(test, sb_has_quota_active(ctx->sb, PRJQUOTA));
	ctx->owned = fs_kunit_lookup(test, mnt->mnt_root, "owned");
	KUNIT_ASSERT_TRUE(test, d_really_is_positive(ctx->owned));
	ctx->stub = fs_kunit_stub_acquire_dquot(test, ctx->sb);
	test->priv = ctx;
	return 0;
}

/*
 * Whatever a case did, the only references left on the dquots it can touch
 * are those of /owned's inode: an error path that keeps one is a leak.
 */
static void dquot_kunit_exit(struct kunit *test)
{
	static const struct { int type; qid_t id; } touched[] = {
		{ USRQUOTA, OWNER_UID }, { USRQUOTA, OTHER_UID },
		{ GRPQUOTA, OWNER_GID }, { GRPQUOTA, OTHER_GID },
	};
	struct dquot_kunit *ctx = test->priv;
	int i;

	if (!ctx || !ctx->stub)
		return;
	fs_kunit_quota_fail(ctx->stub, 0, -1, FS_KUNIT_ANY_ID);
	for (i = 0; i < ARRAY_SIZE(touched); i++)
		expect_no_leaked_refs(test, touched[i].type == USRQUOTA ?
					    user(touched[i].id) : group(touched[i].id));
}

static void dqget_quota_off_returns_esrch(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(dqget(ctx->sb, project(7))), -ESRCH);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 0);
}

/* dqget() of @qid that must fail with @err; drops a reference it got instead. */
static void expect_dqget_error(struct kunit *test, struct kqid qid, int err)
{
	struct dquot *dquot = dqget(((struct dquot_kunit *)test->priv)->sb, qid);

	KUNIT_EXPECT_TRUE_MSG(test, IS_ERR(dquot), "dqget() returned %p", dquot);
	if (!IS_ERR_OR_NULL(dquot))
		dqput(dquot);
	else
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(dquot), err);
}

static void dqget_returns_acquire_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;

	fs_kunit_quota_fail(ctx->stub, -EIO, USRQUOTA, OTHER_UID);
	expect_dqget_error(test, user(OTHER_UID), -EIO);
	KUNIT_EXPECT_EQ(test, ctx->stub->failed, 1);
}

static void dqget_drops_reference_on_acquire_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;

	fs_kunit_quota_fail(ctx->stub, -EIO, USRQUOTA, OTHER_UID);
	expect_dqget_error(test, user(OTHER_UID), -EIO);
	fs_kunit_quota_fail(ctx->stub, 0, -1, FS_KUNIT_ANY_ID);
	expect_no_leaked_refs(test, user(OTHER_UID));
}

static void dqget_retries_acquire_after_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct dquot *dquot;

	fs_kunit_quota_fail(ctx->stub, -ENOSPC, GRPQUOTA, OTHER_GID);
	expect_dqget_error(test, group(OTHER_GID), -ENOSPC);
	fs_kunit_quota_fail(ctx->stub, 0, -1, FS_KUNIT_ANY_ID);
	dquot = dqget(ctx->sb, group(OTHER_GID));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dquot);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 2);
	KUNIT_EXPECT_TRUE(test, test_bit(DQ_ACTIVE_B, &dquot->dq_flags));
	dqput(dquot);
}

static void dqget_acquires_once(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct dquot *first, *second;

	first = dqget(ctx->sb, user(OTHER_UID));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, first);
	second = dqget(ctx->sb, user(OTHER_UID));
	KUNIT_EXPECT_PTR_EQ(test, second, first);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 1);
	KUNIT_EXPECT_TRUE(test, test_bit(DQ_ACTIVE_B, &first->dq_flags));
	KUNIT_EXPECT_EQ(test, atomic_read(&first->dq_count), 2);
	if (!IS_ERR_OR_NULL(second))
		dqput(second);
	dqput(first);
}

static void dquot_initialize_returns_acquire_error(struct kunit *test)
{
	const struct dquot_kunit_owner_fault *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);

	fs_kunit_quota_fail(ctx->stub, p->err, p->type, p->id);
	KUNIT_EXPECT_EQ(test, dquot_initialize(inode), p->err);
	KUNIT_EXPECT_PTR_EQ(test, inode_dquot(inode, p->type), NULL);
}

/* The user dquot is acquired first; the group one then fails. */
static void dquot_initialize_drops_other_reference_on_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);

	fs_kunit_quota_fail(ctx->stub, -EIO, GRPQUOTA, OWNER_GID);
	KUNIT_EXPECT_EQ(test, dquot_initialize(inode), -EIO);
	KUNIT_EXPECT_PTR_EQ(test, inode_dquot(inode, USRQUOTA), NULL);
	fs_kunit_quota_fail(ctx->stub, 0, -1, FS_KUNIT_ANY_ID);
	expect_no_leaked_refs(test, user(OWNER_UID));
}

static void dquot_initialize_tolerates_esrch(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);

	fs_kunit_quota_fail(ctx->stub, -ESRCH, GRPQUOTA, OWNER_GID);
	KUNIT_EXPECT_EQ(test, dquot_initialize(inode), 0);
	KUNIT_EXPECT_PTR_EQ(test, inode_dquot(inode, GRPQUOTA), NULL);
	KUNIT_EXPECT_PTR_NE(test, inode_dquot(inode, USRQUOTA), NULL);
}

static void dquot_initialize_attaches_dquots(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);

	KUNIT_EXPECT_EQ(test, dquot_initialize(inode), 0);
	KUNIT_EXPECT_PTR_NE(test, inode_dquot(inode, USRQUOTA), NULL);
	KUNIT_EXPECT_PTR_NE(test, inode_dquot(inode, GRPQUOTA), NULL);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 2);
	/* Each attached dquot holds exactly the inode's reference. */
	expect_no_leaked_refs(test, user(OWNER_UID));
	expect_no_leaked_refs(test, group(OWNER_GID));
}

/* chown or chgrp /owned to the OTHER id of @type, as chown(2) would. */
static int change_owner(struct kunit *test, int type)
{
	struct dquot_kunit *ctx = test->priv;

	return fs_kunit_chown(ctx->owned, type, type == USRQUOTA ? OTHER_UID : OTHER_GID);
}

static void dquot_transfer_returns_acquire_error(struct kunit *test)
{
	const struct dquot_kunit_change *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);
	struct kqid owner = p->type == USRQUOTA ? user(OWNER_UID) : group(OWNER_GID);
	qsize_t inodes = dquot_inodes(test, owner);

	fs_kunit_quota_fail(ctx->stub, p->err, p->type,
			    p->type == USRQUOTA ? OTHER_UID : OTHER_GID);
	KUNIT_EXPECT_EQ(test, change_owner(test, p->type), p->err);
	KUNIT_EXPECT_EQ(test, i_uid_read(inode), OWNER_UID);
	KUNIT_EXPECT_EQ(test, i_gid_read(inode), OWNER_GID);
	fs_kunit_quota_fail(ctx->stub, 0, -1, FS_KUNIT_ANY_ID);
	KUNIT_EXPECT_EQ(test, dquot_inodes(test, owner), inodes);
}

static void dquot_transfer_tolerates_esrch(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);

	fs_kunit_quota_fail(ctx->stub, -ESRCH, USRQUOTA, OTHER_UID);
	KUNIT_EXPECT_EQ(test, change_owner(test, USRQUOTA), 0);
	KUNIT_EXPECT_EQ(test, i_uid_read(inode), OTHER_UID);
}

static void dquot_transfer_moves_usage(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);
	qsize_t from = dquot_inodes(test, user(OWNER_UID));
	qsize_t to = dquot_inodes(test, user(OTHER_UID));

	KUNIT_EXPECT_EQ(test, change_owner(test, USRQUOTA), 0);
	KUNIT_EXPECT_EQ(test, i_uid_read(inode), OTHER_UID);
	KUNIT_EXPECT_EQ(test, dquot_inodes(test, user(OWNER_UID)), from - 1);
	KUNIT_EXPECT_EQ(test, dquot_inodes(test, user(OTHER_UID)), to + 1);
}

static void dquot_get_dqblk_returns_acquire_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct qc_dqblk di = {};

	fs_kunit_quota_fail(ctx->stub, -EIO, USRQUOTA, OTHER_UID);
	KUNIT_EXPECT_EQ(test, dquot_get_dqblk(ctx->sb, user(OTHER_UID), &di), -EIO);
}

/*
 * Q_GETNEXTQUOTA: the next id with a quota entry from the owner's on is
 * the owner's, whose dquot is not cached: its acquire error is returned,
 * not taken for "no such id".
 */
static void dquot_get_next_dqblk_returns_acquire_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct kqid qid = user(OWNER_UID);
	struct qc_dqblk di = {};

	fs_kunit_quota_fail(ctx->stub, -EIO, USRQUOTA, OWNER_UID);
	KUNIT_EXPECT_EQ(test, dquot_get_next_dqblk(ctx->sb, &qid, &di), -EIO);
	KUNIT_EXPECT_GT_MSG(test, ctx->stub->failed, 0, "the next id was not the owner's");
}

/*
 * Q_GETNEXTQUOTA that succeeds reports the entry it found and gives back
 * the reference it took: dquot_kunit_exit() finds any left on the owner's.
 */
static void dquot_get_next_dqblk_reports_next_id(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct kqid qid = user(OWNER_UID);
	struct qc_dqblk di = {};

	KUNIT_EXPECT_EQ(test, dquot_get_next_dqblk(ctx->sb, &qid, &di), 0);
	KUNIT_EXPECT_TRUE(test, qid_eq(qid, user(OWNER_UID)));
	KUNIT_EXPECT_EQ(test, di.d_ino_count, 1);
}

static void dquot_get_dqblk_quota_off_returns_esrch(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct qc_dqblk di = {};

	KUNIT_EXPECT_EQ(test, dquot_get_dqblk(ctx->sb, project(7), &di), -ESRCH);
}

static void dquot_get_dqblk_reports_usage(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct qc_dqblk di = {};

	KUNIT_EXPECT_EQ(test, dquot_get_dqblk(ctx->sb, user(OWNER_UID), &di), 0);
	KUNIT_EXPECT_EQ(test, di.d_ino_count, 1);
}

static int set_ino_softlimit(struct kunit *test, struct kqid qid, u64 limit)
{
	struct qc_dqblk di = { .d_fieldmask = QC_INO_SOFT, .d_ino_softlimit = limit };

	return dquot_set_dqblk(((struct dquot_kunit *)test->priv)->sb, qid, &di);
}

static u64 ino_softlimit(struct kunit *test, struct kqid qid)
{
	struct qc_dqblk di = {};

	KUNIT_ASSERT_EQ(test, dquot_get_dqblk(((struct dquot_kunit *)test->priv)->sb, qid, &di),
			0);
	return di.d_ino_softlimit;
}

static void dquot_set_dqblk_returns_acquire_error(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;

	fs_kunit_quota_fail(ctx->stub, -EIO, GRPQUOTA, OTHER_GID);
	KUNIT_EXPECT_EQ(test, set_ino_softlimit(test, group(OTHER_GID), 10), -EIO);
	fs_kunit_quota_fail(ctx->stub, 0, -1, FS_KUNIT_ANY_ID);
	KUNIT_EXPECT_EQ(test, ino_softlimit(test, group(OTHER_GID)), 0);
}

static void dquot_set_dqblk_quota_off_returns_esrch(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, set_ino_softlimit(test, project(7), 10), -ESRCH);
}

static void dquot_set_dqblk_sets_limit(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, set_ino_softlimit(test, group(OTHER_GID), 10), 0);
	KUNIT_EXPECT_EQ(test, ino_softlimit(test, group(OTHER_GID)), 10);
}

/* An id no user namespace maps: dqget() refuses it before looking it up. */
static void dqget_unmapped_id_returns_einval(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;

	expect_dqget_error(test, make_kqid_uid(INVALID_UID), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 0);
}

/*
 * The quota format's operations of one quota type, with errors the test
 * chooses: what dquot_acquire() calls to read a dquot, to create its entry
 * in the quota file and to write the file's header.
 */
struct dquot_kunit_format_stub {
	struct quota_format_ops ops;
	const struct quota_format_ops *orig;
	struct quota_info *dqopt;
	int type;
	int read_err, commit_err, info_err;
};

static struct dquot_kunit_format_stub *format_stub(struct super_block *sb, int type)
{
	/* quota_format_ops has no context pointer: the copy is embedded. */
	return container_of(sb_dqopt(sb)->ops[type], struct dquot_kunit_format_stub, ops);
}

static int format_stub_read_dqblk(struct dquot *dquot)
{
	struct dquot_kunit_format_stub *s = format_stub(dquot->dq_sb, dquot->dq_id.type);

	return s->read_err ?: s->orig->read_dqblk(dquot);
}

static int format_stub_commit_dqblk(struct dquot *dquot)
{
	struct dquot_kunit_format_stub *s = format_stub(dquot->dq_sb, dquot->dq_id.type);

	return s->commit_err ?: s->orig->commit_dqblk(dquot);
}

static int format_stub_write_file_info(struct super_block *sb, int type)
{
	struct dquot_kunit_format_stub *s = format_stub(sb, type);

	return s->info_err ?: s->orig->write_file_info(sb, type);
}

static void format_stub_restore(void *data)
{
	struct dquot_kunit_format_stub *s = data;

	s->dqopt->ops[s->type] = s->orig;
}

static struct dquot_kunit_format_stub *stub_format(struct kunit *test, int type)
{
	struct quota_info *dqopt = sb_dqopt(((struct dquot_kunit *)test->priv)->sb);
	struct dquot_kunit_format_stub *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->ops = *dqopt->ops[type];
	s->ops.read_dqblk = format_stub_read_dqblk;
	s->ops.commit_dqblk = format_stub_commit_dqblk;
	s->ops.write_file_info = format_stub_write_file_info;
	s->orig = dqopt->ops[type];
	s->dqopt = dqopt;
	s->type = type;
	dqopt->ops[type] = &s->ops;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, format_stub_restore, s), 0);
	return s;
}

/* Which step of dquot_acquire() fails: the read, the new entry, the header. */
struct dquot_kunit_format_fault {
	const char *name;
	int read_err, commit_err, info_err;
};

static const struct dquot_kunit_format_fault dquot_kunit_format_faults[] = {
	{ "read", -EIO, 0, 0 },
	{ "commit", 0, -ENOSPC, 0 },
	{ "info", 0, 0, -EIO },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_format_faults, dquot_kunit_format_faults, name);

/*
 * The ->acquire_dquot() of the filesystem (ext4's, through the stub that
 * only counts) reaches dquot_acquire(), whose quota file I/O fails: dqget()
 * returns that error, and the dquot is left inactive, so that the next
 * dqget() acquires it again instead of using a dquot with no entry.
 */
static void dquot_acquire_returns_format_error(struct kunit *test)
{
	const struct dquot_kunit_format_fault *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct dquot_kunit_format_stub *s = stub_format(test, USRQUOTA);
	struct dquot *dquot;

	s->read_err = p->read_err;
	s->commit_err = p->commit_err;
	s->info_err = p->info_err;
	/* The header is written only when something changed it. */
	mark_info_dirty(ctx->sb, USRQUOTA);
	expect_dqget_error(test, user(OTHER_UID), p->read_err ?: p->commit_err ?: p->info_err);
	s->read_err = 0;
	s->commit_err = 0;
	s->info_err = 0;
	dquot = dqget(ctx->sb, user(OTHER_UID));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dquot);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 2);
	dqput(dquot);
}

/*
 * A quota file's own inode has no quota: dquot_initialize() and
 * dquot_transfer() leave it alone instead of looking up (and failing to
 * acquire) dquots for it.
 */
static void dquot_initialize_skips_quota_file(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *file = sb_dqopt(ctx->sb)->files[USRQUOTA];

	KUNIT_ASSERT_NOT_NULL(test, file);
	KUNIT_ASSERT_TRUE(test, IS_NOQUOTA(file));
	fs_kunit_quota_fail(ctx->stub, -EIO, -1, FS_KUNIT_ANY_ID);
	KUNIT_EXPECT_EQ(test, dquot_initialize(file), 0);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 0);
}

static void dquot_transfer_skips_quota_file(struct kunit *test)
{
	struct dquot_kunit *ctx = test->priv;
	struct inode *file = sb_dqopt(ctx->sb)->files[USRQUOTA];
	struct iattr attr = {
		.ia_valid = ATTR_UID,
		.ia_vfsuid = VFSUIDT_INIT(make_kuid(&init_user_ns, OTHER_UID)),
	};

	KUNIT_ASSERT_NOT_NULL(test, file);
	fs_kunit_quota_fail(ctx->stub, -EIO, -1, FS_KUNIT_ANY_ID);
	KUNIT_EXPECT_EQ(test, dquot_transfer(&nop_mnt_idmap, file, &attr), 0);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 0);
}

/* ->get_inode_usage(), for the stub's operations: what the case chose. */
static int dquot_kunit_inode_usage(struct inode *inode, qsize_t *usage)
{
	struct dquot_kunit *ctx = kunit_get_current_test()->priv;

	if (ctx->usage_err)
		return ctx->usage_err;
	*usage = ctx->usage;
	return 0;
}

/* What ->get_inode_usage() says an inode counts as: an error, or 3 inodes. */
struct dquot_kunit_usage {
	const char *name;
	int err;
	qsize_t usage;
};

static const struct dquot_kunit_usage dquot_kunit_usages[] = {
	{ "error", -EIO, 0 },
	{ "three inodes", 0, 3 },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_usages, dquot_kunit_usages, name);

/*
 * A chown moves as many inodes as the filesystem's ->get_inode_usage()
 * counts (ext4: the inode and its xattr inodes), and fails with its error,
 * moving nothing.
 */
static void dquot_transfer_moves_inode_usage(struct kunit *test)
{
	const struct dquot_kunit_usage *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);
	qsize_t to = dquot_inodes(test, user(OTHER_UID));

	ctx->usage_err = p->err;
	ctx->usage = p->usage;
	ctx->stub->ops.get_inode_usage = dquot_kunit_inode_usage;
	KUNIT_EXPECT_EQ(test, change_owner(test, USRQUOTA), p->err);
	KUNIT_EXPECT_EQ(test, i_uid_read(inode), p->err ? OWNER_UID : OTHER_UID);
	KUNIT_EXPECT_EQ(test, dquot_inodes(test, user(OTHER_UID)), to + (p->err ? 0 : p->usage));
}

static void dquot_kunit_limits_off(void *data)
{
	fs_kunit_enforce_user_limits(data, false);
}

/* Which hard limit root is already over. */
struct dquot_kunit_limit {
	const char *name;
	unsigned int field;
};

static const struct dquot_kunit_limit dquot_kunit_limits[] = {
	{ "inodes", QC_INO_HARD },
	{ "space", QC_SPC_HARD },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_limits, dquot_kunit_limits, name);

/*
 * A chown to an owner over its hard limit fails with -EDQUOT and moves
 * nothing: root owns more than one inode and more than one byte of the
 * image, so a limit of one is exceeded by whatever /owned adds.
 */
static void dquot_transfer_over_limit_returns_edquot(struct kunit *test)
{
	const struct dquot_kunit_limit *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct inode *inode = d_inode(ctx->owned);
	struct qc_dqblk di = {
		.d_fieldmask = p->field, .d_ino_hardlimit = 1, .d_spc_hardlimit = 1,
	};
	qsize_t from = dquot_inodes(test, user(OWNER_UID));
	qsize_t to = dquot_inodes(test, user(0));
	const struct cred *old;
	int err;

	KUNIT_ASSERT_EQ(test, dquot_set_dqblk(ctx->sb, user(0), &di), 0);
	KUNIT_ASSERT_EQ(test, fs_kunit_enforce_user_limits(ctx->sb, true), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dquot_kunit_limits_off, ctx->sb), 0);
	/* As an unprivileged chown(2). */
	old = fs_kunit_bound_by_hard_limits(test);
	err = fs_kunit_chown(ctx->owned, USRQUOTA, 0);
	revert_creds(old);
	KUNIT_EXPECT_EQ(test, err, -EDQUOT);
	KUNIT_EXPECT_EQ(test, i_uid_read(inode), OWNER_UID);
	KUNIT_EXPECT_EQ(test, dquot_inodes(test, user(OWNER_UID)), from);
	KUNIT_EXPECT_EQ(test, dquot_inodes(test, user(0)), to);
}

/* ->mark_dirty(), for the stub's operations: the quota file cannot be written. */
static int dquot_kunit_mark_dirty_fails(struct dquot *dquot)
{
	return -EIO;
}

/* An operation whose dquot cannot be marked dirty (written). */
struct dquot_kunit_dirty_op {
	const char *name;
	int (*op)(struct kunit *test);
};

static int set_limit_of_other(struct kunit *test)
{
	return set_ino_softlimit(test, group(OTHER_GID), 10);
}

static int chown_to_other(struct kunit *test)
{
	return change_owner(test, USRQUOTA);
}

static const struct dquot_kunit_dirty_op dquot_kunit_dirty_ops[] = {
	{ "set_dqblk", set_limit_of_other },
	{ "transfer", chown_to_other },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_dirty_ops, dquot_kunit_dirty_ops, name);

/* The error of writing the changed dquot is the operation's error. */
static void dquot_op_returns_mark_dirty_error(struct kunit *test)
{
	const struct dquot_kunit_dirty_op *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;

	ctx->stub->ops.mark_dirty = dquot_kunit_mark_dirty_fails;
	KUNIT_EXPECT_EQ(test, p->op(test), -EIO);
}

/* A Q_SETQUOTA the quota code refuses: a field it does not know, a limit over the format's. */
struct dquot_kunit_bad_limit {
	const char *name;
	unsigned int field;
	bool over_max;
	int err;
};

static const struct dquot_kunit_bad_limit dquot_kunit_bad_limits[] = {
	{ "realtime field", QC_RT_SPC_SOFT, false, -EINVAL },
	{ "over the maximum", QC_SPC_SOFT, true, -ERANGE },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_bad_limits, dquot_kunit_bad_limits, name);

static void dquot_set_dqblk_rejects_bad_limit(struct kunit *test)
{
	const struct dquot_kunit_bad_limit *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct qc_dqblk di = { .d_fieldmask = p->field };
	struct qc_dqblk now = {};

	if (p->over_max)
		di.d_spc_softlimit = sb_dqopt(ctx->sb)->info[USRQUOTA].dqi_max_spc_limit + 1;
	KUNIT_EXPECT_EQ(test, dquot_set_dqblk(ctx->sb, user(OTHER_UID), &di), p->err);
	KUNIT_ASSERT_EQ(test, dquot_get_dqblk(ctx->sb, user(OTHER_UID), &now), 0);
	KUNIT_EXPECT_EQ(test, now.d_spc_softlimit, 0);
}

/* ->get_next_id(), for the stub's operations: it fails. */
static int dquot_kunit_next_id_fails(struct super_block *sb, struct kqid *qid)
{
	return ((struct dquot_kunit *)kunit_get_current_test()->priv)->next_id_err;
}

/* Q_GETNEXTQUOTA on a format without ->get_next_id(), or whose lookup fails. */
struct dquot_kunit_next_id {
	const char *name;
	bool missing;
	int err;
};

static const struct dquot_kunit_next_id dquot_kunit_next_ids[] = {
	{ "no get_next_id", true, -ENOSYS },
	{ "get_next_id fails", false, -EIO },
};

KUNIT_ARRAY_PARAM_DESC(dquot_kunit_next_ids, dquot_kunit_next_ids, name);

static void dquot_get_next_dqblk_returns_next_id_error(struct kunit *test)
{
	const struct dquot_kunit_next_id *p = test->param_value;
	struct dquot_kunit *ctx = test->priv;
	struct kqid qid = user(OWNER_UID);
	struct qc_dqblk di = {};

	ctx->next_id_err = p->err;
	ctx->stub->ops.get_next_id = p->missing ? NULL : dquot_kunit_next_id_fails;
	KUNIT_EXPECT_EQ(test, dquot_get_next_dqblk(ctx->sb, &qid, &di), p->err);
	KUNIT_EXPECT_EQ(test, ctx->stub->calls, 0);
}

static struct kunit_case dquot_kunit_cases[] = {
	KUNIT_CASE(dqget_quota_off_returns_esrch),
	KUNIT_CASE(dqget_returns_acquire_error),
	KUNIT_CASE(dqget_drops_reference_on_acquire_error),
	KUNIT_CASE(dqget_retries_acquire_after_error),
	KUNIT_CASE(dqget_acquires_once),
	KUNIT_CASE(dqget_unmapped_id_returns_einval),
	KUNIT_CASE_PARAM(dquot_acquire_returns_format_error, dquot_kunit_format_faults_gen_params),
	KUNIT_CASE_PARAM(dquot_initialize_returns_acquire_error,
			 dquot_kunit_owner_faults_gen_params),
	KUNIT_CASE(dquot_initialize_drops_other_reference_on_error),
	KUNIT_CASE(dquot_initialize_tolerates_esrch),
	KUNIT_CASE(dquot_initialize_attaches_dquots),
	KUNIT_CASE(dquot_initialize_skips_quota_file),
	KUNIT_CASE(dquot_transfer_skips_quota_file),
	KUNIT_CASE_PARAM(dquot_transfer_returns_acquire_error, dquot_kunit_changes_gen_params),
	KUNIT_CASE(dquot_transfer_tolerates_esrch),
	KUNIT_CASE(dquot_transfer_moves_usage),
	KUNIT_CASE_PARAM(dquot_transfer_moves_inode_usage, dquot_kunit_usages_gen_params),
	KUNIT_CASE_PARAM(dquot_transfer_over_limit_returns_edquot, dquot_kunit_limits_gen_params),
	KUNIT_CASE_PARAM(dquot_op_returns_mark_dirty_error, dquot_kunit_dirty_ops_gen_params),
	KUNIT_CASE(dquot_get_dqblk_returns_acquire_error),
	KUNIT_CASE(dquot_get_next_dqblk_returns_acquire_error),
	KUNIT_CASE_PARAM(dquot_get_next_dqblk_returns_next_id_error,
			 dquot_kunit_next_ids_gen_params),
	KUNIT_CASE(dquot_get_next_dqblk_reports_next_id),
	KUNIT_CASE(dquot_get_dqblk_quota_off_returns_esrch),
	KUNIT_CASE(dquot_get_dqblk_reports_usage),
	KUNIT_CASE(dquot_set_dqblk_returns_acquire_error),
	KUNIT_CASE(dquot_set_dqblk_quota_off_returns_esrch),
	KUNIT_CASE(dquot_set_dqblk_sets_limit),
	KUNIT_CASE_PARAM(dquot_set_dqblk_rejects_bad_limit, dquot_kunit_bad_limits_gen_params),
	{}
};

static struct kunit_suite dquot_kunit_suite = {
	.name = "quota_dquot",
	.suite_exit = kmemleak_kunit_suite_exit,
	.init = dquot_kunit_init,
	.exit = dquot_kunit_exit,
	.test_cases = dquot_kunit_cases,
};

kunit_test_suite(dquot_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for errors from ->acquire_dquot()");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

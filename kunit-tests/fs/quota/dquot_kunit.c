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

static struct kunit_case dquot_kunit_cases[] = {
	KUNIT_CASE(dqget_quota_off_returns_esrch),
	KUNIT_CASE(dqget_returns_acquire_error),
	KUNIT_CASE(dqget_drops_reference_on_acquire_error),
	KUNIT_CASE(dqget_retries_acquire_after_error),
	KUNIT_CASE(dqget_acquires_once),
	KUNIT_CASE_PARAM(dquot_initialize_returns_acquire_error,
			 dquot_kunit_owner_faults_gen_params),
	KUNIT_CASE(dquot_initialize_drops_other_reference_on_error),
	KUNIT_CASE(dquot_initialize_tolerates_esrch),
	KUNIT_CASE(dquot_initialize_attaches_dquots),
	KUNIT_CASE_PARAM(dquot_transfer_returns_acquire_error, dquot_kunit_changes_gen_params),
	KUNIT_CASE(dquot_transfer_tolerates_esrch),
	KUNIT_CASE(dquot_transfer_moves_usage),
	KUNIT_CASE(dquot_get_dqblk_returns_acquire_error),
	KUNIT_CASE(dquot_get_next_dqblk_returns_acquire_error),
	KUNIT_CASE(dquot_get_dqblk_quota_off_returns_esrch),
	KUNIT_CASE(dquot_get_dqblk_reports_usage),
	KUNIT_CASE(dquot_set_dqblk_returns_acquire_error),
	KUNIT_CASE(dquot_set_dqblk_quota_off_returns_esrch),
	KUNIT_CASE(dquot_set_dqblk_sets_limit),
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

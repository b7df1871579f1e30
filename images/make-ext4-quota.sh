#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The ext4 image of the quota suite (fs/quota/dquot_kunit_image.h).
#
# ext4 with the quota feature: user and group quota are on as soon as it is
# mounted, with no quota file to turn on.  Its files:
#   /owned   uid 1001, gid 2001: its dquots are not cached after mount, so a
#            test chooses which of its dquot_initialize() lookups fails.
# Reproducible: fixed clock, UUID and hash seed; run twice, same bytes.
# Needs root (mke2fs -d copies ownership from the staging files).
set -eu
out=$1
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/root"
printf 'quota suite\n' > "$stage/root/owned"
chown 1001:2001 "$stage/root/owned"
touch -d @1577836800 "$stage/root/owned" "$stage/root"
E2FSPROGS_FAKE_TIME=1577836800 faketime -f '2020-01-01 00:00:00' \
	mke2fs -q -F -t ext4 -b 1024 -O quota -E quotatype=usrquota:grpquota,hash_seed=6e1f5c3a-0000-4000-8000-000000000001 \
	-U 6e1f5c3a-0000-4000-8000-000000000002 -L dquot_kunit \
	-d "$stage/root" "$out" 2M
# mke2fs -d copies the staging file's ctime, which only the kernel sets.
E2FSPROGS_FAKE_TIME=1577836800 faketime -f "2020-01-01 00:00:00" debugfs -w -R 'set_inode_field /owned ctime 20200101000000' "$out" >/dev/null 2>&1
# mke2fs -d (1.47.0) does not charge the copied files to their owners' quota:
# e2fsck writes the usage so the kernel finds a consistent quota file.
E2FSPROGS_FAKE_TIME=1577836800 faketime -f "2020-01-01 00:00:00" e2fsck -fy "$out" >/dev/null 2>&1 || [ $? -le 1 ]
E2FSPROGS_FAKE_TIME=1577836800 faketime -f "2020-01-01 00:00:00" e2fsck -fn "$out" >/dev/null 2>&1

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The images of the ext2/ext3/ext4 quota suites (fs/ext4/namei_kunit_images.h,
# fs/ext2/namei_kunit_images.h).
#
# usage: make-ext.sh ext4|ext3|ext2 OUT
#
# Every image holds the objects of include/kunit/fs.h's namespace fixture,
# each owned by uid 1101+n, gid 2101+n (n its enum fs_kunit_obj):
#   /d1 (0) /d2 (1) /d1/victim (2) /d1/empty (3) /d2/existing (4) /owned (5)
# ext4: the quota feature (user and group quota on at mount, usage kept by
#       e2fsck).  ext3 and ext2: no quota feature (ext3 cannot have it), but
#       empty vfsv1 files aquota.user and aquota.group for quotaon, the way
#       a system turns quota on for them.
# 1 KiB blocks, 2 MiB; reproducible (frozen clock, fixed UUID and hash seed).
# Needs root (mke2fs -d copies ownership from the staging files).
set -eu
type=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root/d1/empty" "$root/d2"
printf 'victim\n' > "$root/d1/victim"
printf 'existing\n' > "$root/d2/existing"
printf 'owned\n' > "$root/owned"
# Owned by the two ids no object has (FS_KUNIT_NEW, FS_KUNIT_TARGET), so that
# e2fsck gives every id an entry in ext4's quota files: no operation under
# test then allocates a quota file block for a new entry.
mkdir "$root/pad"
printf 'new\n' > "$root/pad/new"
printf 'target\n' > "$root/pad/target"
chown 1107:2107 "$root/pad/new"
chown 1108:2108 "$root/pad/target"
n=0
for p in d1 d2 d1/victim d1/empty d2/existing owned; do
	chown $((1101 + n)):$((2101 + n)) "$root/$p"
	n=$((n + 1))
done
opts=
case $type in
ext4) opts="-O quota -E quotatype=usrquota:grpquota" ;;
ext3|ext2)
	/usr/bin/python3 "$here/mkquotafile.py" user "$root/aquota.user"
	/usr/bin/python3 "$here/mkquotafile.py" group "$root/aquota.group"
	chmod 600 "$root/aquota.user" "$root/aquota.group" ;;
*) echo "make-ext.sh: unknown type $type" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
"$here/mke2fs-frozen.sh" "$root" "$out" -t "$type" -b 1024 $opts \
	-E hash_seed=6e1f5c3a-0000-4000-8000-000000000001 \
	-U 6e1f5c3a-0000-4000-8000-000000000003 -L ns_kunit

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The ext4 image of the quota suite (fs/quota/dquot_kunit_image.h), and with
# "project" the one of ext4_project_dquot (fs/ext4/namei_kunit_images.h).
#
# usage: make-ext4-quota.sh OUT [project]
#
# ext4 with the quota feature: user and group quota (and project quota, with
# 256-byte inodes for the project id) are on as soon as it is mounted, with
# no quota file to turn on.  Its files:
#   /owned   uid 1001, gid 2001: its dquots are not cached after mount, so a
#            test chooses which of its dquot_initialize() lookups fails.
# Reproducible (mke2fs-frozen.sh): fixed clock, UUID and hash seed.
# Needs root (mke2fs -d copies ownership from the staging files).
set -eu
out=$1
if [ "${2:-}" = project ]; then
	features=quota,project types=usrquota:grpquota:prjquota n=3 label=project_kunit
	set -- -I 256
else
	features=quota types=usrquota:grpquota n=1 label=dquot_kunit
	set --
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/root"
printf 'quota suite\n' > "$stage/root/owned"
chown 1001:2001 "$stage/root/owned"
"$(dirname "$0")/mke2fs-frozen.sh" "$stage/root" "$out" -t ext4 -b 1024 -O "$features" "$@" \
	-E quotatype=$types,hash_seed=6e1f5c3a-0000-4000-8000-00000000000$n \
	-U 6e1f5c3a-0000-4000-8000-00000000000$((n + 1)) -L $label

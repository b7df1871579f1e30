#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# mke2fs -d ROOT OUT 2M, reproducibly, with the repairs every ext image needs.
#
# usage: mke2fs-frozen.sh ROOT OUT MKE2FS-OPTION...
#
# The clock is frozen (E2FSPROGS_FAKE_TIME alone does not cover e2fsck and
# debugfs), and the staging files' times are set to the same instant.
# mke2fs 1.47.0 -d copies each staging file's ctime, which only the kernel
# sets, so debugfs sets it afterwards; and it does not charge copied files to
# quota, so e2fsck writes the usage (quota feature) and checks the result.
set -eu
root=$1 out=$2
shift 2
frozen() { E2FSPROGS_FAKE_TIME=1577836800 faketime -f '2020-01-01 00:00:00' "$@"; }
find "$root" -exec touch -h -d @1577836800 {} +
rm -f "$out"
frozen mke2fs -q -F "$@" -d "$root" "$out" 2M
(cd "$root" && find . -mindepth 1 | sed 's|^\.||') | while read -r p; do
	frozen debugfs -w -R "set_inode_field $p ctime 20200101000000" "$out" >/dev/null 2>&1
done
frozen e2fsck -fy "$out" >/dev/null 2>&1 || [ $? -le 1 ]
frozen e2fsck -fn "$out" >/dev/null 2>&1

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Make every test image with the real mkfs tools and write its C table
# beside the test that uses it.  With --check, write nothing: compare what
# the tools make today with what is committed (a pass or a fail per header).
#
# usage: make-all.sh [--check] DIR   (kunit-tests/ of the suite's repository,
#        or the top of a kernel tree with the series applied)
set -eu
check=
[ "${1:-}" = --check ] && { check=1; shift; }
dest=$1
here=$(cd "$(dirname "$0")" && pwd)
# Where these scripts are in the kernel tree: the headers name the commands
# by that path, the way a kernel developer runs them again.
D=tools/testing/fs_kunit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

emit() {  # emit HEADER HOW SYM=IMAGE[@BASE]...
	header=$1 how=$2
	shift 2
	/usr/bin/python3 "$here/bin2c.py" "$how" "$@" > "$tmp/out.h"
	if [ -z "$check" ]; then
		cp "$tmp/out.h" "$dest/$header"
		echo "images: wrote $dest/$header"
	elif cmp -s "$tmp/out.h" "$dest/$header"; then
		passed=$((passed + 1))
	else
		echo "images: $dest/$header differs from what $D/ makes now"
		failed=$((failed + 1))
	fi
}

# The quota files the namespace fixture writes into images it populates.
/usr/bin/python3 "$here/mkquotafile.py" user "$tmp/aquota.user"
/usr/bin/python3 "$here/mkquotafile.py" group "$tmp/aquota.group"
emit fs/kunit_fs_quota_files.h "$D/mkquotafile.py user OUT
$D/mkquotafile.py group OUT" \
	fs_kunit_aquota_user="$tmp/aquota.user" fs_kunit_aquota_group="$tmp/aquota.group"

"$here/make-ext4-quota.sh" "$tmp/dquot.img" >/dev/null
emit fs/quota/dquot_kunit_image.h "$D/make-ext4-quota.sh OUT" dquot_kunit_image="$tmp/dquot.img"

set --
how=
for v in valid write-rev read-rev ro-partition root-unreadable no-fileset bad-unalloc-table \
	ro-partition-unreadable-table vat vat-read-rev; do
	"$here/make-udf.sh" "$v" "$tmp/udf-$v.img"
	how="$how${how:+
}$D/make-udf.sh $v OUT"
	sym=udf_kunit_$(echo "$v" | tr - _)
	# Each image is stored whole, or as the runs where it differs from the
	# one it was edited from: a CD-R shares little with a hard disk's layout.
	case $v in
	valid) set -- "$sym=$tmp/udf-$v.img" ;;
	vat) set -- "$@" "$sym=$tmp/udf-$v.img" ;;
	vat-*) set -- "$@" "$sym=$tmp/udf-$v.img@udf_kunit_vat" ;;
	*) set -- "$@" "$sym=$tmp/udf-$v.img@udf_kunit_valid" ;;
	esac
done
emit fs/udf/super_kunit_images.h "$how" "$@"

for t in ext4 ext3 ext2; do
	"$here/make-ext.sh" "$t" "$tmp/$t.img" >/dev/null
done
"$here/make-ext4-quota.sh" "$tmp/project.img" project >/dev/null
emit fs/ext4/namei_kunit_images.h "$D/make-ext.sh ext4 OUT
$D/make-ext.sh ext3 OUT
$D/make-ext4-quota.sh OUT project" \
	ext4_kunit_image="$tmp/ext4.img" ext3_kunit_image="$tmp/ext3.img" \
	ext4_kunit_project_image="$tmp/project.img"
emit fs/ext2/namei_kunit_images.h "$D/make-ext.sh ext2 OUT" ext2_kunit_image="$tmp/ext2.img"

for t in reiserfs jfs ocfs2 f2fs; do
	"$here/make-bare.sh" "$t" "$tmp/$t.img"
	emit "fs/$t/namei_kunit_images.h" "$D/make-bare.sh $t OUT" "${t}_kunit_image=$tmp/$t.img"
done

# An empty ext2 for the block_stable_writes suite, which makes its own file.
mkdir "$tmp/empty"
set -- -t ext2 -b 1024 -E hash_seed=6e1f5c3a-0000-4000-8000-000000000007 \
	-U 6e1f5c3a-0000-4000-8000-000000000008 -L stable_kunit
"$here/mke2fs-frozen.sh" "$tmp/empty" "$tmp/stable.img" "$@" >/dev/null
emit block/stable_writes_kunit_image.h "$D/mke2fs-frozen.sh EMPTY-DIR OUT $*" \
	stable_writes_kunit_image="$tmp/stable.img"

[ -z "$check" ] || { echo "$passed passed, $failed failed, 0 skipped"; [ "$failed" = 0 ]; }

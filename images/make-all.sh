#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Make every test image with the real mkfs tools and write its C table
# beside the test that uses it.  With --check, write nothing: compare what
# the tools make today with what is committed (1 passed or 1 failed each).
#
# usage: make-all.sh [--check] KUNIT_TESTS_DIR
set -eu
check=
[ "${1:-}" = --check ] && { check=1; shift; }
dest=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# script  C symbol  header beside its test
while read -r script sym header; do
	"$here/$script" "$tmp/$sym.img" >/dev/null
	/usr/bin/python3 "$here/bin2c.py" "$tmp/$sym.img" "$sym" "images/$script" > "$tmp/$sym.h"
	if [ -z "$check" ]; then
		cp "$tmp/$sym.h" "$dest/$header"
		echo "images: wrote $dest/$header"
	elif cmp -s "$tmp/$sym.h" "$dest/$header"; then
		passed=$((passed + 1))
	else
		echo "images: $dest/$header differs from what images/$script makes now"
		failed=$((failed + 1))
	fi
done <<LIST
make-ext4-quota.sh dquot_kunit_image fs/quota/dquot_kunit_image.h
LIST
[ -z "$check" ] || { echo "$passed passed, $failed failed, 0 skipped"; [ "$failed" = 0 ]; }

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The series as it would be mailed: each patch of patches/ with the test
# sources it adds (listed after it in patches/series) folded in, written
# with git format-patch to OUT.  Plumbing only: the work tree is not touched.
#
# usage: series.sh OUT
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1
WORKDIR=${WORKDIR:-/var/tmp/fs-kunit}
tree=$("$top/harness/tree.sh" path)
g() { git -C "$tree" "$@"; }
idx=$tree/.git/fs-kunit-series-index
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$idx"' EXIT

GIT_INDEX_FILE=$idx g read-tree pristine
parent=$(g rev-parse pristine)
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/patches/series" |
while read -r patch files; do
	GIT_INDEX_FILE=$idx g apply --cached "$top/patches/$patch"
	for f in $files; do
		blob=$(g hash-object -w --path "$f" "$top/kunit-tests/$f")
		printf '100644 %s\t%s\n' "$blob" "$f" | GIT_INDEX_FILE=$idx g update-index --add --index-info
	done
	git mailinfo "$tmp/msg" "$tmp/body" < "$top/patches/$patch" > "$tmp/info"
	subject=$(sed -n 's/^Subject: //p' "$tmp/info")
	GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$tmp/info") \
	GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$tmp/info") \
	GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$tmp/info") \
	parent=$( { printf '%s\n\n' "$subject"; cat "$tmp/msg"; } |
		g commit-tree "$(GIT_INDEX_FILE=$idx g write-tree)" -p "$parent")
	echo "$parent" > "$tmp/head"
done
rm -rf "$out"
g format-patch -q --no-signature --zero-commit -o "$out" "pristine..$(cat "$tmp/head")"
echo "series.sh: the series as mailed is in $out:"
ls "$out"
if [ -x "$tree/scripts/checkpatch.pl" ]; then
	# from $out: --strict leaves a cache file (.checkpatch-camelcase.*) in the cwd
	(cd "$out" && "$tree/scripts/checkpatch.pl" --strict --no-tree -q ./*.patch) || true
fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make alone: every test directory's .kunitconfig on its own, as a developer
# runs kunit.py run --kunitconfig=DIR in the patched tree (each its own build
# directory, sharing the compile cache).  One line per directory: its
# summary, build and test time; then the sum of the summaries.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
DIRS=${DIRS:-"fs/quota fs/udf fs/ext4 fs/ext2 fs/jfs fs/reiserfs fs/ocfs2 block"}
mkdir -p results/alone
out=results/alone/summary.txt
: > "$out"
passed=0 failed=0 skipped=0
for d in $DIRS; do
	log=results/alone/$(echo "$d" | tr / -).log
	ALONE=$d /usr/bin/python3 harness/run.py > "$log" 2>&1
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	phases=$(sed -n 's/^run: time per phase: //p' "$log" | tail -1)
	[ -n "$line" ] || line="0 passed, 1 failed, 0 skipped"
	echo "$d: $line ($phases)" | tee -a "$out"
	set -- $line
	passed=$((passed + $1)) failed=$((failed + $3)) skipped=$((skipped + $5))
done
echo "$passed passed, $failed failed, $skipped skipped" | tee -a "$out"
[ "$failed" = 0 ]

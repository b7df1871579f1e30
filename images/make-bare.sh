#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The images of the reiserfs, jfs, ocfs2 and f2fs quota suites: a bare mkfs,
# each as small as its mkfs allows (the test's RAM disk is the image's size):
# jfs 16 MiB, its minimum; reiserfs 5 MiB, its 1025-block journal and a
# little (mkreiserfs refuses 4); ocfs2 10 MiB, its 4 MiB journal, system
# files and room for a reflink (mkfs.ocfs2 refuses 6.5, and at 7 a reflink
# fails with -ENOSPC); f2fs 52 MiB, the least mkfs.f2fs formats with its six
# logs (it refuses 51).  Their mkfs cannot copy a tree
# in, so the namespace fixture (fs/kunit_fs_ns.c) makes the objects at mount
# time.
#
# usage: make-bare.sh reiserfs|jfs|ocfs2|f2fs OUT
#
# Reproducible: a frozen clock, fixed UUIDs, and fixed-random.so for what
# the tools take from /dev/urandom, getrandom() or uuid_generate().
# reiserfs: a journal of 1025 blocks: with quota on, a mkdir reserves 224
# journal blocks, and the smallest journal (513) batches at most 225, so
# journal_begin() would wait for room forever.
# ocfs2: local mount (no cluster stack), user and group quota as
# filesystem features, on at mount.  f2fs: user, group and project quota
# as the quota feature's hidden inodes, on at mount (project quota needs
# extra_attr); f2fsnorm.py fixes the kernel version mkfs.f2fs records.
# jfs: mkfs.jfs writes uninitialised stack bytes into the unused tail of its
# log pages; jfsnorm.py zeroes them.
set -eu
type=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/fixed-random.so" "$here/fixed-random.c" -ldl
rm -f "$out"
case $type in reiserfs) size=5M ;; ocfs2) size=10M ;; f2fs) size=52M ;; *) size=16M ;; esac
truncate -s "$size" "$out"
frozen() {
	# shellcheck disable=SC2016
	setarch "$(uname -m)" -R faketime -f '2020-01-01 00:00:00' \
		sh -c 'LD_PRELOAD="${LD_PRELOAD:-} $0" exec "$@"' "$tmp/fixed-random.so" "$@"
}
case $type in
reiserfs)
	frozen mkreiserfs -q -f -f -s 1025 -u 6e1f5c3a-0000-4000-8000-000000000006 \
		-l ns_kunit "$out" ;;
jfs)
	frozen mkfs.jfs -q -L ns_kunit "$out"
	/usr/bin/python3 "$here/jfsnorm.py" "$out" ;;
ocfs2)
	frozen mkfs.ocfs2 -q -M local -b 1024 -C 4096 -J size=4M -N 1 -L ns_kunit \
		-U 6e1f5c3a00004000800000000000000a \
		--fs-features=usrquota,grpquota "$out" ;;
f2fs)
	frozen mkfs.f2fs -q -f -l ns_kunit -U 6e1f5c3a-0000-4000-8000-00000000000b \
		-O extra_attr,quota,project_quota "$out"
	/usr/bin/python3 "$here/f2fsnorm.py" "$out" ;;
*) echo "make-bare.sh: unknown type $type" >&2; exit 2 ;;
esac >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the initramfs of make coverage (busybox-static).
#
# The built-in suites have run by the time the kernel starts /init: write the
# kernel's gcov data (the .gcda files under debugfs) to the console, between
# two marker lines, as a base64 tar the harness takes apart
# (harness/fskunit/coverage.py).  Then restart: that ends QEMU (-no-reboot).
[ $$ = 1 ] || { echo "coverage-init.sh: runs only as /init inside QEMU (make coverage)" >&2; exit 2; }
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
cd /sys/kernel/debug/gcov || { echo "fs-kunit-gcov: no gcov data in debugfs"; reboot -f; }
# debugfs files read as the kernel writes them: copied first, so that tar
# sees regular files of a fixed size.
mkdir -p /tmp/gcov
find . -name '*.gcda' | while read -r f; do
	mkdir -p "/tmp/gcov/${f%/*}"
	cat "$f" > "/tmp/gcov/$f"
done
cd /tmp/gcov
echo "fs-kunit-gcov: begin"
tar -cf - . | gzip -9 | base64
echo "fs-kunit-gcov: end"
reboot -f

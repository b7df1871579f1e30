#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the initramfs of make run MODE=modules (busybox-static).
#
# The helpers module first, then each test module in /lib/modules/order:
# load it (KUnit runs its suites and prints their KTAP to the console), unload
# it, check that it left nothing behind, load and unload it once more.  The
# checks are a KTAP suite of their own, "modules", written to /dev/kmsg so
# that they come in order with the kernel's lines.  Then restart: that ends QEMU.
# It loads and unloads kernel modules: only ever as PID 1 of the guest.
[ $$ = 1 ] || { echo "modules-init.sh: runs only as /init inside QEMU (make run MODE=modules)" >&2; exit 2; }
/bin/busybox --install -s /bin
export PATH=/bin
# No /proc: the kernel has none (kunitconfig.noproc), so that it shares its
# configuration with the built-in one.
mount -t sysfs sysfs /sys
# A test finds its RAM disk's node here, as on a running system.
mount -t devtmpfs devtmpfs /dev

say() { echo "$*" > /dev/kmsg; }

# What a test module may leave behind: block devices and their nodes, dquots,
# the fixtures' device-sized buffers (the RAM disks' contents), and the module
# itself.  Its mounts are vfs_kern_mount()'s, in no namespace: a mount left
# behind shows as its dquots or its device.  The fixtures' module (fs_kunit,
# loaded first) gives the counts.
P=/sys/module/fs_kunit/parameters
state() {
	ls /sys/block /dev /sys/module
	echo "dquots allocated: $(cat $P/allocated_dquots 2>/dev/null)"
	echo "fixture buffers not freed: $(cat $P/buffers 2>/dev/null)"
}

cd /lib/modules || exit 1
for lib in $(cat libs); do
	insmod "$lib.ko" || say "modules-init: cannot load $lib"
done
n=0 results=/tmp/results
mkdir -p /tmp
: > $results
for m in $(cat order); do
	n=$((n + 1))
	before=$(state)
	problems=
	for load in 1 2; do
		say "modules-init: load $load of $m"
		if ! insmod "$m.ko"; then
			problems="$problems load $load failed;"
			continue
		fi
		if ! rmmod "$m"; then
			problems="$problems unload $load failed;"
			continue
		fi
		after=$(state)
		# A kernel thread's last mntput() is deferred (delayed_mntput()),
		# so a tmpfs the test mounted, and its dquots, may go a moment
		# after rmmod returns: give that 10 s; what is still there is left.
		tries=0
		while [ "$after" != "$before" ] && [ $tries -lt 10 ]; do
			sleep 1
			tries=$((tries + 1))
			after=$(state)
		done
		if [ "$after" != "$before" ]; then
			problems="$problems unload $load left something behind;"
			echo "$before" > /tmp/before
			echo "$after" > /tmp/after
			diff /tmp/before /tmp/after | sed -n 's/^\([-+][^-+]\)/    # \1/p' >> $results
		fi
	done
	if [ -z "$problems" ]; then
		echo "    ok $n ${m}_unloads_cleanly" >> $results
	else
		echo "    #$problems" >> $results
		echo "    not ok $n ${m}_unloads_cleanly" >> $results
	fi
done
say "KTAP version 1"
say "1..1"
say "    KTAP version 1"
say "    # Subtest: modules"
say "    1..$n"
while IFS= read -r line; do say "$line"; done < $results
if grep -q "^    not ok" $results; then say "not ok 1 modules"; else say "ok 1 modules"; fi
for lib in $(cat libs); do rmmod "$lib"; done
# kunit.py runs QEMU with -no-reboot: a restart ends it (ACPI power-off does not
# work with its qboot firmware).
reboot -f

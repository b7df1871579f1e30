#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: the suite in QEMU (built in, as modules, one directory alone),
# the harness's own tests, the documentation check, the series as mailed
# (checkpatch, kernel-doc, every patch built on its own), the counts in the docs, the images, the proof that
# every regression patch is caught and every case is named by one, and the
# suite and its proof again under the debug profile.  Each step ends with an
# "N passed, N failed, N skipped" line; the last line here is their sum.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
mkdir -p results
passed=0 failed=0 skipped=0 phases=
# make check timed deps.sh; the runs of the steps below did not.
[ -n "${FS_KUNIT_PACKAGES_SECONDS:-}" ] && phases=" packages $FS_KUNIT_PACKAGES_SECONDS s,"
unset FS_KUNIT_PACKAGES_SECONDS

step() {
	local name=$1 log=results/check-$1.log rc line t0=$SECONDS
	shift
	echo "== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	phases="$phases $name $((SECONDS - t0)) s,"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "check: $name stopped (exit $rc) before it counted anything: see $log"
		failed=$((failed + 1))
		return
	fi
	set -- $line
	passed=$((passed + $1)) failed=$((failed + $3)) skipped=$((skipped + $5))
	[ "$rc" = 0 ] || [ "$3" != 0 ] || { echo "check: $name exited $rc"; failed=$((failed + 1)); }
}

step suite env PROFILE=default MODE=builtin ALONE= /usr/bin/python3 harness/run.py
# The tests as modules: each loaded, unloaded (leaving nothing) and loaded again.
step modules env PROFILE=default MODE=modules ALONE= /usr/bin/python3 harness/run.py
# One test directory alone, as a developer runs kunit.py --kunitconfig=fs/quota.
step alone-quota env PROFILE=default MODE=builtin ALONE=fs/quota /usr/bin/python3 harness/run.py
step harness /usr/bin/python3 harness/tests/run_tests.py
# Seed 82ff50b222d8 is documentation: its page is checked against the tree.
step docs sh -c '/usr/bin/python3 harness/doccheck.py "${WORKDIR:-/var/tmp/fs-kunit}/linux-source-6.12" &&
	echo "1 passed, 0 failed, 0 skipped" || echo "0 passed, 1 failed, 0 skipped"' 
# The series as mailed: checkpatch --strict and kernel-doc find nothing that
# patches/checkpatch-exceptions does not give a reason for.
step series /usr/bin/python3 harness/series.py "${WORKDIR:-/var/tmp/fs-kunit}/series"
# Each patch builds on its own, as git bisect meets it (the modules step's
# configuration, so it comes after that step).
step series-build /usr/bin/python3 harness/perpatch.py
# The counts in README.md and docs/design.md are the suite run's.
step counts /usr/bin/python3 harness/counts.py --check
step images images/make-all.sh --check kunit-tests
step regressions env PROFILE=default MODE=builtin ALONE= /usr/bin/python3 harness/regressions.py
# What only unloading the test modules shows (a disk or memory left behind).
step modules-regressions env PROFILE=default MODE=modules ALONE= /usr/bin/python3 harness/regressions.py
# The debug profile: the whole suite once more under KASAN, kmemleak, lockdep
# and the rest (a report fails its case), and the bugs only they can see.
step debug-suite env PROFILE=debug MODE=builtin ALONE= /usr/bin/python3 harness/run.py
step debug-regressions env PROFILE=debug MODE=builtin ALONE= /usr/bin/python3 harness/regressions.py

echo "check: time per step:${phases%,} (total $SECONDS s)"
echo "$passed passed, $failed failed, $skipped skipped" | tee results/check-summary.txt
[ "$failed" = 0 ]

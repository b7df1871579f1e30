#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: how long the things a developer waits for take on this machine.
# Medians of REPEAT runs (default 3) of the developer's loop on one suite
# (BENCH_FILTER, default quota_dquot: the file edited is that suite's), and
# the whole suite's time inside QEMU, and the compile cache's hits over the
# loop.  COLD=1 also times a cold make run (an empty WORKDIR: extract, build,
# run), once, in a scratch WORKDIR; CHECK=1 times make check on a fresh clone
# with this WORKDIR kept, once; CHECK=empty the same with an empty scratch
# WORKDIR (every profile's cold build, no compile cache: what CI may meet).
# A benchmark, not a test: it judges nothing.  Output: results/bench.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
REPEAT=${REPEAT:-3}
BENCH_FILTER=${BENCH_FILTER:-quota_dquot}
WORKDIR=${WORKDIR:-/var/tmp/fs-kunit}
export WORKDIR
test_file=kunit-tests/fs/quota/dquot_kunit.c
saved=$(mktemp)
cp "$test_file" "$saved"
trap 'cp "$saved" "$test_file"; rm -f "$saved"' EXIT

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() {  # timed CMD...: seconds, output to results/bench.log
	local t0; t0=$(now)
	"$@" >> "$top/results/bench.log" 2>&1 || true
	echo "$(now) - $t0" | bc
}
suite_seconds() {  # first KTAP line to last result line, by printk time
	awk -F'[][]' '/KTAP version/ && !s {s=$2} /ok [0-9]/ {e=$2} END {print e - s}' results/console.log
}

mkdir -p results
: > results/bench.log
make -s run FILTER= >> results/bench.log 2>&1 || true   # a built, synced tree
whole=$(suite_seconds)
tree=$(harness/tree.sh path)
kunit_exec() {
	(cd "$tree" && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/testing/kunit/kunit.py exec \
		--arch=x86_64 --build_dir="$WORKDIR/build" --qemu_config="$top/qemu-configs/x86_64.py" \
		"$BENCH_FILTER")
}

ccache_stat() {  # ccache_stat FIELD: a counter of the shared cache
	CCACHE_DIR=$WORKDIR/ccache ccache --print-stats 2>/dev/null | awk -v k="$1" '$1 == k {print $2}'
}
h0=$(ccache_stat direct_cache_hit) m0=$(ccache_stat cache_miss)
declare -a exec_t same_t edit_t suite_t
for i in $(seq "$REPEAT"); do
	exec_t+=("$(timed kunit_exec)")
	same_t+=("$(timed make -s run FILTER="$BENCH_FILTER")")
	suite_t+=("$(suite_seconds)")
	echo "/* bench $i $$ */" >> "$test_file"
	edit_t+=("$(timed make -s run FILTER="$BENCH_FILTER")")
done
cp "$saved" "$test_file"
make -s run >> results/bench.log 2>&1 || true

hits=$(( $(ccache_stat direct_cache_hit) - ${h0:-0} )) misses=$(( $(ccache_stat cache_miss) - ${m0:-0} ))
m_exec=$(printf '%s\n' "${exec_t[@]}" | median)
m_same=$(printf '%s\n' "${same_t[@]}" | median)
m_edit=$(printf '%s\n' "${edit_t[@]}" | median)
m_suite=$(printf '%s\n' "${suite_t[@]}" | median)
cold=n/a
if [ "${COLD:-0}" = 1 ]; then
	scratch=$(mktemp -d /var/tmp/fs-kunit-bench.XXXXXX)
	cold=$(WORKDIR=$scratch timed make -s run)
	rm -rf "$scratch"
fi
check=n/a check_empty=n/a
if [ "${CHECK:-0}" != 0 ]; then
	clone=$(mktemp -d /var/tmp/fs-kunit-bench-clone.XXXXXX)
	git clone -q "$top" "$clone/repo"
	if [ "$CHECK" = empty ]; then
		check_empty=$(cd "$clone/repo" && WORKDIR=$clone/workdir timed make -s check)
	else
		check=$(cd "$clone/repo" && timed make -s check)
	fi
	grep -E '^check: time per step|passed, .* failed, .* skipped$' results/bench.log | tail -2
	rm -rf "$clone"
fi
{
	echo "| what | median of $REPEAT (s) | target |"
	echo "|---|---|---|"
	printf '| bare kunit.py exec of the built kernel, %s | %.1f | |\n' "$BENCH_FILTER" "$m_exec"
	printf '| make run FILTER=%s, nothing changed | %.1f (%.2fx exec) | at most 1.3x exec |\n' \
		"$BENCH_FILTER" "$m_same" "$(echo "$m_same / $m_exec" | bc -l)"
	printf '| edit %s, make run FILTER=%s | %.1f | at most 20 s |\n' "$test_file" \
		"$BENCH_FILTER" "$m_edit"
	printf '| %s inside QEMU (first KTAP line to last result) | %.1f | |\n' "$BENCH_FILTER" \
		"$m_suite"
	printf '| the whole suite inside QEMU, once | %.1f | |\n' "$whole"
	echo "| cold make run (COLD=1: empty WORKDIR, packages installed) | $cold | at most 600 s |"
	echo "| make check, fresh clone, empty WORKDIR (CHECK=empty) | $check_empty | at most 4800 s |"
	echo "| make check, fresh clone, WORKDIR kept (CHECK=1) | $check | at most 1800 s |"
	echo "| compile cache over the edit loop: hits / misses | $hits / $misses | |"
	echo
	echo "$(nproc) cores; $(dpkg-query -W -f='${Version}' linux-source-6.12) ; $(date -u +%F)"
} | tee results/bench.md

# KUnit regression suite for quota error handling and UDF write safety.
#
#   make run      build the patched 6.12 kernel, run the suite in QEMU, write results/
#   make check    make run + the harness's own tests + the regression proof (what CI runs)
#
# Settings (environment or make VAR=...), read once by harness/fskunit/config.py:
#   PROFILE        default; debug: KASAN, kmemleak, lockdep... (kunitconfig.debug);
#                  alltests: every upstream KUnit test beside ours (kunitconfig.alltests)
#   MODE           builtin, or modules: every test a module, loaded, unloaded
#                  and loaded again by an initramfs (kunitconfig.modules)
#   ALONE          a test directory (fs/quota, block...): its own .kunitconfig
#                  instead of kunitconfig, as kunit.py run --kunitconfig=DIR
#   WORKDIR        where the kernel tree and build live      (/var/tmp/fs-kunit)
#   FILTER         kunit.py filter glob, e.g. 'quota_dquot.dqget_*'
#   EXTRA_PATCHES  kernel patches applied on top for this run only
#   TIMEOUT        seconds QEMU may run (default: from this machine's measured
#                  time, or docs/design.md's, with a generous factor)
#   SLOWDOWN       run the guest N times slower than this machine would
#   BOOTS          guests at once (default: the cores)
#   KUNIT_QEMU_ACCEL=kvm  use KVM instead of TCG (guests hang under KVM here)
#   PATCHES        make regressions: only these patches (globs, space-separated)
#   AUTHOR         make series: 'Name <mail>' for From: and Signed-off-by:
#   MUTANTS        make mutants: sample (mutants/sample), or globs of mutant keys
#   DISTCC_HOSTS   compile through distcc on these hosts too (distcc's syntax;
#                  set JOBS to the slots, e.g. JOBS=$$(distcc -j)); docs/scale.md
#   RUNNER         qemu (kunit.py exec), or lava: each boot a LAVA job run by
#                  lava-run, its console judged as QEMU's is; docs/scale.md
#   DEVICES        make lava-server: how many QEMU devices the server has (2)

WORKDIR ?= /var/tmp/fs-kunit
export PROFILE MODE ALONE WORKDIR FILTER EXTRA_PATCHES TIMEOUT SLOWDOWN JOBS BOOTS KUNIT_QEMU_ACCEL \
	PATCHES AUTHOR DIRS REPEAT COLD CHECK BEFORE SLOW SERVER MUTANTS DISTCC_HOSTS \
	RUNNER DEVICES

FSKUNIT := PYTHONPATH=harness PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m fskunit

.PHONY: run check deps tree regressions prove regression test-harness images check-images \
	series series-build counts bench alone mutants coverage lava-jobs lava-server clean distclean

# The packages' time (deps.sh) is the first phase make run and make check print.
run:
	@t0=$$(date +%s); harness/deps.sh && echo "run: packages $$(($$(date +%s) - t0)) s" && \
	$(FSKUNIT) run

check:
	@t0=$$(date +%s); harness/deps.sh lava && \
	$(FSKUNIT) check --packages-seconds=$$(($$(date +%s) - t0))

deps:
	@harness/deps.sh lava

tree: deps
	@$(FSKUNIT) tree >/dev/null

regressions: deps
	$(FSKUNIT) regressions

# A contributor's loop: the cases FILTER matches must be named by a patch, and
# every patch of their suites (new ones too) must still be caught.
prove: deps
	@test -n "$(FILTER)" || { echo "make prove: say which cases: FILTER='suite.case*'" >&2; exit 2; }
	FILTER= $(FSKUNIT) prove '$(FILTER)'

# Write a regression patch: NAME=quota/16-what FILES='fs/quota/dquot.c' makes a
# scratch copy to edit; the same NAME again turns the edit into the patch.
regression: deps
	$(FSKUNIT) regression "$(NAME)" $(FILES)

test-harness: deps
	$(FSKUNIT) test

# Regenerate the C tables of the test images from the real mkfs tools.
images: deps
	images/make-all.sh kunit-tests

# The images in kunit-tests/ are what images/ makes today, byte for byte.
check-images: deps
	images/make-all.sh --check kunit-tests

# The series as mailed, one per maintainer group (patches/covers/), with the
# test sources folded in; checkpatch --strict and kernel-doc enforced.
# AUTHOR='Name <mail>' signs the patches.
series: deps
	$(FSKUNIT) series

# Every patch of the series builds on its own, incrementally, and adds no
# compiler warning, in the module build's configuration (make run MODE=modules first).
series-build: deps
	$(FSKUNIT) series-build

# Rewrite the counts in README.md and docs/design.md from the last suite run.
counts:
	$(FSKUNIT) counts --write

# The budget on this machine, one table (results/bench.md): REPEAT=3, COLD=1,
# CHECK=1 or CHECK=empty, SLOW=4 (the debug suite and proof on a guest held to
# a quarter of a core), SERVER=1 (make lava-server with one device, then two),
# BEFORE=<revision> for a column of figures before.
bench: deps
	$(FSKUNIT) bench

# Mutation analysis of the guarded functions (mutants/scope): every mutant
# compiled into one kernel per profile, each judged by a boot of its suites;
# results/mutants.md and results/mutants.json.
mutants: deps
	$(FSKUNIT) mutants

# Line and branch coverage of the guarded functions (gcov, PROFILE=coverage):
# results/coverage/summary.txt and results/coverage/html/.
coverage: deps
	$(FSKUNIT) coverage

# LAVA job definitions for the kernels built (the suite, each mutant) and the
# QEMU device they need, in $(WORKDIR)/lava-jobs; RUNNER=lava runs a boot as one.
lava-jobs: deps
	$(FSKUNIT) lava-jobs

# A lava-server on this machine with DEVICES QEMU devices (2), its own
# PostgreSQL, everything stopped at the end: the mutants' jobs (MUTANTS, the
# sample unless told) submitted to it, judged as make mutants judges them.
lava-server: deps
	$(FSKUNIT) lava-server

# Every test directory's own .kunitconfig, one after another (DIRS= to choose).
alone: deps
	$(FSKUNIT) alone

clean:
	rm -rf results

distclean: clean
	rm -rf $(WORKDIR)

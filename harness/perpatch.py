#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make series-build: every patch of the series builds on its own.

The series (test sources folded in, as make series mails it) is committed on
pristine in patches/series order, and each commit is checked out in turn in
the kernel tree and built incrementally, vmlinux and modules, in
$WORKDIR/build-series: what git bisect would meet.  The configuration is
MODE=modules's (every test a module, so modpost also checks that what a
test module calls is exported), taken at the tip and given to each earlier
commit through olddefconfig, so a symbol is on from the patch that adds it.
Objects come from the compile cache every build directory shares, so a step
compiles little more than what its patch changed.

Runs under run.py's WORKDIR lock and puts the tree back with tree.sh sync.
A patch that does not build is named, with its build log kept.  Needs the
MODE=modules build (make run MODE=modules), whose .config it uses.
"""

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import series  # noqa: E402

TOP = series.TOP
WORKDIR = os.environ.get('WORKDIR') or '/var/tmp/fs-kunit'
BUILD = os.path.join(WORKDIR, 'build-series')
CONFIG = os.path.join(WORKDIR, 'build-modules', '.config')
JOBS = os.environ.get('JOBS') or str((os.cpu_count() or 1) + 1)


def say(msg):
    print('series-build: ' + msg, flush=True)


def make(tree, log, *targets):
    """make in @tree as kunit.py runs it (same compiler line, so the cache hits)."""
    with open(log, 'a') as out:
        return subprocess.run(
            ['make', 'ARCH=x86_64', 'O=' + BUILD, 'CC=ccache gcc', '--jobs=' + JOBS, *targets],
            cwd=tree, stdout=out, stderr=subprocess.STDOUT,
            env=dict(os.environ, CCACHE_DIR=os.path.join(WORKDIR, 'ccache'),
                     CCACHE_MAXSIZE='5G', CCACHE_BASEDIR=tree)).returncode


def tail(log, n=25):
    with open(log, errors='replace') as f:
        return ''.join(f.readlines()[-n:])


def main():
    if not os.path.exists(CONFIG):
        sys.exit(f'series-build: error: no {CONFIG}: its configuration comes from the '
                 'module build (make run MODE=modules first)')
    path = subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'path'],
                          capture_output=True, text=True).stdout.strip()
    tree = series.Tree(path, None)
    entries = series.read_series()
    os.makedirs(BUILD, exist_ok=True)
    tip_config = os.path.join(BUILD, 'tip.config')
    shutil.copy(CONFIG, tip_config)
    passed = failed = 0
    t_start = time.monotonic()
    with open(os.path.join(WORKDIR, '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                commits = tree.chain([series.number(p) for p, _ in entries], tmp)
            # The tree is about to leave the state tree.sh recorded.
            with_record = os.path.join(path, '.git', 'fs-kunit-synced')
            if os.path.exists(with_record):
                os.unlink(with_record)
            steps = [('pristine', tree.git('rev-parse', 'pristine').strip())]
            steps += [(p, c) for (p, _), c in zip(entries, commits)]
            for k, (name, commit) in enumerate(steps):
                log = os.path.join(BUILD, 'log-%02d-%s.txt' % (k, name[:4]))
                with contextlib.suppress(OSError):
                    os.unlink(log)
                t = time.monotonic()
                tree.git('checkout', '-q', '-f', '--detach', commit)
                shutil.copy(tip_config, os.path.join(BUILD, '.config'))
                rc = make(path, log, 'olddefconfig') or make(path, log)
                took = time.monotonic() - t
                if k == 0:
                    if rc:
                        say(f'the pristine tree ({series.tree_version()}) does not build: '
                            f'see {log}\n' + tail(log))
                        return 2
                    say(f'pristine {series.tree_version()}: built in {took:.0f} s')
                    continue
                if rc:
                    failed += 1
                    say(f'patch {k} of {len(entries)}: {name} does NOT build on top of the '
                        f'patches before it ({series.tree_version()}); log {log}:\n' + tail(log))
                else:
                    passed += 1
                    say(f'patch {k} of {len(entries)}: {name}: built in {took:.0f} s')
        finally:
            r = subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'sync'],
                               capture_output=True, text=True,
                               env=dict(os.environ, FS_KUNIT_LOCKED='1'))  # held here
            if r.returncode:
                say('could not put the tree back (tree.sh sync):\n' + r.stderr)
    say(f'{len(entries)} patches built one by one in {time.monotonic() - t_start:.0f} s')
    print(f'{passed} passed, {failed} failed, 0 skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

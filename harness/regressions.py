#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make regressions: prove that every test catches the bug it guards.

Each patch under regressions/ brings one bug back.  Its header says which
suites to run and which cases must fail:

    Suites: quota_dquot                       (one kunit filter glob)
    Expect-fail: quota_dquot.dqget_returns_acquire_error.*
    May-fail: ...    cases whose result is a mere consequence of the bug
                     (e.g. a rerun after an operation wrongly succeeded);
                     neither required to fail nor counted as noise

For each patch this applies it with run.py's EXTRA_PATCHES (an incremental
rebuild), runs only those suites, and judges:
  caught          every named case failed, every other case passed
  caught (crash)  the named cases failed or never reported and something
                  crashed or hung: caught, but said so
  MISSED          a named case passed: the test did not notice the bug
  NOISY           the named cases failed, but so did others: the header or
                  the tests are wrong
  ERROR           the patch did not apply or build, or a glob named nothing
The table goes to results/regressions.md; the exit is 1 unless all caught.

PATCHES='regressions/quota/*' limits the run to some patches.
"""

import fnmatch
import glob
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.environ.get('RESULTS') or os.path.join(TOP, 'results')


def header(path):
    suites, expect, may = [], [], []
    with open(path) as f:
        for line in f:
            if line.startswith('diff --git'):
                break
            key, _, value = line.partition(':')
            if key == 'Suites':
                suites += value.split()
            elif key == 'Expect-fail':
                expect.append(value.strip())
            elif key == 'May-fail':
                may.append(value.strip())
    return suites, expect, may


def judge(cases, expect, may=()):
    """(verdict, detail, how many named cases) for one patch's cases against
    its Expect-fail globs."""
    unmatched = [g for g in expect if not any(fnmatch.fnmatchcase(c['name'], g) for c in cases)]
    if unmatched:
        return 'ERROR', 'Expect-fail names no case: ' + ', '.join(unmatched), 0
    named = [c for c in cases if any(fnmatch.fnmatchcase(c['name'], g) for g in expect)]
    others = [c for c in cases if c not in named
              and not any(fnmatch.fnmatchcase(c['name'], g) for g in may)]
    bad = (ktap.FAIL, ktap.ERROR)
    passed = [c['name'] for c in named if c['status'] not in bad]
    crashed = [c['name'] for c in cases if c['status'] == ktap.ERROR]
    noisy = [c['name'] for c in others if c['status'] in bad]
    caught = ', '.join(c['name'] for c in named if c['status'] in bad)
    if passed:
        return 'MISSED', 'still passing: ' + ', '.join(passed), len(named)
    if crashed:
        return ('caught (crash)', caught + '; crashed or never reported: ' + ', '.join(crashed),
                len(named))
    if noisy:
        return 'NOISY', 'also failed: ' + ', '.join(noisy), len(named)
    return 'caught', caught, len(named)


def run_one(patch, suites, expect, may):
    name = os.path.relpath(patch, os.path.join(TOP, 'regressions'))[:-len('.patch')]
    out = os.path.join(RESULTS, 'regressions', name)
    os.makedirs(out, exist_ok=True)
    # kunit.filter_glob takes one glob: with several suites, run them all.
    env = dict(os.environ, EXTRA_PATCHES=patch, RESULTS=out, KEEP_EXTRA='1',
               FILTER=suites[0] if len(suites) == 1 else '')
    t = time.monotonic()
    with open(os.path.join(out, 'run.log'), 'w') as log:
        proc = subprocess.Popen([sys.executable, os.path.join(TOP, 'harness', 'run.py')],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait()
        except BaseException:
            proc.terminate()  # run.py stops its kunit.py and restores the tree
            proc.wait()
            raise
    seconds = time.monotonic() - t
    if rc == 2:
        with open(os.path.join(out, 'run.log')) as f:
            why = [line.strip() for line in f if 'error:' in line][-1:]
        return 'ERROR', (why[0] if why else 'run failed') + ' (log: %s/run.log)' % out, seconds, 0
    with open(os.path.join(out, 'cases.json')) as f:
        cases = json.load(f)
    verdict, detail, named = judge(cases, expect, may)
    return verdict, detail, seconds, named


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    pattern = os.environ.get('PATCHES') or os.path.join('regressions', '**', '*.patch')
    patches = sorted(glob.glob(os.path.join(TOP, pattern), recursive=True))
    if not patches:
        print('regressions: error: no patch matches %s' % pattern, file=sys.stderr)
        return 2
    rows, failed = [], 0
    try:
        for patch in patches:
            rel = os.path.relpath(patch, TOP)
            suites, expect, may = header(patch)
            if not expect:
                verdict, detail, seconds, named = 'ERROR', 'no Expect-fail: line in the header', 0.0, 0
            else:
                print('regressions: %s ...' % rel, flush=True)
                verdict, detail, seconds, named = run_one(patch, suites, expect, may)
            failed += not verdict.startswith('caught')
            rows.append((rel, verdict, seconds, detail))
            shown = '%d named cases failed' % named if verdict.startswith('caught') else detail
            print('regressions: %s: %s in %.0f s: %s' % (rel, verdict, seconds, shown), flush=True)
    finally:
        # Leave the tree as make run expects it: series only.
        subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'sync'],
                       stdout=subprocess.DEVNULL)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, 'regressions.md'), 'w') as f:
        f.write('| patch | verdict | seconds | caught by |\n|---|---|---|---|\n')
        for rel, verdict, seconds, detail in rows:
            f.write('| %s | %s | %.0f | %s |\n' % (rel, verdict, seconds, detail))
    times = sorted(r[2] for r in rows if r[2])
    if times:
        print('regressions: %d patches, median %.0f s per patch'
              % (len(rows), times[len(times) // 2]))
    print('%d passed, %d failed, 0 skipped' % (len(rows) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

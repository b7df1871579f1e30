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
rebuild), runs only those suites, and judges (patches confined to one
filesystem's directory, with disjoint suites, share a kernel: see plan()):
  caught          every named case failed, every other case passed
  caught (crash)  the named cases failed or never reported and something
                  crashed or hung: caught, but said so
  MISSED          a named case passed: the test did not notice the bug
  NOISY           the named cases failed, but so did others: the header or
                  the tests are wrong
  ERROR           the patch did not apply or build, or a glob named nothing
A patch to what no kernel runs (documentation) names a checker instead:
    Check: harness/doccheck.py   (run on a patched copy; caught if it fails)
The table goes to results/regressions.md; the exit is 1 unless all caught.

PATCHES='regressions/quota/*' limits the run to some patches.
"""

import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.environ.get('RESULTS') or os.path.join(TOP, 'results')


def header(path):
    """(suites, expect, may, check) of a patch's header."""
    suites, expect, may, check = [], [], [], None
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
            elif key == 'Check':
                check = value.strip()
    return suites, expect, may, check


def names(case, glob_):
    """Whether an Expect-fail glob names a case.  A parameterized case that
    crashed printed no result for its parameters: a glob for one of them
    names the case itself then (suite.case, status ERROR)."""
    if fnmatch.fnmatchcase(case['name'], glob_):
        return True
    parent = '.'.join(glob_.split('.')[:2])
    return case['status'] == ktap.ERROR and parent != glob_ \
        and fnmatch.fnmatchcase(case['name'], parent)


def judge(cases, expect, may=()):
    """(verdict, detail, how many named cases) for one patch's cases against
    its Expect-fail globs."""
    unmatched = [g for g in expect if not any(names(c, g) for c in cases)]
    if unmatched:
        return 'ERROR', 'Expect-fail names no case: ' + ', '.join(unmatched), 0
    named = [c for c in cases if any(names(c, g) for g in expect)]
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


def run_check(patch, check):
    """(verdict, detail, named, seconds) of a patch to something no kernel runs (documentation): apply it to a
    copy of the files it touches and run the checker on that copy, against
    the tree as the series has it.  Caught when the checker fails."""
    tree = os.path.join(os.environ.get('WORKDIR', '/var/tmp/fs-kunit'), 'linux-source-6.12')
    t = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        files = subprocess.run(['git', 'apply', '--numstat', patch], capture_output=True,
                               text=True).stdout.split()[2::3]
        for rel in files:
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            shutil.copy(os.path.join(tree, rel), os.path.join(tmp, rel))
        applied = subprocess.run(['git', 'apply', patch], cwd=tmp, capture_output=True,
                                 text=True)
        if not files or applied.returncode:
            return 'ERROR', 'does not apply: ' + applied.stderr.strip(), 0, 0.0
        proc = subprocess.run([sys.executable, os.path.join(TOP, check), tree]
                              + [os.path.join(tmp, rel) for rel in files],
                              capture_output=True, text=True)
    seconds = time.monotonic() - t
    if proc.returncode == 1:
        return 'caught', proc.stdout.strip().replace('\n', '; '), 1, seconds
    return 'MISSED', '%s passed with the patch applied' % check, 0, seconds


def run_kernel(patches, suites, out):
    """Apply @patches for one run of the suites matching the glob @suites ('' for
    every suite).  Returns (cases, seconds), or (None, seconds, why)."""
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, EXTRA_PATCHES=' '.join(patches), RESULTS=out, KEEP_EXTRA='1',
               FILTER=suites)
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
        return None, seconds, (why[0] if why else 'run failed') + ' (log: %s/run.log)' % out
    with open(os.path.join(out, 'cases.json')) as f:
        return json.load(f), seconds, ''


def out_dir(patch):
    return os.path.join(RESULTS, 'regressions',
                        os.path.relpath(patch, os.path.join(TOP, 'regressions'))[:-len('.patch')])


def run_one(patch, info):
    cases, seconds, why = run_kernel([patch], info['glob'], out_dir(patch))
    if cases is None:
        return 'ERROR', why, 0, seconds
    return judge(cases, info['expect'], info['may']) + (seconds,)


# A patch that touches only its own filesystem's directory cannot change what
# another filesystem's suite sees: such patches, with disjoint suites, share one
# kernel and one boot (the rebuild and boot are most of a patch's time).
# Everything else (fs/quota, mm, block, fs/*.c) runs alone.
PRIVATE = re.compile(r'^fs/(ext2|ext4|jfs|reiserfs|ocfs2|udf)/')


def plan(items):
    """Batches of patches: items are (patch, files it touches, suites it runs)."""
    batches = []
    for patch, files, suites in items:
        private = bool(files) and all(PRIVATE.match(f) for f in files)
        for b in batches:
            if private and b['private'] and not b['suites'] & suites \
                    and not b['files'] & set(files):
                break
        else:
            b = {'private': private, 'patches': [], 'files': set(), 'suites': set()}
            batches.append(b)
        b['patches'].append(patch)
        b['files'] |= set(files)
        b['suites'] |= suites
    return [b['patches'] for b in batches]


def cover(suites):
    """One kunit filter glob that matches every suite in @suites (and maybe
    more): kunit.filter_glob takes a single glob."""
    names = sorted(suites)
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    if len(names) == 1:
        return names[0]
    return prefix + '*' + suffix if prefix or suffix else ''


def run_batch(k, batch, infos):
    """{patch: (verdict, detail, named, seconds)}; a crash or an error in a
    batch is not pinned on a patch: each then runs alone."""
    if len(batch) == 1:
        verdict, detail, named, seconds = run_one(batch[0], infos[batch[0]])
        return {batch[0]: (verdict, detail, named, seconds)}
    print('regressions: batch %d: %s' % (k, ' '.join(os.path.relpath(p, TOP) for p in batch)),
          flush=True)
    cases, seconds, why = run_kernel(batch, cover(set().union(*(infos[p]['suites']
                                                               for p in batch))),
                                     os.path.join(RESULTS, 'regressions', 'batch-%d' % k))
    if cases is None or any(c['status'] == ktap.ERROR for c in cases):
        print('regressions: batch %d %s: each patch alone' % (k, why or 'crashed'), flush=True)
        return {p: run_one(p, infos[p]) for p in batch}
    results = {}
    for p in batch:
        own = [c for c in cases if c['name'].split('.')[0] in infos[p]['suites']]
        results[p] = judge(own, infos[p]['expect'], infos[p]['may']) + (seconds / len(batch),)
    return results


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    pattern = os.environ.get('PATCHES') or os.path.join('regressions', '**', '*.patch')
    patches = sorted(glob.glob(os.path.join(TOP, pattern), recursive=True))
    if not patches:
        print('regressions: error: no patch matches %s' % pattern, file=sys.stderr)
        return 2
    rows, failed = [], 0
    # Which cases the series enables, listed once for every patch.
    os.makedirs(os.path.join(RESULTS, 'regressions'), exist_ok=True)
    base = dict(os.environ, EXTRA_PATCHES='', RESULTS=os.path.join(RESULTS, 'regressions'),
                LIST_ONLY='1')
    if subprocess.run([sys.executable, os.path.join(TOP, 'harness', 'run.py')],
                      env=base).returncode:
        print('regressions: error: the series itself did not build or list its cases',
              file=sys.stderr)
        return 2
    os.environ['ENABLED_CASES'] = os.path.join(RESULTS, 'regressions', 'enabled-cases.json')
    with open(os.environ['ENABLED_CASES']) as f:
        suite_names = {c.split('.')[0] for c in json.load(f)['cases']}
    infos, items, done = {}, [], {}
    for patch in patches:
        suites, expect, may, check = header(patch)
        if check:
            done[patch] = run_check(patch, check)
            print('regressions: %s: %s: %s' % (os.path.relpath(patch, TOP), done[patch][0],
                                                done[patch][1]), flush=True)
        elif not expect:
            done[patch] = ('ERROR', 'no Expect-fail: line in the header', 0, 0.0)
        else:
            glob_ = suites[0] if len(suites) == 1 else ''
            own = {n for n in suite_names if fnmatch.fnmatchcase(n, (glob_ or '*').split('.')[0])}
            infos[patch] = {'glob': glob_, 'suites': own, 'expect': expect, 'may': may}
            files = subprocess.run(['git', 'apply', '--numstat', patch], capture_output=True,
                                   text=True).stdout.split()[2::3]
            items.append((patch, files, own))
    try:
        for k, batch in enumerate(plan(items), 1):
            if len(batch) == 1:
                print('regressions: %s ...' % os.path.relpath(batch[0], TOP), flush=True)
            done.update(run_batch(k, batch, infos))
            for p in batch:
                verdict, detail, named, seconds = done[p]
                shown = '%d named cases failed' % named if verdict.startswith('caught') \
                    else detail
                print('regressions: %s: %s in %.0f s: %s'
                      % (os.path.relpath(p, TOP), verdict, seconds, shown), flush=True)
        for patch in patches:
            verdict, detail, named, seconds = done[patch]
            failed += not verdict.startswith('caught')
            rows.append((os.path.relpath(patch, TOP), verdict, seconds, detail))
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

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make regressions: prove that every test catches the bug it guards.

Each patch under regressions/ brings one bug back.  Its header says which
suites to run and which cases must fail:

    Suites: quota_dquot ext4_dquot            (suite names or globs)
    Expect-fail: quota_dquot.dqget_returns_acquire_error.*
    May-fail: ...    cases whose result is a mere consequence of the bug
                     (e.g. a rerun after an operation wrongly succeeded);
                     neither required to fail nor counted as noise

    Profile: debug   the profile whose kernel sees the bug (kunitconfig.debug:
                     KASAN, kmemleak, lockdep...); default: the plain one
    Expect-report: BUG: KASAN     the named cases must fail with a kernel
                     report that contains this text, not just fail
    Mode: modules    the tests as modules (make run MODE=modules): for what
                     only loading and unloading them shows

The runner reads only Suites:, Expect-fail:, May-fail:, Profile:, Mode:,
Expect-report: and Check:; the other header lines (Regression:, Seed:,
Breaks:, the text) are for people.  One run proves the patches of one
profile and mode (PROFILE=debug make regressions for the debug ones,
MODE=modules for the modules ones; make check runs all three).
An Expect-fail glob names cases, never a whole suite (suite.* is refused).

First the baseline: the whole suite on the series alone, in the same build
configuration (results/cases.json of a make run of the same kernel is
reused).  Then each patch is applied with run.py's EXTRA_PATCHES (an
incremental rebuild), its suites run, and it is judged (patches confined to
one filesystem's directory, with disjoint suites, share a kernel: plan()):
  caught          every named case passed in the baseline and failed here;
                  every other case passed
  caught (crash)  the same, and the kernel stopped (oops, panic, hang) while
                  a named case was running
  MISSED          a named case passed: the test did not notice the bug
  NOISY           the named cases failed, but so did others: the header or
                  the tests are wrong
  ERROR           the patch did not apply or build, a glob named nothing or
                  a whole suite, a named case failed in the baseline too, or
                  the kernel stopped in a case the header does not name
A patch to what no kernel runs (documentation) names a checker instead:
    Check: harness/doccheck.py   (run on a patched copy; caught if it fails)

Every leaf case of the baseline must be named by some patch's Expect-fail:
the run fails when one is not (a case never shown to fail has not earned its
place).  results/regressions.md has each patch's named cases with their
baseline and patched results; the exit is 1 unless all is proven.

PATCHES='regressions/quota/0[1-3]* regressions/udf/*' limits the run to
some patches (unnamed cases, by every header, are then counted, not failed).

PROVE='quota_dquot.dquot_get_next_*' (make prove FILTER=...) is the loop of
a contributor who added cases: it runs every patch whose suites the glob
touches (new ones included), fails if one of the cases the glob matches is
named by no patch, and for a patch that turned NOISY says which cases it
now breaks and the Expect-fail: line to add when that is intended.
"""

import contextlib
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
PROFILE = os.environ.get('PROFILE') or 'default'
MODE = os.environ.get('MODE') or 'builtin'
# where run.py writes a make run of this profile and mode
RESULTS = os.environ.get('RESULTS') or os.path.join(
    TOP, 'results', *([] if PROFILE == 'default' else [PROFILE]),
    *([] if MODE == 'builtin' else [MODE]))


def _fields(path):
    """(key, value) of each header line of a patch (before its first diff)."""
    with open(path) as f:
        for line in f:
            if line.startswith('diff --git'):
                break
            key, _, value = line.partition(':')
            yield key, value.strip()


def profile(path):
    """The Profile: of a patch's header ('default' without one)."""
    return next((v for k, v in _fields(path) if k == 'Profile'), 'default')


def mode(path):
    """The Mode: of a patch's header ('builtin' without one)."""
    return next((v for k, v in _fields(path) if k == 'Mode'), 'builtin')


def configuration(path):
    """How to run what a patch's header asks for, as make run settings."""
    return ' '.join(['PROFILE=' + profile(path)] +
                    (['MODE=' + mode(path)] if mode(path) != 'builtin' else []))


def expect_report(path):
    return next((v for k, v in _fields(path) if k == 'Expect-report'), '')


def header(path):
    """(suites, expect, may, check) of a patch's header."""
    suites, expect, may, check = [], [], [], None
    for key, value in _fields(path):
        if key == 'Suites':
            suites += value.split()
        elif key == 'Expect-fail':
            expect.append(value)
        elif key == 'May-fail':
            may.append(value)
        elif key == 'Check':
            check = value
    return suites, expect, may, check


def named_by(name, globs):
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def whole_suite(glob_):
    """An Expect-fail glob that names every case of a suite proves nothing
    about any one of them: a patch that breaks the suite's init passes it."""
    suite, _, case = glob_.partition('.')
    return case.strip('*') == ''


def judge(baseline, cases, expect, may=(), report=''):
    """(verdict, detail, named) for one patch.

    @baseline: [(leaf name, status)] of the series without the patch, in the
    order the kernel runs them, over the suites this patch's run covers;
    @cases: what the run with the patch reported (run.py's cases.json).
    A named case must pass in the baseline and fail with the patch.  When
    the kernel stopped (oops, panic, hang), the case it stopped in is the
    first baseline case with no result; the crash catches the bug only if
    that case is named.  With @report, a named case that failed without a
    kernel report containing it did not catch the bug (the bug is one only
    a checker sees).  @named is [(name, baseline status, status)]."""
    for g in expect:
        if whole_suite(g):
            return 'ERROR', 'Expect-fail names a whole suite: ' + g, []
    unmatched = [g for g in expect if not any(fnmatch.fnmatchcase(n, g) for n, _ in baseline)]
    if unmatched:
        return 'ERROR', 'Expect-fail names no case: ' + ', '.join(unmatched), []
    got = {c['name']: c['status'] for c in cases}
    stopped_in = next((n for n, _ in baseline if got.get(n, ktap.ERROR) == ktap.ERROR), None)
    if stopped_in is not None and not any(c['status'] == ktap.ERROR for c in cases):
        stopped_in = None  # not a crash: the case is just not in this run
    named = [(n, st, got.get(n, ktap.ERROR)) for n, st in baseline
             if any(fnmatch.fnmatchcase(n, g) for g in expect)]
    if any(st != ktap.PASS for _, st, _ in named):
        return ('ERROR', 'fails without the patch too: '
                + ', '.join(n for n, st, _ in named if st != ktap.PASS), named)
    bad = (ktap.FAIL, ktap.ERROR)
    passed = [n for n, _, now in named if now not in bad]
    if passed:
        return 'MISSED', 'still passing: ' + ', '.join(passed), named
    if report:
        said = {c['name']: c.get('reports', []) for c in cases}
        unsaid = [n for n, _, _ in named if not any(report in r for r in said.get(n, []))]
        if unsaid:
            return 'MISSED', 'failed without a report of "%s": %s' % (report, ', '.join(unsaid)), \
                named
    if stopped_in is not None and stopped_in not in {n for n, _, _ in named}:
        return 'ERROR', 'the kernel stopped in %s, which the header does not name' \
            % stopped_in, named
    # After the stop nothing ran: what never reported there is not noise.
    ran = baseline if stopped_in is None else \
        baseline[:[n for n, _ in baseline].index(stopped_in)]
    noisy = [n for n, _ in ran if got.get(n) in bad
             and not any(fnmatch.fnmatchcase(n, g) for g in expect)
             and not any(fnmatch.fnmatchcase(n, g) for g in may)]
    if noisy:
        return 'NOISY', 'also failed: ' + '; '.join(noisy), named
    if stopped_in is not None:
        return 'caught (crash)', 'the kernel stopped in ' + stopped_in, named
    return 'caught', '', named


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


def run_one(patch, info, baseline):
    cases, seconds, why = run_kernel([patch], info['glob'], out_dir(patch))
    if cases is None:
        return 'ERROR', why, [], seconds
    return judge(own_baseline(baseline, info['suites']), cases, info['expect'],
                 info['may'], info['report']) + (seconds,)


def own_baseline(baseline, suites):
    return [(n, st) for n, st in baseline if n.split('.')[0] in suites]


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
    # MODE=modules: the kernel knows a suite's second load by its own name,
    # and the init checks every unload whatever the filter.
    names = sorted({n.split('@')[0] for n in suites if n != 'modules'})
    if not names:
        return ''
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    if len(names) == 1:
        return names[0]
    return prefix + '*' + suffix if prefix or suffix else ''


def run_batch(k, batch, infos, baseline):
    """{patch: (verdict, detail, named, seconds)}; a crash or an error in a
    batch is not pinned on a patch: each then runs alone."""
    if len(batch) == 1:
        return {batch[0]: run_one(batch[0], infos[batch[0]], baseline)}
    print('regressions: batch %d: %s' % (k, ' '.join(os.path.relpath(p, TOP) for p in batch)),
          flush=True)
    cases, seconds, why = run_kernel(batch, cover(set().union(*(infos[p]['suites']
                                                               for p in batch))),
                                     os.path.join(RESULTS, 'regressions', 'batch-%d' % k))
    if cases is None or any(c['status'] == ktap.ERROR for c in cases):
        print('regressions: batch %d %s: each patch alone' % (k, why or 'crashed'), flush=True)
        return {p: run_one(p, infos[p], baseline) for p in batch}
    results = {}
    for p in batch:
        own = [c for c in cases if c['name'].split('.')[0] in infos[p]['suites']]
        results[p] = judge(own_baseline(baseline, infos[p]['suites']), own, infos[p]['expect'],
                           infos[p]['may'], infos[p]['report']) + (seconds / len(batch),)
    return results


def run_py(**env):
    return subprocess.run([sys.executable, os.path.join(TOP, 'harness', 'run.py')],
                          env=dict(os.environ, **env)).returncode


# A suite's name where its file declares it: .name = "x" in a struct kunit_suite.
SUITE = re.compile(r'struct kunit_suite \w+ = \{[^}]*?\.name\s*=\s*"(\w+)"')


def suite_files():
    found = {}
    for path in sorted(glob.glob(os.path.join(TOP, 'kunit-tests', '**', '*.c'), recursive=True)):
        with open(path) as f:
            text = f.read()
        if 'kunit_test_suite' not in text:
            continue
        for name in SUITE.findall(text):
            found[name] = os.path.relpath(path, os.path.join(TOP, 'kunit-tests'))
    return found


def get_baseline(stamp):
    """[(leaf, status)] of the whole suite on the series alone, in run order.
    A make run of the same kernel (same stamp, no filter, no extra patch)
    already is one: make check runs the suite just before the proof."""
    with contextlib.suppress(OSError, ValueError):
        with open(os.path.join(RESULTS, 'tested.json')) as f:
            tested = json.load(f)
        if tested.get('stamp') == stamp and not tested['filter'] \
                and not tested['extra_patches']:
            with open(os.path.join(RESULTS, 'cases.json')) as f:
                cases = json.load(f)
            print('regressions: baseline: the suite run of this kernel in %s/'
                  % os.path.relpath(RESULTS, TOP), flush=True)
            return [(c['name'], c['status']) for c in cases]
    out = os.path.join(RESULTS, 'regressions', 'baseline')
    print('regressions: baseline: the whole suite on the series alone ...', flush=True)
    os.makedirs(out, exist_ok=True)
    run_py(EXTRA_PATCHES='', FILTER='', RESULTS=out)
    with contextlib.suppress(OSError, ValueError):
        with open(os.path.join(out, 'cases.json')) as f:
            return [(c['name'], c['status']) for c in json.load(f)]
    return None


def patch_list():
    """PATCHES: globs separated by white space, like EXTRA_PATCHES."""
    patterns = os.environ.get('PATCHES', '').split() or [os.path.join('regressions', '**',
                                                                     '*.patch')]
    patches, empty = set(), []
    for pattern in patterns:
        found = glob.glob(os.path.join(TOP, pattern), recursive=True) \
            + glob.glob(pattern, recursive=True)
        found = [os.path.abspath(p) for p in found if p.endswith('.patch')]
        if not found:
            empty.append(pattern)
        patches.update(found)
    return sorted(patches), empty


def write_report(rows, counted, unnamed, prove=''):
    with open(os.path.join(RESULTS, 'regressions.md'), 'w') as f:
        f.write('# Regression proof\n\n| patch | verdict | seconds | detail |\n'
                '|---|---|---|---|\n')
        for rel, verdict, seconds, detail, _ in rows:
            f.write('| %s | %s | %.0f | %s |\n' % (rel, verdict, seconds, detail))
        f.write('\n%d leaf cases in the baseline%s, %d named by no patch\n'
                % (len(counted), ' that FILTER=%s matches' % prove if prove else '', len(unnamed)))
        for name in unnamed:
            f.write('- unnamed: %s\n' % name)
        f.write('\n## Named cases: baseline -> with the patch\n')
        for rel, verdict, _, _, named in rows:
            f.write('\n### %s: %s\n\n' % (rel, verdict))
            for name, before, after in named:
                f.write('- %s: %s -> %s\n' % (name, before, after))


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    patches, empty = patch_list()
    if empty:
        print('regressions: error: no patch matches %s' % ' '.join(empty), file=sys.stderr)
        return 2
    here = 'PROFILE=' + PROFILE + ('' if MODE == 'builtin' else ' MODE=' + MODE)
    elsewhere = {}
    for p in patches:
        if configuration(p) != here:
            elsewhere.setdefault(configuration(p), []).append(p)
    patches = [p for p in patches if configuration(p) == here]
    for other, some in sorted(elsewhere.items()):
        print('regressions: %d patches are for %s (%s make regressions)%s'
              % (len(some), other, other, ': ' + ' '.join(os.path.relpath(p, TOP) for p in some)
                 if len(some) <= 5 else ''), flush=True)
    if not patches:
        print('regressions: error: none of these patches is for %s' % here, file=sys.stderr)
        return 2
    every = 'PATCHES' not in os.environ or not os.environ['PATCHES'].strip()
    prove = os.environ.pop('PROVE', '')
    os.environ.pop('FILTER', None)  # each run says its own
    rows, failed = [], 0
    # Which cases the series enables, listed once for every patch.
    os.makedirs(os.path.join(RESULTS, 'regressions'), exist_ok=True)
    if run_py(EXTRA_PATCHES='', RESULTS=os.path.join(RESULTS, 'regressions'), LIST_ONLY='1'):
        print('regressions: error: the series itself did not build or list its cases',
              file=sys.stderr)
        return 2
    os.environ['ENABLED_CASES'] = os.path.join(RESULTS, 'regressions', 'enabled-cases.json')
    with open(os.environ['ENABLED_CASES']) as f:
        enabled = json.load(f)
    suite_names = {c.split('.')[0] for c in enabled['cases']}
    scope = None
    if prove:
        scope = {c.split('.')[0] for c in enabled['cases'] if ktap.glob_match(prove, c)}
        if not scope:
            print('regressions: error: FILTER=%s matches none of the %d enabled cases'
                  % (prove, len(enabled['cases'])), file=sys.stderr)
            return 2
    baseline = get_baseline(enabled['stamp'])
    if not baseline:
        print('regressions: error: the baseline run of the series reported nothing',
              file=sys.stderr)
        return 2
    failing = [n for n, st in baseline if st != ktap.PASS]
    if failing:
        print('regressions: the series alone fails %d cases (no patch can be caught by them): '
              '%s' % (len(failing), ', '.join(failing)), flush=True)
    infos, items, done = {}, [], {}
    # Whether a case is named is a matter of every header, whichever run.
    globs = [g for p in glob.glob(os.path.join(TOP, 'regressions', '**', '*.patch'),
                                  recursive=True) for g in header(p)[1]]
    for patch in patches:
        suites, expect, may, check = header(patch)
        if check:
            if scope is not None:
                continue  # no kernel case can name a documentation check
            verdict, detail, named, seconds = run_check(patch, check)
            done[patch] = verdict, detail, [], seconds
            print('regressions: %s: %s: %s' % (os.path.relpath(patch, TOP), verdict, detail),
                  flush=True)
        elif not expect or not suites:
            done[patch] = ('ERROR', 'no Suites: or Expect-fail: line in the header', [], 0.0)
        else:
            own = {n for n in suite_names if any(fnmatch.fnmatchcase(n, g.split('.')[0])
                                                 for g in suites)}
            if scope is not None and not own & scope:
                continue
            infos[patch] = {'glob': cover(own), 'suites': own, 'expect': expect, 'may': may,
                            'report': expect_report(patch)}
            files = subprocess.run(['git', 'apply', '--numstat', patch], capture_output=True,
                                   text=True).stdout.split()[2::3]
            items.append((patch, files, own))
    if scope is not None:
        patches = [p for p in patches if p in done or p in infos]
        print('regressions: FILTER=%s: %d patches run these suites: %s'
              % (prove, len(patches), ', '.join(sorted(scope))), flush=True)
    # Our suites only: upstream suites enabled beside them (ext4's) are run and
    # must pass, but no patch here is meant to prove them.
    ours = suite_files()
    unnamed = [n for n, _ in baseline if n.split('.')[0] in ours and not named_by(n, globs)
               and (not prove or ktap.glob_match(prove, '.'.join(n.split('.', 2)[:2])))]
    batches = plan(items)
    t0, k = time.monotonic(), 0
    try:
        for b, batch in enumerate(batches, 1):
            if len(batch) == 1:
                print('regressions: [%d/%d] %s ...' % (k + 1, len(items),
                                                      os.path.relpath(batch[0], TOP)),
                      flush=True)
            done.update(run_batch(b, batch, infos, baseline))
            # per patch over everything run so far, this whole batch included
            per_patch = (time.monotonic() - t0) / (k + len(batch))
            for p in batch:
                k += 1
                verdict, detail, named, seconds = done[p]
                caught = sum(done[q][0].startswith('caught') for q in done if q in infos)
                shown = '%d named cases failed' % len(named) if verdict.startswith('caught') \
                    else detail
                print('regressions: [%d/%d] %s: %s in %.0f s: %s (caught so far %d; '
                      '%.0f s per patch)' % (k, len(items), os.path.relpath(p, TOP), verdict,
                                             seconds, shown, caught,
                                             per_patch), flush=True)
                if verdict == 'NOISY':
                    print('regressions: if the bug is meant to fail them, add to its header:\n'
                          + '\n'.join('  Expect-fail: ' + n
                                       for n in detail[len('also failed: '):].split('; ')),
                          flush=True)
        for patch in patches:
            verdict, detail, named, seconds = done[patch]
            failed += not verdict.startswith('caught')
            rows.append((os.path.relpath(patch, TOP), verdict, seconds, detail, named))
    finally:
        # Leave the tree as make run expects it: series only.
        subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'sync'],
                       stdout=subprocess.DEVNULL)
    os.makedirs(RESULTS, exist_ok=True)
    counted = [n for n, _ in baseline if n.split('.')[0] in ours and (not prove or ktap.glob_match(
        prove, '.'.join(n.split('.', 2)[:2])))]
    write_report(rows, counted, unnamed, prove)
    times = sorted(r[2] for r in rows if r[2])
    if times:
        print('regressions: %d patches, median %.0f s per patch'
              % (len(rows), times[len(times) // 2]))
    print('regressions: %d of %d leaf cases%s named by no patch%s'
          % (len(unnamed), len(counted), ' FILTER matches' if prove else '',
             (': ' + ', '.join(unnamed[:20])
                                           + (' ...' if len(unnamed) > 20 else ''))
             if unnamed else ''))
    if unnamed and (every or prove):
        print('regressions: every case must be shown to fail by a patch (see '
              'results/regressions.md)')
        failed += 1
    passed = sum(r[1].startswith('caught') for r in rows)
    print('%d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0
"""make check: every step of STEPS, in one Workspace, each a row: a name, what
it runs, and (passed, failed, skipped) from what it returns.  Each step's
output is also kept in results/check-<step>.log; the last line printed is
the sum, which .ci/run repeats."""

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import traceback
import unittest

from . import catalogue, counts, doccheck, lava, lavaserver, mutants, proof, results, series, timing
from .workspace import RunError, report


class Tee:
    """sys.stdout that is also written to a file."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self):
        for s in self.streams:
            s.flush()

    def isatty(self):
        return False


def suite(ws, cfg):
    run = ws.run(cfg)
    report(run)
    print(run.summary)
    c = run.counts
    return c['PASS'], c['FAIL'] + c['ERROR'], c['SKIP']


# The suite booted as a LAVA job: the quota suite's, as issue 29 asks.
LAVA_FILTER = 'quota_dquot*'


def qemu_verdicts(cfg, glob):
    """{case: status} of the suite step's QEMU boot, for the cases @glob takes."""
    with open(os.path.join(cfg.results, 'cases.json')) as f:
        got = {c['name']: c['status'] for c in json.load(f)
               if catalogue.glob_match(glob, c['name'])}
    if not got:
        raise RunError('the suite step left no %s results to compare with' % glob)
    return got


def compared(step, by_qemu, by_lava):
    """(passed, failed): a case passes when LAVA's verdict is QEMU's."""
    differ = verdicts_differ(by_qemu, by_lava)
    for line in differ:
        print('%s: %s' % (step, line))
    return len(set(by_qemu) | set(by_lava)) - len(differ), len(differ)


def lava_runner(ws, cfg):
    """RUNNER=lava: the quota suite booted by lava-run must give, case by
    case, the verdicts the suite step's QEMU boot gave (its results)."""
    by_qemu = qemu_verdicts(cfg, LAVA_FILTER)
    run = ws.run(cfg.with_(runner='lava', filter=LAVA_FILTER,
                           results_dir=os.path.join(cfg.top, 'results', 'lava-quota')))
    report(run)
    passed, failed = compared('lava', by_qemu, {c['name']: c['status'] for c in run.cases})
    print('lava: %d cases, %d verdicts differ from QEMU\'s' % (len(run.cases), failed))
    return passed, failed, 0


# Two jobs at once on a lava-server with two QEMU devices: the quota suite's
# and the UDF suite's.
SERVER_FILTERS = (LAVA_FILTER, 'udf_super*')


def lava_server(ws, cfg):
    """make lava-server's server, started with two devices, runs two jobs
    (SERVER_FILTERS) and is stopped; each job's console, judged by our
    code, must give the suite step's QEMU verdicts."""
    by_qemu = {glob: qemu_verdicts(cfg, glob) for glob in SERVER_FILTERS}
    tree = ws.tree.path
    passed = failed = 0
    with lavaserver.Server(os.path.join(cfg.workdir, 'lava-server'), devices=2) as server:
        ids = {server.submit(lava.job(cfg, tree, glob, timing.timeout(cfg, []), glob)): glob
               for glob in SERVER_FILTERS}
        for i, job, log in server.wait(ids, 900):
            suites = results.parse(lava.console(log), tree)
            by_lava = {p: t.status for p, t in results.leaves(suites or [])}
            print('lava-server: job %d (%s) on %s: %d cases, %s, %.0f s'
                  % (i, ids[i], job.get('actual_device'), len(by_lava), job['health'],
                     lavaserver.seconds(job)))
            p, f = compared('lava-server', by_qemu[ids[i]], by_lava)
            passed, failed = passed + p, failed + f
    print('lava-server: %d cases in %d jobs, %d verdicts differ from QEMU\'s'
          % (passed + failed, len(ids), failed))
    return passed, failed, 0


def verdicts_differ(by_qemu, by_lava):
    """A line for each case whose verdict differs, or that only one runner ran."""
    return ['%s: %s under LAVA, %s under QEMU' % (n, by_lava.get(n, 'not run'),
                                                  by_qemu.get(n, 'not run'))
            for n in sorted(set(by_qemu) | set(by_lava)) if by_qemu.get(n) != by_lava.get(n)]


def regressions(ws, cfg):
    patches, _, _ = proof.select(cfg)
    passed, failed = proof.Proof(ws, cfg, patches).main()
    return passed, failed, 0


def harness_tests(ws, cfg):
    here = os.path.join(cfg.top, 'harness', 'tests')
    tests = unittest.defaultTestLoader.discover(here, pattern='test_*.py', top_level_dir=here)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(tests)
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    return result.testsRun - failed - skipped, failed, skipped


def docs(ws, cfg):
    found = doccheck.problems(ws.tree.path)
    for p in found:
        print('doccheck: ' + p)
    return (0, 1, 0) if found else (1, 0, 0)


def mailed_series(ws, cfg):
    passed, failed = series.main(ws.tree.path, os.path.join(cfg.workdir, 'series'))
    return passed, failed, 0


def count_check(ws, cfg):
    return counts.main(cfg) + (0,)


def mutant_sample(ws, cfg):
    """MUTANTS=sample: every mutant of mutants/sample must still be killed
    (or time out), and no equivalent one may be."""
    ms, problems = mutants.main(ws, cfg, 'sample')
    for p in problems:
        print('mutants: error: ' + p)
    survivors = [m for m in ms if m.verdict == 'SURVIVED']
    for m in survivors:
        print('mutants: %s SURVIVED (%s): a case no longer catches it' % (m.key, m.detail))
    passed = sum(1 for m in ms if m.verdict in ('KILLED', 'TIMEOUT', 'EQUIVALENT'))
    return passed, len(survivors) + len(problems), sum(1 for m in ms if m.verdict == 'NOT-BUILT')


def images(ws, cfg):
    """images/make-all.sh --check: its last line is its tally."""
    r = subprocess.run([os.path.join(cfg.top, 'images', 'make-all.sh'), '--check',
                        os.path.join(cfg.top, 'kunit-tests')], capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
    m = re.search(r'^(\d+) passed, (\d+) failed, (\d+) skipped$', r.stdout, re.M)
    if not m:
        return 0, 1, 0
    return int(m.group(1)), int(m.group(2)) + (r.returncode != 0 and m.group(2) == '0'), \
        int(m.group(3))


# name, what it runs, the settings it runs with (over make check's own)
STEPS = [
    ('suite', suite, dict(profile='default', mode='builtin', alone='')),
    # The tests as modules: each loaded, unloaded (leaving nothing) and loaded again.
    ('modules', suite, dict(profile='default', mode='modules', alone='')),
    # One test directory alone, as a developer runs kunit.py --kunitconfig=fs/quota.
    ('alone-quota', suite, dict(profile='default', mode='builtin', alone='fs/quota')),
    # The quota suite booted by LAVA (lava-run), judged the same: the same verdicts.
    ('lava', lava_runner, dict(profile='default', mode='builtin', alone='')),
    # Two jobs at once on a lava-server of this machine's with two devices.
    ('lava-server', lava_server, dict(profile='default', mode='builtin', alone='')),
    ('harness', harness_tests, {}),
    # Seed 82ff50b222d8 is documentation: its page is checked against the tree.
    ('docs', docs, {}),
    # The series as mailed: checkpatch --strict and kernel-doc find nothing that
    # patches/checkpatch-exceptions does not give a reason for.
    ('series', mailed_series, {}),
    # Not here: make series-build (each patch built as git bisect meets it),
    # about 800 s of CI's 5400 on a machine like CI's; the warning gate runs
    # in every build make check makes, at the tip of the series.
    # The counts in README.md and docs/design.md are the suite run's.
    ('counts', count_check, dict(profile='default', mode='builtin', alone='')),
    ('images', images, {}),
    ('regressions', regressions, dict(profile='default', mode='builtin', alone='')),
    # What only unloading the test modules shows (a disk or memory left behind).
    ('modules-regressions', regressions, dict(profile='default', mode='modules', alone='')),
    # The debug profile: the whole suite once more under KASAN, kmemleak, lockdep
    # and the rest (a report fails its case), and the bugs only they can see.
    ('debug-suite', suite, dict(profile='debug', mode='builtin', alone='')),
    ('debug-regressions', regressions, dict(profile='debug', mode='builtin', alone='')),
    # Mutation analysis, a fixed sample (mutants/sample): the former survivors
    # and a mutant of every guarded file are still caught.  make mutants
    # runs them all.
    ('mutants', mutant_sample, dict(profile='default', mode='builtin', alone='')),
]


# What a failing step's log says of its failures.  CI shows only the tail of
# the output, so these lines are repeated there, just above the sum.
FAILURE_LINE = re.compile(r'\b(FAIL|ERROR|MISSED|NOISY|SURVIVED|not ok|error|Traceback|'
                          r'stopped|never reported|problems?)\b')
TALLY = re.compile(r'^\d+ passed, \d+ failed, \d+ skipped$')


def failure_lines(path, most=8):
    """The last @most lines of a step's log that speak of a failure."""
    with open(path, errors='replace') as f:
        lines = [line.rstrip() for line in f]
    found = [line for line in lines if FAILURE_LINE.search(line) and not TALLY.match(line)]
    return found[-most:]


def main(ws, cfg, packages_seconds=None):
    os.makedirs(os.path.join(cfg.top, 'results'), exist_ok=True)
    total = [0, 0, 0]
    phases = ['packages %d s' % packages_seconds] if packages_seconds is not None else []
    t_all = time.monotonic()
    failed_steps = []
    for name, fn, settings in STEPS:
        step_cfg = cfg.with_(filter='', extra_patches=(), **settings)
        print('== %s: %s %s' % (name, fn.__name__, step_cfg.describe()), flush=True)
        t = time.monotonic()
        with open(os.path.join(cfg.top, 'results', 'check-%s.log' % name), 'w') as log, \
                contextlib.redirect_stdout(Tee(sys.stdout, log)):
            try:
                got = fn(ws, step_cfg)
            except (RunError, Exception) as e:  # a step that breaks is a failure, the rest go on
                if not isinstance(e, RunError):
                    traceback.print_exc(file=sys.stdout)
                print('check: %s stopped before it counted anything: %s'
                      % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
                got = (0, 1, 0)
            print('%d passed, %d failed, %d skipped' % got, flush=True)
        total = [a + b for a, b in zip(total, got)]
        if got[1]:
            failed_steps.append((name, got[1]))
        phases.append('%s %.0f s' % (name, time.monotonic() - t))
    for name, n in failed_steps:
        log = os.path.join(cfg.top, 'results', 'check-%s.log' % name)
        print('check: %s: %d failed (results/check-%s.log):' % (name, n, name))
        for line in failure_lines(log):
            print('check:   ' + line[:200])
    print('check: time per step: %s (total %.0f s)' % (', '.join(phases),
                                                        time.monotonic() - t_all))
    line = '%d passed, %d failed, %d skipped' % tuple(total)
    with open(os.path.join(cfg.top, 'results', 'check-summary.txt'), 'w') as f:
        f.write(line + '\n')
    print(line, flush=True)
    return 0 if total[1] == 0 else 1

# SPDX-License-Identifier: GPL-2.0
"""python3 -m fskunit COMMAND: what the Makefile's targets run.

    run                make run: the suites in QEMU, results/
    check [--packages-seconds=N]   make check: every step of check.STEPS
    regressions        make regressions (PATCHES='globs' to choose)
    prove GLOB         make prove FILTER=GLOB
    regression NAME [FILES...]   make regression
    series             make series (AUTHOR='Name <mail>' signs)
    series-build       make series-build
    counts [--write]   the counts in README.md and docs/design.md
    alone [DIRS...]    make alone: each test directory's .kunitconfig
    tree               make tree: the kernel tree, synced
    bench              make bench (REPEAT, COLD=1, CHECK=1|empty, BEFORE=rev)
    mutants            make mutants (MUTANTS=sample|globs of keys)
    mutants-sample     mutants/sample from the last full make mutants
    coverage           make coverage: gcov of the guarded functions
    lava-jobs          make lava-jobs: LAVA jobs for the built kernels, in WORKDIR
    lava-server        make lava-server: the mutants' jobs on a local lava-server (DEVICES=2)
    test               make test-harness

Settings come from the environment, as make passes them (README's table),
and are read once, into a Config."""

import importlib
import os
import sys

from .config import Config, ConfigError
from .tree import Tree, TreeError
from .workspace import RunError, Workspace, report


class _Lazy:
    """A module imported when a command first uses it: make run needs few of
    them, and importing them all was about half of a no-change run's own
    cost (make bench's no-change figure)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module('.' + self._name, __package__), attr)


(alone, bench, check, counts, coverage, lava, lavaserver, mutants, newregression, proof, series,
 seriesbuild) = (_Lazy(n) for n in (
     'alone', 'bench', 'check', 'counts', 'coverage', 'lava', 'lavaserver', 'mutants',
     'newregression', 'proof', 'series', 'seriesbuild'))


def _user_errors():
    """What a command reports as a one-line error, not a traceback."""
    return (ConfigError, RunError, TreeError, series.SeriesError, counts.CountsError,
            newregression.RegressionError)


def cmd_run(cfg, args):
    with Workspace(cfg) as ws:
        run = ws.run(cfg)
    report(run)
    print(run.summary)
    return 0 if run.ok else 1


def cmd_check(cfg, args):
    # The Makefile times deps.sh, which runs before Python can.
    seconds = [a.split('=', 1)[1] for a in args if a.startswith('--packages-seconds=')]
    with Workspace(cfg) as ws:
        return check.main(ws, cfg, int(seconds[0]) if seconds else None)


def cmd_regressions(cfg, args, prove=''):
    patterns = os.environ.get('PATCHES', '').split()
    patches, empty, others = proof.select(cfg, patterns)
    if empty:
        raise RunError('no patch matches %s' % ' '.join(empty))
    by = {}
    for r in others:
        by.setdefault(r.configuration, []).append(r)
    for where, some in sorted(by.items()):
        print('regressions: %d patches are for %s (%s make regressions)%s'
              % (len(some), where, where, ': ' + ' '.join(r.name for r in some)
                 if len(some) <= 5 else ''), flush=True)
    if not patches:
        raise RunError('none of these patches is for %s' % cfg.describe())
    with Workspace(cfg) as ws:
        passed, failed = proof.Proof(ws, cfg, patches, prove).main()
    print('%d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


def cmd_prove(cfg, args):
    if not args:
        raise RunError("make prove: say which cases: FILTER='suite.case*'")
    return cmd_regressions(cfg.with_(filter=''), [], prove=args[0])


def cmd_regression(cfg, args):
    if not args:
        raise newregression.RegressionError(
            "say NAME=<dir>/<nn-what> (make regression NAME=... FILES=...)")
    with Workspace(cfg) as ws:
        newregression.main(ws, cfg, args[0], args[1:])
    return 0


def cmd_series(cfg, args):
    author = series.parse_author(os.environ.get('AUTHOR', ''))
    with Workspace(cfg) as ws:
        ws.sync()
        passed, failed = series.main(ws.tree.path, os.path.join(cfg.workdir, 'series'), author)
    print('%d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


def cmd_series_build(cfg, args):
    with Workspace(cfg) as ws:
        passed, failed = seriesbuild.main(ws, cfg)
    print('%d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


def cmd_series_build_step(cfg, args):
    # git rebase -x runs this inside make series-build, which holds the lock.
    return seriesbuild.step(cfg, Tree(cfg.workdir, cfg.top))


def cmd_counts(cfg, args):
    passed, failed = counts.main(cfg.with_(profile='default', mode='builtin', alone=''),
                                 write='--write' in args)
    print('%d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


def cmd_alone(cfg, args):
    dirs = args or os.environ.get('DIRS', '').split() or alone.DIRS
    with Workspace(cfg) as ws:
        return alone.main(ws, cfg, dirs)


def cmd_bench(cfg, args):
    return bench.main(cfg)


def cmd_mutants(cfg, args):
    select = os.environ.get('MUTANTS', '').strip()
    with Workspace(cfg) as ws:
        ms, problems = mutants.main(ws, cfg.with_(profile='default', mode='builtin', alone='',
                                                  filter='', extra_patches=()), select)
    for p in problems:
        print('mutants: error: ' + p, file=sys.stderr)
    detected, judged = mutants.score(ms)
    print('%d passed, %d failed, %d skipped' % (detected, judged - detected + len(problems),
                                                 len(ms) - judged))
    return 1 if problems else 0


def cmd_mutants_sample(cfg, args):
    chosen = mutants.write_sample(cfg.top, os.path.join(cfg.top, 'results', 'mutants.json'))
    print('mutants/sample: %d mutants, %d of them former survivors'
          % (len(chosen), sum(1 for why in chosen.values() if why)))
    return 0


def cmd_coverage(cfg, args):
    with Workspace(cfg) as ws:
        return coverage.main(ws, cfg)


def cmd_lava_jobs(cfg, args):
    directory = os.path.join(cfg.workdir, 'lava-jobs')
    with Workspace(cfg) as ws:
        ws.sync()
        try:
            jobs, missing = lava.write_jobs(ws, cfg, directory)
        except lava.LavaError as e:
            raise RunError(str(e))
    print('lava-jobs: %d jobs and the device in %s, each valid by LAVA\'s schema%s'
          % (len(jobs), directory, '; %d mutants left out: their schemata kernel is not built '
             '(make mutants builds it)' % missing if missing else ''))
    return 0


def cmd_lava_server(cfg, args):
    select = os.environ.get('MUTANTS', '').strip() or 'sample'
    devices = os.environ.get('DEVICES', '').strip() or '2'
    if not devices.isdigit() or int(devices) < 1:
        raise RunError('DEVICES=%s: say how many QEMU devices the server gets (1, 2...)' % devices)
    with Workspace(cfg) as ws:
        try:
            ms, problems, fig = lavaserver.run_mutants(
                ws, cfg.with_(profile='default', mode='builtin', alone='', filter='',
                              extra_patches=()), select, int(devices))
        except lava.LavaError as e:
            raise RunError(str(e))
    problems += lavaserver.differ_from_make_mutants(cfg.top, ms)
    for p in problems:
        print('lava-server: error: ' + p, file=sys.stderr)
    detected, judged = mutants.score(ms)
    print('lava-server: %d mutants, %d jobs on %d devices: %.0f s (baselines %.0f), the jobs '
          'themselves %.0f s' % (fig['mutants'], fig['jobs'], fig['devices'], fig['wall'],
                                 fig['baselines'], fig['job_seconds']))
    print('%d passed, %d failed, %d skipped' % (detected, judged - detected + len(problems),
                                                 len(ms) - judged))
    return 1 if problems else 0


def cmd_tree(cfg, args):
    with Workspace(cfg) as ws:
        print(ws.sync())
    return 0


def cmd_test(cfg, args):
    with Workspace(cfg) as ws:
        ws.sync()
    passed, failed, skipped = check.harness_tests(None, cfg)
    print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


COMMANDS = {
    'run': cmd_run, 'check': cmd_check, 'regressions': cmd_regressions, 'prove': cmd_prove,
    'regression': cmd_regression, 'series': cmd_series, 'series-build': cmd_series_build,
    'series-build-step': cmd_series_build_step, 'counts': cmd_counts, 'alone': cmd_alone,
    'tree': cmd_tree, 'test': cmd_test, 'bench': cmd_bench, 'mutants': cmd_mutants,
    'coverage': cmd_coverage, 'mutants-sample': cmd_mutants_sample,
    'lava-jobs': cmd_lava_jobs, 'lava-server': cmd_lava_server,
}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    name, args = argv[0], argv[1:]
    try:
        cfg = Config.from_env()
        return COMMANDS[name](cfg, args)
    except Exception as e:
        if not isinstance(e, _user_errors()):
            raise
        print('%s: error: %s' % (name, e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    import signal
    # SIGTERM (a CI time-out, kill) unwinds like ^C: children stopped, tree restored.
    from .workspace import stop_all

    def interrupted(signum, _):
        # The children (each kunit.py in a session of its own) stop at once,
        # then this process unwinds: lanes joined, the tree restored.
        stop_all()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt()
        sys.exit(143)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    sys.exit(main(sys.argv[1:]))

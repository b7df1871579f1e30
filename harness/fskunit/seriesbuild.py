# SPDX-License-Identifier: GPL-2.0
"""make series-build: every patch of the series builds on its own, and adds
no compiler warning.

The series (test sources folded in, as make series mails it) is committed on
pristine, and git rebase -x builds each commit in turn in $WORKDIR/build-
series, incrementally, vmlinux and modules: what git bisect would meet.  The
configuration is MODE=modules's (every test a module, so modpost also checks
that what a test module calls is exported), taken at the tip and given to
each earlier commit through olddefconfig, so a symbol is on from the patch
that adds it.  The build directory starts as a copy of the modules build,
so that the pristine build recompiles only what the series changes.  After
each build the warning gate (gate.py) compiles the files the commit
touches, against their pristine versions.  Objects come from the compile
cache every build directory shares.  The first commit that
does not build, or adds a warning, stops the rebase and is named, its log
kept."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from . import catalogue, gate
from .series import Mail
from .workspace import RunError


# What git bisect needs of a commit: it links, and modpost finds every symbol
# a module uses.  bzImage (make all) only compresses vmlinux once more.
TARGETS = ('vmlinux', 'modules')


def make(cfg, tree, build, log, *targets):
    """make in @tree as kunit.py runs it (same compiler line, so the cache hits)."""
    with open(log, 'a') as out:
        return subprocess.run(
            ['make', 'ARCH=x86_64', 'O=' + build, 'CC=ccache gcc', '--jobs=%d' % cfg.jobs,
             *targets], cwd=tree, stdout=out, stderr=subprocess.STDOUT,
            env=dict(os.environ, **cfg.compile_env(tree))).returncode


def paths(cfg):
    build = os.path.join(cfg.workdir, 'build-series')
    return build, os.path.join(build, 'tip.config'), os.path.join(build, 'steps.jsonl')


def step(cfg, tree):
    """One commit (git rebase -x runs this in the tree): build it, then the
    gate over what it touches.  Exit status 0 lets the rebase go on."""
    build, tip_config, steps = paths(cfg)
    subject = tree.git('log', '-1', '--format=%s').stdout.strip()
    k = sum(1 for _ in open(steps)) if os.path.exists(steps) else 0
    log = os.path.join(build, 'log-%02d.txt' % k)
    if os.path.exists(log):
        os.unlink(log)
    t = time.monotonic()
    shutil.copy(tip_config, os.path.join(build, '.config'))
    rc = make(cfg, tree.path, build, log, 'olddefconfig') or \
        make(cfg, tree.path, build, log, *TARGETS)
    new = []
    if rc == 0:
        # This commit's files, and every file touched so far if it changes a
        # header (which the earlier files may include).
        mine = gate.touched(tree, 'HEAD~1', 'HEAD')
        if any(p.endswith('.h') for p in mine):
            so_far = gate.touched(tree, 'pristine', 'HEAD')
            mine = {p: so_far[p] for p in so_far}
        else:
            mine = {p: gate.touched(tree, 'pristine', 'HEAD').get(p, s) for p, s in mine.items()}
        try:
            new = gate.check_files(tree, build, cfg.ccache_dir, mine)
        except gate.GateError as e:
            new = ['the warning gate could not compile: %s' % e]
    with open(steps, 'a') as f:
        f.write(json.dumps({'subject': subject, 'rc': rc, 'new': new, 'log': log,
                            'seconds': round(time.monotonic() - t)}) + '\n')
    return 1 if rc or new else 0


def tail(log, n=25):
    with open(log, errors='replace') as f:
        return ''.join(f.readlines()[-n:])


def main(ws, cfg):
    """(passed, failed): patches that built without a new warning, or not."""
    modules_config = os.path.join(cfg.with_(mode='modules', profile='default', alone='')
                                  .build_dir, '.config')
    if not os.path.exists(modules_config):
        raise RunError('no %s: its configuration comes from the module build (make run '
                       'MODE=modules first)' % modules_config)
    tree = ws.tree
    build, tip_config, steps = paths(cfg)
    # The pristine build starts from a copy of the modules build: kbuild
    # rebuilds only what differs (the series' files, and those that read a
    # symbol the series adds), where an empty directory would compile all
    # again, each file preprocessed anew for the cache because autoconf.h
    # differs.
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(os.path.dirname(modules_config), build, symlinks=True)
    shutil.copy(modules_config, tip_config)
    if os.path.exists(steps):
        os.unlink(steps)
    entries = catalogue.read_series(cfg.top)
    with tempfile.TemporaryDirectory() as tmp:
        commits = Mail(tree.path, None).chain([catalogue.number(p) for p, _ in entries], tmp)
    t0 = time.monotonic()
    tree.forget_sync()
    try:
        tree.git('checkout', '-q', '-f', '--detach', 'pristine')
        log = os.path.join(build, 'log-pristine.txt')
        if os.path.exists(log):
            os.unlink(log)
        shutil.copy(tip_config, os.path.join(build, '.config'))
        t = time.monotonic()
        if make(cfg, tree.path, build, log, 'olddefconfig') or \
                make(cfg, tree.path, build, log, *TARGETS):
            raise RunError('the pristine tree (%s) does not build: see %s\n%s'
                           % (tree.version, log, tail(log)))
        print('series-build: pristine %s: built in %.0f s' % (tree.version,
                                                             time.monotonic() - t), flush=True)
        tree.git('checkout', '-q', '-f', '--detach', commits[-1])
        harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        exec_cmd = ' '.join(shlex.quote(a) for a in
                            ['env', 'PYTHONPATH=' + harness] +
                            ['%s=%s' % kv for kv in cfg.env.items() if kv[1]] +
                            [sys.executable, '-m', 'fskunit', 'series-build-step'])
        r = tree.git('rebase', '-q', '-x', exec_cmd, 'pristine', check=False)
        if r.returncode:
            tree.git('rebase', '--abort', check=False)
    finally:
        ws.sync()
    done = [json.loads(line) for line in open(steps)] if os.path.exists(steps) else []
    passed = failed = 0
    for k, s in enumerate(done, 1):
        name = entries[k - 1][0] if k <= len(entries) else s['subject']
        if s['rc']:
            failed += 1
            print('series-build: patch %d of %d: %s does NOT build on top of the patches '
                  'before it (%s); log %s:\n%s' % (k, len(entries), name, tree.version,
                                                   s['log'], tail(s['log'])), flush=True)
        elif s['new']:
            failed += 1
            print('series-build: patch %d of %d: %s adds compiler warnings:\n  %s'
                  % (k, len(entries), name, '\n  '.join(s['new'])), flush=True)
        else:
            passed += 1
            print('series-build: patch %d of %d: %s: built in %d s'
                  % (k, len(entries), name, s['seconds']), flush=True)
    if len(done) < len(entries) and not failed:
        failed += 1
        print('series-build: git rebase stopped after %d of %d patches: %s'
              % (len(done), len(entries), r.stderr.strip()[-500:]), flush=True)
    print('series-build: %d patches built one by one in %.0f s'
          % (len(done), time.monotonic() - t0), flush=True)
    return passed, failed

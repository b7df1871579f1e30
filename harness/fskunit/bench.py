# SPDX-License-Identifier: GPL-2.0
"""make bench: the project's budget on this machine, one table
(results/bench.md, and results/bench.json for a later comparison).

A benchmark, not a test: it judges nothing.  Repeated figures are hyperfine's
(Debian's hyperfine, --export-json), medians of REPEAT runs:
  - the edit loop: one test file changed, make run FILTER=<its suite>;
  - a no-change make run FILTER=<suite> against a bare kunit.py exec, and
    against the same with RUNNER=lava (LAVA's cost per job);
once each, in a scratch WORKDIR or on a fresh clone (as CI meets them):
  - COLD=1: a fresh machine's make run (packages installed): empty WORKDIR;
  - CHECK=1: make check on a fresh clone, WORKDIR kept (warm);
  - CHECK=empty: make check on a fresh clone with an empty WORKDIR (cold);
and from what the builds and the proof left behind: objects each profile's
build compiled, the proof's seconds per patch.  SLOW=N runs the debug suite
and the debug profile's regression proof with SLOWDOWN=N (the guest held to
1/N of a core, as on a machine N times slower), after the same at full speed,
and gives both times and verdicts.  SERVER=1 runs make lava-server on the
same mutants (SERVER_MUTANTS) with one QEMU device, then two, REPEAT times
each: the jobs' wall time.  BEFORE=<git revision> runs
the same measurements on a clone of that revision, in a WORKDIR of its own,
and puts them in a column beside.  Figures of a phase that did not run say
n/a."""

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from . import lava
from .config import PROFILES

TEST_FILE = 'kunit-tests/fs/quota/dquot_kunit.c'


def hyperfine(commands, runs, out, prepare=None, cwd=None, env=None):
    """{command: median seconds} of hyperfine's runs."""
    args = ['hyperfine', '--style', 'basic', '--runs', str(runs), '--warmup', '1',
            '--export-json', out]
    if prepare:
        args += ['--prepare', prepare]
    r = subprocess.run(args + commands, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode:
        print('bench: hyperfine failed: ' + r.stderr[-500:])
        return {}
    with open(out) as f:
        data = json.load(f)
    return {res['command']: statistics.median(res['times']) for res in data['results']}


def objects(workdir):
    """{build directory: objects its last cold build compiled}."""
    out = {}
    for name in sorted(os.listdir(workdir)) if os.path.isdir(workdir) else []:
        count = os.path.join(workdir, name, '.fs-kunit-objects')
        if name.startswith('build') and os.path.exists(count):
            with open(count) as f:
                out[name] = int(f.read())
    return out


def proof_per_patch(top):
    """Median seconds per patch of the last proof of each configuration."""
    out = {}
    for md in sorted(glob_all(os.path.join(top, 'results'), 'regressions.md')):
        with open(md) as f:
            secs = [int(m.group(1)) for m in re.finditer(r'^\| \S+ \| [^|]+ \| (\d+) \|', f.read(),
                                                             re.M)]
        if secs:
            out[os.path.relpath(os.path.dirname(md), os.path.join(top, 'results')) or '.'] = \
                statistics.median(secs)
    return out


def glob_all(root, name):
    for d, _, files in os.walk(root):
        if name in files:
            yield os.path.join(d, name)


def timed(cmd, cwd, env):
    t = time.monotonic()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return round(time.monotonic() - t), r.returncode


def measure(top, workdir, repeat, cold, check, suite='quota_dquot'):
    """The figures of one checkout @top with its WORKDIR @workdir."""
    env = dict(os.environ, WORKDIR=workdir, PROFILE='', MODE='', ALONE='', FILTER='',
               EXTRA_PATCHES='')
    fig = {}
    if cold:
        with tempfile.TemporaryDirectory(dir='/var/tmp', prefix='fs-kunit-bench.') as w:
            fig['fresh make run'] = timed(['make', '-s', 'run'], top, dict(env, WORKDIR=w))[0]
            fig['objects'] = objects(w)
    subprocess.run(['make', '-s', 'run'], cwd=top, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    tree = os.path.join(workdir, 'linux-source-6.12')
    exec_cmd = ('cd %s && /usr/bin/python3 tools/testing/kunit/kunit.py exec --arch=x86_64 '
                '--build_dir=%s/build --qemu_config=%s/qemu-configs/x86_64.py %s'
                % (tree, workdir, top, suite))
    run_cmd = 'make -s -C %s run FILTER=%s' % (top, suite)
    # The same boot as a LAVA job (lava-run): the difference is LAVA's cost per job.
    lava_cmd = run_cmd + ' RUNNER=lava' if os.access(lava.LAVA_RUN, os.X_OK) else None
    with tempfile.TemporaryDirectory() as tmp:
        same = hyperfine([exec_cmd, run_cmd] + ([lava_cmd] if lava_cmd else []), repeat,
                         os.path.join(tmp, 'same.json'), env=env)
        saved = os.path.join(tmp, 'saved.c')
        shutil.copy(os.path.join(top, TEST_FILE), saved)
        try:
            edit = hyperfine([run_cmd], repeat, os.path.join(tmp, 'edit.json'), env=env,
                             prepare="echo '/* bench */' >> %s" % os.path.join(top, TEST_FILE))
        finally:
            shutil.copy(saved, os.path.join(top, TEST_FILE))
    subprocess.run(['make', '-s', 'run'], cwd=top, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    if exec_cmd in same and run_cmd in same:
        fig['bare kunit.py exec'] = round(same[exec_cmd], 1)
        fig['make run, nothing changed'] = round(same[run_cmd], 1)
        fig['no-change overhead'] = round(same[run_cmd] / same[exec_cmd], 2)
    if lava_cmd in same and run_cmd in same:
        fig['make run RUNNER=lava, nothing changed'] = round(same[lava_cmd], 1)
        fig['LAVA, seconds per job'] = round(same[lava_cmd] - same[run_cmd], 1)
    if run_cmd in edit:
        fig['edit a test file to results'] = round(edit[run_cmd], 1)
    fig.setdefault('objects', objects(workdir))
    if check:
        clone = tempfile.mkdtemp(dir='/var/tmp', prefix='fs-kunit-bench-clone.')
        try:
            subprocess.run(['git', 'clone', '-q', top, os.path.join(clone, 'repo')], check=True)
            w = os.path.join(clone, 'workdir') if check == 'empty' else workdir
            key = 'make check, cold (fresh clone, empty WORKDIR)' if check == 'empty' else \
                'make check, warm (fresh clone, WORKDIR kept)'
            fig[key] = timed(['make', '-s', 'check'], os.path.join(clone, 'repo'),
                             dict(env, WORKDIR=w))[0]
            summary = os.path.join(clone, 'repo', 'results', 'check-summary.txt')
            if os.path.exists(summary):
                with open(summary) as f:
                    fig[key + ': result'] = f.read().strip()
            fig['proof, seconds per patch'] = proof_per_patch(os.path.join(clone, 'repo'))
        finally:
            shutil.rmtree(clone, ignore_errors=True)
    return fig


TARGETS = {
    'fresh make run': 'at most 360 s', 'make check, cold (fresh clone, empty WORKDIR)':
    'at most 3000 s', 'edit a test file to results': 'at most 15 s',
    'no-change overhead': 'at most 1.1x', 'objects': 'default at most 900',
}


def table(now, before, label):
    keys = list(dict.fromkeys(list(before) + list(now)))
    lines = ['| what | %s | before (%s) | target |' % ('now', label or 'n/a'), '|---|---|---|---|']
    for k in keys:
        def show(v):
            if isinstance(v, dict):
                return ', '.join('%s %s' % kv for kv in v.items()) or 'n/a'
            return 'n/a' if v is None else str(v)
        lines.append('| %s | %s | %s | %s |' % (k, show(now.get(k)), show(before.get(k)),
                                                TARGETS.get(k, '')))
    return lines


def slow_proof(cfg, factor):
    """The debug suite and its proof at full speed, then SLOWDOWN=factor."""
    fig = {}
    for n in (1, factor):
        env = dict(os.environ, WORKDIR=cfg.workdir, PROFILE='debug', MODE='', ALONE='',
                   FILTER='', EXTRA_PATCHES='', SLOWDOWN=str(n), TIMEOUT='')
        for what, target in (('suite', 'run'), ('proof', 'regressions')):
            seconds, rc = timed(['make', '-s', target], cfg.top, env)
            summary = os.path.join(cfg.top, 'results', 'debug',
                                   'summary.txt' if what == 'suite' else 'regressions.md')
            verdict = 'exit %d' % rc
            if what == 'suite' and os.path.exists(summary):
                with open(summary) as f:
                    verdict = f.read().strip()
            elif os.path.exists(summary):
                with open(summary) as f:
                    text = f.read()
                verdict = '%d caught of %d' % (len(re.findall(r'\| caught', text)),
                                               len(re.findall(r'^\| regressions/|^\| \w+/\d',
                                                              text, re.M)))
            fig['debug %s, SLOWDOWN=%d' % (what, n)] = '%d s (%s)' % (seconds, verdict)
    return fig


# make lava-server's work for SERVER=1: the default profile's mutants of the
# UDF superblock and of tmpfs (two short suites), 34 jobs with the baselines.
SERVER_MUTANTS = ('fs/udf/super.c:*:BRANCH_* fs/udf/super.c:*:RET_* mm/shmem.c:*:BRANCH_* '
                  'mm/shmem.c:*:RET_* mm/shmem.c:*:ARG_*')


def server_devices(cfg, repeat):
    """make lava-server on the same mutants with one device, then two: the
    median wall time of the jobs (the server's start not counted)."""
    fig, walls = {}, {}
    for devices in (1, 2):
        env = dict(os.environ, WORKDIR=cfg.workdir, MUTANTS=SERVER_MUTANTS,
                   DEVICES=str(devices))
        for _ in range(repeat):
            _, rc = timed(['make', '-s', 'lava-server'], cfg.top, env)
            path = os.path.join(cfg.top, 'results', 'lava-server', 'mutants-%d.json' % devices)
            if rc or not os.path.exists(path):
                return {'lava-server, %d devices' % devices: 'exit %d' % rc}
            with open(path) as f:
                got = json.load(f)['figures']
            walls.setdefault(devices, []).append(got['wall'])
        fig['lava-server, %d mutants (%d jobs), %d device%s' % (
            got['mutants'], got['jobs'], devices, 's' if devices > 1 else '')] = \
            round(statistics.median(walls[devices]), 1)
    fig['lava-server, 2 devices against 1'] = round(
        statistics.median(walls[2]) / statistics.median(walls[1]), 2)
    return fig


def main(cfg):
    repeat = int(os.environ.get('REPEAT') or 3)
    cold = os.environ.get('COLD') == '1'
    check = {'1': 'warm', 'empty': 'empty'}.get(os.environ.get('CHECK', ''), '')
    rev = os.environ.get('BEFORE', '')
    if shutil.which('hyperfine') is None:
        print('bench: error: hyperfine is missing (make deps installs it)')
        return 2
    now = measure(cfg.top, cfg.workdir, repeat, cold, check)
    if os.environ.get('SERVER') == '1':
        now.update(server_devices(cfg, repeat))
    if os.environ.get('SLOW', '').isdigit() and int(os.environ['SLOW']) > 1:
        now.update(slow_proof(cfg, int(os.environ['SLOW'])))
    before = {}
    if rev:
        scratch = tempfile.mkdtemp(dir='/var/tmp', prefix='fs-kunit-bench-before.')
        try:
            subprocess.run(['git', 'clone', '-q', cfg.top, os.path.join(scratch, 'repo')],
                           check=True)
            subprocess.run(['git', '-C', os.path.join(scratch, 'repo'), 'checkout', '-q', rev],
                           check=True)
            before = measure(os.path.join(scratch, 'repo'), os.path.join(scratch, 'workdir'),
                             repeat, cold, check)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    out = os.path.join(cfg.top, 'results')
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'bench.json'), 'w') as f:
        json.dump({'now': now, 'before': before, 'before_revision': rev,
                   'profiles': list(PROFILES), 'cores': os.cpu_count(),
                   'date': time.strftime('%Y-%m-%d')}, f, indent=1)
    lines = table(now, before, rev) + ['', '%d cores; medians of %d runs (hyperfine); %s'
                                       % (os.cpu_count(), repeat, time.strftime('%Y-%m-%d'))]
    with open(os.path.join(out, 'bench.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    return 0

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make run: bring the tree up to date, build only when an input changed,
boot the kernel under QEMU through kunit.py and write results/.

Settings come from the environment (the Makefile passes them through):
PROFILE, MODE, ALONE, WORKDIR, BUILD_DIR, RESULTS, FILTER, EXTRA_PATCHES,
TIMEOUT, JOBS, KUNITCONFIG, KUNIT_QEMU_ACCEL.
"""

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A profile is a kernel configuration with its own build directory and
# results: the fragments added to kunitconfig, the kernel's command line, and
# how long QEMU may take.  'debug' adds the checkers of kunitconfig.debug;
# kmemleak.verbose=1 makes a scan print each leak (see kunit_fs_leak_scan()).
PROFILES = {
    'default': {'fragments': [], 'kernel_args': [], 'timeout': 300},
    'debug': {'fragments': ['kunitconfig.debug'], 'kernel_args': ['kmemleak.verbose=1'],
              'timeout': 1200},
    # Our suites beside every upstream test the configuration allows.
    'alltests': {'fragments': ['kunitconfig.alltests'], 'kernel_args': [], 'timeout': 1800},
}
PROFILE = os.environ.get('PROFILE') or 'default'
if PROFILE not in PROFILES:
    sys.exit('run: error: PROFILE=%s is not a profile (there are: %s)'
             % (PROFILE, ', '.join(PROFILES)))
_P = PROFILES[PROFILE]
# MODE=modules: the same tests as modules, loaded twice each by an initramfs
# (harness/modules-init.sh) with a check that unloading left nothing behind.
MODE = os.environ.get('MODE') or 'builtin'
if MODE not in ('builtin', 'modules'):
    sys.exit('run: error: MODE=%s is not a mode (there are: builtin, modules)' % MODE)
# ALONE=fs/quota: that directory's .kunitconfig in the patched tree instead of
# kunitconfig, as a developer runs kunit.py run --kunitconfig=fs/quota there.
ALONE = os.environ.get('ALONE', '').strip('/')
_SUFFIX = ('' if PROFILE == 'default' else '-' + PROFILE) + \
    ('' if MODE == 'builtin' else '-' + MODE) + \
    ('-alone-' + ALONE.replace('/', '-') if ALONE else '')

WORKDIR = os.environ.get('WORKDIR') or '/var/tmp/fs-kunit'
BUILD_DIR = os.environ.get('BUILD_DIR') or os.path.join(WORKDIR, 'build' + _SUFFIX)
CCACHE_DIR = os.path.join(WORKDIR, 'ccache')
RESULTS = os.environ.get('RESULTS') or os.path.join(
    TOP, 'results', *([] if PROFILE == 'default' else [PROFILE]),
    *([] if MODE == 'builtin' else [MODE]),
    *(['alone', ALONE.replace('/', '-')] if ALONE else []))
KUNITCONFIG = os.path.abspath(
    os.environ.get('KUNITCONFIG') or
    (os.path.join(WORKDIR, 'linux-source-6.12', ALONE, '.kunitconfig') if ALONE
     else os.path.join(TOP, 'kunitconfig')))
KUNITCONFIGS = [KUNITCONFIG] + [os.path.join(TOP, f) for f in _P['fragments']]
KERNEL_ARGS = _P['kernel_args']
INITRAMFS = os.path.join(BUILD_DIR, 'fs-kunit-modules.cpio')
if MODE == 'modules':
    # kunitconfig stays the one list of tests: here its =y tests become =m.
    KUNITCONFIGS = [os.path.join(WORKDIR, 'kunitconfig' + _SUFFIX)] + KUNITCONFIGS[1:] + \
        [os.path.join(TOP, 'kunitconfig.modules')]
    # The init's KTAP goes through /dev/kmsg, which would drop lines past ten a burst.
    KERNEL_ARGS = KERNEL_ARGS + ['printk.devkmsg=on']
QEMU_CONFIG = os.path.join(TOP, 'qemu-configs', 'x86_64.py')
FILTER = os.environ.get('FILTER', '')
EXTRA = os.environ.get('EXTRA_PATCHES', '')
TIMEOUT = int(os.environ.get('TIMEOUT') or _P['timeout'])
JOBS = os.environ.get('JOBS') or str(os.cpu_count() + 1)


class RunError(Exception):
    pass


def say(msg):
    print('run: ' + msg, flush=True)


def tree_sync(extra):
    # main() holds the WORKDIR lock, which tree.sh would otherwise wait for.
    env = dict(os.environ, WORKDIR=WORKDIR, EXTRA_PATCHES=extra, FS_KUNIT_LOCKED='1')
    proc = subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'sync'], env=env,
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode:
        raise RunError('the tree could not be prepared (see above)')
    return proc.stdout.strip()


def tree_path():
    env = dict(os.environ, WORKDIR=WORKDIR)
    return subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'path'], env=env,
                          stdout=subprocess.PIPE, text=True, check=True).stdout.strip()


def kunit(tree, *args, stdout=None, each_line=None):
    """kunit.py in its own process group: if we are stopped, so are its make
    and QEMU, instead of building on in a build directory we no longer lock.
    each_line: read its output as it comes, a line at a time."""
    cmd = ['/usr/bin/python3', os.path.join(tree, 'tools/testing/kunit/kunit.py'), *args]
    if args[0] != 'parse':
        cmd += ['--arch=x86_64', '--build_dir=' + BUILD_DIR, '--qemu_config=' + QEMU_CONFIG]
    if args[0] == 'exec':
        cmd += ['--kernel_args=' + arg for arg in KERNEL_ARGS]
        if MODE == 'modules':
            cmd.append('--qemu_args=-initrd ' + INITRAMFS)
    if args[0] == 'build':
        # Every build directory (profiles, regression patches) shares one
        # cache: what another configuration already compiled is not compiled again.
        cmd.append('--make_options=CC=ccache gcc')
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1', CCACHE_DIR=CCACHE_DIR,
               CCACHE_MAXSIZE='5G', CCACHE_BASEDIR=tree)
    proc = subprocess.Popen(cmd, cwd=tree, env=env, text=True,
                            stdout=subprocess.PIPE if each_line else stdout,
                            errors='replace', start_new_session=True)
    try:
        if each_line:
            for line in proc.stdout:
                each_line(line)
        out, _ = proc.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def build_stamp(tree_id):
    h = hashlib.sha256()
    parts = [tree_id.encode(), read(QEMU_CONFIG), ' '.join(KERNEL_ARGS).encode()]
    for part in parts + [read(path) for path in KUNITCONFIGS]:
        h.update(part + b'\0')
    return h.hexdigest()


class Progress(threading.Thread):
    """One line now and then while make runs: objects compiled so far, elapsed
    time and, in a cold build, what is probably left against the count of
    the last cold build in this directory.  A terminal gets the line rewritten every few seconds; a
    log (CI) a new line every 30 s."""

    def __init__(self, count_file):
        super().__init__(daemon=True)
        self.count_file, self.t0, self.done = count_file, time.time(), threading.Event()
        self.tty = sys.stdout.isatty()
        self.cold = not os.path.exists(os.path.join(BUILD_DIR, 'vmlinux'))
        with contextlib.suppress(OSError, ValueError):
            self.last = int(read(count_file))
            return
        self.last = 0

    def compiled(self):
        n = 0
        for root, _, files in os.walk(BUILD_DIR):
            for f in files:
                if f.endswith('.o'):
                    with contextlib.suppress(OSError):
                        n += os.stat(os.path.join(root, f)).st_mtime >= self.t0
        return n

    def line(self):
        n, t = self.compiled(), time.time() - self.t0
        msg = 'build: %d objects compiled' % n
        # Only a cold build compiles all of them: an incremental one has no
        # estimate worth printing.
        if self.last and self.cold:
            msg += ' of about %d' % self.last
            if n:
                msg += ', about %.0f s left' % max(0, t * (self.last - n) / n)
        return msg + ', %.0f s so far' % t

    def run(self):
        while not self.done.wait(5 if self.tty else 30):
            if self.tty:
                sys.stdout.write('\r' + self.line() + '\033[K')
            else:
                say(self.line())
            sys.stdout.flush()

    def stop(self, ok):
        self.done.set()
        if self.tty:
            sys.stdout.write('\n')
        n = self.compiled()
        if ok and n and self.cold:
            with open(self.count_file, 'w') as f:
                f.write(str(n))


def build(tree, tree_id):
    """Build unless the last successful build had the same inputs."""
    stamp = build_stamp(tree_id)
    stamp_file = os.path.join(BUILD_DIR, '.fs-kunit-stamp')
    kernel = os.path.join(BUILD_DIR, 'arch/x86/boot/bzImage')
    with contextlib.suppress(OSError):
        if read(stamp_file).decode() == stamp and os.path.exists(kernel):
            say('kernel is up to date: not building')
            return stamp
    os.makedirs(BUILD_DIR, exist_ok=True)
    with contextlib.suppress(OSError):
        os.unlink(stamp_file)
    say('building (incremental, profile %s) in %s' % (PROFILE, BUILD_DIR))
    t = time.monotonic()
    progress = Progress(os.path.join(BUILD_DIR, '.fs-kunit-objects'))
    progress.start()
    rc = kunit(tree, 'build', *['--kunitconfig=' + path for path in KUNITCONFIGS],
               '--jobs=' + JOBS).returncode
    progress.stop(rc == 0)
    if rc:
        raise RunError('the kernel did not build (errors above)%s'
                       % ('; EXTRA_PATCHES=' + EXTRA if EXTRA else ''))
    say('built in %.0f s' % (time.monotonic() - t))
    with open(stamp_file, 'w') as f:
        f.write(stamp)
    return stamp


def write_modules_kunitconfig():
    """kunitconfig with its tests as modules (=m): MODE=modules's first fragment."""
    text = re.sub(r'^(CONFIG_\w+_KUNIT_TESTS?)=y$', r'\1=m', read(KUNITCONFIG).decode(),
                  flags=re.M)
    with contextlib.suppress(OSError):
        if read(KUNITCONFIGS[0]).decode() == text:
            return  # unchanged: keep its mtime
    with open(KUNITCONFIGS[0], 'w') as f:
        f.write(text)


def make_initramfs():
    """MODE=modules: busybox, harness/modules-init.sh as /init and every module
    the build made, test modules (those with KUnit suites) in build order.
    Returns the test modules' names."""
    order = read(os.path.join(BUILD_DIR, 'modules.order')).decode().split()
    staging = tempfile.mkdtemp(prefix='initramfs.', dir=BUILD_DIR)
    try:
        for d in ('bin', 'dev', 'lib/modules', 'proc', 'sys', 'tmp'):
            os.makedirs(os.path.join(staging, d))
        shutil.copy('/bin/busybox', os.path.join(staging, 'bin'))
        # /init's interpreter; the init installs busybox's other applets.
        os.symlink('busybox', os.path.join(staging, 'bin', 'sh'))
        shutil.copy(os.path.join(TOP, 'harness', 'modules-init.sh'),
                    os.path.join(staging, 'init'))
        os.chmod(os.path.join(staging, 'init'), 0o755)
        tests, libs = [], []
        for rel in order:
            ko = os.path.join(BUILD_DIR, os.path.splitext(rel)[0] + '.ko')
            name = os.path.basename(ko)[:-3].replace('-', '_')  # as the kernel names it
            shutil.copy(ko, os.path.join(staging, 'lib', 'modules', name + '.ko'))
            (tests if b'.kunit_test_suites' in read(ko) else libs).append(name)
        for name, names in (('order', tests), ('libs', libs)):
            with open(os.path.join(staging, 'lib', 'modules', name), 'w') as f:
                f.write('\n'.join(names) + '\n')
        with open(INITRAMFS, 'wb') as out:
            subprocess.run('find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0',
                           shell=True, cwd=staging, stdout=out, check=True)
    finally:
        shutil.rmtree(staging)
    if not tests:
        raise RunError('the modules build made no test module (see %s/modules.order)'
                       % BUILD_DIR)
    say('initramfs: %d test modules, %d others: %s' % (len(tests), len(libs), ' '.join(tests)))
    return tests


def wanted(case):
    """Whether FILTER asks for @case.  The kernel filters a module's suites by
    their own name at both loads; the init checks every module's unload."""
    if not FILTER:
        return True
    if MODE == 'modules':
        if case.startswith('modules.'):
            return True
        case = case.replace('@reload.', '.', 1)
    return ktap.glob_match(FILTER, case)


def name_reloads(suites):
    """The second load of a module runs its suites again: "suite@reload"."""
    seen = set()
    for suite in suites:
        if suite.name in seen:
            suite.name += '@reload'
        seen.add(suite.name)


def enabled_cases(tree, stamp):
    """suite.case for every case the kernel has, listed once per build.

    ENABLED_CASES names a list saved from another build of the same tests
    (make regressions: a regression patch changes kernel code, not which
    cases exist), which saves a boot per patch."""
    if os.environ.get('ENABLED_CASES'):
        return json.loads(read(os.environ['ENABLED_CASES']))['cases']
    cache = os.path.join(BUILD_DIR, '.fs-kunit-cases')
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(read(cache))
        if data['stamp'] == stamp:
            return data['cases']
    proc = kunit(tree, 'exec', '--list_tests', '--timeout=300', stdout=subprocess.PIPE)
    # dict: MODE=modules lists each module's cases at each of its two loads.
    cases = list(dict.fromkeys(line for line in proc.stdout.splitlines()
                               if re.match(r'^[^\s.]+\.[^\s.]+$', line)))
    if proc.returncode or not cases:
        sys.stdout.write(proc.stdout)
        raise RunError('the kernel did not list its test cases (log: %s/test.log)' % BUILD_DIR)
    with open(cache, 'w') as f:
        json.dump({'stamp': stamp, 'cases': cases}, f)
    return cases


def write_provenance(tree, tree_id, stamp, cases):
    series = [line.split('#')[0].split()
              for line in read(os.path.join(TOP, 'patches', 'series')).decode().splitlines()]
    info = {
        'package': 'linux-source-6.12',
        'version': read(os.path.join(tree, '.git', 'fs-kunit-version')).decode().strip(),
        'tree': tree_id,
        'stamp': stamp,  # same stamp, same kernel: make regressions reuses this run
        'series': [p[0] for p in series if p],
        'extra_patches': EXTRA.split(),
        'profile': PROFILE,
        'kunitconfig': ' '.join(os.path.relpath(path, TOP) for path in KUNITCONFIGS),
        'filter': FILTER,
        'accel': os.environ.get('KUNIT_QEMU_ACCEL') or 'tcg',
        'cases': cases,
        'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
    }
    with open(os.path.join(RESULTS, 'tested.json'), 'w') as f:
        json.dump(info, f, indent=1)
    return info


def execute(tree, expected, info):
    args = ['exec', '--timeout=%d' % TIMEOUT, '--json=' + os.path.join(RESULTS, 'kunit.json')]
    each_line = None
    if MODE == 'modules':
        # kunit.py would parse only the built-in tests' (empty) KTAP: show which
        # module is loading instead, and have kunit.py parse ours afterwards.
        args = ['exec', '--timeout=%d' % TIMEOUT, '--raw_output=all']

        def each_line(line):
            m = re.search(r'modules-init: (load \d of \S+)', line)
            if m:
                say(m.group(1))
    if FILTER:
        args.append(FILTER)  # kunit.py's filter_glob is positional
    console = os.path.join(BUILD_DIR, 'test.log')
    with contextlib.suppress(OSError):
        os.unlink(console)  # the listing boot's log must not pass for this one
    t = time.monotonic()
    rc = kunit(tree, *args, each_line=each_line).returncode  # a failed case also makes it non-zero
    elapsed = time.monotonic() - t
    if not os.path.exists(console):
        raise RunError('kunit.py exec failed (exit %d) before QEMU ran' % rc)
    log = read(console).decode(errors='replace').splitlines()
    with open(os.path.join(RESULTS, 'console.log'), 'w') as f:
        f.write('\n'.join(log) + '\n')
    suites = ktap.parse(log)
    if suites is None:
        raise RunError('the kernel printed no KTAP: did it boot? log kept in %s/console.log'
                       % RESULTS)
    if MODE == 'modules':
        name_reloads(suites)
    if any(arg.startswith('kmemleak.') for arg in KERNEL_ARGS):
        ktap.require_leak_scans(suites)
    with open(os.path.join(RESULTS, 'kunit.ktap'), 'w') as f:
        f.write('\n'.join(ktap.to_ktap(suites)) + '\n')
    if MODE == 'modules':
        kunit(tree, 'parse', '--json=' + os.path.join(RESULTS, 'kunit.json'),
              os.path.join(RESULTS, 'kunit.ktap'))
    with contextlib.suppress(OSError, ValueError):
        with open(os.path.join(RESULTS, 'kunit.json')) as f:
            data = json.load(f)
        with open(os.path.join(RESULTS, 'kunit.json'), 'w') as f:
            json.dump(ktap.mark_json(data, suites), f, indent=4)
    missing = ktap.missing_cases(suites, expected)
    props = {'version': info['version'], 'tree': info['tree'],
             'extra_patches': ' '.join(info['extra_patches'])}
    ktap.junit(suites, missing, props).write(os.path.join(RESULTS, 'junit.xml'),
                                             encoding='unicode', xml_declaration=True)
    counts = ktap.count(suites, missing)
    cases = [{'name': path, 'status': test.status, 'reason': test.reason,
              'reports': test.reports} for path, test in ktap.leaves(suites)]
    cases += [{'name': name, 'status': ktap.ERROR, 'reason': 'never reported'}
              for name in missing]
    with open(os.path.join(RESULTS, 'cases.json'), 'w') as f:
        json.dump(cases, f, indent=1)
    for path, test in ktap.leaves(suites):
        if test.status in (ktap.FAIL, ktap.ERROR):
            say('%s: %s%s' % (test.status, path, ' (' + test.reason + ')' if test.reason else ''))
    if missing:
        said = [s.name for s in suites if s.status == ktap.ERROR]
        panic = any('Kernel panic' in line for line in log)
        say('%s %s; these cases never reported: %s; log kept in %s' % (
            'the kernel panicked' if panic else 'the kernel stopped (hang or timeout)',
            'while %s was running' % ', '.join(said) if said else 'before any suite started',
            ', '.join(missing),
            os.path.join(RESULTS, 'console.log')))
    with open(os.path.join(RESULTS, 'summary.txt'), 'w') as f:
        f.write(ktap.summary_line(counts) + '\n')
    say('tests ran in %.1f s (QEMU boot included)' % elapsed)
    return counts


def main():
    # SIGTERM (a CI time-out, kill) unwinds like ^C: children stopped, tree restored.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(RESULTS, exist_ok=True)
    for name in ('summary.txt', 'junit.xml', 'kunit.json', 'kunit.ktap', 'console.log',
                 'cases.json', 'tested.json'):
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(RESULTS, name))
    os.makedirs(WORKDIR, exist_ok=True)
    lock = open(os.path.join(WORKDIR, '.lock'), 'w')
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        say('waiting for another run on %s to finish' % WORKDIR)
        fcntl.flock(lock, fcntl.LOCK_EX)
    tree = tree_path()
    try:
        phases, t = [], time.monotonic()
        if os.environ.get('FS_KUNIT_PACKAGES_SECONDS'):  # make run timed deps.sh
            phases.append('packages %s s' % os.environ['FS_KUNIT_PACKAGES_SECONDS'])

        def phase(name):
            nonlocal t
            phases.append('%s %.0f s' % (name, time.monotonic() - t))
            t = time.monotonic()
        tree_id = tree_sync(EXTRA)
        phase('tree')
        if ALONE and not os.path.exists(KUNITCONFIG):
            raise RunError('ALONE=%s: the patched tree has no %s' % (ALONE, KUNITCONFIG))
        if MODE == 'modules':
            write_modules_kunitconfig()
        stamp = build(tree, tree_id)
        phase('build')
        if MODE == 'modules':
            modules = make_initramfs()
        cases = enabled_cases(tree, stamp)
        phase('case list')
        if MODE == 'modules':
            # Each module's suites run twice; the init checks every unload.  (A
            # list saved by make regressions has these names already.)
            plain = [c for c in cases if '@' not in c.split('.')[0] and
                     not c.startswith('modules.')]
            cases = list(dict.fromkeys(
                plain + ['%s@reload.%s' % tuple(c.split('.', 1)) for c in plain] +
                ['modules.%s_unloads_cleanly' % m for m in modules]))
        if os.environ.get('LIST_ONLY') == '1':
            with open(os.path.join(RESULTS, 'enabled-cases.json'), 'w') as f:
                json.dump({'stamp': stamp, 'cases': cases}, f)
            return 0
        expected = [c for c in cases if wanted(c)]
        if not expected:
            raise RunError('FILTER=%s matches none of the %d enabled cases (try e.g. %s)'
                           % (FILTER, len(cases), cases[0].split('.')[0] + '.*'))
        info = write_provenance(tree, tree_id, stamp, expected)
        counts = execute(tree, expected, info)
        phase('tests')
        say('time per phase: ' + ', '.join(phases))
    except RunError as e:
        print('run: error: %s' % e, file=sys.stderr)
        return 2
    finally:
        if EXTRA and os.environ.get('KEEP_EXTRA') != '1':
            say('restoring the tree without EXTRA_PATCHES')
            tree_sync('')
    print(ktap.summary_line(counts))
    ok = counts[ktap.FAIL] + counts[ktap.ERROR] == 0 and counts[ktap.PASS] > 0
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

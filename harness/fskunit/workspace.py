# SPDX-License-Identifier: GPL-2.0
"""One WORKDIR: its kernel tree, build directories and compile cache, held
under an exclusive lock for as long as the Workspace lives.  Nothing else
touches the tree, the lock or the sync record.

    with Workspace(cfg) as ws:
        run = ws.run(cfg)          # sync, build, list the cases, boot, judge

A Run holds the cases, the log and the phase times; results/ is written
from it."""

import concurrent.futures
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
from dataclasses import dataclass, field
from typing import Dict, List

from . import catalogue, clock, gate, results, timing
from .config import Config
from .tree import Tree, TreeError


class RunError(Exception):
    pass


def say(msg):
    print('run: ' + msg, flush=True)


@dataclass
class Run:
    cfg: Config
    tree_id: str = ''
    stamp: str = ''
    expected: List[str] = field(default_factory=list)
    suites: List[results.Test] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)
    cases: List[dict] = field(default_factory=list)
    counts: Dict[str, int] = field(default_factory=dict)
    phases: List[tuple] = field(default_factory=list)
    log: List[str] = field(default_factory=list)

    @property
    def summary(self):
        return results.summary_line(self.counts)

    @property
    def ok(self):
        c = self.counts
        return c[results.FAIL] + c[results.ERROR] == 0 and c[results.PASS] > 0


def module_depends(ko):
    """The modules a .ko's bytes say it needs (modinfo's depends=)."""
    m = re.search(rb'(?:^|\0)depends=([^\0]*)\0', ko)
    return [d.replace('-', '_') for d in m.group(1).decode().split(',') if d] if m else []


def load_order(names, depends):
    """@names with each after those of them it depends on: modules.order is
    link order (fs/ before lib/), and insmod, unlike modprobe, loads nothing
    a module needs (the fixtures need xz_dec when nothing built in does)."""
    out, seen = [], set()

    def visit(name):
        if name in seen or name not in names:
            return
        seen.add(name)
        for dep in depends.get(name, ()):
            visit(dep)
        out.append(name)
    for name in names:
        visit(name)
    return out


class Progress(threading.Thread):
    """One line now and then while make runs: objects compiled so far,
    elapsed time and, in a cold build, what is probably left against the
    count of the last cold build in this directory.  A terminal gets the line
    rewritten every few seconds; a log (CI) a new line every 30 s."""

    def __init__(self, build_dir):
        super().__init__(daemon=True)
        self.build_dir, self.t0, self.done = build_dir, time.time(), threading.Event()
        self.count_file = os.path.join(build_dir, '.fs-kunit-objects')
        self.tty = sys.stdout.isatty()
        # Where the thread that starts the build writes (the regression
        # proof's builders each write to their patch's log: proof.ThreadOut).
        self.out = getattr(sys.stdout, 'current', lambda: sys.stdout)()
        # Every kernel compiles init/main.o; vmlinux alone is no sign (a
        # failed link removes it, and the count of a relink was kept so).
        self.cold = not os.path.exists(os.path.join(build_dir, 'init', 'main.o'))
        try:
            with open(self.count_file) as f:
                self.last = int(f.read())
        except (OSError, ValueError):
            self.last = 0

    def compiled(self):
        n = 0
        for root, _, files in os.walk(self.build_dir):
            for f in files:
                if f.endswith('.o'):
                    with contextlib.suppress(OSError):
                        n += os.stat(os.path.join(root, f)).st_mtime >= self.t0
        return n

    def line(self):
        n, t = self.compiled(), time.time() - self.t0
        msg = 'build: %d objects compiled' % n
        if self.last and self.cold:
            msg += ' of about %d' % self.last
            if n:
                msg += ', about %.0f s left' % max(0, t * (self.last - n) / n)
        return msg + ', %.0f s so far' % t

    def run(self):
        while not self.done.wait(5 if self.tty else 30):
            if self.tty:
                self.out.write('\r' + self.line() + '\033[K')
            else:
                self.out.write('run: %s\n' % self.line())
            self.out.flush()

    def stop(self, ok):
        self.done.set()
        if self.tty:
            self.out.write('\n')
        n = self.compiled()
        if ok and n and self.cold:
            with open(self.count_file, 'w') as f:
                f.write(str(n))
        return n


def read(path):
    with open(path, 'rb') as f:
        return f.read()


# Every kunit.py running, in whichever thread: a lane's thread blocked
# reading a guest that prints nothing (a hang) is not interrupted by the
# signal the main thread gets, so stop_all() ends its kunit.py (and QEMU).
RUNNING = set()

# Every build compiles through the shared cache (kunit.py build and make alone).
CCACHE_CC = 'CC=ccache gcc'


def _stop(proc):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGCONT)  # a throttled guest is stopped
        os.killpg(proc.pid, signal.SIGTERM)


def stop_all():
    """make was interrupted (SIGTERM, ^C): every kunit.py and its QEMU stop."""
    for proc in list(RUNNING):
        _stop(proc)


class Workspace:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        os.makedirs(cfg.workdir, exist_ok=True)
        self._lock = None
        if cfg.builder:
            # The proof's second builder: its run holds WORKDIR's lock, and
            # its tree is a clone of the first's.
            self.tree = Tree(cfg.home, cfg.top, origin=cfg.with_(builder=0).tree)
            return
        self._lock = open(cfg.lock_path, 'w')
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            say('waiting for another run on %s to finish' % cfg.workdir)
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.tree = Tree(cfg.workdir, cfg.top)
        clock.export(cfg.workdir, cfg.top)

    def close(self):
        if self._lock:
            self._lock.close()
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the tree --------------------------------------------------------------
    def sync(self, extra=()):
        """The tree at pristine + series + tests + @extra; its tree id."""
        try:
            return self.tree.sync(tuple(extra))
        except TreeError as e:
            raise RunError('the tree could not be prepared: %s' % e)

    # -- kunit.py --------------------------------------------------------------
    def kunit(self, cfg, *args, stdout=None, each_line=None, qemu_args=()):
        """kunit.py in its own process group: if we are stopped, so are its
        make and QEMU.  each_line: read its output as it comes."""
        tree = self.tree.path
        cmd = ['/usr/bin/python3', os.path.join(tree, 'tools/testing/kunit/kunit.py'), *args]
        if args[0] != 'parse':
            cmd += ['--arch=x86_64', '--build_dir=' + cfg.build_dir,
                    '--qemu_config=' + cfg.qemu_config]
        if args[0] == 'exec':
            cmd += ['--kernel_args=' + a for a in cfg.kernel_args]
            extra = list(qemu_args)
            if cfg.init:
                extra += ['-initrd', cfg.initramfs]
            if extra:
                cmd.append('--qemu_args=' + ' '.join(extra))
        if args[0] == 'build':
            # Every build directory shares one cache: what another
            # configuration compiled already is not compiled again.
            cmd.append('--make_options=' + CCACHE_CC)
            cmd += ['--make_options=' + o for o in cfg.make_options]
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1', KUNIT_QEMU_ACCEL=cfg.accel,
                   **cfg.compile_env(tree))
        return self._call(cmd, env, stdout, each_line,
                          cfg.slowdown if args[0] == 'exec' else 1)

    def _call(self, cmd, env, stdout=None, each_line=None, slowdown=1):
        """@cmd in the tree, in its own process group (stop_all() ends it)."""
        if stdout is None and each_line is None:
            # Through sys.stdout, so that a caller may keep it (a regression
            # patch's run.log).
            def each_line(line):
                sys.stdout.write(line)
                sys.stdout.flush()
        proc = subprocess.Popen(cmd, cwd=self.tree.path, env=env, text=True,
                                stdout=subprocess.PIPE if each_line else stdout,
                                stderr=subprocess.STDOUT if each_line else None,
                                errors='replace', start_new_session=True)
        RUNNING.add(proc)
        throttle = Throttle(proc.pid, slowdown) if slowdown > 1 else None
        try:
            if each_line:
                for line in proc.stdout:
                    each_line(line)
            out, _ = proc.communicate()
        except BaseException:
            _stop(proc)
            proc.wait()
            raise
        finally:
            RUNNING.discard(proc)
            if throttle:
                throttle.stop()
        return subprocess.CompletedProcess(cmd, proc.returncode, out)

    # -- build -----------------------------------------------------------------
    def stamp(self, cfg, tree_id):
        h = hashlib.sha256()
        parts = [tree_id.encode(), read(cfg.qemu_config), ' '.join(cfg.kernel_args).encode()]
        if cfg.make_options:
            parts.append(' '.join(cfg.make_options).encode())
        for part in parts + [read(path) for path in cfg.kunitconfigs]:
            h.update(part + b'\0')
        return h.hexdigest()

    def _write_kunitconfig(self, cfg):
        """cfg.written_kunitconfig, from kunitconfig (config.py says why)."""
        text = read(cfg.base_kunitconfig).decode()
        if cfg.mode == 'modules':
            text = re.sub(r'^(CONFIG_\w+_KUNIT_TESTS?)=y$', r'\1=m', text, flags=re.M)
        if cfg.variant == 'mutants':
            for line in read(os.path.join(cfg.top, 'kunitconfig.mutants')).decode().splitlines():
                name = re.match(r'^(CONFIG_\w+)=', line)
                if name:
                    text, n = re.subn(r'^%s=.*$' % name.group(1), lambda _: line, text,
                                      flags=re.M)
                    text += '' if n else line + '\n'
        with contextlib.suppress(OSError):
            if read(cfg.written_kunitconfig).decode() == text:
                return  # unchanged: keep its mtime
        with open(cfg.written_kunitconfig, 'w') as f:
            f.write(text)

    def build(self, cfg, tree_id, warnings=True):
        """Build unless the last successful build had the same inputs; then
        the warning gate (gate.py).  Returns the build's stamp."""
        if cfg.alone and not os.path.exists(cfg.base_kunitconfig):
            raise RunError('ALONE=%s: the patched tree has no %s'
                           % (cfg.alone, cfg.base_kunitconfig))
        if cfg.written_kunitconfig:
            self._write_kunitconfig(cfg)
        stamp = self.stamp(cfg, tree_id)
        stamp_file = os.path.join(cfg.build_dir, '.fs-kunit-stamp')
        kernel = os.path.join(cfg.build_dir, 'arch/x86/boot/bzImage')
        built = False
        with contextlib.suppress(OSError):
            built = read(stamp_file).decode() == stamp and os.path.exists(kernel)
        if built:
            say('kernel is up to date: not building')
        else:
            os.makedirs(cfg.build_dir, exist_ok=True)
            with contextlib.suppress(OSError):
                os.unlink(stamp_file)
            say('building (incremental, %s) in %s' % (cfg.describe(), cfg.build_dir))
            t = time.monotonic()
            progress = Progress(cfg.build_dir)
            progress.start()
            rc = self.make(cfg) if self.config_unchanged(cfg) else None
            if rc is None:
                rc = self.kunit(cfg, 'build', *['--kunitconfig=' + p for p in cfg.kunitconfigs],
                                '--jobs=%d' % cfg.jobs).returncode
            n = progress.stop(rc == 0)
            if rc == 0:
                self.config_built(cfg)
            if rc:
                raise RunError('the kernel did not build (errors above)%s' % (
                    '; EXTRA_PATCHES=' + ' '.join(cfg.extra_patches)
                    if cfg.extra_patches else ''))
            say('built in %.0f s (%d objects compiled)' % (time.monotonic() - t, n))
            with open(stamp_file, 'w') as f:
                f.write(stamp)
        if warnings:
            try:
                new = gate.check_build(self.tree, cfg.build_dir, cfg.ccache_dir, stamp)
            except gate.GateError as e:
                raise RunError('the warning gate could not compile (gate.py): %s' % e)
            if new:
                raise RunError('the series adds compiler warnings (gate.py):\n  ' +
                               '\n  '.join(new))
        return stamp

    # -- make alone, when the configuration is what it was ------------------------
    # kunit.py build runs make olddefconfig before every make: 6 of the 20 s
    # of a regression patch's rebuild here.  When nothing that decides the
    # .config has changed since the last build in this directory (the files
    # kunit.py gets, make's options, and the .config itself), make alone
    # builds what kunit.py would.  A patch that changes a Kconfig file makes
    # kbuild's syncconfig rewrite the .config: then kunit.py build runs after
    # all, and checks the options again.
    CONFIG_RECORD = '.fs-kunit-config'

    def _config_key(self, cfg):
        h = hashlib.sha256()
        for part in [read(cfg.qemu_config), ' '.join(cfg.make_options).encode()] + \
                [read(p) for p in cfg.kunitconfigs]:
            h.update(part + b'\0')
        with contextlib.suppress(OSError):
            return h.hexdigest() + ' ' + hashlib.sha256(
                read(os.path.join(cfg.build_dir, '.config'))).hexdigest()
        return ''

    def config_unchanged(self, cfg):
        with contextlib.suppress(OSError):
            key = self._config_key(cfg)
            record = os.path.join(cfg.build_dir, self.CONFIG_RECORD)
            return bool(key) and read(record).decode() == key
        return False

    def config_built(self, cfg):
        with open(os.path.join(cfg.build_dir, self.CONFIG_RECORD), 'w') as f:
            f.write(self._config_key(cfg))

    def make(self, cfg):
        """make's exit code, or None when the .config changed under it
        (kunit.py build then runs)."""
        say('the configuration is as last built: make alone, without olddefconfig')
        record = os.path.join(cfg.build_dir, self.CONFIG_RECORD)
        cmd = ['make', 'all', 'compile_commands.json', 'ARCH=x86_64', 'O=' + cfg.build_dir,
               '--jobs=%d' % cfg.jobs, CCACHE_CC, *cfg.make_options]
        env = dict(os.environ, **cfg.compile_env(self.tree.path))
        out = []
        rc = self._call(cmd, env, each_line=out.append).returncode
        if rc:
            sys.stdout.write(''.join(out[-200:]))
            return rc
        if not self.config_unchanged(cfg):
            os.unlink(record)
            say('make changed the .config (a Kconfig file changed): kunit.py build')
            return None
        return 0

    # -- cases -----------------------------------------------------------------
    def make_initramfs(self, cfg):
        """busybox and cfg.init as /init; MODE=modules adds every module the
        build made, test modules (those with KUnit suites) in build order.
        Returns the test modules' names."""
        modules = cfg.mode == 'modules'
        order = read(os.path.join(cfg.build_dir, 'modules.order')).decode().split() \
            if modules else []
        staging = tempfile.mkdtemp(prefix='initramfs.', dir=cfg.build_dir)
        try:
            for d in ('bin', 'dev', 'lib/modules', 'proc', 'sys', 'tmp'):
                os.makedirs(os.path.join(staging, d))
            shutil.copy('/bin/busybox', os.path.join(staging, 'bin'))
            # /init's interpreter; the init installs busybox's other applets.
            os.symlink('busybox', os.path.join(staging, 'bin', 'sh'))
            shutil.copy(cfg.init, os.path.join(staging, 'init'))
            os.chmod(os.path.join(staging, 'init'), 0o755)
            tests, libs, depends = [], [], {}
            for rel in order:
                ko = os.path.join(cfg.build_dir, os.path.splitext(rel)[0] + '.ko')
                name = os.path.basename(ko)[:-3].replace('-', '_')  # as the kernel names it
                shutil.copy(ko, os.path.join(staging, 'lib', 'modules', name + '.ko'))
                data = read(ko)
                (tests if b'.kunit_test_suites' in data else libs).append(name)
                depends[name] = module_depends(data)
            libs = load_order(libs, depends)
            for name, names in (('order', tests), ('libs', libs)):
                with open(os.path.join(staging, 'lib', 'modules', name), 'w') as f:
                    f.write('\n'.join(names) + '\n')
            with open(cfg.initramfs, 'wb') as out:
                subprocess.run('find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0',
                               shell=True, cwd=staging, stdout=out, check=True)
            # What the listing boot depends on beside the kernel (cases()).
            with open(cfg.initramfs + '.plan', 'w') as f:
                f.write('%s\n%s\n%s\n' % (hashlib.sha256(read(cfg.init)).hexdigest(),
                                          ' '.join(libs), ' '.join(tests)))
        finally:
            shutil.rmtree(staging)
        if not modules:
            return ()
        if not tests:
            raise RunError('the modules build made no test module (see %s/modules.order)'
                           % cfg.build_dir)
        say('initramfs: %d test modules, %d others: %s' % (len(tests), len(libs),
                                                           ' '.join(tests)))
        return tests

    def cases(self, cfg, stamp, modules=()):
        """suite.case for every case the kernel has, listed once per build
        (kunit.py exec --list_tests, a boot); MODE=modules adds each suite's
        second load (suite@reload) and the unload check of every module."""
        cache = os.path.join(cfg.build_dir, '.fs-kunit-cases')
        cases = None
        if cfg.init and os.path.exists(cfg.initramfs + '.plan'):
            # The listing boots the init too: a module it could not load
            # listed nothing, and a new init or load order lists anew.
            stamp += ' ' + hashlib.sha256(read(cfg.initramfs + '.plan')).hexdigest()
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(read(cache))
            if data['stamp'] == stamp:
                cases = data['cases']
        if cases is None:
            proc = self.kunit(cfg, 'exec', '--list_tests', '--timeout=%d'
                              % timing.timeout(cfg, []), stdout=subprocess.PIPE)
            # dict: MODE=modules lists each module's cases at each of its loads.
            cases = list(dict.fromkeys(line for line in proc.stdout.splitlines()
                                       if re.match(r'^[^\s.]+\.[^\s.]+$', line)))
            if proc.returncode or not cases:
                sys.stdout.write(proc.stdout or '')
                raise RunError('the kernel did not list its test cases (log: %s/test.log)'
                               % cfg.build_dir)
            with open(cache, 'w') as f:
                json.dump({'stamp': stamp, 'cases': cases}, f)
        if cfg.mode == 'modules':
            plain = [c for c in cases if '@' not in c.split('.')[0]
                     and not c.startswith('modules.')]
            cases = list(dict.fromkeys(
                plain + ['%s@reload.%s' % tuple(c.split('.', 1)) for c in plain] +
                ['modules.%s_unloads_cleanly' % m for m in modules]))
        return cases

    @staticmethod
    def wanted(cfg, case):
        """Whether FILTER asks for @case.  The kernel filters a module's
        suites by their own name at both loads; the init checks every
        module's unload."""
        if not cfg.filter:
            return True
        if cfg.mode == 'modules':
            if case.startswith('modules.'):
                return True
            case = case.replace('@reload.', '.', 1)
        return catalogue.glob_match(cfg.filter, case)

    # -- run -------------------------------------------------------------------
    def execute(self, cfg, run):
        """Boot the built kernel with the run's filter and judge its log."""
        os.makedirs(cfg.results, exist_ok=True)
        seconds = timing.timeout(cfg, sorted({c.split('.')[0] for c in run.expected}))
        args = ['exec', '--timeout=%d' % seconds]
        each_line = None
        if cfg.mode == 'modules':
            # kunit.py would parse only the built-in tests' (empty) KTAP:
            # say which module is loading instead.
            args.append('--raw_output=all')

            def each_line(line):
                m = re.search(r'modules-init: (load \d of \S+)', line)
                if m:
                    say(m.group(1))
                elif not re.match(r'^\[\s*\d+\.\d+\]', line):
                    sys.stdout.write(line)  # kunit.py's own, not the console's
        if cfg.filter:
            args.append(cfg.filter)  # kunit.py's filter_glob is positional
        shards = self.shards(cfg, run.expected)
        if cfg.runner == 'lava':
            logs = [self.boot_lava(cfg, seconds)]
        elif shards:
            logs = self.boot_shards(cfg, shards)
        else:
            logs = [self.boot_qemu(cfg, args, each_line)]
        run.log = logs[0] if len(logs) == 1 else [
            line for (glob, _), log in zip(shards, logs)
            for line in ['# fs-kunit: the boot of the suites %s' % glob] + log]
        with open(os.path.join(cfg.results, 'console.log'), 'w') as f:
            f.write('\n'.join(run.log) + '\n')
        suites = []
        for log in logs:
            parsed = results.parse(log, self.tree.path)
            if parsed is None:
                raise RunError('the kernel printed no KTAP: did it boot? log kept in '
                               '%s/console.log' % cfg.results)
            suites += parsed
            if not cfg.filter and not cfg.extra_patches:
                timing.record(cfg, log)
        if shards:
            order = {s: k for k, s in enumerate(dict.fromkeys(
                c.split('.')[0] for c in run.expected))}
            suites.sort(key=lambda s: order.get(s.name, len(order)))
        if cfg.mode == 'modules':
            name_reloads(suites)
        if cfg.leak_scans:
            results.require_leak_scans(suites)
        run.suites = suites
        run.missing = results.missing_cases(suites, run.expected)
        run.counts = results.count(suites, run.missing)
        run.cases = [{'name': path, 'status': test.status, 'reason': test.reason,
                      'reports': test.reports} for path, test in results.leaves(suites)]
        run.cases += [{'name': name, 'status': results.ERROR, 'reason': 'never reported'}
                      for name in run.missing]
        write_results(cfg, run, self.tree)

    def boot_qemu(self, cfg, args, each_line=None):
        """kunit.py exec @args: the console it logged."""
        console = os.path.join(cfg.build_dir, 'test.log')
        with contextlib.suppress(OSError):
            os.unlink(console)  # the listing boot's log must not pass for this one
        rc = self.kunit(cfg, *args, each_line=each_line).returncode
        if not os.path.exists(console):
            raise RunError('kunit.py exec failed (exit %d) before QEMU ran' % rc)
        return read(console).decode(errors='replace').splitlines()

    # -- a run's suites over several guests ---------------------------------------
    # Under TCG a guest keeps one core busy; the whole suite in one boot left
    # the other core idle for its 90 s (the debug kernel's 560 s).  Only a
    # built-in run of every case is split: a filter is the user's one glob,
    # MODE=modules's init loads every module in each boot, an init (make
    # coverage) writes its data once per boot, ALONE= runs as upstream does.
    @staticmethod
    def shards(cfg, expected):
        """[(glob, suites)] of each boot, or None: one boot."""
        if (cfg.runner != 'qemu' or cfg.mode != 'builtin' or cfg.filter or cfg.init
                or cfg.alone or cfg.boots < 2):
            return None
        split = timing.shards(cfg, expected, cfg.boots)
        return split if len(split) > 1 else None

    def boot_shards(self, cfg, shards):
        """Each shard booted at once from a lane of its own: their consoles.
        The first's kunit.py prints as it goes, the others' when they end."""
        held = [[] for _ in shards]

        def boot(k):
            glob, suites = shards[k]
            lane = boot_lane(cfg, cfg.with_(variant='-'.join(
                filter(None, (cfg.variant, 'shard%d' % k)))))
            args = ['exec', '--timeout=%d' % timing.timeout(cfg, suites), glob]
            return self.boot_qemu(lane, args, held[k].append if k else None)
        for k, (glob, suites) in enumerate(shards):
            say('boot %d of %d: %s (%s)' % (k + 1, len(shards), glob, ' '.join(suites)))
        with concurrent.futures.ThreadPoolExecutor(len(shards) - 1) as pool:
            others = [pool.submit(boot, k) for k in range(1, len(shards))]
            try:
                logs = [boot(0)]
            finally:
                concurrent.futures.wait(others)
                for k, out in enumerate(held[1:], 2):
                    say('boot %d of %d:' % (k, len(shards)))
                    sys.stdout.write(''.join(out))
        return logs + [f.result() for f in others]

    def boot_lava(self, cfg, seconds):
        """The boot as a LAVA job run by lava-run: the console it recorded."""
        from . import lava  # only RUNNER=lava: it imports yaml
        definition = lava.job(cfg, self.tree.path, cfg.filter or 'all suites', seconds,
                              cfg.filter)
        directory = os.path.join(cfg.results, 'lava')
        say('booting through lava-run (job, device and LAVA log in %s)' % directory)
        try:
            lines, _, seconds = lava.run(cfg, definition, directory)
        except lava.LavaError as e:
            raise RunError(str(e))
        say('lava-run: %d console lines in %.1f s' % (len(lines), seconds))
        return lines

    def prepare(self, cfg, phase=lambda name: None, listed=None):
        """The tree synced, the kernel built (and its initramfs made): (tree
        id, stamp, the enabled cases).  @listed spares the listing boot."""
        tree_id = self.sync(cfg.extra_patches)
        phase('tree')
        # A regression patch may well add a warning: the gate is the series'.
        stamp = self.build(cfg, tree_id, warnings=not cfg.extra_patches)
        phase('build')
        modules = self.make_initramfs(cfg) if cfg.init else ()
        cases = listed if listed is not None else self.cases(cfg, stamp, modules)
        phase('case list')
        return tree_id, stamp, cases

    def run(self, cfg=None):
        """sync, build, list the cases, boot and judge; the tree is put back
        without EXTRA_PATCHES afterwards (the regression proof, which moves
        on to the next patch instead, builds and boots through prepare() and
        execute())."""
        cfg = cfg or self.cfg
        run = Run(cfg)
        t = time.monotonic()

        def phase(name):
            nonlocal t
            run.phases.append((name, time.monotonic() - t))
            t = time.monotonic()
        clear_results(cfg)
        try:
            run.tree_id, run.stamp, cases = self.prepare(cfg, phase)
            run.expected = [c for c in cases if self.wanted(cfg, c)]
            if not run.expected:
                raise RunError('FILTER=%s matches none of the %d enabled cases (try e.g. %s)'
                               % (cfg.filter, len(cases), cases[0].split('.')[0] + '.*'))
            write_provenance(cfg, run, self.tree)
            self.execute(cfg, run)
            phase('tests')
        finally:
            if cfg.extra_patches:
                say('restoring the tree without EXTRA_PATCHES')
                self.sync()
        return run


class Throttle(threading.Thread):
    """SLOWDOWN=N: QEMU (and kunit.py with it) held to 1/N of a core, as on
    a machine N times slower: the process group is stopped for (N-1)/N of
    every 100 ms.  The guest's clock goes on meanwhile, so its time-outs
    (the hung-task detector, KUnit's, the tests' own) meet a slow machine
    too, and so does the run's time-out on this side."""
    PERIOD = 0.1

    def __init__(self, pgid, factor):
        super().__init__(daemon=True)
        self.pgid, self.factor, self.done = pgid, factor, threading.Event()
        if factor > 1:
            self.start()

    def run(self):
        on = self.PERIOD / self.factor
        while not self.done.is_set():
            time.sleep(on)
            try:
                os.killpg(self.pgid, signal.SIGSTOP)
                self.done.wait(self.PERIOD - on)
                os.killpg(self.pgid, signal.SIGCONT)
            except ProcessLookupError:
                return

    def stop(self):
        self.done.set()
        if self.is_alive():
            self.join()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, signal.SIGCONT)


def name_reloads(suites):
    """The second load of a module runs its suites again: "suite@reload"."""
    seen = set()
    for suite in suites:
        if suite.name in seen:
            suite.name += '@reload'
        seen.add(suite.name)


def boot_lane(built, lane, extra=(), snapshot=False):
    """Make @lane's build directory one that kunit.py exec boots @built's
    kernel from: its own test.log, so two lanes boot at once.  A build that
    moves on while the lane boots (the proof's next batch) needs a
    @snapshot of its bzImage; a fixed one (the mutants' schemata kernel) is
    linked.  @extra: more files of @built's directory the boot reads."""
    boot = os.path.join(lane.build_dir, 'arch', 'x86', 'boot')
    os.makedirs(boot, exist_ok=True)
    image = os.path.join(boot, 'bzImage')
    source = os.path.join(built.build_dir, 'arch', 'x86', 'boot', 'bzImage')
    with contextlib.suppress(FileNotFoundError):
        os.unlink(image)
    if snapshot:
        shutil.copy(source, image)
    else:
        os.symlink(source, image)
    for name in ('.config',) + tuple(extra):
        shutil.copy(os.path.join(built.build_dir, name), os.path.join(lane.build_dir, name))
    return lane


def clear_results(cfg):
    """No result file of an earlier run may pass for this one's."""
    os.makedirs(cfg.results, exist_ok=True)
    for name in ('summary.txt', 'junit.xml', 'kunit.json', 'kunit.ktap', 'console.log',
                 'cases.json', 'tested.json'):
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(cfg.results, name))


def write_provenance(cfg, run, tree):
    info = {
        'package': 'linux-source-6.12',
        'version': tree.version,
        'tree': run.tree_id,
        'stamp': run.stamp,  # same stamp, same kernel: make regressions reuses this run
        'series': [p for p, _ in catalogue.read_series(cfg.top)],
        'extra_patches': list(cfg.extra_patches),
        'profile': cfg.profile,
        'mode': cfg.mode,
        'alone': cfg.alone,
        'kunitconfig': ' '.join(os.path.relpath(p, cfg.top) for p in cfg.kunitconfigs),
        'filter': cfg.filter,
        'accel': cfg.accel,
        'slowdown': cfg.slowdown,
        'cases': run.expected,
        'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
    }
    with open(os.path.join(cfg.results, 'tested.json'), 'w') as f:
        json.dump(info, f, indent=1)


def write_results(cfg, run, tree):
    with open(os.path.join(cfg.results, 'kunit.ktap'), 'w') as f:
        f.write('\n'.join(results.to_ktap(run.suites)) + '\n')
    with open(os.path.join(cfg.results, 'kunit.json'), 'w') as f:
        f.write(results.kernelci_json(run.suites, tree.path, cfg.build_dir) + '\n')
    props = {'version': tree.version, 'tree': run.tree_id,
             'extra_patches': ' '.join(cfg.extra_patches)}
    results.junit(run.suites, run.missing, props).write(
        os.path.join(cfg.results, 'junit.xml'), encoding='unicode', xml_declaration=True)
    with open(os.path.join(cfg.results, 'cases.json'), 'w') as f:
        json.dump(run.cases, f, indent=1)
    with open(os.path.join(cfg.results, 'summary.txt'), 'w') as f:
        f.write(run.summary + '\n')


def report(run):
    """What make run prints after the tests: failures, what never reported."""
    for path, test in results.leaves(run.suites):
        if test.status in (results.FAIL, results.ERROR):
            say('%s: %s%s' % (test.status, path, ' (' + test.reason + ')' if test.reason else ''))
    if run.missing:
        said = [s.name for s in run.suites if s.status == results.ERROR]
        panic = any('Kernel panic' in line for line in run.log)
        say('%s %s; these cases never reported: %s; log kept in %s' % (
            'the kernel panicked' if panic else 'the kernel stopped (hang or timeout)',
            'while %s was running' % ', '.join(said) if said else 'before any suite started',
            ', '.join(run.missing), os.path.join(run.cfg.results, 'console.log')))
    say('time per phase: ' + ', '.join('%s %.0f s' % p for p in run.phases))

# SPDX-License-Identifier: GPL-2.0
"""What a run is: the settings a user gives, and every path, fragment and
limit that follows from them.  Made once (Config.from_env()); nothing else
reads the environment for these, and nothing else derives a path."""

import dataclasses
import os
import re
from typing import Dict, Optional, Tuple

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_WORKDIR = '/var/tmp/fs-kunit'
PACKAGE = 'linux-source-6.12'

# A profile is a kernel configuration with its own build directory and
# results: the fragments added to kunitconfig, the kernel's command line,
# and the time its tests took on the machine docs/design.md describes
# (QEMU boot included), from which the run's time-out is made when this
# machine has not measured it yet (timing.py).  'debug' adds the checkers
# of kunitconfig.debug; kmemleak.verbose=1 makes a scan print each leak.
PROFILES: Dict[str, dict] = {
    'default': {'fragments': (), 'kernel_args': (), 'reference_seconds': 45},
    'debug': {'fragments': ('kunitconfig.debug',), 'kernel_args': ('kmemleak.verbose=1',),
              'reference_seconds': 300},
    # Our suites beside every upstream test the configuration allows.
    'alltests': {'fragments': ('kunitconfig.alltests',), 'kernel_args': (),
                 'reference_seconds': 60},
    # make coverage: gcov for the guarded files (make_options), whose data an
    # init writes to the console after the suites (harness/coverage-init.sh).
    'coverage': {'fragments': ('kunitconfig.coverage',), 'kernel_args': (),
                 'reference_seconds': 60, 'init': 'coverage-init.sh', 'gcov': True},
}
MODES = ('builtin', 'modules')
# Who boots the kernel: kunit.py exec, or a LAVA job run by lava-run (lava.py).
RUNNERS = ('qemu', 'lava')
# MODE=modules: every test loaded, unloaded and loaded again by an initramfs.
MODULES_REFERENCE_SECONDS = 45


class ConfigError(Exception):
    pass


def _words(text):
    return tuple(text.split()) if text else ()


@dataclasses.dataclass(frozen=True)
class Config:
    """One run's settings.  Derived values are properties, so that a copy
    with one setting changed (Config.with_()) derives everything anew."""
    workdir: str = DEFAULT_WORKDIR
    profile: str = 'default'
    mode: str = 'builtin'
    alone: str = ''                        # a test directory, e.g. fs/quota
    filter: str = ''                       # kunit.py's suite.case glob
    extra_patches: Tuple[str, ...] = ()    # applied on top for this run only
    timeout: Optional[int] = None          # seconds; None: from timing.py
    slowdown: int = 1                      # the guest held to 1/N of a core
    jobs: int = (os.cpu_count() or 1) + 1
    # Guests at once: under TCG each keeps one core busy (a run's suites in
    # as many boots, the proof's and the mutants' boots).
    boots: int = os.cpu_count() or 1
    accel: str = 'tcg'
    distcc_hosts: str = ''                 # DISTCC_HOSTS: compiles go on to distcc
    runner: str = 'qemu'                   # RUNNER: see RUNNERS
    results_dir: Optional[str] = None      # None: results/<profile>/<mode>/...
    top: str = TOP
    # A build of the same configuration from another tree (the mutant
    # schemata), or a directory that only boots another's kernel (a lane
    # of make mutants): its own build directory, beside the profile's.
    variant: str = ''
    # The regression proof's second builder (proof.py, BUILDERS): a tree and
    # build directories of its own in WORKDIR/builder1, beside the first's,
    # laid out alike, so that the one compile cache serves both.
    builder: int = 0

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise ConfigError('PROFILE=%s is not a profile (there are: %s)'
                              % (self.profile, ', '.join(PROFILES)))
        if self.mode not in MODES:
            raise ConfigError('MODE=%s is not a mode (there are: %s)'
                              % (self.mode, ', '.join(MODES)))
        if self.runner not in RUNNERS:
            raise ConfigError('RUNNER=%s is not a runner (there are: %s)'
                              % (self.runner, ', '.join(RUNNERS)))
        if self.alone and (not re.fullmatch(r'[\w.-]+(/[\w.-]+)*', self.alone) or
                           {'.', '..'} & set(self.alone.split('/'))):
            raise ConfigError('ALONE=%s is not a directory of the tree (e.g. fs/quota)'
                              % self.alone)
        if self.slowdown < 1:
            raise ConfigError('SLOWDOWN=%d: a factor of 1 or more' % self.slowdown)

    @classmethod
    def from_env(cls, env=None, **override):
        """The settings make passes (README's table); anything else is not read."""
        env = os.environ if env is None else env

        def number(name):
            value = env.get(name, '').strip()
            if not value:
                return None
            if not value.isdigit():
                raise ConfigError('%s=%s: a whole number' % (name, value))
            return int(value)
        values = dict(
            workdir=env.get('WORKDIR') or DEFAULT_WORKDIR,
            profile=env.get('PROFILE') or 'default',
            mode=env.get('MODE') or 'builtin',
            alone=env.get('ALONE', '').strip().strip('/'),
            filter=env.get('FILTER', '').strip(),
            extra_patches=tuple(os.path.abspath(p)
                                for p in _words(env.get('EXTRA_PATCHES', ''))),
            timeout=number('TIMEOUT'),
            slowdown=1 if number('SLOWDOWN') is None else number('SLOWDOWN'),
            jobs=number('JOBS') or (os.cpu_count() or 1) + 1,
            boots=number('BOOTS') or os.cpu_count() or 1,
            accel=env.get('KUNIT_QEMU_ACCEL') or 'tcg',
            distcc_hosts=env.get('DISTCC_HOSTS', '').strip(),
            runner=env.get('RUNNER', '').strip() or 'qemu',
        )
        values.update(override)
        return cls(**values)

    def with_(self, **changes):
        return dataclasses.replace(self, **changes)

    # -- where things are ---------------------------------------------------
    @property
    def home(self):
        """Where this builder's tree and build directories are."""
        return os.path.join(self.workdir, 'builder%d' % self.builder) if self.builder \
            else self.workdir

    @property
    def tree(self):
        return os.path.join(self.home, PACKAGE)

    @property
    def ccache_dir(self):
        return os.path.join(self.workdir, 'ccache')

    def compile_env(self, tree):
        """What every build's compiles get in their environment: one cache
        for every build directory (a configuration's objects are not
        compiled again by another), and with DISTCC_HOSTS, the cache's
        misses handed to distcc (CCACHE_PREFIX), which preprocesses here
        and compiles on the hosts (docs/scale.md)."""
        env = {'CCACHE_DIR': self.ccache_dir, 'CCACHE_MAXSIZE': '5G', 'CCACHE_BASEDIR': tree}
        if self.distcc_hosts:
            env.update(CCACHE_PREFIX='distcc', DISTCC_HOSTS=self.distcc_hosts)
        return env

    @property
    def lock_path(self):
        return os.path.join(self.workdir, '.lock')

    @property
    def suffix(self):
        return (('' if self.profile == 'default' else '-' + self.profile) +
                ('' if self.mode == 'builtin' else '-' + self.mode) +
                ('-alone-' + self.alone.replace('/', '-') if self.alone else '') +
                ('-' + self.variant if self.variant else ''))

    @property
    def build_dir(self):
        return os.path.join(self.home, 'build' + self.suffix)

    @property
    def results(self):
        if self.results_dir:
            return self.results_dir
        return os.path.join(self.top, 'results',
                            *([] if self.profile == 'default' else [self.profile]),
                            *([] if self.mode == 'builtin' else [self.mode]),
                            *(['alone', self.alone.replace('/', '-')] if self.alone else []))

    @property
    def initramfs(self):
        return os.path.join(self.build_dir, 'fs-kunit-modules.cpio')

    @property
    def init(self):
        """The initramfs's /init (harness/), or None: the kernel halts after
        its built-in suites."""
        if self.mode == 'modules':
            return os.path.join(self.top, 'harness', 'modules-init.sh')
        name = PROFILES[self.profile].get('init')
        return os.path.join(self.top, 'harness', name) if name else None

    @property
    def make_options(self):
        """What make is told beside the configuration: gcov for the objects
        of the guarded files (mutants/scope) in PROFILE=coverage.  kbuild
        matches GCOV_PROFILE_<name>.o by the object's name alone, so a
        super.o elsewhere is profiled too; the report keeps to the scope."""
        if not PROFILES[self.profile].get('gcov'):
            return ()
        from . import csource
        stems = sorted({os.path.basename(s.path)[:-2] for s in csource.scope(self.top)})
        return tuple('GCOV_PROFILE_%s.o=y' % s for s in stems)

    @property
    def qemu_config(self):
        return os.path.join(self.top, 'qemu-configs', 'x86_64.py')

    # -- what is built --------------------------------------------------------
    @property
    def base_kunitconfig(self):
        """kunitconfig, or the directory's .kunitconfig in the patched tree
        (as a developer runs kunit.py run --kunitconfig=fs/quota there)."""
        if self.alone:
            return os.path.join(self.tree, self.alone, '.kunitconfig')
        return os.path.join(self.top, 'kunitconfig')

    @property
    def written_kunitconfig(self):
        """kunitconfig as this build takes it, written to WORKDIR, or None:
        MODE=modules has its tests =m; a schemata kernel (make mutants) has
        kunitconfig.mutants's values in place of kunitconfig's, since
        kunit.py refuses two values of one option across fragments."""
        if self.mode != 'modules' and self.variant != 'mutants':
            return None
        return os.path.join(self.home, 'kunitconfig' + self.suffix)

    @property
    def kunitconfigs(self):
        """The fragments given to kunit.py, in order; kunitconfig stays the
        one list of our tests."""
        first = self.written_kunitconfig or self.base_kunitconfig
        rest = [os.path.join(self.top, f) for f in PROFILES[self.profile]['fragments']]
        if self.no_proc:
            rest.append(os.path.join(self.top, 'kunitconfig.noproc'))
        if self.mode == 'modules' or self.loadable:
            rest.append(os.path.join(self.top, 'kunitconfig.modules'))
        return [first] + rest

    @property
    def no_proc(self):
        """Whether kunitconfig.noproc is added: every kernel of the default
        and debug profiles, built in or modules, the proof's and the
        mutants' included (that file says why only they)."""
        return self.profile in ('default', 'debug') and not self.alone

    @property
    def loadable(self):
        """Whether a built-in kernel takes kunitconfig.modules too: the
        default profile's, so that its configuration and MODE=modules' differ
        in the tests' own symbols only, and the compile cache serves the
        module build every other object (docs/design.md, "Builds")."""
        return self.profile == 'default' and not self.alone

    @property
    def kernel_args(self):
        args = list(PROFILES[self.profile]['kernel_args'])
        if self.mode == 'modules':
            # The init's KTAP goes through /dev/kmsg, which would drop lines
            # past ten a burst.
            args.append('printk.devkmsg=on')
        return args

    @property
    def leak_scans(self):
        """Whether suites must end with a kmemleak scan (a kmemleak kernel)."""
        return any(a.startswith('kmemleak.') for a in self.kernel_args)

    @property
    def reference_seconds(self):
        """The tests' time on the machine docs/design.md describes."""
        if self.mode == 'modules':
            return MODULES_REFERENCE_SECONDS
        return PROFILES[self.profile]['reference_seconds']

    @property
    def env(self):
        """The settings as make passes them, for a child process (make
        check's clean-clone steps, the bench)."""
        out = {'WORKDIR': self.workdir, 'PROFILE': self.profile, 'MODE': self.mode,
               'ALONE': self.alone, 'FILTER': self.filter,
               'EXTRA_PATCHES': ' '.join(self.extra_patches),
               'KUNIT_QEMU_ACCEL': self.accel, 'JOBS': str(self.jobs),
               'BOOTS': str(self.boots),
               'SLOWDOWN': str(self.slowdown)}
        if self.timeout:
            out['TIMEOUT'] = str(self.timeout)
        if self.distcc_hosts:
            out['DISTCC_HOSTS'] = self.distcc_hosts
        if self.runner != 'qemu':
            out['RUNNER'] = self.runner
        return out

    def describe(self):
        parts = ['PROFILE=' + self.profile]
        if self.mode != 'builtin':
            parts.append('MODE=' + self.mode)
        if self.alone:
            parts.append('ALONE=' + self.alone)
        return ' '.join(parts)

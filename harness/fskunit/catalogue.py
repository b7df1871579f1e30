# SPDX-License-Identifier: GPL-2.0
"""What the repository declares, read from its files: the series (patches/
series), the suites (kunit-tests/) and the regression patches (regressions/,
their headers).  Counts, make series, make regression, make prove and the
regression proof all read them here."""

import dataclasses
import fnmatch
import glob
import os
import re
import subprocess
from typing import Dict, List, Optional, Tuple

from .config import TOP

# The image scripts go out with the series under this kernel path; here they
# are images/.  Every other file a patch adds is kunit-tests/<its kernel path>.
TOOLS = 'tools/testing/fs_kunit/'


def read_series(top=TOP) -> List[Tuple[str, List[str]]]:
    """[(patch file, [test files it adds])] in the order of patches/series:
    a patch a line, then the files it adds at their kernel paths (for make
    series); blank lines and #comments skipped."""
    entries = []
    with open(os.path.join(top, 'patches', 'series')) as f:
        for line in f:
            words = line.split('#', 1)[0].split()
            if words:
                entries.append((words[0], words[1:]))
    return entries


def series_patches(top=TOP):
    return [os.path.join(top, 'patches', p) for p, _ in read_series(top)]


def number(patch):
    return os.path.basename(patch).split('-', 1)[0]


def source(f, top=TOP):
    """Where the file a patch adds at kernel path @f is in this repository."""
    if f.startswith(TOOLS):
        return os.path.join(top, 'images', f[len(TOOLS):])
    return os.path.join(top, 'kunit-tests', f)


# A suite's name where its file declares it: .name = "x" in a struct kunit_suite.
SUITE = re.compile(r'struct kunit_suite \w+ = \{[^}]*?\.name\s*=\s*"(\w+)"')


def suite_files(top=TOP) -> Dict[str, str]:
    """{suite name: the file (under kunit-tests/) that declares it}."""
    found = {}
    for path in sorted(glob.glob(os.path.join(top, 'kunit-tests', '**', '*.c'), recursive=True)):
        with open(path) as f:
            text = f.read()
        if 'kunit_test_suite' not in text:
            continue
        for name in SUITE.findall(text):
            found[name] = os.path.relpath(path, os.path.join(top, 'kunit-tests'))
    return found


def glob_match(pattern: str, name: str) -> bool:
    """kunit.py's filter_glob: "suite_glob[.case_glob]" against suite.case."""
    suite, _, case = name.partition('.')
    sglob, dot, cglob = pattern.partition('.')
    return fnmatch.fnmatchcase(suite, sglob) and (not dot or fnmatch.fnmatchcase(case, cglob))


@dataclasses.dataclass
class Regression:
    """A patch under regressions/ that brings a bug back, and what its header
    asks of the runner (README: "Header fields of a regression patch")."""
    path: str
    suites: List[str]
    expect: List[str]
    may: List[str]
    check: Optional[str]
    profile: str
    mode: str
    report: str
    crash: str = ''  # Crash: the kernel stops in the named case (it runs alone)

    @property
    def name(self):
        return os.path.relpath(self.path, os.path.join(TOP, 'regressions'))[:-len('.patch')] \
            if self.path.startswith(os.path.join(TOP, 'regressions')) else \
            os.path.basename(self.path)[:-len('.patch')]

    @property
    def configuration(self):
        """How to run what the header asks for, as make run settings."""
        return 'PROFILE=' + self.profile + ('' if self.mode == 'builtin' else ' MODE=' + self.mode)

    def files(self):
        """The kernel files the patch touches."""
        r = subprocess.run(['git', 'apply', '--numstat', self.path], capture_output=True,
                           text=True)
        return r.stdout.split()[2::3]

    def problems(self):
        """What makes the header unusable, before anything runs."""
        if not self.check and not (self.suites and self.expect):
            return ['no Suites: or Expect-fail: line in the header']
        out = ['Expect-fail names a whole suite: ' + g for g in self.expect if whole_suite(g)]
        if self.profile not in ('default', 'debug'):
            out.append('Profile: %s is not debug or default' % self.profile)
        if self.mode not in ('builtin', 'modules'):
            out.append('Mode: %s is not builtin or modules' % self.mode)
        return out


def whole_suite(glob_):
    """An Expect-fail glob that names every case of a suite proves nothing
    about any one of them: a patch that breaks the suite's init passes it."""
    _, _, case = glob_.partition('.')
    return case.strip('*') == ''


def read_regression(path) -> Regression:
    fields: Dict[str, List[str]] = {}
    with open(path) as f:
        for line in f:
            if line.startswith('diff --git'):
                break
            key, sep, value = line.partition(':')
            if sep:
                fields.setdefault(key, []).append(value.strip())
    first = lambda k, d='': (fields.get(k) or [d])[0]  # noqa: E731
    return Regression(path=os.path.abspath(path),
                      suites=[s for v in fields.get('Suites', []) for s in v.split()],
                      expect=fields.get('Expect-fail', []),
                      may=fields.get('May-fail', []),
                      check=first('Check') or None,
                      profile=first('Profile', 'default'),
                      mode=first('Mode', 'builtin'),
                      report=first('Expect-report'),
                      crash=first('Crash'))


def regressions(top=TOP) -> List[Regression]:
    """Every regression patch of the repository, sorted by path."""
    return [read_regression(p) for p in
            sorted(glob.glob(os.path.join(top, 'regressions', '**', '*.patch'), recursive=True))]


def named_by(name, globs):
    return any(fnmatch.fnmatchcase(name, g) for g in globs)

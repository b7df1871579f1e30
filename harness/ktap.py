# SPDX-License-Identifier: GPL-2.0
"""KTAP from a kernel console log -> result tree, JUnit XML and the CI summary.

kunit.py already parses KTAP and writes KernelCI JSON; we keep our own small
parser for two things it does not give us: JUnit XML, and counts taken from
the kernel's own result lines (kunit.py's totals go wrong when a description
ends in a newline, and it cannot name cases that never reported because the
kernel died).  It runs without a kernel tree, so the harness tests need none.
"""

import fnmatch
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

PASS, FAIL, SKIP, ERROR = 'PASS', 'FAIL', 'SKIP', 'ERROR'

# printk prefix: "[    1.234567] " (the caller id variant "[T1] " too).
_PREFIX = re.compile(r'^\[\s*\d+\.\d+\](\[\s*[TC]\d+\])? ?')
_VERSION = re.compile(r'^\s*K?TAP version \d+')
_SUBTEST = re.compile(r'^(\s*)# Subtest: (\S+)')
_PLAN = re.compile(r'^(\s*)1\.\.(\d+)')
_RESULT = re.compile(r'^(\s*)(ok|not ok) \d+ (?:- )?([^#]*?)\s*(?:#\s*(\S+)\s*(.*))?$')


@dataclass
class Test:
    name: str
    status: str
    reason: str = ''
    log: List[str] = field(default_factory=list)
    children: List['Test'] = field(default_factory=list)
    expected: Optional[int] = None  # from the "1..N" plan


def _strip(line: str) -> str:
    return _PREFIX.sub('', line.rstrip('\n').expandtabs())


def parse(lines: Iterable[str]) -> Optional[List[Test]]:
    """Top-level tests (suites) in KTAP order, or None when there is no KTAP.

    Indentation gives depth: a test's "# Subtest:" header, plan and children
    stand one level deeper than its own result line.  A test whose result
    line never came (panic, hang, reboot) is reported with status ERROR.
    """
    started = False
    pending: Dict[int, List[Test]] = {}
    opened: Dict[int, str] = {}
    plans: Dict[int, int] = {}
    log: List[str] = []
    for raw in lines:
        line = _strip(raw)
        if not started:
            if _VERSION.match(line):
                started = True
            continue
        m = _RESULT.match(line)
        if m:
            depth = len(m.group(1)) // 4
            directive = (m.group(4) or '').upper()
            if directive == 'SKIP':
                status = SKIP
            else:
                status = PASS if m.group(2) == 'ok' else FAIL
            test = Test(m.group(3).strip(), status, (m.group(5) or '').strip(), log,
                        pending.pop(depth + 1, []), plans.pop(depth + 1, None))
            _close_deeper(pending, opened, plans, depth + 1)
            opened.pop(depth, None)
            if test.expected is not None and len(test.children) < test.expected:
                test.status = ERROR
                test.reason = 'only %d of %d subtests reported' % (len(test.children),
                                                                   test.expected)
            pending.setdefault(depth, []).append(test)
            log = []
            continue
        m = _SUBTEST.match(line)
        if m:
            opened[len(m.group(1)) // 4 - 1] = m.group(2)
            continue
        m = _PLAN.match(line)
        if m:
            plans[len(m.group(1)) // 4] = int(m.group(2))
            continue
        if not _VERSION.match(line) and line.strip():
            log.append(line)
    if not started:
        return None
    # Whatever is still open never reported: close it from the inside out.
    for depth in sorted(opened, reverse=True):
        children = pending.pop(depth + 1, [])
        plans.pop(depth + 1, None)
        pending.setdefault(depth, []).append(
            Test(opened[depth], ERROR, 'no result: the kernel stopped while it ran',
                 log, children))
        log = []
    top = pending.get(0, [])
    if log and top:
        top[-1].log.extend(log)
    return top


def _close_deeper(pending, opened, plans, depth):
    for d in [d for d in pending if d > depth]:
        del pending[d]
    for d in [d for d in opened if d >= depth]:
        del opened[d]
    for d in [d for d in plans if d > depth]:
        del plans[d]


def leaves(suites: List[Test]):
    """(path, test) for every leaf case: suite.case or suite.case.param."""
    def walk(prefix, test):
        path = prefix + [test.name]
        if test.children:
            for child in test.children:
                yield from walk(path, child)
            if test.status == ERROR and prefix:
                # A case that died part-way through its parameters.
                yield '.'.join(path), test
        else:
            yield '.'.join(path), test
    for suite in suites:
        if not suite.children:
            # A suite that ran no case at all is itself the leaf.
            yield suite.name, suite
        else:
            for case in suite.children:
                yield from walk([suite.name], case)


def glob_match(pattern: str, name: str) -> bool:
    """kunit.filter_glob semantics: "suite_glob[.case_glob]"."""
    suite, _, case = name.partition('.')
    sglob, dot, cglob = pattern.partition('.')
    return fnmatch.fnmatchcase(suite, sglob) and (not dot or fnmatch.fnmatchcase(case, cglob))


def missing_cases(suites: List[Test], expected: List[str]) -> List[str]:
    """Enabled cases (suite.case) that never reported a result."""
    seen = set()
    for path, _ in leaves(suites):
        parts = path.split('.')
        seen.add('.'.join(parts[:2]))
    return [name for name in expected if name not in seen]


def count(suites: List[Test], missing: List[str]) -> Dict[str, int]:
    counts = {PASS: 0, FAIL: 0, SKIP: 0, ERROR: 0}
    for _, test in leaves(suites):
        counts[test.status] += 1
    counts[ERROR] += len(missing)
    return counts


def summary_line(counts: Dict[str, int]) -> str:
    return '%d passed, %d failed, %d skipped' % (
        counts[PASS], counts[FAIL] + counts[ERROR], counts[SKIP])


def junit(suites: List[Test], missing: List[str], properties: Dict[str, str]) -> ET.ElementTree:
    root = ET.Element('testsuites', name='kunit')
    groups: Dict[str, List] = {}
    for path, test in leaves(suites):
        suite = path.split('.')[0]
        groups.setdefault(suite, []).append((path, test))
    for name in missing:
        groups.setdefault(name.split('.')[0], []).append(
            (name, Test(name.split('.', 1)[1], ERROR, 'enabled but never reported')))
    for suite, cases in groups.items():
        el = ET.SubElement(root, 'testsuite', name=suite, tests=str(len(cases)))
        props = ET.SubElement(el, 'properties')
        for key, value in properties.items():
            ET.SubElement(props, 'property', name=key, value=value)
        tally = {FAIL: 0, ERROR: 0, SKIP: 0}
        for path, test in cases:
            classname, _, name = path.rpartition('.')
            case = ET.SubElement(el, 'testcase', classname=classname, name=name)
            text = '\n'.join(test.log)
            if test.status == FAIL:
                ET.SubElement(case, 'failure', message=test.reason or 'failed').text = text
            elif test.status == ERROR:
                ET.SubElement(case, 'error', message=test.reason or 'crashed').text = text
            elif test.status == SKIP:
                ET.SubElement(case, 'skipped', message=test.reason)
            if test.status in tally:
                tally[test.status] += 1
            if text and test.status == PASS:
                ET.SubElement(case, 'system-out').text = text
        el.set('failures', str(tally[FAIL]))
        el.set('errors', str(tally[ERROR]))
        el.set('skipped', str(tally[SKIP]))
    ET.indent(root)
    return ET.ElementTree(root)


def ktap_only(lines: Iterable[str]) -> List[str]:
    """The console log from the first KTAP version line on, printk prefixes
    stripped: what kunit.py --raw_output=kunit would keep (for kunit.ktap)."""
    out: List[str] = []
    for raw in lines:
        line = _strip(raw)
        if out or _VERSION.match(line):
            out.append(line)
    return out

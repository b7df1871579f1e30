# SPDX-License-Identifier: GPL-2.0
"""KTAP from a kernel console log -> result tree, JUnit XML and the CI summary.

kunit.py already parses KTAP and writes KernelCI JSON; we keep our own small
parser for what it does not give us: JUnit XML, counts taken from the
kernel's own result lines (kunit.py's totals go wrong when a description
ends in a newline, and it cannot name cases that never reported because the
kernel died), and the kernel's own reports (KASAN, lockdep, a leak...) held
against the case that caused them.  It runs without a kernel tree, so the
harness tests need none.
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

# The first line of a report by one of the kernel's checkers (KASAN, KFENCE,
# UBSAN, lockdep, debugobjects, the hung-task detector), of a WARN() or a
# BUG().  A case during which one is printed failed, whatever its
# expectations said: these are the bugs a return value does not show.
_REPORT = re.compile(r'^(BUG: |WARNING: |UBSAN: |kernel BUG at |ODEBUG: |INFO: task |'
                     r'refcount_t: |list_(add|del) corruption)')
# A leak is printed by a later kmemleak scan (at the end of a suite), so it is
# blamed by who allocated it: the case whose thread it was (each case prints
# its pid, see fs_kunit_leak_mark()), else the case running at that jiffy.
_LEAK = re.compile(r'^kmemleak: unreferenced object (0x[0-9a-f]+) \(size (\d+)\)')
_LEAK_WHO = re.compile(r'^kmemleak:\s+comm "([^"]*)", pid (\d+), jiffies (\d+)')
_LEAK_LINE = re.compile(r'^kmemleak: ')
_COUNTS = re.compile(r'^# \S+: pass:\d+ fail:\d+')
_CASE_PID = re.compile(r'# \S+: kmemleak: case pid (\d+), jiffies (\d+)')


@dataclass
class Test:
    name: str
    status: str
    reason: str = ''
    log: List[str] = field(default_factory=list)
    children: List['Test'] = field(default_factory=list)
    expected: Optional[int] = None  # from the "1..N" plan
    reports: List[str] = field(default_factory=list)  # first lines of the kernel's reports


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
    blame_reports(top)
    return top


def require_leak_scans(suites: List[Test]) -> None:
    """On a kmemleak kernel a suite whose cases marked their thread for the
    leak check (fs_kunit_leak_mark()) but that did not scan at its end
    (fs_kunit_leak_scan()) has checked no case for leaks: that fails the
    suite, not silently.  Suites that mark nothing (kmemleak's own, which
    judges its scans itself, or any other subsystem's) are not asked."""
    for suite in suites:
        marked = any(_CASE_PID.search(line) for test in _walk([suite]) for line in test.log)
        if marked and suite.status != ERROR and not any(
                line.strip() == suite.name + ': kmemleak scan done' for line in suite.log):
            _fail(suite, 'no kmemleak scan at the end of the suite')


def _walk(tests):
    for test in tests:
        yield test
        yield from _walk(test.children)


def _fail(test, report, lines=()):
    """@test failed because the kernel reported @report (its first line)."""
    test.reports.append(report)
    test.log.extend(lines)
    if test.status in (PASS, SKIP):
        test.status, test.reason = FAIL, 'kernel report: ' + report


def blame_reports(suites: List[Test]) -> None:
    """Fail each test during which the kernel printed a report.

    A report is printed by the thread that ran into the bug, before the
    case's result line, so it sits in that case's log; one printed between
    cases (a suite's exit, an unmount's work item) fails the enclosing test,
    which is then reported as a leaf of its own.  Leaks are printed by a scan
    that runs later, and go to the case that allocated the object."""
    marks, leaks = [], []  # (jiffies, pid, test) of each case; (lines, pid, jiffies)
    for test in _walk(suites):
        leak = None
        for line in test.log:
            m = _CASE_PID.search(line)
            if m:
                marks.append((int(m.group(2)), int(m.group(1)), test))
            if _LEAK.match(line):
                leak = [line, 0, 0]
                leaks.append(leak)
            elif leak and _LEAK_LINE.match(line) and 'suspected memory leak' not in line:
                leak[0] += '\n' + line
                m = _LEAK_WHO.match(line)
                if m:
                    leak[1:] = int(m.group(2)), int(m.group(3))
            else:
                leak = None
                if _REPORT.match(line):
                    _fail(test, line)
    by_pid = {pid: test for _, pid, test in marks}
    marks.sort(key=lambda m: m[0])
    for text, pid, jiffies in leaks:
        test = by_pid.get(pid)
        if test is None:
            earlier = [t for j, _, t in marks if j <= jiffies]
            test = earlier[-1] if earlier else suites[0]
        first = text.split('\n', 1)[0][len('kmemleak: '):]
        _fail(test, 'kmemleak: ' + first, ['leaked (blamed on this case by its pid or its time):']
              + text.split('\n'))


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
            if (test.status == ERROR and prefix) or test.reports:
                # A case that died part-way through its parameters, or a
                # report between cases.
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
            if suite.reports and suite.status != ERROR:
                # A report between its cases (a crash has its own errors).
                yield suite.name, suite


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


def _failed(test: Test) -> bool:
    return test.status in (FAIL, ERROR) or any(_failed(c) for c in test.children)


def to_ktap(suites: List[Test]) -> List[str]:
    """The result tree as KTAP, with the verdicts given here: a case the
    kernel called ok but during which it printed a report is "not ok", and
    what the kernel printed during a test comes before its result line as
    diagnostics (for kunit.ktap; kunit.py parse reads it)."""
    out = ['KTAP version 1', '1..%d' % len(suites)]

    def emit(test, number, indent):
        if test.children:
            inner = indent + '    '
            out.extend([inner + 'KTAP version 1', inner + '# Subtest: ' + test.name,
                        inner + '1..%d' % max(test.expected or 0, len(test.children))])
            for i, child in enumerate(test.children, 1):
                emit(child, i, inner)
        for line in test.log:
            line = line.strip()
            if _COUNTS.match(line):
                continue  # the kernel's tally, which a report may have made wrong
            out.append(indent + (line if line.startswith('#') else '# ' + line))
        directive = ''
        if test.status == SKIP:
            directive = ' # SKIP ' + test.reason
        elif test.reason:
            directive = ' # ' + test.reason
        out.append('%s%s %d %s%s' % (indent, 'not ok' if _failed(test) else 'ok', number,
                                     test.name, directive.rstrip()))
    for i, suite in enumerate(suites, 1):
        emit(suite, i, '')
    return out


def mark_json(group: dict, suites: List[Test]) -> dict:
    """kunit.py's KernelCI JSON with the cases failed by a kernel report
    marked FAIL too (kunit.py only reads the result lines)."""
    failed = {path for path, test in leaves(suites) if test.reports}

    def walk(g, prefix):
        for case in g.get('test_cases', []):
            if '.'.join(prefix + [case['name']]) in failed:
                case['status'] = 'FAIL'
        for sub in g.get('sub_groups', []):
            walk(sub, prefix + [sub['name']])
    walk(group, [])
    return group

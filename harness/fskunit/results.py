# SPDX-License-Identifier: GPL-2.0
"""A kernel console log -> the result tree, with the kernel's own reports held
against the case that caused them, and the files results/ has.

The KTAP is parsed by the tree's own tools/testing/kunit/kunit_parser.py
(each test's log, subtests that never reported) and KernelCI JSON is written
by its kunit_json.py.  What they lack is ours: the kernel's reports (KASAN,
lockdep, a leak, a task that hangs...) failing the case during which they
were printed, cases the kernel never reached named from the list of enabled
cases, JUnit, and counts taken from the kernel's result lines."""

import importlib
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Dict, List, Optional

PASS, FAIL, SKIP, ERROR = 'PASS', 'FAIL', 'SKIP', 'ERROR'

# printk prefix: "[    1.234567] " (the caller id variant "[T1] " too).
_PREFIX = re.compile(r'^\[\s*\d+\.\d+\](\[\s*[TC]\d+\])? ?')
_TOP_VERSION = re.compile(r'^K?TAP version \d+\s*$')
_RESULT = re.compile(r'^\s*(ok|not ok) \d+ (?:- )?[^#]*?\s*(?:#\s*(\S+)\s*(.*))?$')
_COUNTS = re.compile(r'^# \S+: pass:\d+ fail:\d+')

# The first line of a report by one of the kernel's checkers (KASAN, KFENCE,
# UBSAN, lockdep, debugobjects, the hung-task detector), of a WARN() or a
# BUG().  A case during which one is printed failed, whatever its
# expectations said: these are the bugs a return value does not show.
_REPORT = re.compile(r'^(BUG: |WARNING: |UBSAN: |kernel BUG at |ODEBUG: |INFO: task |'
                     r'refcount_t: |list_(add|del) corruption)')
# A hung-task report names the task that waits; its call trace says where.
_HUNG = re.compile(r'^INFO: task (\S+):(\d+) blocked for more than \d+ seconds')
_TRACE_END = re.compile(r'^\s*</TASK>')
# KUnit's runner waits in kunit_try_catch_run() for the thread of the case it
# runs, however long the case takes: a report of that wait is not the case's
# failure.  A case that really hangs is reported as the task it is.
KUNIT_RUNNER_WAIT = 'kunit_try_catch_run'

# The log contract with the C side (include/linux/kmemleak.h, patch 0014):
# a case prints KMEMLEAK_KUNIT_CASE with kunit_info(), so "# <case>: " comes
# first; a suite's last scan prints KMEMLEAK_KUNIT_SCANNED with pr_info(),
# after kmemleak's "kmemleak: ".  harness/tests checks both against the patch.
LOG_CONTRACT = {
    'KMEMLEAK_KUNIT_CASE': ('# {case}: ', re.compile(
        r'# \S+: kmemleak: case pid (\d+), jiffies (\d+)')),
    'KMEMLEAK_KUNIT_SCANNED': ('kmemleak: ', re.compile(
        r'^kmemleak: scanned for KUnit suite (\S+)$')),
}
_CASE_PID = LOG_CONTRACT['KMEMLEAK_KUNIT_CASE'][1]
_SCANNED = LOG_CONTRACT['KMEMLEAK_KUNIT_SCANNED'][1]
# kmemleak's own lines (mm/kmemleak.c, print_unreferenced()).
_LEAK = re.compile(r'^kmemleak: unreferenced object (0x[0-9a-f]+) \(size (\d+)\)')
_LEAK_WHO = re.compile(r'^kmemleak:\s+comm "([^"]*)", pid (\d+), jiffies (\d+)')
_LEAK_LINE = re.compile(r'^kmemleak: ')


@dataclass
class Test:
    name: str
    status: str
    reason: str = ''
    log: List[str] = field(default_factory=list)
    children: List['Test'] = field(default_factory=list)
    expected: Optional[int] = None  # from the "1..N" plan
    reports: List[str] = field(default_factory=list)  # first lines of the kernel's reports


def kunit_tools(tree):
    """kunit_parser and kunit_json from the tree, quiet (kunit.py prints its
    own progress), with the text of each result line's directive kept: 6.12's
    parser drops it, and JUnit wants a skip's reason."""
    path = os.path.join(tree, 'tools', 'testing', 'kunit')
    if not os.path.exists(os.path.join(path, 'kunit_parser.py')):
        raise RuntimeError('no kunit_parser.py in %s: make tree first' % path)
    if path not in sys.path:
        sys.path.insert(0, path)
    parser = importlib.import_module('kunit_parser')
    kjson = importlib.import_module('kunit_json')
    if not getattr(parser, 'fskunit_ready', False):
        printer = importlib.import_module('kunit_printer')
        parser.stdout = printer.Printer(open(os.devnull, 'w'))
        original = parser.parse_test_result

        def parse_test_result(lines, test, expected_num):
            line = lines.peek()
            ok = original(lines, test, expected_num)
            if ok:
                m = _RESULT.match(line)
                test.fskunit_directive = (m.group(2) or '', (m.group(3) or '').strip())
            return ok
        parser.parse_test_result = parse_test_result

        # A parameterized case prints no plan, so 6.12's parse_test() takes
        # the lines its first parameter prints before its result (its
        # kmemleak mark, a lockdep report) as the case's own, after the
        # "# Subtest:" header.  Where they start and end is kept, for
        # _convert() to give them back to the first parameter.
        header, plan = parser.parse_test_header, parser.parse_test_plan

        def parse_test_header(lines, test):
            found = header(lines, test)
            test.fskunit_after_header = len(test.log)
            return found

        def parse_test_plan(lines, test):
            found = plan(lines, test)
            test.fskunit_first_child_log = (getattr(test, 'fskunit_after_header', 0),
                                            len(test.log), found)
            return found
        parser.parse_test_header = parse_test_header
        parser.parse_test_plan = parse_test_plan
        parser.fskunit_ready = True
    return parser, kjson


def _blocks(lines):
    """The console without printk prefixes, cut at each top-level KTAP
    header: MODE=modules prints one per module load."""
    blocks = []
    for raw in lines:
        line = _PREFIX.sub('', raw.rstrip('\n').expandtabs())
        if _TOP_VERSION.match(line):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return blocks


def _convert(parser, t):
    children, log = [], list(t.log)
    begin, end, planned = getattr(t, 'fskunit_first_child_log', (0, 0, True))
    if t.subtests and not planned and end > begin:
        t.subtests[0].log[:0] = log[begin:end]
        del log[begin:end]
    for sub in t.subtests:
        if not sub.name and sub.status == parser.TestStatus.TEST_CRASHED:
            # kunit_parser's stand-in for a subtest that never reported: its
            # name is the enabled-case list's to give (missing_cases()).
            log.extend(sub.log)
            continue
        children.append(_convert(parser, sub))
    directive = getattr(t, 'fskunit_directive', None)
    status = {parser.TestStatus.SUCCESS: PASS, parser.TestStatus.FAILURE: FAIL,
              parser.TestStatus.SKIPPED: SKIP}.get(t.status, ERROR)
    reason = ''
    if directive:
        word, rest = directive
        reason = rest if word.upper() == 'SKIP' else ' '.join(x for x in (word, rest) if x)
    if directive is None:
        status, reason = ERROR, 'no result: the kernel stopped while it ran'
    elif t.expected_count and len(children) < t.expected_count and status != SKIP:
        status = ERROR
        reason = 'only %d of %d subtests reported' % (len(children), t.expected_count)
    expected = t.expected_count if (t.subtests or t.expected_count) else None
    return Test(t.name, status, reason, log, children, expected)


def parse(lines, tree) -> Optional[List[Test]]:
    """Top-level tests (suites) in KTAP order, or None when there is no KTAP."""
    parser, _ = kunit_tools(tree)
    blocks = _blocks(lines)
    if not blocks:
        return None
    suites = []
    for block in blocks:
        main = parser.parse_run_tests(block)
        ours = [_convert(parser, s) for s in main.subtests]
        # What the kernel printed after the block's last result line (an
        # unload, a shutdown) is the last suite's: kunit_parser stops there.
        ends = [i for i, line in enumerate(block) if re.match(r'^(ok|not ok) \d+ ', line)]
        if ours and ends and ours[-1].status != ERROR:
            ours[-1].log.extend(x for x in block[ends[-1] + 1:] if x.strip())
        suites.extend(ours)
    blame_reports(suites)
    return suites


def walk(tests):
    for test in tests:
        yield test
        yield from walk(test.children)


def fail(test, report, lines=()):
    """@test failed because the kernel reported @report (its first line)."""
    test.reports.append(report)
    test.log.extend(lines)
    if test.status in (PASS, SKIP):
        test.status, test.reason = FAIL, 'kernel report: ' + report


def _runner_wait(log, i):
    """Whether the hung-task report at log[i] is about KUnit's runner."""
    for line in log[i + 1:i + 80]:
        if KUNIT_RUNNER_WAIT in line:
            return True
        if _TRACE_END.match(line) or (line is not log[i] and _REPORT.match(line)):
            break
    return False


def blame_reports(suites: List[Test]) -> None:
    """Fail each test during which the kernel printed a report.

    A report is printed by the thread that ran into the bug, before the
    case's result line, so it sits in that case's log; one printed between
    cases (a suite's exit, an unmount's work item) fails the enclosing test,
    which is then reported as a leaf of its own.  Leaks are printed by a scan
    that runs later, and go to the case that allocated the object.  A
    hung-task report about KUnit's runner waiting for a case is nobody's:
    the case's own thread, if it hangs, is reported in its own right."""
    marks, leaks = [], []  # (jiffies, pid, test) of each case; [lines, pid, jiffies]
    for test in walk(suites):
        leak = None
        for i, line in enumerate(test.log):
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
                if _REPORT.match(line) and not (_HUNG.match(line) and _runner_wait(test.log, i)):
                    fail(test, line)
    by_pid = {pid: test for _, pid, test in marks}
    marks.sort(key=lambda m: m[0])
    for text, pid, jiffies in leaks:
        test = by_pid.get(pid)
        if test is None:
            earlier = [t for j, _, t in marks if j <= jiffies]
            test = earlier[-1] if earlier else suites[0]
        first = text.split('\n', 1)[0][len('kmemleak: '):]
        fail(test, 'kmemleak: ' + first, ['leaked (blamed on this case by its pid or its time):']
             + text.split('\n'))


def require_leak_scans(suites: List[Test]) -> None:
    """On a kmemleak kernel a suite whose cases marked their thread for the
    leak check but that did not scan at its end has checked no case for
    leaks: that fails the suite, not silently.  Suites that mark nothing
    (any other subsystem's) are not asked."""
    for suite in suites:
        marked = any(_CASE_PID.search(line) for test in walk([suite]) for line in test.log)
        scanned = any((m := _SCANNED.match(line.strip())) and m.group(1) == suite.name
                      for line in suite.log)
        if marked and suite.status != ERROR and not scanned:
            fail(suite, 'no kmemleak scan at the end of the suite')


def leaves(suites: List[Test]):
    """(path, test) for every leaf case: suite.case or suite.case.param."""
    def walk_(prefix, test):
        path = prefix + [test.name]
        if test.children:
            for child in test.children:
                yield from walk_(path, child)
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
                yield from walk_([suite.name], case)
            if suite.reports and suite.status != ERROR:
                # A report between its cases (a crash has its own errors).
                yield suite.name, suite


def missing_cases(suites: List[Test], expected: List[str]) -> List[str]:
    """Enabled cases (suite.case) that never reported a result."""
    seen = {'.'.join(path.split('.')[:2]) for path, _ in leaves(suites)}
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
        groups.setdefault(path.split('.')[0], []).append((path, test))
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
    diagnostics (results/kunit.ktap)."""
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


def kernelci_json(suites: List[Test], tree, build_dir) -> str:
    """KernelCI JSON, written by the tree's kunit_json from these verdicts."""
    parser, kjson = kunit_tools(tree)
    status = {PASS: parser.TestStatus.SUCCESS, FAIL: parser.TestStatus.FAILURE,
              SKIP: parser.TestStatus.SKIPPED, ERROR: parser.TestStatus.TEST_CRASHED}

    def back(test):
        t = parser.Test()
        t.name = test.name
        t.status = status[FAIL] if _failed(test) and test.status != ERROR \
            else status[test.status]
        t.subtests = [back(c) for c in test.children]
        return t
    main = parser.Test()
    main.subtests = [back(s) for s in suites]
    return kjson.get_json_result(main, kjson.Metadata(arch='x86_64', build_dir=build_dir,
                                                      def_config='kunit_defconfig'))


def suite_seconds(lines) -> Dict[str, float]:
    """How long each top-level suite took, by printk time: from its
    "# Subtest:" header to its result line; '(boot)' is the time before the
    first KTAP line."""
    out, start, first = {}, {}, None
    for raw in lines:
        m = re.match(r'^\[\s*(\d+\.\d+)\]', raw)
        if not m:
            continue
        t, line = float(m.group(1)), _PREFIX.sub('', raw.rstrip())
        if first is None and _TOP_VERSION.match(line):
            first = t
            out['(boot)'] = t
        h = re.match(r'^    # Subtest: (\S+)$', line)
        if h:
            start[h.group(1)] = t
        r = re.match(r'^(?:ok|not ok) \d+ (\S+)', line)
        if r and r.group(1) in start:
            out[r.group(1)] = round(t - start.pop(r.group(1)), 1)
    return out

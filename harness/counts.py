#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The case counts in README.md and docs/design.md, made from the sources and
the last suite run, so that they cannot drift.

    counts.py --write   rewrite the blocks between the markers
    counts.py --check   exit 1 (and say which file) when a block differs

The counts come from results/cases.json of a run of the whole suite (make
run, or make check's suite step) and the suite names in kunit-tests/.
"""

import collections
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regressions  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.environ.get('RESULTS') or os.path.join(TOP, 'results')
FILES = ('README.md', os.path.join('docs', 'design.md'))
BEGIN = '<!-- counts: made by harness/counts.py from the sources and the last suite run -->'
END = '<!-- end of counts -->'
def block(cases):
    files = regressions.suite_files()
    # Upstream suites the config enables beside ours (ext4's) are not counted.
    cases = [c for c in cases if c.split('.')[0] in files]
    leaves = collections.Counter(c.split('.')[0] for c in cases)
    tests = collections.defaultdict(set)
    for c in cases:
        tests[c.split('.')[0]].add(c.split('.')[1] if '.' in c else '')
    faults = sum(1 for c in cases if c.split('.')[1:2] == ['op_returns_dquot_error'])
    every = glob.glob(os.path.join(TOP, 'regressions', '**', '*.patch'), recursive=True)
    patches = len(every)
    debug = sum(1 for p in every if regressions.profile(p) == 'debug')
    modules = sum(1 for p in every if regressions.mode(p) == 'modules')
    lines = [BEGIN, '',
             '| suite | file (in `kunit-tests/`) | cases | leaf cases (with parameters) |',
             '|---|---|---|---|']
    for suite in leaves:
        lines.append('| `%s` | `%s` | %d | %d |' % (suite, files.get(suite, '?'), len(tests[suite]),
                                                   leaves[suite]))
    lines += ['| all | | %d | %d |' % (sum(len(t) for t in tests.values()), len(cases)), '',
              '%d leaf cases; the filesystem quota suites test %d distinct faults (one row '
              'of a fault table each: a call site as one operation reaches it); %d '
              'regression patches (%d of them proven under the debug profile, %d with the '
              'tests as modules), and `make regressions` fails if a leaf case is named by '
              'none of them.' % (len(cases), faults, patches, debug, modules),
              '', END]
    return '\n'.join(lines)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else '--check'
    try:
        with open(os.path.join(RESULTS, 'cases.json')) as f:
            run = json.load(f)
        with open(os.path.join(RESULTS, 'tested.json')) as f:
            tested = json.load(f)
    except (OSError, ValueError):
        print('counts: error: no suite run in %s (make run first)' % RESULTS, file=sys.stderr)
        return 2
    if tested.get('filter') or tested.get('extra_patches'):
        print('counts: error: the last run was filtered or patched: make run without FILTER',
              file=sys.stderr)
        return 2
    want = block([c['name'] for c in run])
    stale = []
    for rel in FILES:
        path = os.path.join(TOP, rel)
        with open(path) as f:
            text = f.read()
        a, b = text.find(BEGIN), text.find(END)
        if a < 0 or b < a:
            print('counts: error: %s has no counts block' % rel, file=sys.stderr)
            return 2
        new = text[:a] + want + text[b + len(END):]
        if new != text:
            stale.append(rel)
            if mode == '--write':
                with open(path, 'w') as f:
                    f.write(new)
    if mode == '--write':
        print('counts: rewrote %s' % (', '.join(stale) or 'nothing'))
        return 0
    for rel in stale:
        print('counts: %s disagrees with the sources and the last run: '
              'run harness/counts.py --write' % rel)
    print('%d passed, %d failed, 0 skipped' % (len(FILES) - len(stale), len(stale)))
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0
"""The case counts in README.md and docs/design.md, made from the sources, the
regression patches and the last suite run, so that they cannot drift."""

import collections
import json
import os

from . import catalogue

FILES = ('README.md', os.path.join('docs', 'design.md'))
BEGIN = '<!-- counts: made by harness/fskunit/counts.py from the sources and the last suite run -->'
END = '<!-- end of counts -->'


class CountsError(Exception):
    pass


def block(cases, top):
    files = catalogue.suite_files(top)
    # Upstream suites the config enables beside ours (ext4's) are not counted.
    cases = [c for c in cases if c.split('.')[0] in files]
    leaves = collections.Counter(c.split('.')[0] for c in cases)
    tests = collections.defaultdict(set)
    for c in cases:
        tests[c.split('.')[0]].add(c.split('.')[1] if '.' in c else '')
    faults = sum(1 for c in cases if c.split('.')[1:2] == ['op_returns_dquot_error'])
    every = catalogue.regressions(top)
    debug = sum(1 for r in every if r.profile == 'debug')
    modules = sum(1 for r in every if r.mode == 'modules')
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
              'none of them.' % (len(cases), faults, len(every), debug, modules),
              '', END]
    return '\n'.join(lines)


def main(cfg, write=False):
    """(passed, failed): the files whose block agrees; with @write, rewrite them."""
    try:
        with open(os.path.join(cfg.results, 'cases.json')) as f:
            run = json.load(f)
        with open(os.path.join(cfg.results, 'tested.json')) as f:
            tested = json.load(f)
    except (OSError, ValueError):
        raise CountsError('no suite run in %s (make run first)' % cfg.results)
    if tested.get('filter') or tested.get('extra_patches'):
        raise CountsError('the last run was filtered or patched: make run without FILTER')
    want = block([c['name'] for c in run], cfg.top)
    stale = []
    for rel in FILES:
        path = os.path.join(cfg.top, rel)
        with open(path) as f:
            text = f.read()
        a, b = text.find(BEGIN), text.find(END)
        if a < 0 or b < a:
            raise CountsError('%s has no counts block' % rel)
        new = text[:a] + want + text[b + len(END):]
        if new != text:
            stale.append(rel)
            if write:
                with open(path, 'w') as f:
                    f.write(new)
    if write:
        print('counts: rewrote %s' % (', '.join(stale) or 'nothing'))
        return len(FILES), 0
    for rel in stale:
        print('counts: %s disagrees with the sources and the last run: '
              'make counts' % rel)
    return len(FILES) - len(stale), len(stale)

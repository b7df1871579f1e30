# SPDX-License-Identifier: GPL-2.0
"""The case counts in README.md and docs/design.md, made from the sources, the
regression patches and the last suite run, so that they cannot drift; and
the mutation and coverage figures, made from the last full make mutants and
make coverage (results/mutants.json, results/coverage/summary.txt), which
make check does not run and so does not check."""

import collections
import json
import os
import re

from . import catalogue

FILES = ('README.md', os.path.join('docs', 'design.md'))
BEGIN = '<!-- counts: made by harness/fskunit/counts.py from the sources and the last suite run -->'
END = '<!-- end of counts -->'


MUTANTS_BEGIN = ('<!-- mutants: made by harness/fskunit/counts.py from the last full make '
                 'mutants and make coverage -->')
MUTANTS_END = '<!-- end of mutants -->'


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


def mutants_block(top):
    """The figures of the last full make mutants and make coverage, or None."""
    try:
        with open(os.path.join(top, 'results', 'mutants.json')) as f:
            run = json.load(f)
        with open(os.path.join(top, 'results', 'coverage', 'summary.txt')) as f:
            cov = f.read()
    except (OSError, ValueError):
        return None
    if run.get('select') != 'all':
        return None
    ms = run['mutants']
    n = collections.Counter(m['verdict'] for m in ms)
    judged = n['KILLED'] + n['TIMEOUT'] + n['SURVIVED']
    lines_cov = re.search(r'^lines ([\d.]+)%, branches ([\d.]+)%$', cov, re.M)
    unreached = re.search(r'^quota error paths no case reaches: (\d+)', cov, re.M)
    return '\n'.join([
        MUTANTS_BEGIN, '',
        '%d mutants of the guarded functions (`mutants/scope`): %d killed, %d timed out, '
        '%d survived (%d of them on lines no case runs), %d equivalent, %d not built; '
        'score %d of %d (%.1f%%). Coverage of the %s guarded functions: lines %s%%, '
        'branches %s%%; quota error paths no case reaches: %s.' % (
            len(ms), n['KILLED'], n['TIMEOUT'], n['SURVIVED'],
            sum(1 for m in ms if m['verdict'] == 'SURVIVED' and not m['reached']),
            n['EQUIVALENT'], n['NOT-BUILT'], n['KILLED'] + n['TIMEOUT'], judged,
            100.0 * (n['KILLED'] + n['TIMEOUT']) / max(1, judged),
            re.search(r'^all (\d+) guarded functions', cov, re.M).group(1),
            lines_cov.group(1), lines_cov.group(2), unreached.group(1)),
        '', MUTANTS_END])


def write_mutants(top):
    """Rewrite the mutants block where there is one; the files rewritten."""
    want = mutants_block(top)
    if want is None:
        return []
    done = []
    for rel in FILES:
        path = os.path.join(top, rel)
        with open(path) as f:
            text = f.read()
        a, b = text.find(MUTANTS_BEGIN), text.find(MUTANTS_END)
        if a < 0 or b < a:
            continue
        new = text[:a] + want + text[b + len(MUTANTS_END):]
        if new != text:
            with open(path, 'w') as f:
                f.write(new)
            done.append(rel)
    return done


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
        print('counts: mutants and coverage figures rewritten in %s'
              % (', '.join(write_mutants(cfg.top)) or 'nothing (no full make mutants and '
                 'make coverage in results/)'))
        return len(FILES), 0
    for rel in stale:
        print('counts: %s disagrees with the sources and the last run: '
              'make counts' % rel)
    return len(FILES) - len(stale), len(stale)

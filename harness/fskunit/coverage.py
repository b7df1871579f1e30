# SPDX-License-Identifier: GPL-2.0
"""make coverage: line and branch coverage of the guarded functions
(mutants/scope) from one run of the suites.

The route is x86_64 with gcov, not UML: the suites are judged on x86_64 in
QEMU everywhere else, and UML builds none of ocfs2's cluster stack the same
way; one more x86_64 configuration costs one build.  PROFILE=coverage adds
CONFIG_GCOV_KERNEL (kunitconfig.coverage) and profiles only the guarded
objects (Config.make_options); after the built-in suites the initramfs's
/init writes the .gcda files to the console (harness/coverage-init.sh), and
lcov, from Debian, reads them beside the build's .gcno files.

Written to results/coverage/: summary.txt (a row a guarded function: lines
and branches hit of total), lcov.info, html/ (genhtml) and run/ (the suites'
own results)."""

import base64
import io
import os
import re
import shutil
import subprocess
import tarfile
from typing import Dict, List, Tuple

from . import csource, mutants
from .workspace import RunError, report, say

BEGIN, END = 'fs-kunit-gcov: begin', 'fs-kunit-gcov: end'


def gcda_from_console(lines):
    """{path in the guest's debugfs: bytes} from the init's base64 tar."""
    try:
        first = next(i for i, x in enumerate(lines) if x.strip() == BEGIN)
        last = next(i for i, x in enumerate(lines) if x.strip() == END and i > first)
    except StopIteration:
        raise RunError('the console has no gcov data between "%s" and "%s": did the init '
                       'run? (harness/coverage-init.sh)' % (BEGIN, END))
    text = ''.join(x.strip() for x in lines[first + 1:last]
                   if re.fullmatch(r'[A-Za-z0-9+/=]+', x.strip()))
    out = {}
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(text)), mode='r:gz') as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith('.gcda'):
                out[os.path.normpath(member.name)] = tar.extractfile(member).read()
    if not out:
        raise RunError('the guest wrote no .gcda file: was anything built with gcov?')
    return out


def place(gcda, build_dir):
    """Each .gcda beside its .gcno in the build directory: debugfs mirrors
    the build's absolute path.  Returns how many found their place."""
    placed = 0
    for name, data in gcda.items():
        rel = name.split(build_dir.lstrip('/') + '/', 1)[-1]
        target = os.path.join(build_dir, rel)
        if os.path.exists(target[:-len('.gcda')] + '.gcno'):
            with open(target, 'wb') as f:
                f.write(data)
            placed += 1
    return placed


def parse_info(path):
    """{source file: ({line: hits}, {line: [(taken, total) per branch]})} of
    an lcov tracefile."""
    out: Dict[str, Tuple[Dict[int, int], Dict[int, List[int]]]] = {}
    cur = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('SF:'):
                cur = out.setdefault(os.path.normpath(line[3:]), ({}, {}))
            elif line.startswith('DA:') and cur is not None:
                n, hits = line[3:].split(',')[:2]
                cur[0][int(n)] = cur[0].get(int(n), 0) + int(hits)
            elif line.startswith('BRDA:') and cur is not None:
                n, _, _, taken = line[5:].split(',')
                cur[1].setdefault(int(n), []).append(0 if taken == '-' else int(taken))
    return out


def rows(tree_path, info, top):
    """[(file, function, lines hit, lines, branches hit, branches, [quota
    error paths not reached])] of every guarded function."""
    out = []
    for s in csource.scope(top):
        with open(os.path.join(tree_path, s.path)) as f:
            text = f.read()
        spans = csource.functions(text)
        lines, branches = info.get(os.path.join(tree_path, s.path), ({}, {}))
        text_lines = text.split('\n')
        for fn in s.functions:
            start, brace, end = spans[fn]
            ln = {n: h for n, h in lines.items() if start <= n <= end}
            br = [t for n, ts in branches.items() if start <= n <= end for t in ts]
            # The first line of the block each quota error branch takes.
            unreached = []
            sliced = mutants._slice(text_lines, brace, end, 'quota')
            for i in sorted(sliced[0]) if sliced else ():
                first = i + 2  # 1-based line after the if
                if ln.get(first, 0) == 0 and first in ln:
                    unreached.append('line %d: %s' % (first, text_lines[first - 1].strip()))
            out.append((s.path, fn, sum(1 for h in ln.values() if h), len(ln),
                        sum(1 for t in br if t), len(br), unreached))
    return out


def summary(rs):
    width = max(len('%s:%s' % (r[0], r[1])) for r in rs)
    text = ['%-*s  %11s  %13s' % (width, 'function', 'lines', 'branches')]
    for path, fn, lh, lt, bh, bt, _ in rs:
        text.append('%-*s  %4d of %4d  %5d of %5d' % (width, '%s:%s' % (path, fn), lh, lt, bh, bt))
    lh, lt = sum(r[2] for r in rs), sum(r[3] for r in rs)
    bh, bt = sum(r[4] for r in rs), sum(r[5] for r in rs)
    text.append('%-*s  %4d of %4d  %5d of %5d' % (width, 'all %d guarded functions' % len(rs),
                                                   lh, lt, bh, bt))
    text.append('lines %.1f%%, branches %.1f%%' % (100.0 * lh / max(1, lt),
                                                   100.0 * bh / max(1, bt)))
    gaps = [(r[0], r[1], u) for r in rs for u in r[6]]
    text.append('quota error paths no case reaches: %d%s' % (
        len(gaps), ''.join('\n  %s:%s %s' % g for g in gaps)))
    return '\n'.join(text) + '\n'


def main(ws, cfg):
    """Build PROFILE=coverage, run the suites, read the gcov data."""
    cov = cfg.with_(profile='coverage', mode='builtin', alone='', filter='', extra_patches=(),
                    results_dir=os.path.join(cfg.top, 'results', 'coverage', 'run'))
    out = os.path.join(cfg.top, 'results', 'coverage')
    if shutil.which('lcov') is None or shutil.which('genhtml') is None:
        raise RunError('lcov is not installed (make deps installs it)')
    # Counts of an earlier run must not add to this one's.
    subprocess.run(['find', cov.build_dir, '-name', '*.gcda', '-delete'],
                   stderr=subprocess.DEVNULL)
    run = ws.run(cov)
    report(run)
    if not run.ok:
        raise RunError('the suites do not pass in PROFILE=coverage (%s): no coverage from a '
                       'failing run' % run.summary)
    placed = place(gcda_from_console(run.log), cov.build_dir)
    say('coverage: %d .gcda files placed in %s' % (placed, cov.build_dir))
    os.makedirs(out, exist_ok=True)
    info = os.path.join(out, 'lcov.info')
    paths = sorted({s.path for s in csource.scope(cfg.top)})
    dirs = sorted({os.path.join(cov.build_dir, os.path.dirname(p)) for p in paths})
    lcov = ['lcov', '--quiet', '--rc', 'lcov_branch_coverage=1']
    r = subprocess.run(lcov + ['--capture', '--base-directory', ws.tree.path, '--output-file',
                               info + '.all'] + [a for d in dirs for a in ('--directory', d)],
                       capture_output=True, text=True)
    if r.returncode:
        raise RunError('lcov --capture failed: %s' % r.stderr.strip()[-800:])
    r = subprocess.run(lcov + ['--extract', info + '.all', '--output-file', info] +
                       [os.path.join(ws.tree.path, p) for p in paths],
                       capture_output=True, text=True)
    if r.returncode:
        raise RunError('lcov --extract failed: %s' % r.stderr.strip()[-800:])
    os.unlink(info + '.all')
    html = os.path.join(out, 'html')
    shutil.rmtree(html, ignore_errors=True)
    subprocess.run(['genhtml', '--quiet', '--branch-coverage', '--prefix', ws.tree.path,
                    '--output-directory', html, info], check=True)
    text = summary(rows(ws.tree.path, parse_info(info), cfg.top))
    with open(os.path.join(out, 'summary.txt'), 'w') as f:
        f.write(text)
    print(text, end='')
    say('coverage: results/coverage/summary.txt, results/coverage/html/index.html')
    return 0

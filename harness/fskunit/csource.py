# SPDX-License-Identifier: GPL-2.0
"""Kernel C source as coverage and mutation analysis need it: where each
top-level function starts and ends, and the scope file (mutants/scope) that
names the guarded functions.  Kernel coding style makes this simple: a
function's opening and closing braces stand alone in column 0."""

import configparser
import dataclasses
import os
import re
from typing import Dict, List

_HEAD = re.compile(r'^(?!static_assert\b|if\b|for\b|while\b|return\b|typedef\b|struct \w+ \{)'
                   r'[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(')


def functions(text) -> Dict[str, tuple]:
    """{name: (first line, line of its '{', line of its '}')}, 1-based."""
    lines = text.split('\n')
    out, i = {}, 0
    while i < len(lines):
        m = _HEAD.match(lines[i])
        if m and not lines[i].rstrip().endswith(';'):
            j = i
            while j < len(lines) and not lines[j].startswith('{') \
                    and not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j].startswith('{'):
                k = j
                while k < len(lines) and lines[k].rstrip() != '}':
                    k += 1
                out.setdefault(m.group(1), (i + 1, j + 1, k + 1))
                i = k + 1
                continue
        i += 1
    return out


@dataclasses.dataclass
class ScopeFile:
    path: str               # in the kernel tree
    functions: List[str]
    suites: str             # a kunit.py filter glob
    mutate: str             # which lines the operators touch (mutants._slice)


def scope(top):
    """The files and functions of mutants/scope, in its order."""
    parser = configparser.ConfigParser(interpolation=None)
    with open(os.path.join(top, 'mutants', 'scope')) as f:
        parser.read_file(f)
    return [ScopeFile(s, parser[s]['functions'].split(), parser[s]['suites'].strip(),
                      parser[s].get('mutate', 'all').strip())
            for s in parser.sections()]


QUOTA_CALLS = re.compile(r'\b(dquot_initialize|dquot_transfer|dqget)\(')


def quota_callers(tree, dirs=('ext2', 'ext4', 'jfs', 'reiserfs', 'ocfs2')):
    """{file: [functions]} of every function in @dirs that calls
    dquot_initialize(), dquot_transfer() or dqget() (our tests excluded)."""
    out = {}
    for d in dirs:
        base = os.path.join(tree, 'fs', d)
        for name in sorted(os.listdir(base)):
            if not name.endswith('.c') or 'kunit' in name:
                continue
            with open(os.path.join(base, name), errors='replace') as f:
                text = f.read()
            lines = text.split('\n')
            hit = [fn for fn, (a, _, b) in functions(text).items()
                   if any(QUOTA_CALLS.search(x) for x in lines[a - 1:b])]
            if hit:
                out['fs/%s/%s' % (d, name)] = hit
    return out

# SPDX-License-Identifier: GPL-2.0
"""make mutants: mutation analysis of the guarded functions (mutants/scope).

Why a generator of our own and not Coccinelle rules: the mutants must all be
compiled into one kernel, each behind its own number (mutant schemata), so
that one build serves every boot; Coccinelle rewrites a match into one
result, and numbering every variant of every match side by side needs its
Python scripting around each rule.  The kernel's coding style (one statement
a line, braces of a function in column 0) makes a line-based generator
short and exact enough: what it gets wrong does not compile, and such a
mutant is NOT-BUILT, found before the build.

The kinds of bug this project exists for, as operators:
  RET_ZERO    an error return replaced by 0
  RET_ERRNO   an errno returned replaced by another
  BRANCH_DEL  an error branch removed (its condition never true)
  BRANCH_NEG  an error branch's condition negated
  CALL_DEL    a put, release, free or unlock deleted          (debug profile)
  CALL_DUP    a put, release, free or unlock done twice       (debug profile)
  QUOTA_MOVE  a quota call moved after the statement it guards
  ARG_SWAP    one argument slot used for another (old dir for new dir,
              the inode for its directory, user quota for group)

Each mutant is `if (FS_KUNIT_MUTANT(n))` around its change, selected at boot
by the kernel argument fs_kunit_mutant=n (lib/fs_kunit_mutant.c, added with
the schemata).  It is judged as the regression proof judges a patch: against
a baseline (the same kernel, no mutant), on the suites its file's section of
the scope names, stopping at the first case that fails:
  KILLED      a case passed in the baseline and failed (or the kernel
              stopped in it) with the mutant
  SURVIVED    every case passed
  TIMEOUT     the run hung: a task blocked in a case, or the time-out
  NOT-BUILT   it does not compile
  EQUIVALENT  listed in mutants/equivalent with the reason no test can tell;
              an equivalent mutant that a case kills is an error (the list
              is stale)
"""

import dataclasses
import json
import os
import re
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

from . import csource, gate, results, timing
from .workspace import RunError

PUT_LIKE = re.compile(r'^(\s*)((?:\w+_)?(?:put|release|free|unlock|brelse|drop|iput|dput|dqput|'
                      r'kfree|up_write|up_read|mutex_unlock|spin_unlock|IWRITE_UNLOCK|'
                      r'IREAD_UNLOCK|reiserfs_write_unlock|unlock_new_inode|discard_new_inode|'
                      r'brelse|put_bh|mark_inode_dirty|end_writeback)\w*\(.*\);)\s*$')
RETURN = re.compile(r'^(\s*)return (.+);\s*$')
ERRISH = re.compile(r'^(err|error|ret|retval|rc|status|-E[A-Z]+|PTR_ERR\(.+\))$')
IF_LINE = re.compile(r'^(\s*)(}\s*else\s+)?if \((.*)\)(\s*\{)?\s*$')
QUOTA_CALL = re.compile(r'^(\s*)(\w+) = (dquot_initialize|dquot_transfer)\((.*)\);\s*$')
DQUOT_ARG = re.compile(r'\b(dquot_initialize|dquot_transfer)\(([^()]*)\)')
INODE_NAMES = ('dir', 'inode', 'old_dir', 'new_dir', 'old_inode', 'new_inode', 'ip', 'dip',
               'old_ip', 'new_ip', 'parent', 'target', 'victim')
DEBUG_OPS = ('CALL_DEL', 'CALL_DUP')


@dataclasses.dataclass
class Mutant:
    n: int                  # its number in the schemata
    key: str                # file:function:op:k, stable while the code is
    file: str
    function: str
    line: int               # in the file as the series has it
    op: str
    original: str
    mutated: str            # what the schema does, for people
    suites: str
    profile: str
    verdict: str = ''
    detail: str = ''
    killed_by: List[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    reached: Optional[bool] = None


def _int_function(lines, start, brace):
    """Whether the function returns int (its type may stand on the line above)."""
    head = ' '.join(lines[max(0, start - 2):brace - 1])
    name = re.search(r'\b(\w+)\s*\(', lines[start - 1]).group(1)
    return bool(re.search(r'(^|\s)int\s+%s\s*\(' % re.escape(name), head))


def _body_exits(lines, i):
    """Whether the if at line index @i guards an error exit (goto, return,
    break), on the next line or in its block."""
    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ''
    if lines[i].rstrip().endswith('{'):
        depth, j = 1, i + 1
        while j < len(lines) and depth:
            depth += lines[j].count('{') - lines[j].count('}')
            if re.search(r'\b(goto|return|break)\b', lines[j]):
                return True
            j += 1
        return False
    return bool(re.match(r'^(goto|return|break)\b', nxt))


def _block_end(lines, i):
    """Index of the last line of the statement the if at @i guards."""
    if lines[i].rstrip().endswith('{'):
        depth, j = 1, i + 1
        while j < len(lines) and depth:
            depth += lines[j].count('{') - lines[j].count('}')
            j += 1
        return j - 1
    return i + 1


def generate(text, path, functions, suites):
    """[(Mutant, edits)] for one file: edits are (line index, kind, text)
    that schema() applies; Mutant.n is given later."""
    lines = text.split('\n')
    spans = csource.functions(text)
    out = []
    for fn in functions:
        if fn not in spans:
            raise RunError('mutants/scope: %s has no function %s' % (path, fn))
        start, brace, end = spans[fn]
        is_int = _int_function(lines, start, brace)
        count: Dict[str, int] = {}
        names = set(re.findall(r'\b(%s)\b' % '|'.join(INODE_NAMES),
                               '\n'.join(lines[brace:end - 1])))

        def add(op, i, mutated, edits):
            count[op] = count.get(op, 0) + 1
            m = Mutant(0, '%s:%s:%s:%d' % (path, fn, op, count[op]), path, fn, i + 1, op,
                       lines[i].strip(), mutated, suites,
                       'debug' if op in DEBUG_OPS else 'default')
            out.append((m, edits))

        for i in range(brace, end - 1):
            line = lines[i]
            if line.lstrip().startswith(('*', '/*', '//', '#')):
                continue
            m = RETURN.match(line)
            if m and is_int and ERRISH.match(m.group(2).strip()):
                expr = m.group(2).strip()
                add('RET_ZERO', i, 'return 0;', [(i, 'stmt', 'return 0;')])
                if expr.startswith('-E'):
                    other = '-ENOSPC' if expr == '-EIO' else '-EIO'
                    add('RET_ERRNO', i, 'return %s;' % other, [(i, 'stmt', 'return %s;' % other)])
            m = IF_LINE.match(line)
            if m and _body_exits(lines, i):
                cond = m.group(3)
                if cond.count('(') == cond.count(')'):
                    add('BRANCH_DEL', i, 'if (0)', [(i, 'cond', 'del')])
                    add('BRANCH_NEG', i, 'if (!(%s))' % cond, [(i, 'cond', 'neg')])
            m = PUT_LIKE.match(line)
            if m and not re.match(r'^\s*(return|if|else)\b', line):
                add('CALL_DEL', i, '(deleted)', [(i, 'del', None)])
                add('CALL_DUP', i, '(twice)', [(i, 'dup', None)])
            m = QUOTA_CALL.match(line)
            if m and i + 1 < end - 1 and re.match(r'^\s*if \(%s\)' % re.escape(m.group(2)),
                                                   lines[i + 1]):
                last = _block_end(lines, i + 1)
                nxt = last + 1
                if nxt < end - 1 and lines[nxt].strip().endswith(';') and \
                        not re.match(r'^\s*(return|goto|if|else|\})', lines[nxt]) and \
                        lines[nxt].startswith(m.group(1)) and \
                        not lines[nxt].startswith(m.group(1) + ' ') and \
                        not lines[nxt].startswith(m.group(1) + '\t'):
                    add('QUOTA_MOVE', i, 'moved after: ' + lines[nxt].strip(),
                        [(i, 'move', (i, last, nxt))])
            for call in DQUOT_ARG.finditer(line):
                args = [a.strip() for a in call.group(2).split(',')]
                for k, arg in enumerate(args):
                    if arg in INODE_NAMES:
                        for other in sorted(names - {arg}):
                            add('ARG_SWAP', i, '%s(... %s ...) for %s' % (call.group(1), other,
                                                                          arg),
                                [(i, 'swap', (call.group(1), k, arg, other))])
                            break
            if re.search(r'\bUSRQUOTA\b', line) and 'GRPQUOTA' not in line:
                add('ARG_SWAP', i, 'GRPQUOTA for USRQUOTA', [(i, 'token', ('USRQUOTA',
                                                                            'GRPQUOTA'))])
    return out


def schema(text, mutants_edits):
    """@text with every mutant of @mutants_edits behind its number."""
    lines = text.split('\n')
    before: Dict[int, List[str]] = {}
    replace: Dict[int, str] = {}
    after: Dict[int, List[str]] = {}
    for m, edits in mutants_edits:
        sel = 'FS_KUNIT_MUTANT(%d)' % m.n
        for i, kind, arg in edits:
            cur = replace.get(i, lines[i])
            indent = re.match(r'^(\s*)', lines[i]).group(1)
            body = cur.strip()
            if kind == 'stmt':
                replace[i] = '%s{ if (%s) %s %s }' % (indent, sel, arg, body)
            elif kind == 'del':
                replace[i] = '%s{ if (!%s) %s }' % (indent, sel, body)
            elif kind == 'dup':
                replace[i] = '%s{ %s if (%s) %s }' % (indent, body, sel, lines[i].strip())
            elif kind == 'cond':
                mm = IF_LINE.match(cur)
                cond = mm.group(3)
                new = '!%s && (%s)' % (sel, cond) if arg == 'del' else \
                    '(%s ? !(%s) : (%s))' % (sel, cond, cond)
                replace[i] = '%s%sif (%s)%s' % (indent, mm.group(2) or '', new, mm.group(4) or '')
            elif kind == 'swap':
                fn, k, old, other = arg
                call = DQUOT_ARG.search(cur[cur.find(fn):]) if fn in cur else None
                if call:
                    args = [a.strip() for a in call.group(2).split(',')]
                    args[k] = '(%s ? %s : %s)' % (sel, other, old)
                    s = cur.find(fn) + call.start()
                    replace[i] = cur[:s] + '%s(%s)' % (fn, ', '.join(args)) + \
                        cur[cur.find(fn) + call.end():]
            elif kind == 'token':
                old, new = arg
                replace[i] = re.sub(r'\b%s\b' % old, '(%s ? %s : %s)' % (sel, new, old), cur,
                                    count=1)
            elif kind == 'move':
                first, last, nxt = arg
                block = ' '.join(x.strip() for x in lines[first:last + 1])
                before.setdefault(first, []).append('%sif (!%s) {' % (indent, sel))
                after.setdefault(last, []).append('%s}' % indent)
                after.setdefault(nxt, []).append('%sif (%s) { %s }' % (indent, sel, block))
    out = []
    for i, line in enumerate(lines):
        out += before.get(i, [])
        out.append(replace.get(i, line))
        out += after.get(i, [])
    text = '\n'.join(out)
    # The selector, after the file's first include.
    return re.sub(r'^(#include [<"].*[>"]\n)', r'\1#include <linux/fs_kunit_mutant.h>\n', text,
                  count=1, flags=re.M)


SELECTOR_H = '''/* SPDX-License-Identifier: GPL-2.0 */
/* Mutant schemata of make mutants: generated, never mailed. */
#ifndef _LINUX_FS_KUNIT_MUTANT_H
#define _LINUX_FS_KUNIT_MUTANT_H
#include <linux/compiler.h>
extern int fs_kunit_mutant;
#define FS_KUNIT_MUTANT(n) unlikely(fs_kunit_mutant == (n))
#endif
'''
SELECTOR_C = '''// SPDX-License-Identifier: GPL-2.0
/* Mutant schemata of make mutants: the mutant this boot runs (0: none). */
#include <linux/fs_kunit_mutant.h>
#include <linux/init.h>
#include <linux/moduleparam.h>
int fs_kunit_mutant;
core_param(fs_kunit_mutant, fs_kunit_mutant, int, 0444);
'''

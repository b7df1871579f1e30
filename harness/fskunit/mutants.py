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

import concurrent.futures
import dataclasses
import difflib
import fnmatch
import functools
import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Dict, List, Optional

from . import csource, gate, results, timing
from .workspace import RunError, boot_lane, say

# What CALL_DEL and CALL_DUP delete or double: a reference, a sleeping
# lock, memory: what a path out of a function must give back.  Left alone:
# unlock_new_inode() and discard_new_inode(), without which a later lookup
# waits for the inode for ever, and spinlocks and RCU, which deadlock the
# CPU: a hang that says nothing about what the suites check.
PUT_LIKE = re.compile(r'^(\s*)((?!unlock_new_inode|discard_new_inode|spin_unlock|raw_spin_unlock|'
                      r'srcu_read_unlock|rcu_read_unlock|read_unlock|write_unlock)'
                      r'(?:iput|dput|dqput|brelse|put_bh|kfree|\w+_put|\w*unlock\w*|\w+_release|'
                      r'\w+_free|up_read|up_write)\(.*\);)\s*$')
RETURN = re.compile(r'^(\s*)return (.+);\s*$')
ERRISH = re.compile(r'^(err|error|ret|retval|rc|status|-E[A-Z]+|PTR_ERR\(.+\))$')
IF_LINE = re.compile(r'^(\s*)(}\s*else\s+)?if \((.*)\)(\s*\{)?\s*$')
GOTO = re.compile(r'\bgoto (\w+);')
# f2fs calls dquot_initialize() through f2fs_dquot_initialize() (its fault
# injection), and keeps the dquot of a transfer in an array slot.
QUOTA_CALL = re.compile(r'^(\s*)(\w+) = ((?:f2fs_)?dquot_initialize|dquot_transfer)\((.*)\);\s*$')
QUOTA_RESULT = re.compile(r'^\s*(\w+(?:\[\w+\])?) = (?:__|f2fs_)?(dquot_initialize|dquot_transfer|'
                          r'dqget)\(')
DQUOT_ARG = re.compile(r'\b((?:f2fs_)?dquot_initialize|dquot_transfer)\(([^()]*)\)')
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


# Calls that change nothing a quota call could guard (accessors, lookups,
# computations, tracing; f2fs_balance_fs() only makes room, by a garbage
# collection no operation shows): the quota call is moved past them to the
# first call that does change something, or an equivalent mutant is made.
PURE = {'d_inode', 'strlen', 'BUG_ON', 'WARN_ON', 'OCFS2_SB', 'EXT4_SB', 'JFS_SBI', 'JFS_IP',
        'REISERFS_SB', 'EXT2_SB', 'F2FS_I_SB', 'F2FS_I', 'i_size_read', 'S_ISDIR', 'S_ISREG',
        'S_ISLNK', 'le32_to_cpu', 'cpu_to_le32', 'mlog_errno', 'sizeof', 'f2fs_balance_fs'}
PURE_NAME = re.compile(r'(^trace_|find_entry|lookup|_calc_|get_inode_loc)')


def _guarded_change(lines, j, stop, indent):
    """Index of the statement a quota call at @indent guards: the first
    one from @j that calls something not in PURE, past plain statements
    (assignments, pure calls) only; None if a branch or block comes first."""
    while j < stop:
        line = lines[j]
        if not line.strip():
            j += 1
            continue
        if not line.startswith(indent) or line[len(indent)] in ' \t' or \
                not line.rstrip().endswith(';') or 'dquot_' in line or \
                re.match(r'^\s*(return|goto|if|else|for|while|switch|do|\}|\w+:)', line):
            return None
        if any(name not in PURE and not PURE_NAME.search(name)
               for name in re.findall(r'\b(\w+)\s*\(', line)):
            return j
        j += 1
    return None


def _slice(lines, brace, end, mutate):
    """Which lines of a function (indices brace..end-2) the operators may
    touch: (the if lines whose branches are mutated, the lines where a
    return or a put is mutated), or None for every line (mutate = all).

    quota: the branch that tests what dquot_initialize(), dquot_transfer()
    or dqget() returned, and the path that branch takes: its block and,
    where it jumps, the label's lines to the function's next return.  The rest of a
    filesystem's rename or mknod handles its own errors, which are not what
    this project guards.
    if:REGEX: every if whose condition matches, and its block."""
    if mutate == 'all':
        return None
    body = range(brace, end - 1)
    labels = {m.group(1): i for i in body for m in [re.match(r'^(\w+):', lines[i])] if m}
    ifs = set()
    if mutate == 'quota':
        for i in body:
            m = QUOTA_RESULT.match(lines[i])
            j = i + 1
            while m and j < end - 1 and not lines[j].strip():
                j += 1
            c = IF_LINE.match(lines[j]) if m else None
            if c and re.search(r'(?<!\w)%s(?!\w)' % re.escape(m.group(1)), c.group(3)):
                ifs.add(j)
    elif mutate.startswith('if:'):
        pattern = re.compile(mutate[3:])
        ifs = {i for i in body for c in [IF_LINE.match(lines[i])] if c and pattern.search(c.group(3))}
    else:
        raise RunError('mutants/scope: mutate = %s: all, quota or if:REGEX' % mutate)
    paths = set()
    for i in ifs:
        block = range(i + 1, _block_end(lines, i) + 1)
        paths.update(block)
        for j in block:
            for g in GOTO.finditer(lines[j]):
                if g.group(1) in labels:
                    paths.update(_label_path(lines, labels[g.group(1)], end - 1))
    return ifs, paths


def _label_path(lines, label, stop):
    """The lines a goto to the label at @label runs: to the function's
    first return after it (a label below that one is another path: ext2's
    fail: after fail_drop:'s return), or to its end."""
    for j in range(label, stop):
        if re.match(r'^\treturn\b', lines[j]):
            return range(label, j + 1)
    return range(label, stop)


def generate(text, path, functions, suites, mutate='all'):
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
        # The inodes in reach: the function's struct inode pointers that
        # hold one where the swap is (a parameter, or set on an earlier line).
        params = '\n'.join(lines[start - 1:brace])
        names = set(re.findall(r'struct inode \*(?:const )?(\w+)\b(?!\s*[(\[])',
                               '\n'.join(lines[start - 1:end - 1])))

        def holds(name, i):
            return re.search(r'\*\s*%s\b' % name, params) or any(
                re.match(r'^\s*%s = ' % name, x) for x in lines[brace:i])
        sliced = _slice(lines, brace, end, mutate)

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
            on_path = sliced is None or i in sliced[1]
            m = RETURN.match(line)
            if m and is_int and on_path and ERRISH.match(m.group(2).strip()):
                expr = m.group(2).strip()
                add('RET_ZERO', i, 'return 0;', [(i, 'stmt', 'return 0;')])
                if expr.startswith('-E'):
                    other = '-ENOSPC' if expr == '-EIO' else '-EIO'
                    add('RET_ERRNO', i, 'return %s;' % other, [(i, 'stmt', 'return %s;' % other)])
            m = IF_LINE.match(line)
            if m and (i in sliced[0] if sliced else _body_exits(lines, i)):
                cond = m.group(3)
                if cond.count('(') == cond.count(')'):
                    add('BRANCH_DEL', i, 'if (0)', [(i, 'cond', 'del')])
                    add('BRANCH_NEG', i, 'if (!(%s))' % cond, [(i, 'cond', 'neg')])
            m = PUT_LIKE.match(line)
            if m and on_path and not re.match(r'^\s*(return|if|else)\b', line):
                add('CALL_DEL', i, '(deleted)', [(i, 'del', None)])
                add('CALL_DUP', i, '(twice)', [(i, 'dup', None)])
            m = QUOTA_CALL.match(line)
            if m and i + 1 < end - 1 and re.match(r'^\s*if \(%s\)' % re.escape(m.group(2)),
                                                   lines[i + 1]):
                last = _block_end(lines, i + 1)
                nxt = _guarded_change(lines, last + 1, end - 1, m.group(1))
                if nxt is not None:
                    add('QUOTA_MOVE', i, 'moved after: ' + lines[nxt].strip(),
                        [(i, 'move', (i, last, nxt))])
            for call in DQUOT_ARG.finditer(line):
                args = [a.strip() for a in call.group(2).split(',')]
                for k, arg in enumerate(args):
                    if arg in names:
                        for other in sorted(o for o in names - {arg} if holds(o, i)):
                            add('ARG_SWAP', i, '%s(... %s ...) for %s' % (call.group(1), other,
                                                                          arg),
                                [(i, 'swap', (call.group(1), k, arg, other))])
                            break
            # User quota for group where a dquot is looked up or stored.
            if re.search(r'\bUSRQUOTA\b', line) and 'GRPQUOTA' not in line and \
                    re.search(r'dqget\(|\] = \w+;', line) and 'case ' not in line:
                add('ARG_SWAP', i, 'GRPQUOTA for USRQUOTA', [(i, 'token', ('USRQUOTA',
                                                                            'GRPQUOTA'))])
    return out


def schema(text, mutants_edits):
    """(@text with every mutant of @mutants_edits behind its number,
    {line of the result (1-based): the mutants on it})."""
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
    out, at = [], {}
    for i, line in enumerate(lines):
        for new in before.get(i, []) + [replace.get(i, line)] + after.get(i, []):
            at[len(out)] = {int(n) for n in re.findall(r'FS_KUNIT_MUTANT\((\d+)\)', new)}
            out.append(new)
    first = next((k for k, x in enumerate(out) if re.match(r'^#include [<"]', x)), None)
    if first is None:
        raise RunError('no #include to put the selector after')
    out.insert(first + 1, '#include <linux/fs_kunit_mutant.h>')
    owners = {k + (2 if k > first else 1): ns for k, ns in at.items() if ns}
    return '\n'.join(out), owners


# The selector, compiled into every schemata kernel.  Each site also leaves
# a symbol (__fs_kunit_site_<n>) in its object, so that a site the
# configuration compiles out is found (NOT-BUILT), and marks itself reached,
# so that a survivor on a line no case runs is told from one a case runs
# without noticing: the marks are printed when the kernel halts.
SELECTOR_H = """/* SPDX-License-Identifier: GPL-2.0 */
/* Mutant schemata of make mutants (harness/fskunit/mutants.py): generated. */
#ifndef _LINUX_FS_KUNIT_MUTANT_H
#define _LINUX_FS_KUNIT_MUTANT_H
#include <linux/compiler.h>
#include <linux/types.h>
#define FS_KUNIT_MUTANTS %d
extern int fs_kunit_mutant;
extern u8 fs_kunit_mutant_reached[FS_KUNIT_MUTANTS + 1];
static __always_inline bool fs_kunit_mutant_on(int n)
{
	WRITE_ONCE(fs_kunit_mutant_reached[n], 1);
	return READ_ONCE(fs_kunit_mutant) == n;
}
#define FS_KUNIT_MUTANT(n) ({ \
	static const char __fs_kunit_site_##n __used = 0; \
	unlikely(fs_kunit_mutant_on(n)); })
#endif
"""
SELECTOR_C = """// SPDX-License-Identifier: GPL-2.0
/* Mutant schemata of make mutants (harness/fskunit/mutants.py): generated. */
#include <linux/fs_kunit_mutant.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/printk.h>
#include <linux/reboot.h>

/* The mutant this boot runs: fs_kunit_mutant=<n> on the command line; 0: none. */
int fs_kunit_mutant;
core_param(fs_kunit_mutant, fs_kunit_mutant, int, 0444);
u8 fs_kunit_mutant_reached[FS_KUNIT_MUTANTS + 1];

static int fs_kunit_mutant_report(struct notifier_block *nb, unsigned long action, void *data)
{
	char line[160];
	int n, len = 0;

	for (n = 1; n <= FS_KUNIT_MUTANTS; n++) {
		if (!READ_ONCE(fs_kunit_mutant_reached[n]))
			continue;
		len += scnprintf(line + len, sizeof(line) - len, " %d", n);
		if (len > 120) {
			pr_info("fs_kunit_mutant: reached%s\\n", line);
			len = 0;
		}
	}
	if (len)
		pr_info("fs_kunit_mutant: reached%s\\n", line);
	pr_info("fs_kunit_mutant: end of report\\n");
	return NOTIFY_DONE;
}

static struct notifier_block fs_kunit_mutant_nb = {
	.notifier_call = fs_kunit_mutant_report,
};

static int __init fs_kunit_mutant_init(void)
{
	return register_reboot_notifier(&fs_kunit_mutant_nb);
}
core_initcall(fs_kunit_mutant_init);
"""
REACHED = re.compile(r'fs_kunit_mutant: reached((?: \d+)+)\s*$')
REPORT_END = 'fs_kunit_mutant: end of report'
SELECTOR_FILES = ('include/linux/fs_kunit_mutant.h', 'lib/fs_kunit_mutant.c')
VERDICTS = ('KILLED', 'TIMEOUT', 'SURVIVED', 'EQUIVALENT', 'NOT-BUILT')


def plan(top, tree_path):
    """[(Mutant, edits)] of the whole scope, numbered from 1 in scope order."""
    out = []
    for s in csource.scope(top):
        with open(os.path.join(tree_path, s.path)) as f:
            text = f.read()
        out += generate(text, s.path, s.functions, s.suites, s.mutate)
    for n, (m, _) in enumerate(out, 1):
        m.n = n
    keys = [m.key for m, _ in out]
    if len(set(keys)) != len(keys):
        raise RunError('mutants/scope: a file is named twice')
    return out


def schemata(tree_path, planned, left_out=()):
    """{path: (new text, owners)} of every file with mutants, and the
    selector's two files, with the mutants of @left_out not made."""
    by_file: Dict[str, list] = {}
    for m, edits in planned:
        if m.n not in left_out:
            by_file.setdefault(m.file, []).append((m, edits))
    files = {}
    for path, some in by_file.items():
        with open(os.path.join(tree_path, path)) as f:
            files[path] = schema(f.read(), some)
    files[SELECTOR_FILES[0]] = (SELECTOR_H % len(planned), {})
    files[SELECTOR_FILES[1]] = (SELECTOR_C, {})
    return files


def as_patch(tree_path, files):
    """The schemata as a patch the tree's git applies (Tree.sync's extra)."""
    out = []
    for path, (text, _) in sorted(files.items()):
        new = text.splitlines(keepends=True)
        if path in SELECTOR_FILES:
            out.append('diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n'
                       '+++ b/%s\n@@ -0,0 +1,%d @@\n' % (path, path, path, len(new)))
            out += ['+' + x for x in new]
            continue
        with open(os.path.join(tree_path, path)) as f:
            old = f.read().splitlines(keepends=True)
        out.append('diff --git a/%s b/%s\n' % (path, path))
        out += difflib.unified_diff(old, new, 'a/' + path, 'b/' + path)
    with open(os.path.join(tree_path, 'lib', 'Makefile')) as f:
        makefile = f.read().splitlines(keepends=True)
    out.append('diff --git a/lib/Makefile b/lib/Makefile\n')
    out += difflib.unified_diff(makefile, makefile + ['obj-y += fs_kunit_mutant.o\n'],
                                'a/lib/Makefile', 'b/lib/Makefile')
    return ''.join(out)


def not_compiling(tree_path, build_dir, files, env):
    """{n: the compiler's error} of the mutants whose schema does not
    compile, each file compiled alone with the build's own command line; the
    error lines name the mutants (schema()'s owners).  Files the
    configuration does not build are left to built_sites()."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        inc = os.path.join(tmp, 'include', 'linux')
        os.makedirs(inc)
        with open(os.path.join(inc, 'fs_kunit_mutant.h'), 'w') as f:
            f.write(files[SELECTOR_FILES[0]][0])
        for path, (text, owners) in sorted(files.items()):
            if path in SELECTOR_FILES:
                continue
            cmd = gate.command(build_dir, path[:-2] + '.o')
            if cmd is None:
                continue
            copy = os.path.join(tmp, os.path.basename(path))
            with open(copy, 'w') as f:
                f.write(text)
            source = os.path.join(tree_path, path)
            said = gate.compile_with(build_dir, cmd, source, copy, env, extra=[
                '-iquote', os.path.dirname(source), '-I', os.path.join(tmp, 'include')])
            for m in re.finditer(r'^%s:(\d+):(?:\d+:)? error: (.*)$' % re.escape(copy), said,
                                 re.M):
                line = int(m.group(1))
                near = owners.get(line) or next(
                    (owners[k] for k in range(line - 1, max(0, line - 4), -1) if k in owners),
                    None)
                if not near:
                    raise RunError('the schemata of %s do not compile, and no mutant is on '
                                   'line %d: %s' % (path, line, m.group(2)))
                for n in near:
                    out.setdefault(n, m.group(2))
    return out


def built_sites(build_dir, planned):
    """The mutants whose sites the build compiled (their __fs_kunit_site_<n>)."""
    out = set()
    for path in sorted({m.file for m, _ in planned}):
        obj = os.path.join(build_dir, path[:-2] + '.o')
        if not os.path.exists(obj):
            continue
        r = subprocess.run(['nm', obj], capture_output=True, text=True)
        out.update(int(n) for n in re.findall(r'\b__fs_kunit_site_(\d+)\b', r.stdout))
    return out


# -- the kernels ---------------------------------------------------------------
def build(ws, cfg, planned, profiles):
    """The schemata kernel of each profile in @profiles, beside that
    profile's own build (its configuration, so the compile cache has every
    object but the mutated files).  Returns ({n: why} of the mutants not
    built, the tree id of the schemata tree)."""
    tree_id = ws.sync()
    env = dict(os.environ, LC_ALL='C', **cfg.compile_env(ws.tree.path))
    left_out: Dict[int, str] = {}
    for profile in profiles:
        # The profile's own build first: its command lines compile the schemata.
        ws.build(cfg.with_(profile=profile, variant=''), tree_id)
    build_dir = cfg.with_(profile=profiles[0], variant='').build_dir
    for _ in range(5):
        files = schemata(ws.tree.path, planned, left_out)
        new = not_compiling(ws.tree.path, build_dir, files, env)
        if not new:
            break
        left_out.update({n: 'does not compile: ' + why for n, why in new.items()})
    else:
        raise RunError('the schemata still do not compile after five rounds')
    patch = os.path.join(cfg.workdir, 'mutants', 'schemata.patch')
    os.makedirs(os.path.dirname(patch), exist_ok=True)
    with open(patch, 'w') as f:
        f.write(as_patch(ws.tree.path, files))
    # The files the schemata change go back afterwards with their old
    # mtimes too: to make, the other builds then never saw them change.
    touched = [os.path.join(ws.tree.path, p) for p in files if p not in SELECTOR_FILES]
    touched.append(os.path.join(ws.tree.path, 'lib', 'Makefile'))
    times = {p: os.stat(p).st_mtime_ns for p in touched}
    try:
        mutated = ws.sync((patch,))
        for profile in profiles:
            mut = cfg.with_(profile=profile, variant='mutants')
            if not os.path.exists(os.path.join(mut.build_dir, '.config')):
                # A copy of the profile's own build: kbuild then compiles only
                # what the schemata change, where an empty directory would
                # preprocess every file again to find it in the cache.
                shutil.rmtree(mut.build_dir, ignore_errors=True)
                shutil.copytree(cfg.with_(profile=profile, variant='').build_dir,
                                mut.build_dir, symlinks=True)
            ws.build(mut, mutated, warnings=False)
    finally:
        ws.sync()
        for p, ns in times.items():
            os.utime(p, ns=(ns, ns))
    for profile in profiles:
        sites = built_sites(cfg.with_(profile=profile, variant='mutants').build_dir, planned)
        for m, _ in planned:
            if m.profile == profile and m.n not in sites and m.n not in left_out:
                left_out[m.n] = 'compiled out in this configuration'
    return left_out


def lane(cfg, profile, k):
    """Lane k of the profile's schemata kernel: two boot at once."""
    return boot_lane(cfg.with_(profile=profile, variant='mutants'),
                     cfg.with_(profile=profile, variant='mutants-lane%d' % k))


class Stop(Exception):
    """A case failed: the mutant is killed, the rest of the boot is not needed."""


class Aborted(Exception):
    """make mutants was interrupted: every boot stops."""


ABORT = threading.Event()
_SUBTEST = re.compile(r'^(\s*)# Subtest: (\S+)')
_RESULT = re.compile(r'^(\s*)(ok|not ok) \d+ (.*?)(?:\s+#.*)?$')


class Reader:
    """Which case a KTAP line stream is in: the name of a result line, as
    suite.case or suite.case.param, from the "# Subtest:" headers above it."""

    def __init__(self):
        self.headers = {}  # indentation -> name

    def feed(self, line):
        """The full name of the case whose result @line is, or None."""
        m = _SUBTEST.match(line)
        if m:
            depth = len(m.group(1))
            # A suite's header stands at its own cases' indentation.
            self.headers = {d: n for d, n in self.headers.items() if d < depth}
            self.headers[depth] = m.group(2)
            return None
        m = _RESULT.match(line)
        if not m or not m.group(1):
            return None
        depth = len(m.group(1))
        return '.'.join([n for d, n in sorted(self.headers.items()) if d <= depth] +
                        [m.group(3).strip()])


def boot(ws, ln, n, glob, seconds, fail_fast=True):
    """Boot mutant @n (0: none) on the suites @glob: (console lines, wall
    seconds, how it ended, the case that failed first): 'stopped' at a case
    that failed (fail_fast), 'hung' at a hung-task report about a task other
    than KUnit's runner (fail_fast), 'timeout', 'halted' (the kernel went through its
    shutdown: the reached sites were printed) or 'died' (a panic: QEMU ends at
    once, panic=-1)."""
    ended, first = None, None
    lines: List[str] = []
    reader = Reader()

    reported = False
    hung = None  # inside a hung-task report's trace: whose wait it is not yet known

    def each_line(line):
        nonlocal first, reported, hung, ended
        if ABORT.is_set():
            raise Aborted()
        lines.append(line.rstrip('\n'))
        text = results._PREFIX.sub('', line.rstrip('\n'))
        name = reader.feed(text)
        if not fail_fast:
            return
        if name and _RESULT.match(text).group(2) == 'not ok':
            first = name
            raise Stop()
        # A task of the case's blocked past the detector's period is the hang
        # the time-out would end minutes later (a lost unlock): TIMEOUT now,
        # once its trace shows it is not KUnit's runner waiting for the case.
        if results._HUNG.match(text):
            hung = True
        elif hung and results.KUNIT_RUNNER_WAIT in text:
            hung = None
        elif hung and results._TRACE_END.match(text):
            ended = 'hung'
            raise Stop()
        # A kernel report fails a case whose own result says ok (a leak is
        # found by the scan at the suite's end): the suite's result line is
        # where the log that judges it is complete.  A hung-task report
        # may be KUnit's runner waiting, which fails nothing.
        if (results._REPORT.match(text) and not text.startswith('INFO: task ')) or \
                results._LEAK.match(text):
            reported = True
        elif reported and re.match(r'^(ok|not ok) \d+ ', text):
            raise Stop()
    t = time.monotonic()
    try:
        ws.kunit(ln, 'exec', '--raw_output=all', '--timeout=%d' % seconds,
                 '--kernel_args=fs_kunit_mutant=%d' % n, glob, each_line=each_line)
    except Stop:
        ended = ended or 'stopped'
    wall = time.monotonic() - t
    console = [x for x in lines if results._PREFIX.match(x) or not x.startswith('[')]
    if not any(results._PREFIX.match(x) for x in console):
        raise RunError('mutant %d: QEMU printed nothing (kunit.py: %s)'
                       % (n, ' / '.join(lines[-3:])))
    if ended is None:
        if any(REPORT_END in x for x in console):
            ended = 'halted'
        elif wall >= seconds - 1:
            ended = 'timeout'
        else:
            ended = 'died'
    return console, wall, ended, first


def reached(lines):
    return {int(n) for x in lines for m in [REACHED.search(x)] if m for n in m.group(1).split()}


def judge(base, suites, ended, first=None):
    """(verdict, the cases that caught it) of one mutant's boot against the
    baseline's {suite.case: status}, in the order the kernel runs them.

    A case that passed in the baseline and failed kills the mutant (with
    fail_fast the boot stops there: @first).  When the kernel died (an oops
    is a panic here) or hung, the case it was in is the first baseline case
    that did not pass: that case caught it, and the cases after it are not
    counted.  A hang (the time-out, or a hung-task report failing the case)
    is TIMEOUT, counted as detected; a mutant that makes the kernel die
    before any case is KILLED by no case."""
    if ended == 'stopped' and first:
        return 'KILLED', [first]
    got = {}
    for path, test in results.leaves(suites or []):
        case = '.'.join(path.split('.')[:2])
        if got.get(case) not in (results.FAIL, results.ERROR):
            got[case] = test.status
    failed = [c for c, st in base.items() if st == results.PASS
              and got.get(c) in (results.FAIL, results.ERROR)]
    if ended == 'hung':
        ended = 'timeout'
    if ended in ('died', 'timeout'):
        running = next((c for c, st in base.items()
                        if st == results.PASS and got.get(c) != results.PASS), None)
        if running is None:
            return ('TIMEOUT' if ended == 'timeout' else 'KILLED'), \
                ['(after the last case: the kernel %s)' % ended]
        return ('TIMEOUT' if ended == 'timeout' else 'KILLED'), \
            [c for c in failed if c != running] + [running]
    if failed:
        hung = all(any(r.startswith('INFO: task ') for t in _tests(suites, c) for r in t.reports)
                   for c in failed)
        return ('TIMEOUT' if hung else 'KILLED'), failed
    if ended == 'stopped':
        # A report between the cases of a suite (its exit, a work item).
        return 'KILLED', [s.name for s in suites or [] if s.reports] or ['(a kernel report)']
    return 'SURVIVED', []


def _tests(suites, case):
    return [t for path, t in results.leaves(suites or [])
            if '.'.join(path.split('.')[:2]) == case]


# -- the run -------------------------------------------------------------------
def read_list(top, name):
    """mutants/<name>: {key: the rest of its line} (# comments, blank lines)."""
    out = {}
    path = os.path.join(top, 'mutants', name)
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip() if line.lstrip().startswith('#') else line.strip()
            if line:
                key, _, rest = line.partition(' ')
                out[key] = rest.strip()
    return out


def pick(planned, select, top):
    """The mutants MUTANTS= asks for: all, 'sample' (mutants/sample), or
    globs of keys (file:function:OP:k) or numbers."""
    if not select:
        return [m for m, _ in planned]
    if select == 'sample':
        keys = read_list(top, 'sample')
        if not keys:
            raise RunError('mutants/sample lists no mutant (python3 -m fskunit mutants-sample '
                           'writes it from a full make mutants)')
        chosen = [m for m, _ in planned if m.key in keys]
        gone = set(keys) - {m.key for m in chosen}
        if gone:
            raise RunError('mutants/sample names mutants the scope no longer makes: '
                           + ', '.join(sorted(gone)))
        return chosen
    globs = select.split()
    chosen = [m for m, _ in planned if any(fnmatch.fnmatchcase(m.key, g) or g == str(m.n)
                                           for g in globs)]
    if not chosen:
        raise RunError('MUTANTS=%s matches none of the %d mutants (keys look like %s)'
                       % (select, len(planned), planned[0][0].key))
    return chosen


def baseline(ws, ln, glob, cfg):
    """The schemata kernel with no mutant on @glob's suites: ({case: status},
    the sites reached, wall seconds).  Every case must pass (or skip)."""
    seconds = timing.timeout(cfg, [])
    lines, wall, ended, _ = boot(ws, ln, 0, glob, seconds, fail_fast=False)
    return judge_baseline(lines, ws.tree.path, ended, '%s %s' % (ln.profile, glob),
                          os.path.join(ln.build_dir, 'baseline.log')), reached(lines), wall


def judge_baseline(lines, tree, ended, what, log):
    """{case: status} of a boot with no mutant (@lines its console), which
    must have halted with every case passed or skipped; else an error, the
    console kept in @log."""
    suites = results.parse(lines, tree)
    bad = [p for p, t in results.leaves(suites or []) if t.status in (results.FAIL, results.ERROR)]
    if suites is None or bad or ended != 'halted':
        with open(log, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        raise RunError('the schemata kernel with no mutant fails on %s: %s (log: %s)'
                       % (what, ', '.join(bad[:5]) or ended, log))
    base: Dict[str, str] = {}
    for path, test in results.leaves(suites):
        case = '.'.join(path.split('.')[:2])
        base[case] = test.status if base.get(case, results.PASS) == results.PASS else base[case]
    return base


def seconds_for(m, baseline_wall):
    """How long a mutant's boot may take.  A hang is a verdict of its own,
    not a reason to wait long: three times the baseline, and on the debug
    kernel the hung-task detector's two periods of 60 s (kunitconfig) as
    well: a report of a hung task ends the boot before that (boot())."""
    if m.profile == 'default':
        return int(max(45, 3 * baseline_wall))
    return int(150 + 3 * baseline_wall)


def in_lanes(lanes, calls):
    """Run @calls on @lanes threads, their results in order.  When one
    fails, or make mutants is interrupted, every boot stops (ABORT)."""
    ABORT.clear()
    ex = concurrent.futures.ThreadPoolExecutor(lanes)
    futures = [ex.submit(c) for c in calls]
    try:
        return [f.result() for f in futures]
    except BaseException:
        ABORT.set()
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        ex.shutdown(wait=True)


def prepare(ws, cfg, select):
    """What both runners do first: the mutants chosen, their schemata
    kernels built.  (planned, chosen, mutants/equivalent, profiles, the
    mutants not built: {n: why})."""
    tree_id = ws.sync()
    planned = plan(cfg.top, ws.tree.path)
    chosen = pick(planned, select, cfg.top)
    equivalent = read_list(cfg.top, 'equivalent')
    unknown = set(equivalent) - {m.key for m, _ in planned}
    if unknown:
        raise RunError('mutants/equivalent names mutants the scope no longer makes: '
                       + ', '.join(sorted(unknown)))
    profiles = sorted({m.profile for m in chosen}, key=lambda p: p != 'default')
    say('mutants: %d of %d (%s), tree %s' % (len(chosen), len(planned),
                                             ', '.join(profiles), tree_id[:12]))
    return planned, chosen, equivalent, profiles, build(ws, cfg, planned, profiles)


def to_boot(chosen, left_out, bases):
    """The mutants a boot must judge: the others are NOT-BUILT, or SURVIVED
    because no case of the baseline reached their site."""
    todo = []
    for m in chosen:
        if m.n in left_out:
            m.verdict, m.detail = 'NOT-BUILT', left_out[m.n]
            continue
        m.reached = m.n in bases[(m.profile, m.suites)][1]
        if not m.reached:
            # A schema acts only where its site runs, and no case runs it.
            m.verdict, m.detail = 'SURVIVED', 'not reached'
        else:
            todo.append(m)
    return todo


def judged(m, base, suites, ended, first=None):
    """m's verdict from its boot."""
    m.verdict, m.killed_by = judge(base, suites, ended, first)
    if m.verdict == 'SURVIVED':
        m.detail = 'reached, not detected'
    elif ended == 'died':
        m.detail = 'the kernel died'
    elif ended == 'hung':
        m.detail = 'a task hung (hung-task report)'


def settle(chosen, equivalent):
    """The survivors mutants/equivalent lists become EQUIVALENT; a listed
    mutant that was detected is a problem (the list is stale)."""
    problems = []
    for m in chosen:
        if m.key in equivalent:
            if m.verdict == 'SURVIVED':
                m.verdict, m.detail = 'EQUIVALENT', equivalent[m.key]
            elif m.verdict in ('KILLED', 'TIMEOUT'):
                problems.append('%s is listed in mutants/equivalent but %s (%s): the list '
                                'is stale' % (m.key, m.verdict, ', '.join(m.killed_by[:2])))
    return problems


def main(ws, cfg, select='', lanes=None):
    """make mutants: build, baselines, every chosen mutant judged; writes
    results/mutants.md and results/mutants.json.  Returns the mutants."""
    t0 = time.monotonic()
    planned, chosen, equivalent, profiles, left_out = prepare(ws, cfg, select)
    t_build = time.monotonic() - t0
    lanes = lanes or cfg.boots
    pool = {p: queue.Queue() for p in profiles}
    for p in profiles:
        for k in range(lanes):
            pool[p].put(lane(cfg, p, k))

    def on_lane(profile, fn, *args):
        ln = pool[profile].get()
        try:
            return fn(ln, *args)
        finally:
            pool[profile].put(ln)
    groups = sorted({(m.profile, m.suites) for m in chosen if m.n not in left_out})
    found = in_lanes(lanes, [functools.partial(on_lane, g[0], lambda ln, glob: baseline(
        ws, ln, glob, cfg.with_(profile=ln.profile)), g[1]) for g in groups])
    bases = dict(zip(groups, found))
    for g in groups:
        say('mutants: baseline %s %s: %d cases, %d sites reached, %.0f s'
            % (g[0], g[1], len(bases[g][0]), len(bases[g][1]), bases[g][2]))
    t_base = time.monotonic() - t0 - t_build
    todo = to_boot(chosen, left_out, bases)
    done = [0]
    lock = threading.Lock()

    def one(ln, m):
        base, _, wall = bases[(m.profile, m.suites)]
        lines, m.seconds, ended, first = boot(ws, ln, m.n, m.suites, seconds_for(m, wall))
        judged(m, base, results.parse(lines, ws.tree.path), ended, first)
        with lock:
            done[0] += 1
            say('mutants: %d/%d %s %s (%s) %.0f s' % (done[0], len(todo), m.verdict, m.key,
                                                       ', '.join(m.killed_by[:2]), m.seconds))
    in_lanes(lanes, [functools.partial(on_lane, m.profile, one, m) for m in todo])
    problems = settle(chosen, equivalent)
    times = {'build': round(t_build), 'baselines': round(t_base),
             'mutants': round(time.monotonic() - t0 - t_build - t_base),
             'total': round(time.monotonic() - t0), 'lanes': lanes}
    write(cfg, chosen, len(planned), times, problems, select)
    return chosen, problems


def score(ms):
    """(detected, judged): KILLED and TIMEOUT of all but EQUIVALENT and NOT-BUILT."""
    judged = [m for m in ms if m.verdict in ('KILLED', 'TIMEOUT', 'SURVIVED')]
    return sum(m.verdict != 'SURVIVED' for m in judged), len(judged)


def write(cfg, ms, planned, times, problems, select):
    out = os.path.join(cfg.top, 'results')
    os.makedirs(out, exist_ok=True)
    # make check's sample must not pass for a full make mutants.
    name = 'mutants-sample' if select == 'sample' else 'mutants'
    with open(os.path.join(out, name + '.json'), 'w') as f:
        json.dump({'select': select or 'all', 'planned': planned, 'seconds': times,
                   'problems': problems,
                   'mutants': [dataclasses.asdict(m) for m in ms]}, f, indent=1)
    detected, judged = score(ms)
    by = lambda key: sorted({key(m) for m in ms})  # noqa: E731
    rows = ['| %s | %s |' % (f, ' | '.join(str(sum(1 for m in ms if m.file == f and
                                                      m.verdict == v)) for v in VERDICTS))
            for f in by(lambda m: m.file)]
    text = ['# Mutants (%s)' % (select or 'all'), '',
            '%d mutants of %d; score %d of %d (%.1f%%) killed or timed out, of those neither '
            'equivalent nor compiled out.  %s' % (
                len(ms), planned, detected, judged, 100.0 * detected / max(1, judged),
                'Build %(build)d s, baselines %(baselines)d s, mutants %(mutants)d s, '
                'total %(total)d s, %(lanes)d lanes.' % times), '',
            '| file | %s |' % ' | '.join(VERDICTS), '|---|%s' % ('---|' * len(VERDICTS))] + rows
    text += ['', '| verdict | count |', '|---|---|'] + [
        '| %s | %d |' % (v, sum(1 for m in ms if m.verdict == v)) for v in VERDICTS]
    for title, which in (('Survivors not reached by any case', lambda m: m.verdict == 'SURVIVED'
                          and not m.reached),
                         ('Survivors reached but not detected', lambda m: m.verdict == 'SURVIVED'
                          and m.reached),
                         ('Not built', lambda m: m.verdict == 'NOT-BUILT'),
                         ('Equivalent', lambda m: m.verdict == 'EQUIVALENT')):
        some = [m for m in ms if which(m)]
        if some:
            text += ['', '## %s (%d)' % (title, len(some)), '']
            text += ['- `%s` line %d: `%s` -> %s%s' % (m.key, m.line, m.original, m.mutated,
                                                       ' (%s)' % m.detail if m.detail else '')
                     for m in some]
    if problems:
        text += ['', '## Problems', ''] + ['- ' + p for p in problems]
    with open(os.path.join(out, name + '.md'), 'w') as f:
        f.write('\n'.join(text) + '\n')
    say('mutants: score %d/%d; results/%s.md' % (detected, judged, name))


def write_sample(top, results_json, per_file=1):
    """mutants/sample from a full run (results/mutants.json): every mutant
    that mutants/survivors says once survived, and @per_file killed ones of
    each scope file, of different operators, default profile first."""
    with open(results_json) as f:
        ms = json.load(f)['mutants']
    former = read_list(top, 'survivors')
    killed = [m for m in ms if m['verdict'] in ('KILLED', 'TIMEOUT')]
    chosen = {m['key']: 'former survivor' for m in killed if m['key'] in former}
    for path in sorted({m['file'] for m in ms}):
        ops, picked = set(), 0
        for m in sorted((m for m in killed if m['file'] == path),
                        key=lambda m: (m['profile'] != 'default', m['n'])):
            if picked == per_file:
                break
            if m['op'] in ops or m['key'] in chosen:
                continue
            ops.add(m['op'])
            chosen[m['key']] = ''
            picked += 1
    lines = ['# make check re-judges these mutants (MUTANTS=sample): every former',
             '# survivor (mutants/survivors) and %d more of each scope file.' % per_file,
             '# Written by python3 -m fskunit mutants-sample from a full make mutants.']
    lines += ['%s%s' % (k, ' ' + why if why else '') for k, why in chosen.items()]
    with open(os.path.join(top, 'mutants', 'sample'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return chosen

# SPDX-License-Identifier: GPL-2.0
"""The warning gate: a build of the series adds no compiler warning to a file
it touches.

The kernel test robot replies to a new warning within a day, and an
incremental build prints a file's warnings only when it compiles the file,
so the gate does not read build logs: after a build it compiles again, with
the build directory's own command line (kbuild's .<obj>.cmd, through the
shared compile cache, so it costs little), every C file the series changes
or adds, and the pristine version of each file it changes.  A warning the
series' version has and the pristine one has not fails the gate; files the
series adds must be clean with W=1 as well, which make compiles.  The
verdict is kept with the build's stamp: the same build is not checked twice.
"""

import contextlib
import json
import os
import re
import shlex
import subprocess
import tempfile

class GateError(Exception):
    """The gate could not compile what it checks: it has checked nothing."""


# "path:line:col: warning: text [-Wflag]"
_WARNING = re.compile(r'^(?P<file>[^:\s]+):\d+:(?:\d+:)? warning: (?P<text>.*)$')


def command(build_dir, obj):
    """kbuild's command line for @obj (relative to the build directory)."""
    d, base = os.path.split(obj)
    try:
        with open(os.path.join(build_dir, d, '.%s.cmd' % base)) as f:
            first = f.readline()
    except OSError:
        return None
    m = re.match(r'^(?:saved)?cmd_\S+ := (.*)$', first.rstrip('\n'))
    return m.group(1) if m else None


def _normal(tree_path, path):
    path = os.path.normpath(path)
    for prefix in (tree_path + os.sep, os.path.join('..', os.path.basename(tree_path)) + os.sep):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def warnings(text, tree_path, rename=None):
    """{(file relative to the tree, text)} of compiler output @text; the line
    numbers are left out, so that a warning the series moves is not new."""
    out = set()
    for line in text.splitlines():
        m = _WARNING.match(line.strip())
        if m:
            f = _normal(tree_path, m.group('file'))
            out.add(((rename or {}).get(f, f), re.sub(r'\x1b\[[0-9;]*m', '', m.group('text'))))
    return out


def compile_with(build_dir, cmd, source, replacement, env, extra=()):
    """Run kbuild's @cmd, reading @replacement instead of @source (with
    @extra options before it) and writing nothing of the build's; its
    diagnostics."""
    args = shlex.split(cmd)
    # Only the compiler: kbuild runs objtool after it (" ; ./tools/objtool/...").
    if ';' in args:
        args = args[:args.index(';')]
    with tempfile.TemporaryDirectory() as tmp:
        out = []
        skip = False
        for a in args:
            if skip:
                out.append(os.path.join(tmp, 'x.o'))
                skip = False
            elif a == '-o':
                out.append(a)
                skip = True
            elif a.startswith('-Wp,-MMD,'):
                out.append('-Wp,-MMD,' + os.path.join(tmp, 'x.d'))
            elif os.path.normpath(os.path.join(build_dir, a)) == os.path.normpath(source):
                out += list(extra) + [replacement]
            else:
                out.append(a)
        r = subprocess.run(out, cwd=build_dir, capture_output=True, text=True, env=env)
    if r.returncode and ' error: ' not in r.stdout + r.stderr:
        raise GateError('%s: the compiler failed without an error message (exit %d)'
                        % (replacement, r.returncode))
    if re.search(r'^(gcc|cc1|ccache): (fatal )?error: ', r.stderr, re.M):
        # The command line itself is wrong: nothing was compiled, nothing checked.
        raise GateError('%s: %s' % (replacement, r.stderr.strip().splitlines()[0]))
    return r.stdout + r.stderr


def touched(tree, base='pristine', head='HEAD'):
    """{path: 'A' or 'M'} of the files @head adds or changes against @base."""
    r = tree.git('diff', '--name-status', '--no-renames', base, head)
    out = {}
    for line in r.stdout.splitlines():
        status, path = line.split('\t', 1)
        if status in ('A', 'M'):
            out[path] = status
    return out


def check_files(tree, build_dir, ccache_dir, files, w1=True):
    """New warnings of the C files in @files ({path: 'A'|'M'}) that this
    build compiles, as 'file: text' lines."""
    env = dict(os.environ, CCACHE_DIR=ccache_dir, CCACHE_BASEDIR=tree.path,
               LC_ALL='C')
    new, added = [], []
    for path, status in sorted(files.items()):
        if not path.endswith('.c'):
            continue
        obj = path[:-2] + '.o'
        cmd = command(build_dir, obj)
        if cmd is None:
            continue  # not part of this configuration
        source = os.path.join(tree.path, path)
        have = warnings(compile_with(build_dir, cmd, source, source, env), tree.path)
        had = set()
        if status == 'M':
            d, base = os.path.split(source)
            old = os.path.join(d, '.fskunit-pristine-' + base)
            with open(old, 'w') as f:
                f.write(tree.git('show', 'pristine:' + path).stdout)
            try:
                had = warnings(compile_with(build_dir, cmd, source, old, env), tree.path,
                               {_normal(tree.path, old): path})
            finally:
                os.unlink(old)
        else:
            added.append(obj)
        new += ['%s: %s' % w for w in sorted(have - had)]
    if w1 and added:
        new += _w1(tree, build_dir, env, added)
    return new


def _w1(tree, build_dir, env, objs):
    """What W=1 says about the objects of added files, through kbuild; then
    they are compiled again as the build has them (from the cache)."""
    make = ['make', '-s', 'ARCH=x86_64', 'O=' + build_dir, 'CC=ccache gcc',
            '-j%d' % (os.cpu_count() or 1)]
    r = subprocess.run(make + ['W=1'] + objs, cwd=tree.path, capture_output=True, text=True,
                       env=env)
    found = ['%s: W=1: %s' % w for w in sorted(warnings(r.stdout + r.stderr, tree.path))]
    if r.returncode and not found:
        found.append('make W=1 failed (exit %d): %s' % (r.returncode, r.stderr[-500:]))
    subprocess.run(make + objs, cwd=tree.path, capture_output=True, env=env)
    return found


def check_build(tree, build_dir, ccache_dir, stamp):
    """The gate for a build of the series as the tree holds it; cached by
    the build's stamp."""
    record = os.path.join(build_dir, '.fs-kunit-gate')
    with contextlib.suppress(OSError, ValueError):
        with open(record) as f:
            kept = json.load(f)
        if kept['stamp'] == stamp:
            return kept['new']
    new = check_files(tree, build_dir, ccache_dir, touched(tree))
    with open(record, 'w') as f:
        json.dump({'stamp': stamp, 'new': new}, f)
    return new

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
series adds must be clean with W=1 as well.  The verdict is kept with the
build's stamp: the same build is not checked twice.  Each file's verdict is
kept too, with its object's mtime and size: kbuild writes an object again
whenever its source, a header it includes or its command line changes, so a
file whose object is as it was keeps its verdict without a compile (after a
test file's edit only that file is compiled again).  W=1's command line is
kbuild's (make W=1 of the object, once); it is kept beside the object's own,
and while that one stays the same W=1 is that command and the kernel-doc
check W=1 adds, without kbuild (whose every make costs a walk of the tree).
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


def _stat(build_dir, obj):
    try:
        st = os.stat(os.path.join(build_dir, obj))
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def check_files(tree, build_dir, ccache_dir, files, w1=True, known=None):
    """New warnings of the C files in @files ({path: 'A'|'M'}) that this
    build compiles, as 'file: text' lines.  @known ({path: what was found},
    updated) holds the verdicts of an earlier check of this build directory."""
    env = dict(os.environ, CCACHE_DIR=ccache_dir, CCACHE_BASEDIR=tree.path,
               LC_ALL='C')
    known = {} if known is None else known
    new, checked, added = [], [], []
    for path, status in sorted(files.items()):
        if not path.endswith('.c'):
            continue
        obj = path[:-2] + '.o'
        cmd = command(build_dir, obj)
        if cmd is None:
            continue  # not part of this configuration
        was = known.get(path, {})
        if was.get('status') == status and was.get('cmd') == cmd and \
                was.get('object') and was['object'] == _stat(build_dir, obj) and \
                (status == 'M' or not w1 or 'w1_new' in was):
            new += was['new'] + (was.get('w1_new', []) if w1 else [])
            continue
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
        elif w1:
            added.append(path)
        mine = ['%s: %s' % w for w in sorted(have - had)]
        known[path] = {'status': status, 'cmd': cmd, 'new': mine,
                       'w1_cmd': was.get('w1_cmd') if was.get('cmd') == cmd else None}
        checked.append(path)
        new += mine
    if added:
        new += _w1(tree, build_dir, env, added, known)
    for path in checked:
        # After _w1, whose make leaves each object as the build had it.
        known[path]['object'] = _stat(build_dir, path[:-2] + '.o')
    return new


def _w1(tree, build_dir, env, paths, known):
    """What W=1 says about the added files @paths: kbuild's W=1 command line
    for each (make W=1 of the objects whose command line is not known, then
    the objects are compiled again as the build has them, from the cache),
    and kernel-doc's check, which W=1 adds."""
    unknown = [p[:-2] + '.o' for p in paths if not known[p]['w1_cmd']]
    found = []
    if unknown:
        make = ['make', '-s', 'ARCH=x86_64', 'O=' + build_dir, 'CC=ccache gcc',
                '-j%d' % (os.cpu_count() or 1)]
        r = subprocess.run(make + ['W=1'] + unknown, cwd=tree.path, capture_output=True,
                           text=True, env=env)
        if r.returncode and not warnings(r.stdout + r.stderr, tree.path):
            found.append('make W=1 failed (exit %d): %s' % (r.returncode, r.stderr[-500:]))
        for obj in unknown:
            known[obj[:-2] + '.c']['w1_cmd'] = command(build_dir, obj)
        subprocess.run(make + unknown, cwd=tree.path, capture_output=True, env=env)
    for path in paths:
        if not known[path]['w1_cmd']:
            found.append('%s: W=1: kbuild left no command line for its object' % path)
            continue
        source = os.path.join(tree.path, path)
        text = compile_with(build_dir, known[path]['w1_cmd'], source, source, env)
        try:
            doc = subprocess.run([os.path.join(tree.path, 'scripts', 'kernel-doc'), '-none',
                                  source], cwd=build_dir, capture_output=True, text=True,
                                 env=env)
        except OSError as e:
            raise GateError('%s: W=1\'s kernel-doc check: %s' % (path, e))
        mine = ['%s: W=1: %s' % w for w in sorted(warnings(text + doc.stdout + doc.stderr,
                                                             tree.path))]
        known[path]['w1_new'] = mine
        found += mine
    return found


def check_build(tree, build_dir, ccache_dir, stamp):
    """The gate for a build of the series as the tree holds it; cached by
    the build's stamp."""
    record = os.path.join(build_dir, '.fs-kunit-gate')
    kept = {}
    with contextlib.suppress(OSError, ValueError):
        with open(record) as f:
            kept = json.load(f)
        if kept['stamp'] == stamp:
            return kept['new']
    known = kept.get('files', {})
    new = check_files(tree, build_dir, ccache_dir, touched(tree), known=known)
    with open(record, 'w') as f:
        json.dump({'stamp': stamp, 'new': new, 'files': known}, f)
    return new

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make series: the patches as the maintainers would get them.

    series.py OUT

One series per maintainer group, each in OUT/<NN-group>/ with a cover
letter, numbered patches, a diffstat, base-commit and the
prerequisite-patch-id of the groups it needs.  A group is a file
patches/covers/NN-<group>.txt: header lines (Subject:, Patches:, Needs:,
Fix:, Prefix:), a blank line, and the cover letter's own words; the rest of
the letter (how to run, what the regression proof covers, checkpatch
exceptions, base, who signs) is made here.  Fixes go first, alone, with
Fixes: and Cc: stable.  Each patch of patches/ gets the test sources that
patches/series lists after it folded in, so what is mailed is what was
tested.  Plumbing only: the kernel tree's work tree is not touched.

AUTHOR='Name <mail>' signs: it becomes From: and Signed-off-by: of every
patch.  Without it the placeholder stays and each cover letter says that a
person must sign.

Then the checks make check counts: checkpatch.pl --strict finds nothing in
a patch that patches/checkpatch-exceptions does not list with a reason (a
listed exception that no longer occurs is an error too), and
scripts/kernel-doc -none -Wall is clean on every source file the series
adds, and so is a W=1 build of its C files, when a build directory exists.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regressions  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATCHES = os.path.join(TOP, 'patches')
# The image scripts go out with the series under this kernel path; here they
# are images/.  Every other file a patch adds is kunit-tests/<its kernel path>.
TOOLS = 'tools/testing/fs_kunit/'
PLACEHOLDER = re.compile(r'^Signed-off-by: Seed .*$', re.M)
FINDING = re.compile(r'^.*?:\d+: (ERROR|WARNING|CHECK):(\w+): (.*)$')


def die(msg):
    sys.exit('series.py: error: ' + msg)


def number(patch):
    return patch.split('-', 1)[0]


def source(f):
    """Where the file a patch adds at kernel path @f is in this repository."""
    if f.startswith(TOOLS):
        return os.path.join(TOP, 'images', f[len(TOOLS):])
    return os.path.join(TOP, 'kunit-tests', f)


def read_series():
    """[(patch file, [test files it adds])] in the order of patches/series."""
    entries = []
    with open(os.path.join(PATCHES, 'series')) as f:
        for line in f:
            words = line.split('#', 1)[0].split()
            if words:
                entries.append((words[0], words[1:]))
    return entries


def read_covers(entries):
    """[group] in mailing order, each a dict: name, subject, patches (numbers,
    in series order), needs, fix, prefix, body."""
    order = [number(p) for p, _ in entries]
    groups, seen = [], {}
    for path in sorted(glob.glob(os.path.join(PATCHES, 'covers', '*.txt'))):
        name = re.sub(r'^\d+-', '', os.path.basename(path)[:-4])
        with open(path) as f:
            head, _, body = f.read().partition('\n\n')
        fields = dict(line.split(': ', 1) for line in head.splitlines())
        g = {'name': name, 'subject': fields['Subject'], 'body': body.strip(),
             'needs': fields.get('Needs', '').split(),
             'fix': fields.get('Fix') == 'yes', 'prefix': fields.get('Prefix', 'PATCH'),
             'patches': sorted(fields['Patches'].split(), key=order.index)}
        for n in g['patches']:
            if n not in order:
                die(f'{path}: patch {n} is not in patches/series')
            if n in seen:
                die(f'{path}: patch {n} is already in group {seen[n]}')
            seen[n] = name
        for need in g['needs']:
            if need not in [x['name'] for x in groups]:
                die(f'{path}: needs {need}, which is not a group before it')
        groups.append(g)
    missing = [n for n in order if n not in seen]
    if missing:
        die('patches in no group (add them to a patches/covers/ file): ' + ' '.join(missing))
    return groups


class Tree:
    def __init__(self, path, author):
        self.path, self.author = path, author
        self.entries = {number(p): (p, files) for p, files in read_series()}
        # Without AUTHOR the cover letters come from the patches' placeholder.
        with open(os.path.join(PATCHES, read_series()[0][0])) as f:
            m = re.search(r'^From: ([^<]*?)\s*<([^>]*)>', f.read(), re.M)
        name, mail = author or (' '.join(m.group(1).split()), m.group(2))
        self.env = dict(os.environ, GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=mail)

    def git(self, *args, **kw):
        return subprocess.run(['git', '-C', self.path, *args], check=True, text=True,
                              capture_output=True, env=kw.pop('env', self.env), **kw).stdout

    def chain(self, numbers, tmp):
        """Commit @numbers, in series order, on pristine; [commit ids]."""
        index = os.path.join(tmp, 'index')
        env = dict(self.env, GIT_INDEX_FILE=index)
        self.git('read-tree', 'pristine', env=env)
        parent, commits = self.git('rev-parse', 'pristine').strip(), []
        for n in sorted(numbers, key=list(self.entries).index):
            patch, files = self.entries[n]
            path = os.path.join(PATCHES, patch)
            r = subprocess.run(['git', '-C', self.path, 'apply', '--cached', path],
                               env=env, capture_output=True, text=True)
            if r.returncode:
                die(f'{patch} does not apply to {tree_version()} after patches '
                    f'{" ".join(numbers[:numbers.index(n)]) or "none"}:\n{r.stderr}')
            for f in files:
                blob = self.git('hash-object', '-w', '--path', f, source(f)).strip()
                mode = '100755' if os.access(source(f), os.X_OK) else '100644'
                self.git('update-index', '--add', '--index-info',
                         input=f'{mode} {blob}\t{f}\n', env=env)
            info = subprocess.run(['git', 'mailinfo', os.path.join(tmp, 'msg'), os.devnull],
                                  stdin=open(path), capture_output=True, text=True,
                                  check=True).stdout
            info = dict(line.split(': ', 1) for line in info.splitlines() if ': ' in line)
            with open(os.path.join(tmp, 'msg')) as f:
                msg = f.read()
            name, mail = info['Author'], info['Email']
            if self.author:
                name, mail = self.author
                msg = PLACEHOLDER.sub(f'Signed-off-by: {name} <{mail}>', msg)
            cenv = dict(self.env, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=mail,
                        GIT_AUTHOR_DATE=info['Date'])
            tree = self.git('write-tree', env=env).strip()
            parent = self.git('commit-tree', tree, '-p', parent,
                              input=f'{info["Subject"]}\n\n{msg}', env=cenv).strip()
            commits.append(parent)
        return commits


def tree_version():
    return subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'version'],
                          capture_output=True, text=True).stdout.strip() or 'unknown'


def closure(group, by_name):
    """The patch numbers of every group @group needs, transitively."""
    out = []
    for need in group['needs']:
        out += [n for n in closure(by_name[need], by_name) if n not in out]
        out += [n for n in by_name[need]['patches'] if n not in out]
    return out


def fix_problems(tree, group):
    """A fix goes to stable: every patch of a Fix: group has both trailers."""
    bad = []
    for n in group['patches']:
        with open(os.path.join(PATCHES, tree.entries[n][0])) as f:
            text = f.read().split('\n---\n', 1)[0]
        for trailer in ('Fixes: ', 'Cc: stable@vger.kernel.org'):
            if not re.search('^' + re.escape(trailer), text, re.M):
                bad.append(f'{tree.entries[n][0]}: a fix without "{trailer.strip()}"')
    return bad


def maintainers(tree, base, tip):
    """To and Cc of a group's diff, as the kernel's get_maintainer.pl says."""
    with tempfile.NamedTemporaryFile('w', suffix='.patch') as diff:
        diff.write(tree.git('diff', base, tip))
        diff.flush()
        r = subprocess.run([os.path.join(tree.path, 'scripts', 'get_maintainer.pl'), '--no-git',
                            '--no-rolestats', '--no-git-fallback', diff.name],
                           cwd=tree.path, capture_output=True, text=True)
    return [line for line in r.stdout.splitlines() if '@' in line]


def proof(tree, group):
    """Lines for the cover letter: how to run the group's suites and what the
    regression patches of this repository showed about them."""
    files = [f for n in group['patches'] for f in tree.entries[n][1]]
    suites = sorted(s for s, f in regressions.suite_files().items() if f in files)
    kunitconfigs = sorted(os.path.dirname(f) for f in files if f.endswith('.kunitconfig'))
    nums = group['patches']
    reverts = []
    for path in sorted(glob.glob(os.path.join(TOP, 'regressions', '*', '*.patch'))):
        text = open(path).read().split('\ndiff --git', 1)[0]
        psuites, expect, _, _ = regressions.header(path)
        if any(re.search(rf'\bpatch {n}\b', text) for n in nums):
            reverts.append((path, expect))
        elif suites and set(psuites) & set(suites):
            reverts.append((path, expect))
    lines = []
    if kunitconfigs:
        lines += ['How to run:', '']
        lines += [f'  tools/testing/kunit/kunit.py run --arch=x86_64 --kunitconfig={d}'
                  for d in kunitconfigs]
        lines += ['']
    if reverts:
        cases = sorted({c for _, e in reverts for c in e})
        if group['fix']:
            text = (f'Proof: {len(reverts)} kernel patches of the test suite\'s repository '
                    'revert these fixes, one at a time, and each is caught: the cases '
                    'below pass with the fix and fail without it, in the same '
                    'configuration.')
        else:
            text = (f'Proof: {len(reverts)} kernel patches of the test suite\'s repository '
                    'bring back, one at a time, the bugs these cases guard against (each '
                    'error branch and call site of the commits above, and each fix '
                    'reverted), and each is caught: every case it names passes on this '
                    'series and fails with it, in the same configuration; '
                    f'{len(cases)} case patterns are named in all.')
        lines += textwrap.wrap(text, 72) + ['']
        if group['fix']:
            lines += ['Cases that fail without the fix:', '']
            lines += [f'  {c}' for c in cases] + ['']
    return lines


def checkpatch(tree, out_files, numbers):
    """{patch number: [(kind, type, message)]} of checkpatch --strict."""
    found = {}
    for path, n in zip(out_files, numbers):
        r = subprocess.run([os.path.join(tree.path, 'scripts', 'checkpatch.pl'), '--strict',
                            '--no-tree', '--terse', '--show-types', '-q', path],
                           cwd=os.path.dirname(path), capture_output=True, text=True)
        found[n] = [m.groups() for m in map(FINDING.match, r.stdout.splitlines()) if m]
        for cache in glob.glob(os.path.join(os.path.dirname(path), '.checkpatch-camelcase.*')):
            os.remove(cache)
    return found


def read_exceptions():
    """{(patch number or '*' for every patch, TYPE): reason} of
    patches/checkpatch-exceptions."""
    out = {}
    with open(os.path.join(PATCHES, 'checkpatch-exceptions')) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                n, kind, reason = line.split(None, 2)
                out[(n, kind)] = reason
    return out


def kernel_doc(tree, files):
    """{file: [warnings]} of scripts/kernel-doc -none -Wall."""
    out = {}
    for f in files:
        if f.endswith(('.c', '.h')) and not f.startswith(TOOLS):
            r = subprocess.run([os.path.join(tree.path, 'scripts', 'kernel-doc'), '-none',
                                '-Wall', source(f)],
                               capture_output=True, text=True)
            out[f] = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    return out


def w1(tree, files):
    """{file: [warnings]} of compiling the series' new C files with W=1 in the
    default profile's build directory (the tree holds the series then), or
    None when there is no build yet.  Under the lock run.py takes: a build
    must not run beside it.  The next make run compiles them again without
    W=1, which costs seconds."""
    import fcntl
    workdir = os.environ.get('WORKDIR') or '/var/tmp/fs-kunit'
    build = os.path.join(workdir, 'build')
    if not os.path.exists(os.path.join(build, '.config')):
        return None
    # fixed-random.c is built by the image scripts, not by kbuild; a .c file a
    # patch #includes (mm/kmemleak_kunit.c) is built inside its includer,
    # which the default profile's configuration does not build.
    included = set()
    for patch, _ in read_series():
        with open(os.path.join(PATCHES, patch)) as f:
            included.update(re.findall(r'^\+#include "([\w.-]+\.c)"', f.read(), re.M))
    sources = [f for f in files if f.endswith('.c') and not f.startswith(TOOLS)
               and os.path.basename(f) not in included]
    with open(os.path.join(workdir, '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'sync'],
                       capture_output=True, check=True,
                       env=dict(os.environ, FS_KUNIT_LOCKED='1'))  # held here
        r = subprocess.run(['make', '-s', 'ARCH=x86_64', 'O=' + build, 'W=1', 'CC=ccache gcc',
                            f'-j{os.cpu_count() or 1}', *[f[:-2] + '.o' for f in sources]],
                           cwd=tree.path, capture_output=True, text=True,
                           env=dict(os.environ, CCACHE_DIR=os.path.join(workdir, 'ccache'),
                                    CCACHE_BASEDIR=tree.path))
    out = {f: [] for f in sources}
    for line in (r.stdout + r.stderr).splitlines():
        for f in sources:
            if re.search(rf'\b{re.escape(f)}:\d+:\d+: (warning|error):', line):
                out[f].append(line)
    if r.returncode and not any(out.values()):
        out[sources[0]].append(f'make W=1 failed (exit {r.returncode}): ' + r.stderr[-500:])
    return out


def main():
    if len(sys.argv) != 2:
        die('usage: series.py OUT')
    out = os.path.abspath(sys.argv[1])
    author = None
    if os.environ.get('AUTHOR'):
        m = re.fullmatch(r'\s*(.+?)\s*<([^<>@\s]+@[^<>\s]+)>\s*', os.environ['AUTHOR'])
        if not m:
            die(f'AUTHOR={os.environ["AUTHOR"]!r}: say it as AUTHOR=\'Name <mail@example.org>\'')
        author = m.groups()
    path = subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'path'],
                          capture_output=True, text=True).stdout.strip()
    if not os.path.isdir(os.path.join(path, '.git')):
        die(f'no kernel tree at {path}: make tree first')
    tree = Tree(path, author)
    groups = read_covers(read_series())
    by_name = {g['name']: g for g in groups}
    exceptions = read_exceptions()
    version = tree_version()
    problems, passed, skipped, seen = [], 0, 0, set()

    staging = tempfile.mkdtemp(prefix='series.', dir=os.path.dirname(out) or '.')
    try:
        for i, g in enumerate(groups, 1):
            needs = closure(g, by_name)
            with tempfile.TemporaryDirectory() as tmp:
                commits = tree.chain(needs + g['patches'], tmp)
            base = commits[len(needs) - 1] if needs else tree.git('rev-parse', 'pristine').strip()
            gdir = os.path.join(staging, f'{i:02d}-{g["name"]}')
            files = [f for n in g['patches'] for f in tree.entries[n][1]]
            args = ['format-patch', '-q', '--cover-letter', '--zero-commit', '--no-signature',
                    '--base=' + tree.git('rev-parse', 'pristine').strip(),
                    f'--subject-prefix={g["prefix"]}', '-o', gdir]
            people = maintainers(tree, base, commits[-1])
            args += [f'--to={p}' for p in people[:1]] + [f'--cc={p}' for p in people[1:]]
            if g['fix']:
                args.append('--cc=stable@vger.kernel.org')
            tree.git(*args, f'{base}..{commits[-1]}')
            mailed = sorted(glob.glob(os.path.join(gdir, '0*.patch')))[1:]

            found = checkpatch(tree, mailed, g['patches'])
            listed = []
            for n, findings in found.items():
                bad = []
                for kind, typ, msg in findings:
                    key = next((k for k in ((n, typ), ('*', typ)) if k in exceptions), None)
                    if not key:
                        bad.append(f'{g["name"]}: patch {n}: checkpatch {kind}:{typ}: {msg}')
                        continue
                    seen.add(key)
                    line = f'  {typ}: {exceptions[key]}'
                    if line not in listed:
                        listed.append(line)
                problems += bad
                passed += not bad
            problems += fix_problems(tree, g) if g['fix'] else []
            for f, warnings in kernel_doc(tree, files).items():
                problems += [f'{f}: kernel-doc: {w}' for w in warnings]
                passed += not warnings

            letter = [g['body'], ''] + proof(tree, g)
            if needs:
                letter += ['Needs the series ' + ', '.join(g['needs']) +
                           ' first (prerequisite-patch-id below).', '']
            if listed:
                letter += ['checkpatch --strict reports, kept on purpose:', '']
                letter += [textwrap.fill(x, 72, subsequent_indent='    ') for x in listed] + ['']
            letter += [f'Based on Debian\'s linux-source-6.12 {version}.']
            if not author:
                letter += [''] + textwrap.wrap(
                    'NOT SIGNED: a person must sign off these patches '
                    "(make series AUTHOR='Name <mail>') before they are sent.", 72)
            cover = os.path.join(gdir, '0000-cover-letter.patch')
            with open(cover) as f:
                text = f.read()
            text = text.replace('*** SUBJECT HERE ***', g['subject'])
            text = text.replace('*** BLURB HERE ***', '\n'.join(letter))
            with open(cover, 'w') as f:
                f.write(text)
            print(f'series.py: {os.path.basename(gdir)}: {len(mailed)} patches'
                  f'{" (fix, Cc stable)" if g["fix"] else ""}, to {", ".join(people[:1]) or "?"}')
        all_files = [f for p, fs in read_series() for f in fs]
        built = w1(tree, all_files)
        if built is None:
            print('series.py: no build directory yet: the W=1 build of the new files '
                  'is skipped (make run first)')
            skipped += 1
        else:
            for f, warnings in built.items():
                problems += [f'{f}: W=1: {w}' for w in warnings]
                passed += not warnings
        stale = [k for k in exceptions if k not in seen]
        problems += [f'patches/checkpatch-exceptions: patch {n} {t}: no longer reported; '
                     'drop the line' for n, t in stale]
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for p in problems:
        print('series.py: ' + p)
    print(f'series.py: {len(groups)} series in {out}; '
          f'{len(seen)} checkpatch exceptions listed, {len(problems)} problems')
    print(f'{passed} passed, {len(problems)} failed, {skipped} skipped')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

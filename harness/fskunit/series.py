# SPDX-License-Identifier: GPL-2.0
"""make series: the patches as the maintainers would get them, in
$WORKDIR/series.

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
adds.  (Compiler warnings are the gate's, gate.py, in every build.)
"""

import glob
import os
import re
import shutil
import subprocess
import tempfile
import textwrap

from . import catalogue
from .catalogue import TOOLS, number, read_series, source
from .config import TOP

PATCHES = os.path.join(TOP, 'patches')
PLACEHOLDER = re.compile(r'^Signed-off-by: Seed .*$', re.M)
FINDING = re.compile(r'^.*?:\d+: (ERROR|WARNING|CHECK):(\w+): (.*)$')


class SeriesError(Exception):
    pass


def die(msg):
    raise SeriesError(msg)





def read_covers(entries):
    """[group] in mailing order, each a dict: name, subject, patches (numbers,
    in series order), needs, fix, prefix, trees, body."""
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
             # Trees: 6.12 for what mainline no longer has (reiserfs, gone in 6.13)
             'trees': fields.get('Trees', 'upstream 6.12').split(),
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


class Mail:
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
                die(f'{patch} does not apply to {tree_version(self.path)} after patches '
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
            if files:
                msg = image_note(msg, path, files)
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


IMAGE_DATA = re.compile(r'(_images?\.h|kunit_fs_quota_files\.h)$')


def image_note(msg, patch, files):
    """@msg with a paragraph before its trailers: how much of what the patch
    adds, its files folded in, is generated image data, and what makes it."""
    with open(patch) as f:
        added = sum(1 for line in f if line.startswith('+') and not line.startswith('+++'))
    lines = {f: sum(1 for _ in open(source(f))) for f in files}
    images = [f for f in files if IMAGE_DATA.search(f)]
    if not images:
        return msg
    data, total = sum(lines[f] for f in images), added + sum(lines.values())
    note = textwrap.fill(
        f'Of the {total} lines this patch adds, {data} ({100 * data // total}%) are '
        f'generated image data, in {", ".join(images)}; '
        f'{TOOLS}make-all.sh makes them again with the real mkfs tools, '
        'from the commands each header names.', 72)
    body, sep, trailers = msg.rstrip('\n').rpartition('\n\n')
    return f'{body}\n\n{note}\n\n{trailers}\n' if sep else f'{msg.rstrip()}\n\n{note}\n'


def tree_version(path):
    try:
        with open(os.path.join(path, '.git', 'fs-kunit-version')) as f:
            return f.read().strip()
    except OSError:
        return 'unknown'


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


def read_bases(directory=None):
    """patches/upstream/bases: (base, {patch: (file, commit, function, form)})."""
    base, rows = '', {}
    with open(os.path.join(directory or os.path.join(PATCHES, 'upstream'), 'bases')) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith('#'):
                continue
            if words[0] == 'base':
                base = ' '.join(words[1:])
            else:
                n, path, commit, func, form = words
                rows[n] = (path, commit, func, form)
    return base, rows


def diff_of(path):
    """A patch's change: the lines its diff removes and adds, and the files
    (not the context, which a mainline form may need to differ in)."""
    with open(path) as f:
        text = f.read().split('\n---\n', 1)[1]
    return [line for line in text[text.index('diff --git'):].splitlines()
            if line.startswith(('diff --git', '-', '+'))]


def bases_problems(fixes, directory=None):
    """Every fix has a row; a mainline form makes the series patch's change."""
    directory = directory or os.path.join(PATCHES, 'upstream')
    _, rows = read_bases(directory)
    bad = [f'patches/upstream/bases: no row for fix {n}' for n in fixes if n not in rows]
    for n, (_, _, _, form) in rows.items():
        if form == 'unchanged':
            continue
        ours = glob.glob(os.path.join(os.path.dirname(directory), n + '-*.patch'))
        if not os.path.exists(os.path.join(directory, form)):
            bad.append(f'patches/upstream/bases: {form} does not exist')
        elif not ours or diff_of(ours[0]) != diff_of(os.path.join(directory, form)):
            bad.append(f'patches/upstream/{form}: its change is not patch {n}\'s')
    return bad


def upstream_form(group, bases):
    """Cover letter lines: where each fix was checked against mainline."""
    base, rows = bases
    lines = []
    for n in group['patches']:
        if n not in rows:
            continue
        path, commit, func, form = rows[n]
        lines.append(f'Patch {n} ' + ('applies to mainline unchanged' if form == 'unchanged' else
                                      f'in mainline form is patches/upstream/{form} (the same change)')
                     + f': {func} in {path}, commit {commit}.')
    if not lines:
        return []
    lines.append(f'Checked with git apply --check against {base}, not built there; '
                 "patches/upstream/bases in the suite's repository says how.")
    return [textwrap.fill(x, 72, break_on_hyphens=False, break_long_words=False) for x in lines] + ['']


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
    suites = sorted(s for s, f in catalogue.suite_files().items() if f in files)
    kunitconfigs = sorted(os.path.dirname(f) for f in files if f.endswith('.kunitconfig'))
    nums = group['patches']
    reverts = []
    for path in sorted(glob.glob(os.path.join(TOP, 'regressions', '*', '*.patch'))):
        text = open(path).read().split('\ndiff --git', 1)[0]
        reg = catalogue.read_regression(path)
        psuites, expect = reg.suites, reg.expect
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



def parse_author(text):
    """AUTHOR='Name <mail>' as (name, mail); None without one."""
    if not text:
        return None
    m = re.fullmatch(r'\s*(.+?)\s*<([^<>@\s]+@[^<>\s]+)>\s*', text)
    if not m:
        die(f'AUTHOR={text!r}: say it as AUTHOR=\'Name <mail@example.org>\'')
    return m.groups()


def main(tree_path, out, author=None):
    """Write the series to @out; (passed, failed) of its checks."""
    if not os.path.isdir(os.path.join(tree_path, '.git')):
        die(f'no kernel tree at {tree_path}: make tree first')
    tree = Mail(tree_path, author)
    groups = read_covers(read_series())
    by_name = {g['name']: g for g in groups}
    exceptions = read_exceptions()
    version = tree_version(tree_path)
    bases = read_bases()
    problems, passed, seen = [], 0, set()
    problems += bases_problems([n for g in groups if g['fix'] for n in g['patches']])

    staging = tempfile.mkdtemp(prefix='series.', dir=os.path.dirname(out) or '.')
    try:
        for i, g in enumerate(groups, 1):
            needs = closure(g, by_name)
            with tempfile.TemporaryDirectory() as tmp:
                commits = tree.chain(needs + g['patches'], tmp)
            base = commits[len(needs) - 1] if needs else tree.git('rev-parse', 'pristine').strip()
            gdir = os.path.join(staging, '6.12', f'{i:02d}-{g["name"]}')
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
            letter += upstream_form(g, bases)
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
            print(f'series: {os.path.basename(gdir)}: {len(mailed)} patches'
                  f'{" (fix, Cc stable)" if g["fix"] else ""}, to {", ".join(people[:1]) or "?"}')
        # The series for mainline leaves out what it no longer has; the
        # 6.12 series, as tested here, keeps every group.
        k = 0
        for i, g in enumerate(groups, 1):
            if 'upstream' in g['trees']:
                k += 1
                shutil.copytree(os.path.join(staging, '6.12', f'{i:02d}-{g["name"]}'),
                                os.path.join(staging, 'upstream', f'{k:02d}-{g["name"]}'))
        stale = [k for k in exceptions if k not in seen]
        problems += [f'patches/checkpatch-exceptions: patch {n} {t}: no longer reported; '
                     'drop the line' for n, t in stale]
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for p in problems:
        print('series: ' + p)
    print(f'series: {len(groups)} series in {out}; '
          f'{len(seen)} checkpatch exceptions listed, {len(problems)} problems')
    return passed, len(problems)

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make regression NAME=quota/16-what FILES='fs/quota/dquot.c ...'

Writing a regression patch without knowing the tree's internals.  The kernel
tree in $WORKDIR is reset to the series on every run, so edits made there
are lost: this works on a scratch copy instead.

First call (FILES given): the files, as the series and kunit-tests/ have
them, are copied to $WORKDIR/scratch/NAME/ (a git repository), for you to
break.  Second call (same NAME): your edit becomes regressions/NAME.patch,
its header filled in as far as it can be (the files and functions touched,
Suites: guessed from the directories), the rest marked TODO for you.  Then:
make prove FILTER='<the cases it must fail>'.
"""

import fcntl
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regressions  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKDIR = os.environ.get('WORKDIR') or '/var/tmp/fs-kunit'


def die(msg):
    print('regression: error: ' + msg, file=sys.stderr)
    sys.exit(2)


def git(scratch, *args):
    return subprocess.run(['git', '-C', scratch, '-c', 'user.name=fs-kunit',
                           '-c', 'user.email=fs-kunit@localhost', *args],
                          check=True, capture_output=True, text=True).stdout


def start(name, scratch, files):
    # The same lock as run.py: never sync the tree under a running build.
    with open(os.path.join(WORKDIR, '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = dict(os.environ, EXTRA_PATCHES='', FS_KUNIT_LOCKED='1')  # held here
        if subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'sync'], env=env,
                          stdout=subprocess.DEVNULL).returncode:
            die('the tree could not be prepared (see above)')
        tree = subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'path'],
                              capture_output=True, text=True).stdout.strip()
        missing = [f for f in files if not os.path.isfile(os.path.join(tree, f))]
        if missing:
            die('not in the tree: %s (paths are relative to the kernel tree, e.g. '
                'fs/quota/dquot.c)' % ' '.join(missing))
        for f in files:
            os.makedirs(os.path.dirname(os.path.join(scratch, f)), exist_ok=True)
            shutil.copy(os.path.join(tree, f), os.path.join(scratch, f))
    git(scratch, 'init', '-q')
    git(scratch, 'add', '.')
    git(scratch, 'commit', '-qm', 'the series')
    print('regression: break the code in %s/, then run make regression NAME=%s again'
          % (scratch, name))


def finish(name, scratch, out):
    diff = git(scratch, 'diff')
    if not diff:
        die('nothing changed in %s: edit the files there first' % scratch)
    files = re.findall(r'^\+\+\+ b/(\S+)', diff, re.M)
    funcs = sorted(set(re.findall(r'^@@ [^@]+ @@ .*?(\w+)\(', diff, re.M)))
    dirs = {os.path.dirname(f) for f in files}
    suites = sorted(s for s, path in regressions.suite_files().items()
                    if os.path.dirname(path) in dirs)
    header = '''Regression: TODO: what the patch brings back, in one line
Seed: TODO: the commit whose fix this undoes (see ../shared/seeds/)
Breaks: %s %s

TODO: why the named cases fail.  The suites below are a guess from the
directories changed (%s); a change to shared code (fs/quota, mm,
block) may need more.  The runner reads only the field lines below; the
rest of this header is for people.

Suites: %s
Expect-fail: TODO.name_the_cases_that_must_fail
''' % (' '.join(files), ', '.join(f + '()' for f in funcs), ', '.join(sorted(dirs)),
       ' '.join(suites) or 'TODO')
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, 'w') as f:
        f.write(header + '\n' + diff)
    shutil.rmtree(scratch)
    print('regression: wrote %s; fill in its TODO lines, then run\n'
          "  make prove FILTER='<suite.case glob of the cases it must fail>'"
          % os.path.relpath(out, TOP))


def main():
    if len(sys.argv) < 2 or not re.match(r'^[\w.-]+/[\w.-]+$', sys.argv[1]):
        die("say NAME=<dir>/<nn-what>, e.g. NAME=quota/16-get-next-dqblk-hides-error, "
            "and the first time FILES='<kernel paths>'")
    name, files = sys.argv[1], sys.argv[2:]
    out = os.path.join(TOP, 'regressions', name + '.patch')
    scratch = os.path.join(WORKDIR, 'scratch', name)
    if os.path.exists(out):
        die('%s exists already' % os.path.relpath(out, TOP))
    if os.path.isdir(scratch):
        if files:
            die('%s exists: run again without FILES to write the patch, or remove it'
                % scratch)
        finish(name, scratch, out)
    elif not files:
        die("the first time, say which files to break: FILES='fs/quota/dquot.c'")
    else:
        start(name, scratch, files)
    return 0


if __name__ == '__main__':
    sys.exit(main())

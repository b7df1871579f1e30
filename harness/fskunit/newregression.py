# SPDX-License-Identifier: GPL-2.0
"""make regression NAME=quota/16-what FILES='fs/quota/dquot.c ...'

Writing a regression patch without knowing the tree's internals.  The kernel
tree in $WORKDIR is reset to the series on every run, so edits made there
are lost: this works on a scratch copy instead.  First call (FILES given):
the files, as the series and kunit-tests/ have them, are copied to
$WORKDIR/scratch/NAME/ (a git repository), for you to break.  Second call
(same NAME): your edit becomes regressions/NAME.patch, its header filled in
as far as it can be, the rest marked TODO.  Then: make prove FILTER=..."""

import os
import re
import shutil
import subprocess

from . import catalogue


class RegressionError(Exception):
    pass


def git(scratch, *args):
    return subprocess.run(['git', '-C', scratch, '-c', 'user.name=fs-kunit',
                           '-c', 'user.email=fs-kunit@localhost', *args],
                          check=True, capture_output=True, text=True).stdout


def start(ws, name, scratch, files):
    ws.sync()
    missing = [f for f in files if not os.path.isfile(os.path.join(ws.tree.path, f))]
    if missing:
        raise RegressionError('not in the tree: %s (paths are relative to the kernel tree, '
                              'e.g. fs/quota/dquot.c)' % ' '.join(missing))
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(scratch, f)), exist_ok=True)
        shutil.copy(os.path.join(ws.tree.path, f), os.path.join(scratch, f))
    git(scratch, 'init', '-q')
    git(scratch, 'add', '.')
    git(scratch, 'commit', '-qm', 'the series')
    print('regression: break the code in %s/, then run make regression NAME=%s again'
          % (scratch, name))


def finish(top, name, scratch, out):
    diff = git(scratch, 'diff')
    if not diff:
        raise RegressionError('nothing changed in %s: edit the files there first' % scratch)
    files = re.findall(r'^\+\+\+ b/(\S+)', diff, re.M)
    funcs = sorted(set(re.findall(r'^@@ [^@]+ @@ .*?(\w+)\(', diff, re.M)))
    dirs = {os.path.dirname(f) for f in files}
    suites = sorted(s for s, path in catalogue.suite_files(top).items()
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
          % os.path.relpath(out, top))


def main(ws, cfg, name, files):
    if not name or not re.match(r'^[\w.-]+/[\w.-]+$', name):
        raise RegressionError("say NAME=<dir>/<nn-what>, e.g. NAME=quota/16-get-next-dqblk-"
                              "hides-error, and the first time FILES='<kernel paths>'")
    out = os.path.join(cfg.top, 'regressions', name + '.patch')
    scratch = os.path.join(cfg.workdir, 'scratch', name)
    if os.path.exists(out):
        raise RegressionError('%s exists already' % os.path.relpath(out, cfg.top))
    if os.path.isdir(scratch):
        if files:
            raise RegressionError('%s exists: run again without FILES to write the patch, '
                                  'or remove it' % scratch)
        finish(cfg.top, name, scratch, out)
    elif not files:
        raise RegressionError("the first time, say which files to break: "
                              "FILES='fs/quota/dquot.c'")
    else:
        start(ws, name, scratch, files)

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The journalling documentation speaks of JBD2 (seed 82ff50b222d8).

Since ext3 and JBD are gone, Documentation/filesystems/journalling.rst must
describe the layer that exists: every file it pulls kernel-doc from exists,
and every journalling function it names (jbd2_*, journal_*, jbd_*) is one
that fs/jbd2 or include/linux/jbd2.h has.  A page that tells a filesystem
author to call journal_start() describes an API that is no longer there.

usage: doccheck.py TREE [DOC]   (DOC: a copy of the page to check instead)
Prints each problem and exits 1 if there is any.
"""
import glob
import os
import re
import sys

PAGE = 'Documentation/filesystems/journalling.rst'


def main():
    tree = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tree, PAGE)
    with open(doc) as f:
        text = f.read()
    jbd2 = ''
    for path in glob.glob(os.path.join(tree, 'fs/jbd2/*.c')) + [
            os.path.join(tree, 'include/linux/jbd2.h')]:
        with open(path) as f:
            jbd2 += f.read()
    problems = []
    for path in re.findall(r'^\.\. kernel-doc:: (\S+)', text, re.M):
        if not os.path.exists(os.path.join(tree, path)):
            problems.append('kernel-doc of %s, which does not exist' % path)
    for name in sorted(set(re.findall(r'\b((?:jbd2?|journal)_\w+)\(\)', text))):
        if not re.search(r'\b%s\s*\(' % re.escape(name), jbd2):
            problems.append('%s(), which JBD2 does not have' % name)
    for p in problems:
        print('doccheck: %s names %s' % (PAGE, p))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0
"""The journalling documentation speaks of JBD2 (seed 82ff50b222d8).

Since ext3 and JBD are gone, Documentation/filesystems/journalling.rst must
describe the layer that exists: every file it pulls kernel-doc from exists,
and every journalling function it names (jbd2_*, journal_*, jbd_*) is one
that fs/jbd2 or include/linux/jbd2.h has.  A page that tells a filesystem
author to call journal_start() describes an API that is no longer there."""

import glob
import os
import re

PAGE = 'Documentation/filesystems/journalling.rst'


def problems(tree, doc=None):
    """What the page (or @doc, a copy of it) names that the tree does not have."""
    with open(doc or os.path.join(tree, PAGE)) as f:
        text = f.read()
    jbd2 = ''
    for path in glob.glob(os.path.join(tree, 'fs/jbd2/*.c')) + [
            os.path.join(tree, 'include/linux/jbd2.h')]:
        with open(path) as f:
            jbd2 += f.read()
    out = []
    for path in re.findall(r'^\.\. kernel-doc:: (\S+)', text, re.M):
        if not os.path.exists(os.path.join(tree, path)):
            out.append('%s names kernel-doc of %s, which does not exist' % (PAGE, path))
    for name in sorted(set(re.findall(r'\b((?:jbd2?|journal)_\w+)\(\)', text))):
        if not re.search(r'\b%s\s*\(' % re.escape(name), jbd2):
            out.append('%s names %s(), which JBD2 does not have' % (PAGE, name))
    return out

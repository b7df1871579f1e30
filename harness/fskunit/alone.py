# SPDX-License-Identifier: GPL-2.0
"""make alone: every test directory's .kunitconfig on its own, as a developer
runs kunit.py run --kunitconfig=DIR in the patched tree (each its own build
directory, sharing the compile cache).  One line per directory: its summary,
build and test time; then the sum, in results/alone/summary.txt."""

import contextlib
import os

from .workspace import RunError, report

DIRS = ['fs/quota', 'fs/udf', 'fs/ext4', 'fs/ext2', 'fs/jfs', 'fs/reiserfs', 'fs/ocfs2',
        'block', 'mm', 'fs/f2fs']


def main(ws, cfg, dirs):
    out = os.path.join(cfg.top, 'results', 'alone')
    os.makedirs(out, exist_ok=True)
    lines, total = [], [0, 0, 0]
    for d in dirs:
        one = cfg.with_(alone=d, mode='builtin', filter='', extra_patches=())
        with open(os.path.join(out, d.replace('/', '-') + '.log'), 'w') as log, \
                contextlib.redirect_stdout(log):
            try:
                run = ws.run(one)
                report(run)
                got = (run.counts['PASS'], run.counts['FAIL'] + run.counts['ERROR'],
                       run.counts['SKIP'])
                phases = ', '.join('%s %.0f s' % p for p in run.phases)
            except RunError as e:
                print('run: error: %s' % e)
                got, phases = (0, 1, 0), 'error: %s' % str(e).splitlines()[0]
        lines.append('%s: %d passed, %d failed, %d skipped (%s)' % (d, *got, phases))
        print(lines[-1], flush=True)
        total = [a + b for a, b in zip(total, got)]
    lines.append('%d passed, %d failed, %d skipped' % tuple(total))
    with open(os.path.join(out, 'summary.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print(lines[-1])
    return 0 if total[1] == 0 else 1

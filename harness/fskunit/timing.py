# SPDX-License-Identifier: GPL-2.0
"""How long QEMU may run: from what this machine measured, or from the
figure docs/design.md gives when it has measured nothing yet.

A slower machine must not turn a green suite red, and a kernel that hangs
must not hold a run for long.  Each run records how long every suite took
(printk time, so the machine's own speed is in it) beside the build; a later
run of some of those suites may take FACTOR times as long.  Before any
measurement, a run may take UNMEASURED_FACTOR times the reference figure: a
machine four times slower still has twice its time.  Never less than FLOOR,
which leaves the hung-task detector (kunitconfig, 60 s) time to report a
task stuck from the first moment: it reports after one to two periods."""

import collections
import json
import os

from . import results

FACTOR = 5
UNMEASURED_FACTOR = 8
FLOOR = 150


def _path(cfg):
    """Per build: a SLOWDOWN run measures the machine it makes, apart."""
    slow = '-slow%d' % cfg.slowdown if cfg.slowdown > 1 else ''
    return os.path.join(cfg.build_dir, '.fs-kunit-timing%s.json' % slow)


def record(cfg, lines):
    """Keep what a run measured: each suite's seconds, the boot, and what
    the suites do not account for (module loads)."""
    seconds = results.suite_seconds(lines)
    if not seconds:
        return
    stamps = [float(line[1:line.index(']')]) for line in lines
              if line.startswith('[') and ']' in line[:20]
              and line[1:line.index(']')].strip().replace('.', '', 1).isdigit()]
    total = stamps[-1] if stamps else 0.0
    try:
        with open(_path(cfg)) as f:
            known = json.load(f)
    except (OSError, ValueError):
        known = {}
    suites = known.get('suites', {})
    suites.update({k: v for k, v in seconds.items() if k != '(boot)'})
    known = {'suites': suites, 'boot': seconds.get('(boot)', known.get('boot', 0.0))}
    accounted = known['boot'] + sum(v for k, v in seconds.items() if k != '(boot)')
    known['other'] = max(0.0, round(total - accounted, 1))
    os.makedirs(cfg.build_dir, exist_ok=True)
    with open(_path(cfg), 'w') as f:
        json.dump(known, f, indent=1, sort_keys=True)


def _known(cfg):
    try:
        with open(_path(cfg)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def estimate(cfg, suites):
    """(seconds the run should take on this machine, whether measured)."""
    known = _known(cfg)
    measured = known.get('suites', {})
    names = {s.split('@')[0] for s in suites}
    if names and all(n in measured for n in names):
        # A suite a module loads twice is run twice.
        total = sum(measured[s.split('@')[0]] for s in suites)
        return known.get('boot', 0.0) + known.get('other', 0.0) + total, True
    return float(cfg.reference_seconds), False


def timeout(cfg, suites):
    """QEMU's time-out for a run of @suites, in seconds."""
    if cfg.timeout:
        return cfg.timeout
    seconds, measured = estimate(cfg, suites)
    # Not times SLOWDOWN: a slow machine does not know it is slow either.
    factor = FACTOR if measured else UNMEASURED_FACTOR
    return int(max(FLOOR, seconds * factor))


def shards(cfg, cases, boots):
    """The suites of @cases split over at most @boots guests that take about
    as long each: [(glob, suites)].  A boot's filter is one glob
    (kunit.filter_glob has no alternation), so a boot takes every suite whose
    name starts with one of its characters ("[bfkqt]*").  Each character's
    suites go, longest first, to the boot with least so far: by this
    machine's measured time of each suite, or before it measured them all,
    by their number of cases.  One boot, or none, means do not split."""
    cases_of = collections.Counter(c.split('.')[0] for c in cases)
    measured = _known(cfg).get('suites', {})
    weight = measured if all(s in measured for s in cases_of) else cases_of
    by_char = collections.defaultdict(float)
    for suite in cases_of:
        by_char[suite[0]] += weight[suite]
    loads = [[0.0, ''] for _ in range(max(1, boots))]
    for char, seconds in sorted(by_char.items(), key=lambda x: (-x[1], x[0])):
        least = min(loads, key=lambda load: load[0])
        least[0] += seconds
        least[1] += char
    return [('[%s]*' % ''.join(sorted(chars)), sorted(s for s in cases_of if s[0] in chars))
            for _, chars in loads if chars]

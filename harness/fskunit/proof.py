# SPDX-License-Identifier: GPL-2.0
"""make regressions (and make prove): every test catches the bug it guards.

Each patch under regressions/ brings one bug back; its header (catalogue.
Regression) says which suites to run and which cases must fail.  First the
baseline: the whole suite on the series alone, in the same configuration
(the suite run of the same kernel is reused).  Then each patch is applied
as an extra patch, its suites run, and it is judged (judge()):
  caught          every named case passed in the baseline and failed here;
                  every other case passed
  caught (crash)  the same, and the kernel stopped (oops, panic, hang) while
                  a named case was running
  MISSED          a named case passed: the test did not notice the bug
  NOISY           the named cases failed, but so did others
  ERROR           the patch did not apply or build, a glob named nothing or
                  a whole suite, a named case failed in the baseline too, or
                  the kernel stopped in a case the header does not name
A patch to what no kernel runs (documentation) names a checker instead
(Check:), run on a patched copy: caught when it fails.

Every leaf case of the baseline must be named by some patch's Expect-fail:
a case never shown to fail has not earned its place.  One run proves the
patches of one configuration (Profile:, Mode:); make check runs all three."""

import concurrent.futures
import contextlib
import fnmatch
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import catalogue, doccheck, results
from .catalogue import named_by, whole_suite
from .tree import TreeError
from .workspace import Run, RunError, Workspace, boot_lane, clear_results, write_provenance


class ThreadOut:
    """sys.stdout that each pipeline thread (a build, a boot) points at its
    own patch's run.log; any other thread (the main one, a build's progress)
    writes to the default stream."""

    def __init__(self, default):
        self.default = default
        self.local = threading.local()

    @contextlib.contextmanager
    def to(self, stream):
        self.local.stream = stream
        try:
            yield
        finally:
            self.local.stream = None

    def current(self):
        """The stream of the calling thread, for a thread it starts."""
        return getattr(self.local, 'stream', None) or self.default

    _stream = current

    def write(self, text):
        return self._stream().write(text)

    def flush(self):
        self._stream().flush()

    def isatty(self):
        return False


def judge(baseline, cases, expect, may=(), report=''):
    """(verdict, detail, named) for one patch.

    @baseline: [(leaf name, status)] of the series without the patch, in the
    order the kernel runs them, over the suites this patch's run covers;
    @cases: what the run with the patch reported.  A named case must pass in
    the baseline and fail with the patch.  When the kernel stopped (oops,
    panic, hang), the case it stopped in is the first baseline case with no
    result; the crash catches the bug only if that case is named.  With
    @report, a named case that failed without a kernel report containing it
    did not catch the bug.  @named is [(name, baseline status, status)]."""
    for g in expect:
        if whole_suite(g):
            return 'ERROR', 'Expect-fail names a whole suite: ' + g, []
    unmatched = [g for g in expect if not any(fnmatch.fnmatchcase(n, g) for n, _ in baseline)]
    if unmatched:
        return 'ERROR', 'Expect-fail names no case: ' + ', '.join(unmatched), []
    got = {c['name']: c['status'] for c in cases}
    stopped_in = next((n for n, _ in baseline if got.get(n, results.ERROR) == results.ERROR),
                      None)
    if stopped_in is not None and not any(c['status'] == results.ERROR for c in cases):
        stopped_in = None  # not a crash: the case is just not in this run
    named = [(n, st, got.get(n, results.ERROR)) for n, st in baseline if named_by(n, expect)]
    if any(st != results.PASS for _, st, _ in named):
        return ('ERROR', 'fails without the patch too: '
                + ', '.join(n for n, st, _ in named if st != results.PASS), named)
    bad = (results.FAIL, results.ERROR)
    passed = [n for n, _, now in named if now not in bad]
    if passed:
        return 'MISSED', 'still passing: ' + ', '.join(passed), named
    if report:
        said = {c['name']: c.get('reports', []) for c in cases}
        unsaid = [n for n, _, _ in named if not any(report in r for r in said.get(n, []))]
        if unsaid:
            return ('MISSED', 'failed without a report of "%s": %s' % (report, ', '.join(unsaid)),
                    named)
    if stopped_in is not None and stopped_in not in {n for n, _, _ in named}:
        return ('ERROR', 'the kernel stopped in %s, which the header does not name' % stopped_in,
                named)
    # After the stop nothing ran: what never reported there is not noise.
    ran = baseline if stopped_in is None else \
        baseline[:[n for n, _ in baseline].index(stopped_in)]
    noisy = [n for n, _ in ran if got.get(n) in bad
             and not named_by(n, expect) and not named_by(n, may)]
    if noisy:
        return 'NOISY', 'also failed: ' + '; '.join(noisy), named
    if stopped_in is not None:
        return 'caught (crash)', 'the kernel stopped in ' + stopped_in, named
    return 'caught', '', named


# Boots at once: BOOTS (Config.boots, the cores).  Under TCG a guest keeps
# one core busy and a rebuild (one file and the links) mostly one more: the
# batches of several filesystems, whose boots run most of the suite, would
# otherwise leave the build idle and a core with it.  Each guest boots alone
# on its side of QEMU, so the verdicts are the same; the suites' time-outs
# are the machine's measured times with a margin (timing.py), as for the
# mutants' lanes.

# Builders at once.  A rebuild is mostly one process at a time (kbuild's
# walk of the tree, three links, gzip): two of them side by side took 23 s
# here where one took 15.  The second builder has its own tree and build
# directory (config.py, builder), made once from the first's and the compile
# cache (about two minutes here): it pays for itself from about 25 patches.
BUILDERS = 2
SECOND_BUILDER_FROM = 25

# A patch that touches only its own filesystem's directory cannot change what
# another filesystem's suite sees: such patches, one per filesystem, share one
# kernel and one boot (the rebuild and boot are most of a patch's time).  Two
# of one filesystem never do, whatever their suites: one that breaks the
# filesystem's init (regressions/f2fs/25) makes every case of the other skip.
# Everything else (fs/quota, mm, block, fs/*.c) runs alone.
PRIVATE = re.compile(r'^fs/(ext2|ext4|jfs|reiserfs|ocfs2|udf|f2fs)/')


def plan(items):
    """Batches of patches: items are (patch, files it touches, suites it runs).
    A patch whose header says the kernel stops (Crash:) runs alone: its crash
    would end the batch, which then runs again a patch at a time."""
    batches = []
    for patch, files, suites in items:
        private = bool(files) and all(PRIVATE.match(f) for f in files) \
            and not getattr(patch, 'crash', '')
        filesystems = {PRIVATE.match(f).group(1) for f in files} if private else set()
        for b in batches:
            if private and b['private'] and not b['suites'] & suites \
                    and not b['filesystems'] & filesystems:
                break
        else:
            b = {'private': private, 'patches': [], 'filesystems': set(), 'suites': set()}
            batches.append(b)
        b['patches'].append(patch)
        b['filesystems'] |= filesystems
        b['suites'] |= suites
    return [b['patches'] for b in batches]


def pipeline(batches, build, boot, judged, idle, boots):
    """Each batch's life: build(number, batch, builder, lane) with a builder
    taken from the queue @idle, which copies its kernel to @lane; then
    boot(built), at most @boots at once.  A lane is a batch's from its build
    to the end of its boot, so no boot reads a kernel being copied.
    judged(number, batch, future of boot's result) is called in this thread,
    in the batches' order, as soon as each is done; it may take a builder
    from @idle itself."""
    slots = idle.qsize() + boots
    lanes = queue.Queue()
    for k in range(slots):
        lanes.put(k)
    booting = threading.Semaphore(boots)
    stopped = threading.Event()

    def life(b, batch):
        lane = lanes.get()
        try:
            builder = idle.get()
            try:
                if stopped.is_set():
                    raise concurrent.futures.CancelledError()
                built = build(b, batch, builder, lane)
            finally:
                idle.put(builder)
            with booting:
                if stopped.is_set():
                    raise concurrent.futures.CancelledError()
                return boot(built)
        finally:
            lanes.put(lane)
    pool = concurrent.futures.ThreadPoolExecutor(slots)
    try:
        futures = [pool.submit(life, b, batch) for b, batch in enumerate(batches, 1)]
        for (b, batch), future in zip(enumerate(batches, 1), futures):
            concurrent.futures.wait([future])
            judged(b, batch, future)
    finally:
        # Interrupted (stop_all() ends what runs): the batches waiting for a
        # builder or not started are not built.
        stopped.set()
        pool.shutdown(wait=True, cancel_futures=True)


def cover(suites):
    """One kunit filter glob that matches every suite in @suites (and maybe
    more): kunit.filter_glob takes a single glob.  MODE=modules: the kernel
    knows a suite's second load by its own name, and the init checks every
    unload whatever the filter."""
    names = sorted({n.split('@')[0] for n in suites if n != 'modules'})
    if not names:
        return ''
    if len(names) == 1:
        return names[0]
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    return prefix + '*' + suffix if prefix or suffix else ''


def run_check(tree, reg):
    """(verdict, detail, named, seconds) of a patch to something no kernel
    runs: applied to a copy of the files it touches, the checker run on that
    copy against the tree as the series has it.  Caught when it fails."""
    t = time.monotonic()
    checkers = {'doccheck': doccheck.problems}
    if reg.check not in checkers:
        return 'ERROR', 'Check: %s is not a checker (there are: %s)' % (
            reg.check, ', '.join(checkers)), [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        files = reg.files()
        for rel in files:
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            shutil.copy(os.path.join(tree.path, rel), os.path.join(tmp, rel))
        applied = subprocess.run(['git', 'apply', reg.path], cwd=tmp, capture_output=True,
                                 text=True)
        if not files or applied.returncode:
            return 'ERROR', 'does not apply: ' + applied.stderr.strip(), [], 0.0
        found = [p for rel in files for p in checkers[reg.check](tree.path,
                                                                  os.path.join(tmp, rel))]
    seconds = time.monotonic() - t
    if found:
        return 'caught', '; '.join(found), [], seconds
    return 'MISSED', '%s passed with the patch applied' % reg.check, [], seconds


class Proof:
    """The proof of one configuration, in one Workspace."""

    def __init__(self, ws, cfg, patches, prove=''):
        self.ws, self.cfg, self.prove = ws, cfg, prove
        self.patches = patches
        self.out = os.path.join(cfg.results, 'regressions')
        self.stdout = None  # a ThreadOut while the pipeline runs
        # The builders not building now: (number, Workspace), the first
        # this run's own.
        self.idle = queue.Queue()
        self.idle.put((0, ws))
        self.rerun_lane = BUILDERS + cfg.boots  # not one of the pipeline's lanes

    def to(self, log):
        """Print into @log: through the ThreadOut while the pipeline runs."""
        return self.stdout.to(log) if self.stdout else contextlib.redirect_stdout(log)

    def run_kernel(self, regs, glob, out):
        """One run now, built and booted in this thread: the baseline, or a
        patch of a crashed batch alone (in a lane of its own: the pipeline's
        may be booting).  Returns (cases, seconds, why): cases None when it failed."""
        builder = self.idle.get()
        try:
            run, ln, seconds, why = self.build(regs, glob, out, self.rerun_lane, builder)
        finally:
            self.idle.put(builder)
        if run is None:
            return None, seconds, why
        return self.boot(run, ln, seconds)

    def baseline(self):
        """[(leaf, status)] of the whole suite on the series alone, in run
        order.  make check's suite step (same stamp, no filter, no extra
        patch) already is one."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            with open(os.path.join(self.cfg.results, 'tested.json')) as f:
                tested = json.load(f)
            if tested['stamp'] == self.stamp and not tested['filter'] \
                    and not tested['extra_patches']:
                with open(os.path.join(self.cfg.results, 'cases.json')) as f:
                    cases = json.load(f)
                print('regressions: baseline: the suite run of this kernel in %s/'
                      % os.path.relpath(self.cfg.results, self.cfg.top), flush=True)
                return [(c['name'], c['status']) for c in cases]
        print('regressions: baseline: the whole suite on the series alone ...', flush=True)
        out = os.path.join(self.out, 'baseline')
        cases, _, why = self.run_kernel([], '', out)
        if cases is None:
            print('regressions: baseline: ' + why, flush=True)
        return [(c['name'], c['status']) for c in cases or []]

    def run_one(self, reg):
        cases, seconds, why = self.run_kernel([reg], self.info[reg.path]['glob'],
                                              os.path.join(self.out, reg.name))
        if cases is None:
            return 'ERROR', why, [], seconds
        return judge(self.own_baseline(reg), cases, reg.expect, reg.may, reg.report) \
            + (seconds,)

    def own_baseline(self, reg):
        suites = self.info[reg.path]['suites']
        return [(n, st) for n, st in self.base if n.split('.')[0] in suites]

    # -- the pipeline: cfg.boots kernels boot while BUILDERS build the next -------
    def second_builder(self, batches):
        """Add the second builder when there are enough batches to pay for it
        (SECOND_BUILDER_FROM), or it is built already."""
        if BUILDERS < 2:
            return None
        cfg = self.cfg.with_(builder=1)
        if len(batches) < SECOND_BUILDER_FROM and \
                not os.path.exists(os.path.join(cfg.build_dir, 'vmlinux')):
            return None
        ws = Workspace(cfg)
        try:
            ws.tree.ensure()  # a clone, the files written by its first sync
        except (TreeError, OSError) as e:
            print('regressions: one builder only: the second one\'s tree: %s' % e, flush=True)
            return None
        self.idle.put((1, ws))
        return ws

    # The kernel is copied to a lane directory first: the build directory is
    # the next patch's.  The suites' measured times are the first builder's.
    def lane(self, cfg, k):
        names = [n for n in os.listdir(self.cfg.build_dir) if n.startswith('.fs-kunit-timing')]
        ln = boot_lane(cfg, cfg.with_(variant='proof-lane%d' % k),
                       [os.path.basename(cfg.initramfs)] if cfg.init else [], snapshot=True)
        for n in names:
            shutil.copy(os.path.join(self.cfg.build_dir, n), os.path.join(ln.build_dir, n))
        return ln

    def build_batch(self, k, batch, builder, lane):
        """Apply @batch (number k) and build it into @lane; see build()."""
        if len(batch) == 1:
            glob, out = self.info[batch[0].path]['glob'], os.path.join(self.out, batch[0].name)
        else:
            # One write: the main thread prints its verdicts meanwhile.
            sys.stdout.write('regressions: batch %d: %s\n' % (k, ' '.join(r.name for r in batch)))
            sys.stdout.flush()
            glob = cover(set().union(*(self.info[r.path]['suites'] for r in batch)))
            out = os.path.join(self.out, 'batch-%d' % k)
        return batch, builder[1], self.build(batch, glob, out, lane, builder)

    def build(self, regs, glob, out, k, builder):
        """Apply @regs and build the kernel for the suites @glob matches with
        @builder, copied to its lane k.  Returns (run, lane, seconds, why):
        run None when the build failed."""
        os.makedirs(out, exist_ok=True)
        number, ws = builder
        cfg = self.cfg.with_(extra_patches=tuple(r.path for r in regs), filter=glob,
                             results_dir=out, builder=number)
        clear_results(cfg)
        t = time.monotonic()
        with open(os.path.join(out, 'run.log'), 'w') as log, self.to(log):
            try:
                run = Run(cfg)
                run.tree_id, run.stamp, cases = ws.prepare(cfg, listed=self.enabled)
                run.expected = [c for c in cases if ws.wanted(cfg, c)]
                if not run.expected:
                    raise RunError('FILTER=%s matches none of the enabled cases' % glob)
                write_provenance(cfg, run, ws.tree)
                ln = self.lane(cfg, k)
            except RunError as e:
                print('run: error: %s' % e)
                return None, None, time.monotonic() - t, '%s (log: %s/run.log)' % (
                    str(e).splitlines()[0], out)
        return run, ln, time.monotonic() - t, ''

    def boot(self, run, ln, seconds):
        """(cases, seconds, why) of a built kernel's boot from its lane;
        cases None when it failed.  The pipeline runs it in the boot thread."""
        t = time.monotonic()
        with open(os.path.join(run.cfg.results, 'run.log'), 'a') as log, self.to(log):
            try:
                self.ws.execute(ln, run)
            except RunError as e:
                print('run: error: %s' % e)
                return None, seconds + time.monotonic() - t, '%s (log: %s/run.log)' % (
                    str(e).splitlines()[0], run.cfg.results)
        return run.cases, seconds + time.monotonic() - t, ''

    def boot_in_pipeline(self, built):
        """(cases, seconds, why) of a batch built by build_batch().  A batch's
        kernel boots once for each of its patches, with the patch's own glob
        and results: the batch's one glob (cover(), `*_dquot` for ext2 and
        reiserfs) booted nearly every filesystem's suite, 60 to 150 s a batch
        here.  MODE=modules boots once: every boot there reports the
        modules' own cases."""
        batch, ws, (run, ln, seconds, why) = built
        if run is None:
            return None, seconds, why
        if len(batch) == 1 or self.cfg.mode != 'builtin':
            return self.boot(run, ln, seconds)
        got = []
        for r in batch:
            glob, out = self.info[r.path]['glob'], os.path.join(self.out, r.name)
            part = Run(run.cfg.with_(filter=glob, results_dir=out))
            part.tree_id, part.stamp = run.tree_id, run.stamp
            part.expected = [c for c in run.expected if ws.wanted(part.cfg, c)]
            os.makedirs(out, exist_ok=True)
            clear_results(part.cfg)
            write_provenance(part.cfg, part, ws.tree)
            cases, seconds, why = self.boot(part, ln.with_(filter=glob, results_dir=out),
                                            seconds)
            if cases is None:
                return None, seconds, why
            got += cases
        return got, seconds, ''

    def finish(self, k, batch, future):
        """{patch: (verdict, detail, named, seconds)}; a crash or an error in a
        batch is not pinned on a patch: each then runs alone."""
        cases, seconds, why = future.result()
        if len(batch) == 1:
            r = batch[0]
            if cases is None:
                return {r.path: ('ERROR', why, [], seconds)}
            return {r.path: judge(self.own_baseline(r), cases, r.expect, r.may, r.report)
                    + (seconds,)}
        if cases is None or any(c['status'] == results.ERROR for c in cases):
            print('regressions: batch %d %s: each patch alone' % (k, why or 'crashed'),
                  flush=True)
            return {r.path: self.run_one(r) for r in batch}
        out = {}
        for r in batch:
            own = [c for c in cases if c['name'].split('.')[0] in self.info[r.path]['suites']]
            out[r.path] = judge(self.own_baseline(r), own, r.expect, r.may, r.report) \
                + (seconds / len(batch),)
        return out

    def main(self):
        """(passed, failed) of the proof; results/.../regressions.md."""
        cfg, ws = self.cfg, self.ws
        os.makedirs(self.out, exist_ok=True)
        try:
            _, self.stamp, self.enabled = ws.prepare(cfg)
        except RunError as e:
            print('regressions: error: the series itself did not build or list its cases: %s'
                  % e, file=sys.stderr)
            return 0, 1
        suite_names = {c.split('.')[0] for c in self.enabled}
        scope = None
        if self.prove:
            scope = {c.split('.')[0] for c in self.enabled
                     if catalogue.glob_match(self.prove, c)}
            if not scope:
                print('regressions: error: FILTER=%s matches none of the %d enabled cases'
                      % (self.prove, len(self.enabled)), file=sys.stderr)
                return 0, 1
        self.base = self.baseline()
        if not self.base:
            print('regressions: error: the baseline run of the series reported nothing',
                  file=sys.stderr)
            return 0, 1
        failing = [n for n, st in self.base if st != results.PASS]
        if failing:
            print('regressions: the series alone fails %d cases (no patch can be caught by '
                  'them): %s' % (len(failing), ', '.join(failing)), flush=True)
        self.info, items, done = {}, [], {}
        for reg in self.patches:
            problems = reg.problems()
            if reg.check:
                if scope is not None:
                    continue  # no kernel case can name a documentation check
                done[reg.path] = run_check(ws.tree, reg)
                print('regressions: %s: %s: %s' % (reg.name, *done[reg.path][:2]), flush=True)
            elif problems:
                done[reg.path] = ('ERROR', '; '.join(problems), [], 0.0)
            else:
                own = {n for n in suite_names
                       if any(fnmatch.fnmatchcase(n, g.split('.')[0]) for g in reg.suites)}
                if scope is not None and not own & scope:
                    continue
                self.info[reg.path] = {'glob': cover(own), 'suites': own}
                items.append((reg, reg.files(), own))
        patches = [r for r in self.patches if r.path in done or r.path in self.info]
        if scope is not None:
            print('regressions: FILTER=%s: %d patches run these suites: %s'
                  % (self.prove, len(patches), ', '.join(sorted(scope))), flush=True)
        # Our suites only: upstream suites enabled beside them (ext4's) must
        # pass, but no patch here is meant to prove them.
        ours = catalogue.suite_files(cfg.top)
        globs = [g for r in catalogue.regressions(cfg.top) for g in r.expect]
        in_scope = lambda n: not self.prove or catalogue.glob_match(  # noqa: E731
            self.prove, '.'.join(n.split('.', 2)[:2]))
        counted = [n for n, _ in self.base if n.split('.')[0] in ours and in_scope(n)]
        unnamed = [n for n in counted if not named_by(n, globs)]
        batches = plan([(r, files, own) for r, files, own in items])
        t0, k = time.monotonic(), 0

        def show(batch, verdicts):
            nonlocal k
            done.update(verdicts)
            per_patch = (time.monotonic() - t0) / (k + len(batch))
            for r in batch:
                k += 1
                verdict, detail, named, seconds = done[r.path]
                caught = sum(done[p][0].startswith('caught') for p in done if p in self.info)
                shown = '%d named cases failed' % len(named) \
                    if verdict.startswith('caught') else detail
                print('regressions: [%d/%d] %s: %s in %.0f s: %s (caught so far %d; %.0f s '
                      'per patch)' % (k, len(items), r.name, verdict, seconds, shown, caught,
                                      per_patch), flush=True)
                if verdict == 'NOISY':
                    print('regressions: if the bug is meant to fail them, add to its '
                          'header:\n' + '\n'.join(
                              '  Expect-fail: ' + n
                              for n in detail[len('also failed: '):].split('; ')),
                          flush=True)
        second = self.second_builder(batches)
        self.stdout = ThreadOut(sys.stdout)
        saved, sys.stdout = sys.stdout, self.stdout
        try:
            pipeline(batches, self.build_batch, self.boot_in_pipeline,
                     lambda b, batch, future: show(batch, self.finish(b, batch, future)),
                     self.idle, self.cfg.boots)
        finally:
            sys.stdout, self.stdout = saved, None
            if second:
                second.close()
            # Leave the tree as make run expects it: series only.
            ws.sync()
        rows = [(r.name, *done[r.path]) for r in patches]
        failed = sum(not row[1].startswith('caught') for row in rows)
        self.write_report(rows, counted, unnamed)
        times = sorted(row[4] for row in rows if row[4])
        if times:
            print('regressions: %d patches, median %.0f s per patch'
                  % (len(rows), times[len(times) // 2]))
        print('regressions: %d of %d leaf cases%s named by no patch%s'
              % (len(unnamed), len(counted), ' FILTER matches' if self.prove else '',
                 (': ' + ', '.join(unnamed[:20]) + (' ...' if len(unnamed) > 20 else ''))
                 if unnamed else ''))
        every = self.patches == [r for r in catalogue.regressions(cfg.top)
                                 if r.configuration == 'PROFILE=' + cfg.profile + (
                                     '' if cfg.mode == 'builtin' else ' MODE=' + cfg.mode)]
        if unnamed and (every or self.prove):
            print('regressions: every case must be shown to fail by a patch (see '
                  '%s/regressions.md)' % os.path.relpath(cfg.results, cfg.top))
            failed += 1
        return sum(row[1].startswith('caught') for row in rows), failed

    def write_report(self, rows, counted, unnamed):
        with open(os.path.join(self.cfg.results, 'regressions.md'), 'w') as f:
            f.write('# Regression proof\n\n| patch | verdict | seconds | detail |\n'
                    '|---|---|---|---|\n')
            for name, verdict, detail, _, seconds in rows:
                f.write('| %s | %s | %.0f | %s |\n' % (name, verdict, seconds, detail))
            f.write('\n%d leaf cases in the baseline%s, %d named by no patch\n'
                    % (len(counted), ' that FILTER=%s matches' % self.prove if self.prove
                       else '', len(unnamed)))
            for name in unnamed:
                f.write('- unnamed: %s\n' % name)
            f.write('\n## Named cases: baseline -> with the patch\n')
            for name, verdict, _, named, _ in rows:
                f.write('\n### %s: %s\n\n' % (name, verdict))
                for case, before, after in named:
                    f.write('- %s: %s -> %s\n' % (case, before, after))


def select(cfg, patterns=()):
    """The regression patches of @cfg's configuration that PATCHES globs
    (all by default) match; (patches, globs that match nothing, others)."""
    every = catalogue.regressions(cfg.top)
    if patterns:
        found, empty = {}, []
        for pattern in patterns:
            paths = [os.path.abspath(p) for p in
                     glob_paths(os.path.join(cfg.top, pattern)) + glob_paths(pattern)
                     if p.endswith('.patch')]
            if not paths:
                empty.append(pattern)
            for p in paths:
                found[p] = catalogue.read_regression(p)
        every = [found[p] for p in sorted(found)]
    else:
        empty = []
    here = 'PROFILE=' + cfg.profile + ('' if cfg.mode == 'builtin' else ' MODE=' + cfg.mode)
    return [r for r in every if r.configuration == here], empty, \
        [r for r in every if r.configuration != here]


def glob_paths(pattern):
    import glob
    return glob.glob(pattern, recursive=True)

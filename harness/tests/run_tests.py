#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The harness's own tests: KTAP conversion on fixed logs, the regression
verdicts and batches, the documentation check, the tree manager on a small
fake kernel tree, and run.py's refusal of a filter that matches nothing.  Ends with "N passed, N failed, N skipped"."""

import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, 'harness'))
import ktap  # noqa: E402


def load(name):
    with open(os.path.join(HERE, 'data', name)) as f:
        return f.read().splitlines()


class KtapTest(unittest.TestCase):
    def convert(self, name, expected=()):
        suites = ktap.parse(load(name))
        missing = ktap.missing_cases(suites, list(expected))
        return suites, missing, ktap.count(suites, missing), ktap.junit(suites, missing, {})

    def test_all_pass_counts_every_parameter(self):
        _, _, counts, tree = self.convert('all-pass.log')
        self.assertEqual(ktap.summary_line(counts), '3 passed, 0 failed, 0 skipped')
        names = [(c.get('classname'), c.get('name')) for c in tree.iter('testcase')]
        self.assertEqual(names, [('demo_suite', 'plain_case'), ('demo_suite.param_case', 'EIO'),
                                 ('demo_suite.param_case', 'ENOSPC')])

    def test_failure_carries_the_expectation_text(self):
        _, _, counts, tree = self.convert('one-failure.log')
        self.assertEqual(ktap.summary_line(counts), '1 passed, 1 failed, 0 skipped')
        failure = tree.find('.//testcase[@name="broken_case"]/failure')
        self.assertIsNotNone(failure)
        self.assertIn('Expected err == -5', failure.text)
        self.assertIsNone(tree.find('.//testcase[@name="fine_case"]/failure'))

    def test_skip_is_counted_and_keeps_its_reason(self):
        _, _, counts, tree = self.convert('skip.log')
        self.assertEqual(ktap.summary_line(counts), '1 passed, 0 failed, 1 skipped')
        skipped = tree.find('.//testcase[@name="needs_hardware"]/skipped')
        self.assertEqual(skipped.get('message'), 'no such device')

    def test_crash_mid_suite_names_the_cases_that_never_ran(self):
        expected = ['first_suite.fine_case', 'second_suite.before_crash',
                    'second_suite.during_crash', 'second_suite.after_crash']
        suites, missing, counts, tree = self.convert('crash-mid-suite.log', expected)
        self.assertEqual(missing, ['second_suite.during_crash', 'second_suite.after_crash'])
        self.assertEqual(suites[1].status, ktap.ERROR)
        self.assertEqual(ktap.summary_line(counts), '2 passed, 2 failed, 0 skipped')
        errors = [c.get('name') for c in tree.iter('testcase') if c.find('error') is not None]
        self.assertEqual(errors, ['during_crash', 'after_crash'])

    def test_modules_second_load_and_unload_checks_are_cases(self):
        # MODE=modules: each module loads twice, then the init's own suite.
        import run
        suites = ktap.parse(load('modules.log'))
        run.name_reloads(suites)
        got = [(path, test.status) for path, test in ktap.leaves(suites)]
        self.assertEqual(got, [('demo.works', ktap.PASS), ('demo@reload.works', ktap.FAIL),
                               ('modules.demo_kunit_unloads_cleanly', ktap.FAIL)])
        self.assertIn('+fs_kunit0', '\n'.join(suites[2].children[0].log))

    def test_no_ktap_at_all_is_none_not_zero_tests(self):
        self.assertIsNone(ktap.parse(load('no-ktap.log')))

    def test_written_ktap_strips_printk_prefixes(self):
        lines = ktap.to_ktap(ktap.parse(load('all-pass.log')))
        self.assertEqual(lines[0], 'KTAP version 1')
        self.assertIn('    ok 1 plain_case', lines)

    def test_written_ktap_and_json_carry_the_verdict_of_a_report(self):
        suites = ktap.parse(load('reports.log'))
        lines = ktap.to_ktap(suites)
        self.assertIn('    # BUG: KASAN: slab-use-after-free in ocfs2_rename+0x1234/0x2000', lines)
        self.assertTrue(any(line.startswith('    not ok 2 kasan_case # kernel report: BUG: KASAN')
                            for line in lines))
        self.assertIn('    ok 1 clean_case', lines)
        group = {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
            {'name': 'demo_suite', 'sub_groups': [], 'test_cases': [
                {'name': 'clean_case', 'status': 'PASS'},
                {'name': 'kasan_case', 'status': 'PASS'}]}]}
        cases = ktap.mark_json(group, suites)['sub_groups'][0]['test_cases']
        self.assertEqual([c['status'] for c in cases], ['PASS', 'FAIL'])

    def test_junit_is_well_formed_xml(self):
        _, _, _, tree = self.convert('one-failure.log')
        with tempfile.NamedTemporaryFile(suffix='.xml') as f:
            tree.write(f.name, encoding='unicode', xml_declaration=True)
            root = ET.parse(f.name).getroot()
        self.assertEqual(root.find('testsuite').get('failures'), '1')

    def test_kernel_reports_fail_the_case_that_caused_them(self):
        suites, _, counts, tree = self.convert('reports.log')
        status = {path: (t.status, t.reason) for path, t in ktap.leaves(suites)}
        self.assertEqual(ktap.summary_line(counts), '3 passed, 4 failed, 0 skipped')
        for passed in ('clean_case', 'param_case.EIO', 'after_leak'):
            self.assertEqual(status['demo_suite.' + passed][0], ktap.PASS, passed)
        # KASAN and lockdep: in the log of the case that was running
        self.assertIn('BUG: KASAN: slab-use-after-free', status['demo_suite.kasan_case'][1])
        self.assertIn('possible circular locking', status['demo_suite.param_case.ENOSPC'][1])
        # a leak printed at the end of the suite: the case whose thread allocated it
        self.assertIn('kmemleak: unreferenced object 0xffff888004c0a000',
                      status['demo_suite.leaky_case'][1])
        failure = tree.find('.//testcase[@name="leaky_case"]/failure')
        self.assertIn('ext4_symlink', failure.text)
        # a leak from a work item: the case that was running when it was allocated
        self.assertIn('0xffff888004c0b000', status['demo_suite.worker_leak_case'][1])

    def test_a_suite_that_did_not_scan_for_leaks_fails(self):
        scanned = ktap.parse(load('reports.log'))
        ktap.require_leak_scans(scanned)
        self.assertEqual(scanned[0].reports, [])
        unscanned = ktap.parse([line for line in load('reports.log')
                                if 'kmemleak scan done' not in line])
        ktap.require_leak_scans(unscanned)
        self.assertIn('no kmemleak scan at the end of the suite', unscanned[0].reports)
        # a suite whose cases marked nothing for the leak check (kmemleak's
        # own, which judges its scans itself; another subsystem's) is not asked
        unmarked = ktap.parse(load('one-failure.log'))
        ktap.require_leak_scans(unmarked)
        self.assertNotIn('demo_suite', [path for path, _ in ktap.leaves(unmarked)])

    def test_filter_glob_follows_kunit(self):
        self.assertTrue(ktap.glob_match('quota_dquot', 'quota_dquot.dqget_x'))
        self.assertTrue(ktap.glob_match('quota_*.dqget_*', 'quota_dquot.dqget_x'))
        self.assertFalse(ktap.glob_match('quota_dquot.dquot_*', 'quota_dquot.dqget_x'))
        self.assertFalse(ktap.glob_match('udf*', 'quota_dquot.dqget_x'))


class JudgeTest(unittest.TestCase):
    """The verdicts of the regression proof: a named case must pass without
    the patch and fail with it; a crash proves only the case it stopped in."""

    def judge(self, baseline, run, expect, may=(), report='', reports=None):
        import regressions
        base = [(n, st) for n, st in baseline.items()]
        cases = [{'name': n, 'status': st, 'reports': (reports or {}).get(n, [])}
                 for n, st in run.items()]
        return regressions.judge(base, cases, expect, may, report)[0]

    ALL_PASS = {'s.a.EIO': 'PASS', 's.a.ENOSPC': 'PASS', 's.b': 'PASS', 's.c': 'PASS'}

    def test_caught_when_named_fail_and_others_pass(self):
        self.assertEqual(self.judge(self.ALL_PASS, dict(self.ALL_PASS, **{
            's.a.EIO': 'FAIL', 's.a.ENOSPC': 'FAIL'}), ['s.a.*']), 'caught')

    def test_missed_when_a_named_case_passes(self):
        self.assertEqual(self.judge(self.ALL_PASS, dict(self.ALL_PASS, **{'s.a.EIO': 'FAIL'}),
                                    ['s.a.*']), 'MISSED')

    def test_noisy_when_others_fail_too(self):
        self.assertEqual(self.judge(self.ALL_PASS, dict(self.ALL_PASS, **{
            's.b': 'FAIL', 's.c': 'FAIL'}), ['s.b']), 'NOISY')

    def test_may_fail_is_neither_required_nor_noise(self):
        self.assertEqual(self.judge(self.ALL_PASS, dict(self.ALL_PASS, **{
            's.b': 'FAIL', 's.c': 'FAIL'}), ['s.b'], ['s.c', 's.a.*']), 'caught')

    def test_a_named_case_failing_in_the_baseline_is_no_catch(self):
        baseline = dict(self.ALL_PASS, **{'s.b': 'FAIL'})
        self.assertEqual(self.judge(baseline, baseline, ['s.b']), 'ERROR')

    def test_crash_in_a_named_case_is_caught_but_said(self):
        # s.b oopsed: its result and everything after it never came
        # (run.py lists the cases that never reported as ERROR).
        run = {'s.a.EIO': 'PASS', 's.a.ENOSPC': 'PASS', 's.b': 'ERROR', 's.c': 'ERROR'}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.b']), 'caught (crash)')

    def test_a_case_failing_before_the_crash_is_noise(self):
        run = {'s.a.EIO': 'FAIL', 's.a.ENOSPC': 'PASS', 's.b': 'ERROR', 's.c': 'ERROR'}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.b']), 'NOISY')

    def test_crash_in_an_earlier_unnamed_case_is_no_catch(self):
        # The kernel stopped in s.a's second parameter: s.c never ran.
        run = {'s.a.EIO': 'PASS', 's.a': 'ERROR'}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.c']), 'ERROR')

    def test_crash_in_a_named_parameter_is_caught(self):
        run = {'s.a.EIO': 'PASS', 's.a': 'ERROR'}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.a.ENOSPC']), 'caught (crash)')

    def test_a_glob_for_a_whole_suite_is_refused(self):
        run = {n: 'FAIL' for n in self.ALL_PASS}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.*']), 'ERROR')
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s']), 'ERROR')

    def test_an_expected_report_must_be_the_reason(self):
        # A use-after-free only KASAN sees: failing for another reason is no catch.
        run = dict(self.ALL_PASS, **{'s.b': 'FAIL'})
        kasan = {'s.b': ['BUG: KASAN: slab-use-after-free in ocfs2_rename+0x1/0x2']}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.b'], report='BUG: KASAN'),
                         'MISSED')
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.b'], report='BUG: KASAN',
                                    reports=kasan), 'caught')

    def test_a_glob_that_names_nothing_is_an_error(self):
        self.assertEqual(self.judge(self.ALL_PASS, self.ALL_PASS, ['s.typo']), 'ERROR')


class HeaderTest(unittest.TestCase):
    """Every regression patch in the repository says what to run and names
    cases, not whole suites."""

    def test_every_patch_names_cases(self):
        import glob
        import regressions
        patches = glob.glob(os.path.join(TOP, 'regressions', '**', '*.patch'), recursive=True)
        self.assertTrue(patches)
        for p in patches:
            suites, expect, _, check = regressions.header(p)
            with self.subTest(patch=os.path.relpath(p, TOP)):
                self.assertTrue(check or (suites and expect))
                self.assertFalse([g for g in expect if regressions.whole_suite(g)])
                # a typo in Profile: would leave the patch out of every proof
                self.assertIn(regressions.profile(p), ('default', 'debug'))
                self.assertIn(regressions.mode(p), ('builtin', 'modules'))


class ModuleNameTest(unittest.TestCase):
    """With the tests as modules, scripts/modules-check.sh refuses two
    modules of one name: every test object the series adds is unique."""

    def test_no_two_test_modules_share_a_name(self):
        import collections
        import glob
        import re
        names = collections.Counter()
        for p in glob.glob(os.path.join(TOP, 'patches', '*.patch')):
            with open(p) as f:
                for line in f:
                    m = re.match(r'^\+obj-\$\(CONFIG_\w*KUNIT\w*\)\s*\+=\s*(\S+)\.o', line)
                    if m:
                        names[m.group(1).replace('-', '_')] += 1
        self.assertTrue(names)
        self.assertEqual([n for n, k in names.items() if k > 1], [])

    def test_symbol_and_module_are_named_after_a_suite_they_build(self):
        # style.rst: CONFIG_<SUITE>_KUNIT_TEST, and the module <suite>_kunit
        import glob
        import re
        checked = 0
        for p in glob.glob(os.path.join(TOP, 'patches', '*.patch')):
            with open(p) as f:
                text = f.read()
            for d, body in re.findall(r'^\+\+\+ b/(\S*)/Makefile\n(.*?)(?=^diff |\Z)', text,
                                      re.M | re.S):
                objs = dict(re.findall(r'^\+(\S+)-objs\s*:?=\s*(\S+)\.o', body, re.M))
                for sym, mod in re.findall(r'^\+obj-\$\(CONFIG_(\w+)_KUNIT_TEST\)\s*\+=\s*(\S+)\.o',
                                           body, re.M):
                    suite = sym.lower()
                    self.assertEqual(mod.replace('-', '_'), suite + '_kunit', p)
                    src = os.path.join(TOP, 'kunit-tests', d, objs[mod] + '.c')
                    with open(src) as f:
                        self.assertIn('.name = "%s",' % suite, f.read(), src)
                    checked += 1
        self.assertGreaterEqual(checked, 8)


class KunitconfigTest(unittest.TestCase):
    """A directory's .kunitconfig is what developers run there: ours adds to
    what the kernel's has and never drops a line (ext4's own tests)."""

    def test_every_kunitconfig_keeps_the_kernels_lines(self):
        import glob
        import subprocess
        tree = subprocess.run([os.path.join(TOP, 'harness', 'tree.sh'), 'path'],
                              capture_output=True, text=True).stdout.strip()
        if not os.path.isdir(os.path.join(tree, '.git')):
            self.skipTest('no kernel tree yet (make tree)')
        checked = 0
        for ours in glob.glob(os.path.join(TOP, 'kunit-tests', '**', '.kunitconfig'),
                              recursive=True):
            rel = os.path.relpath(ours, os.path.join(TOP, 'kunit-tests'))
            theirs = subprocess.run(['git', '-C', tree, 'show', 'pristine:' + rel],
                                    capture_output=True, text=True)
            if theirs.returncode:
                continue
            with open(ours) as f:
                have = set(f.read().split())
            self.assertEqual([l for l in theirs.stdout.split() if l not in have], [], rel)
            checked += 1
        self.assertGreater(checked, 0)


class SeriesTest(unittest.TestCase):
    """The maintainer groups of make series (patches/covers/)."""

    def setUp(self):
        import series
        self.series = series

    def test_every_patch_goes_out_in_exactly_one_group(self):
        entries = self.series.read_series()
        groups = self.series.read_covers(entries)
        numbers = [n for g in groups for n in g['patches']]
        self.assertEqual(sorted(numbers), sorted(self.series.number(p) for p, _ in entries))

    def test_fixes_go_first_and_alone(self):
        groups = self.series.read_covers(self.series.read_series())
        kinds = [g['fix'] for g in groups]
        self.assertEqual(kinds, sorted(kinds, reverse=True))
        for g in groups:
            if g['fix']:
                self.assertEqual(g['needs'], [], g['name'])

    def test_a_patch_in_no_group_is_refused(self):
        entries = self.series.read_series() + [('0099-new-thing.patch', [])]
        with self.assertRaises(SystemExit) as e:
            self.series.read_covers(entries)
        self.assertIn('0099', str(e.exception))

    def test_needs_names_every_group_before_in_order(self):
        groups = self.series.read_covers(self.series.read_series())
        by_name = {g['name']: g for g in groups}
        ocfs2 = self.series.closure(by_name['ocfs2'], by_name)
        # transitively: kunit-fs needs kfence-fix
        self.assertEqual(ocfs2, by_name['kfence-fix']['patches'] + by_name['kunit-fs']['patches']
                         + by_name['ocfs2-fixes']['patches'])

    def test_checkpatch_terse_lines_are_read(self):
        line = './0001-x.patch:12: WARNING:MSLEEP: msleep < 20ms can sleep for up to 20ms'
        self.assertEqual(self.series.FINDING.match(line).groups(),
                         ('WARNING', 'MSLEEP', 'msleep < 20ms can sleep for up to 20ms'))


class PlanTest(unittest.TestCase):
    """Which regression patches may share a kernel."""

    def plan(self, *items):
        import regressions
        return regressions.plan([(p, files, set(suites)) for p, files, suites in items])

    def test_private_patches_of_different_suites_share(self):
        self.assertEqual(self.plan(('e4', ['fs/ext4/namei.c'], ['ext4_dquot', 'ext3_dquot']),
                                   ('j', ['fs/jfs/namei.c'], ['jfs_dquot'])), [['e4', 'j']])

    def test_two_patches_of_one_suite_never_share(self):
        self.assertEqual(self.plan(('a', ['fs/jfs/namei.c'], ['jfs_dquot']),
                                   ('b', ['fs/jfs/file.c'], ['jfs_dquot'])), [['a'], ['b']])

    def test_one_glob_covers_a_batch(self):
        import regressions
        self.assertEqual(regressions.cover({'ext4_dquot', 'ext3_dquot', 'jfs_dquot'}), '*_dquot')
        self.assertEqual(regressions.cover({'ext4_dquot', 'udf_super'}), '')

    def test_shared_code_runs_alone(self):
        self.assertEqual(self.plan(('q', ['fs/quota/dquot.c'], ['quota_dquot']),
                                   ('j', ['fs/jfs/namei.c'], ['jfs_dquot']),
                                   ('m', ['mm/page-writeback.c'], ['block_stable_writes'])),
                         [['q'], ['j'], ['m']])


class DocCheckTest(unittest.TestCase):
    """harness/doccheck.py on a fake tree."""

    def check(self, page):
        with tempfile.TemporaryDirectory() as tree:
            os.makedirs(os.path.join(tree, 'fs/jbd2'))
            os.makedirs(os.path.join(tree, 'include/linux'))
            with open(os.path.join(tree, 'fs/jbd2/transaction.c'), 'w') as f:
                f.write('handle_t *jbd2_journal_start(journal_t *j, int n)\n')
            with open(os.path.join(tree, 'include/linux/jbd2.h'), 'w') as f:
                f.write('')
            with open(os.path.join(tree, 'page.rst'), 'w') as f:
                f.write(page)
            return subprocess.run([sys.executable, os.path.join(TOP, 'harness', 'doccheck.py'),
                                   tree, os.path.join(tree, 'page.rst')],
                                  text=True, capture_output=True)

    def test_a_page_of_jbd2_passes(self):
        r = self.check('Call jbd2_journal_start().\n\n.. kernel-doc:: include/linux/jbd2.h\n')
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_page_of_jbd_fails_and_says_why(self):
        r = self.check('Call journal_start().\n\n.. kernel-doc:: include/linux/jbd.h\n')
        self.assertEqual(r.returncode, 1)
        self.assertIn('journal_start(), which JBD2 does not have', r.stdout)
        self.assertIn('kernel-doc of include/linux/jbd.h, which does not exist', r.stdout)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, text=True, capture_output=True, **kw)


class TreeTest(unittest.TestCase):
    """tree.sh on a fake two-file "kernel", so it runs in a second."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        src = os.path.join(t, 'src', 'linux-source-x')
        os.makedirs(os.path.join(src, 'fs'))
        with open(os.path.join(src, 'fs', 'a.c'), 'w') as f:
            f.write('int a = 1;\n')
        with open(os.path.join(src, 'fs', 'b.c'), 'w') as f:
            f.write('int b = 1;\n')
        sh('tar -C %s/src -cJf %s/linux.tar.xz linux-source-x' % (t, t), check=True)
        self.proj = os.path.join(t, 'proj')
        os.makedirs(os.path.join(self.proj, 'patches'))
        os.makedirs(os.path.join(self.proj, 'kunit-tests', 'fs'))
        os.makedirs(os.path.join(self.proj, 'harness'))
        os.symlink(os.path.join(TOP, 'harness', 'tree.sh'),
                   os.path.join(self.proj, 'harness', 'tree.sh'))
        self.patch('0001-a.patch', 'a.c', 'int a = 1;', 'int a = 2;')
        with open(os.path.join(self.proj, 'patches', 'series'), 'w') as f:
            f.write('0001-a.patch\n')
        with open(os.path.join(self.proj, 'kunit-tests', 'fs', 'a_test.c'), 'w') as f:
            f.write('/* test */\n')
        self.env = dict(os.environ, WORKDIR=os.path.join(t, 'work'),
                        KERNEL_TARBALL=os.path.join(t, 'linux.tar.xz'),
                        KERNEL_PACKAGE='linux-source-x', EXTRA_PATCHES='')
        self.tree = os.path.join(t, 'work', 'linux-source-x')

    def tearDown(self):
        self.tmp.cleanup()

    def patch(self, name, path, old, new, where='patches'):
        p = os.path.join(self.proj, where, name) if where else name
        with open(p, 'w') as f:
            f.write('Subject: test\n\ndiff --git a/fs/%s b/fs/%s\n--- a/fs/%s\n+++ b/fs/%s\n'
                    '@@ -1 +1 @@\n-%s\n+%s\n' % (path, path, path, path, old, new))
        return p

    def sync(self, extra=''):
        env = dict(self.env, EXTRA_PATCHES=extra)
        # Run as the symlink so that tree.sh finds the fake project.
        return subprocess.run([os.path.join(self.proj, 'harness', 'tree.sh'), 'sync'],
                              env=env, text=True, capture_output=True)

    def read(self, path):
        with open(os.path.join(self.tree, path)) as f:
            return f.read()

    def test_series_and_tests_are_applied(self):
        r = self.sync()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.read('fs/a.c'), 'int a = 2;\n')
        self.assertEqual(self.read('fs/a_test.c'), '/* test */\n')

    def test_patch_that_does_not_apply_names_itself_and_touches_nothing(self):
        self.assertEqual(self.sync().returncode, 0)
        before = os.stat(os.path.join(self.tree, 'fs/b.c')).st_mtime_ns
        bad = self.patch(os.path.join(self.tmp.name, 'bad.patch'), 'b.c', 'int b = 9;', 'x',
                         where=None)
        r = self.sync(bad)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('bad.patch does not apply to linux-source-x', r.stderr)
        self.assertEqual(self.read('fs/a.c'), 'int a = 2;\n')
        self.assertEqual(self.read('fs/b.c'), 'int b = 1;\n')
        self.assertEqual(os.stat(os.path.join(self.tree, 'fs/b.c')).st_mtime_ns, before)

    def test_extra_patch_then_restore_is_exact(self):
        self.assertEqual(self.sync().returncode, 0)
        extra = self.patch(os.path.join(self.tmp.name, 'x.patch'), 'b.c', 'int b = 1;',
                           'int b = 3;', where=None)
        self.assertEqual(self.sync(extra).returncode, 0)
        self.assertEqual(self.read('fs/b.c'), 'int b = 3;\n')
        self.assertEqual(self.sync().returncode, 0)
        self.assertEqual(self.read('fs/b.c'), 'int b = 1;\n')

    def test_unchanged_inputs_touch_no_file(self):
        self.assertEqual(self.sync().returncode, 0)
        path = os.path.join(self.tree, 'fs/a.c')
        os.utime(path, ns=(1, 1))
        self.assertEqual(self.sync().returncode, 0)
        self.assertEqual(os.stat(path).st_mtime_ns, 1)

    def test_half_patched_tree_is_repaired(self):
        self.assertEqual(self.sync().returncode, 0)
        with open(os.path.join(self.tree, 'fs/a.c'), 'w') as f:
            f.write('int a = 2; /* half-written\n')
        with open(os.path.join(self.tree, 'fs/a.c.rej'), 'w') as f:
            f.write('leftover\n')
        open(os.path.join(self.tree, '.git', 'index.lock'), 'w').close()
        self.assertEqual(self.sync().returncode, 0)
        self.assertEqual(self.read('fs/a.c'), 'int a = 2;\n')
        self.assertFalse(os.path.exists(os.path.join(self.tree, 'fs/a.c.rej')))


class FilterTest(unittest.TestCase):
    """Needs the kernel that make run built; skipped without one."""

    def test_filter_matching_nothing_is_an_error(self):
        build = os.environ.get('BUILD_DIR') or os.path.join(
            os.environ.get('WORKDIR') or '/var/tmp/fs-kunit', 'build')
        if not os.path.exists(os.path.join(build, '.fs-kunit-cases')):
            self.skipTest('no kernel built yet: make run first')
        with tempfile.TemporaryDirectory() as results:
            r = subprocess.run([sys.executable, os.path.join(TOP, 'harness', 'run.py')],
                               env=dict(os.environ, FILTER='no_such_suite*', RESULTS=results),
                               text=True, capture_output=True)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn('FILTER=no_such_suite* matches none', r.stderr)


if __name__ == '__main__':
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    print('%d passed, %d failed, %d skipped' % (result.testsRun - failed - skipped, failed,
                                                skipped))
    sys.exit(1 if failed else 0)

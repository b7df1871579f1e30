# SPDX-License-Identifier: GPL-2.0
"""The harness's own tests: the configuration's derivations, the workspace
lock, KTAP conversion on fixed logs (through the tree's kunit_parser), the
kernel's reports held against the right case, the log contract with the C
side, the regression verdicts and batches, the documentation check, the
warning gate, the time-outs, and the tree manager on a small fake tree."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import unittest.mock
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, 'harness'))
from fskunit import (catalogue, check, clock, coverage, csource, doccheck, gate, lava,  # noqa: E402
                     lavaserver, mutants, proof, results, timing)
from fskunit import series as mail  # noqa: E402
from fskunit.config import Config, ConfigError  # noqa: E402
from fskunit.tree import Tree  # noqa: E402
from fskunit import workspace  # noqa: E402
from fskunit.workspace import Workspace, name_reloads  # noqa: E402

TREE = Config.from_env().tree


def load(name):
    with open(os.path.join(HERE, 'data', name)) as f:
        return f.read().splitlines()


def needs_tree(test):
    if not os.path.exists(os.path.join(TREE, 'tools', 'testing', 'kunit', 'kunit_parser.py')):
        test.skipTest('no kernel tree at %s (make tree)' % TREE)


class ConfigTest(unittest.TestCase):
    """Every path and fragment of a run derives from its settings, once."""

    def cfg(self, **env):
        return Config.from_env(dict({'WORKDIR': '/w'}, **env), top='/top')

    def test_the_second_builder_has_its_own_tree_and_builds_but_the_same_cache(self):
        c = self.cfg(MODE='modules').with_(builder=1)
        self.assertEqual((c.tree, c.build_dir, c.written_kunitconfig),
                         ('/w/builder1/linux-source-6.12', '/w/builder1/build-modules',
                          '/w/builder1/kunitconfig-modules'))
        self.assertEqual((c.ccache_dir, c.lock_path), ('/w/ccache', '/w/.lock'))
        # Laid out as the first's: the cache's paths, relative to the build
        # directory (CCACHE_BASEDIR), are the same.
        first = c.with_(builder=0)
        self.assertEqual(os.path.relpath(c.tree, c.build_dir),
                         os.path.relpath(first.tree, first.build_dir))

    def test_default_run(self):
        c = self.cfg()
        self.assertEqual(c.build_dir, '/w/build')
        self.assertEqual(c.results, '/top/results')
        self.assertEqual(c.kunitconfigs, ['/top/kunitconfig', '/top/kunitconfig.noproc',
                                          '/top/kunitconfig.modules'])
        self.assertEqual(c.kernel_args, [])
        # /proc stays for an init that mounts it and for upstream's .kunitconfig.
        for other in (self.cfg(PROFILE='coverage'), self.cfg(ALONE='fs/quota')):
            self.assertFalse(other.no_proc, other)
        for same in (c.with_(variant='proof-lane0'), c.with_(variant='mutants'),
                     self.cfg(PROFILE='debug'), self.cfg(MODE='modules')):
            self.assertTrue(same.no_proc, same)
        # The built-in kernel and the module build differ in the tests only.
        m = self.cfg(MODE='modules')
        self.assertEqual(c.kunitconfigs[1:], m.kunitconfigs[1:])
        self.assertEqual(c.with_(variant='mutants').kunitconfigs[1:], c.kunitconfigs[1:])
        self.assertNotIn('/top/kunitconfig.modules', self.cfg(PROFILE='debug').kunitconfigs)
        self.assertEqual(c.tree, '/w/linux-source-6.12')

    def test_profile_mode_and_alone_each_have_their_build_and_results(self):
        c = self.cfg(PROFILE='debug', MODE='modules')
        self.assertEqual(c.build_dir, '/w/build-debug-modules')
        self.assertEqual(c.results, '/top/results/debug/modules')
        self.assertEqual(c.kunitconfigs, ['/w/kunitconfig-debug-modules',
                                          '/top/kunitconfig.debug', '/top/kunitconfig.noproc',
                                          '/top/kunitconfig.modules'])
        self.assertEqual(c.kernel_args, ['kmemleak.verbose=1', 'printk.devkmsg=on'])
        self.assertTrue(c.leak_scans)
        a = self.cfg(ALONE='fs/quota/')
        self.assertEqual(a.build_dir, '/w/build-alone-fs-quota')
        self.assertEqual(a.results, '/top/results/alone/fs-quota')
        self.assertEqual(a.kunitconfigs, ['/w/linux-source-6.12/fs/quota/.kunitconfig'])

    def test_a_copy_with_one_setting_changed_derives_anew(self):
        c = self.cfg().with_(profile='debug', results_dir='/r')
        self.assertEqual(c.build_dir, '/w/build-debug')
        self.assertEqual(c.results, '/r')

    def test_distcc_hosts_reach_every_compile_and_make_checks_children(self):
        self.assertNotIn('CCACHE_PREFIX', self.cfg().compile_env('/t'))
        c = self.cfg(DISTCC_HOSTS='farm1/8 farm2/8')
        self.assertEqual(c.compile_env('/t'), {
            'CCACHE_DIR': '/w/ccache', 'CCACHE_MAXSIZE': '5G', 'CCACHE_BASEDIR': '/t',
            'CCACHE_PREFIX': 'distcc', 'DISTCC_HOSTS': 'farm1/8 farm2/8'})
        self.assertEqual(c.env['DISTCC_HOSTS'], 'farm1/8 farm2/8')

    def test_the_schemata_kernel_adds_its_fragment_and_its_lanes_only_boot_it(self):
        c = self.cfg(PROFILE='debug')
        self.assertEqual(c.with_(variant='mutants').kunitconfigs,
                         ['/w/kunitconfig-debug-mutants'] + c.kunitconfigs[1:])
        self.assertEqual(c.with_(variant='mutants').build_dir, '/w/build-debug-mutants')
        self.assertEqual(c.with_(variant='mutants-lane0').kunitconfigs, c.kunitconfigs)

    def test_bad_settings_are_refused_by_name(self):
        for env, word in (({'PROFILE': 'fast'}, 'PROFILE=fast'), ({'MODE': 'x'}, 'MODE=x'),
                          ({'ALONE': '../x'}, 'ALONE'), ({'ALONE': 'a b'}, 'ALONE'), ({'TIMEOUT': 'soon'}, 'TIMEOUT'),
                          ({'SLOWDOWN': '0'}, 'SLOWDOWN')):
            with self.assertRaises(ConfigError) as e:
                self.cfg(**env)
            self.assertIn(word, str(e.exception))

    def test_settings_travel_to_a_child_as_make_passes_them(self):
        c = self.cfg(PROFILE='debug', FILTER='quota_*', EXTRA_PATCHES='/p/a.patch', TIMEOUT='9')
        again = Config.from_env(c.env, top='/top')
        self.assertEqual(again, c)

    def test_extra_patches_become_absolute(self):
        c = Config.from_env({'EXTRA_PATCHES': 'x.patch'})
        self.assertEqual(c.extra_patches, (os.path.abspath('x.patch'),))


class ProgressTest(unittest.TestCase):
    def test_only_a_build_that_compiled_nothing_yet_counts_as_cold(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertTrue(workspace.Progress(d).cold)
            # A link that failed leaves no vmlinux, but the objects are there.
            os.makedirs(os.path.join(d, 'init'))
            open(os.path.join(d, 'init', 'main.o'), 'w').close()
            self.assertFalse(workspace.Progress(d).cold)


class InitramfsOrderTest(unittest.TestCase):
    def test_a_module_loads_after_those_it_depends_on(self):
        # A .ko's .modinfo: NUL-separated strings, depends= among them.
        ko = b'\x7fELF...\0license=GPL\0depends=xz_dec,kunit-helpers\0vermagic=6.12\0'
        self.assertEqual(workspace.module_depends(ko), ['xz_dec', 'kunit_helpers'])
        self.assertEqual(workspace.module_depends(b'\0depends=\0'), [])
        # modules.order is link order: fs/ before lib/.
        order = workspace.load_order(['fs_kunit', 'other', 'xz_dec'],
                                     {'fs_kunit': ['xz_dec', 'built_in_elsewhere'],
                                      'other': [], 'xz_dec': []})
        self.assertEqual(order, ['xz_dec', 'fs_kunit', 'other'])


class WorkspaceLockTest(unittest.TestCase):
    """One run per WORKDIR: a second Workspace waits for the first."""

    def test_second_workspace_waits_until_the_first_closes(self):
        with tempfile.TemporaryDirectory() as w:
            cfg = Config(workdir=w)
            first = Workspace(cfg)
            got = []
            t = threading.Thread(target=lambda: got.append(Workspace(cfg)))
            t.start()
            time.sleep(0.5)
            self.assertEqual(got, [])
            first.close()
            t.join(10)
            self.assertEqual(len(got), 1)
            got[0].close()


class QemuConfigTest(unittest.TestCase):
    """qemu-configs/x86_64.py, loaded by kunit.py's own loader: '--' ends the
    kernel's command line exactly when an initramfs comes with it, so that
    kunit.py's kunit_shutdown=reboot goes to /init."""

    def command_line(self, argv):
        needs_tree(self)
        sys.path.insert(0, os.path.join(TREE, 'tools', 'testing', 'kunit'))
        try:
            import kunit_kernel
            saved, sys.argv = sys.argv, argv
            try:
                _, ops = kunit_kernel._get_qemu_ops(
                    os.path.join(os.path.dirname(HERE), '..', 'qemu-configs', 'x86_64.py'),
                    None, None)
            finally:
                sys.argv = saved
        finally:
            sys.path.pop(0)
        return ops._kernel_command_line

    def test_an_initramfs_gets_the_shutdown_argument(self):
        line = self.command_line(['kunit.py', 'exec', '--qemu_args=-initrd /x/init.cpio'])
        self.assertTrue(line.endswith(' -- kunit_shutdown=reboot'), line)

    def test_built_in_tests_shut_down_the_kernel(self):
        line = self.command_line(['kunit.py', 'exec', '--qemu_args=-m 2G'])
        self.assertNotIn(' --', line)
        self.assertTrue(line.endswith(' kunit_shutdown=reboot'), line)


    def test_a_measured_tsc_rate_reaches_a_tcg_guest_only(self):
        argv = ['kunit.py', 'exec']
        with unittest.mock.patch.dict(os.environ, {'FS_KUNIT_TSC_KHZ': '2095999'}):
            self.assertIn(' tsc_early_khz=2095999 tsc=reliable', self.command_line(argv))
            with unittest.mock.patch.dict(os.environ, {'KUNIT_QEMU_ACCEL': 'kvm'}):
                self.assertNotIn('tsc_early_khz', self.command_line(argv))
        with unittest.mock.patch.dict(os.environ):
            os.environ.pop('FS_KUNIT_TSC_KHZ', None)
            self.assertNotIn('tsc_early_khz', self.command_line(argv))

    def test_the_host_tsc_rate_is_measured_once_per_host_boot(self):
        if not shutil.which('gcc') or os.uname().machine != 'x86_64':
            self.skipTest('needs gcc on x86_64')
        with tempfile.TemporaryDirectory() as w:
            khz = clock.tsc_khz(w, TOP)
            self.assertGreater(khz, 100000)  # a TSC of over 100 MHz
            os.unlink(os.path.join(w, 'tsc-khz'))
            self.assertEqual(clock.tsc_khz(w, TOP), khz)  # from the record


class KtapTest(unittest.TestCase):
    def test_a_report_before_the_first_parameter_result_is_that_parameter_s(self):
        # A parameterized case prints no plan: the lines its first parameter
        # prints before its result are that parameter's, not the case's.
        needs_tree(self)
        log = ['KTAP version 1', '1..1', '    KTAP version 1', '    # Subtest: s', '    1..1',
               '        KTAP version 1', '        # Subtest: op',
               '    # op: kmemleak: case pid 688, jiffies 1', '',
               'WARNING: bad unlock balance detected!', 'kunit_try_catch/688 is trying',
               '        ok 1 first', '    # op: kmemleak: case pid 690, jiffies 2',
               '        ok 2 second', '    # op: pass:2 fail:0 skip:0 total:2',
               '    ok 1 op', '# s: pass:1 fail:0 skip:0 total:1', 'ok 1 s']
        status = {p: t.status for p, t in results.leaves(results.parse(log, TREE))}
        self.assertEqual(status, {'s.op.first': results.FAIL, 's.op.second': results.PASS})

    def setUp(self):
        needs_tree(self)

    def convert(self, name, expected=()):
        suites = results.parse(load(name), TREE)
        missing = results.missing_cases(suites, list(expected))
        return suites, missing, results.count(suites, missing), results.junit(suites, missing, {})

    def test_all_pass_counts_every_parameter(self):
        _, _, counts, tree = self.convert('all-pass.log')
        self.assertEqual(results.summary_line(counts), '3 passed, 0 failed, 0 skipped')
        names = [(c.get('classname'), c.get('name')) for c in tree.iter('testcase')]
        self.assertEqual(names, [('demo_suite', 'plain_case'), ('demo_suite.param_case', 'EIO'),
                                 ('demo_suite.param_case', 'ENOSPC')])

    def test_failure_carries_the_expectation_text(self):
        _, _, counts, tree = self.convert('one-failure.log')
        self.assertEqual(results.summary_line(counts), '1 passed, 1 failed, 0 skipped')
        failure = tree.find('.//testcase[@name="broken_case"]/failure')
        self.assertIsNotNone(failure)
        self.assertIn('Expected err == -5', failure.text)
        self.assertIsNone(tree.find('.//testcase[@name="fine_case"]/failure'))

    def test_skip_is_counted_and_keeps_its_reason(self):
        _, _, counts, tree = self.convert('skip.log')
        self.assertEqual(results.summary_line(counts), '1 passed, 0 failed, 1 skipped')
        skipped = tree.find('.//testcase[@name="needs_hardware"]/skipped')
        self.assertEqual(skipped.get('message'), 'no such device')

    def test_crash_mid_suite_names_the_cases_that_never_ran(self):
        expected = ['first_suite.fine_case', 'second_suite.before_crash',
                    'second_suite.during_crash', 'second_suite.after_crash']
        suites, missing, counts, tree = self.convert('crash-mid-suite.log', expected)
        self.assertEqual(missing, ['second_suite.during_crash', 'second_suite.after_crash'])
        self.assertEqual(suites[1].status, results.ERROR)
        self.assertIn('Kernel panic', '\n'.join(suites[1].log))
        self.assertEqual(results.summary_line(counts), '2 passed, 2 failed, 0 skipped')
        errors = [c.get('name') for c in tree.iter('testcase') if c.find('error') is not None]
        self.assertEqual(errors, ['during_crash', 'after_crash'])

    def test_modules_second_load_and_unload_checks_are_cases(self):
        # MODE=modules: each module loads twice, then the init's own suite.
        suites = results.parse(load('modules.log'), TREE)
        name_reloads(suites)
        got = [(path, test.status) for path, test in results.leaves(suites)]
        self.assertEqual(got, [('demo.works', results.PASS), ('demo@reload.works', results.FAIL),
                               ('modules.demo_kunit_unloads_cleanly', results.FAIL)])
        self.assertIn('+fs_kunit0', '\n'.join(suites[2].children[0].log))

    def test_no_ktap_at_all_is_none_not_zero_tests(self):
        self.assertIsNone(results.parse(load('no-ktap.log'), TREE))

    def test_written_ktap_strips_printk_prefixes(self):
        lines = results.to_ktap(results.parse(load('all-pass.log'), TREE))
        self.assertEqual(lines[0], 'KTAP version 1')
        self.assertIn('    ok 1 plain_case', lines)

    def test_written_ktap_and_json_carry_the_verdict_of_a_report(self):
        suites = results.parse(load('reports.log'), TREE)
        lines = results.to_ktap(suites)
        self.assertIn('    # BUG: KASAN: slab-use-after-free in ocfs2_rename+0x1234/0x2000', lines)
        self.assertTrue(any(line.startswith('    not ok 2 kasan_case # kernel report: BUG: KASAN')
                            for line in lines))
        self.assertIn('    ok 1 clean_case', lines)
        group = json.loads(results.kernelci_json(suites, TREE, '/b'))['sub_groups'][0]
        status = {c['name']: c['status'] for c in group['test_cases']}
        self.assertEqual((status['clean_case'], status['kasan_case']), ('PASS', 'FAIL'))

    def test_junit_is_well_formed_xml(self):
        _, _, _, tree = self.convert('one-failure.log')
        with tempfile.NamedTemporaryFile(suffix='.xml') as f:
            tree.write(f.name, encoding='unicode', xml_declaration=True)
            root = ET.parse(f.name).getroot()
        self.assertEqual(root.find('testsuite').get('failures'), '1')

    def test_kernel_reports_fail_the_case_that_caused_them(self):
        suites, _, counts, tree = self.convert('reports.log')
        status = {path: (t.status, t.reason) for path, t in results.leaves(suites)}
        self.assertEqual(results.summary_line(counts), '3 passed, 4 failed, 0 skipped')
        for passed in ('clean_case', 'param_case.EIO', 'after_leak'):
            self.assertEqual(status['demo_suite.' + passed][0], results.PASS, passed)
        self.assertIn('BUG: KASAN: slab-use-after-free', status['demo_suite.kasan_case'][1])
        self.assertIn('possible circular locking', status['demo_suite.param_case.ENOSPC'][1])
        # a leak printed at the end of the suite: the case whose thread allocated it
        self.assertIn('kmemleak: unreferenced object 0xffff888004c0a000',
                      status['demo_suite.leaky_case'][1])
        failure = tree.find('.//testcase[@name="leaky_case"]/failure')
        self.assertIn('ext4_symlink', failure.text)
        # a leak from a work item: the case that was running when it was allocated
        self.assertIn('0xffff888004c0b000', status['demo_suite.worker_leak_case'][1])

    def test_kunit_runner_waiting_for_a_slow_case_is_no_hang(self):
        # swapper/0:1 waits in kunit_try_catch_run() while slow_case works:
        # not its failure.  The case thread stuck in folio_wait_stable() is.
        suites = results.parse(load('hung.log'), TREE)
        status = {path: (t.status, t.reason) for path, t in results.leaves(suites)}
        self.assertEqual(status['demo_suite.quick_case'][0], results.PASS)
        self.assertEqual(status['demo_suite.slow_case'][0], results.PASS)
        self.assertEqual(suites[0].status, results.ERROR)
        reports = [r for t in results.walk(suites) for r in t.reports]
        self.assertEqual(reports, ['INFO: task kunit_try_catch:93 blocked for more than 30 '
                                   'seconds.'])

    def test_a_suite_that_did_not_scan_for_leaks_fails(self):
        scanned = results.parse(load('reports.log'), TREE)
        results.require_leak_scans(scanned)
        self.assertEqual(scanned[0].reports, [])
        unscanned = results.parse([line for line in load('reports.log')
                                   if 'scanned for KUnit suite' not in line], TREE)
        results.require_leak_scans(unscanned)
        self.assertIn('no kmemleak scan at the end of the suite', unscanned[0].reports)
        # a suite whose cases marked nothing for the leak check is not asked
        unmarked = results.parse(load('one-failure.log'), TREE)
        results.require_leak_scans(unmarked)
        self.assertNotIn('demo_suite', [path for path, _ in results.leaves(unmarked)])

    def test_suite_seconds_by_printk_time(self):
        got = results.suite_seconds(load('crash-mid-suite.log'))
        self.assertEqual(got, {'(boot)': 0.512345, 'first_suite': 0.0})

    def test_filter_glob_follows_kunit(self):
        self.assertTrue(catalogue.glob_match('quota_dquot', 'quota_dquot.dqget_x'))
        self.assertTrue(catalogue.glob_match('quota_*.dqget_*', 'quota_dquot.dqget_x'))
        self.assertFalse(catalogue.glob_match('quota_dquot.dquot_*', 'quota_dquot.dqget_x'))
        self.assertFalse(catalogue.glob_match('udf*', 'quota_dquot.dqget_x'))


class LogContractTest(unittest.TestCase):
    """The lines the C side prints and the harness reads are one contract:
    KMEMLEAK_KUNIT_* of include/linux/kmemleak.h (patch 0014), as the
    fixtures print them, and kmemleak's own report lines."""

    def defines(self):
        path = [p for p in catalogue.series_patches(TOP) if '-mm-kmemleak-Let-KUnit' in p][0]
        with open(path) as f:
            return dict(re.findall(r'^\+#define (KMEMLEAK_KUNIT_\w+)\s+"(.*)"$', f.read(), re.M))

    @staticmethod
    def render(fmt, *values):
        return re.sub(r'%l?[dus]', '%s', fmt.replace('\\n', '')) % values

    def test_every_format_the_harness_reads_is_defined_once_in_c(self):
        self.assertEqual(sorted(self.defines()), sorted(results.LOG_CONTRACT))

    def test_the_harness_reads_what_c_prints(self):
        d = self.defines()
        prefix, regex = results.LOG_CONTRACT['KMEMLEAK_KUNIT_CASE']
        line = prefix.format(case='op_returns_dquot_error') + self.render(
            d['KMEMLEAK_KUNIT_CASE'], 93, 4294968296)
        self.assertEqual(regex.search(line).groups(), ('93', '4294968296'))
        prefix, regex = results.LOG_CONTRACT['KMEMLEAK_KUNIT_SCANNED']
        line = prefix + self.render(d['KMEMLEAK_KUNIT_SCANNED'], 'quota_dquot')
        self.assertEqual(regex.match(line).group(1), 'quota_dquot')

    def test_kmemleak_report_lines_are_the_kernels(self):
        needs_tree(self)
        with open(os.path.join(TREE, 'mm', 'kmemleak.c')) as f:
            text = f.read()
        self.assertIn('"unreferenced object 0x%08lx (size %zu):\\n"', text)
        self.assertIn('"  comm \\"%s\\", pid %d, jiffies %lu\\n"', text)
        self.assertTrue(results._LEAK.match('kmemleak: unreferenced object 0xffff8880 (size 64):'))
        self.assertTrue(results._LEAK_WHO.match('kmemleak:   comm "x", pid 9, jiffies 99'))


class JudgeTest(unittest.TestCase):
    """The verdicts of the regression proof: a named case must pass without
    the patch and fail with it; a crash proves only the case it stopped in."""

    def judge(self, baseline, run, expect, may=(), report='', reports=None):
        base = [(n, st) for n, st in baseline.items()]
        cases = [{'name': n, 'status': st, 'reports': (reports or {}).get(n, [])}
                 for n, st in run.items()]
        return proof.judge(base, cases, expect, may, report)[0]

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
        run = {'s.a.EIO': 'PASS', 's.a.ENOSPC': 'PASS', 's.b': 'ERROR', 's.c': 'ERROR'}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.b']), 'caught (crash)')

    def test_a_case_failing_before_the_crash_is_noise(self):
        run = {'s.a.EIO': 'FAIL', 's.a.ENOSPC': 'PASS', 's.b': 'ERROR', 's.c': 'ERROR'}
        self.assertEqual(self.judge(self.ALL_PASS, run, ['s.b']), 'NOISY')

    def test_crash_in_an_earlier_unnamed_case_is_no_catch(self):
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
        every = catalogue.regressions(TOP)
        self.assertTrue(every)
        for r in every:
            with self.subTest(patch=r.name):
                self.assertEqual(r.problems(), [])

    def test_a_patch_outside_the_checkout_logs_under_results(self):
        r = catalogue.Regression('/elsewhere/../other/x.patch', ['s'], ['s.a'], [], None,
                                 'default', 'builtin', '')
        self.assertEqual(r.name, 'x')
        out = os.path.join(Config(top=TOP).results, 'regressions', r.name)
        self.assertTrue(os.path.abspath(out).startswith(os.path.join(TOP, 'results') + os.sep))


class ModuleNameTest(unittest.TestCase):
    """With the tests as modules, scripts/modules-check.sh refuses two
    modules of one name: every test object the series adds is unique."""

    def test_no_two_test_modules_share_a_name(self):
        import collections
        names = collections.Counter()
        for p in catalogue.series_patches(TOP):
            with open(p) as f:
                for line in f:
                    m = re.match(r'^\+obj-\$\(CONFIG_\w*KUNIT\w*\)\s*\+=\s*(\S+)\.o', line)
                    if m:
                        names[m.group(1).replace('-', '_')] += 1
        self.assertTrue(names)
        self.assertEqual([n for n, k in names.items() if k > 1], [])

    def test_symbol_and_module_are_named_after_a_suite_they_build(self):
        # style.rst: CONFIG_<SUITE>_KUNIT_TEST, and the module <suite>_kunit
        checked = 0
        for p in catalogue.series_patches(TOP):
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


class DistccTest(unittest.TestCase):
    """DISTCC_HOSTS: a compile goes through the cache, then to distcc."""

    def test_a_compile_is_done_by_a_distccd_on_this_machine(self):
        import socket
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        with tempfile.TemporaryDirectory() as d:
            server = subprocess.Popen(
                ['distccd', '--no-detach', '--daemon', '--allow', '127.0.0.1',
                 '--listen', '127.0.0.1', '--port', str(port), '--jobs', '1',
                 '--log-stderr', '--log-level', 'info'],
                stderr=subprocess.PIPE, text=True)
            try:
                for _ in range(100):
                    with socket.socket() as s:
                        if s.connect_ex(('127.0.0.1', port)) == 0:
                            break
                    time.sleep(0.05)
                cfg = Config.from_env({'WORKDIR': d, 'DISTCC_HOSTS': '127.0.0.1:%d' % port})
                with open(os.path.join(d, 'x.c'), 'w') as f:
                    f.write('int fs_kunit_distcc(int x) { return x + 1; }\n')
                # No fallback to a local compile: the object comes from distccd or not at all.
                env = dict(os.environ, DISTCC_FALLBACK='0', **cfg.compile_env(d))
                r = subprocess.run(['ccache', 'gcc', '-c', 'x.c', '-o', 'x.o'], cwd=d, env=env,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(os.path.exists(os.path.join(d, 'x.o')))
            finally:
                server.terminate()
                _, log = server.communicate(timeout=10)
            self.assertIn('COMPILE_OK', log)
            self.assertIn('x.c', log)


class LavaTest(unittest.TestCase):
    """RUNNER=lava and make lava-jobs: LAVA's schema takes the device and the
    jobs, a job boots with kunit.py's command line, and the console LAVA
    recorded is judged as QEMU's is."""

    def test_the_device_is_valid(self):
        lava.validate_device()

    def test_a_job_is_valid_and_boots_with_kunit_py_s_command_line(self):
        needs_tree(self)
        cfg = Config.from_env()
        definition = lava.job(cfg, TREE, 'quota', 100, 'quota_dquot*', ('fs_kunit_mutant=3',))
        lava.validate(definition)
        arg = definition['actions'][0]['deploy']['images']['kernel']['image_arg']
        # run_kernel()'s order: our arguments, the filter, kunit.enable, the config's line
        self.assertRegex(arg, r"-append 'fs_kunit_mutant=3 kunit.filter_glob=quota_dquot\* "
                              r"kunit.enable=1 console=ttyS0 [^']*kunit_shutdown=reboot' ")
        self.assertIn('-accel tcg', arg)
        self.assertEqual(definition['timeouts']['action'], {'seconds': 100})

    def test_a_job_lava_would_refuse_is_an_error(self):
        definition = {'job_name': 'x', 'device_type': 'qemu', 'actions': []}
        with self.assertRaisesRegex(lava.LavaError, "LAVA refuses job 'x'"):
            lava.validate(definition)

    def test_a_verdict_lava_gives_differently_fails_the_step(self):
        qemu = {'quota_dquot.a': 'PASS', 'quota_dquot.b': 'PASS', 'quota_dquot.c': 'SKIP'}
        self.assertEqual(check.verdicts_differ(qemu, dict(qemu)), [])
        self.assertEqual(
            check.verdicts_differ(qemu, {'quota_dquot.a': 'PASS', 'quota_dquot.b': 'FAIL'}),
            ['quota_dquot.b: FAIL under LAVA, PASS under QEMU',
             'quota_dquot.c: not run under LAVA, SKIP under QEMU'])

    def test_the_recorded_console_is_judged_as_qemu_s(self):
        needs_tree(self)
        console = lava.console(load('lava-run.log'))
        self.assertIn('] Linux version 6.12', console[0])
        self.assertNotIn('poweroff', console[:-1])  # LAVA's own, after the kernel's
        suites = results.parse(console, TREE)
        status = [t.status for _, t in results.leaves(suites)]
        self.assertEqual(len(status), 38)
        self.assertEqual(set(status), {results.PASS})


class LavaServerTest(unittest.TestCase):
    """make lava-server: a mutant's job ends at the first failure, how a job
    ended is read as make mutants reads a boot, and what the worker started
    is stopped with it.  (make check's lava-server step runs two jobs on a
    real server.)"""

    def test_a_mutant_job_ends_at_its_first_failure_and_a_baseline_does_not(self):
        needs_tree(self)
        cfg = Config.from_env()
        m = mutants.Mutant(n=7, key='k', file='f', function='g', line=1, op='BRANCH_DEL',
                           original='', mutated='', suites='udf_super', profile='default')
        end = lava.mutant_job(cfg, TREE, m, 45)['actions'][2]['test']['monitors'][0]['end']
        self.assertRegex('[    3.210000]     not ok 4 udf_ro_mount_writes_nothing', end)
        self.assertNotRegex('[    3.210000]     ok 4 udf_ro_mount_writes_nothing', end)
        m.n = 0
        end = lava.mutant_job(cfg, TREE, m, 45)['actions'][2]['test']['monitors'][0]['end']
        self.assertEqual(end, lava.END)

    def test_how_a_job_ended(self):
        ok = '[    2.000000]     ok 1 a'
        failed = '[    2.100000]     not ok 2 b'
        halt = '[    3.000000] ' + lava.END
        for job, console, want in (
                ({'health': 'Complete'}, [ok, halt], 'halted'),
                ({'health': 'Complete'}, [ok, failed], 'stopped'),
                ({'health': 'Incomplete', 'failure_comment':
                  'lava-test-monitor timed out after 45 seconds'}, [ok], 'timeout'),
                ({'health': 'Incomplete', 'failure_comment': 'Connection closed'},
                 [ok, '[    2.5] Kernel panic - not syncing: Fatal exception'], 'died')):
            self.assertEqual(lavaserver.ended(job, console), want, console)

    def test_stopping_the_server_stops_the_jobs_its_worker_started(self):
        # A worker that started a job in a process group of its own, as
        # lava-worker starts lava-run.
        worker = subprocess.Popen(['/bin/sh', '-c', 'setsid sleep 600 & echo $!; wait'],
                                  stdout=subprocess.PIPE, text=True, start_new_session=True)
        job = int(worker.stdout.readline())
        worker.stdout.close()
        server = lavaserver.Server(tempfile.mkdtemp(), devices=1)
        server.procs = [('worker', worker)]
        server.stop()
        shutil.rmtree(server.dir)
        time.sleep(0.2)
        self.assertFalse(running(job))

    def test_a_second_server_waits_for_the_first(self):
        with tempfile.TemporaryDirectory() as d:
            saved, lavaserver.LOCK = lavaserver.LOCK, os.path.join(d, 'lock')
            try:
                said = []
                first = lavaserver.Server(os.path.join(d, 'a'), say=said.append)
                second = lavaserver.Server(os.path.join(d, 'b'), say=said.append)
                first._lock()
                waiting = threading.Thread(target=second._lock)
                waiting.start()
                waiting.join(0.5)
                self.assertTrue(waiting.is_alive())
                self.assertRegex(said[0], r'waiting for the other lava-server of this '
                                          r'machine \(pid \d+, .*/a\)')
                first.stop()
                waiting.join(5)
                self.assertFalse(waiting.is_alive())
                second.stop()
            finally:
                lavaserver.LOCK = saved


class InterruptTest(unittest.TestCase):
    """SIGTERM or ^C reach the main thread only: a lane's thread reading a
    guest that prints nothing (a hang) must still see its kunit.py end."""

    def test_stop_all_ends_what_a_lane_is_reading(self):
        proc = subprocess.Popen(['/bin/sh', '-c', 'sleep 600'], stdout=subprocess.PIPE,
                                text=True, start_new_session=True)
        workspace.RUNNING.add(proc)
        try:
            lane = threading.Thread(target=proc.stdout.read)
            lane.start()
            workspace.stop_all()
            lane.join(10)
            self.assertFalse(lane.is_alive())
        finally:
            workspace.RUNNING.discard(proc)
            proc.kill()
            proc.wait()
            proc.stdout.close()


def running(pid):
    """Whether @pid runs (a zombie waits only to be reaped)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


class KunitconfigTest(unittest.TestCase):
    """A directory's .kunitconfig is what developers run there: ours adds to
    what the kernel's has and never drops a line (ext4's own tests)."""

    def test_every_kunitconfig_keeps_the_kernels_lines(self):
        needs_tree(self)
        checked = 0
        for d, _, files in os.walk(os.path.join(TOP, 'kunit-tests')):
            if '.kunitconfig' not in files:
                continue
            ours = os.path.join(d, '.kunitconfig')
            rel = os.path.relpath(ours, os.path.join(TOP, 'kunit-tests'))
            theirs = subprocess.run(['git', '-C', TREE, 'show', 'pristine:' + rel],
                                    capture_output=True, text=True)
            if theirs.returncode:
                continue
            with open(ours) as f:
                have = set(f.read().split())
            self.assertEqual([w for w in theirs.stdout.split() if w not in have], [], rel)
            checked += 1
        self.assertGreater(checked, 0)


class SeriesTest(unittest.TestCase):
    """The maintainer groups of make series (patches/covers/)."""

    def test_every_patch_goes_out_in_exactly_one_group(self):
        entries = catalogue.read_series(TOP)
        groups = mail.read_covers(entries)
        numbers = [n for g in groups for n in g['patches']]
        self.assertEqual(sorted(numbers), sorted(catalogue.number(p) for p, _ in entries))

    def test_fixes_go_first_and_alone(self):
        groups = mail.read_covers(catalogue.read_series(TOP))
        kinds = [g['fix'] for g in groups]
        self.assertEqual(kinds, sorted(kinds, reverse=True))
        for g in groups:
            if g['fix']:
                self.assertEqual(g['needs'], [], g['name'])

    def test_a_patch_in_no_group_is_refused(self):
        entries = catalogue.read_series(TOP) + [('0099-new-thing.patch', [])]
        with self.assertRaises(mail.SeriesError) as e:
            mail.read_covers(entries)
        self.assertIn('0099', str(e.exception))

    def test_needs_names_every_group_before_in_order(self):
        groups = mail.read_covers(catalogue.read_series(TOP))
        by_name = {g['name']: g for g in groups}
        ocfs2 = mail.closure(by_name['ocfs2'], by_name)
        # transitively: kunit-fs needs kfence-fix
        self.assertEqual(ocfs2, by_name['kfence-fix']['patches'] + by_name['kunit-fs']['patches']
                         + by_name['ocfs2-fixes']['patches']
                         + by_name['ocfs2-sysctl-fix']['patches'])

    def test_every_fix_says_where_it_applies_upstream(self):
        fixes = [n for g in mail.read_covers(catalogue.read_series(TOP)) if g['fix']
                 for n in g['patches']]
        self.assertEqual(mail.bases_problems(fixes), [])

    def test_a_mainline_form_whose_diff_drifted_is_a_problem(self):
        with tempfile.TemporaryDirectory() as d:
            up = os.path.join(d, 'upstream')
            os.mkdir(up)
            patch = 'x\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n'
            for path, text in (('0001-fix.patch', patch), ('upstream/0001-fix.patch', patch),
                               ('upstream/bases', 'base b\n0001 f 0 f() 0001-fix.patch\n')):
                with open(os.path.join(d, path), 'w') as f:
                    f.write(text)
            self.assertEqual(mail.bases_problems(['0001'], up), [])
            self.assertIn('no row for fix 0002', mail.bases_problems(['0002'], up)[0])
            with open(os.path.join(up, '0001-fix.patch'), 'w') as f:
                f.write(patch.replace('+b', '+c'))
            self.assertIn("not patch 0001's", mail.bases_problems(['0001'], up)[0])
            # Another context, the same change: mainline's form of a hunk.
            with open(os.path.join(up, '0001-fix.patch'), 'w') as f:
                f.write(patch.replace('@@ -1 +1 @@\n', '@@ -1,2 +1,2 @@\n other\n'))
            self.assertEqual(mail.bases_problems(['0001'], up), [])

    def test_checkpatch_terse_lines_are_read(self):
        line = './0001-x.patch:12: WARNING:MSLEEP: msleep < 20ms can sleep for up to 20ms'
        self.assertEqual(mail.FINDING.match(line).groups(),
                         ('WARNING', 'MSLEEP', 'msleep < 20ms can sleep for up to 20ms'))


class ConfigRecordTest(unittest.TestCase):
    """make alone, without kunit.py's olddefconfig, only while what decides
    the .config is what it was at the last build."""

    def test_make_alone_only_while_the_configuration_is_as_built(self):
        import types
        with tempfile.TemporaryDirectory() as d:
            def write(name, text):
                with open(os.path.join(d, name), 'w') as f:
                    f.write(text)
            os.makedirs(os.path.join(d, 'build'))
            write('kunitconfig', 'CONFIG_QUOTA=y\n')
            write('qemu.py', 'x = 1\n')
            write('build/.config', 'CONFIG_QUOTA=y\n')
            cfg = types.SimpleNamespace(build_dir=os.path.join(d, 'build'), make_options=(),
                                        qemu_config=os.path.join(d, 'qemu.py'),
                                        kunitconfigs=[os.path.join(d, 'kunitconfig')])
            ws = Workspace.__new__(Workspace)
            self.assertFalse(ws.config_unchanged(cfg))  # never built here
            ws.config_built(cfg)
            self.assertTrue(ws.config_unchanged(cfg))
            write('kunitconfig', 'CONFIG_QUOTA=y\nCONFIG_UDF_FS=y\n')
            self.assertFalse(ws.config_unchanged(cfg))
            ws.config_built(cfg)
            write('build/.config', 'CONFIG_QUOTA=y\n# a Kconfig change\n')
            self.assertFalse(ws.config_unchanged(cfg))
            ws.config_built(cfg)
            cfg.make_options = ('GCOV_PROFILE_dquot.o=y',)
            self.assertFalse(ws.config_unchanged(cfg))


class PipelineTest(unittest.TestCase):
    """The proof's pipeline: two builders and two boots at once, no lane
    used by two batches at a time, judged in the batches' order."""

    def test_builds_and_boots_overlap_in_their_own_lanes_and_are_judged_in_order(self):
        import queue
        lock, busy, building, booting, most, judged = threading.Lock(), {}, set(), set(), \
            {'build': 0, 'boot': 0}, []
        seconds = {1: 0.3, 2: 0.05, 3: 0.05, 4: 0.2, 5: 0.0, 6: 0.05, 7: 0.1, 8: 0.0}

        def build(b, batch, builder, lane):
            with lock:
                self.assertNotIn(lane, busy.values())
                self.assertNotIn(builder, building)
                busy[b] = lane
                building.add(builder)
                most['build'] = max(most['build'], len(building))
            time.sleep(0.05)
            with lock:
                building.discard(builder)
            return b

        def boot(b):
            with lock:
                booting.add(b)
                most['boot'] = max(most['boot'], len(booting))
            time.sleep(seconds[b])
            with lock:
                booting.discard(b)
                del busy[b]
            return b
        idle = queue.Queue()
        for builder in ('first', 'second'):
            idle.put(builder)
        proof.pipeline(['b%d' % b for b in seconds], build, boot,
                       lambda b, batch, future: judged.append((b, future.result())),
                       idle, boots=2)
        self.assertEqual(judged, [(b, b) for b in seconds])
        self.assertEqual(most, {'build': 2, 'boot': 2})
        self.assertEqual(idle.qsize(), 2)


class PlanTest(unittest.TestCase):
    """Which regression patches may share a kernel."""

    def plan(self, *items):
        return proof.plan([(p, files, set(suites)) for p, files, suites in items])

    def test_private_patches_of_different_suites_share(self):
        self.assertEqual(self.plan(('e4', ['fs/ext4/namei.c'], ['ext4_dquot', 'ext3_dquot']),
                                   ('j', ['fs/jfs/namei.c'], ['jfs_dquot'])), [['e4', 'j']])

    def test_two_patches_of_one_filesystem_never_share(self):
        # f2fs/25 leaves f2fs unregistered: f2fs/01's cases would skip, not fail.
        self.assertEqual(self.plan(('init', ['fs/f2fs/sysfs.c'], ['f2fs_registered']),
                                   ('create', ['fs/f2fs/namei.c'], ['f2fs_dquot']),
                                   ('j', ['fs/jfs/namei.c'], ['jfs_dquot'])),
                         [['init', 'j'], ['create']])

    def test_two_patches_of_one_suite_never_share(self):
        self.assertEqual(self.plan(('a', ['fs/jfs/namei.c'], ['jfs_dquot']),
                                   ('b', ['fs/jfs/file.c'], ['jfs_dquot'])), [['a'], ['b']])

    def test_one_glob_covers_a_batch(self):
        self.assertEqual(proof.cover({'ext4_dquot', 'ext3_dquot', 'jfs_dquot'}), '*_dquot')
        self.assertEqual(proof.cover({'ext4_dquot', 'udf_super'}), '')

    def test_shared_code_runs_alone(self):
        self.assertEqual(self.plan(('q', ['fs/quota/dquot.c'], ['quota_dquot']),
                                   ('j', ['fs/jfs/namei.c'], ['jfs_dquot']),
                                   ('m', ['mm/page-writeback.c'], ['block_stable_writes'])),
                         [['q'], ['j'], ['m']])


    def test_a_patch_that_crashes_runs_alone(self):
        crash = catalogue.Regression('c.patch', ['ext4_dquot'], [], [], None, 'default',
                                     'builtin', '', crash='NULL dereference')
        self.assertEqual(self.plan((crash, ['fs/ext4/super.c'], ['ext4_dquot']),
                                   ('j', ['fs/jfs/namei.c'], ['jfs_dquot'])), [[crash], ['j']])


class DocCheckTest(unittest.TestCase):
    """doccheck on a fake tree."""

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
            return doccheck.problems(tree, os.path.join(tree, 'page.rst'))

    def test_a_page_of_jbd2_passes(self):
        self.assertEqual(self.check('Call jbd2_journal_start().\n\n'
                                    '.. kernel-doc:: include/linux/jbd2.h\n'), [])

    def test_a_page_of_jbd_fails_and_says_why(self):
        found = '\n'.join(self.check('Call journal_start().\n\n'
                                     '.. kernel-doc:: include/linux/jbd.h\n'))
        self.assertIn('journal_start(), which JBD2 does not have', found)
        self.assertIn('kernel-doc of include/linux/jbd.h, which does not exist', found)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, text=True, capture_output=True, **kw)


class FakeKernel(unittest.TestCase):
    """A two-file "kernel" in a tarball and a project that patches it."""

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
        self.patch('0001-a.patch', 'a.c', 'int a = 1;', 'int a = 2;')
        with open(os.path.join(self.proj, 'patches', 'series'), 'w') as f:
            f.write('0001-a.patch\n')
        with open(os.path.join(self.proj, 'kunit-tests', 'fs', 'a_test.c'), 'w') as f:
            f.write('/* test */\n')
        self.tree = Tree(os.path.join(t, 'work'), self.proj,
                         tarball=os.path.join(t, 'linux.tar.xz'), package='linux-source-x')

    def tearDown(self):
        self.tmp.cleanup()

    def patch(self, name, path, old, new, where='patches'):
        p = os.path.join(self.proj, where, name) if where else name
        with open(p, 'w') as f:
            f.write('Subject: test\n\ndiff --git a/fs/%s b/fs/%s\n--- a/fs/%s\n+++ b/fs/%s\n'
                    '@@ -1 +1 @@\n-%s\n+%s\n' % (path, path, path, path, old, new))
        return p

    def read(self, path):
        with open(os.path.join(self.tree.path, path)) as f:
            return f.read()


class TreeTest(FakeKernel):
    """The tree manager on the fake kernel, so it runs in a second."""

    def test_series_and_tests_are_applied(self):
        self.tree.sync()
        self.assertEqual(self.read('fs/a.c'), 'int a = 2;\n')
        self.assertEqual(self.read('fs/a_test.c'), '/* test */\n')

    def test_patch_that_does_not_apply_names_itself_and_touches_nothing(self):
        from fskunit.tree import TreeError
        self.tree.sync()
        before = os.stat(os.path.join(self.tree.path, 'fs/b.c')).st_mtime_ns
        bad = self.patch(os.path.join(self.tmp.name, 'bad.patch'), 'b.c', 'int b = 9;', 'x',
                         where=None)
        with self.assertRaises(TreeError) as e:
            self.tree.sync((bad,))
        self.assertIn('bad.patch does not apply to linux-source-x', str(e.exception))
        self.assertEqual(self.read('fs/a.c'), 'int a = 2;\n')
        self.assertEqual(self.read('fs/b.c'), 'int b = 1;\n')
        self.assertEqual(os.stat(os.path.join(self.tree.path, 'fs/b.c')).st_mtime_ns, before)

    def test_extra_patch_then_restore_is_exact(self):
        self.tree.sync()
        extra = self.patch(os.path.join(self.tmp.name, 'x.patch'), 'b.c', 'int b = 1;',
                           'int b = 3;', where=None)
        self.tree.sync((extra,))
        self.assertEqual(self.read('fs/b.c'), 'int b = 3;\n')
        self.tree.sync()
        self.assertEqual(self.read('fs/b.c'), 'int b = 1;\n')

    def test_dpkg_is_asked_for_the_version_only_when_the_tarball_changed(self):
        self.tree.sync()
        with unittest.mock.patch('fskunit.tree.installed_version',
                                 return_value=self.tree.version) as asked:
            self.tree.ensure()
            self.tree.ensure()
            self.assertLessEqual(asked.call_count, 1)
            before = asked.call_count
            os.utime(self.tree.tarball, ns=(1, 1))
            self.tree.ensure()
            self.assertEqual(asked.call_count, before + 1)
            self.tree.ensure()
            self.assertEqual(asked.call_count, before + 1)
        # A new version of the package is extracted again.
        with unittest.mock.patch('fskunit.tree.installed_version', return_value='9.9'):
            os.utime(self.tree.tarball, ns=(2, 2))
            self.tree.ensure()
            self.assertEqual(self.tree.version, '9.9')

    def test_the_kept_series_tree_follows_an_edited_test(self):
        self.tree.sync()
        with open(os.path.join(self.proj, 'kunit-tests', 'fs', 'a_test.c'), 'w') as f:
            f.write('/* edited */\n')
        extra = self.patch(os.path.join(self.tmp.name, 'x.patch'), 'b.c', 'int b = 1;',
                           'int b = 3;', where=None)
        self.tree.sync((extra,))
        self.assertEqual(self.read('fs/a_test.c'), '/* edited */\n')
        self.assertEqual(self.read('fs/b.c'), 'int b = 3;\n')

    def test_a_test_edit_does_not_apply_the_series_again_a_patch_edit_does(self):
        self.tree.sync()
        applied = []
        apply = self.tree._apply
        self.tree._apply = lambda index, patch: (applied.append(patch), apply(index, patch))
        with open(os.path.join(self.proj, 'kunit-tests', 'fs', 'a_test.c'), 'w') as f:
            f.write('/* edited */\n')
        self.tree.sync()
        self.assertEqual((applied, self.read('fs/a_test.c')), ([], '/* edited */\n'))
        self.patch('0001-a.patch', 'a.c', 'int a = 1;', 'int a = 4;')
        self.tree.sync()
        self.assertEqual((len(applied), self.read('fs/a.c')), (1, 'int a = 4;\n'))

    def test_unchanged_inputs_touch_no_file(self):
        self.tree.sync()
        path = os.path.join(self.tree.path, 'fs/a.c')
        os.utime(path, ns=(1, 1))
        self.tree.sync()
        self.assertEqual(os.stat(path).st_mtime_ns, 1)

    def test_a_clone_for_a_second_builder_syncs_alike_and_follows_its_origin(self):
        from fskunit.tree import Tree
        self.tree.sync()
        clone = Tree(os.path.join(self.tmp.name, 'work', 'builder1'), self.proj,
                     tarball=self.tree.tarball, package=self.tree.package,
                     origin=self.tree.path)
        extra = self.patch(os.path.join(self.tmp.name, 'x.patch'), 'b.c', 'int b = 1;',
                           'int b = 3;', where=None)
        self.assertEqual(clone.sync((extra,)), self.tree.wanted((extra,)))
        with open(os.path.join(clone.path, 'fs/b.c')) as f:
            self.assertEqual(f.read(), 'int b = 3;\n')
        self.assertEqual(self.read('fs/b.c'), 'int b = 1;\n')  # the origin stays
        # The origin extracted again (a new package): the clone is made again.
        before = clone._pristine(clone.path)
        shutil.rmtree(self.tree.path)
        with unittest.mock.patch.dict(os.environ, GIT_COMMITTER_DATE='2001-01-01T00:00:00'):
            self.tree.sync()
        self.assertNotEqual(clone._pristine(self.tree.path), before)
        self.assertEqual(clone.sync(), self.tree.head_tree())
        self.assertEqual(clone._pristine(clone.path), clone._pristine(self.tree.path))

    def test_a_clone_of_no_tree_says_so(self):
        from fskunit.tree import Tree, TreeError
        clone = Tree(os.path.join(self.tmp.name, 'work', 'builder1'), self.proj,
                     package=self.tree.package, origin=os.path.join(self.tmp.name, 'none'))
        with self.assertRaisesRegex(TreeError, 'git clone .*none'):
            clone.ensure()
        self.assertFalse(os.path.exists(clone.path))

    def test_half_patched_tree_is_repaired(self):
        self.tree.sync()
        with open(os.path.join(self.tree.path, 'fs/a.c'), 'w') as f:
            f.write('int a = 2; /* half-written\n')
        with open(os.path.join(self.tree.path, 'fs/a.c.rej'), 'w') as f:
            f.write('leftover\n')
        open(os.path.join(self.tree.path, '.git', 'index.lock'), 'w').close()
        self.tree.sync()
        self.assertEqual(self.read('fs/a.c'), 'int a = 2;\n')
        self.assertFalse(os.path.exists(os.path.join(self.tree.path, 'fs/a.c.rej')))


class GateTest(FakeKernel):
    """The warning gate compiles each touched file with its build's own
    command line, against the pristine version."""

    LABEL = 'int f(int x)\n{\n\tif (x)\n\t\treturn 1;\nout:\n\treturn 0;\n}\n'
    CLEAN = 'int f(int x)\n{\n\tif (x)\n\t\treturn 1;\n\treturn 0;\n}\n'

    def gate(self, pristine, series, cmd='gcc -Wp,-MMD,fs/.b.o.d -Wall -c -o fs/b.o %s'):
        self.patch('0001-a.patch', 'a.c', 'int a = 1;', 'int a = 2;')
        self.tree.sync()
        path = os.path.join(self.tree.path, 'fs', 'b.c')
        # b.c as pristine has it, then as the series changes it
        with open(path, 'w') as f:
            f.write(pristine)
        self.tree.git('add', '-f', 'fs/b.c')
        self.tree.git('commit', '-q', '-m', 'pristine b.c')
        self.tree.git('tag', '-f', 'pristine')
        with open(path, 'w') as f:
            f.write(series)
        self.tree.git('commit', '-q', '-a', '-m', 'series')
        build = os.path.join(self.tmp.name, 'build')
        os.makedirs(os.path.join(build, 'fs'))
        with open(os.path.join(build, 'fs', '.b.o.cmd'), 'w') as f:
            f.write('savedcmd_fs/b.o := %s\n' % (cmd % path))
        return gate.check_files(self.tree, build, os.path.join(self.tmp.name, 'cc'),
                                gate.touched(self.tree), w1=False)

    def test_a_label_the_series_leaves_unused_fails_the_gate(self):
        new = self.gate(self.CLEAN, self.LABEL)
        self.assertEqual(len(new), 1, new)
        self.assertRegex(new[0], r"^fs/b\.c: label .out. defined but not used \[-Wunused-label\]")

    def test_the_compiler_is_run_without_what_kbuild_runs_after_it(self):
        # x86_64 .cmd files end in " ; ./tools/objtool/objtool ... fs/b.o"
        new = self.gate(self.CLEAN, self.LABEL, 'gcc -Wall -c -o fs/b.o %s   ; '
                        './tools/objtool/objtool --hacks=jump_label --orc   fs/b.o')
        self.assertEqual(len(new), 1, new)

    def test_a_command_line_that_compiles_nothing_is_an_error_not_a_pass(self):
        with self.assertRaisesRegex(gate.GateError, 'unrecognized'):
            self.gate(self.CLEAN, self.LABEL, 'gcc --no-such-option -c -o fs/b.o %s')

    def test_a_warning_pristine_has_already_is_not_the_series(self):
        self.assertEqual(self.gate(self.LABEL, self.LABEL.replace('return 1', 'return 2')), [])

    def test_a_clean_file_passes(self):
        self.assertEqual(self.gate(self.LABEL, self.CLEAN), [])

    def test_a_file_whose_object_kbuild_left_alone_keeps_its_verdict(self):
        self.gate(self.CLEAN, self.LABEL)
        build, known = os.path.join(self.tmp.name, 'build'), {}
        obj = os.path.join(build, 'fs', 'b.o')
        open(obj, 'w').close()
        check = lambda: gate.check_files(self.tree, build, os.path.join(self.tmp.name, 'cc'),
                                         gate.touched(self.tree), w1=False, known=known)
        self.assertEqual(len(check()), 1)
        # Not compiled again: the clean text is not seen while the object stays.
        with open(os.path.join(self.tree.path, 'fs', 'b.c'), 'w') as f:
            f.write(self.CLEAN)
        self.assertEqual(len(check()), 1)
        st = os.stat(obj)
        os.utime(obj, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
        self.assertEqual(check(), [])

    def test_w1_of_an_added_file_with_a_known_command_line_needs_no_kbuild(self):
        # The fake tree has no Makefile: make's implicit rule would compile
        # fs/b.o beside the source, which shows that make ran.
        path = os.path.join(self.tree.path, 'fs', 'b.c')
        self.gate(self.CLEAN, self.LABEL)
        self.tree.git('rm', '-q', '--cached', 'fs/b.c')
        self.tree.git('commit', '-q', '-m', 'b.c not in pristine')
        self.tree.git('tag', '-f', 'pristine')
        with open(path, 'w') as f:
            f.write('int f(unsigned int x)\n{\n\treturn x < 0;\n}\n')
        self.tree.git('add', '-f', 'fs/b.c')
        self.tree.git('commit', '-q', '-m', 'series adds b.c')
        os.makedirs(os.path.join(self.tree.path, 'scripts'))
        with open(os.path.join(self.tree.path, 'scripts', 'kernel-doc'), 'w') as f:
            f.write('#!/bin/sh\necho "$2:1: warning: kernel-doc read it"\n')
        os.chmod(os.path.join(self.tree.path, 'scripts', 'kernel-doc'), 0o755)
        build = os.path.join(self.tmp.name, 'build')
        cmd = 'gcc -Wall -c -o fs/b.o ' + path
        with open(os.path.join(build, 'fs', '.b.o.cmd'), 'w') as f:
            f.write('savedcmd_fs/b.o := %s\n' % cmd)
        known = {'fs/b.c': {'status': 'A', 'cmd': cmd, 'new': [],
                            'w1_cmd': 'gcc -Wall -Wextra -c -o fs/b.o ' + path}}
        new = gate.check_files(self.tree, build, os.path.join(self.tmp.name, 'cc'),
                               {'fs/b.c': 'A'}, known=known)
        self.assertEqual(len(new), 2, new)
        self.assertRegex(new[0], r'^fs/b\.c: W=1: comparison .* is always false')
        self.assertEqual(new[1], 'fs/b.c: W=1: kernel-doc read it')
        made = os.path.join(self.tree.path, 'fs', 'b.o')
        self.assertFalse(os.path.exists(made))
        # Its own command line changed: W=1's is asked of make again.
        known['fs/b.c']['cmd'] += ' '
        gate.check_files(self.tree, build, os.path.join(self.tmp.name, 'cc'),
                         {'fs/b.c': 'A'}, known=known)
        self.assertTrue(os.path.exists(made))


class TimingTest(unittest.TestCase):
    """QEMU's time-out: measured on this machine, or the reference, with room."""

    def test_unmeasured_runs_get_the_reference_with_a_generous_factor(self):
        with tempfile.TemporaryDirectory() as w:
            cfg = Config(workdir=w, profile='debug')
            self.assertEqual(timing.timeout(cfg, ['quota_dquot']),
                             cfg.reference_seconds * timing.UNMEASURED_FACTOR)
            # a slow machine (SLOWDOWN) is no slower in what it was told
            self.assertEqual(timing.timeout(cfg.with_(slowdown=4), ['quota_dquot']),
                             cfg.reference_seconds * timing.UNMEASURED_FACTOR)
            self.assertEqual(timing.timeout(cfg.with_(timeout=77), []), 77)

    def test_measured_suites_scale_what_this_machine_took(self):
        with tempfile.TemporaryDirectory() as w:
            cfg = Config(workdir=w)
            timing.record(cfg, ['[    2.000000] KTAP version 1',
                                '[    2.100000]     # Subtest: big_suite',
                                '[   62.100000] ok 1 big_suite',
                                '[   62.200000]     # Subtest: small_suite',
                                '[   63.200000] ok 2 small_suite'])
            self.assertEqual(timing.timeout(cfg, ['big_suite']),
                             int((2.0 + 0.2 + 60.0) * timing.FACTOR))  # boot, unaccounted, suite
            self.assertEqual(timing.timeout(cfg, ['small_suite']), timing.FLOOR)
            self.assertEqual(timing.timeout(cfg, ['never_measured']),
                             cfg.reference_seconds * timing.UNMEASURED_FACTOR)


    def test_a_run_is_split_by_first_character_into_boots_of_about_equal_time(self):
        with tempfile.TemporaryDirectory() as w:
            cfg = Config(workdir=w)
            log = ['[    1.000000] KTAP version 1']
            for k, (suite, start, end) in enumerate(
                    [('ext2_dquot', 1, 11), ('ext4_dquot', 11, 31), ('f2fs_dquot', 31, 71),
                     ('jfs_dquot', 71, 81)], 1):
                log += ['[%5d.000000]     # Subtest: %s' % (start, suite),
                        '[%5d.000000] ok %d %s' % (end, k, suite)]
            cases = ['ext2_dquot.a', 'ext4_dquot.a', 'f2fs_dquot.a', 'f2fs_dquot.b', 'jfs_dquot.a']
            # Before any measurement, by cases: e 2, f 2, j 1.
            self.assertEqual(timing.shards(cfg, cases, 2),
                             [('[ej]*', ['ext2_dquot', 'ext4_dquot', 'jfs_dquot']),
                              ('[f]*', ['f2fs_dquot'])])
            timing.record(cfg, log)  # e 30 s, f 40 s, j 10 s
            self.assertEqual(timing.shards(cfg, cases, 2),
                             [('[f]*', ['f2fs_dquot']),
                              ('[ej]*', ['ext2_dquot', 'ext4_dquot', 'jfs_dquot'])])
            self.assertEqual(timing.shards(cfg, ['f2fs_dquot.a', 'f2fs_dquot.b'], 2),
                             [('[f]*', ['f2fs_dquot'])])

    def test_only_a_built_in_run_of_every_case_is_split(self):
        with tempfile.TemporaryDirectory() as w:
            cfg = Config(workdir=w, boots=2)
            cases = ['ext2_dquot.a', 'f2fs_dquot.a']
            self.assertEqual(len(Workspace.shards(cfg, cases)), 2)
            for other in (cfg.with_(filter='ext2_dquot'), cfg.with_(mode='modules'),
                          cfg.with_(profile='coverage'), cfg.with_(alone='fs/quota'),
                          cfg.with_(runner='lava'), cfg.with_(boots=1)):
                self.assertIsNone(Workspace.shards(other, cases), other)
            self.assertIsNone(Workspace.shards(cfg, ['f2fs_dquot.a', 'f2fs_dquot.b']))

    def test_the_boots_of_a_split_run_are_judged_as_one_in_the_listed_order(self):
        needs_tree(self)

        def boot(suite, seconds):
            return ['[    0.500000] KTAP version 1', '[    0.500000] 1..1',
                    '[    0.500000]     KTAP version 1',
                    '[    0.500000]     # Subtest: %s' % suite, '[    0.500000]     1..1',
                    '[%5d.000000]     ok 1 works' % seconds,
                    '[%5d.000000] ok 1 %s' % (seconds, suite)]
        with tempfile.TemporaryDirectory() as w:
            cfg = Config(workdir=w, boots=2, results_dir=os.path.join(w, 'results'))
            ws = Workspace.__new__(Workspace)
            ws.cfg, ws.tree = cfg, unittest.mock.Mock(path=TREE, version='6.12')
            run = workspace.Run(cfg, expected=['ext2_dquot.works', 'f2fs_dquot.works'])
            logs = {'[e]*': boot('ext2_dquot', 3), '[f]*': boot('f2fs_dquot', 9)}
            booted = []

            def boot_shards(cfg_, shards):
                booted.extend(glob for glob, _ in shards)
                return [logs[glob] for glob, _ in shards]
            ws.boot_shards = boot_shards
            ws.execute(cfg, run)
            self.assertEqual(sorted(booted), ['[e]*', '[f]*'])
            self.assertEqual([s.name for s in run.suites], ['ext2_dquot', 'f2fs_dquot'])
            self.assertEqual(run.summary, '2 passed, 0 failed, 0 skipped')
            console = open(os.path.join(cfg.results, 'console.log')).read()
            self.assertEqual(console.count('# fs-kunit: the boot of the suites'), 2)
            # Each boot's suites are measured: the next split knows f2fs is longer.
            self.assertEqual(timing.shards(cfg, run.expected, 2)[0], ('[f]*', ['f2fs_dquot']))


class CheckTest(unittest.TestCase):
    """CI shows the tail of make check: a failing step's failures are there."""

    def test_a_failed_steps_failure_lines_are_picked_from_its_log(self):
        with tempfile.NamedTemporaryFile('w', suffix='.log') as log:
            log.write('regressions: [1/2] ext4/01: caught in 9 s: 1 named cases failed\n'
                      'regressions: [2/2] ext4/02: MISSED in 9 s: still passing: a.b\n'
                      '1 passed, 1 failed, 0 skipped\n'
                      'run: FAIL: quota_dquot.dqget_x (expected -5)\n')
            log.flush()
            self.assertEqual(check.failure_lines(log.name),
                             ['regressions: [2/2] ext4/02: MISSED in 9 s: still passing: a.b',
                              'run: FAIL: quota_dquot.dqget_x (expected -5)'])


class MutantsTest(unittest.TestCase):
    """make mutants: what the generator makes, that the schemata compile and
    each mutant does what it says, and the verdicts."""

    DEMO = """#include <stdio.h>
#include <stdlib.h>

struct inode { int n; };
static int puts_done;

static void iput(struct inode *inode)
{
	puts_done++;
}

static int dquot_initialize(struct inode *inode)
{
	return inode->n;
}

static void inode_inc_link_count(struct inode *inode)
{
	inode->n++;
}

static int demo(struct inode *dir, struct inode *inode)
{
	int err;

	err = dquot_initialize(dir);
	if (err)
		goto out;
	inode_inc_link_count(inode);
	return 0;
out:
	iput(inode);
	return err;
}

int main(int argc, char **argv)
{
	struct inode dir = { -5 }, inode = { 0 };
	int ret;

	fs_kunit_mutant = atoi(argv[1]);
	ret = demo(&dir, &inode);
	printf("%d %d %d\\n", ret, inode.n, puts_done);
	return 0;
}
"""
    HEADER = 'static int fs_kunit_mutant;\n#define FS_KUNIT_MUTANT(n) (fs_kunit_mutant == (n))\n'

    def planned(self, mutate='quota'):
        out = mutants.generate(self.DEMO, 'fs/demo.c', ['demo'], 'demo_suite', mutate)
        for n, (m, _) in enumerate(out, 1):
            m.n = n
        return out

    def test_the_quota_slice_makes_each_operator_once(self):
        ops = sorted(m.op for m, _ in self.planned())
        self.assertEqual(ops, ['ARG_SWAP', 'BRANCH_DEL', 'BRANCH_NEG', 'CALL_DEL', 'CALL_DUP',
                               'QUOTA_MOVE', 'RET_ZERO'])
        self.assertEqual({m.profile for m, _ in self.planned() if m.op.startswith('CALL')},
                         {'debug'})

    def test_every_mutant_compiles_and_changes_what_the_function_does(self):
        planned = self.planned()
        text, owners = mutants.schema(self.DEMO, planned)
        self.assertEqual(set().union(*owners.values()), {m.n for m, _ in planned})
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, 'linux'))
            with open(os.path.join(tmp, 'linux', 'fs_kunit_mutant.h'), 'w') as f:
                f.write(self.HEADER)
            with open(os.path.join(tmp, 'demo.c'), 'w') as f:
                f.write(text)
            subprocess.run(['gcc', '-Wall', '-Werror', '-Wno-unused-function', '-I', tmp,
                            '-o', os.path.join(tmp, 'demo'), os.path.join(tmp, 'demo.c')],
                           check=True)
            run = lambda n: subprocess.run([os.path.join(tmp, 'demo'), str(n)],  # noqa: E731
                                           capture_output=True, text=True).stdout
            self.assertEqual(run(0), '-5 0 1\n')  # the error, nothing done, the inode put
            for m, _ in planned:
                self.assertNotEqual(run(m.n), run(0), '%s did nothing' % m.key)

    def test_a_schema_that_does_not_compile_names_its_mutant(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, 'tree', 'fs', 'b.c')
            os.makedirs(os.path.dirname(source))
            build = os.path.join(tmp, 'build')
            os.makedirs(os.path.join(build, 'fs'))
            with open(os.path.join(build, 'fs', '.b.o.cmd'), 'w') as f:
                f.write('savedcmd_fs/b.o := gcc -c -o fs/b.o %s\n' % source)
            files = {'fs/b.c': ('#include <linux/fs_kunit_mutant.h>\nint a;\nint b = ;\n',
                                {3: {7}}),
                     mutants.SELECTOR_FILES[0]: ('', {}), mutants.SELECTOR_FILES[1]: ('', {})}
            bad = mutants.not_compiling(os.path.join(tmp, 'tree'), build, files, dict(os.environ))
            self.assertEqual(list(bad), [7])

    def test_verdicts(self):
        def suites(*statuses, reports=()):
            cases = [results.Test('c%d' % i, st) for i, st in enumerate(statuses)]
            for r in reports:
                cases[-1].reports.append(r)
            return [results.Test('s', results.PASS, children=cases)]
        base = {'s.c0': results.PASS, 's.c1': results.PASS, 's.c2': results.PASS}
        P, F, E = results.PASS, results.FAIL, results.ERROR
        self.assertEqual(mutants.judge(base, suites(P), 'stopped', 's.c1.user'),
                         ('KILLED', ['s.c1.user']))
        self.assertEqual(mutants.judge(base, suites(P, P, P), 'halted'), ('SURVIVED', []))
        self.assertEqual(mutants.judge(base, suites(P, F, P), 'halted'), ('KILLED', ['s.c1']))
        # the kernel died in c1: c1 caught it, c2 never ran
        self.assertEqual(mutants.judge(base, suites(P, E), 'died'), ('KILLED', ['s.c1']))
        self.assertEqual(mutants.judge(base, suites(P), 'died'), ('KILLED', ['s.c1']))
        self.assertEqual(mutants.judge(base, suites(P), 'timeout'), ('TIMEOUT', ['s.c1']))
        hung = suites(P, F, reports=['INFO: task kunit:12 blocked for more than 60 seconds.'])
        self.assertEqual(mutants.judge(base, hung, 'halted'), ('TIMEOUT', ['s.c1']))
        # stopped at a suite's end after a kernel report: the case it blamed,
        # or the suite when it blamed none
        leak = suites(P, F, P, reports=[])
        self.assertEqual(mutants.judge(base, leak, 'stopped'), ('KILLED', ['s.c1']))
        between = suites(P, P, P)
        between[0].reports.append('kmemleak: unreferenced object 0xffff (size 64)')
        self.assertEqual(mutants.judge(base, between, 'stopped'), ('KILLED', ['s']))
        # a case that failed in the baseline too kills nothing
        self.assertEqual(mutants.judge(dict(base, **{'s.c1': F}), suites(P, F, P), 'halted'),
                         ('SURVIVED', []))

    def test_a_hung_task_ends_the_boot_unless_it_is_the_runner_waiting(self):
        def trace(task, frame):
            return ['INFO: task %s:41 blocked for more than 60 seconds.' % task,
                    'Call Trace:', ' <TASK>', ' %s+0x1/0x2' % frame, ' </TASK>']
        head = ['KTAP version 1', '1..1', '    # Subtest: s', '    1..2', '    ok 1 c0']

        class Ws:
            def __init__(self, log):
                self.log = log

            def kunit(self, ln, *args, each_line):
                for x in self.log:
                    each_line('[   1.000000] %s\n' % x)
        # the runner waiting for a slow case: the boot goes on to its end
        runner = head + trace('kunit', 'kunit_try_catch_run') + \
            ['    ok 2 c1', 'ok 1 s', mutants.REPORT_END]
        _, _, ended, _ = mutants.boot(Ws(runner), None, 3, 's', 60)
        self.assertEqual(ended, 'halted')
        # the case's own thread stuck on a lock: TIMEOUT at once, in c1
        stuck = head + trace('kunit_try_catch', 'mutex_lock') + ['never read']
        lines, _, ended, _ = mutants.boot(Ws(stuck), None, 3, 's', 60)
        self.assertEqual((ended, lines[-1][-7:]), ('hung', '</TASK>'))
        base = {'s.c0': results.PASS, 's.c1': results.PASS}
        parsed = [results.Test('s', results.PASS, children=[results.Test('c0', results.PASS)])]
        self.assertEqual(mutants.judge(base, parsed, ended), ('TIMEOUT', ['s.c1']))

    def test_the_reader_names_the_case_of_each_result_line(self):
        reader = mutants.Reader()
        lines = ['KTAP version 1', '1..2', '    # Subtest: quota_dquot', '    1..2',
                 '    ok 1 dqget_acquires_once',
                 '        # Subtest: dquot_initialize_returns_acquire_error',
                 '        ok 1 user', '        not ok 2 group',
                 '    not ok 2 dquot_initialize_returns_acquire_error', 'not ok 1 quota_dquot',
                 '    # Subtest: udf_super', '    ok 1 ro_mount # SKIP no image']
        self.assertEqual([n for n in map(reader.feed, lines) if n], [
            'quota_dquot.dqget_acquires_once',
            'quota_dquot.dquot_initialize_returns_acquire_error.user',
            'quota_dquot.dquot_initialize_returns_acquire_error.group',
            'quota_dquot.dquot_initialize_returns_acquire_error', 'udf_super.ro_mount'])

    def test_the_scope_is_in_the_tree_and_names_every_quota_caller(self):
        needs_tree(self)
        planned = mutants.plan(TOP, TREE)  # a function the tree lacks is an error
        self.assertGreater(len(planned), 100)
        listed = {(s.path, f) for s in csource.scope(TOP) for f in s.functions}
        missing = [(p, f) for p, fs in csource.quota_callers(TREE).items() for f in fs
                   if (p, f) not in listed]
        self.assertEqual(missing, [])


class CoverageTest(unittest.TestCase):
    """make coverage: the guest's gcov data out of the console, lcov's
    tracefile into a row a guarded function."""

    def test_the_gcov_tar_comes_out_of_a_console_with_kernel_lines_in_it(self):
        import base64
        import io
        import tarfile
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode='w:gz') as tar:
            data = b'gcda'
            info = tarfile.TarInfo('./var/tmp/w/build-coverage/fs/quota/dquot.gcda')
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        text = base64.b64encode(buf.getvalue()).decode()
        lines = ['[   3.1] ok 1 quota_dquot', coverage.BEGIN, text[:40],
                 '[   3.2] random: crng init done', text[40:], coverage.END]
        got = coverage.gcda_from_console(lines)
        self.assertEqual(got, {'var/tmp/w/build-coverage/fs/quota/dquot.gcda': b'gcda'})
        with tempfile.TemporaryDirectory() as tmp:
            build = os.path.join(tmp, 'var', 'tmp', 'w', 'build-coverage')
            os.makedirs(os.path.join(build, 'fs', 'quota'))
            open(os.path.join(build, 'fs', 'quota', 'dquot.gcno'), 'w').close()
            # debugfs mirrors the build directory's absolute path
            got = {build.lstrip('/') + '/fs/quota/dquot.gcda': b'gcda'}
            self.assertEqual(coverage.place(got, build), 1)
            with open(os.path.join(build, 'fs', 'quota', 'dquot.gcda'), 'rb') as f:
                self.assertEqual(f.read(), b'gcda')

    def test_no_gcov_data_is_an_error(self):
        with self.assertRaisesRegex(Exception, 'no gcov data'):
            coverage.gcda_from_console(['[ 1.0] ok 1 quota_dquot'])

    def test_a_tracefile_becomes_lines_and_branches_hit(self):
        with tempfile.NamedTemporaryFile('w', suffix='.info') as f:
            f.write('SF:/t/fs/a.c\nDA:3,1\nDA:4,0\nDA:4,2\nBRDA:3,0,0,1\nBRDA:3,0,1,-\n'
                    'end_of_record\n')
            f.flush()
            info = coverage.parse_info(f.name)
        self.assertEqual(info, {'/t/fs/a.c': ({3: 1, 4: 2}, {3: [1, 0]})})

    def test_the_coverage_profile_profiles_the_guarded_objects_only(self):
        cfg = Config(workdir='/w', top=TOP, profile='coverage')
        self.assertIn('GCOV_PROFILE_dquot.o=y', cfg.make_options)
        self.assertEqual(Config(workdir='/w', top=TOP).make_options, ())
        self.assertTrue(cfg.init.endswith('harness/coverage-init.sh'))
        self.assertIsNone(Config(workdir='/w', top=TOP).init)


if __name__ == '__main__':
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    print('%d passed, %d failed, %d skipped' % (result.testsRun - failed - skipped, failed,
                                                skipped))
    sys.exit(1 if failed else 0)

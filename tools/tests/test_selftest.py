"""./run.sh selftest: the tree's tests and Kconfig, /init, the console
read once, the verdicts, and bad input."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import Settings
from tcpopt.selftest import catalog, initramfs, runner, tap
from tcpopt.tree import cpio

MAKEFILE = '''TEST_BOTH_AF := bench-lookups
TEST_BOTH_AF += connect
TEST_BOTH_AF += syncookies
TEST_IPV4_PROGS := $(TEST_BOTH_AF:%=%_ipv4)
'''
CONFIG = '''CONFIG_IPV6=y
CONFIG_NET_VRF=y
CONFIG_SYN_COOKIES=y
CONFIG_TRACEPOINTS=y
CONFIG_VETH=m
'''

# A console as /init prints it: kernel lines between, a pass, a skip, a
# failure of the syncookie selftest, the kernel log.
CONSOLE = '''[    1.0] Linux version 7.3.4
tcpopt-selftest: tap
TAP version 13
1..3
# selftests: net/tcp_ao: connect_ipv4
# 1..2
# ok 1 Verified established tcp connection
# ok 2 Verified established tcp connection
# # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
ok 1 selftests: net/tcp_ao: connect_ipv4
# selftests: net/tcp_ao: bench-lookups_ipv4
# 1..0 # SKIP kernel config doesn't have VRF
ok 2 selftests: net/tcp_ao: bench-lookups_ipv4 # SKIP
# selftests: net/tcp_ao: syncookies_ipv4
# ok 1 hmac(sha1), 12-byte MAC: SyncookiesRecv rose
# not ok 2 hmac(sha1), 12-byte MAC: the ends disagree on wscale: client 7, server 0
# # Totals: pass:7 fail:1 xfail:0 xpass:0 skip:0 error:0
not ok 3 selftests: net/tcp_ao: syncookies_ipv4 # exit=1
tcpopt-selftest: kernel log
[    0.000000] Linux version 7.3.4
tcpopt-selftest: done
'''


def tree(tmp: Path, makefile: str = MAKEFILE, config: str = CONFIG,
         tcp_ao: str = '') -> Path:
    folder = tmp / 'tools/testing/selftests/net/tcp_ao'
    folder.mkdir(parents=True)
    (folder / 'Makefile').write_text(makefile)
    (folder / 'config').write_text(config)
    (folder / 'settings').write_text('timeout=120\n')
    (tmp / 'net/ipv4').mkdir(parents=True)
    (tmp / 'net/ipv4/tcp_ao.c').write_text(tcp_ao)
    return tmp


class CatalogTest(unittest.TestCase):
    def test_tests_come_from_the_makefile_in_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(Path(tmp))
            self.assertEqual(catalog.tests(src),
                             ['bench-lookups', 'connect', 'syncookies'])
            self.assertEqual(catalog.choose(src, []),
                             ['bench-lookups', 'connect', 'syncookies'])
            self.assertEqual(catalog.binaries(['connect']),
                             ['connect_ipv4', 'connect_ipv6'])
            self.assertEqual(catalog.timeout(src), 120)

    def test_an_unknown_test_is_a_usage_error_naming_the_choices(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(Path(tmp))
            with self.assertRaisesRegex(UsageError, r"'nosuch'.*connect"):
                catalog.choose(src, ['connect', 'nosuch'])

    def test_a_test_the_series_adds_is_known_before_it_is_applied(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(Path(tmp), MAKEFILE.replace('syncookies', 'rst'))
            with self.assertRaises(UsageError):
                catalog.choose(src, ['syncookies'])
            self.assertEqual(catalog.choose(src, ['syncookies'],
                                            ['syncookies']), ['syncookies'])

    def test_a_tree_without_the_folder_says_since_when(self):
        with tempfile.TemporaryDirectory() as tmp, \
                self.assertRaisesRegex(UsageError, '6.7'):
            catalog.tests(Path(tmp))

    def test_kconfig_is_the_fragment_built_in(self):
        with tempfile.TemporaryDirectory() as tmp:
            options = catalog.kconfig(tree(Path(tmp)))
        self.assertIn('CONFIG_VETH=y', options)
        self.assertNotIn('CONFIG_VETH=m', options)
        self.assertIn('CONFIG_SYN_COOKIES=y', options)
        self.assertIn('CONFIG_IP_MULTIPLE_TABLES=y', options)  # for VRF
        self.assertNotIn('CONFIG_TRACEPOINTS=y', options)
        self.assertNotIn('CONFIG_CRYPTO_CMAC=y', options)

    def test_the_crypto_api_macs_where_tcp_ao_takes_them_from_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            options = catalog.kconfig(tree(Path(tmp),
                                           tcp_ao='tcp_sigpool_start()'))
        self.assertIn('CONFIG_CRYPTO_CMAC=y', options)


class TapTest(unittest.TestCase):
    def test_one_result_a_binary_with_its_counts_and_failures(self):
        boot = tap.read(CONSOLE.splitlines(keepends=True))
        self.assertTrue(boot.done)
        self.assertEqual([(r.binary, r.status) for r in boot.results],
                         [('connect_ipv4', 'pass'),
                          ('bench-lookups_ipv4', 'skip'),
                          ('syncookies_ipv4', 'fail')])
        connect, bench, cookies = boot.results
        self.assertEqual(connect.totals['pass'], 2)
        self.assertEqual(bench.skip_reason,
                         "1..0 # SKIP kernel config doesn't have VRF")
        self.assertEqual(cookies.directive, 'exit=1')
        self.assertEqual(cookies.failures, [
            'not ok 2 hmac(sha1), 12-byte MAC: the ends disagree on wscale: '
            'client 7, server 0'])
        self.assertEqual(boot.splats.sanitizer, [])

    def test_a_boot_that_never_finished_says_so(self):
        lines = CONSOLE.split('tcpopt-selftest: kernel log')[0].splitlines()
        boot = tap.read(lines)
        self.assertFalse(boot.done)
        self.assertIn('/init did not finish', ' '.join(
            runner.common_problems(boot)))

    def test_a_splat_in_the_kernel_log_is_a_problem(self):
        splat = CONSOLE.replace(
            '[    0.000000] Linux version 7.3.4\n',
            '[    1.0] ======================================================'
            '============\n[    1.0] BUG: KASAN: slab-use-after-free in '
            'tcp_ao_x+0x1/0x2\n[    1.0] ======================================'
            '============================\n')
        boot = tap.read(splat.splitlines())
        self.assertEqual(len(boot.splats.sanitizer), 1)
        self.assertIn('splats', ' '.join(runner.common_problems(boot)))


class VerdictTest(unittest.TestCase):
    def boot(self):
        return tap.read(CONSOLE.splitlines())

    def test_the_series_fails_on_any_failed_or_missing_binary(self):
        problems = runner.judge_series(self.boot(), [
            'connect_ipv4', 'bench-lookups_ipv4', 'syncookies_ipv4',
            'rst_ipv4'])
        self.assertEqual(len(problems), 2)
        self.assertIn('syncookies_ipv4: exit=1 (not ok 2 ', problems[0])
        self.assertEqual(problems[1], 'rst_ipv4: no result')

    def test_the_series_passes_with_passes_and_skips(self):
        boot = self.boot()
        del boot.results[2]
        self.assertEqual(runner.judge_series(
            boot, ['connect_ipv4', 'bench-lookups_ipv4']), [])

    def test_without_the_fix_the_syncookie_test_must_fail_naming_it(self):
        boot = self.boot()
        self.assertEqual(runner.judge_unfixed(boot, ['syncookies_ipv4']), [])
        self.assertEqual(runner.judge_unfixed(boot, ['connect_ipv4']),
                         ['connect_ipv4: pass on the tree without the fix'])
        boot.results[2].failures = ['not ok 2 the transfer stalled']
        self.assertEqual(runner.judge_unfixed(boot, ['syncookies_ipv4']),
                         ['syncookies_ipv4: failed without naming a '
                          'disagreement'])


def fake_gen(build: Path, script: str) -> Path:
    """@build with a usr/gen_init_cpio that runs @script."""
    gen = build / 'usr' / 'gen_init_cpio'
    gen.parent.mkdir(parents=True)
    gen.write_text('#!/bin/sh\n' + script)
    gen.chmod(0o755)
    return build


class InitramfsTest(unittest.TestCase):
    def test_init_runs_each_binary_and_prints_kselftest_tap(self):
        script = initramfs.init_script([Path('/b/connect_ipv4'),
                                        Path('/b/rst_ipv6')], 120, 1 << 20)
        self.assertIn('echo "1..2"', script)
        self.assertIn('for t in connect_ipv4 rst_ipv6; do', script)
        self.assertIn('timeout 120 ./$t', script)
        self.assertIn('4) echo "ok $n selftests: net/tcp_ao: $t # SKIP"',
                      script)
        self.assertIn('dmesg -s 1048576', script)
        self.assertTrue(script.rstrip().endswith('reboot -f'))

    def test_the_archive_lists_busybox_init_and_the_binaries(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = fake_gen(Path(tmp), 'cat "$1"\n')
            binary = build / 'connect_ipv4'
            with mock.patch.object(cpio, 'BUSYBOX', Path('/bin/sh')):
                out = initramfs.pack(build, build / 'series.cpio', [binary],
                                     120, 1 << 17)
            listing = out.read_text()
        self.assertIn('file /bin/busybox /bin/sh 0755', listing)
        self.assertIn(f'file /tests/connect_ipv4 {binary} 0755', listing)
        self.assertIn('nod /dev/null 0666 0 0 c 1 3', listing)

    def test_a_failed_pack_leaves_no_archive(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = fake_gen(Path(tmp), 'echo half; echo bad >&2; exit 1\n')
            with mock.patch.object(cpio, 'BUSYBOX', Path('/bin/sh')), \
                    self.assertRaisesRegex(HarnessError, 'bad'):
                initramfs.pack(build, build / 'series.cpio', [], 120, 1)
            self.assertEqual(sorted(p.name for p in build.glob('*.cpio*')),
                             [])


class BadInputTest(unittest.TestCase):
    def test_a_tree_without_tcp_ao_is_a_usage_error(self):
        with self.assertRaisesRegex(UsageError, '6.1 has no TCP-AO'):
            runner.check_tree(Settings(tree='6.1', work_dir=Path('/nowhere')))

    def test_an_export_without_a_selftest_or_a_fix_is_a_usage_error(self):
        settings = Settings(tree='7.3', work_dir=Path('/nowhere'))
        with tempfile.TemporaryDirectory() as tmp:
            net = Path(tmp) / 'net'
            net.mkdir()
            fix = net / '0001-tcp-fix.patch'
            fix.write_text('+++ b/net/ipv4/tcp_output.c\n')
            test = net / '0002-selftests.patch'
            test.write_text('+++ b/tools/testing/selftests/net/tcp_ao/x.c\n')
            self.assertEqual(runner.split_net(settings, [fix, test]),
                             ([fix], [test]))
            with self.assertRaisesRegex(UsageError, 'no TCP-AO selftest'):
                runner.split_net(settings, [fix])
            with self.assertRaisesRegex(UsageError, 'no fix'):
                runner.split_net(settings, [test])


if __name__ == '__main__':
    unittest.main()


class GitAmOnceTest(unittest.TestCase):
    """The selftest step's git am after the plain step's is a no-op, so
    its build finds nothing newer; other patches are applied anew."""

    def test_the_same_mails_leave_the_tree_alone(self):
        import os
        import subprocess
        from tcpopt.series import patchset, plain
        with tempfile.TemporaryDirectory() as tmp:
            repo, mails = Path(tmp) / 'src', Path(tmp) / 'mails'
            env = dict(os.environ, **plain.THROWAWAY.git_env())

            def git(*args):
                subprocess.run(['git', '-C', str(repo), *args], check=True,
                               capture_output=True, env=env)
            repo.mkdir()
            git('init', '-q', '-b', patchset.BASE_BRANCH)
            (repo / 'a.c').write_text('one\n')
            git('add', 'a.c')
            git('commit', '-q', '-m', 'base')
            git('checkout', '-q', '-b', 'work')
            for text in ('two\n', 'three\n'):
                (repo / 'a.c').write_text(text)
                git('commit', '-q', '-am', f'tcp: {text.strip()}')
            git('format-patch', '-q', '-o', str(mails), 'HEAD~2')
            git('checkout', '-q', '--detach', patchset.BASE_BRANCH)
            patches = sorted(mails.glob('*.patch'))
            settings = Settings(tree='7.3', work_dir=Path(tmp))
            with mock.patch.object(patchset, 'ensure_git_base',
                                   return_value=repo):
                plain.git_am(settings, patches)
                self.assertEqual((repo / 'a.c').read_text(), 'three\n')
                before = (repo / 'a.c').stat().st_mtime_ns
                os.utime(repo / 'a.c', ns=(before - 10**9, before - 10**9))
                plain.git_am(settings, patches)
                self.assertEqual((repo / 'a.c').stat().st_mtime_ns,
                                 before - 10**9)
                plain.git_am(settings, patches[:1])
                self.assertEqual((repo / 'a.c').read_text(), 'two\n')


class QemuConfigTest(unittest.TestCase):
    def test_what_kunit_py_appends_goes_to_init(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = cpio.qemu_config(Path(tmp) / 'q.py', Path('/x.cpio'),
                                    runner.COMMAND_LINE)
            text = path.read_text()
        self.assertIn("kernel_command_line='console=ttyS0 kunit_shutdown=none "
                      "kunit.enable=0 --'", text)
        self.assertIn("'-initrd', '/x.cpio'", text)


class StepTest(unittest.TestCase):
    def test_the_test_command_names_what_it_leaves_out(self):
        import contextlib
        import io
        from tcpopt import pipeline
        from tcpopt.run_checks import Tally
        settings = Settings(tree='7.3', work_dir=Path('/nowhere'))
        for tests, said in ((None, True), ([], False), (['rst'], False)):
            with mock.patch.object(pipeline.selftest, 'run',
                                   return_value=[]) as run, \
                    contextlib.redirect_stdout(io.StringIO()) as out:
                pipeline.selftest_step(settings, Tally(), tests)
            self.assertEqual(run.call_args.args[1], tests)
            self.assertEqual('not run: connect-deny' in out.getvalue(), said)

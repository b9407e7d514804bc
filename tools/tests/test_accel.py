"""accel: KVM or TCG, the probe boot and its cache; kunit.py's options."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import (BENCH_SOURCE, BENCH_SUITE, DEFAULT_SUITES,
                                  REPO, Settings)
from tcpopt.log.expected import expected_cases
from tcpopt.tree import accel, kernel

KTAP_END = 'Run /init\nKTAP version 1\n1..0\nreboot: Restarting system\n'


class FakeQemu:
    """Stands in for subprocess.run: records each boot, answers as told."""

    def __init__(self, status: int = 0, output: str = KTAP_END,
                 hang: bool = False) -> None:
        self.status, self.output, self.hang = status, output, hang
        self.calls: List[List[str]] = []

    def __call__(self, cmd: List[str], **kwargs: object
                 ) -> subprocess.CompletedProcess:
        self.calls.append(cmd)
        if self.hang:
            raise subprocess.TimeoutExpired(cmd, 10,
                                            output=self.output.encode())
        return subprocess.CompletedProcess(cmd, self.status, self.output)


class AccelTestCase(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        self.build = self.root / 'build'
        self.device = self.root / 'kvm'            # opens read-write
        self.device.write_text('')
        self.qemu = self.root / 'qemu-system-x86_64'
        self.qemu.write_text('')
        env = mock.patch.dict(os.environ, {'TCPOPT_ACCEL': ''})
        env.start()
        self.addCleanup(env.stop)

    def built(self, config: str = 'CONFIG_KUNIT=y\n') -> None:
        image = self.build / accel.IMAGE
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_text('kernel')
        (self.build / '.config').write_text(config)

    def choose(self, fake: FakeQemu) -> accel.Accel:
        return accel.choose(self.build, runner=fake, device=self.device,
                            qemu=str(self.qemu))


class DeviceAndOverrideTest(AccelTestCase):

    def test_a_missing_device_says_why(self) -> None:
        self.assertEqual(accel.device_problem(self.root / 'none'),
                         f'{self.root / "none"}: No such file or directory')

    def test_a_device_that_opens_read_write_is_fine(self) -> None:
        self.assertIsNone(accel.device_problem(self.device))

    def test_override_wins_without_a_probe(self) -> None:
        fake = FakeQemu()
        self.built()
        with mock.patch.dict(os.environ, {'TCPOPT_ACCEL': 'tcg'}):
            chosen = self.choose(fake)
        self.assertEqual(chosen.line(), 'QEMU: tcg (TCPOPT_ACCEL=tcg)')
        self.assertEqual(fake.calls, [])

    def test_forcing_kvm_without_the_device_is_an_error(self) -> None:
        with mock.patch.dict(os.environ, {'TCPOPT_ACCEL': 'kvm'}), \
                self.assertRaises(HarnessError) as caught:
            accel.choose(self.build, device=self.root / 'none')
        self.assertIn('TCPOPT_ACCEL=kvm, but', str(caught.exception))

    def test_an_unknown_override_is_an_error(self) -> None:
        with mock.patch.dict(os.environ, {'TCPOPT_ACCEL': 'hvf'}), \
                self.assertRaises(HarnessError) as caught:
            accel.forced()
        self.assertEqual(str(caught.exception),
                         "TCPOPT_ACCEL='hvf': give kvm or tcg")

    def test_no_device_means_tcg(self) -> None:
        self.built()
        chosen = accel.choose(self.build, runner=FakeQemu(),
                              device=self.root / 'none', qemu=str(self.qemu))
        self.assertEqual(chosen.name, 'tcg')
        self.assertIn('No such file', chosen.line())


class ProbeTest(AccelTestCase):

    def test_first_build_boots_under_tcg_without_a_probe(self) -> None:
        fake = FakeQemu()
        chosen = self.choose(fake)
        self.assertEqual(chosen.line(),
                         'QEMU: tcg (no kernel built yet to probe KVM with)')
        self.assertEqual(fake.calls, [])

    def test_a_clean_probe_boot_means_kvm(self) -> None:
        self.built()
        fake = FakeQemu()
        chosen = self.choose(fake)
        self.assertEqual(chosen.name, 'kvm')
        self.assertRegex(chosen.line(),
                         r'^QEMU: kvm \(probe boot ok in \d+\.\d s\)$')
        cmd = fake.calls[0]
        self.assertEqual(cmd[cmd.index('-accel') + 1], 'kvm')
        self.assertEqual(cmd[cmd.index('-kernel') + 1],
                         str(self.build / accel.IMAGE))
        self.assertIn('-no-reboot', cmd)

    def test_the_verdict_is_cached_and_a_warm_run_pays_nothing(self) -> None:
        self.built()
        self.choose(FakeQemu())
        again = FakeQemu()
        chosen = self.choose(again)
        self.assertEqual(again.calls, [])
        self.assertTrue(chosen.cached)
        self.assertTrue(chosen.line().endswith(', cached)'))

    def test_a_relinked_kernel_keeps_the_verdict(self) -> None:
        self.built()
        self.choose(FakeQemu())
        (self.build / accel.IMAGE).write_text('kernel after an edit')
        again = FakeQemu()
        self.choose(again)
        self.assertEqual(again.calls, [])

    def test_a_new_config_probes_again(self) -> None:
        self.built()
        self.choose(FakeQemu())
        self.built('CONFIG_KUNIT=y\nCONFIG_KASAN=y\n')
        again = FakeQemu()
        self.choose(again)
        self.assertEqual(len(again.calls), 1)

    def test_a_kvm_internal_error_falls_back_to_tcg(self) -> None:
        self.built()
        output = ('KVM internal error. Suberror: 1\n'
                  'emulation failure\nRAX=0000000000000000\n')
        chosen = self.choose(FakeQemu(hang=True, output=output))
        self.assertEqual(chosen.name, 'tcg')
        self.assertEqual(chosen.reason,
                         f'{self.device} opens, but the probe boot failed: '
                         'KVM internal error. Suberror: 1')
        record = json.loads((self.build / accel.CACHE).read_text())
        self.assertFalse(record['ok'])

    def test_a_silent_hang_falls_back_to_tcg(self) -> None:
        self.built()
        chosen = self.choose(FakeQemu(hang=True, output=''))
        self.assertTrue(chosen.reason.endswith(
            'probe boot failed: no KTAP header within 10 s'))

    def test_qemu_dying_on_an_assertion(self) -> None:
        probe = accel.judge_probe(
            -6, 'qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n'
            "qemu-system-x86_64: ../kvm.c:3183: kvm_buf_set_msrs: Assertion "
            "`ret == n' failed.\n", 0.1, 10)
        self.assertFalse(probe.ok)
        self.assertEqual(probe.reason, 'probe boot failed: qemu-system-x86_64:'
                         ' error: failed to set MSR 0x10a to 0x69')

    def test_a_panic_is_no_success_even_with_status_0(self) -> None:
        probe = accel.judge_probe(0, 'KTAP version 1\nKernel panic - not '
                                  'syncing: oops\n', 1.0, 10)
        self.assertFalse(probe.ok)
        self.assertIn('the kernel crashed', probe.reason)

    def test_an_exit_before_the_header(self) -> None:
        probe = accel.judge_probe(1, 'Booting the kernel\n', 0.5, 10)
        self.assertEqual(probe.reason, 'probe boot failed: QEMU exited with '
                         'status 1 before the KTAP header')

    def test_no_qemu_installed(self) -> None:
        self.built()
        with mock.patch('tcpopt.tree.accel.shutil.which', return_value=None):
            chosen = accel.choose(self.build, runner=FakeQemu(),
                                  device=self.device)
        self.assertEqual(chosen.reason, 'qemu-system-x86_64 is not installed')


class KunitCommandTest(unittest.TestCase):
    """What kernel.kunit_command hands kunit.py for each action."""

    def setUp(self) -> None:
        self.settings = Settings(tree='6.12', work_dir=Path('/w'))

    def test_run_passes_the_accelerator_and_the_default_suites(self) -> None:
        cmd = kernel.kunit_command(self.settings, 30,
                                   accel=accel.Accel('kvm', 'probe'))
        self.assertIn('--qemu_args=-accel kvm', cmd)
        self.assertIn(DEFAULT_SUITES, cmd)
        self.assertIn('--jobs=' + str(kernel.jobs(self.settings)), cmd)
        # The tree's options, then the upstream layer's suite.
        self.assertEqual(cmd[-4:], ['--kconfig_add=CONFIG_TCP_AO=y',
                                    '--kconfig_add=CONFIG_CRYPTO_HMAC=y',
                                    '--kconfig_add=CONFIG_CRYPTO_SHA1=y',
                                    '--kconfig_add='
                                    'CONFIG_TCP_OUTPUT_KUNIT_TEST=y'])

    def test_without_an_accelerator_qemu_gets_no_extra_arguments(
            self) -> None:
        cmd = kernel.kunit_command(self.settings, 30)
        self.assertFalse([a for a in cmd if a.startswith('--qemu_args')])

    def test_exec_boots_without_building(self) -> None:
        cmd = kernel.kunit_command(self.settings, 30, action='exec',
                                   filter_glob=BENCH_SUITE,
                                   build_dir=Path('/b'))
        self.assertEqual(cmd[2], 'exec')
        self.assertFalse([a for a in cmd if a.startswith('--jobs')])
        self.assertIn('--build_dir=/b', cmd)
        self.assertIn(BENCH_SUITE, cmd)

    def test_build_takes_no_boot_options(self) -> None:
        cmd = kernel.kunit_command(self.settings, 30, action='build',
                                   kunitconfig=Path('/k/.kunitconfig'))
        self.assertIn('--kunitconfig=/k/.kunitconfig', cmd)
        self.assertFalse([a for a in cmd if a.startswith('--timeout')
                          or a.startswith('--kernel_args')])
        self.assertNotIn(DEFAULT_SUITES, cmd)


class DefaultSuitesTest(unittest.TestCase):
    """The default filter keeps every suite but the benchmark."""

    def suites(self) -> List[str]:
        names = set()
        for path in (REPO / 'kunit').glob('*.c'):
            text = path.read_text()
            names.update(re.findall(r'^TCP_OPT_SUITE\((\w+)\);', text, re.M))
            names.update(re.findall(r'\.name = "(tcp_opt_\w+)"', text))
        return sorted(names)

    def test_every_suite_but_the_benchmark_matches(self) -> None:
        suites = self.suites()
        self.assertIn('tcp_opt_syn', suites)
        for suite in suites:
            with self.subTest(suite=suite):
                self.assertEqual(fnmatch.fnmatchcase(suite, DEFAULT_SUITES),
                                 suite != BENCH_SUITE)

    def test_the_benchmark_does_not_match(self) -> None:
        self.assertFalse(fnmatch.fnmatchcase(BENCH_SUITE, DEFAULT_SUITES))

    def test_the_benchmark_cases_are_not_expected_in_a_default_run(
            self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / BENCH_SOURCE).write_text(
                'static struct kunit_case tcp_opt_bench_cases[] = {\n'
                '\tKUNIT_CASE_SLOW(tcp_opt_bench_calls_test),\n\t{}\n};\n')
            (root / 'a_test.c').write_text(
                'static struct kunit_case a_cases[] = {\n'
                '\tKUNIT_CASE(a_test),\n\t{}\n};\n')
            self.assertEqual(expected_cases(root), ['a_test'])


if __name__ == '__main__':
    unittest.main()

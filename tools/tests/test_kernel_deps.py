"""kernel command lines and deps' package checks, with nothing executed."""

from __future__ import annotations

import os
from dataclasses import replace
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from tcpopt.core import deps
from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import TRIM_KCONFIG, Settings
from tcpopt.tree import kernel

WORK = Path('/nonexistent/work')


class KernelCommandTest(unittest.TestCase):

    def setUp(self) -> None:
        self.settings = Settings(tree='6.1', work_dir=WORK)

    def test_kunit_command_flags(self) -> None:
        cmd = kernel.kunit_command(self.settings, timeout=42)
        self.assertEqual(cmd[1:3], ['tools/testing/kunit/kunit.py', 'run'])
        self.assertIn('--arch=x86_64', cmd)
        self.assertIn(f'--build_dir={WORK}/6.1/build', cmd)
        self.assertIn(f'--kunitconfig={self.settings.kunitconfig}', cmd)
        self.assertIn('--timeout=42', cmd)
        # 6.1 adds the trimmed defaults and the upstream layer's suite to
        # .kunitconfig: the benchmark is the bench's.
        trims = [f'--kconfig_add={option}' for option in TRIM_KCONFIG]
        make = cmd.index('--make_options')
        self.assertTrue(cmd[make + 1].startswith('CC='))
        self.assertEqual(cmd[make + 2:], trims +
                         ['--kconfig_add=CONFIG_TCP_OUTPUT_KUNIT_TEST=y'])
        bench = kernel.kunit_command(replace(self.settings, bench=True))
        self.assertEqual(bench[-1],
                         '--kconfig_add=CONFIG_TCP_OPTIONS_KUNIT_BENCH=y')
        self.assertNotIn('--kconfig_add=CONFIG_TCP_OUTPUT_KUNIT_TEST=y',
                         bench)
        self.assertIn(f'--build_dir={WORK}/6.1/build-bench', bench)
        # A bisected revision carries the harness alone: only the trimmed
        # defaults are added.
        harness = kernel.kunit_command(replace(self.settings,
                                               harness_only=True))
        self.assertEqual(harness[harness.index('--make_options') + 2:], trims)

    def test_build_env_keeps_ccache_in_work_dir_and_drops_pythonpath(
            self) -> None:
        with mock.patch.dict(os.environ, {'PYTHONPATH': '/x',
                                          'CCACHE_DIR': ''}):
            env = kernel.build_env(self.settings)
        self.assertNotIn('PYTHONPATH', env)
        self.assertEqual(env['CCACHE_DIR'], str(WORK / 'ccache'))
        self.assertIn('CCACHE_MAXSIZE', env)

    def test_make_command_line(self) -> None:
        done = subprocess.CompletedProcess([], 0, '', '')
        with mock.patch('tcpopt.tree.kernel.subprocess.run',
                        return_value=done) as run:
            kernel.make(self.settings, Path('/src'), Path('/out'),
                        'olddefconfig')
        cmd = run.call_args.args[0]
        self.assertEqual(cmd[:4], ['make', '-s', '-C', '/src'])
        self.assertIn('O=/out', cmd)
        self.assertIn('ARCH=x86_64', cmd)
        self.assertEqual(cmd[-1], 'olddefconfig')


class DepsTest(unittest.TestCase):

    def test_required_packages_start_with_the_source_package(self) -> None:
        packages = deps.required_packages('linux-source-6.1')
        self.assertEqual(packages[0], 'linux-source-6.1')
        self.assertIn('patch', packages)
        self.assertIn('xz-utils', packages)

    def test_nothing_missing_does_nothing(self) -> None:
        with mock.patch('tcpopt.core.deps.missing_packages',
                        return_value=[]), \
                mock.patch('tcpopt.core.deps.subprocess.run') as run:
            deps.ensure_packages(['gcc'])
        run.assert_not_called()

    def test_no_install_names_the_missing_packages(self) -> None:
        with mock.patch('tcpopt.core.deps.missing_packages',
                        return_value=['gcc', 'bc']), \
                mock.patch.dict(os.environ, {'TCPOPT_NO_INSTALL': '1'}), \
                mock.patch('tcpopt.core.deps.subprocess.run') as run:
            with self.assertRaises(HarnessError) as caught:
                deps.ensure_packages(['gcc', 'bc', 'make'])
        run.assert_not_called()
        self.assertIn('gcc bc', str(caught.exception))
        self.assertIn('TCPOPT_NO_INSTALL', str(caught.exception))

    def test_missing_packages_reads_dpkg_status(self) -> None:
        out = ('gcc ii \nbc un \n')
        done = subprocess.CompletedProcess([], 1, out, '')
        with mock.patch('tcpopt.core.deps.shutil.which',
                        return_value='/bin/x'), \
                mock.patch('tcpopt.core.deps.subprocess.run',
                           return_value=done):
            self.assertEqual(deps.missing_packages(['gcc', 'bc', 'make']),
                             ['bc', 'make'])

    def test_missing_dpkg_query_is_a_harness_error(self) -> None:
        with mock.patch('tcpopt.core.deps.shutil.which', return_value=None):
            with self.assertRaises(HarnessError):
                deps.missing_packages(['gcc'])


if __name__ == '__main__':
    unittest.main()


class OneRunnerTest(unittest.TestCase):
    """Every kunit.py starts in kernel.supervise(): its session, timeout
    and accelerator. A module that names kunit.py runs no process of its
    own, and every boot elsewhere goes through run_kunit or supervise."""

    PACKAGE = Path(kernel.__file__).parents[1]

    def test_only_kernel_starts_kunit_py(self) -> None:
        checked = []
        for path in sorted(self.PACKAGE.rglob('*.py')):
            text = path.read_text()
            if path == Path(kernel.__file__) or \
                    'testing/kunit/kunit.py' not in text:
                continue
            checked.append(path.name)
            with self.subTest(module=path.name):
                self.assertNotIn('subprocess.', text)
                self.assertIn('supervise(', text)
        self.assertIn('plain.py', checked)

    def test_plain_kunit_py_goes_through_supervise(self) -> None:
        """On a layered tree (6.1's series) kunit.py takes the upstream
        tests' .kunitconfig; on a series of one layer, net/ipv4's."""
        import tempfile
        from tcpopt.series import plain
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        one_layer = Path(tmp.name)
        (one_layer / 'kernel-patches' / '6.1').mkdir(parents=True)
        for settings, kunitconfig in (
                (Settings(tree='6.1', work_dir=WORK), 'net/ipv4/tests'),
                (Settings(tree='6.1', work_dir=WORK, repo=one_layer),
                 'net/ipv4')):
            with self.subTest(kunitconfig=kunitconfig):
                with mock.patch('tcpopt.series.plain.supervise',
                                return_value=0) as run, \
                        mock.patch('tcpopt.series.plain.choose_accel'), \
                        mock.patch('builtins.open', mock.mock_open()), \
                        mock.patch.object(Path, 'unlink'):
                    status, _ = plain.run_plain_kunit(
                        settings, WORK / 'git' / 'src')
                self.assertEqual(status, 0)
                command = run.call_args.args[1]
                self.assertEqual(command[:3], plain.PLAIN_COMMAND)
                self.assertEqual(command[3], f'--kunitconfig={kunitconfig}')
                self.assertEqual(run.call_args.args[3],
                                 WORK / 'git' / 'build' / 'test.log')

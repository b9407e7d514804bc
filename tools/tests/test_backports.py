"""trixie-backports under a private apt configuration; the TCG wrapper."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import Settings
from tcpopt.tree import backports, kernel
from tcpopt.tree.accel import Accel


class PrivateAptTest(unittest.TestCase):

    def test_everything_apt_touches_is_under_the_work_dir(self) -> None:
        work = Path('/w')
        options = backports.apt_options(work)
        values = [options[i + 1] for i in range(0, len(options), 2)]
        for value in values:
            key, _, path = value.partition('=')
            if key.startswith('Dir::') and key != 'Dir::Etc::sourceparts':
                self.assertTrue(path.startswith('/w/apt/'), value)
        self.assertIn('Dir::Etc::sourceparts=/nonexistent', values)

    def test_sources_list_is_signed_by_debians_keyring(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            backports.write_config(Path(tmp))
            line = (Path(tmp) / 'apt/sources.list').read_text()
        self.assertEqual(line, '[signed-by=/usr/share/keyrings/debian-'
                         'archive-keyring.gpg]'.join(['deb ', ' http://deb.'
                         'debian.org/debian trixie-backports main\n']))

    def test_a_failed_download_names_the_package(self) -> None:
        failed = subprocess.CompletedProcess([], 100, '',
                                             'E: Unable to locate package')
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch('subprocess.run', return_value=failed):
            with self.assertRaisesRegex(HarnessError,
                                        'trixie-backports for linux-source-7.3'):
                backports.fetch(Path(tmp), ['linux-source-7.3'])
            self.assertFalse((Path(tmp) / 'apt/root').exists())

    def test_backported_tree_lives_in_the_work_dir(self) -> None:
        settings = Settings.create('7.3', Path('/w'))
        self.assertEqual(settings.tarball,
                         Path('/w/apt/root/usr/src/linux-source-7.3.tar.xz'))
        self.assertEqual(settings.apt_packages, ['debian-archive-keyring'])
        self.assertEqual(Settings.create('6.1', Path('/w')).tarball,
                         Path('/usr/src/linux-source-6.1.tar.xz'))


class TcgWrapperTest(unittest.TestCase):

    def test_only_accel_tcg_reaches_qemu(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / 'qemu'
            fake.write_text('#!/bin/sh\necho "$@"\n')
            fake.chmod(0o755)
            out = subprocess.run(
                [str(kernel.TCG_WRAPPER_DIR / 'qemu-system-x86_64'),
                 '-m', '1024', '-accel', 'kvm', '-accel', 'hvf', '-accel',
                 'tcg', '-serial', 'stdio', '-accel', 'tcg'],
                env=dict(os.environ, TCPOPT_REAL_QEMU=str(fake)),
                capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.split(), ['-m', '1024', '-accel', 'tcg',
                                       '-serial', 'stdio', '-accel', 'tcg'])

    def test_wrapper_is_first_on_path_only_under_tcg(self) -> None:
        settings = Settings.create('7.3', Path('/w'))
        tcg = kernel.boot_env(settings, Accel('tcg', 'probe failed'))
        kvm = kernel.boot_env(settings, Accel('kvm', 'probe'))
        self.assertTrue(tcg['PATH'].startswith(str(kernel.TCG_WRAPPER_DIR)))
        self.assertNotIn(str(kernel.TCG_WRAPPER_DIR), kvm['PATH'])


if __name__ == '__main__':
    unittest.main()

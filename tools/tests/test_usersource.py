"""--source: the user's own kernel tree, mirrored and patched in the work
dir, never written; the series picked by its version."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tcpopt import cli
from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import Settings, series_tree_for
from tcpopt.tree import identity, usersource

from tests.test_worktree import (KCONFIG, MAKEFILE, P1, P2, TCP_OUTPUT,
                                 make_repo)


def tree_digest(tree: Path) -> str:
    """Every file's path, bytes and mtime under @tree, .git included."""
    digest = hashlib.sha256()
    for path in sorted(tree.rglob('*')):
        if path.is_file():
            digest.update(str(path.relative_to(tree)).encode())
            digest.update(path.read_bytes())
            digest.update(str(path.stat().st_mtime_ns).encode())
    return digest.hexdigest()


class SeriesTreeTest(unittest.TestCase):

    def test_each_version_takes_the_newest_tree_not_newer(self) -> None:
        for version, tree in (('6.1.150', '6.1'), ('6.12.57', '6.12'),
                              ('6.18.2', '6.12'), ('7.3.4', '7.3'),
                              ('7.5.0-rc1', '7.3')):
            with self.subTest(version=version):
                self.assertEqual(series_tree_for(version, Path('/k')), tree)

    def test_older_than_every_series_is_refused_with_its_version(self) -> None:
        with self.assertRaisesRegex(UsageError, r'holds Linux 5\.15\.0: the '
                                    r'series serves 6\.1 and later'):
            series_tree_for('5.15.0', Path('/k'))

    def test_no_version_is_refused(self) -> None:
        with self.assertRaisesRegex(UsageError, 'no kernel version'):
            series_tree_for('?.?.?', Path('/k'))


class SourceUsageTest(unittest.TestCase):

    def run_cli(self, *argv: str) -> int:
        with mock.patch('sys.stderr'):
            return cli.main(list(argv))

    def test_not_a_kernel_tree(self) -> None:
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch('tcpopt.handlers.install') as install:
            self.assertEqual(self.run_cli('--source', tmp), 2)
            install.assert_not_called()

    def test_only_with_run_and_not_with_tree(self) -> None:
        for argv in (('test', '--source', '/k'), ('--source', '/k', '--tree',
                                                  '6.1')):
            with self.subTest(argv=argv), \
                    mock.patch('tcpopt.handlers.install') as install:
                self.assertEqual(self.run_cli(*argv), 2)
                install.assert_not_called()


class FakeUserTreeCase(unittest.TestCase):
    """A fake git checkout of 'Linux 9.9.3', the fake 9.9 series."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        self.user = self.root / 'linux'
        (self.user / 'net/ipv4').mkdir(parents=True)
        (self.user / 'Makefile').write_text(MAKEFILE)
        (self.user / 'net/ipv4/tcp_output.c').write_text(TCP_OUTPUT)
        (self.user / 'net/ipv4/Kconfig').write_text(KCONFIG)
        (self.user / '.gitignore').write_text('*.o\n')
        (self.user / 'built.o').write_text('an object\n')
        git = ['git', '-C', str(self.user), '-c', 'user.name=t',
               '-c', 'user.email=t@t']
        subprocess.run(git + ['init', '-q'], check=True)
        subprocess.run(git + ['add', '.'], check=True)
        subprocess.run(git + ['commit', '-q', '-m', 'base'], check=True)
        repo = make_repo(self.root)
        (repo / 'kernel-patches/9.9/series').write_text(f'{P1}\n{P2}\n')
        with mock.patch.dict('tcpopt.core.settings.TREES',
                             {'9.9': 'linux-source-9.9'}):
            self.settings = Settings(tree='9.9', work_dir=self.root / 'work',
                                     repo=repo, user_source=self.user)

    def sync(self) -> Path:
        with mock.patch('tcpopt.tree.usersource.log'):
            return usersource.ensure_user_source(self.settings)


class UserTreeTest(FakeUserTreeCase):

    def test_series_applied_and_user_tree_untouched(self) -> None:
        before = tree_digest(self.user)
        src = self.sync()
        self.assertIn('return 10;',
                      (src / 'net/ipv4/tcp_output.c').read_text())
        self.assertIn('FAKE_KUNIT_TEST',
                      (src / 'net/ipv4/Kconfig').read_text())
        self.assertFalse((src / 'built.o').exists(), 'git-ignored file copied')
        self.assertEqual(tree_digest(self.user), before)
        self.assertIn(self.settings.tree_dir, src.parents)

    def test_second_sync_touches_nothing(self) -> None:
        src = self.sync()
        stamps = {p: p.stat().st_mtime_ns for p in src.rglob('*')
                  if p.is_file()}
        self.sync()
        self.assertEqual({p: p.stat().st_mtime_ns for p in stamps}, stamps)

    def test_an_edit_reaches_only_its_file(self) -> None:
        src = self.sync()
        kconfig = (src / 'net/ipv4/Kconfig').stat().st_mtime_ns
        edited = self.user / 'net/ipv4/tcp_output.c'
        edited.write_text(TCP_OUTPUT.replace('return 2;', 'return 3;'))
        self.sync()
        text = (src / 'net/ipv4/tcp_output.c').read_text()
        self.assertIn('return 3;', text)
        self.assertIn('return 10;', text)
        self.assertEqual((src / 'net/ipv4/Kconfig').stat().st_mtime_ns,
                         kconfig)

    def test_a_deleted_file_goes(self) -> None:
        (self.user / 'extra.c').write_text('/* untracked, not ignored */\n')
        src = self.sync()
        self.assertTrue((src / 'extra.c').is_file())
        (self.user / 'extra.c').unlink()
        self.sync()
        self.assertFalse((src / 'extra.c').exists())

    def test_a_series_that_does_not_apply_names_the_version(self) -> None:
        (self.user / 'net/ipv4/tcp_output.c').write_text('/* rewritten */\n')
        with self.assertRaisesRegex(Exception, r'Linux 9\.9\.3 from'):
            self.sync()


class CarriedSeriesTest(FakeUserTreeCase):
    """A user tree that already carries the series, or its first patches
    (after `git am`, or once merged upstream), takes only the rest."""

    def apply(self, *names: str) -> None:
        for name in names:
            subprocess.run(['patch', '-p1', '-s', '-d', str(self.user),
                            '-i', str(self.settings.patch_dir / name)],
                           check=True)

    def sync_logged(self) -> tuple[Path, str]:
        with mock.patch('tcpopt.tree.usersource.log') as log:
            src = usersource.ensure_user_source(self.settings)
        return src, '\n'.join(call.args[0] for call in log.call_args_list)

    def carried(self, src: Path) -> int:
        return json.loads((src / identity.STATE).read_text())['carried']

    def assert_series_once(self, src: Path) -> None:
        tcp = (src / 'net/ipv4/tcp_output.c').read_text()
        kconfig = (src / 'net/ipv4/Kconfig').read_text()
        self.assertEqual(tcp.count('return 10;'), 1)
        self.assertEqual(kconfig.count('FAKE_KUNIT_TEST'), 1)

    def test_the_whole_series_carried_applies_none(self) -> None:
        self.apply(P1, P2)
        before = tree_digest(self.user)
        src, said = self.sync_logged()
        self.assert_series_once(src)
        self.assertIn(f'{self.user} already carries all 2 patches of ', said)
        self.assertIn(f'({P1}, {P2}): applying none', said)
        self.assertEqual(self.carried(src), 2)
        self.assertEqual(tree_digest(self.user), before)

    def test_the_first_patch_carried_applies_the_rest(self) -> None:
        self.apply(P1)
        src, said = self.sync_logged()
        self.assert_series_once(src)
        self.assertIn('already carries 1 of 2 patches of ', said)
        self.assertIn(f'({P1}): applying the other 1', said)
        self.assertEqual(self.carried(src), 1)

    def test_a_tree_that_carries_none_says_nothing(self) -> None:
        src, said = self.sync_logged()
        self.assert_series_once(src)
        self.assertNotIn('carries', said)
        self.assertEqual(self.carried(src), 0)

    def test_merging_a_patch_later_is_noticed(self) -> None:
        src = self.sync()
        self.apply(P1)
        self.sync()
        self.assert_series_once(src)
        self.assertEqual(self.carried(src), 1)

    def test_carried_patches_are_found_before_the_mirror(self) -> None:
        self.apply(P1)
        calls = mock.Mock()
        with mock.patch('tcpopt.tree.usersource.carried_prefix',
                        wraps=usersource.carried_prefix) as carried, \
                mock.patch('tcpopt.tree.usersource.mirror_user_tree',
                           wraps=usersource.mirror_user_tree) as mirror:
            calls.attach_mock(carried, 'carried_prefix')
            calls.attach_mock(mirror, 'mirror_user_tree')
            self.sync()
        self.assertEqual([name for name, _, _ in calls.mock_calls],
                         ['carried_prefix', 'mirror_user_tree'])

    def test_a_patch_neither_carried_nor_applying_copies_nothing(self) -> None:
        (self.user / 'net/ipv4/tcp_output.c').write_text('/* rewritten */\n')
        with mock.patch('tcpopt.tree.usersource.mirror_user_tree') as mirror, \
                self.assertRaisesRegex(HarnessError,
                                       f'{P1} does not apply to Linux '
                                       r'9\.9\.3 from .*hunk #1 FAILED'):
            self.sync()
        mirror.assert_not_called()
        self.assertFalse(self.settings.pristine.exists())


if __name__ == '__main__':
    unittest.main()

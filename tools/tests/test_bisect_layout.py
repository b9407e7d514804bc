"""tools/bisect-layout never turns a usage or set-up error into a verdict."""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from unittest import mock

from tcpopt.bisect import step
from tcpopt.core.errors import set_program
from tcpopt.core.settings import REPO
from tests.test_worktree import P1, P2, FakeTreeTestCase

HELPER = REPO / 'tools' / 'bisect-layout'


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
               GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
    return subprocess.run(['git', '-C', str(repo), *args], env=env,
                          capture_output=True, text=True, check=False)


class ExitCodeTest(unittest.TestCase):

    def setUp(self) -> None:
        # main() names the program for every later log line.
        self.addCleanup(set_program, 'run.sh')

    def test_a_wrong_flag_aborts(self) -> None:
        self.assertEqual(step.main(['--tree', '6.13']),
                         step.ABORT)
        self.assertEqual(step.main(['--no-such-flag']),
                         step.ABORT)
        self.assertGreater(step.ABORT, 127)

    def test_help_aborts_and_says_so(self) -> None:
        for flag in ('-h', '--help'):
            with self.subTest(flag=flag):
                shown = io.StringIO()
                with redirect_stdout(shown):
                    status = step.main([flag])
                self.assertEqual(status, step.ABORT)
                self.assertIn('usage: bisect-layout', shown.getvalue())
                self.assertIn('exit 128', shown.getvalue())

    def test_the_helper_exits_128_on_help(self) -> None:
        for flag in ('-h', '--help'):
            with self.subTest(flag=flag):
                result = subprocess.run([str(HELPER), flag],
                                        capture_output=True, text=True,
                                        check=False)
                self.assertEqual(result.returncode, 128)
                self.assertIn('usage: bisect-layout', result.stdout)

    def test_a_bug_aborts(self) -> None:
        with mock.patch.object(step, 'set_up',
                               side_effect=KeyError('oops')), \
                mock.patch('sys.stderr'):
            self.assertEqual(step.main([]), step.ABORT)

    def test_outside_a_git_tree_aborts(self) -> None:
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(Path, 'cwd', return_value=Path(tmp)):
            self.assertEqual(step.main([]), step.ABORT)

    def test_without_qemu_aborts(self) -> None:
        with mock.patch('shutil.which', return_value=None):
            self.assertEqual(step.main([]), step.ABORT)

    def test_layout_suites_decide_by_default(self) -> None:
        settings = mock.Mock(kunit_dir=REPO / 'kunit')
        layout = step.due_cases(settings, 'layout')
        every = step.due_cases(settings, 'all')
        self.assertIn('syn_ts_sack_ws_mss1460_ws7', layout)
        self.assertNotIn('live_ts_sack_ws', layout)
        self.assertIn('live_ts_sack_ws', every)
        self.assertLess(len(layout), len(every))


class GitBisectRunTest(unittest.TestCase):

    def bisect_run(self, *args: str) -> subprocess.CompletedProcess:
        """git bisect run HELPER @args on four fresh commits."""
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            self.assertEqual(git(repo, 'init', '-q').returncode, 0)
            for number in range(4):
                (repo / 'f').write_text(f'{number}\n')
                git(repo, 'add', 'f')
                git(repo, 'commit', '-q', '-m', f'commit {number}')
            git(repo, 'bisect', 'start', 'HEAD', 'HEAD~3')
            result = git(repo, 'bisect', 'run', str(HELPER), *args)
            git(repo, 'bisect', 'reset')
        return result

    def assert_stopped_naming_no_commit(
            self, result: subprocess.CompletedProcess) -> None:
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn('is the first bad commit', result.stdout)
        self.assertIn('bisect run', result.stdout + result.stderr)

    def test_wrong_flag_stops_the_bisection_naming_no_commit(self) -> None:
        self.assert_stopped_naming_no_commit(
            self.bisect_run('--tree', '6.13'))

    def test_help_stops_the_bisection_naming_no_commit(self) -> None:
        self.assert_stopped_naming_no_commit(self.bisect_run('-h'))


class StepTreeTest(FakeTreeTestCase):
    """A step's tree: the user's revision, checked out in a private clone,
    with the test-only patches on top; the user's tree is never touched."""

    def setUp(self) -> None:
        super().setUp()
        self.write_series(P1, f'{P2}  # test-only')
        self.user = self.root / 'linux'
        (self.user / 'net/ipv4').mkdir(parents=True)
        for name in ('Makefile', 'net/ipv4/tcp_output.c', 'net/ipv4/Kconfig'):
            source = self.root / 'tarball-src/linux-source-9.9' / name
            (self.user / name).write_bytes(source.read_bytes())
        git(self.user, 'init', '-q')
        self.commit('base')
        self.first = git(self.user, 'rev-parse', 'HEAD').stdout.strip()
        (self.user / 'net/ipv4/tcp_output.c').write_text(
            (self.user / 'net/ipv4/tcp_output.c').read_text() + '/* 2 */\n')
        self.commit('second')
        self.second = git(self.user, 'rev-parse', 'HEAD').stdout.strip()

    def commit(self, message: str) -> None:
        git(self.user, 'add', '-A')
        git(self.user, 'commit', '-q', '-m', message)

    def src_at(self, revision: str) -> Path:
        return step.step_tree(self.settings, self.user, revision,
                              'key').ensure()

    def test_the_revision_gets_the_test_only_patches_and_kunit(self) -> None:
        src = self.src_at(self.first)
        self.assertIn('FAKE_KUNIT_TEST',
                      (src / 'net/ipv4/Kconfig').read_text())
        self.assertNotIn('return 10;',
                         (src / 'net/ipv4/tcp_output.c').read_text())
        self.assertTrue((src / 'net/ipv4/fake_test.c').is_file())
        self.assertEqual(git(self.user, 'status', '--porcelain').stdout, '')

    def test_the_next_revision_changes_only_what_differs(self) -> None:
        src = self.src_at(self.first)
        makefile = (src / 'Makefile').stat().st_mtime_ns
        src = self.src_at(self.second)
        self.assertIn('/* 2 */', (src / 'net/ipv4/tcp_output.c').read_text())
        self.assertEqual((src / 'Makefile').stat().st_mtime_ns, makefile)

    def test_a_revision_that_carries_the_test_patches_takes_none(self) -> None:
        kconfig = self.user / 'net/ipv4/Kconfig'
        kconfig.write_text(kconfig.read_text() +
                           'config TCP_OPTIONS_KUNIT_TEST\n')
        self.commit('the series is in')
        head = git(self.user, 'rev-parse', 'HEAD').stdout.strip()
        tree = step.step_tree(self.settings, self.user, head, 'key')
        self.assertEqual(tree.patches, [])
        self.assertNotIn('FAKE_KUNIT_TEST',
                         (tree.ensure() / 'net/ipv4/Kconfig').read_text())


if __name__ == '__main__':
    unittest.main()

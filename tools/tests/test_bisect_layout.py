"""tools/bisect-layout never turns a usage or set-up error into a verdict."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tcpopt import bisect_layout
from tcpopt.settings import REPO

HELPER = REPO / 'tools' / 'bisect-layout'


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
               GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
    return subprocess.run(['git', '-C', str(repo), *args], env=env,
                          capture_output=True, text=True, check=False)


class ExitCodeTest(unittest.TestCase):

    def test_a_wrong_flag_aborts(self) -> None:
        self.assertEqual(bisect_layout.main(['--tree', '6.13']),
                         bisect_layout.ABORT)
        self.assertEqual(bisect_layout.main(['--no-such-flag']),
                         bisect_layout.ABORT)
        self.assertGreater(bisect_layout.ABORT, 127)

    def test_outside_a_git_tree_aborts(self) -> None:
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(Path, 'cwd', return_value=Path(tmp)):
            self.assertEqual(bisect_layout.main([]), bisect_layout.ABORT)

    def test_without_qemu_aborts(self) -> None:
        with mock.patch('shutil.which', return_value=None):
            self.assertEqual(bisect_layout.main([]), bisect_layout.ABORT)

    def test_layout_suites_decide_by_default(self) -> None:
        settings = mock.Mock(kunit_dir=REPO / 'kunit')
        layout = bisect_layout.due_cases(settings, 'layout')
        every = bisect_layout.due_cases(settings, 'all')
        self.assertIn('syn_ts_sack_ws_mss1460_ws7', layout)
        self.assertNotIn('live_ts_sack_ws', layout)
        self.assertIn('live_ts_sack_ws', every)
        self.assertLess(len(layout), len(every))


class GitBisectRunTest(unittest.TestCase):

    def test_wrong_flag_stops_the_bisection_naming_no_commit(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            self.assertEqual(git(repo, 'init', '-q').returncode, 0)
            for number in range(4):
                (repo / 'f').write_text(f'{number}\n')
                git(repo, 'add', 'f')
                git(repo, 'commit', '-q', '-m', f'commit {number}')
            git(repo, 'bisect', 'start', 'HEAD', 'HEAD~3')
            result = git(repo, 'bisect', 'run', str(HELPER), '--tree',
                         '6.13')
            git(repo, 'bisect', 'reset')
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn('is the first bad commit', result.stdout)
        self.assertIn('bisect run', result.stdout + result.stderr)


if __name__ == '__main__':
    unittest.main()

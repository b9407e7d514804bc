"""bisectable: every prefix of the series applies and builds (make mocked)."""

from __future__ import annotations

import subprocess
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.series import bisectable
from tests.test_worktree import (BAD, KCONFIG, P1, P2, TCP_OUTPUT,
                                 FakeTreeTestCase)


class BisectableTest(FakeTreeTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.ensure_source()
        self.settings.build_dir.mkdir()
        (self.settings.build_dir / '.config').write_text('CONFIG_INET=y\n')
        self.built: List[str] = []
        self.warn_when = lambda tree: False
        for patcher in (
                mock.patch('tcpopt.series.bisectable.make',
                           side_effect=self.make),
                mock.patch('tcpopt.series.bisectable.set_kconfig')):
            patcher.start()
            self.addCleanup(patcher.stop)

    def make(self, settings, tree: Path, out: Path,
             *targets: str) -> subprocess.CompletedProcess:
        if targets == (bisectable.OBJECT,):
            self.built.append((tree / 'net/ipv4/tcp_output.c').read_text())
            if self.warn_when(tree):
                return subprocess.CompletedProcess(
                    [], 0, '', 'tcp_output.c:3:1: warning: unused thing\n')
        return subprocess.CompletedProcess([], 0, '', '')

    def check(self) -> List[bisectable.StepResult]:
        from contextlib import redirect_stderr
        with redirect_stderr(self.stderr):
            return bisectable.check(self.settings)

    @property
    def scratch(self) -> Path:
        return self.settings.tree_dir / 'steps' / 'src'

    def test_one_passing_result_per_patch(self) -> None:
        results = self.check()
        self.assertEqual([r.patch.name for r in results], [P1, P2])
        self.assertTrue(all(r.ok for r in results))

    def test_each_prefix_is_built(self) -> None:
        self.check()
        self.assertEqual(len(self.built), 2)
        self.assertIn('\treturn 10;', self.built[0])

    def test_scratch_tree_rests_pristine(self) -> None:
        self.check()
        self.assertEqual((self.scratch / 'net/ipv4/tcp_output.c').read_text(),
                         TCP_OUTPUT)
        self.assertEqual((self.scratch / 'net/ipv4/Kconfig').read_text(),
                         KCONFIG)
        tree = bisectable.scratch_tree(self.settings, [])
        self.assertNotIn('trying', tree.recorded())

    def test_scratch_tree_is_reused(self) -> None:
        self.check()
        inode = self.scratch.stat().st_ino
        self.check()
        self.assertEqual(self.scratch.stat().st_ino, inode)

    def test_interrupted_run_makes_a_fresh_copy(self) -> None:
        self.check()
        inode = self.scratch.stat().st_ino
        bisectable.scratch_tree(self.settings, []).mark_changed('stopped')
        self.check()
        self.assertNotEqual(self.scratch.stat().st_ino, inode)

    def test_warning_fails_that_step(self) -> None:
        self.warn_when = lambda tree: 'FAKE_KUNIT_TEST' in \
            (tree / 'net/ipv4/Kconfig').read_text()
        results = self.check()
        self.assertTrue(results[0].ok)
        self.assertFalse(results[1].ok)
        self.assertIn('build warnings:', results[1].problem)
        self.assertIn('unused thing', results[1].problem)

    def test_patch_that_does_not_apply_stops_and_reverses(self) -> None:
        self.write_series(P1, BAD, P2)
        results = self.check()
        self.assertEqual([r.patch.name for r in results], [P1, BAD])
        self.assertTrue(results[0].ok)
        self.assertIn('hunk #1', results[1].problem)
        self.assertEqual((self.scratch / 'net/ipv4/tcp_output.c').read_text(),
                         TCP_OUTPUT)

    def test_missing_kunit_config_is_a_harness_error(self) -> None:
        (self.settings.build_dir / '.config').unlink()
        with self.assertRaises(HarnessError):
            self.check()

    def test_main_src_is_untouched(self) -> None:
        inode = self.settings.source.stat().st_ino
        self.check()
        self.assertEqual(self.settings.source.stat().st_ino, inode)
        self.assertIn('\treturn 10;', self.src_file('net/ipv4/tcp_output.c'))


if __name__ == '__main__':
    unittest.main()

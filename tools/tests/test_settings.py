"""settings: which trees and work dirs a run accepts, and derived paths."""

from __future__ import annotations

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import (DEFAULT_TREE, REPO, TREES, Settings,
                                  default_work_dir)


class CreateTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.outside = Path(tmp.name).resolve()

    def test_repo_is_the_checkout(self) -> None:
        self.assertTrue((REPO / 'tools' / 'tcpopt' / 'core' /
                         'settings.py').is_file())

    def test_refuses_work_dir_inside_the_checkout(self) -> None:
        with self.assertRaises(HarnessError) as caught:
            Settings.create(DEFAULT_TREE, REPO / 'build-cache')
        self.assertIn('inside the checkout', str(caught.exception))
        self.assertIn('TCPOPT_WORK_DIR', str(caught.exception))

    def test_refuses_the_checkout_itself(self) -> None:
        with self.assertRaises(HarnessError):
            Settings.create(DEFAULT_TREE, REPO)

    def test_refuses_unknown_tree(self) -> None:
        with self.assertRaises(HarnessError) as caught:
            Settings.create('9.9', self.outside)
        message = str(caught.exception)
        self.assertIn("'9.9'", message)
        for tree in TREES:
            self.assertIn(tree, message)

    def test_accepts_a_work_dir_outside(self) -> None:
        settings = Settings.create(DEFAULT_TREE, self.outside)
        self.assertEqual(settings.work_dir, self.outside)
        self.assertEqual(settings.repo, REPO)
        self.assertEqual(settings.package, TREES[DEFAULT_TREE])

    def test_default_work_dir_from_environment(self) -> None:
        with mock.patch.dict(os.environ,
                             {'TCPOPT_WORK_DIR': str(self.outside)}):
            self.assertEqual(default_work_dir(), self.outside)
            self.assertEqual(Settings.create().work_dir, self.outside)

    def test_default_work_dir_inside_checkout_is_refused(self) -> None:
        with mock.patch.dict(os.environ,
                             {'TCPOPT_WORK_DIR': str(REPO / 'w')}):
            with self.assertRaises(HarnessError):
                Settings.create()

    def test_default_work_dir_is_a_cache_dir(self) -> None:
        env = {'XDG_CACHE_HOME': str(self.outside), 'TCPOPT_WORK_DIR': ''}
        with mock.patch.dict(os.environ, env):
            self.assertEqual(default_work_dir(),
                             self.outside / 'tcpopt-kunit')

    # The work dir is resolved before the check: '..' cannot sneak in.
    def test_refuses_work_dir_that_reaches_the_checkout_via_dotdot(
            self) -> None:
        sneaky = REPO.parent / '..' / REPO.parent.name / REPO.name / 'w'
        self.assertEqual(sneaky.resolve(), REPO / 'w')
        with self.assertRaises(HarnessError):
            Settings.create(DEFAULT_TREE, sneaky)


class PathsTest(unittest.TestCase):

    def setUp(self) -> None:
        self.work = Path('/nonexistent/work')
        self.settings = Settings(tree='6.1', work_dir=self.work)

    def test_tree_layout(self) -> None:
        s = self.settings
        self.assertEqual(s.tree_dir, self.work / '6.1')
        self.assertEqual(s.pristine, self.work / '6.1/pristine')
        self.assertEqual(s.source, self.work / '6.1/src')
        self.assertEqual(s.build_dir, self.work / '6.1/build')
        self.assertEqual(s.bloat_dir, self.work / '6.1/bloat')
        self.assertEqual(s.lock_file, self.work / '6.1/.lock')

    def test_repo_paths(self) -> None:
        s = self.settings
        self.assertEqual(s.patch_dir, REPO / 'kernel-patches/6.1')
        self.assertEqual(s.kunit_dir, REPO / 'kunit')
        self.assertEqual(s.kunitconfig, REPO / '.kunitconfig')

    def test_kunit_dir_default_and_the_bench_copy(self) -> None:
        with mock.patch.dict(os.environ, {'TCPOPT_KUNIT_DIR': ''}):
            self.assertEqual(self.settings.kunit_dir, REPO / 'kunit')
        with mock.patch.dict(os.environ, {'TCPOPT_KUNIT_DIR': '/w/kunit'}):
            self.assertEqual(self.settings.kunit_dir, Path('/w/kunit'))

    def test_tarball_default_and_override(self) -> None:
        with mock.patch.dict(os.environ, {'TCPOPT_TARBALL': ''}):
            self.assertEqual(self.settings.tarball,
                             Path('/usr/src/linux-source-6.1.tar.xz'))
        with mock.patch.dict(os.environ, {'TCPOPT_TARBALL': '/tmp/x.tar.xz'}):
            self.assertEqual(self.settings.tarball, Path('/tmp/x.tar.xz'))

    def test_ccache_dir_default_and_override(self) -> None:
        with mock.patch.dict(os.environ, {'CCACHE_DIR': ''}):
            self.assertEqual(self.settings.ccache_dir, self.work / 'ccache')
        with mock.patch.dict(os.environ, {'CCACHE_DIR': '/cc'}):
            self.assertEqual(self.settings.ccache_dir, Path('/cc'))

    def test_settings_are_frozen(self) -> None:
        with self.assertRaises(Exception):
            self.settings.tree = '6.2'     # type: ignore[misc]


if __name__ == '__main__':
    unittest.main()

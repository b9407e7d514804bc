"""settings: which trees and work dirs a run accepts, and derived paths."""

from __future__ import annotations

import os
import tempfile
import unittest
from dataclasses import replace
from pathlib import Path
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import (DEFAULT_KUNIT_TIMEOUT, DEFAULT_TREE, REPO,
                                  TREES, Settings, default_work_dir,
                                  environment_fields)


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


class EnvironmentTest(unittest.TestCase):
    """The environment is read once, by Settings.create(), and handed on
    to the processes that run the harness again by child_env()."""

    ENV = {'TCPOPT_JOBS': '3', 'TCPOPT_KUNIT_TIMEOUT': '60',
           'TCPOPT_KUNIT_DIR': '/w/kunit', 'TCPOPT_TARBALL': '/t/x.tar.xz',
           'CCACHE_DIR': '/cc'}

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.work = Path(tmp.name).resolve()

    def test_create_reads_every_variable(self) -> None:
        with mock.patch.dict(os.environ, self.ENV):
            s = Settings.create(DEFAULT_TREE, self.work)
        self.assertEqual((s.jobs, s.kunit_timeout, s.kunit_dir, s.tarball,
                          s.ccache_dir),
                         (3, 60, Path('/w/kunit'), Path('/t/x.tar.xz'),
                          Path('/cc')))

    def test_unset_or_bad_jobs_is_one_per_cpu(self) -> None:
        for text in ('', '0', 'many'):
            with self.subTest(text=text):
                self.assertIsNone(environment_fields(
                    {'TCPOPT_JOBS': text})['jobs'])

    def test_a_bad_timeout_is_a_setup_error(self) -> None:
        for text in ('soon', '0', '-5'):
            with self.subTest(text=text), self.assertRaises(HarnessError):
                environment_fields({'TCPOPT_KUNIT_TIMEOUT': text})

    def test_a_child_makes_the_same_settings(self) -> None:
        with mock.patch.dict(os.environ, self.ENV):
            parent = Settings.create(DEFAULT_TREE, self.work)
        with mock.patch.dict(os.environ, parent.child_env(), clear=True):
            child = Settings.create(DEFAULT_TREE)
        self.assertEqual(child, parent)

    def test_a_child_does_not_inherit_what_the_settings_left_out(
            self) -> None:
        settings = Settings(tree=DEFAULT_TREE, work_dir=self.work, jobs=2)
        with mock.patch.dict(os.environ, self.ENV):
            env = settings.child_env(TCPOPT_BISECT_COUNT='/c')
        self.assertEqual((env['TCPOPT_JOBS'], env['TCPOPT_KUNIT_TIMEOUT'],
                          env['TCPOPT_WORK_DIR'], env['TCPOPT_BISECT_COUNT']),
                         ('2', str(DEFAULT_KUNIT_TIMEOUT), str(self.work),
                          '/c'))
        for name in ('TCPOPT_KUNIT_DIR', 'TCPOPT_TARBALL', 'CCACHE_DIR'):
            self.assertNotIn(name, env)


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

    def test_defaults_without_overrides(self) -> None:
        s = self.settings
        self.assertEqual(s.kunit_dir, REPO / 'kunit')
        self.assertEqual(s.tarball, Path('/usr/src/linux-source-6.1.tar.xz'))
        self.assertEqual(s.ccache_dir, self.work / 'ccache')
        self.assertEqual(s.test_log, self.work / '6.1/build/test.log')
        self.assertEqual((s.jobs, s.kunit_timeout),
                         (None, DEFAULT_KUNIT_TIMEOUT))

    def test_overrides(self) -> None:
        s = replace(self.settings, kunit_override=Path('/w/kunit'),
                    tarball_override=Path('/tmp/x.tar.xz'),
                    ccache_override=Path('/cc'))
        self.assertEqual((s.kunit_dir, s.tarball, s.ccache_dir),
                         (Path('/w/kunit'), Path('/tmp/x.tar.xz'),
                          Path('/cc')))

    def test_properties_never_read_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {'TCPOPT_KUNIT_DIR': '/w/kunit',
                                          'TCPOPT_TARBALL': '/tmp/x.tar.xz',
                                          'CCACHE_DIR': '/cc'}):
            self.assertEqual(self.settings.kunit_dir, REPO / 'kunit')
            self.assertEqual(self.settings.ccache_dir, self.work / 'ccache')

    def test_settings_are_frozen(self) -> None:
        with self.assertRaises(Exception):
            self.settings.tree = '6.2'     # type: ignore[misc]


if __name__ == '__main__':
    unittest.main()

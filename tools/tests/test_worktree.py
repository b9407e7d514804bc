"""worktree, scratch, patching, overlay: a fake kernel tree in a temp dir.

Each test builds a tiny 'linux-source-9.9' tarball and a repository layout
with kernel-patches/9.9/ and kunit/, then points Settings at them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import redirect_stderr
from dataclasses import replace
from pathlib import Path
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.core import fs
from tcpopt.core.settings import OVERLAY_DIR, Settings
from tcpopt.series import seriesfile
from tcpopt.tree import identity, overlay, patching, scratch, worktree

MAKEFILE = ('# SPDX-License-Identifier: GPL-2.0\n'
            'VERSION = 9\n'
            'PATCHLEVEL = 9\n'
            'SUBLEVEL = 3\n'
            'EXTRAVERSION =\n'
            'NAME = Fake Kernel\n')

TCP_OUTPUT = ('/* tcp_output.c, abridged */\n'
              'static int alpha(void)\n'
              '{\n'
              '\treturn 1;\n'
              '}\n'
              '\n'
              'static int beta(void)\n'
              '{\n'
              '\treturn 2;\n'
              '}\n')

KCONFIG = ('config INET\n'
           '\tbool "TCP/IP networking"\n')

PATCH_1 = '''\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
Subject: [PATCH 1/2] tcp: alpha returns 10

Signed-off-by: A Tester <tester@example.org>
---
diff --git a/net/ipv4/tcp_output.c b/net/ipv4/tcp_output.c
--- a/net/ipv4/tcp_output.c
+++ b/net/ipv4/tcp_output.c
@@ -1,5 +1,5 @@
 /* tcp_output.c, abridged */
 static int alpha(void)
 {
-\treturn 1;
+\treturn 10;
 }
'''

PATCH_2 = '''\
Subject: [PATCH 2/2] tcp: add a Kconfig symbol

Signed-off-by: A Tester <tester@example.org>
---
diff --git a/net/ipv4/Kconfig b/net/ipv4/Kconfig
--- a/net/ipv4/Kconfig
+++ b/net/ipv4/Kconfig
@@ -1,2 +1,5 @@
 config INET
 \tbool "TCP/IP networking"
+
+config FAKE_KUNIT_TEST
+\ttristate "fake"
'''

# Context that is not in tcp_output.c: hunk #1 cannot apply.
BAD_PATCH = '''\
Subject: [PATCH 3/3] tcp: beta returns 20

Signed-off-by: A Tester <tester@example.org>
---
--- a/net/ipv4/tcp_output.c
+++ b/net/ipv4/tcp_output.c
@@ -7,4 +7,4 @@
 static int gamma(void)
 {
-\treturn 3;
+\treturn 30;
 }
'''

P1 = '0001-tcp-alpha.patch'
P2 = '0002-tcp-kconfig.patch'
BAD = '0003-tcp-bad.patch'


def make_tarball(root: Path, name: str = 'linux-source-9.9') -> Path:
    tree = root / 'tarball-src' / name
    (tree / 'net/ipv4').mkdir(parents=True)
    (tree / 'Makefile').write_text(MAKEFILE)
    (tree / 'net/ipv4/tcp_output.c').write_text(TCP_OUTPUT)
    (tree / 'net/ipv4/Kconfig').write_text(KCONFIG)
    tarball = root / f'{name}.tar.xz'
    subprocess.run(['tar', '-cJf', str(tarball), '-C',
                    str(tree.parent), name], check=True)
    return tarball


def make_repo(root: Path) -> Path:
    repo = root / 'repo'
    patches = repo / 'kernel-patches' / '9.9'
    patches.mkdir(parents=True)
    (patches / P1).write_text(PATCH_1)
    (patches / P2).write_text(PATCH_2)
    (patches / BAD).write_text(BAD_PATCH)
    (patches / 'series').write_text(f'# the series\n{P1}\n\n{P2}  # kconfig\n')
    kunit = repo / 'kunit'
    kunit.mkdir()
    (kunit / 'fake_test.c').write_text('/* a KUnit suite */\n')
    (kunit / 'README').write_text('not copied\n')
    return repo


class FakeTreeTestCase(unittest.TestCase):
    """A fake tarball, repo and work dir, with Settings pointing at them."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        self.tarball = make_tarball(self.root)
        self.repo = make_repo(self.root)
        self.settings = Settings(tree='9.9', work_dir=self.root / 'work',
                                 repo=self.repo,
                                 tarball_override=self.tarball)
        patcher = mock.patch.dict('tcpopt.core.settings.TREES',
                                  {'9.9': 'linux-source-9.9'})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.stderr = io.StringIO()

    @property
    def patch_dir(self) -> Path:
        return self.settings.patch_dir

    def write_series(self, *names: str) -> None:
        (self.patch_dir / 'series').write_text(''.join(f'{n}\n'
                                                        for n in names))

    def ensure_source(self) -> Path:
        with redirect_stderr(self.stderr):
            return worktree.ensure_source(self.settings)

    def src_file(self, name: str) -> str:
        return (self.settings.source / name).read_text()


class EnsureSourceTest(FakeTreeTestCase):

    def test_settings_point_into_the_fake_layout(self) -> None:
        self.assertEqual(self.settings.package, 'linux-source-9.9')
        self.assertEqual(self.settings.tarball, self.tarball)
        self.assertEqual(self.settings.patch_dir,
                         self.repo / 'kernel-patches/9.9')

    def test_extracts_and_applies_the_series(self) -> None:
        source = self.ensure_source()
        self.assertEqual(source, self.root / 'work/9.9/src')
        self.assertIn('\treturn 10;', self.src_file('net/ipv4/tcp_output.c'))
        self.assertIn('config FAKE_KUNIT_TEST',
                      self.src_file('net/ipv4/Kconfig'))

    def test_pristine_stays_unpatched(self) -> None:
        self.ensure_source()
        pristine = self.settings.pristine
        self.assertEqual((pristine / 'net/ipv4/tcp_output.c').read_text(),
                         TCP_OUTPUT)
        self.assertEqual((pristine / 'net/ipv4/Kconfig').read_text(),
                         KCONFIG)
        self.assertTrue((pristine / identity.STAMP).is_file())

    def test_state_file_records_version_series_and_files(self) -> None:
        self.ensure_source()
        state = json.loads(self.src_file(identity.STATE))
        self.assertEqual(state['version'], '9.9.3')
        self.assertEqual([name for name, _ in state['series']], [P1, P2])
        self.assertEqual(state['series'][0][1],
                         fs.sha256(self.patch_dir / P1))
        self.assertEqual(state['files'],
                         ['net/ipv4/Kconfig', 'net/ipv4/tcp_output.c'])
        self.assertEqual(state['base'],
                         identity.tarball_identity(self.tarball))

    def test_no_staging_dirs_are_left(self) -> None:
        self.ensure_source()
        leftovers = sorted(p.name for p in self.settings.tree_dir.iterdir())
        self.assertEqual(leftovers, ['pristine', 'src'])

    def test_second_call_is_a_no_op(self) -> None:
        self.ensure_source()
        src_inode = self.settings.source.stat().st_ino
        pristine_inode = self.settings.pristine.stat().st_ino
        stamp_mtime = (self.settings.pristine / identity.STAMP) \
            .stat().st_mtime_ns
        self.stderr = io.StringIO()
        with mock.patch('tcpopt.tree.worktree.subprocess.run',
                        side_effect=AssertionError('ran a command')):
            self.ensure_source()
        self.assertEqual(self.settings.source.stat().st_ino, src_inode)
        self.assertEqual(self.settings.pristine.stat().st_ino,
                         pristine_inode)
        self.assertEqual((self.settings.pristine / identity.STAMP)
                         .stat().st_mtime_ns, stamp_mtime)
        self.assertEqual(self.stderr.getvalue(), '')

    def test_changed_patch_rebuilds_src(self) -> None:
        self.ensure_source()
        old_inode = self.settings.source.stat().st_ino
        pristine_inode = self.settings.pristine.stat().st_ino
        p1 = self.patch_dir / P1
        p1.write_text(p1.read_text().replace('return 10;', 'return 11;'))
        self.ensure_source()
        self.assertNotEqual(self.settings.source.stat().st_ino, old_inode)
        self.assertEqual(self.settings.pristine.stat().st_ino,
                         pristine_inode)
        text = self.src_file('net/ipv4/tcp_output.c')
        self.assertIn('\treturn 11;', text)
        self.assertNotIn('\treturn 10;', text)

    def test_patch_removed_from_series_is_undone(self) -> None:
        self.ensure_source()
        old_inode = self.settings.source.stat().st_ino
        self.write_series(P1)
        self.ensure_source()
        self.assertNotEqual(self.settings.source.stat().st_ino, old_inode)
        self.assertEqual(self.src_file('net/ipv4/Kconfig'), KCONFIG)
        self.assertIn('\treturn 10;', self.src_file('net/ipv4/tcp_output.c'))
        state = json.loads(self.src_file(identity.STATE))
        self.assertEqual([name for name, _ in state['series']], [P1])

    def test_files_an_earlier_series_changed_are_touched(self) -> None:
        self.ensure_source()
        pristine_kconfig = self.settings.pristine / 'net/ipv4/Kconfig'
        self.write_series(P1)
        self.ensure_source()
        src_kconfig = self.settings.source / 'net/ipv4/Kconfig'
        self.assertGreater(src_kconfig.stat().st_mtime_ns,
                           pristine_kconfig.stat().st_mtime_ns)

    def test_extra_patches_are_applied_after_the_series(self) -> None:
        extra = self.root / 'extra' / 'dir' / '0001-beta.patch'
        extra.parent.mkdir(parents=True)
        extra.write_text(BAD_PATCH.replace('gamma', 'beta')
                         .replace('return 3;', 'return 2;'))
        with redirect_stderr(self.stderr):
            worktree.ensure_source(self.settings, [extra])
        self.assertIn('\treturn 30;', self.src_file('net/ipv4/tcp_output.c'))

    def test_new_tarball_re_extracts_and_drops_build_dirs(self) -> None:
        self.ensure_source()
        self.settings.build_dir.mkdir()
        self.settings.bloat_dir.mkdir()
        stat = self.tarball.stat()
        os.utime(self.tarball, ns=(stat.st_atime_ns,
                                   stat.st_mtime_ns + 10**9))
        self.ensure_source()
        self.assertIn('extracting', self.stderr.getvalue())
        self.assertFalse(self.settings.build_dir.exists())
        self.assertFalse(self.settings.bloat_dir.exists())
        self.assertIn('\treturn 10;', self.src_file('net/ipv4/tcp_output.c'))


class PatchFailureTest(FakeTreeTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.ensure_source()
        self.good_inode = self.settings.source.stat().st_ino
        self.write_series(P1, P2, BAD)
        with self.assertRaises(HarnessError) as caught:
            self.ensure_source()
        self.message = str(caught.exception)

    def test_message_is_one_line(self) -> None:
        self.assertNotIn('\n', self.message)

    def test_message_names_patch_file_and_hunk(self) -> None:
        self.assertIn(BAD, self.message)
        self.assertIn('net/ipv4/tcp_output.c', self.message)
        self.assertIn('hunk #1', self.message)

    def test_message_names_package_and_version(self) -> None:
        self.assertIn('linux-source-9.9 9.9.3', self.message)

    def test_previous_good_src_is_intact(self) -> None:
        self.assertEqual(self.settings.source.stat().st_ino, self.good_inode)
        self.assertIn('\treturn 10;', self.src_file('net/ipv4/tcp_output.c'))
        self.assertIn('config FAKE_KUNIT_TEST',
                      self.src_file('net/ipv4/Kconfig'))
        state = json.loads(self.src_file(identity.STATE))
        self.assertEqual([name for name, _ in state['series']], [P1, P2])

    def test_no_staging_dir_is_left(self) -> None:
        self.assertFalse((self.settings.tree_dir / 'src.new').exists())
        self.assertFalse((self.settings.tree_dir / 'src.old').exists())

    def test_fixing_the_series_recovers(self) -> None:
        self.write_series(P1)
        self.ensure_source()
        self.assertEqual(self.src_file('net/ipv4/Kconfig'), KCONFIG)


class FirstRunPatchFailureTest(FakeTreeTestCase):

    def test_failure_on_first_run_leaves_no_src(self) -> None:
        self.write_series(BAD)
        with self.assertRaises(HarnessError):
            self.ensure_source()
        self.assertFalse(self.settings.source.exists())
        self.assertFalse((self.settings.tree_dir / 'src.new').exists())
        self.assertTrue(self.settings.pristine.is_dir())


class TarballTest(FakeTreeTestCase):

    def with_tarball(self, tarball: Path) -> None:
        self.settings = replace(self.settings, tarball_override=tarball)

    def test_missing_tarball_names_the_package(self) -> None:
        self.with_tarball(self.root / 'gone.xz')
        with self.assertRaises(HarnessError) as caught:
            self.ensure_source()
        message = str(caught.exception)
        self.assertIn('linux-source-9.9', message)
        self.assertIn('gone.xz', message)
        self.assertNotIn('\n', message)

    def test_tarball_without_a_kernel_tree_is_refused(self) -> None:
        junk = self.root / 'junk'
        junk.mkdir()
        (junk / 'file').write_text('x')
        bad = self.root / 'junk.tar.xz'
        subprocess.run(['tar', '-cJf', str(bad), '-C', str(self.root),
                        'junk'], check=True)
        self.with_tarball(bad)
        with self.assertRaises(HarnessError) as caught:
            self.ensure_source()
        self.assertIn('does not hold one kernel tree', str(caught.exception))
        self.assertFalse((self.settings.tree_dir / 'pristine.new').exists())

    def test_corrupt_tarball_gives_harness_error(self) -> None:
        bad = self.root / 'corrupt.tar.xz'
        bad.write_bytes(b'not xz at all')
        self.with_tarball(bad)
        with self.assertRaises(HarnessError) as caught:
            self.ensure_source()
        self.assertIn('could not extract', str(caught.exception))
        self.assertFalse((self.settings.tree_dir / 'pristine.new').exists())

    def test_ensure_pristine_twice_extracts_once(self) -> None:
        with redirect_stderr(self.stderr):
            worktree.ensure_pristine(self.settings)
            worktree.ensure_pristine(self.settings)
        self.assertEqual(self.stderr.getvalue().count('extracting'), 1)


class OverlayTest(FakeTreeTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.ensure_source()
        self.target = self.settings.source / OVERLAY_DIR

    def test_copies_c_files_into_net_ipv4(self) -> None:
        copied = overlay.overlay_sources(self.settings)
        self.assertEqual(copied, [self.target / 'fake_test.c'])
        self.assertEqual((self.target / 'fake_test.c').read_text(),
                         '/* a KUnit suite */\n')
        self.assertFalse((self.target / 'README').exists())

    def test_second_call_copies_nothing(self) -> None:
        overlay.overlay_sources(self.settings)
        mtime = (self.target / 'fake_test.c').stat().st_mtime_ns
        self.assertEqual(overlay.overlay_sources(self.settings), [])
        self.assertEqual((self.target / 'fake_test.c').stat().st_mtime_ns,
                         mtime)

    def test_changed_file_is_copied_again(self) -> None:
        overlay.overlay_sources(self.settings)
        (self.settings.kunit_dir / 'fake_test.c').write_text('/* v2 */\n')
        copied = overlay.overlay_sources(self.settings)
        self.assertEqual(copied, [self.target / 'fake_test.c'])
        self.assertEqual((self.target / 'fake_test.c').read_text(),
                         '/* v2 */\n')

    def test_headers_are_copied_too(self) -> None:
        (self.settings.kunit_dir / 'fake_compat.h').write_text('#pragma once\n')
        copied = overlay.overlay_sources(self.settings)
        self.assertEqual(sorted(p.name for p in copied),
                         ['fake_compat.h', 'fake_test.c'])
        self.assertEqual(list(self.target.glob('*.new')), [])

    def test_prepare_returns_source_with_overlay(self) -> None:
        with redirect_stderr(self.stderr):
            source = worktree.prepare(self.settings)
        self.assertEqual(source, self.settings.source)
        self.assertTrue((source / OVERLAY_DIR / 'fake_test.c').is_file())

    def test_rebuilt_src_gets_the_overlay_again(self) -> None:
        overlay.overlay_sources(self.settings)
        self.write_series(P1)
        self.ensure_source()
        self.assertFalse((self.target / 'fake_test.c').exists())
        self.assertEqual(overlay.overlay_sources(self.settings),
                         [self.target / 'fake_test.c'])


class PreparedTreeTest(unittest.TestCase):
    """A command's steps share one PreparedTree: prepare() runs once."""

    def test_prepared_on_first_use_and_only_then(self) -> None:
        settings = Settings(tree='6.1', work_dir=Path('/nonexistent'))
        inject = [Path('/x/fault.patch')]
        with mock.patch('tcpopt.tree.worktree.prepare',
                        return_value=Path('/src')) as prepare:
            tree = worktree.PreparedTree(settings, inject)
            prepare.assert_not_called()
            self.assertEqual([tree.source(), tree.source()],
                             [Path('/src')] * 2)
        prepare.assert_called_once_with(settings, inject)


class ScratchTreeTest(FakeTreeTestCase):
    """The one scratch-tree type: base, patches, overlay, one marker."""

    def setUp(self) -> None:
        super().setUp()
        with redirect_stderr(self.stderr):
            worktree.ensure_pristine(self.settings)
        self.build = self.settings.tree_dir / 'scratch-build'

    def tree(self, **fields: object) -> scratch.ScratchTree:
        fields.setdefault('patches', [self.patch_dir / P1])
        fields.setdefault('base', self.settings.pristine)
        return scratch.ScratchTree(
            self.settings, self.settings.tree_dir / 'scratch' / 'src',
            builds=[self.build], **fields)

    def ensure(self, tree: scratch.ScratchTree) -> Path:
        with redirect_stderr(self.stderr):
            return tree.ensure()

    def test_copy_has_the_patches_and_one_marker_beside_it(self) -> None:
        src = self.ensure(self.tree())
        self.assertIn('return 10;', (src / 'net/ipv4/tcp_output.c').read_text())
        self.assertEqual(sorted(p.name for p in src.parent.iterdir()),
                         ['src', 'src' + scratch.SCRATCH_SUFFIX])
        self.assertNotIn('trying', self.tree().recorded())

    def test_an_unchanged_tree_is_not_copied_again(self) -> None:
        src = self.ensure(self.tree())
        inode = src.stat().st_ino
        self.build.mkdir()
        self.ensure(self.tree())
        self.assertEqual(src.stat().st_ino, inode)
        self.assertTrue(self.build.is_dir())

    def test_other_patches_renew_src_and_empty_the_builds(self) -> None:
        self.ensure(self.tree())
        self.build.mkdir()
        src = self.ensure(self.tree(patches=[self.patch_dir / P2]))
        self.assertFalse(self.build.exists())
        self.assertIn('return 1;', (src / 'net/ipv4/tcp_output.c').read_text())
        self.assertIn('FAKE_KUNIT_TEST', (src / 'net/ipv4/Kconfig').read_text())

    def test_a_trial_that_ends_leaves_the_tree_reusable(self) -> None:
        tree = self.tree()
        src = self.ensure(tree)
        inode = src.stat().st_ino
        with tree.trying('an edit'):
            self.assertEqual(tree.recorded()['trying'], 'an edit')
        self.ensure(self.tree())
        self.assertEqual(src.stat().st_ino, inode)

    def test_a_stopped_trial_makes_the_next_ensure_copy_afresh(self) -> None:
        tree = self.tree()
        src = self.ensure(tree)
        with self.assertRaises(KeyboardInterrupt):
            with tree.trying('an edit'):
                (src / 'net/ipv4/tcp_output.c').write_text('half done\n')
                raise KeyboardInterrupt
        src = self.ensure(self.tree())
        self.assertIn('return 10;', (src / 'net/ipv4/tcp_output.c').read_text())
        self.assertNotIn('trying', self.tree().recorded())

    def test_a_stopped_trial_with_an_undo_keeps_the_tree(self) -> None:
        tree = self.tree()
        src = self.ensure(tree)
        inode = src.stat().st_ino
        target = src / 'net/ipv4/tcp_output.c'
        original = target.read_text()
        target.write_text('a mutant\n')
        with self.assertRaises(KeyboardInterrupt):
            with tree.trying('a mutant',
                             undo=lambda: target.write_text(original)):
                raise KeyboardInterrupt
        self.assertEqual(target.read_text(), original)
        self.assertNotIn('trying', self.tree().recorded())
        self.assertEqual(self.ensure(self.tree()).stat().st_ino, inode)

    def test_touched_files_are_newer_than_the_base(self) -> None:
        src = self.ensure(self.tree(patches=[], touch=['net/ipv4/Kconfig']))
        base = self.settings.pristine / 'net/ipv4/Kconfig'
        self.assertGreater((src / 'net/ipv4/Kconfig').stat().st_mtime_ns,
                           base.stat().st_mtime_ns)

    def test_optional_patches_apply_only_where_clean(self) -> None:
        src = self.ensure(self.tree(optional=[self.patch_dir / BAD,
                                              self.patch_dir / P2]))
        self.assertIn('FAKE_KUNIT_TEST', (src / 'net/ipv4/Kconfig').read_text())
        self.assertIn('return 10;', (src / 'net/ipv4/tcp_output.c').read_text())

    def test_overlay_copies_kunit_sources_in(self) -> None:
        src = self.ensure(self.tree(overlay=True))
        self.assertTrue((src / OVERLAY_DIR / 'fake_test.c').is_file())

    def test_a_base_without_a_record_is_refused(self) -> None:
        bare = self.root / 'bare'
        bare.mkdir()
        with self.assertRaisesRegex(HarnessError, 'run ./run.sh first'):
            self.ensure(self.tree(base=bare))


class LockTest(FakeTreeTestCase):

    def test_locked_creates_the_lock_file(self) -> None:
        with worktree.locked(self.settings):
            self.assertTrue(self.settings.lock_file.is_file())


class SeriesTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def test_read_series_skips_comments_and_blank_lines(self) -> None:
        for name in ('a.patch', 'b.patch'):
            (self.dir / name).write_text('')
        (self.dir / 'series').write_text('# top\n\na.patch\n'
                                         '  b.patch   # note\n')
        self.assertEqual(seriesfile.read_series(self.dir),
                         [self.dir / 'a.patch', self.dir / 'b.patch'])

    def test_missing_series_file(self) -> None:
        with self.assertRaises(HarnessError) as caught:
            seriesfile.read_series(self.dir)
        self.assertIn('series is missing', str(caught.exception))

    def test_series_naming_a_missing_patch(self) -> None:
        (self.dir / 'series').write_text('gone.patch\n')
        with self.assertRaises(HarnessError) as caught:
            seriesfile.read_series(self.dir)
        self.assertIn('gone.patch', str(caught.exception))

    def test_files_touched_reads_plus_lines(self) -> None:
        patch = self.dir / 'p.patch'
        patch.write_text(PATCH_1 + PATCH_2.replace(
            '+++ b/net/ipv4/Kconfig', '+++ b/net/ipv4/Kconfig\t2024-01-01'))
        self.assertEqual(seriesfile.files_touched(patch),
                         ['net/ipv4/tcp_output.c', 'net/ipv4/Kconfig'])

    def test_real_series_reads_both_layers_in_order(self) -> None:
        from tcpopt.core.settings import REPO
        patches = seriesfile.read_series(REPO / 'kernel-patches/6.1')
        self.assertEqual([(p.parent.name, p.name[:4]) for p in patches],
                         [('upstream', '0001'), ('upstream', '0002'),
                          ('upstream', '0003'), ('harness', '0001'),
                          ('harness', '0002'), ('harness', '0003'),
                          ('harness', '0004')])


class KernelVersionTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def test_fake_makefile(self) -> None:
        (self.dir / 'Makefile').write_text(MAKEFILE)
        self.assertEqual(identity.kernel_version(self.dir), '9.9.3')

    def test_extraversion_is_appended(self) -> None:
        (self.dir / 'Makefile').write_text(
            MAKEFILE.replace('EXTRAVERSION =', 'EXTRAVERSION = -rc2'))
        self.assertEqual(identity.kernel_version(self.dir), '9.9.3-rc2')

    def test_missing_makefile_is_unknown(self) -> None:
        self.assertEqual(identity.kernel_version(self.dir), 'unknown')


class DescribePatchFailureTest(unittest.TestCase):

    def test_checking_file_form(self) -> None:
        output = ('checking file net/ipv4/tcp_output.c\n'
                  'Hunk #1 FAILED at 754.\n'
                  '1 out of 1 hunk FAILED\n')
        self.assertEqual(patching.describe_patch_failure(output),
                         'net/ipv4/tcp_output.c: hunk #1 FAILED at line 754')

    def test_patching_file_form(self) -> None:
        output = ('patching file net/ipv4/Kconfig\n'
                  'patching file net/ipv4/tcp_output.c\n'
                  'Hunk #2 FAILED at 1020.\n'
                  '1 out of 3 hunks FAILED -- saving rejects to file '
                  'net/ipv4/tcp_output.c.rej\n')
        self.assertEqual(patching.describe_patch_failure(output),
                         'net/ipv4/tcp_output.c: hunk #2 FAILED at line 1020')

    def test_several_failures_are_counted(self) -> None:
        output = ('checking file a.c\n'
                  'Hunk #1 FAILED at 3.\n'
                  'Hunk #3 FAILED at 90.\n'
                  'checking file b.c\n'
                  'Hunk #1 FAILED at 7.\n')
        self.assertEqual(patching.describe_patch_failure(output),
                         'a.c: hunk #1 FAILED at line 3 (+2 more)')

    def test_cant_find_file_to_patch(self) -> None:
        output = ("can't find file to patch at input line 3\n"
                  'Perhaps you used the wrong -p or --strip option?\n'
                  'The text leading up to this was:\n'
                  '--------------------------\n'
                  '|--- a/net/ipv4/nope.c\n'
                  '|+++ b/net/ipv4/nope.c\n'
                  '--------------------------\n'
                  'No file to patch.  Skipping patch.\n'
                  '1 out of 1 hunk ignored\n')
        self.assertEqual(patching.describe_patch_failure(output),
                         'net/ipv4/nope.c: not found in the tree')

    # patch(1) prints no 'checking file' line for a missing file: the name
    # comes from the '|+++ b/' line it quotes.
    def test_cant_find_file_after_a_good_file_blames_the_missing_one(
            self) -> None:
        output = ('checking file net/ipv4/tcp_output.c\n'
                  "can't find file to patch at input line 10\n"
                  'Perhaps you used the wrong -p or --strip option?\n'
                  'The text leading up to this was:\n'
                  '--------------------------\n'
                  '|--- a/net/ipv4/nope.c\n'
                  '|+++ b/net/ipv4/nope.c\n'
                  '--------------------------\n'
                  'No file to patch.  Skipping patch.\n'
                  '1 out of 1 hunk ignored\n')
        self.assertNotIn('tcp_output.c',
                         patching.describe_patch_failure(output))

    def test_already_applied(self) -> None:
        output = ('checking file net/ipv4/tcp_output.c\n'
                  'Reversed (or previously applied) patch detected!  '
                  'Skipping patch.\n'
                  '1 out of 1 hunk ignored\n')
        self.assertEqual(patching.describe_patch_failure(output),
                         'net/ipv4/tcp_output.c: already applied')

    def test_unrecognised_output_gives_its_last_line(self) -> None:
        self.assertEqual(patching.describe_patch_failure(
            'patch: **** Only garbage was found in the patch input.\n\n'),
            'patch: **** Only garbage was found in the patch input.')

    def test_empty_output(self) -> None:
        self.assertEqual(patching.describe_patch_failure(''), 'patch failed')

    def test_real_patch_output_for_a_missing_file(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / 'tree').mkdir()
            patch = root / 'p.patch'
            patch.write_text('--- a/nope.c\n+++ b/nope.c\n@@ -1 +1 @@\n'
                             '-x\n+y\n')
            result = subprocess.run(
                ['patch', '-p1', '-N', '-f', '-d', str(root / 'tree'),
                 '-i', str(patch), '--dry-run'],
                capture_output=True, text=True, check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn('not found in the tree',
                      patching.describe_patch_failure(
                          result.stdout + result.stderr))


class DocsTest(unittest.TestCase):

    def test_faults_md_names_every_directory_a_new_tree_removes(self) -> None:
        import re
        from tcpopt.core.settings import REPO
        text = (REPO / 'docs' / 'faults.md').read_text()
        removed = re.search(r'Removed:\s*(.*?)\.\s', text, re.S)
        self.assertIsNotNone(removed)
        named = re.findall(r'`([^`]+)/`', removed.group(1))
        self.assertEqual(named, list(worktree.BUILD_DIRS))



class SeedBuildTest(unittest.TestCase):
    """A scratch tree's build dir starts as a copy of the main one, its
    recorded source paths moved to the scratch tree."""

    def setUp(self) -> None:
        self.root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.root)
        self.src, self.build = self.root / 'src', self.root / 'build'
        self.new_src = self.root / 'mutants' / 'src'
        self.target = self.root / 'mutants' / 'build'
        (self.build / 'arch/x86/boot').mkdir(parents=True)
        (self.build / 'arch/x86/boot/bzImage').write_bytes(b'kernel')
        (self.build / '.config').write_text('CONFIG_KUNIT=y\n')
        (self.build / 'net/ipv4').mkdir(parents=True)
        self.cmd = self.build / 'net/ipv4/.tcp_output.o.cmd'
        self.cmd.write_text(
            f'cmd_net/ipv4/tcp_output.o := gcc -I{self.src}/include -c '
            f'-o net/ipv4/tcp_output.o {self.src}/net/ipv4/tcp_output.c\n'
            f'source_net/ipv4/tcp_output.o := {self.src}/net/ipv4/'
            'tcp_output.c\n'
            f'deps_net/ipv4/tcp_output.o := \\\n  {self.src}/include/x.h \\\n'
            f'\n{self.src}/include/x.h:\n'
            f'# {self.src}-other stays\n')
        os.utime(self.cmd, ns=(10**18, 10**18))
        (self.build / 'include/config').mkdir(parents=True)
        (self.build / 'include/config/auto.conf.cmd').write_text(
            f'ifneq "$(srctree)" "{self.src}"\n'
            'include/config/auto.conf: FORCE\nendif\n')
        (self.build / 'tools/objtool').mkdir(parents=True)
        (self.build / 'tools/objtool/.help.o.cmd').write_text(
            f'cmd_{self.build}/tools/objtool/help.o := gcc -o '
            f'{self.build}/tools/objtool/help.o {self.src}/tools/lib/'
            'subcmd/help.c\n')
        (self.build / 'net/ipv4/tcp_output.o').write_bytes(b'\x7fELF')
        (self.build / 'source').symlink_to(self.src)

    def test_paths_move_and_times_stay(self) -> None:
        self.assertTrue(scratch.seed_build(self.build, self.target,
                                           self.src, self.new_src))
        cmd = self.target / 'net/ipv4/.tcp_output.o.cmd'
        text = cmd.read_text()
        self.assertNotIn(f'{self.src}/', text)
        self.assertIn(f'-I{self.new_src}/include', text)
        self.assertIn(f'source_net/ipv4/tcp_output.o := {self.new_src}/net',
                      text)
        self.assertIn(f'{self.new_src}/include/x.h:', text)
        self.assertIn(f'# {self.src}-other stays', text)
        self.assertEqual(cmd.stat().st_mtime_ns, 10**18)
        self.assertEqual((self.target / 'net/ipv4/tcp_output.o')
                         .stat().st_mtime_ns,
                         (self.build / 'net/ipv4/tcp_output.o')
                         .stat().st_mtime_ns)
        self.assertFalse((self.target / 'source').exists())
        # Kconfig's check of the source tree, and objtool's own build,
        # which names its objects by absolute path.
        self.assertEqual((self.target / 'include/config/auto.conf.cmd')
                         .read_text().splitlines()[0],
                         f'ifneq "$(srctree)" "{self.new_src}"')
        objtool = (self.target / 'tools/objtool/.help.o.cmd').read_text()
        self.assertNotIn(f'{self.build}/', objtool)
        self.assertIn(f'-o {self.target}/tools/objtool/help.o '
                      f'{self.new_src}/tools/lib', objtool)
        # The main build is left as it was.
        self.assertIn(f'-I{self.src}/include', self.cmd.read_text())

    def test_no_finished_kernel_no_seed(self) -> None:
        (self.build / 'arch/x86/boot/bzImage').unlink()
        self.assertFalse(scratch.seed_build(self.build, self.target,
                                            self.src, self.new_src))
        self.assertFalse(self.target.exists())

if __name__ == '__main__':
    unittest.main()


class OneScratchSchemeTest(unittest.TestCase):
    """The modules that build throw-away kernel trees do it through
    ScratchTree: no marker file, copy or swap of their own."""

    USERS = ('mutation/regressions', 'mutation/generated',
             'series/bisectable', 'bisect/demo', 'bisect/step',
             'bench/hotpath', 'series/bloat')
    OWN_SCHEME = ('.tcpopt-', 'copy_tree(', 'replace_dir(', 'copy_into(',
                  "'cp'", 'DIRTY')

    def test_no_scratch_scheme_outside_scratch(self) -> None:
        package = Path(worktree.__file__).parents[1]
        for name in self.USERS:
            text = (package / f'{name}.py').read_text()
            with self.subTest(module=name):
                self.assertIn('ScratchTree', text)
                for token in self.OWN_SCHEME:
                    self.assertNotIn(token, text)

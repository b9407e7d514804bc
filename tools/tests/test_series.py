"""The stored series: parsing, regeneration from kunit/, identity rules."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from dataclasses import replace
from pathlib import Path

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import REPO, Settings
from tcpopt.series import patchset

STORED = '''Subject: [PATCH] tcp: add a test

Why the test.

---
diff --git a/net/ipv4/Makefile b/net/ipv4/Makefile
--- a/net/ipv4/Makefile
+++ b/net/ipv4/Makefile
@@ -1,1 +1,2 @@
 obj-y += a.o
+obj-y += t.o
diff --git a/net/ipv4/t.c b/net/ipv4/t.c
new file mode 100644
--- /dev/null
+++ b/net/ipv4/t.c
@@ -0,0 +1,2 @@
+int a;
+int b;
'''


class SeriesTestCase(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        (self.root / 'kunit').mkdir()
        patches = self.root / 'kernel-patches' / '6.1'
        patches.mkdir(parents=True)
        self.patch = patches / '0001-tcp-add-a-test.patch'
        self.patch.write_text(STORED)
        (patches / 'series').write_text(self.patch.name + '\n')
        (self.root / 'kunit' / 't.c').write_text('int a;\nint b;\n')
        self.settings = replace(Settings.create('6.1', self.root / 'work'),
                                repo=self.root)


class ParseTest(SeriesTestCase):

    def test_subject_message_and_sections(self) -> None:
        patch = patchset.parse_patch(self.patch)
        self.assertEqual(patch.subject, 'tcp: add a test')
        self.assertEqual(patch.message, 'Why the test.\n\n')
        self.assertEqual([s.path for s in patch.sections],
                         ['net/ipv4/Makefile', 'net/ipv4/t.c'])
        self.assertEqual([s.creates for s in patch.sections], [False, True])
        self.assertEqual(patch.render(), STORED)

    def test_identity_lines_are_refused(self) -> None:
        for line in ('From: Someone <a@b.c>\n',
                     'Signed-off-by: Someone <a@b.c>\n'):
            with self.subTest(line=line):
                self.patch.write_text(line + STORED)
                with self.assertRaisesRegex(HarnessError, 'no identity'):
                    patchset.parse_patch(self.patch)

    def test_not_a_stored_patch(self) -> None:
        self.patch.write_text('diff --git a/x b/x\n')
        with self.assertRaisesRegex(HarnessError, 'is not a stored patch'):
            patchset.parse_patch(self.patch)

    def test_new_file_section_is_what_git_writes(self) -> None:
        self.assertEqual(patchset.new_file_section('net/ipv4/x', 'one\n'),
                         'diff --git a/net/ipv4/x b/net/ipv4/x\n'
                         'new file mode 100644\n--- /dev/null\n'
                         '+++ b/net/ipv4/x\n@@ -0,0 +1 @@\n+one\n')


class SyncTest(SeriesTestCase):

    def test_in_sync(self) -> None:
        self.assertEqual(patchset.check(self.settings), [])

    def test_edit_in_kunit_is_caught_then_regenerated(self) -> None:
        (self.root / 'kunit' / 't.c').write_text('int a;\nint c;\n')
        problems = patchset.check(self.settings)
        self.assertEqual(len(problems), 1)
        self.assertIn('net/ipv4/t.c differs from kunit/: run ./run.sh '
                      'series --regen', problems[0])
        self.assertEqual(patchset.regen(self.settings), [self.patch])
        self.assertIn('+int c;\n', self.patch.read_text())
        self.assertIn('+obj-y += t.o\n', self.patch.read_text())
        self.assertEqual(patchset.check(self.settings), [])

    def test_kunit_file_no_patch_adds(self) -> None:
        (self.root / 'kunit' / 'orphan.h').write_text('/* */\n')
        problems = patchset.check(self.settings)
        self.assertEqual(len(problems), 1)
        self.assertIn('no patch of kernel-patches/6.1 adds '
                      'net/ipv4/orphan.h', problems[0])


class RealSeriesTest(unittest.TestCase):

    def test_every_tree_matches_kunit(self) -> None:
        for tree in ('6.1', '6.12'):
            with self.subTest(tree=tree):
                self.assertEqual(patchset.check(Settings.create(tree)), [])

    def test_stored_patches_carry_no_identity(self) -> None:
        from tcpopt.core.settings import TREES
        for tree in TREES:
            # Both layers: upstream/ and harness/ (and a flat series).
            paths = sorted((REPO / 'kernel-patches' / tree).rglob('*.patch'))
            self.assertTrue(paths, tree)
            for path in paths:
                with self.subTest(patch=str(path.relative_to(REPO))):
                    self.assertNotRegex(path.read_text(), patchset.IDENTITY)


class IdentityTest(unittest.TestCase):

    def test_unset_identity_is_a_usage_error(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            env = {'HOME': tmp, 'GIT_CONFIG_NOSYSTEM': '1',
                   'XDG_CONFIG_HOME': tmp}
            subprocess.run(['git', 'init', '-q', tmp], check=True)
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                with self.assertRaisesRegex(UsageError,
                                            'git config user.name is unset'):
                    patchset.user_identity(Path(tmp))
            finally:
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value

    def test_export_refuses_a_directory_with_files(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp) / 'out'
            dest.mkdir()
            (dest / 'old.patch').write_text('')
            with self.assertRaisesRegex(UsageError, 'is not empty'):
                patchset.export(Settings.create('6.1', Path(tmp) / 'work'),
                                dest, patchset.Identity('A', 'a@b.c'))


if __name__ == '__main__':
    unittest.main()

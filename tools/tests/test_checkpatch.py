"""checkpatch: the totals line and the netdev series conventions."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from tcpopt.core.settings import REPO
from tcpopt.core import fs
from tcpopt.series import checkpatch, seriesfile

GOOD_SUBJECT = 'Subject: [PATCH 1/2] tcp: do one thing\n'
SIGNOFF = 'Signed-off-by: A Tester <tester@example.org>\n'


class ParseTotalsTest(unittest.TestCase):

    def test_clean_output_has_no_problems(self) -> None:
        output = ('total: 0 errors, 0 warnings, 0 checks, 41 lines checked\n'
                  '\n/tmp/x.patch has no obvious style problems and is '
                  'ready for submission.\n')
        self.assertEqual(checkpatch.parse_totals(output), [])

    def test_non_zero_counts_become_three_strings(self) -> None:
        output = ('ERROR: something\n'
                  'total: 2 errors, 1 warnings, 3 checks, 120 lines checked\n')
        self.assertEqual(checkpatch.parse_totals(output),
                         ['2 errors', '1 warnings', '3 checks'])

    def test_only_non_zero_counts_are_listed(self) -> None:
        output = 'total: 0 errors, 4 warnings, 0 checks, 9 lines checked\n'
        self.assertEqual(checkpatch.parse_totals(output), ['4 warnings'])

    def test_totals_without_checks_field(self) -> None:
        output = 'total: 1 errors, 0 warnings, 12 lines checked\n'
        self.assertEqual(checkpatch.parse_totals(output), ['1 errors'])

    def test_no_totals_line_is_one_problem(self) -> None:
        problems = checkpatch.parse_totals('Can\'t open file\n')
        self.assertEqual(problems, ['checkpatch printed no totals'])

    def test_empty_output_is_one_problem(self) -> None:
        self.assertEqual(len(checkpatch.parse_totals('')), 1)


class SeriesConventionsTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def conventions(self, text: str) -> list[str]:
        patch = self.dir / 'x.patch'
        patch.write_text(text)
        return checkpatch.series_conventions(patch)

    def test_stored_patches_have_tcp_subjects_and_no_signoff(self) -> None:
        """The export signs them; stored, they carry no identity."""
        patches = seriesfile.read_series(REPO / 'kernel-patches/6.1')
        self.assertEqual(len(patches), 7)
        self.assertEqual(sorted(patches), sorted(
            (REPO / 'kernel-patches/6.1').glob('*/000[1-9]-*.patch')))
        for patch in patches:
            with self.subTest(patch=patch.name):
                self.assertEqual(checkpatch.series_conventions(patch),
                                 ['no Signed-off-by'])

    def test_net_next_export_subject_is_read(self) -> None:
        problems = self.conventions(
            'From: A Tester <tester@example.org>\n'
            'Subject: [PATCH net-next 2/5] tcp: add tests\n\nBody.\n\n'
            'Signed-off-by: A Tester <tester@example.org>\n---\n')
        self.assertEqual(problems, [])

    def test_net_subject_without_signoff_gives_two_problems(self) -> None:
        problems = self.conventions(
            'From: A Tester <tester@example.org>\n'
            'Subject: [PATCH] net: change something\n\nBody.\n---\n')
        self.assertEqual(problems, ['subject does not start with "tcp: "',
                                    'no Signed-off-by'])

    def test_single_patch_subject_without_numbering(self) -> None:
        self.assertEqual(self.conventions(
            'Subject: [PATCH] tcp: one patch\n\n' + SIGNOFF), [])

    def test_numbered_subject(self) -> None:
        self.assertEqual(self.conventions(GOOD_SUBJECT + '\n' + SIGNOFF), [])

    def test_missing_subject_is_a_problem(self) -> None:
        self.assertEqual(self.conventions('Just a diff\n' + SIGNOFF),
                         ['subject does not start with "tcp: "'])

    def test_signoff_needs_an_email(self) -> None:
        self.assertEqual(self.conventions(
            GOOD_SUBJECT + '\nSigned-off-by: Nobody\n'), ['no Signed-off-by'])


class CheckResultTest(unittest.TestCase):

    def test_ok_means_no_problems(self) -> None:
        self.assertTrue(checkpatch.CheckResult(Path('x'), []).ok)
        self.assertFalse(checkpatch.CheckResult(Path('x'), ['1 errors']).ok)

    def test_display_is_relative_to_the_checkout(self) -> None:
        self.assertEqual(fs.display(REPO / 'kunit' / 'a.c'),
                         'kunit/a.c')
        self.assertEqual(fs.display(Path('/elsewhere/a.c')),
                         '/elsewhere/a.c')


if __name__ == '__main__':
    unittest.main()

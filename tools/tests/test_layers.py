"""The two layers of a series: upstream/ (exported) and harness/ (not)."""

from __future__ import annotations

import unittest
from pathlib import Path

from tcpopt.core.errors import UsageError
from tcpopt.core.settings import REPO, Settings
from tcpopt.handlers import check_trailers
from tcpopt.log import expected
from tcpopt.series import checkpatch, patchset
from tcpopt.tree.overlay import kunit_sources

WORK = Path('/nonexistent/work')


class MailSetTest(unittest.TestCase):
    def test_7_3_and_6_12_post_the_fix_to_net_and_the_rest_to_net_next(
            self) -> None:
        for tree in ('7.3', '6.12'):
            with self.subTest(tree=tree):
                net, net_next = patchset.mail_sets(Settings(tree=tree,
                                                            work_dir=WORK))
                self.assertEqual((net.folder, net.prefix),
                                 ('net', 'PATCH net'))
                self.assertEqual([p.name for p in net.patches],
                                 ['0001-tcp-keep-the-timestamp-on-TCP-AO-'
                                  'syncookie-SYN-ACKs.patch',
                                  '0002-selftests-tcp_ao-add-a-test-of-'
                                  'connections-from-syncookies.patch'])
                # Two patches: a cover letter of their own.
                self.assertTrue(net.cover_letter)
                self.assertEqual(net.cover.name, '0000-net-cover-letter.patch')
                self.assertEqual(net_next.prefix, 'PATCH net-next')
                self.assertTrue(net_next.cover_letter)
                self.assertEqual(net_next.cover.parent.name, 'upstream')
                self.assertEqual(len(net_next.patches), 3)

    def test_6_1_has_no_fix_to_post(self) -> None:
        (only,) = patchset.mail_sets(Settings(tree='6.1', work_dir=WORK))
        self.assertEqual((only.folder, only.prefix),
                         ('net-next', 'PATCH net-next'))
        self.assertEqual(len(only.patches), 3)

    def test_no_harness_patch_is_posted(self) -> None:
        for tree in ('6.1', '6.12', '7.3'):
            for mail_set in patchset.mail_sets(Settings(tree=tree,
                                                        work_dir=WORK)):
                for patch in mail_set.patches:
                    self.assertEqual(patch.parent.name, 'upstream', patch)

    def test_a_series_of_one_layer_posts_everything_to_net_next(
            self) -> None:
        """No upstream/ folder (as 6.1's series once was): every patch
        and the cover letter go to net-next, from the export dir itself."""
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            patches = repo / 'kernel-patches' / '6.1'
            patches.mkdir(parents=True)
            names = ['0001-a.patch', '0002-b.patch', '0003-c.patch']
            for name in [patchset.COVER] + names:
                (patches / name).write_text('x\n')
            (patches / 'series').write_text(
                ''.join(f'{name}\n' for name in names))
            settings = Settings(tree='6.1', work_dir=WORK, repo=repo)
            self.assertFalse(settings.layered)
            (only,) = patchset.mail_sets(settings)
            self.assertEqual((only.folder, only.prefix),
                             ('', 'PATCH net-next'))
            self.assertEqual([p.name for p in only.patches], names)
            self.assertEqual(only.cover, patches / patchset.COVER)
            self.assertTrue(only.cover_letter)

    def test_mails_are_net_then_net_next_without_covers(self) -> None:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp)
            for name in ('net/0001-fix.patch', 'net-next/0000-cover-letter.patch',
                         'net-next/0001-a.patch', 'net-next/0002-b.patch'):
                (dest / name).parent.mkdir(exist_ok=True)
                (dest / name).write_text('x')
            self.assertEqual([str(p.relative_to(dest)) for p in
                              patchset.mails(dest)],
                             ['net/0001-fix.patch', 'net-next/0001-a.patch',
                              'net-next/0002-b.patch'])


class SourcesTest(unittest.TestCase):
    def test_upstream_tests_go_to_net_ipv4_tests_on_a_layered_tree(self) -> None:
        kunit = REPO / 'kunit'
        layered = kunit_sources(kunit, upstream=True)
        self.assertIn('net/ipv4/tests/tcp_output_kunit.c', layered)
        self.assertNotIn('net/ipv4/tests/tcp_output_kunit.c',
                         kunit_sources(kunit, upstream=False))
        self.assertIn('net/ipv4/tcp_options_test.c', layered)

    def test_upstream_cases_are_expected_only_with_the_layer(self) -> None:
        kunit = REPO / 'kunit'
        upstream = expected.upstream_cases(kunit)
        self.assertIn('ao_syncookie_keeps_ts', upstream)
        self.assertIn('syn_mss_first', upstream)
        self.assertFalse(set(upstream) & set(expected.expected_cases(kunit)))
        self.assertLessEqual(set(upstream),
                             set(expected.expected_cases(kunit, True)))

    def test_the_upstream_test_file_stays_under_1500_lines(self) -> None:
        source = REPO / 'kunit' / 'tests' / 'tcp_output_kunit.c'
        self.assertLess(len(source.read_text().splitlines()), 1500)

    def test_the_upstream_test_names_no_harness(self) -> None:
        text = (REPO / 'kunit' / 'tests' / 'tcp_output_kunit.c').read_text()
        for word in ('run.sh', '# layout', '# sweep', 'tcp_options_test',
                     'test->status', 'init_net.gen', 'static_branch_inc',
                     'kunit_log'):
            self.assertNotIn(word, text)


class TrailerTest(unittest.TestCase):
    def test_a_trailer_needs_export(self) -> None:
        with self.assertRaisesRegex(UsageError, 'goes with --export'):
            check_trailers(['Cc: a@b.c'], None)

    def test_a_trailer_is_key_colon_value(self) -> None:
        with self.assertRaisesRegex(UsageError, 'want "Key: value"'):
            check_trailers(['no colon'], Path('/tmp/x'))
        check_trailers(['Cc: netdev@vger.kernel.org',
                        'Reviewed-by: A B <a@b.c>'], Path('/tmp/x'))


class KnownExceptionTest(unittest.TestCase):
    def test_only_the_named_patch_may_draw_its_check(self) -> None:
        moved = REPO / 'kernel-patches/7.3/upstream/' \
            '0003-tcp-move-the-option-layout-definitions-to-tcp_options.h.patch'
        split = REPO / 'kernel-patches/7.3/upstream/' \
            '0004-tcp-split-the-option-layout-out-of-the-option-calculators.patch'
        self.assertEqual(checkpatch.known_exception(moved),
                         'PARENTHESIS_ALIGNMENT')
        self.assertEqual(checkpatch.known_exception(split), '')

    def test_net_and_net_next_subjects_parse(self) -> None:
        for prefix in ('PATCH', 'PATCH net', 'PATCH net-next 2/3'):
            match = checkpatch.SUBJECT.search(f'Subject: [{prefix}] tcp: x')
            self.assertEqual(match.group(1), 'tcp: x', prefix)



class BaseIdentityTest(unittest.TestCase):
    def test_src_state_wins_over_a_copied_pristine_stamp(self) -> None:
        import tempfile
        from tcpopt.tree import identity
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            (src / identity.STAMP).write_text('tarball')
            (src / identity.STATE).write_text('tarball + series v2')
            self.assertEqual(identity.base_identity(src),
                             'tarball + series v2')
            (src / identity.STATE).unlink()
            self.assertEqual(identity.base_identity(src), 'tarball')


class HotPathVerdictTest(unittest.TestCase):
    @staticmethod
    def rows(factor: float) -> list:
        from tcpopt.bench import hotpath
        stride = hotpath.ROUND_STRIDE
        pristine = {r * stride: 100.0 + r for r in range(5)}
        patched = {rep: ns * factor for rep, ns in pristine.items()}
        return [hotpath.Comparison('ack_ts', 'established', pristine,
                                   patched)]

    def test_two_percent_passes_and_five_fails(self) -> None:
        from tcpopt.bench import hotpath
        self.assertTrue(hotpath.verdict(self.rows(1.02)).ok)
        slow = hotpath.verdict(self.rows(1.05))
        self.assertFalse(slow.ok)
        self.assertIn('FAIL hot path: median patched/pristine 1.050 over 5',
                      slow.line())

    def test_no_sample_is_no_pass(self) -> None:
        from tcpopt.bench import hotpath
        self.assertFalse(hotpath.verdict([]).ok)


class BuildCheckTest(unittest.TestCase):
    def test_a_warning_the_pristine_tree_has_is_not_new(self) -> None:
        from tcpopt.series import buildcheck
        old = ('src/net/ipv4/tcp_output.c:187:3: warning: result of '
               'comparison of constant -1 is always false')
        moved = old.replace(':187:3:', ':190:3:')
        fresh = 'src/net/ipv4/tcp_output.c:900:1: warning: unused variable'
        result = buildcheck.split_inherited(
            buildcheck.BuildResult('p.patch', 'clang', ['o'], [moved, fresh]),
            [old])
        self.assertEqual(result.diagnostics, [fresh])
        self.assertEqual(result.inherited, [moved])
        self.assertFalse(result.ok)
        alone = buildcheck.split_inherited(
            buildcheck.BuildResult('p.patch', 'clang', ['o'], [moved]), [old])
        self.assertTrue(alone.ok)
        self.assertIn('0 warnings or errors (1 as in the pristine tree)',
                      alone.line())

    def test_a_warning_fails_the_patch(self) -> None:
        import subprocess
        import tempfile
        from unittest import mock
        from tcpopt.series import buildcheck
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            (repo / 'net/ipv4/tests').mkdir(parents=True)
            (repo / 'net/ipv4/tests/x_kunit.c').write_text('')
            warned = subprocess.CompletedProcess(
                [], 0, '', 'net/ipv4/tcp_output.c:12:1: warning: no '
                'previous prototype for tcp_x [-Wmissing-prototypes]\n')
            clean = subprocess.CompletedProcess([], 0, '', '')
            settings = Settings(tree='7.3', work_dir=Path(tmp) / 'work')
            with mock.patch.object(buildcheck, 'run_make',
                                   side_effect=[warned, clean]):
                gcc, clang = buildcheck.build(settings, repo, 'p.patch')
        self.assertEqual(gcc.objects, ['net/ipv4/tcp_output.o',
                                       'net/ipv4/tests/x_kunit.o'])
        self.assertFalse(gcc.ok)
        self.assertTrue(gcc.line().startswith('FAIL W=1 gcc   p.patch'))
        self.assertTrue(clang.ok)


if __name__ == '__main__':
    unittest.main()

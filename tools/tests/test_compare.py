"""compare.py on hand-made runs: which cases differ and why."""

import unittest

from tcpopt.log import compare
from tcpopt.log.ktap import Case, Run

AO_SKIP = 'skip: needs TCP-AO: the 6.7+ tcp_key API and CONFIG_TCP_AO'


def run(*cases: Case) -> Run:
    return Run(cases=list(cases), crash_lines=[], complete=True)


def layout_case(name: str, delta: int, md5: str = '0') -> Case:
    return Case('tcp_opt_established', name, 'pass',
                layouts=['nop,nop,md5,nop,nop,TS val 3 ecr 2'], sizes=[32],
                mss_deltas=[delta], inputs=[{'md5': md5}])


class DifferencesTest(unittest.TestCase):

    def test_identical_rows_do_not_differ(self) -> None:
        a = layout_case('est_md5_ts_0_sacks', 0, md5='1')
        self.assertEqual(compare.differences(run(a), run(a)), [])

    def test_md5_mss_delta_change_has_its_reason(self) -> None:
        old = layout_case('est_md5_ts_0_sacks', 0, md5='1')
        new = layout_case('est_md5_ts_0_sacks', 20, md5='1')
        [(name, [a, b])] = compare.differences(run(old), run(new))
        self.assertEqual(name, 'est_md5_ts_0_sacks')
        self.assertEqual(compare.reason(a, b), compare.REASON_MD5_MSS)

    def test_sweep_group_skipped_for_ao_is_explained(self) -> None:
        old = Case('tcp_opt_sweep', 'syn_ao', 'skip', diagnostics=[AO_SKIP])
        new = Case('tcp_opt_sweep', 'syn_ao', 'pass')
        [(_, [a, b])] = compare.differences(run(old), run(new))
        self.assertEqual(compare.reason(a, b), compare.REASON_AO)
        self.assertEqual(compare._summary(b), ('pass', '—', '—'))

    def test_live_cases_skipped_before_6_7_are_explained(self) -> None:
        for name, skip, want in (
                ('live_ao', 'skip: needs TCP-AO: CONFIG_TCP_AO (6.7+)',
                 compare.REASON_AO),
                ('live_ts_usec',
                 'skip: needs microsecond TCP timestamps (6.7+)',
                 compare.REASON_USEC_TS)):
            old = Case('tcp_opt_live', name, 'skip', diagnostics=[skip])
            new = Case('tcp_opt_live', name, 'pass')
            [(_, [a, b])] = compare.differences(run(old), run(new))
            self.assertEqual(compare.reason(a, b), want)

    def test_allfrag_skipped_since_6_7_is_explained(self) -> None:
        old = Case('tcp_opt_mss', 'mss_ipv6_allfrag', 'pass')
        new = Case('tcp_opt_mss', 'mss_ipv6_allfrag', 'skip', diagnostics=[
            'skip: needs RTAX_FEATURE_ALLFRAG (before 6.7)'])
        [(_, cases)] = compare.differences(run(old), run(new), run(new))
        self.assertEqual(compare.reason(*cases), compare.REASON_ALLFRAG)

    def test_unexplained_difference_asks_for_review(self) -> None:
        old = layout_case('est_ts_0_sacks', 0)
        new = layout_case('est_ts_0_sacks', 12)
        [(_, [a, b])] = compare.differences(run(old), run(new))
        self.assertEqual(compare.reason(a, b), compare.REASON_UNKNOWN)

    def test_case_missing_on_one_tree_is_listed(self) -> None:
        new = layout_case('est_md5_ts_active_open', 20, md5='1')
        [(name, [a, _])] = compare.differences(run(), run(new))
        self.assertIsNone(a)
        self.assertEqual(compare._summary(a), ('absent', '—', '—'))


class ThreeTreesTest(unittest.TestCase):

    def test_accecn_row_skipped_on_two_trees_names_its_commit(self) -> None:
        skip = 'skip: needs AccECN (RFC 9768), 6.18+'
        name = 'accecn_est_md5_sack_no_room'
        old = Case('tcp_opt_accecn', name, 'skip', diagnostics=[skip])
        new = Case('tcp_opt_accecn', name, 'pass', layouts=['md5'],
                   sizes=[40], mss_deltas=[28], inputs=[{'accecn': '1'}])
        [(_, cases)] = compare.differences(run(old), run(old), run(new))
        self.assertEqual(len(cases), 3)
        why = compare.reason(*cases)
        self.assertIn(compare.REASON_ACCECN, why)
        self.assertIn('77a4fdf43c5e', why)

    def test_same_on_all_three_is_not_listed(self) -> None:
        a = layout_case('est_ts_0_sacks', 0)
        self.assertEqual(compare.differences(run(a), run(a), run(a)), [])

    def test_table_has_a_column_group_per_tree(self) -> None:
        old = layout_case('est_md5_ts_0_sacks', 0, md5='1')
        new = layout_case('est_md5_ts_0_sacks', 20, md5='1')
        text = compare.render(['6.1', '6.12', '7.3'],
                              [run(old), run(new), run(new)])
        header = [line for line in text.splitlines()
                  if line.startswith('| case')][0]
        self.assertEqual(header.count('layout'), 3)
        self.assertIn('1 cases differ.', text)


if __name__ == '__main__':
    unittest.main()

"""ktap.parse against real QEMU console logs and small synthetic KTAP."""

from __future__ import annotations

import unittest
from collections import Counter
from pathlib import Path
from typing import List

from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'

SUITE_SIZES = {
    'tcp_opt_syn': 17,
    'tcp_opt_synack': 8,
    'tcp_opt_md5': 5,
    'tcp_opt_fastopen': 15,
    'tcp_opt_established': 18,     # 17 rows + tcp_opt_dsack_sent_once_test
}

SYN_FAILURES = [
    'syn_ts_mss1460',
    'syn_ts_ws_mss1460_ws7',
    'syn_ts_sack_mss1460',
    'syn_ts_sack_ws_mss1460_ws7',
    'syn_ts_mss536',
    'syn_ts_ws_mss536_ws14',
    'syn_ts_sack_mss536',
    'syn_ts_sack_ws_mss536_ws14',
    'regression_2_6_27_mss_before_sackperm_ts',
]


def parse_file(name: str) -> ktap.Run:
    with open(DATA / name, errors='replace') as lines:
        return ktap.parse(lines)


def parse_text(text: str) -> ktap.Run:
    return ktap.parse(text.splitlines(keepends=True))


class PassingLogTest(unittest.TestCase):
    """ktap-pass.log: every one of the 63 cases passes."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.run_ = parse_file('ktap-pass.log')
        cls.cases = cls.run_.by_name()

    def test_reports_63_cases(self) -> None:
        self.assertEqual(len(self.run_.cases), 63)

    def test_case_names_are_unique(self) -> None:
        self.assertEqual(len(self.cases), 63)

    def test_every_case_passes(self) -> None:
        self.assertEqual({c.status for c in self.run_.cases}, {'pass'})
        self.assertTrue(all(c.ok for c in self.run_.cases))

    def test_cases_per_suite(self) -> None:
        self.assertEqual(Counter(c.suite for c in self.run_.cases),
                         SUITE_SIZES)

    def test_suites_appear_in_run_order(self) -> None:
        order: List[str] = []
        for case in self.run_.cases:
            if not order or order[-1] != case.suite:
                order.append(case.suite)
        self.assertEqual(order, list(SUITE_SIZES))

    def test_first_and_last_case(self) -> None:
        self.assertEqual(self.run_.cases[0].name, 'syn_none_mss1460')
        self.assertEqual(self.run_.cases[-1].name,
                         'tcp_opt_dsack_sent_once_test')

    def test_parent_results_are_not_cases(self) -> None:
        for parent in ('tcp_opt_layout_test', 'tcp_opt_syn',
                       'tcp_opt_established'):
            self.assertNotIn(parent, self.cases)

    def test_run_is_complete(self) -> None:
        self.assertTrue(self.run_.complete)

    def test_no_crash_lines(self) -> None:
        self.assertEqual(self.run_.crash_lines, [])

    def test_syn_row_layout_and_size(self) -> None:
        case = self.cases['syn_ts_sack_ws_mss1460_ws7']
        self.assertEqual(case.suite, 'tcp_opt_syn')
        self.assertEqual(case.layouts,
                         ['mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7'])
        self.assertEqual(case.sizes, [20])
        self.assertEqual(case.mss_deltas, [])

    def test_established_row_has_mss_delta(self) -> None:
        case = self.cases['est_ts_3_sacks']
        self.assertEqual(case.mss_deltas, [28])
        self.assertEqual(case.sizes, [40])
        self.assertEqual(
            case.layouts,
            ['nop,nop,TS val 3 ecr 2,nop,nop,'
             'sack 4096:8192 12288:16384 20480:24576'])

    def test_plain_case_collects_two_layouts(self) -> None:
        case = self.cases['tcp_opt_dsack_sent_once_test']
        self.assertEqual(case.suite, 'tcp_opt_established')
        self.assertEqual(case.sizes, [40, 32])
        self.assertEqual(case.mss_deltas, [28, 20])
        self.assertEqual(len(case.layouts), 2)
        self.assertIn('sack 256:512', case.layouts[0])
        self.assertNotIn('256:512', case.layouts[1])

    def test_empty_layout_is_empty_string_of_size_zero(self) -> None:
        case = self.cases['est_nots_0_sacks']
        self.assertEqual(case.layouts, [''])
        self.assertEqual(case.sizes, [0])
        self.assertEqual(case.mss_deltas, [0])

    def test_fastopen_layout_keeps_trailing_space(self) -> None:
        # 'FOEXP ' with an empty cookie: the layout is taken verbatim.
        case = self.cases['fo_exp_syn_len0']
        self.assertEqual(case.layouts,
                         ['mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,FOEXP '])
        self.assertEqual(case.sizes, [24])

    def test_passing_cases_carry_no_diagnostics(self) -> None:
        self.assertEqual([c.name for c in self.run_.cases if c.diagnostics],
                         [])


class MssAfterTsLogTest(unittest.TestCase):
    """ktap-mss-after-ts.log: the writer puts MSS after the timestamps."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.run_ = parse_file('ktap-mss-after-ts.log')
        cls.cases = cls.run_.by_name()

    def failed(self, suite: str) -> List[str]:
        return [c.name for c in self.run_.cases
                if c.suite == suite and c.status == 'fail']

    def test_still_reports_63_cases(self) -> None:
        self.assertEqual(len(self.run_.cases), 63)
        self.assertEqual(Counter(c.suite for c in self.run_.cases),
                         SUITE_SIZES)

    def test_exactly_nine_syn_rows_fail(self) -> None:
        self.assertEqual(self.failed('tcp_opt_syn'), SYN_FAILURES)

    def test_syn_rows_without_timestamps_pass(self) -> None:
        passed = [c.name for c in self.run_.cases
                  if c.suite == 'tcp_opt_syn' and c.status == 'pass']
        self.assertEqual(len(passed), 8)
        self.assertTrue(all('_ts' not in name for name in passed))

    def test_failures_in_the_other_suites(self) -> None:
        self.assertEqual(self.failed('tcp_opt_synack'),
                         ['synack_ts', 'synack_ts_ws', 'synack_ts_sack',
                          'synack_ts_sack_ws'])
        self.assertEqual(self.failed('tcp_opt_md5'),
                         ['md5_synack_no_sack_keeps_ts',
                          'md5_synack_syncookie_keeps_ts'])
        self.assertEqual(len(self.failed('tcp_opt_fastopen')), 11)
        self.assertEqual(self.failed('tcp_opt_established'), [])

    def test_26_failures_in_total(self) -> None:
        self.assertEqual(sum(c.status == 'fail' for c in self.run_.cases), 26)

    def test_run_is_complete_without_crash(self) -> None:
        self.assertTrue(self.run_.complete)
        self.assertEqual(self.run_.crash_lines, [])

    def test_regression_row_layout_is_the_broken_one(self) -> None:
        case = self.cases['regression_2_6_27_mss_before_sackperm_ts']
        self.assertEqual(case.status, 'fail')
        self.assertFalse(case.ok)
        self.assertEqual(case.layouts,
                         ['sackOK,TS val 1 ecr 0,mss 1452,nop,wscale 2'])
        self.assertEqual(case.sizes, [20])

    def test_regression_row_keeps_got_and_want_bytes(self) -> None:
        diags = self.cases['regression_2_6_27_mss_before_sackperm_ts'] \
            .diagnostics
        self.assertIn('got:  04 02 08 0a 00 00 00 01 00 00 00 00 '
                      '02 04 05 ac 01 03 03 02', diags)
        self.assertIn('want: 02 04 05 ac 04 02 08 0a 00 00 00 01 '
                      '00 00 00 00 01 03 03 02', diags)
        got = diags.index(next(d for d in diags if d.startswith('got:')))
        self.assertTrue(diags[got + 1].startswith('want:'))

    def test_regression_row_keeps_unprefixed_failure_lines(self) -> None:
        diags = self.cases['regression_2_6_27_mss_before_sackperm_ts'] \
            .diagnostics
        self.assertIn('case regression_2_6_27_mss_before_sackperm_ts: '
                      'MSS is not the first option', diags)
        self.assertIn('want_text == "mss 1452,sackOK,TS val 1 ecr 0,'
                      'nop,wscale 2"', diags)
        self.assertTrue(any('EXPECTATION FAILED' in d for d in diags))

    def test_diagnostics_do_not_leak_into_the_next_case(self) -> None:
        # syn_none_mss536 follows a failing row and passes.
        case = self.cases['syn_none_mss536']
        self.assertEqual(case.status, 'pass')
        self.assertEqual(case.diagnostics, [])
        self.assertEqual(case.layouts, ['mss 536'])

    def test_failure_diagnostics_belong_to_their_own_case(self) -> None:
        diags = self.cases['syn_ts_mss1460'].diagnostics
        self.assertTrue(any('case syn_ts_mss1460:' in d for d in diags))
        self.assertFalse(any('syn_ts_ws_mss1460_ws7' in d for d in diags))


class CrashedLogTest(unittest.TestCase):
    """ktap-crash-midway.log: the kernel panics in tcp_opt_fastopen."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.run_ = parse_file('ktap-crash-midway.log')

    def test_not_complete(self) -> None:
        self.assertFalse(self.run_.complete)

    def test_crash_lines_start_with_the_panic(self) -> None:
        self.assertTrue(self.run_.crash_lines)
        self.assertEqual(self.run_.crash_lines[0],
                         'Kernel panic - not syncing: Fatal exception')

    def test_keeps_the_cases_reported_before_the_crash(self) -> None:
        self.assertEqual(len(self.run_.cases), 17 + 8 + 5 + 5)
        self.assertEqual(self.run_.cases[-1].name, 'fo_syn_len16')
        self.assertEqual(self.run_.cases[-1].suite, 'tcp_opt_fastopen')


class SyntheticKtapTest(unittest.TestCase):
    """Corner cases the golden logs do not hold."""

    def test_skip_directive_gives_skip_status(self) -> None:
        run = parse_text(
            'KTAP version 1\n'
            '1..1\n'
            '    KTAP version 1\n'
            '    # Subtest: demo\n'
            '    1..2\n'
            '    ok 1 runs\n'
            '    ok 2 skipped_case # SKIP no MD5 support\n'
            'ok 1 demo\n')
        cases = run.by_name()
        self.assertEqual(cases['runs'].status, 'pass')
        self.assertEqual(cases['skipped_case'].status, 'skip')
        self.assertTrue(cases['skipped_case'].ok)
        self.assertEqual(cases['skipped_case'].suite, 'demo')
        self.assertTrue(run.complete)

    def test_lines_before_ktap_header_are_ignored(self) -> None:
        run = parse_text('ok 1 not_a_test\n'
                         'Kernel panic - during boot, before KTAP\n'
                         'KTAP version 1\n'
                         '1..0\n')
        self.assertEqual(run.cases, [])
        self.assertEqual(run.crash_lines, [])

    def test_no_ktap_at_all_is_incomplete(self) -> None:
        run = parse_text('Linux version 6.1\nreboot: Restarting system\n')
        self.assertEqual(run.cases, [])
        self.assertFalse(run.complete)

    def test_truncated_output_without_panic_is_incomplete(self) -> None:
        run = parse_text(
            'KTAP version 1\n'
            '1..2\n'
            '    KTAP version 1\n'
            '    # Subtest: first\n'
            '    1..1\n'
            '    ok 1 a\n'
            'ok 1 first\n')
        self.assertFalse(run.complete)
        self.assertEqual(run.crash_lines, [])
        self.assertEqual([c.name for c in run.cases], ['a'])

    def test_carriage_returns_are_stripped(self) -> None:
        run = parse_text('KTAP version 1\r\n1..1\r\n'
                         '    # Subtest: s\r\n'
                         '    # layout: mss 1460 (4 bytes)\r\n'
                         '    ok 1 c\r\n'
                         'ok 1 s\r\n')
        case = run.by_name()['c']
        self.assertEqual(case.layouts, ['mss 1460'])
        self.assertEqual(case.sizes, [4])
        self.assertTrue(run.complete)

    def test_negative_mss_delta(self) -> None:
        run = parse_text('KTAP version 1\n1..1\n'
                         '    # Subtest: s\n'
                         '    # mss delta: -4\n'
                         '    ok 1 c\n'
                         'ok 1 s\n')
        self.assertEqual(run.by_name()['c'].mss_deltas, [-4])

    def test_dash_before_case_name_is_accepted(self) -> None:
        run = parse_text('KTAP version 1\n1..1\n'
                         '    # Subtest: s\n'
                         '    not ok 1 - dashed\n'
                         'not ok 1 s\n')
        case = run.by_name()['dashed']
        self.assertEqual(case.status, 'fail')

    def test_crash_markers_are_collected(self) -> None:
        run = parse_text('KTAP version 1\n1..1\n'
                         '    # Subtest: s\n'
                         'BUG: kernel NULL pointer dereference\n'
                         'Call Trace:\n')
        self.assertEqual(run.crash_lines,
                         ['BUG: kernel NULL pointer dereference',
                          'Call Trace:'])
        self.assertFalse(run.complete)

    def test_wire_lines_stay_out_of_the_diagnostics(self) -> None:
        # Packet bytes are capture.py's: a failed live case must not
        # print pages of hex as its failure details.
        run = parse_text('KTAP version 1\n1..1\n'
                         '    # Subtest: s\n'
                         '    # c: EXPECTATION FAILED at x.c:1\n'
                         '    # wire: pkt 0 ipv4 len 1 gso 0 t 0 c: <>\n'
                         '    # wire: pkt 0 @0 45\n'
                         'eth0: link up\n'
                         '    not ok 1 c\n'
                         'not ok 1 s\n')
        self.assertEqual(run.by_name()['c'].diagnostics,
                         ['c: EXPECTATION FAILED at x.c:1'])

    def test_live_sample_cases(self) -> None:
        run = parse_file('ktap-live-sample.log')
        self.assertTrue(run.complete)
        live = [case for case in run.cases if case.suite == 'tcp_opt_live']
        self.assertEqual(len(live), 5)
        self.assertTrue(all(case.ok for case in live))
        self.assertFalse(any(text.startswith('wire: ')
                             for case in live for text in case.diagnostics))


if __name__ == '__main__':
    unittest.main()

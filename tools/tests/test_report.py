"""report: verdicts against the declared names, the layout table, summary."""

from __future__ import annotations

import unittest
from pathlib import Path
from typing import List

from tcpopt.log import ktap, report
from tcpopt.log.ktap import Case, Run

DATA = Path(__file__).resolve().parent / 'data'


def parse_file(name: str) -> Run:
    with open(DATA / name, errors='replace') as lines:
        return ktap.parse(lines)


def run_of(*cases: Case, complete: bool = True,
           crash: List[str] | None = None) -> Run:
    return Run(cases=list(cases), crash_lines=list(crash or []),
               complete=complete)


class JudgeTest(unittest.TestCase):

    def test_all_passing_run_is_ok(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'pass'),
                                      Case('s', 'b', 'pass')), ['a', 'b'])
        self.assertTrue(verdict.ok)
        self.assertEqual(verdict.passed, ['a', 'b'])
        self.assertEqual(verdict.missing, [])
        self.assertFalse(verdict.crashed)

    def test_missing_case_is_not_ok(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'pass')), ['a', 'b'])
        self.assertEqual(verdict.missing, ['b'])
        self.assertFalse(verdict.ok)

    def test_skipped_case_is_not_a_failure(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'pass'),
                                      Case('s', 'b', 'skip')), ['a', 'b'])
        self.assertEqual(verdict.skipped, ['b'])
        self.assertEqual(verdict.failed, [])
        self.assertEqual(verdict.missing, [])
        self.assertTrue(verdict.ok)

    def test_only_skips_is_not_ok(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'skip')), ['a'])
        self.assertFalse(verdict.ok)

    def test_failed_case_is_not_ok(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'fail')), ['a'])
        self.assertEqual(verdict.failed, ['a'])
        self.assertFalse(verdict.ok)

    def test_incomplete_run_counts_as_crashed(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'pass'),
                                      complete=False), ['a'])
        self.assertTrue(verdict.crashed)
        self.assertFalse(verdict.ok)

    def test_crash_line_counts_as_crashed_even_if_complete(self) -> None:
        verdict = report.judge(run_of(Case('s', 'a', 'pass'),
                                      crash=['WARNING: CPU: 0 PID: 1']),
                               ['a'])
        self.assertTrue(verdict.crashed)
        self.assertFalse(verdict.ok)

    def test_empty_verdict_is_not_ok(self) -> None:
        self.assertFalse(report.Verdict().ok)


class GoldenLogVerdictTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        # The cases the source declared when the golden logs were recorded.
        cls.expected = [c.name for c in parse_file('ktap-pass.log').cases]

    def test_passing_log_is_ok(self) -> None:
        verdict = report.judge(parse_file('ktap-pass.log'), self.expected)
        self.assertTrue(verdict.ok)
        self.assertEqual(len(verdict.passed), 63)

    def test_broken_writer_log_is_not_ok(self) -> None:
        verdict = report.judge(parse_file('ktap-mss-after-ts.log'),
                               self.expected)
        self.assertFalse(verdict.ok)
        self.assertIn('regression_2_6_27_mss_before_sackperm_ts',
                      verdict.failed)
        self.assertEqual(verdict.missing, [])
        self.assertFalse(verdict.crashed)

    def test_crashed_log_reports_missing_cases(self) -> None:
        verdict = report.judge(parse_file('ktap-crash-midway.log'),
                               self.expected)
        self.assertFalse(verdict.ok)
        self.assertTrue(verdict.crashed)
        self.assertEqual(len(verdict.missing), 28)
        self.assertEqual(verdict.missing[0], 'fo_exp_syn_len0')
        self.assertEqual(verdict.missing[-1], 'tcp_opt_dsack_sent_once_test')
        self.assertEqual(len(verdict.passed), 35)


class LayoutTableTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        cls.table = report.layout_table(parse_file('ktap-pass.log').cases)
        cls.lines = cls.table.splitlines()

    def test_header_then_one_line_per_layout(self) -> None:
        self.assertTrue(self.lines[0].startswith('result'))
        # 62 rows + the plain case's two layouts.
        self.assertEqual(len(self.lines), 1 + 62 + 2)

    def test_contains_syn_layout_in_packetdrill_form(self) -> None:
        line = next(l for l in self.lines
                    if 'syn_ts_sack_ws_mss1460_ws7' in l)
        self.assertTrue(line.endswith(
            '<mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>'))
        self.assertTrue(line.startswith('PASS'))
        self.assertIn(' 20 ', line)

    def test_empty_layout_prints_empty_brackets(self) -> None:
        line = next(l for l in self.lines if 'est_nots_0_sacks' in l)
        self.assertTrue(line.endswith('<>'))

    def test_second_layout_of_a_case_has_blank_name_columns(self) -> None:
        index = next(i for i, l in enumerate(self.lines)
                     if 'tcp_opt_dsack_sent_once_test' in l)
        follow = self.lines[index + 1]
        self.assertTrue(follow.startswith(' '))
        self.assertTrue(follow.endswith(
            '<nop,nop,TS val 3 ecr 2,nop,nop,sack 4096:8192 12288:16384>'))
        self.assertEqual(follow.split()[:2], ['32', '20'])

    def test_case_without_layout_line(self) -> None:
        table = report.layout_table([Case('s', 'quiet', 'fail')])
        row = table.splitlines()[1]
        self.assertIn('(no layout line)', row)
        self.assertTrue(row.startswith('FAIL'))
        self.assertIn(' - ', row)

    def test_columns_line_up(self) -> None:
        layout_col = self.lines[0].index('layout')
        for line in self.lines[1:]:
            self.assertEqual(line[layout_col], '<', line)


class FailureDetailsTest(unittest.TestCase):

    def test_lists_only_failed_cases_with_indented_diagnostics(self) -> None:
        text = report.failure_details([
            Case('s', 'good', 'pass', diagnostics=['ignored']),
            Case('s', 'bad', 'fail', diagnostics=['got: 01', 'want: 02'])])
        self.assertEqual(text, 'FAIL s/bad\n    got: 01\n    want: 02')

    def test_nothing_for_passing_run(self) -> None:
        self.assertEqual(report.failure_details([Case('s', 'a', 'pass')]),
                         '')


class SummaryTest(unittest.TestCase):

    def test_clean_summary_is_one_line(self) -> None:
        run = run_of(Case('s', 'a', 'pass'), Case('s', 'b', 'skip'))
        text = report.summary(report.judge(run, ['a', 'b']), run)
        self.assertEqual(text, '2 KUnit cases: 1 passed, 0 failed, '
                               '1 skipped, 0 missing')

    def test_missing_cases_are_named(self) -> None:
        run = run_of(Case('s', 'a', 'pass'))
        text = report.summary(report.judge(run, ['a', 'b', 'c']), run)
        self.assertIn('2 missing', text)
        self.assertIn('missing cases (never reported): b, c', text)
        self.assertNotIn('...', text)

    def test_more_than_five_missing_are_elided(self) -> None:
        run = run_of(Case('s', 'a', 'pass'))
        names = ['a'] + [f'm{i}' for i in range(7)]
        text = report.summary(report.judge(run, names), run)
        self.assertIn('m0, m1, m2, m3, m4 ...', text)
        self.assertNotIn('m5', text)

    def test_crash_reason_is_the_first_crash_line(self) -> None:
        run = parse_file('ktap-crash-midway.log')
        text = report.summary(report.judge(run, []), run)
        self.assertIn('the kernel did not finish cleanly: Kernel panic - '
                      'not syncing: Fatal exception', text)

    def test_truncation_without_crash_line_is_explained(self) -> None:
        run = run_of(Case('s', 'a', 'pass'), complete=False)
        text = report.summary(report.judge(run, ['a']), run)
        self.assertIn('the KTAP output stopped before the last suite', text)

    def test_golden_crash_summary_counts(self) -> None:
        run = parse_file('ktap-crash-midway.log')
        verdict = report.judge(
            run, [c.name for c in parse_file('ktap-pass.log').cases])
        first = report.summary(verdict, run).splitlines()[0]
        self.assertEqual(first, '35 KUnit cases: 35 passed, 0 failed, '
                                '0 skipped, 28 missing')


if __name__ == '__main__':
    unittest.main()

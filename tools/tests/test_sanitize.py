"""The sanitizer reports ktap.parse finds in a golden console log."""

import unittest
from pathlib import Path
from typing import Iterable, List

from tcpopt.log import ktap
from tcpopt.tree import sanitize

DATA = Path(__file__).parent / 'data' / 'sanitize'


def scan(lines: Iterable[str]) -> List[sanitize.Report]:
    return ktap.parse(lines).sanitizer


class ScanTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        with open(DATA / 'kasan-ubsan.log') as lines:
            cls.reports = scan(lines)

    def test_finds_each_report(self) -> None:
        self.assertEqual([r.title for r in self.reports], [
            'BUG: KASAN: slab-out-of-bounds in tcp_parse_options+0x7a1/0x8f0',
            'UBSAN: array-index-out-of-bounds in net/ipv4/tcp_output.c:612:3'])

    def test_keeps_the_report_body_without_timestamps(self) -> None:
        kasan = self.reports[0]
        self.assertEqual(kasan.lines[0], 'Read of size 1 at addr '
                         'ffff888003a6f1dc by task kunit_try_catch/87')
        self.assertIn(' tcp_parse_test+0x1b2/0x2d0', kasan.lines)

    def test_report_ends_at_its_closing_rule(self) -> None:
        self.assertNotIn('    ok 5 kind_in_last_byte_truncated',
                         self.reports[0].lines)
        self.assertEqual(self.reports[1].lines,
                         ["index 5 is out of range for type 'u32 [4]'"])

    def test_names_the_case_each_report_hit(self) -> None:
        self.assertEqual([r.case for r in self.reports],
                         ['kind_in_last_byte_truncated', 'tcp_opt_parse'])

    def test_clean_log_has_no_report(self) -> None:
        self.assertEqual(scan(['ok 1 valid_syn_20_bytes\n',
                               '    # note: not a BUG: at line start\n']),
                         [])

    def test_lockdep_and_rcu_splats_keep_their_underlined_title(self) -> None:
        reports = scan([
            '[    3.1] ============================================\n',
            '[    3.1] WARNING: possible recursive locking detected\n',
            '[    3.1] 7.3.4 #1 Not tainted\n',
            '[    3.1] --------------------------------------------\n',
            '[    3.1] kunit_try_catch/52 is trying to acquire lock:\n',
            '[    3.2] =============================\n',
            '[    3.2] WARNING: suspicious RCU usage\n',
            '[    3.2] -----------------------------\n',
            '[    3.2] include/net/sock.h:2198 suspicious usage!\n',
            '[    3.3] BUG: sleeping function called from invalid context\n',
            'ok 1 syn_mss_first\n'])
        self.assertEqual([r.kind for r in reports], ['lockdep', 'RCU', 'other'])
        self.assertIn('kunit_try_catch/52 is trying to acquire lock:',
                      reports[0].lines)
        self.assertIn('include/net/sock.h:2198 suspicious usage!',
                      reports[1].lines)
        self.assertEqual(sanitize.counts(reports),
                         '3 (RCU 1, lockdep 1, other 1)')
        self.assertEqual(sanitize.counts([]), '0')

    def test_runaway_report_is_capped(self) -> None:
        lines = ['BUG: KFENCE: out-of-bounds read in f\n'] + \
            [f'line {n}\n' for n in range(100)]
        [report] = scan(lines)
        self.assertEqual(len(report.lines), sanitize.MAX_LINES)

    def test_render_indents_the_body(self) -> None:
        self.assertEqual(sanitize.Report('UBSAN: x', ['a']).render(),
                         'UBSAN: x\n    a')
        self.assertEqual(sanitize.Report('UBSAN: x', [], 'c').render(),
                         'UBSAN: x (case c)')


if __name__ == '__main__':
    unittest.main()

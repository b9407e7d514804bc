"""expected.case_names / expected_cases: the names the KUnit source declares."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from tcpopt.core.settings import REPO
from tcpopt.log import expected, ktap

DATA = Path(__file__).resolve().parent / 'data'
KUNIT_DIR = REPO / 'kunit'

SNIPPET = '''\
struct demo_case {
\tconst char *name;
\tint in;
};

static const struct demo_case demo_cases[] = {
\t{
\t\t/* a comment naming .name = "not_a_case" */
\t\t.name = "first_row",
\t\t.in = 1,
\t},
\t{
\t\t.name = "second_row",
\t\t.in = 2,
\t},
};

KUNIT_ARRAY_PARAM(demo, demo_cases,
\t\t  demo_desc);

static void demo_plain_test(struct kunit *test)
{
\tstatic const struct demo_case one = {
\t\t.name = "inside_a_function",
\t};
}

static struct kunit_case demo_test_cases[] = {
\tKUNIT_CASE_PARAM(demo_layout_test, demo_gen_params),
\tKUNIT_CASE(demo_plain_test),
\t{}
};
'''


class SnippetTest(unittest.TestCase):

    def test_table_rows_then_plain_case_in_order(self) -> None:
        self.assertEqual(expected.case_names(SNIPPET),
                         ['first_row', 'second_row', 'demo_plain_test'])

    def test_slow_cases_count(self) -> None:
        source = SNIPPET.replace('KUNIT_CASE(demo_plain_test)',
                                 'KUNIT_CASE_SLOW(demo_plain_test)')
        self.assertEqual(expected.case_names(source)[-1], 'demo_plain_test')

    def test_unknown_generator_contributes_no_rows(self) -> None:
        source = SNIPPET.replace('demo_gen_params', 'other_gen_params')
        self.assertEqual(expected.case_names(source), ['demo_plain_test'])

    def test_case_order_follows_the_case_array(self) -> None:
        source = SNIPPET.replace(
            '\tKUNIT_CASE_PARAM(demo_layout_test, demo_gen_params),\n'
            '\tKUNIT_CASE(demo_plain_test),\n',
            '\tKUNIT_CASE(demo_plain_test),\n'
            '\tKUNIT_CASE_PARAM(demo_layout_test, demo_gen_params),\n')
        self.assertEqual(expected.case_names(source),
                         ['demo_plain_test', 'first_row', 'second_row'])

    def test_source_without_case_array_declares_nothing(self) -> None:
        self.assertEqual(expected.case_names('int x;\n'), [])

    def test_expected_cases_reads_every_c_file_sorted(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / 'b_test.c').write_text(SNIPPET)
            (root / 'a_test.c').write_text(
                'static struct kunit_case a_cases[] = {\n'
                '\tKUNIT_CASE(a_only_test),\n\t{}\n};\n')
            (root / 'ignored.h').write_text(SNIPPET)
            self.assertEqual(expected.expected_cases(root),
                             ['a_only_test', 'first_row', 'second_row',
                              'demo_plain_test'])


class RealSourceTest(unittest.TestCase):
    """kunit/tcp_options_test.c, the file the KUnit build runs."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.names = expected.case_names(
            (KUNIT_DIR / 'tcp_options_test.c').read_text())

    def test_declares_233_unique_cases(self) -> None:
        # Table rows, plain cases and sweep groups; 14 of the rows TCP-AO,
        # 19 the MSS from a path MTU, 13 MPTCP layouts and 23 MPTCP
        # writer rows, 15 MPTCP sweep groups.
        self.assertEqual(len(self.names), 233)
        self.assertEqual(len(set(self.names)), 233)
        self.assertIn('mss_md5_key_deleted', self.names)

    def test_sweep_groups_are_cases(self) -> None:
        self.assertIn('syn', self.names)
        self.assertIn('synack_cookie_md5_foexp', self.names)
        self.assertIn('established_md5', self.names)

    def test_last_name(self) -> None:
        self.assertEqual(self.names[-1], 'mss_md5_key_deleted')

    def test_names_inside_functions_are_not_rows(self) -> None:
        self.assertNotIn('dsack_first_segment', self.names)
        self.assertNotIn('dsack_next_segment', self.names)

    def test_expected_cases_on_kunit_dir(self) -> None:
        # Files in name order; the benchmark is not in a default run.
        live = expected.case_names(
            (KUNIT_DIR / 'tcp_live_test.c').read_text())
        parser = expected.case_names(
            (KUNIT_DIR / 'tcp_parse_options_test.c').read_text())
        self.assertEqual(expected.expected_cases(KUNIT_DIR),
                         live + self.names + parser)

    def test_live_suite_declares_21_connections(self) -> None:
        live = expected.case_names(
            (KUNIT_DIR / 'tcp_live_test.c').read_text())
        self.assertEqual(len(set(live)), 21)
        self.assertIn('live_mptcp_sack_holes', live)
        self.assertEqual(live[0], 'live_none')
        self.assertIn('live_md5_sack_holes', live)

    def test_benchmark_cases_are_not_expected(self) -> None:
        names = expected.expected_cases(KUNIT_DIR)
        self.assertNotIn('tcp_bench_hotpath_test', names)
        self.assertNotIn('tcp_bench_sweep_scale_test', names)

    def test_parser_suite_declares_35_rows_and_the_mutations(self) -> None:
        parser = expected.case_names(
            (KUNIT_DIR / 'tcp_parse_options_test.c').read_text())
        self.assertEqual(len(set(parser)), 36)
        self.assertEqual(parser[-1], 'tcp_parse_mutation_test')

    def test_declares_every_case_of_the_passing_log(self) -> None:
        with open(DATA / 'ktap-pass.log') as lines:
            run = ktap.parse(lines)
        self.assertLessEqual({c.name for c in run.cases}, set(self.names))


if __name__ == '__main__':
    unittest.main()

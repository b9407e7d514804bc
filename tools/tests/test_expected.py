"""expected.case_names / expected_cases: the names the KUnit source declares."""

from __future__ import annotations

import re
import tempfile
import unittest
from pathlib import Path
from typing import List

from tcpopt.core.settings import REPO, TREES, version_key
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

    def test_declares_258_unique_cases(self) -> None:
        # Table rows (MD5's SYN-ACK to a peer without WS the newest),
        # plain cases (AccECN's D-SACK record the newest) and
        # sweep groups; 14 of the rows TCP-AO,
        # 19 the MSS from a path MTU, 13 MPTCP layouts and 44 MPTCP
        # writer rows, 15 MPTCP sweep groups.
        self.assertEqual(len(self.names), 258)
        self.assertEqual(len(set(self.names)), 258)
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

    def test_live_suite_declares_39_connections(self) -> None:
        live = expected.case_names(
            (KUNIT_DIR / 'tcp_live_test.c').read_text())
        self.assertEqual(len(set(live)), 39)
        self.assertIn('live_md5_peer_offers_ts', live)
        self.assertIn('live_mptcp_sack_holes', live)
        self.assertIn('live_mptcp_signal', live)
        self.assertIn('live_mptcp_tcp_client', live)
        self.assertIn('live_accecn_synack_retrans', live)
        self.assertIn('live_syn_retrans_mtu_drop', live)
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



# The regexes expected.py read the tables with before its scanner, keyed
# to tab indentation; frozen here so that the scanner must give their
# names on the real sources.
OLD_ARRAY_PARAM = re.compile(
    r'KUNIT_ARRAY_PARAM(?:_DESC)?\(\s*(\w+)\s*,\s*(\w+)\s*,')
OLD_ARRAY = re.compile(r'static const struct \w+ (\w+)\[\] = \{(.*?)\n\};',
                       re.S)
OLD_CASE_ARRAY = re.compile(
    r'static struct kunit_case (\w+)\[\] = \{(.*?)\n\};', re.S)
OLD_NAME = re.compile(r'^\t(?:\t\.name = |\{ )"([^"]+)"', re.M)
OLD_CASE = re.compile(r'KUNIT_CASE(?:_SLOW)?\(\s*(\w+)\s*\)')
OLD_CASE_PARAM = re.compile(r'KUNIT_CASE_PARAM\(\s*\w+\s*,\s*(\w+)\s*\)')


def old_case_names(source: str) -> List[str]:
    generators = {f'{m.group(1)}_gen_params': m.group(2)
                  for m in OLD_ARRAY_PARAM.finditer(source)}
    tables = {m.group(1): OLD_NAME.findall(m.group(2))
              for m in OLD_ARRAY.finditer(source)}
    names: List[str] = []
    for case_array in OLD_CASE_ARRAY.finditer(source):
        for entry in re.finditer(r'KUNIT_CASE\w*\([^)]*\)',
                                 case_array.group(2)):
            param = OLD_CASE_PARAM.match(entry.group(0))
            plain = OLD_CASE.match(entry.group(0))
            if param:
                names.extend(tables.get(generators.get(param.group(1), ''),
                                        []))
            elif plain:
                names.append(plain.group(1))
    return names


# What a default run declares on each tree (the upstream suites with the
# tree's guards resolved), as the regexes counted it.
# Mainline's suites and each tree's, with its feature guards resolved.
VERSIONS = [expected.MAINLINE] + [version_key(tree) for tree in TREES]


class ScannerOnTheRealSourcesTest(unittest.TestCase):

    def test_same_names_as_the_regexes_on_every_tree(self) -> None:
        """The tables as they are written today: the scanner finds what
        the tab-keyed regexes found, and every row counts."""
        for version in VERSIONS:
            paths = expected.sources(KUNIT_DIR, version) + \
                [KUNIT_DIR / 'tcp_options_bench.c']
            with self.subTest(version=version):
                total = 0
                for path in paths:
                    text = expected.read_source(path, version)
                    self.assertEqual(expected.case_names(text),
                                     old_case_names(text), path.name)
                    if path.name != 'tcp_options_bench.c':
                        total += len(old_case_names(text))
                self.assertEqual(
                    len(expected.expected_cases(KUNIT_DIR, version)), total)
                self.assertGreater(total, 300)


class ReformattedTableTest(unittest.TestCase):
    """The names do not hang on the layout of the source."""

    WANT = ['first_row', 'second_row', 'demo_plain_test']

    def variant(self, first: str, second: str = '') -> str:
        """SNIPPET with its table's rows replaced."""
        rows = second or '\t{\n\t\t.name = "second_row",\n\t\t.in = 2,\n\t},\n'
        head, rest = SNIPPET.split('static const struct demo_case '
                                   'demo_cases[] = {\n')
        tail = rest[rest.index('};\n'):]
        return (head + 'static const struct demo_case demo_cases[] = {\n' +
                first + rows + tail)

    def assertNames(self, source: str) -> None:
        self.assertEqual(expected.case_names(source), self.WANT)

    def test_spaces_instead_of_tabs(self) -> None:
        source = SNIPPET.replace('\t', '    ')
        self.assertNames(source)
        # What the tab-keyed regexes made of it: the rows were lost.
        self.assertEqual(old_case_names(source), ['demo_plain_test'])

    # Reformatted rows -> (first row, second row or '' for SNIPPET's).
    ROWS = {
        'a row on one line': ('{.name="first_row",.in=1},',
                              '  { .name = "second_row" }'),
        '.name not the first member': (
            '\t{\n\t\t.in = 1,\n\t\t.name = "first_row",\n\t},\n', ''),
        'comments with braces and quotes': (
            '\t/* { "not_a_row" }, } */\n'
            '\t{ // .name = "nor_this" {\n'
            '\t\t.name = /* "or_this" */ "first_row",\n\t},\n', ''),
        'strings and chars with braces': (
            '\t{ .sep = \'{\', .label = "} {", .name = "first_row" },\n', ''),
        'a nested initializer before the name': (
            '\t{ .in = { .name = "inner", .x = { 1 } },\n'
            '\t  .name = "first_row" },\n', ''),
        'positional rows': ('\t{ { "inner" }, "first_row", 1 },\n',
                            '\t{ "second_row", "not_this" }\n'),
        'adjacent literals are one name': (
            '\t{ .name = "first" "_row" },\n', ''),
        'preprocessor lines do not count': (
            '#define ROW_OPEN {\n\t{ .name = "first_row" },\n', ''),
    }

    def test_reformatted_rows(self) -> None:
        for what, (first, second) in self.ROWS.items():
            with self.subTest(what):
                self.assertNames(self.variant(first, second))

    def test_closing_brace_on_the_last_row(self) -> None:
        source = SNIPPET.replace('\t},\n};\n\nKUNIT_ARRAY_PARAM',
                                 '\t} };\n\nKUNIT_ARRAY_PARAM')
        self.assertNotEqual(source, SNIPPET)
        self.assertNames(source)

    def test_case_array_reformatted(self) -> None:
        source = SNIPPET.replace(
            'static struct kunit_case demo_test_cases[] = {\n'
            '\tKUNIT_CASE_PARAM(demo_layout_test, demo_gen_params),\n'
            '\tKUNIT_CASE(demo_plain_test),\n\t{}\n};',
            'static struct kunit_case demo_test_cases[] = { '
            'KUNIT_CASE_PARAM( demo_layout_test,demo_gen_params ), '
            '/* KUNIT_CASE(commented_out), */ KUNIT_CASE(demo_plain_test), '
            '{} };')
        self.assertNotEqual(source, SNIPPET)
        self.assertNames(source)


if __name__ == '__main__':
    unittest.main()

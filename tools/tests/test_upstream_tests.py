"""The upstream suites as each tree gets them (upstream_tests.py)."""

import unittest

from tcpopt.core.errors import HarnessError
from tcpopt.log.expected import upstream_cases
from tcpopt.series.upstream_tests import (for_tree, resolve_guards,
                                          source_for_tree)

from tcpopt.core.settings import REPO

SOURCE = '''a
#ifdef OPTION_ACCECN
accecn
#if IS_ENABLED(CONFIG_MPTCP)
accecn mptcp
#endif
#else
no accecn
#endif
#ifdef OPTION_AO
ao
#endif
#if IS_ENABLED(CONFIG_SMC)
smc
#endif
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
'''


class ResolveGuards(unittest.TestCase):

    def test_mainline_keeps_both_features_and_drops_the_guards(self):
        self.assertEqual(for_tree(SOURCE, (7, 3)).splitlines(), [
            'a', 'accecn', '#if IS_ENABLED(CONFIG_MPTCP)', 'accecn mptcp',
            '#endif', 'ao', '#if IS_ENABLED(CONFIG_SMC)', 'smc', '#endif',
            'MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");'])

    def test_6_12_has_ao_not_accecn_and_the_bare_namespace(self):
        self.assertEqual(for_tree(SOURCE, (6, 12)).splitlines(), [
            'a', 'no accecn', 'ao', '#if IS_ENABLED(CONFIG_SMC)', 'smc',
            '#endif', 'MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);'])

    def test_6_1_has_neither(self):
        lines = resolve_guards(SOURCE, (6, 1)).splitlines()
        self.assertNotIn('ao', lines)
        self.assertNotIn('accecn', lines)
        self.assertIn('no accecn', lines)

    def test_a_dropped_part_between_blank_lines_leaves_one(self):
        text = 'a\n\n#ifdef OPTION_ACCECN\nx\n#endif\n\nb\n'
        self.assertEqual(for_tree(text, (6, 12)), 'a\n\nb\n')
        self.assertEqual(for_tree(text, (7, 3)), 'a\n\nx\n\nb\n')

    def test_unpaired_or_elif_guards_are_errors(self):
        for broken in ('#ifdef OPTION_AO\nx\n', '#endif\n',
                       '#ifdef OPTION_AO\n#elif 1\n#endif\n'):
            with self.subTest(broken=broken):
                with self.assertRaises(HarnessError):
                    resolve_guards(broken, (6, 12))


class TheRealSuites(unittest.TestCase):

    def test_6_1_gets_the_kunit_standins_after_the_includes(self):
        path = REPO / 'kunit' / 'tests' / 'tcp_output_kunit.c'
        text = source_for_tree(path, (6, 1))
        self.assertLess(text.index('#include "../tcp_options.h"'),
                        text.index('#define KUNIT_ARRAY_PARAM_DESC'))
        for version in ((6, 12), (7, 3)):
            self.assertNotIn('KUNIT_ARRAY_PARAM_DESC(name',
                             source_for_tree(path, version))
        with self.assertRaises(HarnessError):
            for_tree(path.read_text(), (6, 1))

    def test_6_1_has_no_ao_rows_and_writes_without_a_key(self):
        path = REPO / 'kunit' / 'tests' / 'tcp_output_kunit.c'
        text = source_for_tree(path, (6, 1))
        self.assertNotIn('ao_len', text)
        self.assertNotIn('tcp_key', text)
        self.assertIn('tcp_options_write((struct tcphdr *)buf, tp, &opts);',
                      text)

    def test_6_12_runs_the_mainline_cases_but_accecn(self):
        kunit = REPO / 'kunit'
        mainline = upstream_cases(kunit, True)
        old = upstream_cases(kunit, (6, 12))
        self.assertLessEqual(set(old), set(mainline))
        # The AccECN rows: established, SYN-ACK (accecn_synack_cases) and
        # writer ones
        self.assertEqual(sorted(set(mainline) - set(old)), [
            'accecn_3_fields', 'accecn_empty_in_sack_nops',
            'accecn_md5_ts_2_fields', 'accecn_required_does_not_fit',
            'accecn_takes_a_sack_block', 'accecn_when_no_sack_fits',
            'all_options_3_fields', 'md5_2_fields',
            'md5_fastopen_request_1_field', 'synack_accecn_1_field_before_ws',
            'synack_accecn_3_fields', 'synack_accecn_empty_alone',
            'synack_accecn_empty_before_sackperm'])

    def test_no_guard_reaches_a_tree(self):
        path = REPO / 'kunit' / 'tests' / 'tcp_output_kunit.c'
        for version in ((6, 12), (7, 3)):
            with self.subTest(version=version):
                self.assertNotIn('#ifdef OPTION_',
                                 for_tree(path.read_text(), version))


if __name__ == '__main__':
    unittest.main()

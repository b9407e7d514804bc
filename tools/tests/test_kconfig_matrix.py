"""The Kconfig matrix's verdict lines and who a build problem belongs to."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from tcpopt.core.settings import Settings
from tcpopt.series import kconfig_matrix as km

KEPT = ['TCP_OPTIONS_KUNIT_TEST', 'TCP_PARSE_OPTIONS_KUNIT_TEST',
        'TCP_OPTIONS_KUNIT_BENCH']


class MatrixTest(unittest.TestCase):

    def test_lines(self) -> None:
        self.assertEqual(
            km.Row('NETFILTER=n', 'TCP_OPTIONS_LIVE_KUNIT_TEST', False)
            .line('6.1'),
            'PASS 6.1 NETFILTER=n TCP_OPTIONS_LIVE_KUNIT_TEST: dropped by '
            'olddefconfig')
        row = km.Row('TCP_MD5SIG=n', 'TCP_OPTIONS_KUNIT_TEST', True,
                     'build warning: x.h:1: warning: unused')
        self.assertFalse(row.ok)
        self.assertTrue(row.line('6.12').startswith(
            'FAIL 6.12 TCP_MD5SIG=n TCP_OPTIONS_KUNIT_TEST: build warning'))

    def test_a_warning_is_blamed_on_the_suite_whose_file_it_names(
            self) -> None:
        self.assertEqual(km.blamed('../src/net/ipv4/tcp_options_test_compat'
                                   '.h:146:18: warning: unused', KEPT),
                         ['TCP_OPTIONS_KUNIT_TEST'])
        self.assertEqual(km.blamed('tcp_parse_options_test.c:3: warning',
                                   KEPT), ['TCP_PARSE_OPTIONS_KUNIT_TEST'])
        self.assertEqual(km.blamed('net/ipv4/route.c:9: error: x', KEPT),
                         KEPT)

    def test_dependencies_follow_the_tree(self) -> None:
        self.assertEqual(km.dependencies(Settings(tree='6.1',
                                                  work_dir=Path('/w'))),
                         ['NETFILTER', 'NET_NS', 'TCP_MD5SIG', 'SYN_COOKIES',
                          'IPV6'])
        self.assertEqual(km.dependencies(Settings(tree='6.12',
                                                  work_dir=Path('/w')))[-1],
                         'TCP_AO')
        # hmac(sha1) is what one live case needs at run time (it skips
        # without): no build dependency, no matrix row.
        self.assertNotIn('CRYPTO_HMAC', km.dependencies(
            Settings(tree='6.12', work_dir=Path('/w'))))

    def test_enabled_reads_y_and_m(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / '.config'
            config.write_text('CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not '
                              'set\nCONFIG_D="x"\n')
            self.assertEqual(km.enabled(config), {'A', 'B'})


if __name__ == '__main__':
    unittest.main()

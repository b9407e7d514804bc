"""bloat: the total delta from bloat-o-meter and the config sources."""

from __future__ import annotations

import lzma
import tempfile
import unittest
from pathlib import Path

from tcpopt.core.settings import Settings
from tcpopt.series import bloat

ZERO = ('add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n'
        'Function                                     old     new   delta\n'
        'Total: Before=25945, After=25945, chg +0.00%\n')
GROWTH = ('add/remove: 1/0 grow/shrink: 1/0 up/down: 12/0 (12)\n'
          'Function                                     old     new   delta\n'
          'tcp_fastopen_opt_space                         -       8      +8\n'
          'tcp_syn_options                              600     604      +4\n'
          'Total: Before=25945, After=25957, chg +0.05%\n')
SHRINK = ('add/remove: 0/1 grow/shrink: 0/1 up/down: 0/-20 (-20)\n'
          'Function                                     old     new   delta\n')


class ParseDeltaTest(unittest.TestCase):

    def test_zero_delta(self) -> None:
        self.assertEqual(bloat.parse_delta(ZERO), 0)

    def test_positive_delta(self) -> None:
        self.assertEqual(bloat.parse_delta(GROWTH), 12)

    def test_negative_delta(self) -> None:
        self.assertEqual(bloat.parse_delta(SHRINK), -20)

    def test_garbage_is_none(self) -> None:
        self.assertIsNone(bloat.parse_delta('usage: bloat-o-meter file1 file2'))

    def test_empty_is_none(self) -> None:
        self.assertIsNone(bloat.parse_delta(''))

    def test_summary_line_need_not_be_first(self) -> None:
        self.assertEqual(bloat.parse_delta('warning: x\n' + GROWTH), 12)


class BloatResultTest(unittest.TestCase):

    def test_ok_needs_zero_delta_and_no_error(self) -> None:
        self.assertTrue(bloat.BloatResult('kunit', 0, True, ZERO).ok)
        self.assertFalse(bloat.BloatResult('kunit', 12, False, GROWTH).ok)
        self.assertFalse(bloat.BloatResult('kunit', None, False, '').ok)
        self.assertFalse(bloat.BloatResult('kunit', 0, True, ZERO,
                                           error='boom').ok)

    def test_ok_does_not_look_at_text_identity(self) -> None:
        # Documented behaviour: the verdict is the bloat-o-meter delta.
        self.assertTrue(bloat.BloatResult('kunit', 0, False, ZERO).ok)


class ConfigTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def test_read_plain_config(self) -> None:
        path = self.dir / '.config'
        path.write_bytes(b'CONFIG_INET=y\n')
        self.assertEqual(bloat.read_config(path), b'CONFIG_INET=y\n')

    def test_read_xz_config(self) -> None:
        path = self.dir / 'config.amd64_none_amd64.xz'
        path.write_bytes(lzma.compress(b'CONFIG_INET=y\n'))
        self.assertEqual(bloat.read_config(path), b'CONFIG_INET=y\n')

    def test_kunit_config_comes_first(self) -> None:
        settings = Settings(tree='6.1', work_dir=self.dir)
        sources = bloat.config_sources(settings)
        self.assertEqual(sources[0],
                         ('kunit', self.dir / '6.1' / 'build' / '.config'))


if __name__ == '__main__':
    unittest.main()

"""options: the one option vocabulary, and packetdrill text both ways."""

from __future__ import annotations

import unittest
from pathlib import Path

from tcpopt.layout import options
from tcpopt.layout.tables import rows
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'


class VocabularyTest(unittest.TestCase):

    def test_every_kind_has_a_name(self) -> None:
        self.assertEqual(set(options.NAMES) - set(options.KINDS), {0, 1})
        self.assertEqual(options.NAMES[29], 'AO')
        self.assertEqual(set(options.ACCECN_ORDER), {172, 174})

    def test_bracketed_is_what_parse_layout_reads(self) -> None:
        self.assertEqual(options.bracketed('mss 1460'), '<mss 1460>')
        self.assertEqual(options.bracketed(''), '<>')
        for text in ('mss 1460,nop,wscale 7', '', 'nop,nop,md5'):
            with self.subTest(text):
                self.assertEqual(
                    options.parse_layout(options.bracketed(text)),
                    options.parse_layout(text))

    def test_bytes_to_text_to_options_and_back(self) -> None:
        """Every sample row: its words decoded to text read the same
        options as the kernel's own layout line."""
        with open(DATA / 'layouts-sample.log') as lines:
            sample = [row for row in rows(ktap.parse(lines))
                      if row.layout is not None and row.words]
        self.assertGreater(len(sample), 60)
        for row in sample:
            with self.subTest(row.stem):
                text = options.packetdrill(row.data)
                self.assertEqual(options.parse_layout(text),
                                 options.parse_layout(row.layout))


if __name__ == '__main__':
    unittest.main()

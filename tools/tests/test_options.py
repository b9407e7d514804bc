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
        self.assertEqual(set(options.NAMES) - set(options.BY_NUMBER), {0, 1})
        self.assertEqual(options.NAMES[29], 'AO')
        self.assertEqual(set(options.ACCECN_ORDER), {172, 174})

    def test_one_entry_per_kind(self) -> None:
        numbers = [kind.number for kind in options.KINDS]
        self.assertEqual(len(numbers), len(set(numbers)))
        self.assertEqual(options.BY_NUMBER[8], options.TS)

    def test_fixed_lengths(self) -> None:
        self.assertEqual((options.MSS.length, options.TS.length), (4, 10))
        self.assertIsNone(options.SACK.length)

    def test_every_pattern_reads_its_own_decoders_text(self) -> None:
        samples = {
            'MSS': '020405b4', 'SACK_PERM': '0402', 'WS': '030307',
            'TS': '080a0000000100000002', 'SACK': '050a0000100000002000',
            'MD5': '1312' + 'a5' * 16, 'AO': '1d08010200000000',
            'FO': '2206c0c1c2c3', 'FOEXP': 'fe04f989',
            'AccECN0': 'ac05000001', 'AccECN1': 'ae02',
            'MPTCP': '1e0c1003' + '00' * 8,
        }
        self.assertEqual(set(samples),
                         {kind.name for kind in options.KINDS})
        for kind in options.KINDS:
            with self.subTest(kind.name):
                data = bytes.fromhex(samples[kind.name])
                [option] = options.parse_layout(options.packetdrill(data))
                self.assertEqual(option.kind, kind.number)

    def test_short_ao_is_malformed(self) -> None:
        # RFC 5925: KeyID and RNextKeyID at least, as the C decoder admits.
        [span] = options.decode(bytes.fromhex('1d02'))
        self.assertEqual((span.kind, span.label), ('MALFORMED', 'AO len 2?'))

    def test_tree_requirements(self) -> None:
        self.assertEqual(options.AO.since, (6, 7))
        self.assertEqual(options.ACCECN1.since, (6, 18))
        self.assertEqual({kind.name: kind.kconfig for kind in options.KINDS
                          if kind.kconfig},
                         {'MD5': 'CONFIG_TCP_MD5SIG', 'AO': 'CONFIG_TCP_AO',
                          'MPTCP': 'CONFIG_MPTCP'})

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

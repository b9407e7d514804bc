"""options.decode, the byte decoder, and svg's picture of one layout."""

from __future__ import annotations

import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import List

from tcpopt.layout import options, svg
from tcpopt.layout.tables import rows
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'
NS = {'s': 'http://www.w3.org/2000/svg'}

SYN_FULL = bytes.fromhex('020405b4 0402080a 00000001 00000000 01030307')
MD5_SYNACK = bytes.fromhex('01011312' + 'a5' * 16 +
                           '020405a0 0101080a 00000002 00000001 01030309')


def sample_rows():
    with open(DATA / 'layouts-sample.log') as lines:
        return rows(ktap.parse(lines))


def kinds(data: bytes) -> List[str]:
    return [span.kind for span in options.decode(data)]


def normalized(layout: str) -> str:
    """The 6.1 log prints a cookie request as 'FO ' with a space."""
    return ','.join(item.strip() for item in layout.split(','))


class DecodeTest(unittest.TestCase):

    def test_full_syn(self) -> None:
        spans = options.decode(SYN_FULL)
        self.assertEqual([(s.kind, s.start, s.length) for s in spans],
                         [('MSS', 0, 4), ('SACK_PERM', 4, 2), ('TS', 6, 10),
                          ('NOP', 16, 1), ('WS', 17, 3)])
        self.assertEqual(spans[0].label, 'MSS 1460')
        self.assertEqual(spans[2].label, 'TS val 1 ecr 0')

    def test_md5_hash_is_its_own_span(self) -> None:
        spans = options.decode(MD5_SYNACK)
        self.assertEqual(kinds(MD5_SYNACK)[:4],
                         ['NOP', 'NOP', 'MD5', 'MD5_HASH'])
        self.assertEqual((spans[3].start, spans[3].length), (4, 16))
        self.assertIn('hash', spans[3].label)
        self.assertEqual(spans[4].kind, 'MSS')
        self.assertEqual(spans[4].start, 20)

    def test_fast_open_kinds(self) -> None:
        self.assertEqual(kinds(bytes.fromhex('2206c0c1c2c30101')),
                         ['FO', 'NOP', 'NOP'])
        self.assertEqual(kinds(bytes.fromhex('fe04f989')), ['FOEXP'])
        self.assertEqual(options.packetdrill(bytes.fromhex('22020101')),
                         'FO,nop,nop')
        # Kind 254 with another experiment ID is not Fast Open.
        self.assertEqual(kinds(bytes.fromhex('fe04abcd')), ['MALFORMED'])

    def test_sack_blocks(self) -> None:
        data = bytes.fromhex('0101050a0000100000002000')
        self.assertEqual(options.packetdrill(data), 'nop,nop,sack 4096:8192')
        self.assertEqual(options.decode(data)[2].label, 'SACK 1 block')

    def test_malformed_and_unknown_bytes(self) -> None:
        self.assertEqual(kinds(bytes.fromhex('02050000')), ['MALFORMED'])
        self.assertEqual(kinds(bytes.fromhex('0101080a00000001')),
                         ['NOP', 'NOP', 'MALFORMED'])
        self.assertEqual(kinds(bytes.fromhex('020305')), ['MALFORMED'])
        self.assertEqual(kinds(bytes.fromhex('1f04aabb')), ['UNKNOWN'])
        self.assertEqual(kinds(bytes.fromhex('1e02')), ['MALFORMED'])

    def test_mptcp_subtypes(self) -> None:
        # RFC 8684 section 3: kind 30, the subtype in the high nibble.
        cases = (
            ('1e040101', 'mp_capable len 4 v1 flags 0x01'),
            ('1e0c01a1' + '0102030405060708',
             'mp_capable len 12 v1 flags 0xa1'),
            ('1e0c1103' + '11223344' + '55667788',
             'mp_join len 12 backup id 3'),
            ('1e082001' + '00000001', 'dss len 8'),
            ('1e04f000', 'mptcp subtype 15 len 4'),
        )
        for data, text in cases:
            with self.subTest(data):
                self.assertEqual(options.packetdrill(bytes.fromhex(data)),
                                 text)
                self.assertEqual(kinds(bytes.fromhex(data)), ['MPTCP'])
        layout = options.parse_layout('mss 1460,mp_join len 12 backup id 3')
        self.assertEqual([(o.kind, o.values) for o in layout],
                         [(2, (1460,)), (30, ('mp_join', 12))])
        self.assertEqual(kinds(bytes.fromhex('01000000')), ['NOP', 'EOL'])
        self.assertEqual(kinds(bytes.fromhex('0101')), ['NOP', 'NOP'])
        self.assertEqual(kinds(b'\x02'), ['MALFORMED'])

    def test_spans_cover_every_byte(self) -> None:
        for row in sample_rows():
            with self.subTest(row.stem):
                spans = options.decode(row.data)
                self.assertEqual(sum(s.length for s in spans), len(row.data))
                for before, after in zip(spans, spans[1:]):
                    self.assertEqual(before.end, after.start)

    def test_decoding_matches_every_kernel_layout_line(self) -> None:
        # Two independent decoders: the test's tcp_opt_decode() printed
        # the layout line, options.decode() reads the words.
        checked = 0
        for row in sample_rows():
            if row.words is None:
                continue
            with self.subTest(row.stem):
                self.assertEqual(options.packetdrill(row.data),
                                 normalized(row.layout))
                self.assertEqual(len(row.data), row.size)
                checked += 1
        self.assertEqual(checked, 64)


class RenderTest(unittest.TestCase):

    def render(self, data: bytes = SYN_FULL, name: str = 'case_x',
               layout: str = 'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7'
               ) -> ET.Element:
        text = svg.render_svg(name, data, len(data), layout)
        return ET.fromstring(text)

    def groups(self, root: ET.Element, kind: str) -> List[ET.Element]:
        return [g for g in root.iter(f'{{{NS["s"]}}}g')
                if g.get('class') == f'span {kind.lower()}']

    def texts(self, element: ET.Element) -> List[str]:
        return [t.text or '' for t in element.iter(f'{{{NS["s"]}}}text')]

    def test_valid_svg_with_title_size_and_notation(self) -> None:
        root = self.render()
        self.assertEqual(root.tag, f'{{{NS["s"]}}}svg')
        texts = self.texts(root)
        self.assertIn('case_x', texts)
        self.assertIn('20 / 40 bytes of option space', texts)
        self.assertIn('<mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>', texts)

    def test_forty_byte_cells_and_row_labels(self) -> None:
        root = self.render()
        cells = root.find("s:g[@class='bytes']", NS)
        self.assertEqual(len(cells.findall('s:rect', NS)), 40)
        # Hex values only for the bytes written.
        self.assertEqual(len(cells.findall('s:text', NS)), 20)
        axes = self.texts(root.find("s:g[@class='axes']", NS))
        self.assertEqual(axes, ['+0', '+1', '+2', '+3'] +
                         [str(n) for n in range(0, 40, 4)])

    def test_mss_is_red_and_first(self) -> None:
        root = self.render()
        mss = self.groups(root, 'MSS')
        self.assertEqual(len(mss), 1)
        rect = mss[0].find('s:rect', NS)
        self.assertEqual(rect.get('fill'), svg.STYLE['MSS'][0])
        self.assertEqual((rect.get('x'), rect.get('y')),
                         (str(svg.LEFT + 1), str(self.grid_top(root) + 1)))

    def grid_top(self, root: ET.Element) -> int:
        cells = root.find("s:g[@class='bytes']", NS)
        return int(cells.find('s:rect', NS).get('y'))

    def test_option_across_rows_is_several_rects_one_label(self) -> None:
        ts = self.groups(self.render(), 'TS')[0]
        # Bytes 6-15: the rest of row 4, all of row 8, all of row 12.
        widths = [int(r.get('width')) + 2 for r in ts.findall('s:rect', NS)]
        self.assertEqual(widths, [2 * svg.CELL_W, 4 * svg.CELL_W,
                                  4 * svg.CELL_W])
        self.assertEqual(self.texts(ts), ['TS val 1 ecr 0'])

    def test_unused_space_is_hatched(self) -> None:
        unused = self.groups(self.render(), 'UNUSED')[0]
        rects = unused.findall('s:rect', NS)
        self.assertEqual(len(rects), 5)        # bytes 20-39: five rows
        self.assertEqual(rects[0].get('fill'), 'url(#hatch-unused)')
        self.assertEqual(self.texts(unused), ['unused (20 bytes)'])

    def test_full_space_has_no_unused(self) -> None:
        root = self.render(MD5_SYNACK, layout='nop,nop,md5,mss 1440,...')
        self.assertEqual(self.groups(root, 'UNUSED'), [])
        self.assertEqual(len(self.groups(root, 'NOP')), 5)
        hash_group = self.groups(root, 'MD5_HASH')[0]
        self.assertEqual(self.texts(hash_group), ['hash (16 bytes)'])
        self.assertEqual(hash_group.find('s:rect', NS).get('fill'),
                         'url(#hatch-hash)')
        self.assertEqual(self.texts(self.groups(root, 'NOP')[0]), ['nop'])

    def test_empty_layout_is_all_unused(self) -> None:
        root = self.render(b'', layout='')
        self.assertIn('0 / 40 bytes of option space', self.texts(root))
        unused = self.groups(root, 'UNUSED')
        self.assertEqual(len(unused[0].findall('s:rect', NS)), 10)

    def test_every_kinds_spans_have_a_style(self) -> None:
        self.assertLessEqual(
            {key for kind in options.KINDS for key, _ in kind.styles},
            set(svg.STYLE))
        self.assertEqual(list(svg.STYLE)[:4], ['MSS', 'SACK_PERM', 'TS',
                                               'WS'])

    def test_distinct_colour_per_kind(self) -> None:
        fills = [style[0] for style in svg.STYLE.values()]
        self.assertEqual(len(fills), len(set(fills)))

    def test_legend_lists_the_kinds_present(self) -> None:
        legend = self.texts(self.render().find("s:g[@class='legend']", NS))
        self.assertEqual(legend, ['MSS (kind 2)', 'SACK_PERM (kind 4)',
                                  'TS (kind 8)', 'WS (kind 3)', 'NOP padding',
                                  'unused'])

    def test_long_labels_and_notation_fit(self) -> None:
        cookie = bytes.fromhex('fe14f989') + bytes(range(0xc0, 0xd0))
        layout = ('mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,FOEXP '
                  'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf')
        root = self.render(SYN_FULL + cookie, layout=layout)
        notation = [t.text for t in root.findall('s:text', NS)
                    if t.get('font-family') == 'monospace']
        self.assertEqual(len(notation), 2)
        self.assertTrue(all(len(line) <= svg.WRAP for line in notation))
        self.assertEqual(''.join(notation), f'<{layout}>')
        # A label wider than its rectangle is elided, not spilled.
        label = svg._fit('SACK 4096:8192 12288:16384 20480:24576', 260)
        self.assertTrue(label.endswith('…'))
        self.assertLessEqual(len(label) * svg.CHAR_W, 260)

    def test_deterministic_and_escaped(self) -> None:
        first = svg.render_svg('a<b>&c', SYN_FULL, 20, 'x<y>')
        self.assertEqual(first, svg.render_svg('a<b>&c', SYN_FULL, 20,
                                               'x<y>'))
        root = ET.fromstring(first)
        self.assertIn('a<b>&c', self.texts(root))

    def test_golden_picture(self) -> None:
        golden = DATA / 'layouts-md5_synack_no_sack_keeps_ts.svg'
        row = next(r for r in sample_rows()
                   if r.case == 'md5_synack_no_sack_keeps_ts')
        self.assertEqual(svg.render_svg(row.case, row.data, row.size,
                                        row.layout),
                         golden.read_text())

    def test_size_disagreeing_with_words_is_noted(self) -> None:
        root = ET.fromstring(svg.render_svg('c', SYN_FULL, 24, 'x'))
        self.assertIn('(the words cover 20 bytes, not 24)', self.texts(root))


if __name__ == '__main__':
    unittest.main()

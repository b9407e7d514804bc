"""dissect: the synthetic pcap, the layout parser, and tshark's verdict."""

from __future__ import annotations

import shutil
import struct
import tempfile
import unittest
from pathlib import Path
from typing import List, Tuple
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.layout import dissect, options
from tcpopt.layout.dissect import Dissection, Packet
from tcpopt.layout.options import Option
from tcpopt.layout.tables import rows
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'
HAVE_TSHARK = shutil.which('tshark') is not None

SYN = bytes.fromhex('020405b4 0402080a 00000001 00000000 01030307')
EST = bytes.fromhex('0101080a 00000003 00000002 0101050a 00001000 00002000')


def sample_run() -> ktap.Run:
    with open(DATA / 'layouts-sample.log') as lines:
        return ktap.parse(lines)


def read_pcap(path: Path) -> Tuple[Tuple, List[Tuple[Tuple, bytes]]]:
    """Global header fields and (record header, frame) pairs."""
    data = path.read_bytes()
    header = struct.unpack('<IHHiIII', data[:24])
    records, at = [], 24
    while at < len(data):
        record = struct.unpack('<IIII', data[at:at + 16])
        at += 16
        records.append((record, data[at:at + record[2]]))
        at += record[2]
    return header, records


class ChecksumTest(unittest.TestCase):

    def test_rfc1071_example(self) -> None:
        # RFC 1071 section 3: the sum of these words is 0xddf2.
        self.assertEqual(dissect.checksum(bytes.fromhex('0001f203f4f5f6f7')),
                         ~0xddf2 & 0xffff)

    def test_odd_length_is_padded(self) -> None:
        self.assertEqual(dissect.checksum(b'\x01'),
                         dissect.checksum(b'\x01\x00'))


class PcapTest(unittest.TestCase):

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / 'x.pcap'
        self.packets = [Packet('syn', SYN, 'syn'),
                        Packet('synack', SYN, 'synack'),
                        Packet('est', EST, 'established'),
                        Packet('empty', b'', 'established')]
        dissect.write_pcap(self.packets, self.path)
        self.header, self.records = read_pcap(self.path)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_global_header(self) -> None:
        magic, major, minor, zone, sigfigs, snaplen, linktype = self.header
        self.assertEqual(self.path.read_bytes()[:4], b'\xd4\xc3\xb2\xa1')
        self.assertEqual((magic, major, minor, zone, sigfigs),
                         (0xa1b2c3d4, 2, 4, 0, 0))
        self.assertEqual((snaplen, linktype), (65535, 1))

    def test_record_lengths(self) -> None:
        self.assertEqual(len(self.records), 4)
        for packet, ((_, _, incl, orig), frame) in zip(self.packets,
                                                       self.records):
            self.assertEqual(incl, orig)
            self.assertEqual(incl, len(frame))
            self.assertEqual(len(frame), 14 + 20 + 20 + len(packet.options))

    def test_ethernet_and_ipv4(self) -> None:
        for _, frame in self.records:
            self.assertEqual(frame[12:14], b'\x08\x00')
            ip = frame[14:34]
            self.assertEqual(ip[0], 0x45)
            self.assertEqual(struct.unpack('!H', ip[2:4])[0],
                             len(frame) - 14)
            self.assertEqual(ip[9], 6)
            # A correct header checksum makes the header sum to zero.
            self.assertEqual(dissect.checksum(ip), 0)

    def test_tcp_header_and_checksum(self) -> None:
        flags = {'syn': 0x02, 'synack': 0x12, 'established': 0x10}
        for packet, (_, frame) in zip(self.packets, self.records):
            ip, tcp = frame[14:34], frame[34:]
            offset_flags = struct.unpack('!H', tcp[12:14])[0]
            self.assertEqual(offset_flags >> 12, 5 + len(packet.options) // 4)
            self.assertEqual(offset_flags & 0x3f, flags[packet.kind])
            self.assertEqual(tcp[20:], packet.options)
            pseudo = ip[12:20] + struct.pack('!BBH', 0, 6, len(tcp))
            self.assertEqual(dissect.checksum(pseudo + tcp), 0)

    def test_synack_travels_back(self) -> None:
        syn, synack = self.records[0][1], self.records[1][1]
        self.assertEqual(syn[26:30], synack[30:34])      # IPv4 addresses
        self.assertEqual(struct.unpack('!HH', synack[34:38])[0], 80)

    def test_every_frame_is_its_own_connection(self) -> None:
        # The client port counts frames, so tshark never carries state
        # (say, a window scale) from one frame to the next.
        client_ports = []
        for packet, (_, frame) in zip(self.packets, self.records):
            ports = struct.unpack('!HH', frame[34:38])
            client_ports.append(ports[1] if packet.kind == 'synack'
                                else ports[0])
        self.assertEqual(client_ports, [40000, 40001, 40002, 40003])

    def test_deterministic(self) -> None:
        again = Path(self.tmp.name) / 'y.pcap'
        dissect.write_pcap(self.packets, again)
        self.assertEqual(again.read_bytes(), self.path.read_bytes())

    def test_pcap_bytes_timestamps_and_snaplen(self) -> None:
        data = dissect.pcap_bytes([(2_500_001, b'\x01' * 20), (7, b'')],
                                  snaplen=100)
        self.assertEqual(struct.unpack('<I', data[16:20])[0], 100)
        self.assertEqual(struct.unpack('<IIII', data[24:40]),
                         (2, 500001, 20, 20))
        self.assertEqual(struct.unpack('<IIII', data[60:76]), (0, 7, 0, 0))
        self.assertEqual(len(data), 24 + 16 + 20 + 16)
        with self.assertRaises(ValueError):
            dissect.pcap_bytes([(0, b'\x01' * 101)], snaplen=100)

    def test_rejects_impossible_option_areas(self) -> None:
        with self.assertRaises(ValueError):
            dissect.tcp_segment(Packet('x', b'\x01\x01\x01', 'syn'))
        with self.assertRaises(ValueError):
            dissect.tcp_segment(Packet('x', b'\x01' * 44, 'syn'))
        with self.assertRaises(ValueError):
            dissect.tcp_segment(Packet('x', b'', 'rst'))


class ParseLayoutTest(unittest.TestCase):

    def test_every_sample_layout_parses(self) -> None:
        for row in rows(sample_run()):
            with self.subTest(row.stem):
                options.parse_layout(row.layout)

    def test_items(self) -> None:
        self.assertEqual(
            options.parse_layout('nop,nop,md5,mss 1440,sackOK,TS val 2 ecr 1,'
                                 'nop,wscale 9'),
            [Option(1), Option(1), Option(19), Option(2, (1440,)), Option(4),
             Option(8, (2, 1)), Option(1), Option(3, (9,))])
        self.assertEqual(options.parse_layout('nop,nop,sack 1:2 3:4'),
                         [Option(1), Option(1), Option(5, ((1, 2), (3, 4)))])
        self.assertEqual(options.parse_layout('FO ,FOEXP c0c1,FO'),
                         [Option(34, ('',)), Option(254, ('c0c1',)),
                          Option(34, ('',))])
        self.assertEqual(options.parse_layout(''), [])
        self.assertEqual(options.parse_layout(' '), [])

    def test_unknown_item(self) -> None:
        with self.assertRaises(ValueError):
            options.parse_layout('mss 1460,bogus 3')


class CompareTest(unittest.TestCase):
    """compare() on hand-made dissections: no tshark needed."""

    def seen(self, options: List[Option], data: bytes = b'',
             experts=()) -> Dissection:
        return Dissection(options=options, option_bytes=data.hex(),
                          header_length=20 + len(data),
                          experts=list(experts))

    def test_agreement(self) -> None:
        want = [Option(2, (1460,))]
        data = bytes.fromhex('020405b4')
        self.assertEqual(dissect.compare(want, data, self.seen(want, data)),
                         [])

    def test_kind_sequence_differs(self) -> None:
        problems = dissect.compare([Option(1), Option(4)], b'',
                                   self.seen([Option(4)]))
        self.assertEqual(problems,
                         ['option kinds: layout NOP SACK_PERM, tshark '
                          'SACK_PERM'])

    def test_value_differs(self) -> None:
        problems = dissect.compare([Option(5, ((1, 2),))], b'',
                                   self.seen([Option(5, ((1, 3),))]))
        self.assertEqual(problems, ['option 1 (SACK): layout 1:2, tshark 1:3'])

    def test_bytes_and_header_length(self) -> None:
        seen = self.seen([], b'\x01\x01\x01\x01')
        problems = dissect.compare([], b'', seen)
        self.assertEqual(len(problems), 2)

    def test_experts(self) -> None:
        warn = (dissect.PI_WARN, 0x02000000, 'D-SACK Sequence')
        dsack = [Option(5, ((256, 512), (4096, 8192)))]
        self.assertEqual(dissect.compare(dsack, b'',
                                         self.seen(dsack, experts=[warn])),
                         [])
        plain = [Option(5, ((4096, 8192),))]
        self.assertEqual(dissect.compare(plain, b'',
                                         self.seen(plain, experts=[warn])),
                         ['tshark expert info: D-SACK Sequence'])
        note = (0x00400000, 0x02000000, 'TCP SYN with TFO Cookie')
        self.assertEqual(dissect.compare([], b'',
                                         self.seen([], experts=[note])), [])
        protocol = (0x00400000, dissect.PI_PROTOCOL, 'no MSS')
        self.assertEqual(dissect.compare([], b'',
                                         self.seen([], experts=[protocol])),
                         ['tshark expert info: no MSS'])


class KindReadersTest(unittest.TestCase):

    def test_every_kind_has_its_reader(self) -> None:
        for kind in options.KINDS:
            with self.subTest(kind.name):
                self.assertIn(kind.tshark.reader, dissect.READERS)

    def test_nop_count_runs_on_across_accecn_and_mptcp(self) -> None:
        runs_on = {kind.name for kind in options.KINDS
                   if kind.tshark.nop_count_runs_on}
        self.assertEqual(runs_on, {'AccECN0', 'AccECN1', 'MPTCP'})
        self.assertTrue(dissect.nop_count_not_restarted(
            options.parse_layout('nop,nop,TS val 1 ecr 2,AccECN1,nop,nop')))
        self.assertFalse(dissect.nop_count_not_restarted(
            options.parse_layout('nop,nop,TS val 1 ecr 2,nop,nop')))


class MptcpExpertTest(unittest.TestCase):
    """tshark's MPTCP connection analysis is forgiven on MPTCP rows only."""

    def test_forgiven_only_where_the_layout_has_mptcp(self) -> None:
        from tcpopt.layout.dissect import PI_WARN, _synthetic_serious
        from tcpopt.layout.options import MPTCP_FORGIVEN, parse_layout
        mptcp = _synthetic_serious(parse_layout('mp_capable len 20 v1 '
                                                'flags 0x01'))
        plain = _synthetic_serious(parse_layout('mss 1460'))
        for message in MPTCP_FORGIVEN:
            with self.subTest(message):
                self.assertFalse(mptcp(PI_WARN, 0, message))
                self.assertTrue(plain(PI_WARN, 0, message))
        self.assertTrue(mptcp(PI_WARN, 0, 'Malformed'))


class MissingTsharkTest(unittest.TestCase):

    def test_names_the_debian_package(self) -> None:
        with mock.patch.object(dissect.shutil, 'which', return_value=None):
            with self.assertRaises(HarnessError) as caught:
                dissect.check_with_tshark(sample_run())
        self.assertIn("Debian package 'tshark'", str(caught.exception))


@unittest.skipUnless(HAVE_TSHARK, 'tshark is not installed')
class TsharkTest(unittest.TestCase):

    def test_sample_layouts_agree(self) -> None:
        self.assertEqual(dissect.check_with_tshark(sample_run()), [])

    def test_log_without_words(self) -> None:
        with open(DATA / 'ktap-pass.log') as lines:
            problems = dissect.check_with_tshark(ktap.parse(lines))
        self.assertEqual(len(problems), 64)
        self.assertIn('syn_none_mss1460: no "# words:" line', problems[0])

    def test_malformed_option_area_is_flagged(self) -> None:
        # MSS claiming five bytes in a four-byte option area.
        problems = dissect.check_packets(
            [(Packet('bad_mss', bytes.fromhex('02050000'), 'syn'),
              'mss 1280')])
        self.assertTrue(any('option length = 5 bytes' in text
                            for text in problems), problems)
        self.assertTrue(all(text.startswith('bad_mss: ')
                            for text in problems))

    def test_truncated_timestamp_is_flagged(self) -> None:
        problems = dissect.check_packets(
            [(Packet('bad_ts', bytes.fromhex('0101080a00000001'),
                     'established'), 'nop,nop,TS val 1 ecr 0')])
        self.assertIn('bad_ts: option kinds: layout NOP NOP TS, tshark NOP '
                      'NOP', problems)

    def test_wrong_layout_text_is_caught(self) -> None:
        problems = dissect.check_packets([
            (Packet('mss', SYN, 'syn'),
             'mss 1461,sackOK,TS val 1 ecr 0,nop,wscale 7'),
            (Packet('sack', EST, 'established'),
             'nop,nop,TS val 3 ecr 2,nop,nop,sack 4096:8193'),
            (Packet('fo', SYN + bytes.fromhex('2206c0c1c2c30101'), 'syn'),
             'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,FO c0c1c2c4,nop,'
             'nop'),
            (Packet('foexp', SYN + bytes.fromhex('fe04f989'), 'syn'),
             'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,FO'),
        ])
        self.assertEqual(problems, [
            'mss: option 1 (MSS): layout 1461, tshark 1460',
            'sack: option 6 (SACK): layout 4096:8193, tshark 4096:8192',
            'fo: option 6 (FO): layout c0c1c2c4, tshark c0c1c2c3',
            'foexp: option kinds: layout MSS SACK_PERM TS NOP WS FO, tshark '
            'MSS SACK_PERM TS NOP WS FOEXP',
        ])

    def test_window_scale_beyond_14_is_flagged(self) -> None:
        problems = dissect.check_packets(
            [(Packet('ws15', bytes.fromhex('020405b40103030f'), 'syn'),
              'mss 1460,nop,wscale 15')])
        self.assertTrue(any('exceeds 14' in text for text in problems))

    def test_bad_checksum_is_flagged(self) -> None:
        good = dissect.tcp_segment

        def broken(packet: Packet, port: int = 0) -> bytes:
            segment = bytearray(good(packet, port))
            segment[16] ^= 0xff
            return bytes(segment)

        with mock.patch.object(dissect, 'tcp_segment', broken):
            problems = dissect.check_packets(
                [(Packet('sum', SYN, 'syn'),
                  'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7')])
        self.assertIn('sum: tshark: Checksum Status: Bad', problems)


if __name__ == '__main__':
    unittest.main()

"""capture: '# wire:' lines to packets, checksums, the pcap, tshark's
verdict."""

from __future__ import annotations

import shutil
import struct
import tempfile
import unittest
from pathlib import Path
from typing import Iterable, List
from unittest import mock

from tcpopt.core.errors import HarnessError
from tcpopt.layout import capture, dissect, options
from tcpopt.layout.capture import WirePacket
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'
SAMPLE = DATA / 'ktap-live-sample.log'
HAVE_TSHARK = shutil.which('tshark') is not None


def sample_lines() -> List[str]:
    return SAMPLE.read_text().splitlines()


def parse(lines: Iterable[str], source: str = 'log') -> List[WirePacket]:
    """The packets of a log, its '# wire:' lines read by ktap.parse."""
    return capture.parse(ktap.parse(lines).wire, source)


def sample() -> List[WirePacket]:
    return parse(sample_lines(), 'sample.log')


def line_of(lines: List[str], text: str) -> int:
    """The index of the one line holding text."""
    found = [i for i, line in enumerate(lines) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def ones_complement_sum(data: bytes) -> int:
    """RFC 1071 written out again, word by word, with no shared code."""
    if len(data) % 2:
        data += b'\0'
    total = 0
    for at in range(0, len(data), 2):
        total += int.from_bytes(data[at:at + 2], 'big')
        total = (total & 0xffff) + (total >> 16)
    return total


def pseudo(packet: WirePacket) -> bytes:
    if packet.family == 4:
        ihl = (packet.data[0] & 0x0f) * 4
        return packet.data[12:20] + bytes([0, 6]) + \
            (packet.length - ihl).to_bytes(2, 'big')
    return packet.data[8:40] + (packet.length - 40).to_bytes(4, 'big') + \
        bytes([0, 0, 0, 6])


def packet(data: bytes, family: int = 4, number: int = 0,
           usec: int = 0, layout: str = '') -> WirePacket:
    return WirePacket(number=number, family=family, length=len(data), gso=0,
                      usec=usec, case='made', layout=layout, line=1,
                      data=data)


def ipv4_tcp(payload: bytes = b'', flags: int = 0x18, dport: int = 8080,
             protocol: int = 6) -> bytes:
    """A 20-byte TCP header and payload in IPv4, header checksum right,
    TCP checksum field zero."""
    lo = bytes([127, 0, 0, 1])
    segment = struct.pack('!HHIIBBHHH', 41000, dport, 1, 1, 5 << 4, flags,
                          512, 0, 0) + payload
    header = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0,
                                   20 + len(segment), 1, 0x4000, 64,
                                   protocol, 0, lo, lo))
    header[10:12] = (~ones_complement_sum(bytes(header)) & 0xffff) \
        .to_bytes(2, 'big')
    return bytes(header) + segment


class ParseTest(unittest.TestCase):

    def setUp(self) -> None:
        self.packets = sample()

    def test_every_packet(self) -> None:
        self.assertEqual([p.number for p in self.packets], list(range(9)))
        self.assertEqual([p.family for p in self.packets],
                         [4, 4, 4, 6, 6, 4, 4, 6, 4])
        self.assertEqual([p.length for p in self.packets],
                         [60, 60, 52, 80, 80, 72, 352, 3072, 64])
        self.assertEqual([p.gso for p in self.packets],
                         [0, 0, 0, 0, 0, 0, 0, 1000, 0])
        self.assertEqual(sorted({p.case for p in self.packets}),
                         ['live_data', 'live_fastopen_request',
                          'live_handshake_ipv4', 'live_handshake_ipv6',
                          'live_sack_blocks'])

    def test_header_fields(self) -> None:
        first = self.packets[0]
        self.assertEqual(
            (first.number, first.family, first.length, first.gso, first.usec,
             first.case, first.layout, first.line),
            (0, 4, 60, 0, 1520, 'live_handshake_ipv4',
             '<mss 65495,sackOK,TS val 3067386544 ecr 0,nop,wscale 7>', 12))
        self.assertEqual(first.label,
                         'pkt 0 (live_handshake_ipv4, log line 12)')

    def test_chunks_join_across_other_lines(self) -> None:
        lines = sample_lines()
        for number, chunks in ((6, 3), (7, 24)):
            hex_lines = [line.split()[-1] for line in lines
                         if f'# wire: pkt {number} @' in line]
            self.assertEqual(len(hex_lines), chunks)
            self.assertEqual(self.packets[number].data,
                             bytes.fromhex(''.join(hex_lines)))
        # A kernel message sits between pkt 6's first chunks.
        at = line_of(lines, '# wire: pkt 6 @0 ')
        self.assertEqual(lines[at + 1], 'random: crng init done')

    def test_every_length_is_whole(self) -> None:
        for item in self.packets:
            self.assertEqual(len(item.data), item.length)

    def test_parameterized_case_indentation(self) -> None:
        lines = sample_lines()
        self.assertTrue(lines[self.packets[5].line - 1].startswith(' ' * 8))

    def test_any_leading_whitespace_and_an_empty_layout(self) -> None:
        data = ipv4_tcp()
        packets = parse([
            f'\t# wire: pkt 0 ipv4 len {len(data)} gso 0 t 5 c:',
            f'  \t# wire: pkt 0 @0 {data.hex()}\r\n'])
        self.assertEqual((packets[0].layout, packets[0].data), ('', data))

    def test_no_wire_lines(self) -> None:
        with open(DATA / 'ktap-pass.log') as lines:
            self.assertEqual(parse(lines), [])

    def test_options(self) -> None:
        self.assertEqual(self.packets[0].options.hex(),
                         '0204ffd70402080ab6d49ab00000000001030307')
        self.assertEqual(len(self.packets[6].options), 12)


class ParseErrorTest(unittest.TestCase):
    """Each broken log: one line naming the log line and the packet."""

    def error(self, lines: List[str]) -> str:
        with self.assertRaises(HarnessError) as caught:
            parse(lines, 'x.log')
        message = str(caught.exception)
        self.assertNotIn('\n', message)
        return message

    def test_missing_chunk(self) -> None:
        lines = sample_lines()
        del lines[line_of(lines, '# wire: pkt 6 @128 ')]
        at = line_of(lines, '# wire: pkt 6 @256 ') + 1
        self.assertEqual(self.error(lines),
                         f'x.log:{at}: pkt 6: chunk @128 missing (this line '
                         'is @256)')

    def test_missing_last_chunk(self) -> None:
        lines = sample_lines()
        del lines[line_of(lines, '# wire: pkt 6 @256 ')]
        header = line_of(lines, '# wire: pkt 6 ipv4') + 1
        self.assertEqual(self.error(lines),
                         f'x.log:{header}: pkt 6: len 352 but its data lines '
                         'carry 256 bytes (chunk @256 missing)')

    def test_missing_chunk_at_the_end_of_the_log(self) -> None:
        lines = sample_lines()
        del lines[line_of(lines, '# wire: pkt 8 @0 ')]
        self.assertIn('pkt 8: len 64 but its data lines carry 0 bytes',
                      self.error(lines))

    def test_length_shorter_than_the_data(self) -> None:
        lines = sample_lines()
        at = line_of(lines, '# wire: pkt 6 ipv4')
        lines[at] = lines[at].replace('len 352', 'len 350')
        chunk = line_of(lines, '# wire: pkt 6 @256 ') + 1
        self.assertEqual(self.error(lines),
                         f'x.log:{chunk}: pkt 6: chunk @256 ends at byte '
                         '352, past len 350')

    def test_length_longer_than_the_data(self) -> None:
        lines = sample_lines()
        at = line_of(lines, '# wire: pkt 6 ipv4')
        lines[at] = lines[at].replace('len 352', 'len 360')
        self.assertEqual(self.error(lines),
                         f'x.log:{at + 1}: pkt 6: len 360 but its data lines '
                         'carry 352 bytes (chunk @352 missing)')

    def test_bad_hex(self) -> None:
        for bad in ('4500003G', '4500003', '4500003C', 'ab' * 129, ''):
            with self.subTest(bad=bad[:10]):
                lines = sample_lines()
                at = line_of(lines, '# wire: pkt 2 @0 ')
                lines[at] = f'    # wire: pkt 2 @0 {bad}'
                message = self.error(lines)
                self.assertTrue(message.startswith(
                    f'x.log:{at + 1}: pkt 2: bad hex in chunk @0: expected '
                    '2 to 256 lowercase hex digits, got '), message)

    def test_data_without_its_header(self) -> None:
        lines = sample_lines()
        del lines[line_of(lines, '# wire: pkt 2 ipv4')]
        at = line_of(lines, '# wire: pkt 2 @0 ') + 1
        self.assertEqual(self.error(lines),
                         f'x.log:{at}: pkt 2: data line without its header '
                         'line')

    def test_packet_number_twice(self) -> None:
        lines = sample_lines()
        lines += [line for line in lines if '# wire: pkt 2 ' in line]
        self.assertEqual(self.error(lines),
                         f'x.log:{len(lines) - 1}: pkt 2 appears twice '
                         '(first at line 16)')

    def test_unreadable_wire_line(self) -> None:
        self.assertEqual(self.error(['# wire: pkt zero ipv4']),
                         'x.log:1: unreadable wire line: # wire: pkt zero '
                         'ipv4')

    def test_ip_version_differs_from_the_header_line(self) -> None:
        lines = sample_lines()
        at = line_of(lines, '# wire: pkt 3 ipv6')
        lines[at] = lines[at].replace('ipv6', 'ipv4')
        self.assertEqual(self.error(lines),
                         f'x.log:{at + 1}: pkt 3: the header line says ipv4, '
                         'the bytes start with IP version 6')

    def test_ip_length_differs_from_the_header_line(self) -> None:
        lines = sample_lines()
        at = line_of(lines, '# wire: pkt 0 @0 ')
        lines[at] = lines[at].replace('@0 4500003c', '@0 4500003d')
        self.assertEqual(self.error(lines),
                         f'x.log:{at}: pkt 0: the IPv4 header says 61 bytes, '
                         'the header line says len 60')

    def test_too_short_for_an_ip_header(self) -> None:
        self.assertEqual(self.error(['# wire: pkt 0 ipv6 len 2 gso 0 t 0 c:',
                                     '# wire: pkt 0 @0 6000']),
                         'x.log:1: pkt 0: 2 bytes cannot hold the IPv6 '
                         'header')


class ChecksumTest(unittest.TestCase):

    def setUp(self) -> None:
        self.packets = sample()

    def test_sample_fields_hold_the_pseudo_header_sum(self) -> None:
        # What loopback leaves with CHECKSUM_PARTIAL: the golden log is
        # realistic, and checksum_problems() accepts it.
        for item in self.packets:
            field = struct.unpack('!H', item.tcp[16:18])[0]
            self.assertEqual(field, ones_complement_sum(pseudo(item)))
            self.assertEqual(capture.checksum_problems(item), [])

    def test_recomputed_tcp_checksum(self) -> None:
        for item in self.packets:
            with self.subTest(number=item.number):
                fixed = capture.with_checksums(item)
                ihl = item.ip_header_length
                segment = bytearray(fixed[ihl:])
                stored = segment[16:18]
                segment[16:18] = b'\0\0'
                want = ~ones_complement_sum(pseudo(item) + bytes(segment)) \
                    & 0xffff
                self.assertEqual(stored, want.to_bytes(2, 'big'))
                # Only the checksum field changed.
                self.assertEqual(fixed[:ihl + 16], item.data[:ihl + 16])
                self.assertEqual(fixed[ihl + 18:], item.data[ihl + 18:])

    def test_ipv4_header_checksum_is_kept_or_repaired(self) -> None:
        item = self.packets[0]
        self.assertEqual(capture.with_checksums(item)[:10], item.data[:10])
        self.assertEqual(ones_complement_sum(
            capture.with_checksums(item)[:20]), 0xffff)
        broken = bytearray(item.data)
        broken[10:12] = b'\x12\x34'
        bad = packet(bytes(broken))
        self.assertEqual(capture.with_checksums(bad)[10:12],
                         item.data[10:12])
        self.assertEqual(capture.checksum_problems(bad),
                         ['pkt 0 (made, log line 1): IPv4 header checksum '
                          '0x1234 is wrong; the pcap carries the right one'])

    def test_field_that_is_neither_sum_is_a_problem(self) -> None:
        item = self.packets[6]
        corrupt = bytearray(item.data)
        # The pseudo-header sum covers no payload: a wrong payload byte
        # goes unseen, a wrong checksum field does not.
        corrupt[-1] ^= 0x01
        self.assertEqual(capture.checksum_problems(packet(bytes(corrupt))),
                         [])
        corrupt[item.ip_header_length + 16] ^= 0x01
        problems = capture.checksum_problems(packet(bytes(corrupt)))
        self.assertEqual(len(problems), 1)
        self.assertIn('is neither the pseudo-header sum', problems[0])

    def test_a_finished_checksum_is_accepted(self) -> None:
        finished = packet(capture.with_checksums(self.packets[3]), family=6)
        self.assertEqual(capture.checksum_problems(finished), [])

    def test_not_tcp_keeps_its_bytes(self) -> None:
        udp = packet(ipv4_tcp(b'abc', protocol=17))
        self.assertIsNone(udp.tcp)
        self.assertEqual(capture.with_checksums(udp), udp.data)
        self.assertEqual(capture.checksum_problems(udp), [])

    def test_numbering_gaps(self) -> None:
        kept = [p for p in self.packets if p.number not in (2, 3, 7)]
        self.assertEqual(capture.numbering_problems(kept),
                         ['3 packet numbers missing from the log: 2, 3, 7'])
        self.assertEqual(capture.numbering_problems(self.packets), [])

    def test_time_going_back(self) -> None:
        self.assertEqual(capture.time_problems(self.packets), [])
        self.packets[4].usec = 10
        self.assertEqual(capture.time_problems(self.packets),
                         ['t goes back 1 times in packet order, first at '
                          'pkt 4 (live_handshake_ipv6, log line 22): t 10 '
                          'after t 2310 (t counts from the start of the '
                          'suite)'])


class PcapTest(unittest.TestCase):

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / 'capture' / 'live.pcap'
        self.packets = sample()
        # Reversed on purpose: the pcap follows the packet numbers.
        capture.write_pcap(reversed(self.packets), self.path)
        self.data = self.path.read_bytes()

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def records(self) -> List[tuple]:
        out, at = [], 24
        while at < len(self.data):
            header = struct.unpack('<IIII', self.data[at:at + 16])
            out.append((header, self.data[at + 16:at + 16 + header[2]]))
            at += 16 + header[2]
        return out

    def test_global_header(self) -> None:
        self.assertEqual(struct.unpack('<IHHiIII', self.data[:24]),
                         (0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))

    def test_records(self) -> None:
        records = self.records()
        self.assertEqual(len(records), 9)
        for item, ((seconds, usec, incl, orig), frame) in \
                zip(self.packets, records):
            self.assertEqual((seconds, usec), divmod(item.usec, 1_000_000))
            self.assertEqual((incl, orig), (14 + item.length,) * 2)
            self.assertEqual(frame[:12], bytes(12))
            self.assertEqual(frame[12:14], b'\x08\x00' if item.family == 4
                             else b'\x86\xdd')
            self.assertEqual(frame[14:], capture.with_checksums(item))

    def test_timestamps_past_a_second(self) -> None:
        late = packet(ipv4_tcp(), usec=3_000_042)
        capture.write_pcap([late], self.path)
        self.assertEqual(struct.unpack('<II', self.path.read_bytes()[24:32]),
                         (3, 42))

    def test_a_64_kib_gso_packet_fits(self) -> None:
        big = packet(ipv4_tcp(bytes(65535 - 40)))
        capture.write_pcap([big], self.path)
        self.assertEqual(len(self.path.read_bytes()), 24 + 16 + 14 + 65535)

    def test_nothing_half_written(self) -> None:
        before = self.path.read_bytes()
        with mock.patch.object(Path, 'write_bytes',
                               side_effect=OSError('disk full')):
            with self.assertRaises(OSError):
                capture.write_pcap(self.packets[:1], self.path)
        self.assertEqual(self.path.read_bytes(), before)
        self.assertEqual(sorted(p.name for p in self.path.parent.iterdir()),
                         ['live.pcap'])


class LayoutAndExpertTest(unittest.TestCase):

    def test_layout_options(self) -> None:
        Option, layout_options = options.Option, options.parse_layout
        self.assertEqual(
            layout_options('<mss 1460,sackOK,TS val 7 ecr 0,nop,'
                                   'wscale 7>'),
            [Option(2, (1460,)), Option(4), Option(8, (7, 0)), Option(1),
             Option(3, (7,))])
        self.assertEqual(layout_options('<>'), [])
        self.assertEqual(layout_options(''), [])
        self.assertEqual(layout_options('<nop,nop,md5,FO 00112233>'),
                         [Option(1), Option(1), Option(19),
                          Option(34, ('00112233',))])
        with self.assertRaises(ValueError):
            layout_options('<malformed>')

    def test_live_connections_may_warn(self) -> None:
        serious = capture._live_serious
        sequence = 0x02000000
        self.assertFalse(serious(dissect.PI_WARN, sequence,
                                 'Connection reset (RST)'))
        self.assertFalse(serious(dissect.PI_WARN, sequence,
                                 'D-SACK Sequence'))
        self.assertFalse(serious(0x00200000, dissect.PI_PROTOCOL, 'chat'))
        self.assertTrue(serious(dissect.PI_WARN, dissect.PI_PROTOCOL,
                                'window scale shift exceeds 14'))
        self.assertTrue(serious(dissect.PI_ERROR, 0x01000000,
                                'Bad checksum'))
        self.assertTrue(serious(0x00400000, dissect.PI_MALFORMED,
                                'Malformed Packet'))

    def test_nop_count_across_mptcp_is_forgiven_only_there(self) -> None:
        nop4 = '4 NOP in a row - a router may have removed some options'
        mptcp = capture._serious_for(
            options.parse_layout('<nop,nop,TS val 1 ecr 2,dss len 22,nop,nop>'))
        self.assertFalse(mptcp(dissect.PI_WARN, dissect.PI_PROTOCOL, nop4))
        self.assertTrue(mptcp(dissect.PI_WARN, dissect.PI_PROTOCOL,
                              'window scale shift exceeds 14'))
        plain = capture._serious_for(
            options.parse_layout('<nop,nop,TS val 1 ecr 2,nop,nop,sack 1:2>'))
        self.assertTrue(plain(dissect.PI_WARN, dissect.PI_PROTOCOL, nop4))
        adjacent = capture._serious_for(
            options.parse_layout('<nop,nop,nop,nop,dss len 12>'))
        self.assertTrue(adjacent(dissect.PI_WARN, dissect.PI_PROTOCOL,
                                 nop4))


class ResultTest(unittest.TestCase):

    def result(self, **problems: List[str]) -> capture.Capture:
        return capture.Capture(Path('/w/live.log'), Path('/w/live.pcap'),
                               sample(), **problems)

    def test_summary_line(self) -> None:
        self.assertEqual(capture.summary_line(self.result()),
                         'wrote /w/live.pcap: 9 packets (6 IPv4, 3 IPv6) '
                         'from 5 cases; tshark: checksums good, 0 problems')
        bad = self.result(log_problems=['a'], tshark_problems=[
            'pkt 1 (x, log line 1): tshark: Checksum Status: Bad', 'b'])
        self.assertFalse(bad.ok)
        self.assertEqual(capture.summary_line(bad),
                         'wrote /w/live.pcap: 9 packets (6 IPv4, 3 IPv6) '
                         'from 5 cases; tshark: 1 checksum problems, 2 '
                         'problems; the log: 1 problems')

    def test_case_counts(self) -> None:
        self.assertEqual(capture.case_counts(sample()).splitlines(), [
            '  live_handshake_ipv4       3 (3 IPv4, 0 IPv6)',
            '  live_handshake_ipv6       2 (0 IPv4, 2 IPv6)',
            '  live_sack_blocks          1 (1 IPv4, 0 IPv6)',
            '  live_data                 2 (1 IPv4, 1 IPv6)',
            '  live_fastopen_request     1 (1 IPv4, 0 IPv6)'])

    def test_log_without_packets(self) -> None:
        log = DATA / 'ktap-pass.log'
        with self.assertRaises(HarnessError) as caught:
            capture.capture(ktap.read(log), Path('/nonexistent/live.pcap'))
        self.assertEqual(str(caught.exception),
                         f'no "# wire:" lines in {log}: the tcp_opt_live '
                         'suite did not print any packets')

    def test_missing_log(self) -> None:
        with self.assertRaises(HarnessError) as caught:
            ktap.read(Path('/nonexistent/test.log'))
        self.assertEqual(str(caught.exception),
                         'no KUnit log at /nonexistent/test.log: the KUnit '
                         'step failed')

    def test_suite_declared(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            kunit = Path(tmp)
            (kunit / 'a.c').write_text('.name = "tcp_opt_syn",\n')
            self.assertFalse(capture.suite_declared(kunit))
            (kunit / 'b.c').write_text('\t.name = "tcp_opt_live",\n')
            self.assertTrue(capture.suite_declared(kunit))


@unittest.skipUnless(HAVE_TSHARK, 'tshark is not installed')
class TsharkTest(unittest.TestCase):

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.pcap = Path(self.tmp.name) / 'live.pcap'

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def check(self, packets: List[WirePacket]) -> List[str]:
        capture.write_pcap(packets, self.pcap)
        return capture.check_with_tshark(packets, self.pcap)

    def test_sample_reads_cleanly(self) -> None:
        result = capture.capture(ktap.read(SAMPLE), self.pcap)
        self.assertEqual(result.problems, [])
        self.assertTrue(result.ok)
        self.assertTrue(capture.summary_line(result).endswith(
            'tshark: checksums good, 0 problems'))

    def test_unfinished_checksums_are_caught(self) -> None:
        packets = sample()
        with mock.patch.object(capture, 'with_checksums',
                               lambda item: item.data):
            problems = self.check(packets)
        for item in packets:
            self.assertIn(f'{item.label}: tshark: Checksum Status: Bad',
                          problems)

    def test_layout_text_against_tshark(self) -> None:
        packets = sample()
        packets[0].layout = packets[0].layout.replace('mss 65495',
                                                      'mss 1460')
        packets[5].layout = '<nop,nop,TS val 3067386601 ecr 3067386590>'
        packets[8].layout = '<malformed>'
        self.assertEqual(self.check(packets), [
            'pkt 0 (live_handshake_ipv4, log line 12): option 1 (MSS): '
            'layout 1460, tshark 65495',
            'pkt 5 (live_sack_blocks, log line 27): option kinds: layout '
            'NOP NOP TS, tshark NOP NOP TS NOP NOP SACK',
            "pkt 8 (live_fastopen_request, log line 64): layout text: "
            "unknown layout item 'malformed'"])

    def test_frame_count_mismatch(self) -> None:
        packets = sample()
        capture.write_pcap(packets[:3], self.pcap)
        self.assertEqual(capture.check_with_tshark(packets, self.pcap),
                         [f'tshark read 3 frames from {self.pcap}; 9 packets '
                          'were written'])

    def test_reset_is_no_problem(self) -> None:
        self.assertEqual(self.check([packet(ipv4_tcp(flags=0x14))]), [])

    def test_payload_on_a_known_port_stays_data(self) -> None:
        # Twenty 0xff bytes framed as DNS over TCP: tshark's DNS
        # dissector would call the frame malformed.
        dns = packet(ipv4_tcp(b'\x00\x14' + b'\xff' * 20, dport=53))
        self.assertEqual(self.check([dns]), [])
        with mock.patch.object(capture, 'TSHARK_ARGS', ()):
            self.assertTrue(any('Malformed' in text
                                for text in self.check([dns])))

    def test_truncated_option_is_flagged(self) -> None:
        data = bytearray(ipv4_tcp(bytes.fromhex('0101080a00000001')))
        data[32] = 7 << 4                # data offset 28: options in it
        item = packet(bytes(data), layout='<nop,nop,TS val 1 ecr 0>')
        problems = self.check([item])
        self.assertIn('pkt 0 (made, log line 1): option kinds: layout NOP '
                      'NOP TS, tshark NOP NOP', problems)


if __name__ == '__main__':
    unittest.main()

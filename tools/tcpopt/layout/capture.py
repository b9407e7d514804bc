"""The tcp_opt_live packets: from '# wire:' lines to a pcap tshark reads.

The live suite opens real TCP connections over loopback inside QEMU and
prints every packet it captures as KTAP diagnostic lines:

    # wire: pkt <N> ipv<4|6> len <L> gso <G> t <USEC> <case>: <layout>
    # wire: pkt <N> @<OFF> <HEX>

This module puts the chunks back together, finishes the checksums loopback
leaves half-done, writes a classic pcap and has tshark read it back.
"""

from __future__ import annotations

import os
import re
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from tcpopt.core.errors import HarnessError
from tcpopt.layout import dissect
from tcpopt.layout.dissect import Dissection, checksum
from tcpopt.layout.options import Option, parse_layout
from tcpopt.log.ktap import Run

SUITE = 'tcp_opt_live'

HEADER = re.compile(r'^\s*# wire: pkt (?P<number>\d+) ipv(?P<family>[46]) '
                    r'len (?P<length>\d+) gso (?P<gso>\d+) t (?P<usec>\d+) '
                    r'(?P<case>[^\s:]+):(?: (?P<layout>.*))?$')
DATA = re.compile(r'^\s*# wire: pkt (?P<number>\d+) @(?P<offset>\d+) '
                  r'(?P<hex>.*)$')
CHUNK = 128                          # bytes a data line carries at most
HEX = re.compile(r'(?:[0-9a-f]{2}){1,%d}' % CHUNK)

IPPROTO_TCP = 6
IPV6_HEADER = 40                     # no extension headers expected
ETHERTYPES = {4: 0x0800, 6: 0x86dd}
# Linux's loopback device puts zero MACs in its Ethernet header too.
LOOPBACK_MAC = bytes(6)
# libpcap's maximum: a 64 KiB GSO packet plus its Ethernet header fits.
SNAPLEN = 262144

# Every TCP payload as plain data: a test's bytes on a port tshark knows
# (80, say) must not be decoded as that protocol and called malformed.
TSHARK_ARGS = ('-d', 'tcp.port==1-65535,data')


@dataclass
class WirePacket:
    """One captured packet: its header line and its bytes."""

    number: int                      # run-wide, unique per boot
    family: int                      # 4 or 6
    length: int                      # bytes from the IP header on
    gso: int                         # the skb's gso_size, 0 if not GSO
    usec: int                        # since the suite started
    case: str
    layout: str                      # packetdrill notation, informative
    line: int                        # the header line's number in the log
    data: bytes = b''

    @property
    def label(self) -> str:
        return f'pkt {self.number} ({self.case}, log line {self.line})'

    @property
    def ip_header_length(self) -> int:
        return (self.data[0] & 0x0f) * 4 if self.family == 4 else IPV6_HEADER

    @property
    def protocol(self) -> int:
        return self.data[9] if self.family == 4 else self.data[6]

    @property
    def tcp(self) -> Optional[bytes]:
        """The TCP header and payload; None when the bytes cannot hold
        one."""
        segment = self.data[self.ip_header_length:]
        if self.protocol != IPPROTO_TCP or len(segment) < 20:
            return None
        return segment

    @property
    def options(self) -> bytes:
        """The TCP option area, as far as the data offset and the bytes
        allow."""
        segment = self.tcp
        return segment[20:(segment[12] >> 4) * 4] if segment else b''


# --- reading the log --------------------------------------------------------

def parse(wire: Iterable[Tuple[int, str]],
          source: str = 'log') -> List[WirePacket]:
    """Every packet of the log's '# wire:' lines (ktap.Run.wire: line
    number, text), its chunks joined; HarnessError naming the packet and
    the log line when the lines do not add up."""
    packets: List[WirePacket] = []
    headers: Dict[int, int] = {}     # packet number -> its header line
    current: Optional[WirePacket] = None
    pending = bytearray()
    for line_number, text in wire:
        where = f'{source}:{line_number}'
        header = HEADER.match(text)
        if header:
            _finish(current, pending, source)
            current, pending = _packet(header, line_number), bytearray()
            if current.number in headers:
                raise HarnessError(
                    f'{where}: pkt {current.number} appears twice (first '
                    f'at line {headers[current.number]})')
            headers[current.number] = line_number
            packets.append(current)
            continue
        data = DATA.match(text)
        if not data:
            raise HarnessError(f'{where}: unreadable wire line: '
                               f'{text.strip()[:80]}')
        _append(current, pending, data, where)
    _finish(current, pending, source)
    for packet in packets:
        _check_ip_header(packet, source)
    return packets


def by_number(packets: Iterable[WirePacket]) -> List[WirePacket]:
    """The pcap's order: the numbers the kernel gave its packets."""
    return sorted(packets, key=lambda packet: packet.number)


def _packet(header: re.Match, line_number: int) -> WirePacket:
    return WirePacket(number=int(header['number']),
                      family=int(header['family']),
                      length=int(header['length']), gso=int(header['gso']),
                      usec=int(header['usec']), case=header['case'],
                      layout=(header['layout'] or '').strip(),
                      line=line_number)


def _append(packet: Optional[WirePacket], pending: bytearray,
            data: re.Match, where: str) -> None:
    """One data line onto the open packet, in order and within its len."""
    number, offset = int(data['number']), int(data['offset'])
    if packet is None or packet.number != number:
        raise HarnessError(f'{where}: pkt {number}: data line without its '
                           'header line')
    if offset > len(pending):
        raise HarnessError(f'{where}: pkt {number}: chunk @{len(pending)} '
                           f'missing (this line is @{offset})')
    if offset < len(pending):
        raise HarnessError(f'{where}: pkt {number}: chunk @{offset} again '
                           f'(expected @{len(pending)})')
    if not HEX.fullmatch(data['hex']):
        raise HarnessError(f'{where}: pkt {number}: bad hex in chunk '
                           f'@{offset}: expected 2 to {2 * CHUNK} lowercase '
                           f'hex digits, got {data["hex"][:40]!r}')
    chunk = bytes.fromhex(data['hex'])
    if offset + len(chunk) > packet.length:
        raise HarnessError(f'{where}: pkt {number}: chunk @{offset} ends at '
                           f'byte {offset + len(chunk)}, past len '
                           f'{packet.length}')
    pending += chunk


def _finish(packet: Optional[WirePacket], pending: bytearray,
            source: str) -> None:
    if packet is None:
        return
    if len(pending) != packet.length:
        raise HarnessError(f'{source}:{packet.line}: pkt {packet.number}: '
                           f'len {packet.length} but its data lines carry '
                           f'{len(pending)} bytes (chunk @{len(pending)} '
                           'missing)')
    packet.data = bytes(pending)


def _check_ip_header(packet: WirePacket, source: str) -> None:
    """The bytes must be the IP packet the header line describes."""
    where = f'{source}:{packet.line}: pkt {packet.number}'
    version = packet.data[0] >> 4 if packet.data else None
    if version != packet.family:
        raise HarnessError(f'{where}: the header line says ipv'
                           f'{packet.family}, the bytes start with IP '
                           f'version {version}')
    if packet.family == 4:
        if packet.length < 20 or not \
                20 <= packet.ip_header_length <= packet.length:
            raise HarnessError(f'{where}: {packet.length} bytes cannot hold '
                               'the IPv4 header')
        stated = struct.unpack('!H', packet.data[2:4])[0]
    else:
        if packet.length < IPV6_HEADER:
            raise HarnessError(f'{where}: {packet.length} bytes cannot hold '
                               'the IPv6 header')
        stated = IPV6_HEADER + struct.unpack('!H', packet.data[4:6])[0]
    if stated != packet.length:
        raise HarnessError(f'{where}: the IPv{packet.family} header says '
                           f'{stated} bytes, the header line says len '
                           f'{packet.length}')


# --- checksums --------------------------------------------------------------

def pseudo_header(packet: WirePacket) -> bytes:
    """What the TCP checksum covers besides the segment (RFC 9293 3.1,
    RFC 8200 8.1)."""
    data, length = packet.data, packet.length - packet.ip_header_length
    if packet.family == 4:
        return data[12:20] + struct.pack('!BBH', 0, IPPROTO_TCP, length)
    return data[8:40] + struct.pack('!I3xB', length, IPPROTO_TCP)


def _folded_sum(data: bytes) -> int:
    """The one's complement sum CHECKSUM_PARTIAL leaves in the field."""
    return ~checksum(data) & 0xffff


def _same_sum(one: int, other: int) -> bool:
    """0x0000 and 0xffff are both zero in one's complement."""
    return one % 0xffff == other % 0xffff


def tcp_checksum(packet: WirePacket) -> int:
    """The right TCP checksum: over the pseudo-header and the segment
    with its checksum field zeroed."""
    segment = bytearray(packet.tcp or b'')
    segment[16:18] = b'\0\0'
    return checksum(pseudo_header(packet) + bytes(segment))


def with_checksums(packet: WirePacket) -> bytes:
    """The packet with a right IPv4 header checksum and a right TCP
    checksum; anything that is not TCP keeps its bytes."""
    data = bytearray(packet.data)
    if packet.family == 4:
        header = packet.ip_header_length
        data[10:12] = b'\0\0'
        data[10:12] = struct.pack('!H', checksum(bytes(data[:header])))
    if packet.tcp is not None:
        at = packet.ip_header_length + 16
        data[at:at + 2] = struct.pack('!H', tcp_checksum(packet))
    return bytes(data)


def checksum_problems(packet: WirePacket) -> List[str]:
    """A wrong IPv4 header checksum, or a TCP checksum field that is
    neither loopback's pseudo-header sum nor a finished checksum: either
    way the printed bytes are not what was sent."""
    problems = []
    if packet.family == 4 and \
            checksum(packet.data[:packet.ip_header_length]) != 0:
        stored = struct.unpack('!H', packet.data[10:12])[0]
        problems.append(f'{packet.label}: IPv4 header checksum '
                        f'0x{stored:04x} is wrong; the pcap carries the '
                        'right one')
    if packet.tcp is not None:
        stored = struct.unpack('!H', packet.tcp[16:18])[0]
        partial = _folded_sum(pseudo_header(packet))
        if not (_same_sum(stored, partial) or
                _same_sum(stored, tcp_checksum(packet))):
            problems.append(f'{packet.label}: TCP checksum field '
                            f'0x{stored:04x} is neither the pseudo-header '
                            f'sum 0x{partial:04x} (CHECKSUM_PARTIAL) nor the '
                            'finished checksum')
    return problems


def numbering_problems(packets: Sequence[WirePacket]) -> List[str]:
    """Packet numbers run 0, 1, 2, ...: a gap is a packet the log lost."""
    numbers = {packet.number for packet in packets}
    missing = [n for n in range(max(numbers, default=-1) + 1)
               if n not in numbers]
    if not missing:
        return []
    shown = ', '.join(map(str, missing[:10])) + \
        (' ...' if len(missing) > 10 else '')
    return [f'{len(missing)} packet numbers missing from the log: {shown}']


def time_problems(packets: Sequence[WirePacket]) -> List[str]:
    """t counts from the suite's start, so it never goes back from one
    packet to the next: a t that restarts puts the pcap out of order."""
    ordered = by_number(packets)
    back = [(before, after) for before, after in zip(ordered, ordered[1:])
            if after.usec < before.usec]
    if not back:
        return []
    before, after = back[0]
    return [f't goes back {len(back)} times in packet order, first at '
            f'{after.label}: t {after.usec} after t {before.usec} (t counts '
            'from the start of the suite)']


# --- the pcap ---------------------------------------------------------------

def ethernet_frame(packet: WirePacket) -> bytes:
    return LOOPBACK_MAC + LOOPBACK_MAC + \
        struct.pack('!H', ETHERTYPES[packet.family]) + with_checksums(packet)


def write_pcap(packets: Iterable[WirePacket], path: Path) -> None:
    """Written under a temporary name and renamed: an interrupted run
    leaves the previous file or none, never half of one."""
    data = dissect.pcap_bytes(((packet.usec, ethernet_frame(packet))
                               for packet in by_number(packets)),
                              SNAPLEN)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + '.new')
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


# --- tshark -----------------------------------------------------------------

def _live_serious(severity: int, group: int, message: str) -> bool:
    """A real connection draws notes and warnings (a RST, a D-SACK) that
    are no fault: errors, malformed frames and protocol violations are."""
    return severity >= dissect.PI_ERROR or group == dissect.PI_MALFORMED or \
        (group == dissect.PI_PROTOCOL and severity >= dissect.PI_WARN)


def _serious_for(expected: List[Option]) -> dissect.Serious:
    """_live_serious, bar tshark 4.0's NOP count across an AccECN or
    MPTCP option (dissect.nop_count_not_restarted())."""
    def serious(severity: int, group: int, message: str) -> bool:
        if message.startswith('4 NOP in a row') and \
                dissect.nop_count_not_restarted(expected):
            return False
        return _live_serious(severity, group, message)
    return serious


def frame_problems(packet: WirePacket, seen: Dissection) -> List[str]:
    """tshark's reading of one frame: checksums verified and good, no
    errors, and the option kinds and values of the layout text."""
    expected: Optional[List[Option]] = None
    layout_error = None
    if packet.tcp is not None:
        try:
            expected = parse_layout(packet.layout)
        except ValueError as error:
            layout_error = f'layout text: {error}'
    problems = dissect.expert_problems(seen, _serious_for(expected or []))
    if packet.family == 4 and 'ip.checksum.status' not in \
            seen.checksums_checked:
        problems.append('tshark did not verify the IPv4 header checksum')
    if packet.tcp is None:
        return problems
    if 'tcp.checksum.status' not in seen.checksums_checked:
        problems.append('tshark did not verify the TCP checksum')
    if expected is None:
        return problems + [str(layout_error)]
    return problems + dissect.option_problems(expected, packet.options, seen)


def check_with_tshark(packets: Sequence[WirePacket],
                      pcap: Path) -> List[str]:
    """What tshark finds wrong in the pcap written from packets; [] if
    it reads cleanly and agrees with every layout text."""
    ordered = by_number(packets)
    with tempfile.TemporaryDirectory(prefix='tcpopt-tshark-') as config:
        # An empty config dir: the user's preferences cannot change it.
        seen = dissect.run_tshark(pcap, Path(config), TSHARK_ARGS)
    if len(seen) != len(ordered):
        return [f'tshark read {len(seen)} frames from {pcap}; '
                f'{len(ordered)} packets were written']
    return [f'{packet.label}: {problem}'
            for packet, dissection in zip(ordered, seen)
            for problem in frame_problems(packet, dissection)]


# --- the whole job ----------------------------------------------------------

@dataclass
class Capture:
    log: Path
    pcap: Path
    packets: List[WirePacket]
    log_problems: List[str] = field(default_factory=list)
    tshark_problems: List[str] = field(default_factory=list)

    @property
    def problems(self) -> List[str]:
        return self.log_problems + self.tshark_problems

    @property
    def ok(self) -> bool:
        return not self.problems


def capture(run: Run, pcap: Path) -> Capture:
    """The run's packets: write the pcap, check it with tshark."""
    log = run.log or Path('log')
    packets = parse(run.wire, str(log))
    if not packets:
        raise HarnessError(f'no "# wire:" lines in {log}: the {SUITE} '
                           'suite did not print any packets')
    result = Capture(log, pcap, packets,
                     numbering_problems(packets) + time_problems(packets) +
                     [problem for packet in packets
                      for problem in checksum_problems(packet)])
    write_pcap(packets, pcap)
    result.tshark_problems = check_with_tshark(packets, pcap)
    return result


def suite_declared(kunit_dir: Path) -> bool:
    """Whether kunit/ has the live suite, so its packets are due."""
    return any(f'"{SUITE}"' in path.read_text()
               for path in sorted(kunit_dir.glob('*.c')))


def summary_line(result: Capture) -> str:
    families = [packet.family for packet in result.packets]
    cases = len({packet.case for packet in result.packets})
    bad_sums = [p for p in result.tshark_problems if 'checksum' in p.lower()]
    sums = f'{len(bad_sums)} checksum problems' if bad_sums \
        else 'checksums good'
    line = (f'wrote {result.pcap}: {len(families)} packets '
            f'({families.count(4)} IPv4, {families.count(6)} IPv6) from '
            f'{cases} cases; tshark: {sums}, '
            f'{len(result.tshark_problems)} problems')
    if result.log_problems:
        line += f'; the log: {len(result.log_problems)} problems'
    return line


def case_counts(packets: Sequence[WirePacket]) -> str:
    """One line per case, in capture order: packets by family."""
    by_case: Dict[str, List[int]] = {}
    for packet in by_number(packets):
        by_case.setdefault(packet.case, []).append(packet.family)
    width = max(map(len, by_case), default=0)
    return '\n'.join(f'  {case.ljust(width)}  {len(families):4} '
                     f'({families.count(4)} IPv4, {families.count(6)} IPv6)'
                     for case, families in by_case.items())

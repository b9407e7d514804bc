"""Decode every layout a second time with Wireshark's TCP dissector.

The kernel decodes its own bytes into the '# layout:' text; tshark is an
implementation that shares no code with Linux. Each layout's words go into a
synthetic Ethernet/IPv4/TCP frame, all frames into one classic pcap, and
tshark's PDML tree is compared option by option with the layout text.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Callable, Dict, Iterable, List, Optional, Sequence, Set,
                    Tuple)

from tcpopt.core.errors import HarnessError
from tcpopt.layout.options import (BY_NUMBER, FOEXP_MAGIC, KINDS,
                                   MPTCP_SUBTYPES, NAMES, OPTION_SPACE, SACK,
                                   Option, Tshark, parse_layout)
from tcpopt.log.ktap import Run

TSHARK_PACKAGE = 'tshark'

# Documentation addresses (RFC 5737) and locally administered MACs.
CLIENT = (bytes([192, 0, 2, 1]), 40000, bytes.fromhex('020000000001'))
SERVER = (bytes([192, 0, 2, 2]), 80, bytes.fromhex('020000000002'))
CLIENT_ISN = 1000
SERVER_ISN = 5000
# Established ACK number: above the test's D-SACK block (256:512), below its
# SACK blocks (4096 and up), so a D-SACK reads as one (RFC 2883 section 4).
EST_ACK = 2048

TCP_SYN = 0x02
TCP_ACK = 0x10

PCAP_MAGIC = 0xa1b2c3d4
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535

# Expert severities as PDML prints them (epan/proto.h PI_*).
PI_WARN = 0x00600000
PI_ERROR = 0x00800000
PI_MALFORMED = 0x07000000           # expert groups
PI_PROTOCOL = 0x09000000

# tshark preferences: absolute SACK edges, no checks that need a whole
# connection, and verify the checksums this module computes.
TSHARK_PREFS = ('tcp.relative_sequence_numbers:FALSE',
                'tcp.analyze_sequence_numbers:FALSE',
                'tcp.calculate_timestamps:FALSE',
                'tcp.check_checksum:TRUE',
                'ip.check_checksum:TRUE')


@dataclass(frozen=True)
class Packet:
    """One option area and the packet kind that carries it."""

    name: str                      # case name, '-2' for a second layout
    options: bytes
    kind: str = 'established'      # 'syn', 'synack' or 'established'


# --- frames and pcap -------------------------------------------------------

def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of data, odd length padded."""
    if len(data) % 2:
        data += b'\0'
    total = sum(struct.unpack(f'!{len(data) // 2}H', data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def _endpoints(kind: str, port: int = 0) -> Tuple[tuple, tuple, int, int,
                                                 int]:
    """Source, destination, seq, ack and flags for a packet kind; port
    moves the client port so every frame is a conversation of its own."""
    client = (CLIENT[0], CLIENT[1] + port, CLIENT[2])
    if kind == 'syn':
        return client, SERVER, CLIENT_ISN, 0, TCP_SYN
    if kind == 'synack':
        return SERVER, client, SERVER_ISN, CLIENT_ISN + 1, TCP_SYN | TCP_ACK
    if kind == 'established':
        return client, SERVER, CLIENT_ISN + 1, EST_ACK, TCP_ACK
    raise ValueError(f'unknown packet kind {kind!r}')


def tcp_segment(packet: Packet, port: int = 0) -> bytes:
    """TCP header plus options, checksummed over the IPv4 pseudo-header."""
    if len(packet.options) % 4 or len(packet.options) > OPTION_SPACE:
        raise ValueError(f'{packet.name}: option area of '
                         f'{len(packet.options)} bytes cannot be a TCP header')
    src, dst, seq, ack, flags = _endpoints(packet.kind, port)
    offset = (5 + len(packet.options) // 4) << 12
    header = struct.pack('!HHIIHHHH', src[1], dst[1], seq, ack,
                         offset | flags, 65535, 0, 0) + packet.options
    pseudo = src[0] + dst[0] + struct.pack('!BBH', 0, 6, len(header))
    return header[:16] + struct.pack('!H', checksum(pseudo + header)) + \
        header[18:]


def ipv4_packet(packet: Packet, number: int = 0) -> bytes:
    src, dst = _endpoints(packet.kind, number)[:2]
    segment = tcp_segment(packet, number)
    header = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(segment), number,
                         0x4000, 64, 6, 0, src[0], dst[0])
    header = header[:10] + struct.pack('!H', checksum(header)) + header[12:]
    return header + segment


def ethernet_frame(packet: Packet, number: int = 0) -> bytes:
    src, dst = _endpoints(packet.kind, number)[:2]
    return dst[2] + src[2] + b'\x08\x00' + ipv4_packet(packet, number)


def pcap_bytes(frames: Iterable[Tuple[int, bytes]],
               snaplen: int = SNAPLEN) -> bytes:
    """Classic little-endian libpcap, Ethernet: one record per
    (microseconds, frame) pair, every frame whole."""
    out = [struct.pack('<IHHiIII', PCAP_MAGIC, 2, 4, 0, 0, snaplen,
                       LINKTYPE_ETHERNET)]
    for usec, frame in frames:
        if len(frame) > snaplen:
            raise ValueError(f'a {len(frame)}-byte frame exceeds the '
                             f'snaplen {snaplen}')
        seconds, micro = divmod(usec, 1_000_000)
        out.append(struct.pack('<IIII', seconds, micro, len(frame),
                               len(frame)))
        out.append(frame)
    return b''.join(out)


def write_pcap(packets: Sequence[Packet], path: Path) -> None:
    """One frame per packet; timestamps count frames, so the file stays
    byte-identical."""
    Path(path).write_bytes(pcap_bytes(
        (number, ethernet_frame(packet, number))
        for number, packet in enumerate(packets)))


# --- tshark -----------------------------------------------------------------

@dataclass
class Dissection:
    """What tshark made of one frame."""

    options: List[Option] = field(default_factory=list)
    option_bytes: str = ''           # hex of tcp.options as tshark saw it
    header_length: int = 0
    experts: List[Tuple[int, int, str]] = field(default_factory=list)
    invalid: List[str] = field(default_factory=list)   # '*.invalid' fields
    bad_checksums: List[str] = field(default_factory=list)
    # Every checksum status field, good or bad: proof tshark checked it.
    checksums_checked: List[str] = field(default_factory=list)


def find_tshark() -> str:
    path = shutil.which('tshark')
    if not path:
        raise HarnessError('tshark is not installed: install the Debian '
                           f"package '{TSHARK_PACKAGE}' (apt-get install "
                           f'{TSHARK_PACKAGE})')
    return path


def run_tshark(pcap: Path, config_dir: Path,
               extra: Sequence[str] = ()) -> List[Dissection]:
    """tshark's PDML of every frame, reduced to what the checks need;
    extra arguments go before the preferences."""
    command = [find_tshark(), '-n', '-r', str(pcap), '-T', 'pdml', *extra]
    for pref in TSHARK_PREFS:
        command += ['-o', pref]
    # An empty config dir: the user's own preferences cannot change the
    # decoding.
    env = {'PATH': '/usr/bin:/bin', 'WIRESHARK_CONFIG_DIR': str(config_dir),
           'HOME': str(config_dir)}
    result = subprocess.run(command, capture_output=True, text=True, env=env,
                            check=False)
    if result.returncode:
        raise HarnessError(f'tshark failed ({result.returncode}): '
                           f'{result.stderr.strip()}')
    root = ET.fromstring(result.stdout)
    return [_dissection(packet) for packet in root.iter('packet')]


def _fields(element: ET.Element, name: str) -> List[ET.Element]:
    return [child for child in element.iter('field')
            if child.get('name') == name]


def _show(element: ET.Element, name: str) -> Optional[str]:
    found = _fields(element, name)
    return found[0].get('show') if found else None


def _dissection(packet: ET.Element) -> Dissection:
    seen = Dissection()
    for element in packet.iter('field'):
        name = element.get('name', '')
        if name == '_ws.expert':
            seen.experts.append((int(_show(element, '_ws.expert.severity')
                                     or 0),
                                 int(_show(element, '_ws.expert.group') or 0),
                                 _show(element, '_ws.expert.message') or ''))
        elif name.endswith('.invalid'):
            seen.invalid.append(element.get('showname') or name)
        elif name in ('ip.checksum.status', 'tcp.checksum.status'):
            seen.checksums_checked.append(name)
            if element.get('show') != '1':
                seen.bad_checksums.append(element.get('showname') or name)
        elif name == 'tcp.hdr_len':
            seen.header_length = int(element.get('show') or 0)
        elif name == 'tcp.options' and not seen.option_bytes:
            seen.option_bytes = element.get('value') or ''
            seen.options = [_option(child) for child in element
                            if _is_option(child.get('name', ''))]
    for proto in packet.iter('proto'):
        if proto.get('name') == '_ws.malformed':
            seen.invalid.append(proto.get('showname') or 'malformed packet')
    return seen


# The options tshark does not put under tcp.options.* (MPTCP's 'mptcp').
OWN_ELEMENTS = frozenset(kind.tshark.element for kind in KINDS
                         if kind.tshark.element)


def _is_option(name: str) -> bool:
    return name.startswith('tcp.options.') or name in OWN_ELEMENTS


def _option(element: ET.Element) -> Option:
    """One child of tcp.options: kind from tcp.option_kind, values as the
    kind's Tshark entry says (options.KINDS)."""
    number = int(_show(element, 'tcp.option_kind') or -1)
    kind = BY_NUMBER.get(number)
    if kind is None:
        return Option(number)
    read = READERS[kind.tshark.reader]
    return Option(number, read(element, kind.tshark.fields))


def _numbers(element: ET.Element, fields: Sequence[str]) -> Tuple:
    return tuple(int(_show(element, name) or -1) for name in fields)


def _edges(element: ET.Element, fields: Sequence[str]) -> Tuple:
    """SACK blocks: (left, right) pairs of the two edge fields."""
    left, right = ([int(e.get('show')) for e in _fields(element, name)]
                   for name in fields)
    return tuple(zip(left, right))


def _numbers_then_length(element: ET.Element, fields: Sequence[str]) -> Tuple:
    """TCP-AO, RFC 5925: the numbers, then the MAC's length in bytes."""
    last = _fields(element, fields[-1])
    return _numbers(element, fields[:-1]) + \
        (len(last[0].get('value') or '') // 2 if last else 0,)


def _prefixed(element: ET.Element, fields: Sequence[str]) -> Tuple:
    """AccECN, RFC 9768: every field under the prefix, in wire order."""
    return tuple(int(child.get('show')) for child in element.iter('field')
                 if child.get('name', '').startswith(fields[0]))


def _mptcp(element: ET.Element, fields: Sequence[str]) -> Tuple:
    """MPTCP (its own 'mptcp' element): the subtype's name and Length,
    as parse_layout() reads 'mp_capable len 4 ...'."""
    subtype, length = _numbers(element, fields)
    name = MPTCP_SUBTYPES[subtype] \
        if 0 <= subtype < len(MPTCP_SUBTYPES) else f'subtype {subtype}'
    return (name, length)


def _cookie(element: ET.Element, fields: Sequence[str]) -> Tuple:
    """Fast Open cookie as hex, '' for a request; kind 254 (a third field,
    its ExID) names its experiment when it is not Fast Open."""
    cookie_field, request_field = fields[:2]
    if element.get('name') == 'tcp.options.experimental' and \
            len(fields) > 2:
        exid = _show(element, fields[2]) or '?'
        if exid != f'0x{FOEXP_MAGIC:04x}':
            return (f'experiment {exid}',)
    cookie = _fields(element, cookie_field)
    if cookie:
        return (cookie[0].get('value') or '',)
    return ('',) if _fields(element, request_field) else \
        ('(no cookie field)',)


# options.Tshark.reader -> how that reader gets an option's values.
READERS: Dict[str, Callable[[ET.Element, Sequence[str]], Tuple]] = {
    'none': lambda element, fields: (),
    'numbers': _numbers,
    'edges': _edges,
    'numbers_then_length': _numbers_then_length,
    'prefixed': _prefixed,
    'mptcp': _mptcp,
    'cookie': _cookie,
}


# --- comparison -------------------------------------------------------------

def _dsack_expected(expected: List[Option]) -> bool:
    """tshark calls the first SACK block a D-SACK when it lies below the
    ACK number; the established frames ACK EST_ACK."""
    blocks = [opt.values for opt in expected
              if opt.kind == SACK.number and opt.values]
    return bool(blocks) and blocks[0][0][1] <= EST_ACK


def _longest_nop_run(options: List[Option]) -> int:
    longest = run = 0
    for opt in options:
        run = run + 1 if opt.kind == 1 else 0
        longest = max(longest, run)
    return longest


def _tshark_of(options: List[Option]) -> List[Tshark]:
    """The Tshark entries of the known kinds among @options."""
    return [BY_NUMBER[opt.kind].tshark for opt in options
            if opt.kind in BY_NUMBER]


def nop_count_not_restarted(expected: List[Option]) -> bool:
    """tshark 4.0 does not restart its NOP count at an AccECN or an MPTCP
    option (options.Tshark.nop_count_runs_on), so <nop,nop,TS,AccECN1,nop,
    nop> and <nop,nop,TS,dss len 22,nop,nop> draw '4 NOP in a row'.
    Forgiven only when the layout has one of them and no four NOPs are
    adjacent."""
    return any(tshark.nop_count_runs_on for tshark in _tshark_of(expected)) \
        and _longest_nop_run(expected) < 4


def forgiven(expected: List[Option]) -> Set[str]:
    """The expert infos the kinds of @expected draw that are no fault
    (options.Tshark.forgiven: MPTCP_FORGIVEN on the MPTCP rows)."""
    return {message for tshark in _tshark_of(expected)
            for message in tshark.forgiven}


# An expert's (severity, group, message) -> whether it is a problem.
Serious = Callable[[int, int, str], bool]


def expert_problems(seen: Dissection, serious: Serious) -> List[str]:
    """Invalid fields, bad checksums and the serious expert infos."""
    problems = [f'tshark: {text}' for text in seen.invalid]
    problems += [f'tshark: {text}' for text in seen.bad_checksums]
    for severity, group, message in seen.experts:
        if message not in seen.invalid and serious(severity, group, message):
            problems.append(f'tshark expert info: {message}')
    return problems


def _synthetic_serious(expected: List[Option]) -> Serious:
    """A synthetic frame should draw no warning at all, bar the D-SACK
    its layout asks for."""
    def serious(severity: int, group: int, message: str) -> bool:
        if message == 'D-SACK Sequence' and _dsack_expected(expected):
            return False
        if message.startswith('4 NOP in a row') and \
                nop_count_not_restarted(expected):
            return False
        if message in forgiven(expected):
            return False
        return severity >= PI_WARN or group in (PI_MALFORMED, PI_PROTOCOL)
    return serious


def compare(expected: List[Option], options: bytes,
            seen: Dissection) -> List[str]:
    """Differences between the layout text and tshark's reading."""
    return expert_problems(seen, _synthetic_serious(expected)) + \
        option_problems(expected, options, seen)


def option_problems(expected: List[Option], options: bytes,
                    seen: Dissection) -> List[str]:
    """The option bytes, header length, kinds and values tshark read,
    against the frame's bytes and the layout text."""
    problems: List[str] = []
    if seen.option_bytes != options.hex():
        problems.append(f'tshark saw option bytes {seen.option_bytes!r}, '
                        f'the frame carries {options.hex()!r}')
    if seen.header_length != 20 + len(options):
        problems.append(f'tshark saw a {seen.header_length}-byte header, '
                        f'expected {20 + len(options)}')
    want = [NAMES.get(opt.kind, str(opt.kind)) for opt in expected]
    got = [NAMES.get(opt.kind, str(opt.kind)) for opt in seen.options]
    if want != got:
        problems.append(f'option kinds: layout {" ".join(want) or "(none)"}'
                        f', tshark {" ".join(got) or "(none)"}')
        return problems
    for index, (mine, theirs) in enumerate(zip(expected, seen.options)):
        if mine.values != theirs.values:
            problems.append(f'option {index + 1} ({want[index]}): layout '
                            f'{mine.describe()}, tshark {theirs.describe()}')
    return problems


def check_packets(items: Sequence[Tuple[Packet, str]]) -> List[str]:
    """Dissect every packet; compare each with its layout text."""
    if not items:
        return []
    with tempfile.TemporaryDirectory(prefix='tcpopt-tshark-') as tmp:
        pcap = Path(tmp) / 'layouts.pcap'
        write_pcap([packet for packet, _ in items], pcap)
        config = Path(tmp) / 'config'
        config.mkdir()
        seen = run_tshark(pcap, config)
    if len(seen) != len(items):
        return [f'tshark read {len(seen)} frames, the pcap has {len(items)}']
    problems = []
    for (packet, layout), dissection in zip(items, seen):
        try:
            expected = parse_layout(layout)
        except ValueError as error:
            problems.append(f'{packet.name}: {error}')
            continue
        problems += [f'{packet.name}: {text}'
                     for text in compare(expected, packet.options,
                                         dissection)]
    return problems


def _kind(inputs: Dict[str, str], layout: str) -> str:
    """The packet kind from the case's inputs; without them, MSS means a
    SYN (only SYNs carry MSS in these suites)."""
    kind = inputs.get('kind')
    if kind:
        return kind
    return 'syn' if re.search(r'(^|,)mss ', layout) else 'established'


def check_with_tshark(run: Run) -> List[str]:
    """Problems where tshark and the layout lines disagree; [] if none.

    Each layout is named like its picture in docs/layouts (case, case-2).
    The run is read here, not through tables.rows(): tables.py imports
    this module, and the two must not import each other."""
    find_tshark()
    items, problems = [], []
    for case in run.cases:
        for index, layout in enumerate(case.layouts):
            name = case.name + (f'-{index + 1}' if index else '')
            if index >= len(case.words):
                problems.append(f'{name}: no "# words:" line to dissect')
                continue
            inputs = case.inputs[index] if index < len(case.inputs) else {}
            data = bytes.fromhex(''.join(case.words[index]))
            items.append((Packet(name, data, _kind(inputs, layout)), layout))
    return problems + check_packets(items)

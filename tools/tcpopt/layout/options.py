"""The host's TCP option vocabulary, and packetdrill text both ways.

KINDS is the one list of option kinds the harness knows, as kunit/'s
tcp_opt_decoders[] is in C: each kind's number, name and lengths, how its
bytes decode to spans and packetdrill text (decode, packetdrill), its
packetdrill pattern (parse_layout), its picture style (svg), how tshark
shows it (dissect), which trees write it (settings) and with which sweep
groups (sweep). model.py, the independent reference the sweep compares
the kernel with, keeps its own on purpose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

OPTION_SPACE = 40                    # MAX_TCP_OPTION_SPACE
FOEXP_MAGIC = 0xf989                 # RFC 7413 section 4.1.1 on kind 254
# RFC 9768 section 3.2.3: three 24-bit byte counters, in the order the
# kind names; an option carries the first 0 to 3 of them.
ACCECN_ORDER = {172: ('e0b', 'ceb', 'e1b'), 174: ('e1b', 'ceb', 'e0b')}
# RFC 8684 section 3: the 4-bit subtype in the high nibble of byte 2.
MPTCP_SUBTYPES = ('mp_capable', 'mp_join', 'dss', 'add_addr', 'remove_addr',
                  'mp_prio', 'mp_fail', 'mp_fastclose', 'mp_tcprst')


def bracketed(layout: str) -> str:
    """A layout as packetdrill writes an option list: '<mss 1460,nop>'."""
    return f'<{layout}>'


@dataclass(frozen=True)
class Span:
    """Consecutive bytes of the option space that form one thing."""

    kind: str                        # a key of svg.STYLE
    start: int
    length: int
    label: str
    text: str = ''                   # packetdrill notation; '' for none

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass
class Option:
    """One option, as the layout text or tshark describes it."""

    kind: int
    values: Tuple = ()

    def describe(self) -> str:
        """Values as the layout text writes them: '4096:8192 12288:16384'."""
        return ' '.join(':'.join(map(str, value)) if isinstance(value, tuple)
                        else str(value) for value in self.values) or '-'


class Style(NamedTuple):
    """How svg.py draws a span: fill, text colour, legend text."""

    fill: str
    ink: str
    legend: str


@dataclass(frozen=True)
class Tshark:
    """How Wireshark's TCP dissector shows a kind, for dissect.py."""

    reader: str = 'none'             # the dissect.READERS entry for values
    fields: Tuple[str, ...] = ()     # the PDML fields that reader reads
    element: str = ''                # its element, if not tcp.options.*
    # tshark 4.0 counts NOPs on across it: '4 NOP in a row' is no fault.
    nop_count_runs_on: bool = False
    forgiven: Tuple[str, ...] = ()   # expert infos its rows draw, no fault


def _u16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 2], 'big')


def _u32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 4], 'big')


def _numbers(match: re.Match) -> Tuple:
    """A pattern's groups as integers: 'mss (\\d+)' -> (1460,)."""
    return tuple(int(group) for group in match.groups())


def _nothing(match: re.Match) -> Tuple:
    return ()


def _any_body(body: bytes) -> bool:
    return True


# Bytes to spans: one decoder per kind, given a well-formed option; body
# excludes kind and length.
Decoder = Callable[['Kind', int, bytes], List[Span]]


@dataclass(frozen=True)
class Kind:
    """One option kind and everything the host knows about it."""

    number: int
    name: str                        # NAMES, and tshark's kind lists
    min_len: int                     # the lengths a well-formed one has
    max_len: int
    spans: Decoder
    # The spans its decoder makes, with their pictures, in legend order.
    styles: Tuple[Tuple[str, Style], ...]
    pattern: str = ''                # its packetdrill item, '' for none
    values: Callable[[re.Match], Tuple] = _nothing    # from pattern
    accepts: Callable[[bytes], bool] = _any_body      # a body's own checks
    tshark: Tshark = Tshark()
    since: Optional[Tuple[int, int]] = None   # first release writing it
    kconfig: str = ''                # the Kconfig symbol it needs
    sweep: str = ''                  # model.cross_product()'s flag for it

    @property
    def length(self) -> Optional[int]:
        """The one length it has, or None when variable."""
        return self.min_len if self.min_len == self.max_len else None

    def well_formed(self, body: bytes) -> bool:
        return self.min_len <= len(body) + 2 <= self.max_len and \
            self.accepts(body)


# --- the decoders -----------------------------------------------------------

def _mss(kind: Kind, at: int, body: bytes) -> List[Span]:
    mss = _u16(body, 0)
    return [Span('MSS', at, len(body) + 2, f'MSS {mss}', f'mss {mss}')]


def _wscale(kind: Kind, at: int, body: bytes) -> List[Span]:
    return [Span('WS', at, len(body) + 2, f'WS {body[0]}',
                 f'wscale {body[0]}')]


def _sackperm(kind: Kind, at: int, body: bytes) -> List[Span]:
    return [Span('SACK_PERM', at, len(body) + 2, 'SACK_PERM', 'sackOK')]


def _timestamp(kind: Kind, at: int, body: bytes) -> List[Span]:
    val, ecr = _u32(body, 0), _u32(body, 4)
    return [Span('TS', at, len(body) + 2, f'TS val {val} ecr {ecr}',
                 f'TS val {val} ecr {ecr}')]


def _sack(kind: Kind, at: int, body: bytes) -> List[Span]:
    edges = [f'{_u32(body, i)}:{_u32(body, i + 4)}'
             for i in range(0, len(body), 8)]
    count = len(edges)
    return [Span('SACK', at, len(body) + 2,
                 f'SACK {count} block{"s" if count != 1 else ""}',
                 ' '.join(['sack'] + edges))]


def _whole_blocks(body: bytes) -> bool:
    return len(body) % 8 == 0


def _sack_edges(match: re.Match) -> Tuple:
    return tuple(tuple(int(x) for x in edge.split(':'))
                 for edge in match[1].split())


def _md5(kind: Kind, at: int, body: bytes) -> List[Span]:
    # The writer leaves the hash to the hashing code: its own span.
    return [Span('MD5', at, 2, 'MD5', 'md5'),
            Span('MD5_HASH', at + 2, len(body), 'hash (16 bytes)')]


def _ao(kind: Kind, at: int, body: bytes) -> List[Span]:
    """RFC 5925 section 2.2: KeyID, RNextKeyID, then the MAC."""
    keyid, rnext, mac = body[0], body[1], len(body) - 2
    text = f'AO keyid {keyid} rnext {rnext} mac {mac}'
    return [Span('AO', at, 4, f'AO key {keyid}/{rnext}', text),
            Span('AO_MAC', at + 4, mac, f'MAC ({mac} bytes)')]


def _cookie_label(name: str, cookie: bytes) -> str:
    return f'{name} cookie request' if not cookie else \
        f'{name} {len(cookie)}-byte cookie'


def _cookie_span(name: str, at: int, size: int, cookie: bytes) -> Span:
    return Span(name, at, size, _cookie_label(name, cookie),
                (f'{name} ' + cookie.hex()).strip())


def _fastopen(kind: Kind, at: int, body: bytes) -> List[Span]:
    return [_cookie_span('FO', at, len(body) + 2, body)]


def _fastopen_exp(kind: Kind, at: int, body: bytes) -> List[Span]:
    return [_cookie_span('FOEXP', at, len(body) + 2, body[2:])]


def _fastopen_magic(body: bytes) -> bool:
    """RFC 6994: kind 254 is shared; Fast Open's magic claims it."""
    return _u16(body, 0) == FOEXP_MAGIC


def _cookie(match: re.Match) -> Tuple:
    return (match[1],)


def _accecn(kind: Kind, at: int, body: bytes) -> List[Span]:
    fields = [(label, int.from_bytes(body[i:i + 3], 'big'))
              for label, i in zip(ACCECN_ORDER[kind.number],
                                  range(0, len(body), 3))]
    text = ' '.join([kind.name] +
                    [f'{label} {value}' for label, value in fields])
    count = len(fields)
    return [Span('ACCECN', at, len(body) + 2,
                 f'{kind.name} {count} field{"s" if count != 1 else ""}',
                 text)]


def _whole_fields(body: bytes) -> bool:
    return len(body) % 3 == 0


def _accecn_values(match: re.Match) -> Tuple:
    return tuple(int(x) for x in match[1].split()[1::2])


def _mptcp(kind: Kind, at: int, body: bytes) -> List[Span]:
    """'mp_capable len 4 v1 flags 0x01', 'mp_join len 12 backup id 3'."""
    size = len(body) + 2
    subtype = body[0] >> 4
    if subtype >= len(MPTCP_SUBTYPES):
        text = f'mptcp subtype {subtype} len {size}'
        return [Span('MPTCP', at, size, f'MPTCP subtype {subtype}', text)]
    name = MPTCP_SUBTYPES[subtype]
    text = f'{name} len {size}'
    if subtype == 0 and size >= 4:
        text += f' v{body[0] & 0xf} flags 0x{body[1]:02x}'
    elif subtype == 1 and size >= 4:
        text += (' backup' if body[0] & 1 else '') + f' id {body[1]}'
    return [Span('MPTCP', at, size, name.upper(), text)]


def _mptcp_values(match: re.Match) -> Tuple:
    return (match[1], int(match[2]))


# --- the kinds --------------------------------------------------------------

ACCECN_PATTERN = r'((?: (?:e0b|ceb|e1b) \d+)*)'
# tshark 4.0 on the MPTCP rows: it reads MP_CAPABLE's C flag (RFC 8684
# 3.1) as one of RFC 6824's algorithm bits; it names the infinite mapping
# a row asks for; and it pairs the unrelated rows of one pcap into one
# MPTCP connection, whose keys then differ from frame to frame.
MPTCP_FORGIVEN = ('Unsupported algorithm', 'Fallback to infinite mapping',
                  'The echoed key in the ACK of the MPTCP handshake does '
                  'not match the key of the SYN/ACK')

# MSS is the one strong red: where it sits is what reviewers look for
# first. The list's order is the pictures' legend order.
MSS = Kind(2, 'MSS', 4, 4, _mss,
           (('MSS', Style('#d62728', '#ffffff', 'MSS (kind 2)')),),
           r'mss (\d+)', _numbers,
           tshark=Tshark('numbers', ('tcp.options.mss_val',)))
SACK_PERM = Kind(4, 'SACK_PERM', 2, 2, _sackperm,
                 (('SACK_PERM', Style('#2ca02c', '#ffffff',
                                      'SACK_PERM (kind 4)')),),
                 'sackOK')
TS = Kind(8, 'TS', 10, 10, _timestamp,
          (('TS', Style('#1f77b4', '#ffffff', 'TS (kind 8)')),),
          r'TS val (\d+) ecr (\d+)', _numbers,
          tshark=Tshark('numbers', ('tcp.options.timestamp.tsval',
                                    'tcp.options.timestamp.tsecr')))
WS = Kind(3, 'WS', 3, 3, _wscale,
          (('WS', Style('#ff7f0e', '#000000', 'WS (kind 3)')),),
          r'wscale (\d+)', _numbers,
          tshark=Tshark('numbers', ('tcp.options.wscale.shift',)))
SACK = Kind(5, 'SACK', 10, OPTION_SPACE, _sack,
            (('SACK', Style('#9467bd', '#ffffff', 'SACK (kind 5)')),),
            r'sack((?: \d+:\d+)*)', _sack_edges, accepts=_whole_blocks,
            tshark=Tshark('edges', ('tcp.options.sack_le',
                                    'tcp.options.sack_re')))
MD5 = Kind(19, 'MD5', 18, 18, _md5,
           (('MD5', Style('#8c564b', '#ffffff', 'MD5 (kind 19)')),
            ('MD5_HASH', Style('url(#hatch-hash)', '#000000',
                               'MD5 hash, written later'))),
           'md5', kconfig='CONFIG_TCP_MD5SIG')
AO = Kind(29, 'AO', 4, OPTION_SPACE, _ao,
          (('AO', Style('#e377c2', '#000000', 'TCP-AO (kind 29)')),
           ('AO_MAC', Style('#f7d1ea', '#000000',
                            'TCP-AO MAC, written later'))),
          r'AO keyid (\d+) rnext (\d+) mac (\d+)', _numbers,
          tshark=Tshark('numbers_then_length', ('tcp.options.ao.keyid',
                                                'tcp.options.ao.rnextkeyid',
                                                'tcp.options.ao.mac')),
          since=(6, 7), kconfig='CONFIG_TCP_AO', sweep='ao')
FO = Kind(34, 'FO', 2, OPTION_SPACE, _fastopen,
          (('FO', Style('#17becf', '#000000', 'Fast Open (kind 34)')),),
          r'FO ?([0-9a-f]*)', _cookie,
          tshark=Tshark('cookie', ('tcp.options.tfo.cookie',
                                   'tcp.options.tfo.request')))
FOEXP = Kind(254, 'FOEXP', 4, OPTION_SPACE, _fastopen_exp,
             (('FOEXP', Style('#bcbd22', '#000000',
                              'Fast Open exp. (kind 254)')),),
             r'FOEXP ?([0-9a-f]*)', _cookie, accepts=_fastopen_magic,
             tshark=Tshark('cookie', ('tcp.options.tfo.cookie',
                                      'tcp.options.tfo.request',
                                      'tcp.options.experimental.exid')))
ACCECN0 = Kind(172, 'AccECN0', 2, 2 + 3 * 3, _accecn,    # 0 to 3 fields
               (('ACCECN', Style('#98df8a', '#000000',
                                 'AccECN (kind 172/174)')),),
               'AccECN0' + ACCECN_PATTERN, _accecn_values,
               accepts=_whole_fields,
               tshark=Tshark('prefixed', ('tcp.options.acc_ecn.',),
                             nop_count_runs_on=True),
               since=(6, 18), sweep='accecn')
# The same option with the fields in the other order (ACCECN_ORDER).
ACCECN1 = replace(ACCECN0, number=174, name='AccECN1',
                  pattern='AccECN1' + ACCECN_PATTERN)
MPTCP = Kind(30, 'MPTCP', 3, OPTION_SPACE, _mptcp,
             (('MPTCP', Style('#ffbb78', '#000000', 'MPTCP (kind 30)')),),
             '(' + '|'.join(MPTCP_SUBTYPES) + r') len (\d+)(.*)',
             _mptcp_values,
             tshark=Tshark('mptcp', ('tcp.options.mptcp.subtype',
                                     'tcp.option_len'), element='mptcp',
                           nop_count_runs_on=True, forgiven=MPTCP_FORGIVEN),
             kconfig='CONFIG_MPTCP', sweep='mptcp')

KINDS: Tuple[Kind, ...] = (MSS, SACK_PERM, TS, WS, SACK, MD5, AO, FO, FOEXP,
                           ACCECN0, ACCECN1, MPTCP)
BY_NUMBER: Dict[int, Kind] = {kind.number: kind for kind in KINDS}
NAMES = {0: 'EOL', 1: 'NOP', **{kind.number: kind.name for kind in KINDS}}


def span_styles() -> Dict[str, Style]:
    """Every span key the decoders make, with its style, in legend order."""
    styles: Dict[str, Style] = {}
    for kind in KINDS:
        for key, style in kind.styles:
            styles.setdefault(key, style)
    return styles


# --- bytes to text ----------------------------------------------------------

def _malformed(at: int, data: bytes, why: str) -> Span:
    return Span('MALFORMED', at, len(data) - at, f'malformed: {why}',
                f'malformed({data[at:].hex()})')


def _option_spans(data: bytes, at: int, length: int) -> List[Span]:
    """The spans of the option at @at, whose length fits in @data."""
    body = data[at + 2:at + length]
    kind = BY_NUMBER.get(data[at])
    if kind is None:
        return [Span('UNKNOWN', at, length, f'kind {data[at]}',
                     f'kind {data[at]} len {length}')]
    if not kind.well_formed(body):
        return [Span('MALFORMED', at, length, f'{kind.name} len {length}?',
                     f'malformed({data[at:at + length].hex()})')]
    return kind.spans(kind, at, body)


def decode(data: bytes) -> List[Span]:
    """Spans covering every byte of data, in order."""
    spans: List[Span] = []
    at = 0
    while at < len(data):
        kind = data[at]
        if kind == 1:
            spans.append(Span('NOP', at, 1, 'nop', 'nop'))
            at += 1
            continue
        if kind == 0:
            # RFC 9293: nothing after EOL is an option.
            spans.append(Span('EOL', at, len(data) - at, 'EOL', 'eol'))
            break
        if at + 2 > len(data):
            spans.append(_malformed(at, data, f'kind {kind} without length'))
            break
        length = data[at + 1]
        if length < 2 or at + length > len(data):
            spans.append(_malformed(at, data, f'kind {kind} len {length}'))
            break
        spans.extend(_option_spans(data, at, length))
        at += length
    return spans


def packetdrill(data: bytes) -> str:
    """The packetdrill notation of data, as the KUnit layout lines write it."""
    return ','.join(span.text for span in decode(data) if span.text)


# --- text to options --------------------------------------------------------

def _layout_item(kind: Kind) -> Tuple[re.Pattern, Callable]:
    return (re.compile(kind.pattern),
            lambda match: Option(kind.number, kind.values(match)))


LAYOUT_ITEMS = [(re.compile('nop'), lambda match: Option(1))] + \
    [_layout_item(kind) for kind in KINDS if kind.pattern]


def parse_layout(text: str) -> List[Option]:
    """'mss 1460,nop,wscale 7', bracketed or not, -> options; ValueError
    on unknown items."""
    inner = text.strip()
    if inner.startswith('<') and inner.endswith('>'):
        inner = inner[1:-1]
    options = []
    for item in (part.strip() for part in inner.split(',')
                 if inner.strip()):
        for pattern, build in LAYOUT_ITEMS:
            match = pattern.fullmatch(item)
            if match:
                options.append(build(match))
                break
        else:
            raise ValueError(f'unknown layout item {item!r}')
    return options

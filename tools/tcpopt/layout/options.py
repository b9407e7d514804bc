"""The host's TCP option vocabulary, and packetdrill text both ways.

Kinds, names, lengths, the Fast Open magic, the AccECN field orders, and
packetdrill text both ways (bytes to text: decode, packetdrill; text to
options: parse_layout). svg, dissect, report, capture and tables use it;
model.py, the independent reference the sweep compares the kernel with,
keeps its own on purpose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Tuple

OPTION_SPACE = 40                    # MAX_TCP_OPTION_SPACE
FOEXP_MAGIC = 0xf989                 # RFC 7413 section 4.1.1 on kind 254

# kind -> (name, required length or None when variable)
KINDS: Dict[int, Tuple[str, int | None]] = {
    2: ('MSS', 4), 3: ('WS', 3), 4: ('SACK_PERM', 2), 5: ('SACK', None),
    8: ('TS', 10), 19: ('MD5', 18), 29: ('AO', None), 30: ('MPTCP', None),
    34: ('FO', None),
    172: ('AccECN0', None), 174: ('AccECN1', None), 254: ('FOEXP', None),
}
NAMES = {0: 'EOL', 1: 'NOP', **{kind: v[0] for kind, v in KINDS.items()}}
# RFC 9768 section 3.2.3: three 24-bit byte counters, in the order the
# kind names; an option carries the first 0 to 3 of them.
ACCECN_ORDER = {172: ('e0b', 'ceb', 'e1b'), 174: ('e1b', 'ceb', 'e0b')}
# RFC 8684 section 3: the 4-bit subtype in the high nibble of byte 2.
MPTCP_SUBTYPES = ('mp_capable', 'mp_join', 'dss', 'add_addr', 'remove_addr',
                  'mp_prio', 'mp_fail', 'mp_fastclose', 'mp_tcprst')


def bracketed(layout: str) -> str:
    """A layout as packetdrill writes an option list: '<mss 1460,nop>'."""
    return f'<{layout}>'


# --- bytes to text ----------------------------------------------------------

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


def _u16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 2], 'big')


def _u32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 4], 'big')


def _option(kind: int, at: int, body: bytes) -> List[Span]:
    """Spans of a well-formed option; body excludes kind and length."""
    size = len(body) + 2
    if kind == 2:
        mss = _u16(body, 0)
        return [Span('MSS', at, size, f'MSS {mss}', f'mss {mss}')]
    if kind == 3:
        return [Span('WS', at, size, f'WS {body[0]}', f'wscale {body[0]}')]
    if kind == 4:
        return [Span('SACK_PERM', at, size, 'SACK_PERM', 'sackOK')]
    if kind == 8:
        val, ecr = _u32(body, 0), _u32(body, 4)
        return [Span('TS', at, size, f'TS val {val} ecr {ecr}',
                     f'TS val {val} ecr {ecr}')]
    if kind == 5:
        edges = [f'{_u32(body, i)}:{_u32(body, i + 4)}'
                 for i in range(0, len(body), 8)]
        count = len(edges)
        return [Span('SACK', at, size,
                     f'SACK {count} block{"s" if count != 1 else ""}',
                     ' '.join(['sack'] + edges))]
    if kind == 19:
        return [Span('MD5', at, 2, 'MD5', 'md5'),
                Span('MD5_HASH', at + 2, 16, 'hash (16 bytes)')]
    if kind == 29 and size >= 4:
        keyid, rnext, mac = body[0], body[1], size - 4
        text = f'AO keyid {keyid} rnext {rnext} mac {mac}'
        return [Span('AO', at, 4, f'AO key {keyid}/{rnext}', text),
                Span('AO_MAC', at + 4, mac, f'MAC ({mac} bytes)')]
    if kind in ACCECN_ORDER:
        return [_accecn_span(kind, at, body)]
    if kind == 30:
        return [_mptcp_span(at, body)]
    if kind == 34:
        return [Span('FO', at, size, _cookie_label('FO', body),
                     ('FO ' + body.hex()).strip())]
    cookie = body[2:]
    return [Span('FOEXP', at, size, _cookie_label('FOEXP', cookie),
                 ('FOEXP ' + cookie.hex()).strip())]


def _accecn_span(kind: int, at: int, body: bytes) -> Span:
    name = KINDS[kind][0]
    fields = [(label, int.from_bytes(body[i:i + 3], 'big'))
              for label, i in zip(ACCECN_ORDER[kind], range(0, len(body), 3))]
    text = ' '.join([name] + [f'{label} {value}' for label, value in fields])
    count = len(fields)
    return Span('ACCECN', at, len(body) + 2,
                f'{name} {count} field{"s" if count != 1 else ""}', text)


def _mptcp_span(at: int, body: bytes) -> Span:
    """'mp_capable len 4 v1 flags 0x01', 'mp_join len 12 backup id 3'."""
    size = len(body) + 2
    subtype = body[0] >> 4
    if subtype >= len(MPTCP_SUBTYPES):
        text = f'mptcp subtype {subtype} len {size}'
        return Span('MPTCP', at, size, f'MPTCP subtype {subtype}', text)
    name = MPTCP_SUBTYPES[subtype]
    text = f'{name} len {size}'
    if subtype == 0 and size >= 4:
        text += f' v{body[0] & 0xf} flags 0x{body[1]:02x}'
    elif subtype == 1 and size >= 4:
        text += (' backup' if body[0] & 1 else '') + f' id {body[1]}'
    return Span('MPTCP', at, size, name.upper(), text)


def _cookie_label(name: str, cookie: bytes) -> str:
    return f'{name} cookie request' if not cookie else \
        f'{name} {len(cookie)}-byte cookie'


def _malformed(at: int, data: bytes, why: str) -> Span:
    return Span('MALFORMED', at, len(data) - at, f'malformed: {why}',
                f'malformed({data[at:].hex()})')


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
        name, want = KINDS.get(kind, ('', None))
        if length < 2 or at + length > len(data):
            spans.append(_malformed(at, data, f'kind {kind} len {length}'))
            break
        body = data[at + 2:at + length]
        if not name:
            spans.append(Span('UNKNOWN', at, length, f'kind {kind}',
                              f'kind {kind} len {length}'))
        elif not _well_formed(kind, length, want, body):
            spans.append(Span('MALFORMED', at, length,
                              f'{name} len {length}?',
                              f'malformed({data[at:at + length].hex()})'))
        else:
            spans.extend(_option(kind, at, body))
        at += length
    return spans


def _well_formed(kind: int, length: int, want: int | None,
                 body: bytes) -> bool:
    if want is not None:
        return length == want
    if kind == 5:
        return (length - 2) % 8 == 0 and length > 2
    if kind == 254:
        return length >= 4 and _u16(body, 0) == FOEXP_MAGIC
    if kind in ACCECN_ORDER:
        return (length - 2) % 3 == 0 and length <= 2 + 3 * 3
    if kind == 30:
        return length >= 3
    return True


def packetdrill(data: bytes) -> str:
    """The packetdrill notation of data, as the KUnit layout lines write it."""
    return ','.join(span.text for span in decode(data) if span.text)


# --- text to options --------------------------------------------------------

@dataclass
class Option:
    """One option, as the layout text or tshark describes it."""

    kind: int
    values: Tuple = ()

    def describe(self) -> str:
        """Values as the layout text writes them: '4096:8192 12288:16384'."""
        return ' '.join(':'.join(map(str, value)) if isinstance(value, tuple)
                        else str(value) for value in self.values) or '-'


LAYOUT_ITEMS = [
    (re.compile(r'^nop$'), lambda m: Option(1)),
    (re.compile(r'^mss (\d+)$'), lambda m: Option(2, (int(m[1]),))),
    (re.compile(r'^wscale (\d+)$'), lambda m: Option(3, (int(m[1]),))),
    (re.compile(r'^sackOK$'), lambda m: Option(4)),
    (re.compile(r'^TS val (\d+) ecr (\d+)$'),
     lambda m: Option(8, (int(m[1]), int(m[2])))),
    (re.compile(r'^sack((?: \d+:\d+)*)$'),
     lambda m: Option(5, tuple(tuple(int(x) for x in edge.split(':'))
                               for edge in m[1].split()))),
    (re.compile(r'^md5$'), lambda m: Option(19)),
    (re.compile(r'^AO keyid (\d+) rnext (\d+) mac (\d+)$'),
     lambda m: Option(29, (int(m[1]), int(m[2]), int(m[3])))),
    (re.compile(r'^AccECN([01])((?: (?:e0b|ceb|e1b) \d+)*)$'),
     lambda m: Option(172 + 2 * int(m[1]),
                      tuple(int(x) for x in m[2].split()[1::2]))),
    (re.compile(r'^(' + '|'.join(MPTCP_SUBTYPES) + r') len (\d+)(.*)$'),
     lambda m: Option(30, (m[1], int(m[2])))),
    (re.compile(r'^FO ?([0-9a-f]*)$'), lambda m: Option(34, (m[1],))),
    (re.compile(r'^FOEXP ?([0-9a-f]*)$'), lambda m: Option(254, (m[1],))),
]


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
            match = pattern.match(item)
            if match:
                options.append(build(match))
                break
        else:
            raise ValueError(f'unknown layout item {item!r}')
    return options

"""A picture of one layout: the 40-byte TCP option space as a 4-byte grid.

The bytes are decoded here from the RFC encodings, not taken from the
kernel's layout text, so a picture that disagrees with its row's
packetdrill line shows the bytes, not the kernel's reading of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple
from xml.sax.saxutils import escape, quoteattr

OPTION_SPACE = 40                    # MAX_TCP_OPTION_SPACE
ROW_BYTES = 4                        # options are laid out in 32-bit words
FOEXP_MAGIC = 0xf989                 # RFC 7413 section 4.1.1 on kind 254

# kind -> (name, required length or None when variable)
KINDS: Dict[int, Tuple[str, int | None]] = {
    2: ('MSS', 4), 3: ('WS', 3), 4: ('SACK_PERM', 2), 5: ('SACK', None),
    8: ('TS', 10), 19: ('MD5', 18), 29: ('AO', None), 34: ('FO', None),
    172: ('AccECN0', None), 174: ('AccECN1', None), 254: ('FOEXP', None),
}
# RFC 9768 section 3.2.3: three 24-bit byte counters, in the order the
# kind names; an option carries the first 0 to 3 of them.
ACCECN_ORDER = {172: ('e0b', 'ceb', 'e1b'), 174: ('e1b', 'ceb', 'e0b')}

# Span kind -> (fill, text colour, legend text). MSS is the one strong red:
# where it sits is what reviewers look for first.
STYLE: Dict[str, Tuple[str, str, str]] = {
    'MSS': ('#d62728', '#ffffff', 'MSS (kind 2)'),
    'SACK_PERM': ('#2ca02c', '#ffffff', 'SACK_PERM (kind 4)'),
    'TS': ('#1f77b4', '#ffffff', 'TS (kind 8)'),
    'WS': ('#ff7f0e', '#000000', 'WS (kind 3)'),
    'SACK': ('#9467bd', '#ffffff', 'SACK (kind 5)'),
    'MD5': ('#8c564b', '#ffffff', 'MD5 (kind 19)'),
    'MD5_HASH': ('url(#hatch-hash)', '#000000', 'MD5 hash, written later'),
    'AO': ('#e377c2', '#000000', 'TCP-AO (kind 29)'),
    'AO_MAC': ('#f7d1ea', '#000000', 'TCP-AO MAC, written later'),
    'FO': ('#17becf', '#000000', 'Fast Open (kind 34)'),
    'FOEXP': ('#bcbd22', '#000000', 'Fast Open exp. (kind 254)'),
    'ACCECN': ('#98df8a', '#000000', 'AccECN (kind 172/174)'),
    'NOP': ('#d9d9d9', '#000000', 'NOP padding'),
    'EOL': ('#7f7f7f', '#ffffff', 'EOL'),
    'UNKNOWN': ('#f7b6d2', '#000000', 'unknown kind'),
    'MALFORMED': ('#ff00ff', '#000000', 'malformed'),
    'UNUSED': ('url(#hatch-unused)', '#777777', 'unused'),
}

# Geometry, in pixels; integers only so the output never depends on float
# formatting.
CELL_W = 130
CELL_H = 44
LEFT = 64
RIGHT = 16
CHAR_W = 7                           # rough width of a 12px character
LABEL_FONT = 12
GRID_W = ROW_BYTES * CELL_W
WIDTH = LEFT + GRID_W + RIGHT
WRAP = (WIDTH - 2 * RIGHT) // CHAR_W


@dataclass(frozen=True)
class Span:
    """Consecutive bytes of the option space that form one thing."""

    kind: str                        # a key of STYLE
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
    return True


def packetdrill(data: bytes) -> str:
    """The packetdrill notation of data, as the KUnit layout lines write it."""
    return ','.join(span.text for span in decode(data) if span.text)


def _segments(start: int, length: int) -> List[Tuple[int, int, int]]:
    """(row, first column, bytes) pieces of a span, one per grid row."""
    pieces = []
    while length > 0:
        row, col = divmod(start, ROW_BYTES)
        take = min(length, ROW_BYTES - col)
        pieces.append((row, col, take))
        start += take
        length -= take
    return pieces


def _fit(text: str, width: int) -> str:
    """Elide a label that would spill out of its rectangle."""
    room = max(1, (width - 10) // CHAR_W)
    return text if len(text) <= room else text[:max(1, room - 1)] + '…'


def _wrap(text: str) -> List[str]:
    """Break the packetdrill line after commas to fit the picture."""
    lines, line = [], ''
    for item in text.split(','):
        candidate = f'{line},{item}' if line else item
        if line and len(candidate) > WRAP:
            lines.append(line + ',')
            line = item
        else:
            line = candidate
    return lines + [line]


def _defs() -> List[str]:
    return [
        '<defs>',
        '<pattern id="hatch-unused" width="8" height="8" '
        'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="8" height="8" fill="#ffffff"/>'
        '<line x1="0" y1="0" x2="0" y2="8" stroke="#c8c8c8" '
        'stroke-width="3"/></pattern>',
        '<pattern id="hatch-hash" width="8" height="8" '
        'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="8" height="8" fill="#e7d4cf"/>'
        '<line x1="0" y1="0" x2="0" y2="8" stroke="#c49c94" '
        'stroke-width="3"/></pattern>',
        '</defs>',
    ]


def _text(x: int, y: int, body: str, size: int = LABEL_FONT,
          fill: str = '#000000', anchor: str = 'start',
          weight: str = 'normal', family: str = '') -> str:
    font = f' font-family="{family}"' if family else ''
    bold = f' font-weight="{weight}"' if weight != 'normal' else ''
    return (f'<text x="{x}" y="{y}" font-size="{size}" fill="{fill}" '
            f'text-anchor="{anchor}"{bold}{font}>{escape(body)}</text>')


def _span_svg(span: Span, top: int) -> List[str]:
    fill, ink, _ = STYLE[span.kind]
    out = [f'<g class="span {span.kind.lower()}">',
           f'<title>{escape(_tooltip(span))}</title>']
    for index, (row, col, take) in enumerate(_segments(span.start,
                                                       span.length)):
        x, y, width = LEFT + col * CELL_W, top + row * CELL_H, take * CELL_W
        out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{width - 2}" '
                   f'height="{CELL_H - 2}" fill="{fill}" stroke="#333333" '
                   'stroke-width="1"/>')
        if index == 0:
            out.append(_text(x + 6, y + 16, _fit(span.label, width),
                             fill=ink, weight='bold'))
    out.append('</g>')
    return out


def _tooltip(span: Span) -> str:
    last = span.end - 1
    where = f'byte {span.start}' if span.length == 1 else \
        f'bytes {span.start}-{last}'
    return f'{span.label}: {where}'


def _byte_cells(data: bytes, spans: List[Span], top: int) -> List[str]:
    """Cell borders and each written byte's hex value."""
    ink = {offset: STYLE[span.kind][1] for span in spans
           for offset in range(span.start, span.end)}
    out = ['<g class="bytes" font-family="monospace">']
    for offset in range(OPTION_SPACE):
        row, col = divmod(offset, ROW_BYTES)
        x, y = LEFT + col * CELL_W, top + row * CELL_H
        out.append(f'<rect x="{x}" y="{y}" width="{CELL_W}" '
                   f'height="{CELL_H}" fill="none" stroke="#ffffff" '
                   'stroke-opacity="0.7" stroke-width="1"/>')
        if offset < len(data):
            out.append(_text(x + CELL_W - 6, y + CELL_H - 7,
                             f'{data[offset]:02x}', size=11,
                             fill=ink.get(offset, '#000000'), anchor='end'))
    out.append('</g>')
    return out


def _axes(top: int) -> List[str]:
    out = ['<g class="axes" font-family="monospace" fill="#444444">']
    for col in range(ROW_BYTES):
        out.append(_text(LEFT + col * CELL_W + CELL_W // 2, top - 6,
                         f'+{col}', size=11, fill='#444444', anchor='middle'))
    for row in range(OPTION_SPACE // ROW_BYTES):
        out.append(_text(LEFT - 10, top + row * CELL_H + CELL_H // 2 + 4,
                         str(row * ROW_BYTES), size=11, fill='#444444',
                         anchor='end'))
    out.append('</g>')
    return out


def _legend(kinds: List[str], top: int) -> Tuple[List[str], int]:
    """Swatches for the kinds in the picture; returns lines and height."""
    per_row, item_w = 3, (WIDTH - LEFT) // 3
    out = ['<g class="legend">']
    for index, kind in enumerate(kinds):
        row, col = divmod(index, per_row)
        x, y = LEFT + col * item_w, top + row * 22
        fill = STYLE[kind][0]
        out.append(f'<rect x="{x}" y="{y}" width="16" height="14" '
                   f'fill="{fill}" stroke="#333333" stroke-width="1"/>')
        out.append(_text(x + 22, y + 12, STYLE[kind][2], size=11))
    out.append('</g>')
    rows = (len(kinds) + per_row - 1) // per_row
    return out, rows * 22


def render_svg(name: str, data: bytes, size: int, layout: str) -> str:
    """The picture of one layout: data is the option bytes the writer
    wrote, size what the calculator reserved, layout the kernel's
    packetdrill text (shown in the title, not used for drawing)."""
    written = data[:OPTION_SPACE]
    spans = decode(written)
    if len(written) < OPTION_SPACE:
        unused = OPTION_SPACE - len(written)
        spans.append(Span('UNUSED', len(written), unused,
                          f'unused ({unused} bytes)'))
    title = [f'{name}', f'{size} / {OPTION_SPACE} bytes of option space']
    if len(data) != size:
        title.append(f'(the words cover {len(data)} bytes, not {size})')
    notation = _wrap(f'<{layout}>')
    top = 30 + 20 * len(title) + 16 * len(notation) + 22
    grid_h = OPTION_SPACE // ROW_BYTES * CELL_H
    kinds = [kind for kind in STYLE if any(s.kind == kind for s in spans)]
    legend, legend_h = _legend(kinds, top + grid_h + 18)
    height = top + grid_h + 18 + legend_h + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
           f'height="{height}" viewBox="0 0 {WIDTH} {height}" '
           'font-family="sans-serif" role="img" '
           f'aria-label={quoteattr(f"{name}: {size} of 40 option bytes")}>',
           f'<title>{escape(name)}: &lt;{escape(layout)}&gt;</title>']
    out += _defs()
    out.append(f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>')
    out.append(_text(RIGHT, 26, title[0], size=16, weight='bold'))
    for index, line in enumerate(title[1:], 1):
        out.append(_text(RIGHT, 26 + 20 * index, line, size=13))
    base = 26 + 20 * len(title)
    for index, line in enumerate(notation):
        out.append(_text(RIGHT, base + 16 * index, line, size=12,
                         fill='#333333', family='monospace'))
    for span in spans:
        out += _span_svg(span, top)
    out += _byte_cells(written, spans, top)
    out += _axes(top)
    out += legend
    out.append('</svg>')
    return '\n'.join(out) + '\n'

"""A picture of one layout: the 40-byte TCP option space as a 4-byte grid.

The bytes are decoded from the RFC encodings (options.decode()), not taken
from the kernel's layout text, so a picture that disagrees with its row's
packetdrill line shows the bytes, not the kernel's reading of them.
"""

from __future__ import annotations

from typing import Dict, List, Tuple
from xml.sax.saxutils import escape, quoteattr

from tcpopt.layout.options import (OPTION_SPACE, Span, Style, bracketed,
                                   decode, span_styles)

ROW_BYTES = 4                        # options are laid out in 32-bit words

# Span kind -> style: the option kinds' own (options.KINDS), then the
# spans that are no kind's.
STYLE: Dict[str, Style] = {
    **span_styles(),
    'NOP': Style('#d9d9d9', '#000000', 'NOP padding'),
    'EOL': Style('#7f7f7f', '#ffffff', 'EOL'),
    'UNKNOWN': Style('#f7b6d2', '#000000', 'unknown kind'),
    'MALFORMED': Style('#ff00ff', '#000000', 'malformed'),
    'UNUSED': Style('url(#hatch-unused)', '#777777', 'unused'),
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
    notation = _wrap(bracketed(layout))
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

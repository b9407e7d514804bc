"""docs/layouts/<tree>.md and one SVG per layout, rendered from a KUnit run.

The output is committed and golden: it depends on the run alone (no
timestamps, no absolute paths, fixed ordering), so check_golden() can say
which case changed between the committed docs and a new run.

    ./run.sh layouts [--tree 6.1] [--update [--png]]
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tcpopt.layout.options import bracketed
from tcpopt.layout.svg import render_svg
from tcpopt.log.ktap import Case, Run

DOCS_DIR = Path(__file__).resolve().parents[3] / 'docs' / 'layouts'
PICTURE_SUFFIXES = ('.svg', '.png')
HEADER = ('| case | inputs | options (packetdrill) | words | size '
          '| mss delta | picture |')
RULE = '| --- | --- | --- | --- | ---: | ---: | --- |'
# The name cell of a case's second layout: 'tcp_opt_dsack_..._test (2)'.
NAME_CELL = re.compile(r'^(?P<name>\S+?)(?: \((?P<index>\d+)\))?$')


@dataclass(frozen=True)
class Row:
    """One layout of one case: a table row and a picture."""

    suite: str
    case: str
    index: int                       # 0 for a case's first layout
    layout: Optional[str]            # None: the case printed no layout
    size: Optional[int]
    words: Optional[List[str]]       # None: no '# words:' line
    inputs: Dict[str, str] = field(default_factory=dict)
    mss_delta: Optional[int] = None

    @property
    def stem(self) -> str:
        """File name of the picture, without suffix."""
        suffix = f'-{self.index + 1}' if self.index else ''
        return self.case + suffix

    @property
    def data(self) -> bytes:
        return bytes.fromhex(''.join(self.words or []))


def _at(values: Sequence, index: int):
    return values[index] if index < len(values) else None


def case_rows(case: Case) -> List[Row]:
    """The case's layouts in the order it printed them (one row if none)."""
    count = max(1, len(case.layouts))
    return [Row(suite=case.suite, case=case.name, index=i,
                layout=_at(case.layouts, i), size=_at(case.sizes, i),
                words=_at(case.words, i), inputs=_at(case.inputs, i) or {},
                mss_delta=_at(case.mss_deltas, i))
            for i in range(count)]


def documented(case: Case) -> bool:
    """Cases with a layout to show; skipped rows (TCP-AO on 6.1) and the
    sweep groups, which print records rather than layouts, stay out, but a
    failure always shows."""
    return bool(case.layouts) or case.status == 'fail'


def rows(run: Run) -> List[Row]:
    return [row for case in run.cases if documented(case)
            for row in case_rows(case)]


# --- the inputs column ------------------------------------------------------

def _flag(inputs: Dict[str, str], key: str) -> bool:
    return inputs.get(key, '0') not in ('0', '')


def _sacks(inputs: Dict[str, str]) -> str:
    count = int(inputs.get('sacks', '0') or 0)
    text = f'{count} SACK' + ('' if count == 1 else 's')
    if _flag(inputs, 'dsack'):
        text = f'{text} + D-SACK' if count else 'D-SACK'
    return text


def describe_inputs(inputs: Dict[str, str]) -> str:
    """'kind=syn ts=1 ...' as 'SYN ts sack ws, mss 1460, wscale 7'."""
    if not inputs:
        return ''
    kind = inputs.get('kind', '?')
    head = {'syn': 'SYN', 'synack': 'SYN-ACK',
            'established': 'est'}.get(kind, kind)
    flags = [key for key in ('ts', 'sack', 'ws', 'md5', 'syncookie')
             if _flag(inputs, key)]
    if kind == 'established':
        flags = [key for key in flags if key in ('ts', 'md5')]
    parts = [' '.join([head] + flags)]
    if kind == 'established':
        parts.append(_sacks(inputs))
    else:
        parts.append(f'mss {inputs.get("mss", "?")}')
        if _flag(inputs, 'ws'):
            parts.append(f'wscale {inputs.get("wscale", "?")}')
    if _flag(inputs, 'ao_maclen'):
        parts.append(f'AO mac {inputs["ao_maclen"]}')
    if _flag(inputs, 'accecn'):
        parts.append(_accecn(inputs))
    if _flag(inputs, 'retrans'):
        parts.append('retransmitted')
    if inputs.get('mptcp', '') not in ('', '0'):
        parts.append(_mptcp(inputs))
    fo = inputs.get('fo', 'none')
    if fo not in ('none', ''):
        exp = ' exp' if fo == 'exp' else ''
        length = inputs.get('fo_len', '0')
        parts.append(f'FO{exp} ' + ('request' if length == '0' else length))
    return ', '.join(parts)


def _mptcp(inputs: Dict[str, str]) -> str:
    """'MP_CAPABLE csum deny-join-id0', 'MP_JOIN backup'."""
    name = {'mpc': 'MP_CAPABLE', 'mpj': 'MP_JOIN'}.get(inputs['mptcp'],
                                                      inputs['mptcp'])
    flags = [text for key, text in (('mptcp_csum', 'csum'),
                                    ('mptcp_deny_join_id0', 'deny-join-id0'),
                                    ('mptcp_backup', 'backup'))
             if _flag(inputs, key)]
    if _flag(inputs, 'mptcp_ack'):
        flags.append(f'data ACK {inputs["mptcp_ack"]}')
    return ' '.join([name] + flags)


def _accecn(inputs: Dict[str, str]) -> str:
    """'AccECN option 2 owes 1 fields demanded send failed'."""
    parts = [f'AccECN option {inputs.get("ecn_option", "?")}']
    if _flag(inputs, 'minlen'):
        parts.append(f'owes {inputs["minlen"]} fields')
    parts += [text for key, text in (('demand', 'demanded'),
                                     ('fail_send', 'send failed'))
              if _flag(inputs, key)]
    return ' '.join(parts)


# --- Markdown ---------------------------------------------------------------

def _code(text: str) -> str:
    return f'`{text}`' if text else '—'


def _row_line(row: Row, tree: str) -> str:
    name = row.case if row.index == 0 else f'{row.case} ({row.index + 1})'
    if row.layout is None:
        options, words = '(no layout line)', '—'
    else:
        options = _code(bracketed(row.layout))
        words = _code(' '.join(row.words)) if row.words is not None else '—'
    picture = f'[svg]({tree}/{row.stem}.svg)' \
        if row.layout is not None and row.words is not None else '—'
    cells = [name, describe_inputs(row.inputs), options, words,
             '' if row.size is None else str(row.size),
             '' if row.mss_delta is None else str(row.mss_delta), picture]
    return '| ' + ' | '.join(cell.replace('|', '\\|') for cell in cells) + \
        ' |'


def _intro(tree: str) -> List[str]:
    return [
        f'# TCP option layouts: linux {tree}',
        '',
        'Every option layout the KUnit suites in `kunit/tcp_options_test.c` '
        f'saw the {tree} writer produce, one row per layout (a case that '
        'writes two segments has two rows). *inputs* are the row\'s '
        '`# input:` line, *options* the writer\'s bytes decoded into '
        'packetdrill notation by the test, *words* the 32-bit words of the '
        'option area as written (`a5a5a5a5` is MD5 hash space the writer '
        'leaves to the hashing code), *size* what the calculator reserved, '
        '*mss delta* `mss_cache - tcp_current_mss()` for established rows. '
        'Each picture shows the 40-byte option space: MSS in red, NOP '
        'padding grey, unused space hatched. Generated by '
        '`tools/tcpopt/layout/tables.py` from the KUnit log; do not edit by '
        'hand: '
        f'`./run.sh layouts --tree {tree} --update` '
        'rewrites it, and without `--update` it lists the cases that differ.',
    ]


def _suites(run: Run) -> List[Tuple[str, List[Case]]]:
    """Suites in log order with their cases."""
    order: Dict[str, List[Case]] = {}
    for case in run.cases:
        if documented(case):
            order.setdefault(case.suite, []).append(case)
    return list(order.items())


def _document(run: Run, tree: str) -> Tuple[List[str], Dict[str, List[str]]]:
    """All lines of the Markdown file, and the row lines of each case."""
    lines = _intro(tree)
    by_case: Dict[str, List[str]] = {}
    for suite, cases in _suites(run):
        lines += ['', f'## {suite}', '', HEADER, RULE]
        for case in cases:
            case_lines = [_row_line(row, tree) for row in case_rows(case)]
            by_case.setdefault(case.name, []).extend(case_lines)
            lines += case_lines
    return lines, by_case


def render_markdown(run: Run, tree: str) -> str:
    return '\n'.join(_document(run, tree)[0]) + '\n'


def render_pictures(run: Run) -> Dict[str, str]:
    """'<case>[-2].svg' -> SVG text, for every layout with words."""
    pictures = {}
    for row in rows(run):
        if row.layout is None or row.words is None:
            continue
        size = row.size if row.size is not None else len(row.data)
        label = row.case if row.index == 0 else \
            f'{row.case} (layout {row.index + 1})'
        pictures[f'{row.stem}.svg'] = render_svg(label, row.data, size,
                                                 row.layout)
    return pictures


def write_layouts(run: Run, tree: str, out_dir: Path,
                  png: bool = False) -> List[Path]:
    """Write <tree>.md and <tree>/*.svg (and PNGs with png=True when
    rsvg-convert exists); pictures of cases no longer in the run go."""
    out_dir = Path(out_dir)
    picture_dir = out_dir / tree
    picture_dir.mkdir(parents=True, exist_ok=True)
    markdown = out_dir / f'{tree}.md'
    markdown.write_text(render_markdown(run, tree))
    written = [markdown]
    pictures = render_pictures(run)
    for name, text in sorted(pictures.items()):
        path = picture_dir / name
        path.write_text(text)
        written.append(path)
    converter = shutil.which('rsvg-convert') if png else None
    for name in sorted(pictures) if converter else []:
        target = picture_dir / (name[:-4] + '.png')
        subprocess.run([converter, '-o', str(target), name], check=True,
                       cwd=picture_dir)
        written.append(target)
    keep = {path.name for path in written}
    for stale in sorted(picture_dir.iterdir()):
        if stale.suffix in PICTURE_SUFFIXES and stale.name not in keep:
            stale.unlink()
    return written


# --- golden check -----------------------------------------------------------

def _committed_rows(lines: List[str]) -> Tuple[Dict[str, List[str]],
                                               List[str]]:
    """Case row lines of a committed file, and every other line."""
    by_case: Dict[str, List[str]] = {}
    rest: List[str] = []
    for line in lines:
        cell = line.split(' | ', 1)[0][2:] if line.startswith('| ') else ''
        match = NAME_CELL.match(cell) if line not in (HEADER, RULE) else None
        if match:
            by_case.setdefault(match.group('name'), []).append(line)
        else:
            rest.append(line)
    return by_case, rest


def _diff(old: List[str], new: List[str], old_name: str,
          new_name: str) -> List[str]:
    return list(difflib.unified_diff(old, new, old_name, new_name,
                                     lineterm=''))


def _picture_names(run: Run, case: str) -> List[str]:
    return [f'{row.stem}.svg' for row in rows(run)
            if row.case == case and row.layout is not None and
            row.words is not None]


def _read_lines(path: Path) -> Optional[List[str]]:
    return path.read_text().splitlines() if path.is_file() else None


def _case_diff(case: str, old_rows: Dict[str, List[str]],
               new_rows: List[str], pictures: Dict[str, str],
               picture_dir: Path, tree: str) -> Optional[str]:
    """The block for one case: its row lines, then each of its pictures."""
    diff = _diff(old_rows.get(case, []), new_rows, f'committed {tree}.md',
                 'this run')
    for name, text in pictures.items():
        old_svg = _read_lines(picture_dir / name)
        if old_svg is None:
            diff.append(f'picture {tree}/{name} is not committed')
            continue
        diff += _diff(old_svg, text.splitlines(), f'committed {tree}/{name}',
                      'this run')
    if not diff:
        return None
    state = 'differs' if case in old_rows else \
        'missing from the committed docs'
    return '\n'.join([f'case {case}: {state}'] + diff)


def check_golden(run: Run, tree: str, out_dir: Path) -> List[str]:
    """One readable diff block per case whose rows or pictures differ from
    out_dir (plus one for the rest of the document); empty if equal."""
    out_dir = Path(out_dir)
    md_name = f'{tree}.md'
    committed = _read_lines(out_dir / md_name)
    if committed is None:
        return [f'{md_name} is not committed yet: run with --update']
    lines, rendered = _document(run, tree)
    old_rows, old_rest = _committed_rows(committed)
    pictures = render_pictures(run)
    blocks = []
    for case, new_rows in rendered.items():
        own = {name: pictures[name] for name in _picture_names(run, case)}
        block = _case_diff(case, old_rows, new_rows, own, out_dir / tree,
                           tree)
        if block:
            blocks.append(block)
    blocks += [f'case {case}: committed but not in this run\n' +
               '\n'.join(old_rows[case])
               for case in old_rows if case not in rendered]
    new_rest = _committed_rows(lines)[1]
    if old_rest != new_rest:
        blocks.append('\n'.join([f'{md_name}: text outside the case rows '
                                 'differs'] +
                                _diff(old_rest, new_rest,
                                      f'committed {md_name}', 'this run')))
    return blocks + _extra_pictures(out_dir / tree, pictures, tree)


def _extra_pictures(picture_dir: Path, pictures: Dict[str, str],
                    tree: str) -> List[str]:
    if not picture_dir.is_dir():
        return []
    return [f'{tree}/{path.name}: committed picture of no layout in this run'
            for path in sorted(picture_dir.iterdir())
            if path.suffix == '.svg' and path.name not in pictures]

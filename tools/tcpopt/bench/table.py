"""The bench's table on the terminal and its performance.md.

The document is written to a temporary file and renamed into place, so
an interrupted bench never leaves half of it.
"""

from __future__ import annotations

import datetime
import os
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from tcpopt.bench.hotpath import HotPath, Scaling
from tcpopt.bench.kconfig_costs import Cost, delta, effect


@dataclass
class Row:
    """One line of the developer-loop table."""

    what: str
    how: str
    seconds: Optional[float]
    target: Optional[float] = None
    notes: List[str] = field(default_factory=list)
    failed: bool = False

    @property
    def met(self) -> str:
        if self.failed or self.seconds is None:
            return 'no' if self.target else ''
        if self.target is None:
            return ''
        return 'yes' if self.seconds <= self.target else 'no'


@dataclass
class Boots:
    """kunit.py exec, booting the built kernel to its verdict."""

    accel: str
    seconds: List[float] = field(default_factory=list)
    failures: int = 0
    unavailable: str = ''           # why this accelerator was not used

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.seconds) if self.seconds else None


@dataclass
class Report:
    command: str
    machine: Dict[str, str]
    tree: str
    qemu: str
    rows: List[Row] = field(default_factory=list)
    boots: List[Boots] = field(default_factory=list)
    hot: Optional[HotPath] = None
    costs: List[Cost] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every run worked; targets and ratios are findings, not errors."""
        return not any(row.failed for row in self.rows) and \
            not any(boot.failures for boot in self.boots) and \
            (self.hot is None or not self.hot.problem)


# --- the machine -------------------------------------------------------------

def read_text(path: str) -> str:
    try:
        return Path(path).read_text(errors='replace')
    except OSError:
        return ''


def field_of(text: str, name: str) -> str:
    """'name : value' (cpuinfo) or 'name: value' (meminfo), first one."""
    for line in text.splitlines():
        key, _, value = line.partition(':')
        if key.strip() == name:
            return value.strip()
    return ''


def memory(meminfo: str) -> str:
    total = field_of(meminfo, 'MemTotal')
    try:
        kib = int(total.split()[0])
    except (IndexError, ValueError):
        return 'unknown'
    return f'{kib / 1024 ** 2:.1f} GiB (MemTotal {kib} kB)'


def git_commit(repo: Path) -> str:
    def git(*args: str) -> str:
        try:
            done = subprocess.run(['git', *args], cwd=repo,
                                  capture_output=True, text=True, check=False)
        except OSError:             # no git, or no such checkout
            return ''
        return done.stdout.strip() if done.returncode == 0 else ''
    head = git('rev-parse', '--short', 'HEAD') or 'unknown'
    dirty = git('status', '--porcelain', '--untracked-files=no')
    return head + (' with uncommitted changes' if dirty else '')


def machine(repo: Path, read: Callable[[str], str] = read_text,
            now: Optional[datetime.datetime] = None) -> Dict[str, str]:
    """nproc, memory, CPU model, date and commit, for the document."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return {
        'nproc': str(len(os.sched_getaffinity(0))),
        'memory': memory(read('/proc/meminfo')),
        'CPU': field_of(read('/proc/cpuinfo'), 'model name') or 'unknown',
        'date': now.strftime('%Y-%m-%d %H:%M UTC'),
        'commit': git_commit(repo),
    }


# --- numbers -----------------------------------------------------------------

def seconds(value: Optional[float]) -> str:
    return '—' if value is None else f'{value:.1f}'


def target(value: Optional[float]) -> str:
    return '—' if value is None else f'< {value:g}'


def spread(values: List[float]) -> str:
    return f'{min(values):.1f}–{max(values):.1f}' if values else '—'


def boot_cells(boot: Boots) -> List[str]:
    if boot.unavailable:
        return [boot.accel, '0', '—', '—',
                f'not available ({boot.unavailable})']
    note = f'{boot.failures} failed' if boot.failures else 'all passed'
    return [boot.accel, str(len(boot.seconds)), seconds(boot.median),
            spread(boot.seconds), note]


def hot_cells(hot: HotPath) -> List[List[str]]:
    cells = []
    for c in hot.comparisons:
        ratios = c.rep_ratios()
        span = (f'{min(ratios):.3f}–{max(ratios):.3f}' if ratios else '—')
        cells.append([c.layout, c.function,
                      f'{c.pristine_ns:.1f}' if c.pristine else '—',
                      f'{c.patched_ns:.1f}' if c.patched else '—',
                      f'{c.ratio:.3f}' if c.pristine and c.patched else '—',
                      f'{c.noise * 100:.1f} % ({span})'
                      if c.pristine and c.patched else '—',
                      f'{c.reps}'])
    return cells


def scale_cells(scale: Scaling) -> List[List[str]]:
    return [[f'{step.factor}x', str(step.combinations),
             f'{step.guest_us:.0f}', f'{step.us_per_combination:.3f}',
             f'{scale.drift(step) * 100:+.0f} %'] for step in scale.steps]


def cost_cells(costs: List[Cost]) -> List[List[str]]:
    whole = costs[0]
    cells = [['(whole .kunitconfig)', seconds(whole.seconds), '—',
              str(whole.objects), '—',
              'built' if whole.built else f'FAILED: {whole.problem}']]
    for cost in costs[1:]:
        saved = delta(cost, whole)
        cells.append([f'without {cost.option}', seconds(cost.seconds),
                      seconds(saved), str(cost.objects),
                      str(whole.objects - cost.objects) if cost.built
                      else '—', effect(cost, whole)])
    return cells


def row_cells(row: Row) -> List[str]:
    return [row.what, row.how, seconds(row.seconds), target(row.target),
            row.met, '; '.join(row.notes)]


# --- tables ------------------------------------------------------------------

def markdown_table(head: List[str], rows: List[List[str]]) -> str:
    def line(cells: List[str]) -> str:
        return '| ' + ' | '.join(c.replace('|', '\\|') for c in cells) + ' |'
    return '\n'.join([line(head), line(['---'] * len(head))] +
                     [line(r) for r in rows])


def plain_table(head: List[str], rows: List[List[str]]) -> str:
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    return '\n'.join('  '.join(cell.ljust(width) for cell, width in
                               zip(r, widths)).rstrip()
                     for r in [head] + rows)


ROW_HEAD = ['what', 'how', 's', 'target s', 'met?', 'notes']
BOOT_HEAD = ['accel', 'runs', 'median s', 'min–max s', '']
HOT_HEAD = ['layout', 'function', 'pristine ns', 'patched ns', 'ratio',
            'spread (per-rep ratios)', 'reps']
SCALE_HEAD = ['factor', 'combinations', 'guest µs', 'µs per combination',
              'vs 1x']
COST_HEAD = ['build', 's', 'saves s', 'objects', 'fewer objects', 'effect']


def sections(report: Report, table: Callable) -> List[tuple[str, str]]:
    """(title, body) per section, in either table style."""
    parts = [('Developer loop', table(ROW_HEAD, [row_cells(r)
                                                 for r in report.rows])),
             ('QEMU boot to verdict (kunit.py exec, no build)',
              table(BOOT_HEAD, [boot_cells(b) for b in report.boots]))]
    hot = report.hot
    if hot is not None and hot.problem:
        parts.append(('Hot path (tcp_opt_bench)',
                      f'not measured: {hot.problem}'))
    elif hot is not None:
        body = table(HOT_HEAD, hot_cells(hot))
        body += ''.join(f'\n\nnote: {note}' for note in hot.notes)
        parts.append((f'Hot path (tcp_opt_bench, guest under {hot.accel})',
                      body))
        if hot.scaling is not None:
            steps = table(SCALE_HEAD, scale_cells(hot.scaling)) + '\n\n' \
                if hot.scaling.steps else ''
            parts.append(('Sweep scaling (tcp_opt_bench in the main build)',
                          steps + hot.scaling.verdict()))
    if report.costs:
        parts.append(('.kunitconfig: what each option costs',
                      table(COST_HEAD, cost_cells(report.costs))))
    return parts


def terminal(report: Report) -> str:
    return '\n\n'.join(f'== {title}\n{body}'
                       for title, body in sections(report, plain_table))


def render(report: Report) -> str:
    machine = markdown_table(['', ''], [[key, value] for key, value in
                                        report.machine.items()] +
                             [['tree', report.tree], ['QEMU', report.qemu]])
    body = '\n\n'.join(f'## {title}\n\n{text}'
                       for title, text in sections(report, markdown_table))
    return (f'# Performance\n\n'
            f'Generated by `{report.command}` (`tools/bench` runs the '
            'same) into `<work dir>/bench/performance.md` and copied here; '
            'do not edit by hand, run it again. Each developer-loop '
            'row is the wall time of the real `./run.sh` as a subprocess '
            '(`time.monotonic()`); the hot path is measured in the guest. '
            'Each tree is booted several times, pristine and patched in '
            'turn, because under TCG one boot can run 40 % faster than the '
            'next. The ratio is patched over pristine, of the medians of '
            'all repetitions of all boots; the spread is the wider '
            'relative spread (max − min over median) of the two sides, '
            'with the range of the per-round ratios (the medians of two '
            'adjacent boots) in brackets. Row by row the ratios are '
            'findings: their spread is wider than anything the series could '
            'change; `./run.sh bench --hot-path` pools the paired per-round '
            'ratios into a verdict (median at most 1.02). On 6.1 and 6.12, '
            'with the test options off, the zero-delta check '
            '(`tools/tcpopt/series/bloat.py`: `bloat-o-meter` and the bytes '
            'of '
            '`.text`) proves `tcp_output.o` identical to the pristine '
            'tree\'s; 7.3\'s upstream layer changes it on purpose '
            '(`./run.sh series --tree 7.3 --cost`).\n\n'
            f'## Machine\n\n{machine}\n\n{body}\n')


def write(path: Path, text: str) -> None:
    """Whole or not at all."""
    tmp = path.with_name(f'.{path.name}.new')
    try:
        tmp.write_text(text)
        tmp.rename(path)
    finally:
        tmp.unlink(missing_ok=True)

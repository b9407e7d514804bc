"""Where a test command's time goes: each step's seconds, against budget.

Each step's build and boot seconds, its ccache hits and misses, and the
budget it may not exceed."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, Iterator, List

# Each step's cold seconds on this project's machine (2 CPUs, QEMU under
# TCG), measured on 2026-12-06, a slow day: about 80 objects compiled a
# minute (docs/performance.md, "The test command, step by step"). A step
# may take BUDGET_FACTOR times as long, and never less than BUDGET_FLOOR:
# beyond that the machine is too slow for CI's limit, and the test command
# stops there, naming the step, instead of running into CI's timeout.
COLD_SECONDS = {
    'host': 60, 'kunit': 1500, 'sweep': 30, 'layouts': 30, 'tshark': 60,
    'capture': 60, 'series': 30, 'export': 120, 'bloat': 900, 'plain': 900,
    'kconfig': 1200, 'bisectable': 900, 'mutants': 1200, 'mutants-2008': 300,
    'mutate': 2900, 'bisect-demo': 900, 'kunit-debug': 2100, 'twice': 300,
    'selftest': 900,
}
BUDGET_FACTOR = 2
BUDGET_FLOOR = 300
# When run.sh's Python started: the wall time includes what runs before
# the first step (the packages, the backported tree's fetch).
STARTED = time.monotonic()


def budget(step: str) -> int:
    """Seconds @step may take before the test command gives up."""
    return max(BUDGET_FACTOR * COLD_SECONDS[step], BUDGET_FLOOR)


class OverBudget(Exception):
    """A step ran past its budget."""


@dataclass
class Spent:
    """Seconds in make (kunit.py's build included) and in QEMU."""
    build: float = 0.0
    boot: float = 0.0


# The running step's; kernel.py adds to it.
CURRENT = Spent()


def add(build: float = 0.0, boot: float = 0.0) -> None:
    CURRENT.build += build
    CURRENT.boot += boot


@dataclass
class Ccache:
    hits: int = 0
    misses: int = 0


def ccache_counts(ccache_dir: Path) -> Ccache:
    """The cache's running totals (zero without ccache)."""
    if not shutil.which('ccache'):
        return Ccache()
    result = subprocess.run(['ccache', '--print-stats'], capture_output=True,
                            text=True, check=False,
                            env={'CCACHE_DIR': str(ccache_dir),
                                 'PATH': '/usr/bin:/bin'})
    stats: Dict[str, int] = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition('\t')
        if value.strip().isdigit():
            stats[key] = int(value)
    return Ccache(hits=stats.get('direct_cache_hit', 0) +
                  stats.get('preprocessed_cache_hit', 0),
                  misses=stats.get('cache_miss', 0))


@dataclass
class StepTime:
    number: int
    step: str
    tree: str
    title: str
    seconds: float
    build: float
    boot: float
    hits: int
    misses: int

    def line(self, total: int) -> str:
        return (f'({self.number}/{total} took {self.seconds:.0f} s: build '
                f'{self.build:.0f} s, boot {self.boot:.0f} s, ccache '
                f'{self.hits} hits, {self.misses} misses)')


@contextmanager
def alarm_after(seconds: int, step: str) -> Iterator[None]:
    """Raise OverBudget in the step once @seconds have passed: kernel.py
    stops kunit.py and QEMU on the way out, as on Ctrl-C."""
    def expire(signum: int, frame: object) -> None:
        raise OverBudget(f'step {step!r} ran past its budget of {seconds} s')
    previous = signal.signal(signal.SIGALRM, expire)
    outer = signal.alarm(seconds)       # an enclosing alarm's seconds left
    started = time.monotonic()
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            left = outer - (time.monotonic() - started)
            signal.alarm(max(1, round(left)))


@contextmanager
def measured(number: int, step: str, tree: str, title: str,
             ccache_dir: Path, into: List[StepTime]) -> Iterator[None]:
    """Time one step; append its StepTime to @into, also when it fails."""
    CURRENT.build = CURRENT.boot = 0.0
    before = ccache_counts(ccache_dir)
    started = time.monotonic()
    try:
        yield
    finally:
        after = ccache_counts(ccache_dir)
        into.append(StepTime(number, step, tree, title,
                             round(time.monotonic() - started, 1),
                             round(CURRENT.build, 1), round(CURRENT.boot, 1),
                             after.hits - before.hits,
                             after.misses - before.misses))


def table(times: List[StepTime]) -> str:
    """The markdown table of a test command's steps, with its total."""
    lines = ['| # | tree | step | s | build s | boot s | ccache hits | '
             'ccache misses | budget s |',
             '| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |']
    for row in times:
        lines.append(f'| {row.number} | {row.tree or "-"} | {row.step} | '
                     f'{row.seconds:.0f} | {row.build:.0f} | {row.boot:.0f} | '
                     f'{row.hits} | {row.misses} | {budget(row.step)} |')
    total = sum(row.seconds for row in times)
    lines.append(f'| | | **total** | **{total:.0f}** ({total / 60:.1f} min) '
                 f'| {sum(r.build for r in times):.0f} | '
                 f'{sum(r.boot for r in times):.0f} | '
                 f'{sum(r.hits for r in times)} | '
                 f'{sum(r.misses for r in times)} | |')
    return '\n'.join(lines) + '\n'


def section(header: dict, times: List[StepTime]) -> str:
    """docs/performance.md's section on the test command, from one run."""
    total = sum(row.seconds for row in times)
    state = 'an empty work dir and an empty ccache' if header.get('cold') \
        else 'a work dir and ccache left by earlier runs'
    done = f'{len(times)} of {header.get("planned", len(times))} steps'
    wall = header.get('wall')
    since_start = (f'; {wall} s ({wall / 60:.1f} min) from the command\'s '
                   'start, with the packages and the backported tree\'s '
                   'fetch before the first step') if wall else ''
    return (f'## The test command, step by step\n\n'
            f'Generated from `{header.get("command", "./run.sh test")}` '
            f'started {header["date"]} at commit {header["commit"]}, on '
            f'{header.get("cpus", "?")} CPUs with QEMU under TCG, from '
            f'{state}: {done}, **{total:.0f} s ({total / 60:.1f} min)** in '
            f'the steps{since_start}. '
            'Build is make and kunit.py\'s build, boot is QEMU; a step\'s '
            'budget is twice its measured cold time (at least 300 s), '
            'past which the test command stops (`steptime.py`).\n\n'
            + table(times) + disk_table(header.get('disk', {})))


def disk_table(usage: Dict[str, float]) -> str:
    """The work dir after the run, part by part."""
    if not usage:
        return ''
    lines = ['', 'The work dir after this run (`./run.sh clean --keep-build` '
             'removes all but `pristine/`, `src/` and `build/`):', '',
             '| part | GiB |', '| --- | ---: |']
    lines += [f'| `{part}` | {gib:.2f} |' for part, gib in usage.items()]
    lines.append(f'| **total** | **{sum(usage.values()):.2f}** |')
    return '\n'.join(lines) + '\n'


def save(times: List[StepTime], path: Path, header: dict) -> None:
    """The measurements as JSON, for docs/performance.md's generator."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + '.new')
    tmp.write_text(json.dumps({**header,
                               'steps': [asdict(t) for t in times]},
                              indent=1) + '\n')
    tmp.rename(path)


def load(path: Path) -> tuple[dict, List[StepTime]]:
    data = json.loads(path.read_text())
    steps = [StepTime(**row) for row in data.pop('steps')]
    return data, steps



def commit_of(repo: Path) -> str:
    """The checkout's HEAD, short, with '+' when it has changes."""
    def git(*args: str) -> str:
        return subprocess.run(['git', '-C', str(repo), *args],
                              capture_output=True, text=True,
                              check=False).stdout.strip()
    head = git('rev-parse', '--short=12', 'HEAD') or 'unknown'
    return head + ('+' if git('status', '--porcelain', '--untracked-files=no')
                   else '')


def main(argv: List[str]) -> int:
    """python3 -m tcpopt.bench.steptime <work dir>/test-steps.json: the
    section for docs/performance.md."""
    usage = 'usage: python3 -m tcpopt.bench.steptime TEST-STEPS.json'
    if argv in (['-h'], ['--help']):
        print(usage)
        return 0
    if len(argv) != 1:
        print(usage, file=sys.stderr)
        return 2
    header, times = load(Path(argv[0]))
    print(section(header, times), end='')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

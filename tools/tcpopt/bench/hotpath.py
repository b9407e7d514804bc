"""The hot-path benchmark: the tcp_opt_bench suite, pristine vs patched.

kunit/tcp_options_bench.c (the tcp_opt_bench suite, marked slow) times
the option calculators and the writer in the guest and prints

    # bench: <layout> <function> <ns> ns/call rep <i>
    # sweep-scale: <factor>x <combinations> combinations in <us> us

It runs in two trees under <work>/<tree>/bench/: 'patched' (the series)
and 'pristine' (only the series' fixes and test-only patches: the Kconfig
symbol and the include hook). In both, net/ipv4/tcp_options_test.c is a stub that
includes the benchmark alone, and both build with the same .kunitconfig,
so the two kernels differ by the series' code changes and nothing else.

Built alone, the benchmark has no sweep to scale: the sweep-scale case
exists only where tcp_options_test.c includes the benchmark, which is
the main build. That kernel, already built, is booted once more with
the benchmark suite alone (kunit.py exec, no build).

Per row the ratios are findings: under TCG one row's spread (68-103 %)
is wider than anything the series could change. The verdict
(`./run.sh bench --hot-path`, verdict()) takes every paired round of
every row, patched over pristine, and passes when their median is at most
RATIO_LIMIT: a change that slows the calculators or the writer as a whole
by more than 2 % fails it, whatever one row's noise. On 7.3 'patched' has
the upstream refactor and 'pristine' has not (only the fix and the
harness), so this is the refactor's hot-path cost with KUnit on (the
bench needs it); with KUnit off bloat.production_cost() measures it.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from tcpopt.core.errors import log
from tcpopt.core.fs import write_if_changed
from tcpopt.core.settings import (BENCH_SOURCE, BENCH_SUITE, OVERLAY_DIR,
                                  Settings, kunit_log)
from tcpopt.series.seriesfile import (fix_patches, read_series,
                                     test_only_patches)
from tcpopt.tree.accel import Accel
from tcpopt.tree.kernel import log_moved_to, run_kunit
from tcpopt.tree.scratch import ScratchTree

# Before the '#': a console timestamp, if printk adds one; after it, the
# case name kunit_info() would add.
PREFIX = r'^(?:\[\s*\d+\.\d+\] )?\s*# (?:[\w.]+: )?'
BENCH_LINE = re.compile(PREFIX + r'bench: (?P<layout>\S+) (?P<function>\S+) '
                        r'(?P<ns>\d+(?:\.\d+)?) ns/call rep (?P<rep>\d+)\s*$')
SCALE_LINE = re.compile(PREFIX + r'sweep-scale: (?P<factor>\d+)x '
                        r'(?P<combinations>\d+) combinations in '
                        r'(?P<us>\d+(?:\.\d+)?) us\s*$')
# Boots per tree, alternating pristine and patched: under TCG one boot can
# run 40 % faster than the next, so a single boot per tree says nothing.
ROUNDS = 5
# Repetitions of a later boot are numbered round * ROUND_STRIDE + rep.
ROUND_STRIDE = 1000
SCALE_FACTORS = (1, 4, 16)
# Time per combination may drift this much and still count as linear.
LINEAR_TOLERANCE = 0.25
SIDES = ('pristine', 'patched')
# The median of the paired per-round ratios may be this much and pass.
RATIO_LIMIT = 1.02
STUB = ('// SPDX-License-Identifier: GPL-2.0\n'
        '/* ./run.sh bench: the benchmark suite alone, in both trees. */\n'
        f'#include "{BENCH_SOURCE}"\n')

Key = Tuple[str, str]           # (layout, function)


@dataclass
class Samples:
    """What one boot of the benchmark printed."""

    calls: Dict[Key, Dict[int, float]] = field(default_factory=dict)
    scale: Dict[int, List[Tuple[int, float]]] = field(default_factory=dict)


def parse(lines: Iterable[str]) -> Samples:
    """The bench and sweep-scale lines of a console log; the rest is noise."""
    calls: Dict[Key, Dict[int, float]] = defaultdict(dict)
    scale: Dict[int, List[Tuple[int, float]]] = defaultdict(list)
    for line in lines:
        call = BENCH_LINE.match(line.rstrip('\r\n'))
        if call:
            key = (call.group('layout'), call.group('function'))
            calls[key][int(call.group('rep'))] = float(call.group('ns'))
            continue
        step = SCALE_LINE.match(line.rstrip('\r\n'))
        if step:
            scale[int(step.group('factor'))].append(
                (int(step.group('combinations')), float(step.group('us'))))
    return Samples(dict(calls), dict(scale))


def relative_spread(values: List[float]) -> float:
    """(max - min) / median: how far the repetitions scatter."""
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else 0.0


@dataclass
class Comparison:
    """One layout and function: pristine against patched."""

    layout: str
    function: str
    pristine: Dict[int, float]
    patched: Dict[int, float]

    @property
    def reps(self) -> int:
        return min(len(self.pristine), len(self.patched))

    @property
    def pristine_ns(self) -> float:
        return statistics.median(self.pristine.values())

    @property
    def patched_ns(self) -> float:
        return statistics.median(self.patched.values())

    @property
    def ratio(self) -> float:
        """Patched over pristine, of the medians."""
        return self.patched_ns / self.pristine_ns if self.pristine_ns \
            else float('inf')

    @property
    def noise(self) -> float:
        """The wider relative spread of the two sides."""
        return max(relative_spread(list(self.pristine.values())),
                   relative_spread(list(self.patched.values())))

    def rep_ratios(self) -> List[float]:
        """Patched over pristine: boot round by boot round (the medians
        of two adjacent boots) when there are several, else repetition by
        repetition."""
        rounds = sorted({rep // ROUND_STRIDE for rep in self.pristine} &
                        {rep // ROUND_STRIDE for rep in self.patched})
        if len(rounds) > 1:
            return [round_median(self.patched, r) /
                    round_median(self.pristine, r) for r in rounds
                    if round_median(self.pristine, r)]
        return [self.patched[rep] / self.pristine[rep]
                for rep in sorted(set(self.pristine) & set(self.patched))
                if self.pristine[rep]]


def round_median(samples: Dict[int, float], round_no: int) -> float:
    return statistics.median(value for rep, value in samples.items()
                             if rep // ROUND_STRIDE == round_no)


def merge_rounds(rounds: List[Samples]) -> Samples:
    """One tree's boots as one set of samples, each boot's repetitions
    numbered apart."""
    calls: Dict[Key, Dict[int, float]] = defaultdict(dict)
    for round_no, samples in enumerate(rounds):
        for key, reps in samples.calls.items():
            for rep, value in reps.items():
                calls[key][round_no * ROUND_STRIDE + rep] = value
    return Samples(dict(calls))


def compare(pristine: Samples, patched: Samples) -> List[Comparison]:
    """Every layout and function either side printed, in print order."""
    keys = list(pristine.calls) + [k for k in patched.calls
                                   if k not in pristine.calls]
    return [Comparison(layout, function, pristine.calls.get(key, {}),
                       patched.calls.get(key, {}))
            for key in keys for layout, function in [key]]


@dataclass
class Verdict:
    median: float               # of every row's per-round ratios
    low: float
    high: float
    ratios: int

    @property
    def ok(self) -> bool:
        return self.ratios > 0 and self.median <= RATIO_LIMIT

    def line(self) -> str:
        return (f'{"PASS" if self.ok else "FAIL"} hot path: median '
                f'patched/pristine {self.median:.3f} over {self.ratios} '
                f'paired rounds (spread {self.low:.3f}-{self.high:.3f}), '
                f'limit {RATIO_LIMIT:.2f}')


def verdict(comparisons: List[Comparison]) -> Verdict:
    """Every row's paired per-round ratios, pooled."""
    ratios = [r for c in comparisons if c.pristine and c.patched
              for r in c.rep_ratios()]
    if not ratios:
        return Verdict(float('inf'), 0.0, 0.0, 0)
    return Verdict(statistics.median(ratios), min(ratios), max(ratios),
                   len(ratios))


def missing_sides(comparisons: List[Comparison]) -> List[str]:
    """Rows one tree never printed: a benchmark that did not run there."""
    return [f'{c.layout} {c.function}: no '
            f'{"pristine" if not c.pristine else "patched"} samples'
            for c in comparisons if not c.pristine or not c.patched]


@dataclass
class ScaleStep:
    factor: int
    combinations: int
    guest_us: float

    @property
    def us_per_combination(self) -> float:
        return self.guest_us / self.combinations if self.combinations else 0.0


@dataclass
class Scaling:
    steps: List[ScaleStep]
    missing: List[int]

    def drift(self, step: ScaleStep) -> float:
        """Time per combination against the smallest factor's, minus one."""
        base = self.steps[0].us_per_combination
        return step.us_per_combination / base - 1 if base else 0.0

    @property
    def linear(self) -> bool:
        return not self.missing and bool(self.steps) and all(
            abs(self.drift(step)) <= LINEAR_TOLERANCE for step in self.steps)

    def verdict(self) -> str:
        if self.missing:
            return ('not measured: no sweep-scale line for ' +
                    ', '.join(f'{factor}x' for factor in self.missing))
        worst = max(self.steps, key=lambda step: abs(self.drift(step)))
        shape = 'linear' if self.linear else 'not linear'
        return (f'{shape}: time per combination within '
                f'{abs(self.drift(worst)) * 100:.0f} % of 1x '
                f'(limit ±{LINEAR_TOLERANCE * 100:.0f} %)')


def scaling(samples: Samples) -> Scaling:
    """Median guest time per factor; linear if time per combination holds."""
    steps = []
    for factor in sorted(samples.scale):
        runs = samples.scale[factor]
        steps.append(ScaleStep(factor, runs[0][0],
                               statistics.median(us for _, us in runs)))
    missing = [f for f in SCALE_FACTORS if f not in samples.scale]
    return Scaling(steps, missing)


# --- the two trees ---------------------------------------------------------

def side_dirs(settings: Settings, side: str) -> Tuple[Path, Path]:
    base = settings.tree_dir / 'bench' / side
    return base / 'src', base / 'build'


def side_patches(settings: Settings, side: str) -> List[Path]:
    if side == 'patched':
        return read_series(settings.patch_dir)
    return fix_patches(settings.patch_dir) + \
        test_only_patches(settings.patch_dir)


def sync_tree(settings: Settings, side: str) -> Path:
    """pristine/ plus this side's patches (a ScratchTree)."""
    src, build = side_dirs(settings, side)
    ScratchTree(settings, src, base=settings.pristine,
                patches=side_patches(settings, side), builds=[build]).ensure()
    overlay_bench(settings, src)
    return src


def overlay_bench(settings: Settings, tree: Path) -> None:
    """kunit/ sources in, tcp_options_test.c replaced by the stub."""
    target = tree / OVERLAY_DIR
    for source in sorted(settings.kunit_dir.iterdir()):
        if source.suffix in ('.c', '.h') and \
                source.name != 'tcp_options_test.c':
            write_if_changed(target / source.name, source.read_bytes())
    write_if_changed(target / 'tcp_options_test.c', STUB.encode())


# The stub replaces the writer suite, whose rows the live suite reads.
NOT_IN_BENCH_TREES = ('CONFIG_TCP_OPTIONS_LIVE_KUNIT_TEST=y',)


def bench_kunitconfig(settings: Settings) -> Path:
    """.kunitconfig without the live suite, for the two stub trees."""
    path = settings.tree_dir / 'bench' / 'kunitconfig'
    lines = [line for line in settings.kunitconfig.read_text().splitlines()
             if line.strip() not in NOT_IN_BENCH_TREES]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(path, ('\n'.join(lines) + '\n').encode())
    return path


def bench_source_missing(settings: Settings) -> Optional[str]:
    path = settings.kunit_dir / BENCH_SOURCE
    if path.is_file():
        return None
    return f'kunit/{BENCH_SOURCE} is missing: no {BENCH_SUITE} suite to run'


def config_difference(pristine_build: Path, patched_build: Path) -> str:
    """'' when both kernels were configured alike, else the first line
    that differs (comments aside)."""
    def lines(build: Path) -> List[str]:
        try:
            text = (build / '.config').read_text()
        except OSError:
            return ['(no .config)']
        return [line for line in text.splitlines()
                if line and not line.startswith('#')]
    old, new = lines(pristine_build), lines(patched_build)
    if old == new:
        return ''
    for a, b in zip(old + [''] * len(new), new + [''] * len(old)):
        if a != b:
            return f'.config differs: pristine {a!r}, patched {b!r}'
    return '.config differs'


@dataclass
class HotPath:
    """The benchmark's result, or why there is none."""

    accel: str
    comparisons: List[Comparison] = field(default_factory=list)
    scaling: Optional[Scaling] = None
    problem: str = ''
    notes: List[str] = field(default_factory=list)


def boot_side(settings: Settings, side: str, accel: Accel,
              run: Callable = run_kunit,
              round_no: int = 0) -> Tuple[Optional[Samples], str]:
    """Build (first round) and boot one tree's benchmark; its samples, or
    what failed."""
    src = sync_tree(settings, side) if round_no == 0 else \
        side_dirs(settings, side)[0]
    _, build = side_dirs(settings, side)
    output = build.parent / 'kunit.out'
    log(f'bench: {"building and " if round_no == 0 else ""}booting the '
        f'{side} tree ({BENCH_SUITE}), round {round_no + 1}/{ROUNDS}, '
        f'output in {output}')
    with open(output, 'w') as out:
        status, console = run(settings, src, build_dir=build,
                              filter_glob=BENCH_SUITE, accel=accel,
                              output=out,
                              action='run' if round_no == 0 else 'exec',
                              kunitconfig=bench_kunitconfig(settings))
    if not console.is_file():
        return None, (f'the {side} kernel did not build or boot (kunit.py '
                      f'exit {status}); see {output}')
    with open(console, errors='replace') as lines:
        return parse(lines), ''


def measure(settings: Settings, accel: Accel,
            run: Callable = run_kunit, scale: bool = True) -> HotPath:
    """Both trees, booted in turn ROUNDS times, with the same accelerator."""
    settings = dataclasses.replace(settings, bench=True)
    result = HotPath(accel=accel.name)
    result.problem = bench_source_missing(settings) or ''
    if result.problem:
        return result
    boots: Dict[str, List[Samples]] = {side: [] for side in SIDES}
    for round_no in range(ROUNDS):
        for side in SIDES:
            got, problem = boot_side(settings, side, accel, run, round_no)
            if got is None:
                result.problem = problem
                return result
            boots[side].append(got)
    result.comparisons = compare(merge_rounds(boots['pristine']),
                                 merge_rounds(boots['patched']))
    if not result.comparisons:
        result.problem = ("neither kernel printed a '# bench:' line; see "
                          f"{kunit_log(settings.tree_dir / 'bench' / '*' / 'build')}")
    result.notes += missing_sides(result.comparisons)
    difference = config_difference(side_dirs(settings, 'pristine')[1],
                                   side_dirs(settings, 'patched')[1])
    if difference:
        result.notes.append(difference)
    if scale:
        result.scaling = scaling(boot_sweep_scale(settings, accel, run))
    return result


def boot_sweep_scale(settings: Settings, accel: Accel,
                     run: Callable = run_kunit) -> Samples:
    """The main tree's benchmark suite, in its own build dir (the main
    build leaves the benchmark out); that build's test.log is put back
    after, so its last verdicts stay where they were."""
    saved = settings.tree_dir / 'bench' / 'sweep-scale.log'
    saved.parent.mkdir(parents=True, exist_ok=True)
    log(f'bench: building the main tree with {BENCH_SUITE} and booting it '
        f'for the sweep scaling, output in {saved.with_suffix(".out")}')
    with log_moved_to(settings.build_dir, saved), \
            open(saved.with_suffix('.out'), 'w') as out:
        run(settings, settings.source, action='run',
            filter_glob=BENCH_SUITE, accel=accel, output=out)
    if not saved.is_file():
        return Samples()
    with open(saved, errors='replace') as lines:
        return parse(lines)

"""What each .kunitconfig option costs: ./run.sh bench --kunitconfig-costs.

For the whole .kunitconfig, then for it without each option but
CONFIG_KUNIT and CONFIG_TCP_OPTIONS_KUNIT_TEST, a kernel is built from
scratch (an empty build dir, the warm ccache) and timed, its objects
counted, and the result booted: an option the suites need shows as
suites that lose passing cases, or as a config kunit.py refuses.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional

from tcpopt.core.errors import log
from tcpopt.core.fs import remove_tree
from tcpopt.core.settings import Settings
from tcpopt.log import ktap
from tcpopt.tree.accel import Accel
from tcpopt.tree.kernel import run_kunit

ALWAYS = ('CONFIG_KUNIT', 'CONFIG_TCP_OPTIONS_KUNIT_TEST')
OPTION = re.compile(r'^(CONFIG_\w+)=')
# kunit.py's words when the .config lacks what the kunitconfig asks for.
MISSING = re.compile(r'Missing: (.*)$', re.M)


@dataclass
class Cost:
    """One scratch build: the whole .kunitconfig (option '') or one less."""

    option: str
    seconds: float
    built: bool
    objects: int = 0
    set_anyway: bool = False        # a default or a select turned it on
    passes: Counter = field(default_factory=Counter)    # per suite
    problem: str = ''


def options(kunitconfig: Path) -> List[str]:
    """The options one could drop: all but the two the suite is."""
    found = []
    for line in kunitconfig.read_text().splitlines():
        match = OPTION.match(line.strip())
        if match and match.group(1) not in ALWAYS:
            found.append(match.group(1))
    return found


def without(kunitconfig: Path, option: str) -> str:
    return ''.join(line + '\n' for line in kunitconfig.read_text()
                   .splitlines() if not line.startswith(option + '='))


def count_objects(build: Path) -> int:
    return sum(1 for _ in build.rglob('*.o'))


def is_set(build: Path, option: str) -> bool:
    try:
        return f'{option}=y' in (build / '.config').read_text().splitlines()
    except OSError:
        return False


def build_problem(output: Path) -> str:
    """kunit.py's reason, from its output: the options it could not set."""
    text = output.read_text(errors='replace') if output.is_file() else ''
    missing = MISSING.search(text)
    if missing:
        return f'kunit.py: cannot set {missing.group(1).strip()}'
    lines = [line.strip() for line in text.splitlines()
             if 'error' in line.lower()]
    return lines[0][:160] if lines else f'build failed; see {output}'


def passes_per_suite(console: Path) -> Counter:
    if not console.is_file():
        return Counter()
    run = ktap.read(console)
    return Counter(case.suite for case in run.cases if case.status == 'pass')


def measure_one(settings: Settings, source: Path, option: str,
                accel: Accel, run: Callable = run_kunit,
                clock: Callable[[], float] = time.monotonic) -> Cost:
    base = settings.tree_dir / 'bench' / 'kconfig'
    build = base / 'build'
    remove_tree(build)
    config = base / f'{option or "all"}.kunitconfig'
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(without(settings.kunitconfig, option) if option
                      else settings.kunitconfig.read_text())
    output = base / f'{option or "all"}.out'
    log(f'bench: scratch build with {config.name}, output in {output}')
    started = clock()
    with open(output, 'w') as out:
        status, _ = run(settings, source, build_dir=build, action='build',
                        kunitconfig=config, output=out)
    cost = Cost(option, clock() - started, status == 0,
                count_objects(build), bool(option) and is_set(build, option))
    if not cost.built:
        cost.problem = build_problem(output)
        return cost
    with open(output, 'a') as out:
        _, console = run(settings, source, build_dir=build, action='exec',
                         accel=accel, kunitconfig=config, output=out)
    cost.passes = passes_per_suite(console)
    return cost


def measure(settings: Settings, source: Path, accel: Accel,
            run: Callable = run_kunit,
            clock: Callable[[], float] = time.monotonic) -> List[Cost]:
    """The whole .kunitconfig first, then one option less at a time."""
    costs = [measure_one(settings, source, option, accel, run, clock)
             for option in [''] + options(settings.kunitconfig)]
    remove_tree(settings.tree_dir / 'bench' / 'kconfig' / 'build')
    return costs


def effect(cost: Cost, whole: Cost) -> str:
    """What leaving the option out does, in words."""
    if not cost.built:
        return f'needed by every suite ({cost.problem})'
    if cost.set_anyway:
        return 'set anyway (a default or a select): no saving'
    lost = sorted(suite for suite, count in whole.passes.items()
                  if cost.passes.get(suite, 0) < count)
    if lost:
        return 'needed by ' + ', '.join(
            f'{suite} ({whole.passes[suite] - cost.passes.get(suite, 0)} '
            'cases)' for suite in lost)
    return 'not needed by any suite'


def delta(cost: Cost, whole: Cost) -> Optional[float]:
    """Seconds the option costs: the whole build minus the one without."""
    return whole.seconds - cost.seconds if cost.built else None

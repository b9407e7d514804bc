"""The stages a mutant boots, in order, and the cases each must report."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import List, Tuple

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import Settings
from tcpopt.log.expected import (UPSTREAM_TESTS, case_names, read_source,
                                 source_suites, sources)

# A mutant boots in stages, each only if no case of the ones before it
# failed, on the same kernel (kunit.py exec): on a tree with the two
# layers the upstream suites first (what netdev would merge, measured
# alone: their kills are theirs), then the harness's unit suites, about
# 2 s under TCG, then the live suite, about 4 s, and up to 10 s more when
# a mutant stalls its connections. A mutant's report lists the failing
# cases of the stage that killed it. Each stage gets the seconds here: a
# crashed case would make KUnit wait 300 s for it; a kernel stopped
# before the end misses cases, and the mutant is killed. stages() checks
# that each glob picks exactly its suites. 7.3's unit stage takes 12 s
# of a mutant's boot alone (2026-12-07, mutate-<id>.out of `./run.sh
# mutate --tree 7.3 --ids ...`), the host model's sweep printing to a slow
# console; 15 s made three of ten such boots stall and boot again.
UPSTREAM_STAGE = ('tcp_opt_[lw][ar]*', 15)
UNIT_STAGE = ('tcp_opt_[!bl]*', 15)
LAYERED_UNIT_STAGE = ('tcp_opt_[!blw]*', 30)
LIVE_STAGE = ('tcp_opt_live', 30)
LIVE_SOURCE = 'tcp_live_test.c'


@dataclass(frozen=True)
class Stage:
    glob: str
    seconds: int
    cases: Tuple[str, ...]


def stages(settings: Settings) -> List[Stage]:
    """What a mutant boots, in order, and the cases each must report."""
    kunit_dir = settings.kunit_dir
    live = [kunit_dir / LIVE_SOURCE]
    upstream = sorted((kunit_dir / UPSTREAM_TESTS).glob('*.c'))
    units = [p for p in sources(kunit_dir, upstream=False) if p not in live]
    plan = [(LAYERED_UNIT_STAGE if settings.layered else UNIT_STAGE, units),
            (LIVE_STAGE, live)]
    if settings.layered:
        plan.insert(0, (UPSTREAM_STAGE, upstream))
    every = [s for _, paths in plan for p in paths
             for s in source_suites(read_source(p, settings.version))]
    out = []
    for (glob, seconds), paths in plan:
        mine = [s for p in paths
                for s in source_suites(read_source(p, settings.version))]
        picked = [s for s in every if fnmatch.fnmatchcase(s, glob)]
        if sorted(picked) != sorted(mine):
            raise HarnessError(f'mutate stage {glob!r} picks the suites '
                               f'{", ".join(picked) or "none"}, not '
                               f'{", ".join(mine)}: fix boot.py\'s globs')
        cases = [c for p in paths
                 for c in case_names(read_source(p, settings.version))]
        out.append(Stage(glob, seconds, tuple(cases)))
    return out

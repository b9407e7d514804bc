"""Mutant suite: known option-layout regressions the suites must catch.

kernel-patches/regressions/<tree>/*.patch each re-introduce one bug on
top of the series. Each is applied in turn to a scratch copy of the work
tree (mutants/src, with its own build dir), the suites are rebuilt
incrementally and run, and the patch is reversed. A regression survives
when no case fails; the run then fails.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from tcpopt.core.errors import HarnessError, log
from tcpopt.core.settings import Settings
from tcpopt.log import ktap
from tcpopt.log.expected import expected_cases
from tcpopt.log.report import judge
from tcpopt.series.seriesfile import files_touched, read_series
from tcpopt.tree.kernel import run_kunit
from tcpopt.tree.patching import apply_patch
from tcpopt.tree.scratch import ScratchTree


@dataclass
class MutantResult:
    patch: Path
    failing: List[str] = field(default_factory=list)
    error: str = ''

    @property
    def killed(self) -> bool:
        return not self.error and bool(self.failing)


def regressions(settings: Settings, only: Sequence[str] = ()) -> List[Path]:
    """The tree's regressions; with @only, those of these names alone."""
    root = settings.repo / 'kernel-patches' / 'regressions'
    patches = sorted((root / settings.tree).glob('*.patch'))
    if not patches:
        raise HarnessError(f'no regressions in {root / settings.tree}')
    if only:
        missing = sorted(set(only) - {p.name for p in patches})
        if missing:
            raise HarnessError(f'no {", ".join(missing)} in '
                               f'{root / settings.tree}')
        patches = [p for p in patches if p.name in only]
    return patches


def origin(patch: Path) -> str:
    """The first line of the patch header: what the regression is."""
    return patch.read_text(errors='replace').splitlines()[0]


def mutant_dirs(settings: Settings) -> tuple[Path, Path]:
    """The scratch tree, and its build beside the main build's: the debug
    kernel's mutants have their own, so neither rebuilds the other's."""
    base = settings.tree_dir / ('mutants-sanitize' if settings.sanitize
                                else 'mutants')
    return base / 'src', base / 'build'


# The files a mutant (generated.TARGETS) or a regression patch changes.
MUTATED_FILES = ('net/ipv4/tcp_output.c', 'net/ipv4/tcp_input.c',
                 'net/mptcp/options.c')


def scratch(settings: Settings) -> ScratchTree:
    """A copy of src/ at the same series state, with no mutant applied.

    A fresh copy keeps src/'s modification times, older than the objects
    the last mutant left in the build dir: make would keep them, mutant
    and all. The files mutants and the series change are touched so that
    they rebuild.
    """
    src, build = mutant_dirs(settings)
    touched = set(MUTATED_FILES)
    for patch in regressions(settings) + read_series(settings.patch_dir):
        touched.update(files_touched(patch))
    # A fresh copy takes the main build's objects too: only the touched
    # files rebuild, not the whole kernel.
    return ScratchTree(settings, src, base=settings.source, overlay=True,
                       touch=sorted(touched), builds=[build],
                       seed=(settings.build_dir, build))


def run_suites(settings: Settings, src: Path, build: Path,
               output: Path, timeout: Optional[int] = None,
               filter_glob: Optional[str] = None, action: str = 'run'
               ) -> ktap.Run | None:
    """Through kernel.run_kunit(), so kernel.supervise(): its timeout, and
    the accelerator that works here (7.3's kunit.py asks for KVM first).
    Output is appended: a second stage's follows the first's."""
    build.mkdir(parents=True, exist_ok=True)
    with open(output, 'a' if action == 'exec' else 'w') as out:
        _, log_file = run_kunit(settings, src, build_dir=build, output=out,
                                timeout=timeout, filter_glob=filter_glob,
                                action=action)
    if not log_file.is_file():
        return None
    return ktap.read(log_file)


def run_one(settings: Settings, tree: ScratchTree, build: Path,
            patch: Path) -> MutantResult:
    result = MutantResult(patch)
    with tree.trying(f'regression {patch.name}') as src:
        try:
            apply_patch(src, patch, f'{settings.package} + series')
        except HarnessError as error:
            result.error = str(error)
            return result
        output = build / f'{patch.stem}.out'
        run = run_suites(settings, src, build, output)
        subprocess.run(['patch', '-p1', '-R', '-f', '-s', '-d', str(src),
                        '-i', str(patch)], check=True, capture_output=True)
    if run is None:
        result.error = f'did not build or boot; see {output}'
        return result
    verdict = judge(run, expected_cases(settings.kunit_dir,
                                        settings.upstream_suites))
    result.failing = verdict.failed + verdict.missing
    if verdict.crashed and not result.failing:
        result.failing = ['(kernel crashed)']
    return result


def run_all(settings: Settings,
            only: Sequence[str] = ()) -> List[MutantResult]:
    tree = scratch(settings)
    tree.ensure()
    _, build = mutant_dirs(settings)
    results = []
    for patch in regressions(settings, only):
        log(f'mutant {patch.name}: building and running the suites')
        results.append(run_one(settings, tree, build, patch))
    return results


def kill_matrix(results: List[MutantResult], width: int = 100) -> str:
    """Regression x failing cases, one block per regression."""
    lines = []
    for result in results:
        if result.error:
            verdict = 'ERROR'
        else:
            verdict = 'killed' if result.killed else 'SURVIVED'
        lines.append(f'{verdict:8} {result.patch.name}  '
                     f'({len(result.failing)} failing cases)')
        lines.append(f'         {origin(result.patch)}')
        if result.error:
            lines.append(f'         {result.error}')
        current = '         '
        for name in result.failing:
            if len(current) + len(name) + 2 > width:
                lines.append(current.rstrip())
                current = '         '
            current += name + '  '
        if current.strip():
            lines.append(current.rstrip())
    return '\n'.join(lines)

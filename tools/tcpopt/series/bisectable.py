"""Every prefix of the series builds: the series stays bisectable.

A scratch copy of the pristine tree gets the patches one at a time; after
each one net/ipv4/tcp_output.o is built with the suite's .config and the
test symbols off, then every object of net/ipv4/ with every test symbol
that patch has added on; both must compile without warnings.
The patches are reversed afterwards so the scratch tree (a ScratchTree)
rests pristine; a run interrupted half-way leaves its marker saying so,
and the copy is made afresh.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import TEST_KCONFIG, TEST_SYMBOLS, Settings
from tcpopt.series.bloat import OBJECT
from tcpopt.series.seriesfile import files_touched, read_series
from tcpopt.tree.kernel import make, set_kconfig
from tcpopt.tree.patching import apply_patch
from tcpopt.tree.scratch import ScratchTree


@dataclass
class StepResult:
    patch: Path
    problem: str = ''

    @property
    def ok(self) -> bool:
        return not self.problem


def scratch_tree(settings: Settings, patches: List[Path]) -> ScratchTree:
    """A pristine copy whose patches have all been reversed. A fresh copy
    has pristine mtimes, older than objects built with the patches on:
    the files they touch are touched so that those objects rebuild."""
    touched = sorted({f for p in patches for f in files_touched(p)})
    return ScratchTree(settings, settings.tree_dir / 'steps' / 'src',
                       base=settings.pristine, touch=touched)


def build_step(settings: Settings, tree: Path, out: Path,
               tests_on: bool) -> str:
    """'' when the step builds warning-free, else what went wrong."""
    if tests_on:
        for symbol in TEST_SYMBOLS:
            set_kconfig(tree, out / '.config', symbol, True)
    else:
        set_kconfig(tree, out / '.config', TEST_KCONFIG, False)
    result = make(settings, tree, out, 'olddefconfig')
    if result.returncode:
        return f'make olddefconfig failed: {result.stderr.strip()[-200:]}'
    result = make(settings, tree, out, 'net/ipv4/' if tests_on else OBJECT)
    if result.returncode:
        return f'build failed: {result.stderr.strip()[-300:]}'
    warnings = [line for line in result.stderr.splitlines()
                if 'warning:' in line]
    return f'build warnings: {warnings[0]}' if warnings else ''


def build_both(settings: Settings, tree: Path) -> str:
    """Tests off (tcp_output.o), then on (net/ipv4/), each in its own
    build directory so that neither rebuilds the other's objects."""
    for tests_on, name in ((False, 'build'), (True, 'build-tests')):
        problem = build_step(settings, tree,
                             settings.tree_dir / 'steps' / name, tests_on)
        if problem:
            return f'tests {"on" if tests_on else "off"}: {problem}'
    return ''


def check(settings: Settings) -> List[StepResult]:
    config = settings.build_dir / '.config'
    if not config.is_file():
        raise HarnessError(f'{config} is missing: run the KUnit step first')
    patches = read_series(settings.patch_dir)
    scratch = scratch_tree(settings, patches)
    scratch.ensure()
    for name in ('build', 'build-tests'):
        out = settings.tree_dir / 'steps' / name
        out.mkdir(parents=True, exist_ok=True)
        (out / '.config').write_bytes(config.read_bytes())
    what = f'{settings.package} (scratch copy)'
    with scratch.trying('the series, one patch at a time') as tree:
        results = []
        applied: List[Path] = []
        for patch in patches:
            try:
                apply_patch(tree, patch, what)
            except HarnessError as error:
                results.append(StepResult(patch, str(error)))
                break
            applied.append(patch)
            results.append(StepResult(patch, build_both(settings, tree)))
        for patch in reversed(applied):
            subprocess.run(['patch', '-p1', '-R', '-f', '-s', '-d',
                            str(tree), '-i', str(patch)], check=True,
                           capture_output=True)
    return results

"""Each upstream patch builds with W=1, under gcc and clang, warning-free.

netdev's patch bot builds every patch of a series with W=1 under gcc and
clang and flags new warnings in the objects it touches. This does the
same offline: the pristine tree, then each patch of the upstream layer
committed on top in the git base (as the export does), and after each one
the touched objects (tcp_output.o and the new test objects) rebuilt with
W=1 in two build dirs configured from the main build's .config, one for
gcc and one for clang-19 (Debian 12's newest, LLVM=-19). A patch passes
when neither compiler prints a new warning or error for its objects: one
the pristine tree already draws (same file and message, wherever the
line moved) is counted apart, as the bot's "new warnings" do (clang 19
flags a macro of 6.12's tcp_output.c that predates the series).

    ./run.sh series --tree 7.3 --build-check
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

from tcpopt.core.errors import HarnessError, SetupError, log
from tcpopt.core.settings import UPSTREAM_LAYER, Settings
from tcpopt.series import patchset
from tcpopt.series.seriesfile import read_series
from tcpopt.tree.kernel import build_env

COMPILERS = {'gcc': ['CC=gcc'], 'clang': ['LLVM=-19']}
CLANG_PACKAGES = 'clang-19 lld-19 llvm-19'
DIAGNOSTIC = re.compile(r'(warning|error):')
POSITION = re.compile(r':\d+:\d+:')
WHO = patchset.Identity('Build Check', 'build-check@example.invalid')


@dataclass
class BuildResult:
    patch: str              # 'pristine' or the patch's file name
    compiler: str
    objects: List[str]
    diagnostics: List[str]          # new ones: each fails the patch
    inherited: List[str] = field(default_factory=list)  # the pristine's

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    def line(self) -> str:
        verdict = 'PASS' if self.ok else 'FAIL'
        also = f' ({len(self.inherited)} as in the pristine tree)' \
            if self.inherited else ''
        return (f'{verdict} W=1 {self.compiler:5} {self.patch}: '
                f'{" ".join(self.objects)}, '
                f'{len(self.diagnostics)} warnings or errors{also}')


def diagnostic_key(line: str) -> str:
    """A diagnostic without its line and column, which patches move."""
    return POSITION.sub(':', line)


def split_inherited(result: BuildResult, baseline: List[str]) -> BuildResult:
    """@result with the diagnostics @baseline (the pristine tree's, same
    compiler) already has set apart."""
    known = {diagnostic_key(line) for line in baseline}
    new = [d for d in result.diagnostics if diagnostic_key(d) not in known]
    old = [d for d in result.diagnostics if diagnostic_key(d) in known]
    return BuildResult(result.patch, result.compiler, result.objects, new,
                       old)


def check_compilers() -> None:
    for tool in ('clang-19', 'ld.lld-19', 'llvm-ar-19'):
        if not shutil.which(tool):
            raise SetupError(f'{tool} is missing: apt-get install '
                             f'{CLANG_PACKAGES}')


def touched_objects(repo: Path) -> List[str]:
    """tcp_output.o, and the upstream tests' objects once they exist."""
    tests = sorted((repo / 'net/ipv4/tests').glob('*.c'))
    return ['net/ipv4/tcp_output.o'] + \
        [str(p.relative_to(repo).with_suffix('.o')) for p in tests]


def configure(settings: Settings, repo: Path, out: Path,
              flags: List[str]) -> None:
    config = settings.build_dir / '.config'
    if not config.is_file():
        raise HarnessError(f'{config} is missing: run ./run.sh --tree '
                           f'{settings.tree} first')
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(config, out / '.config')
    run_make(settings, repo, out, flags, ['olddefconfig'])


def run_make(settings: Settings, repo: Path, out: Path, flags: List[str],
             targets: List[str]) -> subprocess.CompletedProcess:
    return subprocess.run(['make', '-s', '-C', str(repo), f'O={out}',
                           'ARCH=x86_64', *flags, *targets],
                          env=build_env(settings), capture_output=True,
                          text=True, check=False)


def build(settings: Settings, repo: Path, label: str) -> List[BuildResult]:
    results = []
    objects = touched_objects(repo)
    for name, flags in COMPILERS.items():
        out = settings.tree_dir / 'buildcheck' / name
        for obj in objects:
            (out / obj).unlink(missing_ok=True)
        proc = run_make(settings, repo, out, flags + ['W=1'], objects)
        lines = (proc.stdout + proc.stderr).splitlines()
        found = [line for line in lines if DIAGNOSTIC.search(line)]
        if proc.returncode and not found:
            found = [f'make exited {proc.returncode}: '
                     f'{(lines or ["?"])[-1]}']
        results.append(BuildResult(label, name, objects, found))
    return results


def check(settings: Settings) -> List[BuildResult]:
    """The pristine tree, then every upstream patch, each compiler."""
    check_compilers()
    patches = [p for p in read_series(settings.patch_dir)
               if p.parent.name == UPSTREAM_LAYER] or \
        read_series(settings.patch_dir)
    repo = patchset.ensure_git_base(settings)
    patchset.reset_to_base(repo)
    for name, flags in COMPILERS.items():
        configure(settings, repo, settings.tree_dir / 'buildcheck' / name,
                  flags)
    log('build check: the pristine tree')
    pristine = build(settings, repo, 'pristine')
    baseline = {r.compiler: r.diagnostics for r in pristine}
    results = [split_inherited(r, r.diagnostics) for r in pristine]
    for patch in patches:
        patchset.commit_patches(settings, repo, [patch], WHO)
        log(f'build check: {patch.name}')
        results += [split_inherited(r, baseline[r.compiler])
                    for r in build(settings, repo, patch.name)]
    patchset.reset_to_base(repo)
    return results

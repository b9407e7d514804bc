"""Demonstration: git bisect run tools/bisect-layout finds a 2.6.27 redo.

Builds a synthetic history on a clone of the tree's git base (the
pristine tree as a commit, made for the export): a base commit with the
non-test part of the series, then 12 commits of harmless edits,
the 7th of which re-introduces the 2.6.27 option order
(kernel-patches/regressions/<tree>/01-*). Then bisects base..HEAD with the
helper and checks it names that commit within ceil(log2(12)) + 2 builds.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tcpopt.core.errors import HarnessError, log
from tcpopt.core.fs import remove_tree
from tcpopt.core.settings import Settings
from tcpopt.series.patchset import BASE_BRANCH, ensure_git_base
from tcpopt.series.seriesfile import read_series, test_only_patches
from tcpopt.tree.scratch import ScratchTree

COMMITS = 12
BAD_INDEX = 7
IDENTITY = ['-c', 'user.name=tcpopt demo', '-c', 'user.email=demo@localhost']
# Harmless edits: a comment line at the top of files the build compiles
# (and one it does not), never near the hunks of the series.
HARMLESS = ['net/ipv4/tcp_timer.c', 'net/ipv4/tcp_input.c',
            'Documentation/networking/ip-sysctl.rst', 'net/ipv4/tcp_ipv4.c',
            'net/ipv4/tcp_minisocks.c', 'net/ipv4/tcp_cong.c']


@dataclass
class DemoResult:
    injected: str
    named: str
    builds: int
    budget: int

    @property
    def ok(self) -> bool:
        return self.injected == self.named and self.builds <= self.budget


@dataclass
class DemoTree(ScratchTree):
    """The demo repository: a `git clone --shared` of the git base, not a
    copy of pristine/ committed anew (git add of a whole kernel tree was
    most of the demo's time, and the export made that commit already)."""

    def base_id(self) -> str:
        return f'{self.base} at {BASE_BRANCH}'

    def fill(self) -> None:
        remove_tree(self.src)
        self.src.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(['git', 'clone', '-q', '--shared', '-b', BASE_BRANCH,
                        str(self.base), str(self.src)], check=True,
                       capture_output=True)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(['git', *IDENTITY, *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def commit_harmless(repo: Path, index: int) -> None:
    path = repo / HARMLESS[index % len(HARMLESS)]
    text = path.read_text()
    note = f'harmless edit {index}'
    path.write_text((f'.. {note}\n' if path.suffix == '.rst'
                     else f'/* {note} */\n') + text)
    git(repo, 'commit', '-q', '-a', '-m', f'demo: {note}')


def build_history(settings: Settings) -> tuple[Path, str, str]:
    """The demo repository, its good base and the injected bad commit."""
    tree = DemoTree(settings, settings.tree_dir / 'bisect-demo' / 'linux',
                    base=ensure_git_base(settings))
    log(f'building a {COMMITS}-commit history in {tree.src}')
    repo = tree.renew()
    # A git history from here on, made afresh by every run.
    tree.mark_changed(f'the {COMMITS}-commit demo history')
    test_only = set(test_only_patches(settings.patch_dir))
    for patch in read_series(settings.patch_dir):
        if patch not in test_only:
            git(repo, 'apply', str(patch))
            git(repo, 'commit', '-q', '-a', '-m', patch.stem)
    base = git(repo, 'rev-parse', 'HEAD')
    regression = sorted((settings.repo / 'kernel-patches' / 'regressions' /
                         settings.tree).glob('01-*.patch'))[0]
    injected = ''
    for index in range(1, COMMITS + 1):
        if index == BAD_INDEX:
            git(repo, 'apply', str(regression))
            git(repo, 'commit', '-q', '-a', '-m',
                'tcp: tidy tcp_options_write() (re-introduces 2.6.27 order)')
            injected = git(repo, 'rev-parse', 'HEAD')
        else:
            commit_harmless(repo, index)
    return repo, base, injected


def bisect(settings: Settings, repo: Path, base: str) -> tuple[str, int]:
    counter = settings.tree_dir / 'bisect-demo' / 'builds'
    counter.write_text('')
    helper = settings.repo / 'tools' / 'bisect-layout'
    # The helper's Settings are this run's: its work dir, --jobs, --timeout.
    env = settings.child_env(TCPOPT_BISECT_COUNT=str(counter))
    git(repo, 'bisect', 'start', 'HEAD', base)
    try:
        proc = subprocess.run(['git', 'bisect', 'run', str(helper),
                               f'--tree={settings.tree}'], cwd=repo, env=env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              check=False)
    finally:
        subprocess.run(['git', 'bisect', 'reset', '-q'], cwd=repo,
                       capture_output=True, check=False)
    sys.stdout.write(proc.stdout.rstrip('\n') + '\n')
    named = ''
    for line in proc.stdout.splitlines():
        if line.endswith('is the first bad commit'):
            named = line.split()[0]
    builds = len(counter.read_text().splitlines())
    return named, builds


def run(settings: Settings) -> DemoResult:
    if not settings.pristine.is_dir():
        raise HarnessError('the pristine tree is missing: run ./run.sh first')
    repo, base, injected = build_history(settings)
    named, builds = bisect(settings, repo, base)
    budget = math.ceil(math.log2(COMMITS)) + 2
    return DemoResult(injected=injected, named=named, builds=builds,
                      budget=budget)

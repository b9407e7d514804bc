"""tools/bisect-layout: one `git bisect run` step on any kernel git tree.

At the revision the user's tree has checked out, the test-only part of
the series (the Kconfig symbol and the include hook), the series' fixes
where they apply cleanly, and kunit/ are put into a private checkout: a
`git clone --shared` of the user's repository under the work dir, so the
user's tree and index are never touched. The KUnit kernel is built
incrementally there and only the layout suites run.

Exit status, as git bisect run wants it:
  0    every layout case passes
  1    a layout case fails, or the kernel never finished the suites
  125  the test patches do not apply or the revision does not build (skip)
  128  a usage or set-up error (a wrong flag, not inside a git tree, no
       QEMU), help (-h), or a bug here: git bisect run stops and names
       no commit. 0 comes only from a verdict: git takes it for good.

Only the layout suites (the writer's, kunit/tcp_options_test.c) decide
good or bad; --suites all adds the parser and live suites.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import shutil
import subprocess
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from tcpopt.core.errors import HarnessError, set_program
from tcpopt.core.errors import log as say
from tcpopt.core.settings import DEFAULT_SUITES, DEFAULT_TREE, TREES, Settings
from tcpopt.log import ktap
from tcpopt.log.expected import case_names, expected_cases
from tcpopt.log.report import judge
from tcpopt.series.seriesfile import fix_patches, test_only_patches
from tcpopt.tree.kernel import run_kunit
from tcpopt.tree.scratch import ScratchTree
from tcpopt.tree.worktree import locked

GOOD, BAD, SKIP = 0, 1, 125
# Above 127: git bisect run aborts instead of taking a verdict.
ABORT = 128
LAYOUT_SOURCE = 'tcp_options_test.c'
# The writer's suites: tcp_opt_* without bench, live and parse.
LAYOUT_SUITES = 'tcp_opt_[!blp]*'


class SetupError(Exception):
    """Nothing to do with the revision: stop the bisection."""


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(['git', *args], cwd=cwd, capture_output=True,
                          text=True, check=True).stdout.strip()


@dataclass
class RevisionTree(ScratchTree):
    """The ScratchTree of a bisection step: a `git clone --shared` of the
    user's repository (@base) at @revision instead of a copy. A checkout
    gives new mtimes only to files that differ: make stays incremental.
    """
    revision: str = ''

    def base_id(self) -> str:
        return f'{self.base} at {self.revision}'

    def fill(self) -> None:
        if not (self.src / '.git').is_dir():
            self.src.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(['git', 'clone', '-q', '--shared', '--no-checkout',
                            str(self.base), str(self.src)], check=True)
        git('-c', 'advice.detachedHead=false', 'checkout', '-q', '-f',
            '--detach', self.revision, cwd=self.src)
        git('clean', '-q', '-f', '-d', '-x', cwd=self.src)


def has_test_patches(user_repo: Path, revision: str) -> bool:
    kconfig = git('show', f'{revision}:net/ipv4/Kconfig', cwd=user_repo)
    return 'TCP_OPTIONS_KUNIT_TEST' in kconfig


def step_tree(settings: Settings, user_repo: Path, revision: str,
              key: str) -> RevisionTree:
    """<work>/bisect/<repo id>/src at @revision with the test-only patches
    and the series' fixes where they apply: a known bug the series fixes
    (docs/bugs.md) must not make every revision that has it bad. A
    revision without the fixed code, or with the fix already in, takes
    none. build/ sits beside src/.
    """
    carries = has_test_patches(user_repo, revision)
    return RevisionTree(
        settings, settings.work_dir / 'bisect' / key / 'src', base=user_repo,
        patches=[] if carries else test_only_patches(settings.patch_dir),
        optional=[] if carries else fix_patches(settings.patch_dir),
        overlay=True, revision=revision)


def count_build() -> None:
    """Record one build for the demonstration's budget."""
    counter = os.environ.get('TCPOPT_BISECT_COUNT')
    if counter:
        with open(counter, 'a') as out:
            out.write('build\n')


def due_cases(settings: Settings, suites: str) -> List[str]:
    if suites == 'all':
        return expected_cases(settings.kunit_dir)
    return case_names((settings.kunit_dir / LAYOUT_SOURCE).read_text())


def run_layout_suites(settings: Settings, src: Path, build: Path,
                      suites: str = 'layout') -> int:
    build.mkdir(parents=True, exist_ok=True)
    count_build()
    output = build / 'kunit.out'
    # The one runner: its timeout, and an accelerator that works here.
    with open(output, 'w') as out:
        _, log = run_kunit(settings, src, build_dir=build, output=out,
                           filter_glob=(DEFAULT_SUITES if suites == 'all'
                                        else LAYOUT_SUITES))
    if not log.is_file():
        say(f'the tree does not build or boot (see {output}): skip')
        return SKIP
    run = ktap.read(log)
    if not run.cases:
        say(f'no KTAP from the kernel (see {output}): skip')
        return SKIP
    verdict = judge(run, due_cases(settings, suites))
    if verdict.ok:
        say(f'{len(verdict.passed)} layout cases pass: good')
        return GOOD
    failing = verdict.failed + verdict.missing
    say(f'{len(failing)} layout cases fail ({", ".join(failing[:4])}'
        f'{" ..." if len(failing) > 4 else ""}): bad')
    return BAD


def step(settings: Settings, user_repo: Path, suites: str) -> int:
    revision = git('rev-parse', 'HEAD', cwd=user_repo)
    key = hashlib.sha256(str(user_repo).encode()).hexdigest()[:12]
    with locked(settings, settings.work_dir / 'bisect' / key / '.lock'):
        tree = step_tree(settings, user_repo, revision, key)
        try:
            src = tree.ensure()
        except (HarnessError, OSError) as error:
            say(f'{error}: skip')
            return SKIP
        return run_layout_suites(settings, src, src.parent / 'build', suites)


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog='bisect-layout',
        description='git bisect run helper: 0 when the TCP option layouts '
        'match the KUnit tables, 1 when not, 125 when the revision cannot '
        'be tested, 128 on a usage or set-up error (git bisect run then '
        'stops). Run it from inside the kernel tree being bisected.',
        epilog='-h and --help exit 128 too, so that `git bisect run '
        'bisect-layout -h` stops instead of taking help for good.')
    parser.add_argument('--tree', default=DEFAULT_TREE, choices=sorted(TREES),
                        help='which kernel-patches/<tree> to take the '
                        'test-only patches from')
    parser.add_argument('--suites', default='layout',
                        choices=('layout', 'all'),
                        help='which suites decide good or bad: the layout '
                        'suites (default), or all of them, the parser and '
                        'live suites included')
    return parser.parse_args(argv)


def set_up(tree: str) -> tuple[Settings, Path]:
    """The settings and the repository being bisected, or SetupError."""
    try:
        user_repo = Path(git('rev-parse', '--show-toplevel', cwd=Path.cwd()))
    except (subprocess.CalledProcessError, OSError):
        raise SetupError(f'{Path.cwd()} is not inside a git tree: run it '
                         'from the kernel tree being bisected') from None
    if not shutil.which('qemu-system-x86_64'):
        raise SetupError('qemu-system-x86_64 is missing: apt-get install '
                         'qemu-system-x86')
    try:
        # A bisected revision gets the harness layer, not the upstream one.
        return dataclasses.replace(Settings.create(tree),
                                   harness_only=True), user_repo
    except HarnessError as error:
        raise SetupError(str(error)) from None


def main(argv: Optional[List[str]] = None) -> int:
    """The exit status: 0, 1 or 125 only from a verdict, else ABORT."""
    set_program('bisect-layout')
    try:
        return verdict(argv)
    except SystemExit:
        # argparse's help (0) or usage error (2): git would take either
        # for a verdict.
        return ABORT
    except Exception:       # a bug here says nothing about the revision
        traceback.print_exc()
        say('internal error; stopping the bisection')
        return ABORT


def verdict(argv: Optional[List[str]]) -> int:
    args = parse_args(argv)
    try:
        settings, user_repo = set_up(args.tree)
        return step(settings, user_repo, args.suites)
    except SetupError as error:
        say(f'{error}; stopping the bisection')
        return ABORT
    except (HarnessError, subprocess.CalledProcessError, OSError) as error:
        say(f'{error}; stopping the bisection')
        return ABORT

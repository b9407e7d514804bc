"""./run.sh selftest: the TCP-AO selftests on the series, and without the fix.

The syncookie selftest runs on the tree without the fix too, each set in
a QEMU boot of its own.

1. The series kernel: the export (net, then net-next) applied by git am
   onto the pristine tree in <work>/<tree>/git/src, built by the plain
   step's kunit.py command (plain.plain_command: the test command's
   plain step has built this very kernel, so a warm build is make's
   no-op), with the selftests' config fragment in its --kconfig_add.
2. The selftests, built static against that tree's UAPI headers, in an
   initramfs with busybox; /init runs each (initramfs.py), kunit.py exec
   boots it (KUnit's own run off: kunit.enable=0).
3. The tree without the fix: the pristine tree with only the selftest
   patch of the net set, the series kernel's .config, make. The
   syncookie selftest must fail there, naming what the two ends
   disagree on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.fs import write_atomic
from tcpopt.core.settings import SELFTEST_DIR, Settings
from tcpopt.selftest import catalog, initramfs, tap, userspace
from tcpopt.series import patchset, plain
from tcpopt.series.seriesfile import files_touched
from tcpopt.tree import cpio, kernel, sanitize, twice
from tcpopt.tree.accel import choose as choose_accel
from tcpopt.tree.worktree import ensure_pristine

SERIES, UNFIXED = 'series', 'unfixed'
# QEMU's time beyond the tests' own: boot, /init, the kernel log.
BOOT_SLACK = 240
# The syncookie selftest's failures on a tree without the fix name what
# the two ends disagree on.
DISAGREEMENT = 'disagree'

# /init, not KUnit's boot-time run, is what this boot is for.
COMMAND_LINE = 'console=ttyS0 kunit_shutdown=none kunit.enable=0'


@dataclass
class Outcome:
    variant: str
    names: List[str]
    boot: tap.Boot
    log: Path
    problems: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def work(settings: Settings) -> Path:
    return settings.tree_dir / 'selftest'


def check_tree(settings: Settings) -> None:
    if not settings.has_ao_selftests:
        raise UsageError(f'selftest: {settings.tree} has no TCP-AO (Linux '
                         '6.7 and later) and its series no syncookie fix; '
                         'use --tree 6.12 or --tree 7.3')


def check_names(settings: Settings, wanted: Sequence[str]) -> None:
    """Before any work: the tree has the selftests, each name is one of
    the tree's or the one the series adds."""
    check_tree(settings)
    catalog.choose(ensure_pristine(settings), wanted, [catalog.SYNCOOKIES])


def export_mails(settings: Settings) -> List[Path]:
    """The export step's mails (the test command's, or cmd_selftest's)."""
    mails = patchset.mails(plain.export_dir(settings))
    if not mails:
        raise HarnessError(f'no export in {plain.export_dir(settings)}: the '
                           'export step failed')
    return mails


def is_selftest(mail: Path) -> bool:
    touched = files_touched(mail)
    return bool(touched) and all(name.startswith(SELFTEST_DIR + '/')
                                 for name in touched)


def split_net(settings: Settings,
              mails: Sequence[Path]) -> tuple[List[Path], List[Path]]:
    """The net set's fixes and its selftest patches."""
    net = [mail for mail in mails if mail.parent.name == 'net']
    selftests = [mail for mail in net if is_selftest(mail)]
    fixes = [mail for mail in net if mail not in selftests]
    if not selftests:
        raise UsageError(f'selftest: the {settings.tree} export has no '
                         'TCP-AO selftest patch in its net set')
    if not fixes:
        raise UsageError(f'selftest: the {settings.tree} export has no fix '
                         'in its net set: nothing to test the selftest '
                         'against')
    return fixes, selftests


def build_series_kernel(settings: Settings, repo: Path) -> Path:
    """The plain step's kunit.py build: its no-op when that step ran."""
    build = repo.parent / 'build'
    command = plain.plain_command(settings, repo, 'build') + \
        [f'--jobs={kernel.jobs(settings)}']
    out = work(settings) / 'build.log'
    with open(out, 'w') as output:
        status = kernel.supervise(settings, command, repo, None,
                                  None, output, settings.kunit_timeout)
    if status:
        raise HarnessError(f'selftest: kunit.py build of {repo} failed '
                           f'(exit {status}); see {out}')
    return build


def build_unfixed_kernel(settings: Settings, repo: Path) -> Path:
    """The series kernel's .config on the tree without the fix."""
    build = repo.parent / 'build'
    if not (build / '.config').is_file():
        raise HarnessError(f'selftest: no {build}/.config: the series kernel '
                           'is built first')
    for targets in (('olddefconfig',), ('bzImage',)):
        result = kernel.make(settings, repo, build, *targets)
        if result.returncode:
            raise HarnessError(f'selftest: make {" ".join(targets)} of the '
                               f'tree without the fix failed: '
                               f'{userspace.last_lines(result.stderr)}')
    return build


def boot(settings: Settings, repo: Path, build: Path, variant: str,
         names: Sequence[str],
         each: Optional[int] = None) -> tuple[tap.Boot, Path]:
    """Headers, binaries, initramfs, one boot; its console read once."""
    include = userspace.headers(settings, repo, build)
    binaries = userspace.build(settings, repo, include,
                               work(settings) / variant / 'bin', names)
    each = each or catalog.timeout(repo)
    initrd = initramfs.pack(build, work(settings) / f'{variant}.cpio',
                            binaries, each, twice.log_buffer_size(build))
    qemu = cpio.qemu_config(work(settings) / 'selftest_qemu.py', initrd,
                            COMMAND_LINE)
    console = work(settings) / f'{variant}.log'
    with kernel.log_moved_to(build, console):
        kernel.run_kunit(settings, repo, build_dir=build, action='exec',
                         accel=choose_accel(build), qemu_config=qemu,
                         timeout=each * len(binaries) + BOOT_SLACK)
    if not console.is_file():
        raise HarnessError(f'selftest: kunit.py wrote no log in {build}')
    with open(console, errors='replace') as lines:
        return tap.read(list(lines)), console


def judge_series(boot: tap.Boot, binaries: Sequence[str]) -> List[str]:
    """Every binary passed or skipped, in a boot that finished cleanly."""
    problems = [f'{r.binary}: {r.directive or r.status}'
                + (f' ({r.failures[0]})' if r.failures else '')
                for r in boot.results if r.status == 'fail']
    problems += [f'{name}: no result' for name in binaries
                 if boot.result(name) is None]
    return problems + common_problems(boot)


def judge_unfixed(boot: tap.Boot, binaries: Sequence[str]) -> List[str]:
    """The syncookie selftest fails, and says what the ends disagree on."""
    problems = []
    for name in binaries:
        result = boot.result(name)
        if result is None:
            problems.append(f'{name}: no result')
        elif result.status != 'fail':
            problems.append(f'{name}: {result.status} on the tree without '
                            'the fix')
        elif not any(DISAGREEMENT in line for line in result.failures):
            problems.append(f'{name}: failed without naming a disagreement')
    return problems + common_problems(boot)


def common_problems(boot: tap.Boot) -> List[str]:
    problems = [] if boot.done else ['/init did not finish: the boot '
                                     'crashed or timed out']
    if boot.splats.sanitizer:
        problems.append(f'{sanitize.counts(boot.splats.sanitizer)} splats')
    return problems


def run_series(settings: Settings, wanted: Optional[Sequence[str]],
               each: Optional[int]) -> Outcome:
    mails = export_mails(settings)
    split_net(settings, mails)
    repo = plain.git_am(settings, mails)
    names = catalog.for_ci(repo) if wanted is None else \
        catalog.choose(repo, wanted)
    build = build_series_kernel(settings, repo)
    result, console = boot(settings, repo, build, SERIES, names, each)
    return Outcome(SERIES, names, result, console,
                   judge_series(result, catalog.binaries(names)))


def run_unfixed(settings: Settings) -> Outcome:
    _, selftests = split_net(settings, export_mails(settings))
    repo = plain.git_am(settings, selftests)
    build = build_unfixed_kernel(settings, repo)
    names = [catalog.SYNCOOKIES]
    result, console = boot(settings, repo, build, UNFIXED, names)
    return Outcome(UNFIXED, names, result, console,
                   judge_unfixed(result, catalog.binaries(names)))


def save(settings: Settings, outcomes: Sequence[Outcome]) -> Path:
    """<work>/<tree>/selftest/results.json: each boot's results."""
    path = work(settings) / 'results.json'
    write_atomic(path, json.dumps({
        outcome.variant: {
            'log': str(outcome.log), 'problems': outcome.problems,
            'results': [{'binary': r.binary, 'status': r.status,
                         'directive': r.directive, 'totals': r.totals,
                         'failures': r.failures,
                         'skip_reason': r.skip_reason
                         if r.status == 'skip' else ''}
                        for r in outcome.boot.results]}
        for outcome in outcomes}, indent=1) + '\n')
    return path


def run(settings: Settings, wanted: Optional[Sequence[str]],
        unfixed: bool = True, each: Optional[int] = None) -> List[Outcome]:
    """The series boot with @wanted (every test when empty; None: the
    test command's, all but catalog.SLOW), each given @each seconds
    (default: the folder's settings), then, when the syncookie selftest
    is among them, the tree without the fix."""
    check_names(settings, wanted or [])
    work(settings).mkdir(parents=True, exist_ok=True)
    outcomes = [run_series(settings, wanted, each)]
    if unfixed and catalog.SYNCOOKIES in outcomes[0].names:
        outcomes.append(run_unfixed(settings))
    save(settings, outcomes)
    return outcomes

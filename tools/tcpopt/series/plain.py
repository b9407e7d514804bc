"""The series on its own: export, checkpatch, `git am`, plain kunit.py.

What a netdev reviewer does with the posted series, with nothing from this
repository copied into the tree:

1. what `./run.sh series --export DIR` does, with a throwaway identity,
   into <work>/<tree>/export/;
2. `scripts/checkpatch.pl --strict` on every exported patch, which must
   carry a "tcp: " subject and the signer's Signed-off-by;
3. `git am` of the patches (not the cover letter) onto the pristine
   commit of <work>/<tree>/git/;
4. `./tools/testing/kunit/kunit.py run --arch=x86_64
   --kunitconfig=net/ipv4/tests` in that tree (net/ipv4 for a series of
   one layer), whose every expected case must pass.

kunit.py gets three flags of its own beyond that: --build_dir=../build
(<work>/<tree>/git/build, kept between runs, so a warm run rebuilds only
what the patches touch), --make_options CC="ccache gcc" and a
--kconfig_add for each option the harness trims from x86_64's defaults
(settings.TRIM_KCONFIG: ACPI and the like, no test's concern), plus, on the
test command's debug tree, the debug options (sanitize.KCONFIG), so that an
object whose preprocessed text is the main build's comes from ccache:
git/src and git/build sit as src/ and build/ do, and ccache sees the same
relative paths. On a two-layer tree few are: the upstream .kunitconfig
leaves out what the harness's adds (netfilter, IPv6, MPTCP...), which
most objects' text depends on (7.3, cold: 211 hits, 1006 misses).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Sequence

from tcpopt.core.fs import remove_tree
from tcpopt.core.settings import (OVERLAY_DIR, SANITIZER_KCONFIG, TRIM_KCONFIG,
                                  UPSTREAM_TEST_DIR, Settings, kunit_log)
from tcpopt.log import ktap
from tcpopt.log.expected import expected_cases, upstream_cases
from tcpopt.log.report import Verdict, judge
from tcpopt.selftest import catalog
from tcpopt.series import checkpatch, patchset
from tcpopt.tree.accel import choose as choose_accel
from tcpopt.tree.kernel import compiler, supervise

THROWAWAY = patchset.Identity('Throwaway Export', 'throwaway@example.invalid')
PLAIN_COMMAND = ['./tools/testing/kunit/kunit.py', 'run', '--arch=x86_64']
# kunit.py's own flags: where to build, and ccache (see above).
BUILD_FLAGS = ['--build_dir=../build']


@dataclass
class ExportResult:
    patches: List[Path]
    checks: List[checkpatch.CheckResult] = field(default_factory=list)
    recipients: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)


def export_dir(settings: Settings) -> Path:
    return settings.tree_dir / 'export'


def export_and_check(settings: Settings, dest: Path, who: patchset.Identity,
                     trailers: Sequence[str] = ()) -> ExportResult:
    """Export the series as @who into @dest, then checkpatch each patch
    and ask get_maintainer.pl who should receive it."""
    patches = patchset.export(settings, dest, who, trailers)
    repo = patchset.ensure_git_base(settings)
    result = ExportResult(patches)
    for patch in patchset.mails(dest):
        # Outside git: the tree has no history to look commit ids up in.
        check = checkpatch.run(settings.pristine, patch, as_file=False)
        check.problems[:0] = checkpatch.series_conventions(patch)
        result.checks.append(check)
    result.recipients = patchset.get_maintainer(repo, patchset.mails(dest))
    return result


def ci_export(settings: Settings) -> ExportResult:
    """The test command's export: a throwaway identity, a fresh dir."""
    dest = export_dir(settings)
    remove_tree(dest)
    return export_and_check(settings, dest, THROWAWAY)


def git_am(settings: Settings, patches: List[Path]) -> Path:
    """The pristine tree with the exported patches applied by git am;
    left as it is when it already holds exactly these, untouched, so that
    the next build (the selftest step's, after the plain step's) finds
    nothing newer."""
    repo = patchset.ensure_git_base(settings)
    stamp = repo / '.git' / patchset.APPLIED
    applied = patches_digest(patches)
    if stamp.is_file() and stamp.read_text() == applied and \
            not patchset.git(repo, 'status', '--porcelain').strip():
        return repo
    patchset.reset_to_base(repo)
    patchset.git(repo, 'am', '-q', *map(str, patches),
                 env=THROWAWAY.git_env(),
                 what=f'git am of the export onto {settings.package}')
    stamp.write_text(applied)
    return repo


def patches_digest(patches: List[Path]) -> str:
    """The patches' text but what each export changes (the commit id on
    the first line, the date)."""
    digest = hashlib.sha256()
    for patch in patches:
        for line in patch.read_text(errors='replace').splitlines()[1:]:
            if not line.startswith('Date: '):
                digest.update(line.encode() + b'\n')
    return digest.hexdigest()


def plain_kunitconfig(settings: Settings) -> str:
    """The series' own .kunitconfig: the upstream tests' on a tree with
    the two layers (its export holds nothing else), else net/ipv4's."""
    return UPSTREAM_TEST_DIR if settings.layered else OVERLAY_DIR


def plain_command(settings: Settings, repo: Path,
                  action: str = 'run') -> List[str]:
    """The README's kunit.py command, with the flags above; @action
    'build' only builds (the selftest boot's kernel)."""
    command = PLAIN_COMMAND if action == 'run' else \
        [PLAIN_COMMAND[0], action, *PLAIN_COMMAND[2:]]
    return command + [f'--kunitconfig={plain_kunitconfig(settings)}'] + \
        BUILD_FLAGS + ['--make_options', f'CC={compiler()}'] + \
        [f'--kconfig_add={option}'
         for option in plain_kconfig_add(settings, repo)]


def plain_kconfig_add(settings: Settings, repo: Path) -> List[str]:
    """The trimmed defaults; on the debug tree also the debug options, so
    that the objects are the main (debug) build's; on a tree with the
    TCP-AO selftests what they need, so that the selftest step boots this
    very kernel."""
    selftests = catalog.kconfig(repo) if settings.has_ao_selftests else []
    return TRIM_KCONFIG + (SANITIZER_KCONFIG if settings.sanitize else []) \
        + selftests


def run_plain_kunit(settings: Settings, repo: Path) -> tuple[int, Path]:
    """kunit.py as the README gives it, through the one runner; its
    output in a log."""
    out = settings.tree_dir / 'plain-kunit.log'
    test_log = plain_log(repo)
    test_log.unlink(missing_ok=True)
    with open(out, 'w') as log:
        status = supervise(settings, plain_command(settings, repo), repo,
                           test_log, choose_accel(settings.build_dir), log,
                           settings.kunit_timeout)
    return status, out


def plain_log(repo: Path) -> Path:
    """kunit.py's own log: the README's command builds beside the tree."""
    return kunit_log(repo.parent / 'build')


def plain_verdict(settings: Settings, repo: Path) -> Verdict:
    """Every expected case in kunit.py's own test.log."""
    log = plain_log(repo)
    expected = upstream_cases(settings.kunit_dir, settings.version) \
        if settings.layered else \
        expected_cases(settings.kunit_dir)
    if not log.is_file():
        return Verdict(missing=expected, crashed=True)
    return judge(ktap.read(log), expected)


def plain_splats(settings: Settings, repo: Path) -> list:
    """The debug kernel's KASAN, UBSAN, KFENCE and lockdep reports."""
    log = plain_log(repo)
    if not settings.sanitize or not log.is_file():
        return []
    return ktap.read(log).sanitizer


def closing_lines(log: Path, count: int = 3) -> List[str]:
    """kunit.py's summary: its last lines."""
    lines = [line.rstrip() for line in log.read_text(errors='replace')
             .splitlines() if line.startswith('[')]
    return lines[-count:]

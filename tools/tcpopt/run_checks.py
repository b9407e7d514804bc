"""The KUnit step and the checks of its output, with their tally.

The checks are layouts, sweep, tshark, the live capture, the sanitizers
and twice in one boot; the tally is the one the test command keeps of
them."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tcpopt.core.errors import HarnessError
from tcpopt.core.fs import display
from tcpopt.core.settings import DEFAULT_SUITES, Settings
from tcpopt.layout import capture, dissect, sweep, tables
from tcpopt.log import ktap
from tcpopt.log.expected import expected_cases, suite_names
from tcpopt.log.report import (Verdict, failure_details, judge, layout_table,
                               raw_lines, summary)
from tcpopt.tree import kernel, sanitize, twice
from tcpopt.tree.identity import kernel_version
from tcpopt.tree.worktree import PreparedTree


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, ok: bool, count: int = 1) -> None:
        if ok:
            self.passed += count
        else:
            self.failed += count

    def closing_line(self) -> str:
        line = f'{self.passed} passed, {self.failed} failed'
        return line + (f', {self.skipped} skipped' if self.skipped else '')


def heading(text: str) -> None:
    print(f'\n== {text}', flush=True)


def kunit_step(tree: PreparedTree, raw: Optional[str] = None
               ) -> tuple[Verdict, Optional[ktap.Run]]:
    """Prepare the tree (plus any injected patches), build, boot, and
    report every case; the run, None without a log, is the one reading
    of test.log that every check after this step takes."""
    settings, source = tree.settings, tree.source()
    version = kernel_version(source)
    print(f'tree: {settings.label} {version} in {source}', flush=True)
    status, log = build_and_boot(settings, source)
    # --filter leaves cases out on purpose; KTAP's plan still shows a
    # kernel that stopped early.
    expected = [] if settings.filter_glob else \
        expected_cases(settings.kunit_dir, settings.upstream_suites)
    if not log.is_file():
        print(f'kunit.py exited with status {status} before the kernel ran; '
              'its output above says why')
        return Verdict(missing=expected, crashed=True), None
    run = ktap.read(log)
    verdict = judge(run, expected)
    show_run(run, verdict, raw)
    if status and verdict.ok:
        print(f'kunit.py exited with status {status}')
        verdict.crashed = True
    return verdict, run


def show_run(run: ktap.Run, verdict: Verdict, raw: Optional[str]) -> None:
    """The layout table and failures, or the raw console; the summary."""
    print()
    if raw:
        assert run.log is not None
        print('\n'.join(raw_lines(run.log, raw)))
    else:
        print(layout_table(run.cases))
        details = failure_details(run.cases)
        if details:
            print('\n' + details)
    print('\n' + summary(verdict, run), flush=True)


def build_and_boot(settings: Settings, source: Path) -> tuple[int, Path]:
    """kunit.py run; or exec when no file of the tree and nothing of the
    config changed since the last successful build."""
    if kernel.unchanged_since_build(settings, source):
        print('no change since the last build: booting it (kunit.py exec)',
              flush=True)
        return kernel.run_kunit(settings, source, action='exec')
    kernel.drop_build_stamp(settings)
    pending = kernel.start_build_stamp(settings)
    status, log = kernel.run_kunit(settings, source)
    if log.is_file():                   # it built, and the kernel booted
        pending.rename(settings.build_dir / kernel.BUILT)
    return status, log


def kunit_test_step(tree: PreparedTree, tally: Tally) -> Optional[ktap.Run]:
    verdict, run = kunit_step(tree)
    tally.add(True, len(verdict.passed))
    tally.add(False, len(verdict.failed) + len(verdict.missing))
    tally.skipped += len(verdict.skipped)
    if verdict.crashed:
        tally.add(False)
    return run


def need(settings: Settings, run: Optional[ktap.Run]) -> ktap.Run:
    """The KUnit step's run: the checks of its output need one."""
    if run is None:
        raise HarnessError(f'no KUnit log at {settings.test_log}: the KUnit '
                           'step failed')
    return run


def need_build(tree: PreparedTree) -> Path:
    """src/, with a configured kernel in the build dir: the steps that
    build on the main build (kconfig, mutants, mutate, the cost) need
    one, so the KUnit step runs first when there is none."""
    if not (tree.settings.build_dir / '.config').is_file():
        kunit_step(tree)
    return tree.source()


def layouts_step(settings: Settings, tally: Tally, run: ktap.Run) -> None:
    """docs/layouts/<tree>.md is golden: any layout change is a diff."""
    problems = tables.check_golden(run, settings.tree, tables.DOCS_DIR)
    for block in problems:
        print(block)
    if problems:
        print(f'FAIL docs/layouts/{settings.tree}.md: {len(problems)} '
              'differences; review them, then ./run.sh layouts --update')
    else:
        print(f'PASS docs/layouts/{settings.tree}.md and its pictures match '
              'the kernel')
    tally.add(not problems)


def sweep_step(settings: Settings, tally: Tally, run: ktap.Run) -> None:
    """Every in-kernel sweep record against the reference model.

    A tree built with TCP-AO also prints the AO groups, so they are due.
    """
    result = sweep.compare(run.sweep, kinds=settings.kinds)
    print(sweep.format_report(result))
    print(f'{"PASS" if result.ok else "FAIL"} sweep on {settings.tree}')
    tally.add(result.ok)


def tshark_step(tally: Tally, run: ktap.Run) -> None:
    problems = dissect.check_with_tshark(run)
    checked = len([row for row in tables.rows(run) if row.layout is not None])
    for problem in problems:
        print(f'FAIL {problem}')
    print(f'{"PASS" if not problems else "FAIL"} tshark decoded {checked} '
          f'layouts: {len(problems)} disagreements')
    tally.add(not problems)


# Problems a capture prints at the most: a bad run can have hundreds.
CAPTURE_PROBLEMS_SHOWN = 20


def capture_report(settings: Settings, tally: Tally,
                   run: Optional[ktap.Run]) -> bool:
    """The run's tcp_opt_live packets as a pcap, read by tshark."""
    try:
        result = capture.capture(need(settings, run),
                                 settings.tree_dir / 'capture' / 'live.pcap')
    except HarnessError as error:
        print(f'FAIL live capture: {error}')
        tally.add(False)
        return False
    for problem in result.problems[:CAPTURE_PROBLEMS_SHOWN]:
        print(f'FAIL {problem}')
    if len(result.problems) > CAPTURE_PROBLEMS_SHOWN:
        print(f'... and {len(result.problems) - CAPTURE_PROBLEMS_SHOWN} '
              'more problems')
    print(capture.case_counts(result.packets))
    print(f'{"PASS" if result.ok else "FAIL"} '
          f'{capture.summary_line(result)}')
    tally.add(result.ok)
    return result.ok


def capture_step(settings: Settings, tally: Tally, run: ktap.Run) -> None:
    """Due once kunit/ has the live suite; takes the KUnit step's run."""
    if not capture.suite_declared(settings.kunit_dir):
        print(f'SKIP kunit/ has no {capture.SUITE} suite')
        tally.skipped += 1
        return
    capture_report(settings, tally, run)


def debug_kunit_step(tree: PreparedTree, tally: Tally
                     ) -> Optional[ktap.Run]:
    """The KUnit step on the debug kernel: every case as kunit_test_step
    counts it, and any KASAN, UBSAN, KFENCE or lockdep report fails."""
    run = kunit_test_step(tree, tally)
    tally.add(report_splats(tree.settings, run.sanitizer if run else []))
    return run


def report_splats(settings: Settings, reports: list) -> bool:
    """Print each report and the verdict line; True if there were none."""
    for report in reports:
        print('\n' + report.render())
    print(f'\n{"FAIL" if reports else "PASS"} {settings.tree} with KASAN, '
          f'UBSAN, KFENCE and lockdep: {sanitize.counts(reports)} splats in '
          f'{display(settings.test_log)}', flush=True)
    return not reports


def sanitize_step(tree: PreparedTree, tally: Tally,
                  raw: Optional[str] = None
                  ) -> tuple[bool, Verdict, Optional[ktap.Run]]:
    """The suites under KASAN, UBSAN and KFENCE: any report fails, even
    in a case KUnit calls passed."""
    verdict, run = kunit_step(tree, raw)
    clean = report_splats(tree.settings, run.sanitizer if run else [])
    tally.add(verdict.ok)
    tally.add(clean)
    return verdict.ok and clean, verdict, run


def twice_step(settings: Settings, tally: Tally) -> bool:
    """Every suite twice in one boot of the debug kernel (twice.py): both
    runs pass every case, and neither prints a splat."""
    twice.check_tree(settings.source)
    glob = settings.filter_glob or DEFAULT_SUITES
    suites = [s for s in suite_names(settings.kunit_dir,
                                     settings.upstream_suites)
              if fnmatch.fnmatchcase(s, glob.partition('.')[0])]
    boot = twice.boot(settings, suites)
    due = [] if settings.filter_glob else \
        expected_cases(settings.kunit_dir, settings.upstream_suites)
    first, second = judge(boot.first, due), judge(boot.second, due)
    reports = boot.splats.sanitizer
    for report in reports:
        print('\n' + report.render())
    for name, verdict, run in (('boot', first, boot.first),
                               ('debugfs', second, boot.second)):
        print(f'{name} run: {summary(verdict, run)}')
        if verdict.failed:
            print(f'  failed in the {name} run: {", ".join(verdict.failed)}')
    for suite in boot.missing_suites:
        print(f'no debugfs run file for {suite}')
    ok = first.ok and second.ok and boot.done and \
        not boot.missing_suites and not reports
    print(f'\n{"PASS" if ok else "FAIL"} {settings.tree}: {len(suites)} '
          f'suites twice in one boot, {len(second.passed)} cases passed the '
          f'second time, {sanitize.counts(reports)} splats'
          + ('' if boot.done else ', /init never finished')
          + f' in {display(twice.log_of(settings))}',
          flush=True)
    tally.add(ok)
    return ok

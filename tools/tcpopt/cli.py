"""run.sh's command line: the main job and the test command."""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import os
import re
import sys
import time
import unittest
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import (IO, Callable, Iterator, List, NoReturn, Optional,
                    Sequence)

from . import (bisect_demo, bisectable, bloat, checkpatch, compare, deps,
               dissect, kconfig_matrix, kernel, ktap, layouts, mutants, mutate,
               plain, sanitize, series, sweep, worktree)
from . import (accel, backports, bench, buildcheck, capture, hotpath,
               steptime, twice, workdir)
from .errors import HarnessError, SetupError, UsageError, no_space
from .expected import expected_cases, filter_problem, suite_names
from .report import (Verdict, as_json, failure_details, judge, layout_table,
                     raw_lines, summary)
from .settings import (BACKPORTED, BUILD_FREE_IN_CI, BUILD_FREE_STEPS,
                       DEFAULT_SUITES, DEFAULT_TREE, HEAVY_STEPS,
                       MUTATION_SAMPLE, MUTATION_SEED, REPO, TEST_TREES,
                       TREES, Settings)


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


@dataclass
class Output:
    """run and parse: --json (a file, or 'stdout') and --raw_output."""
    json: Optional[str] = None
    raw: Optional[str] = None


def kunit_step(settings: Settings, inject: Optional[List[Path]] = None,
               raw: Optional[str] = None
               ) -> tuple[Verdict, Optional[ktap.Run]]:
    """Prepare the tree (plus any injected patches), build, boot, and
    report every case; the run, None without a log, is the one reading
    of test.log that every check after this step takes."""
    source = worktree.prepare(settings, inject)
    version = worktree.kernel_version(source)
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


def write_json(target: Optional[str], document: dict,
               stdout: Optional[IO] = None) -> None:
    if not target:
        return
    text = json.dumps(document, indent=1) + '\n'
    if target == 'stdout':
        (stdout or sys.stdout).write(text)
        (stdout or sys.stdout).flush()
    else:
        worktree.write_atomic(Path(target), text)


@contextmanager
def json_channel(output: Output) -> Iterator[Optional[IO]]:
    """With --json to stdout, stdout carries the JSON alone: everything
    else, kunit.py and make included, goes to stderr meanwhile."""
    if output.json != 'stdout':
        yield None
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with os.fdopen(os.dup(saved), 'w') as channel:
            yield channel
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


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


def unit_test_step(tally: Tally) -> None:
    suite = unittest.defaultTestLoader.discover(str(REPO / 'tools' / 'tests'),
                                                top_level_dir=str(REPO / 'tools'))
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1).run(suite)
    bad = len(result.failures) + len(result.errors) + \
        len(result.unexpectedSuccesses)
    tally.add(False, bad)
    tally.add(True, result.testsRun - bad - len(result.skipped))
    tally.skipped += len(result.skipped)


def bloat_step(settings: Settings, tally: Tally) -> None:
    for result in bloat.check(settings):
        if result.error:
            print(f'FAIL {result.config_name} config: {result.error}')
        else:
            print(f'{"PASS" if result.ok else "FAIL"} {result.config_name} '
                  f'config: {bloat.OBJECT} total delta {result.delta} bytes, '
                  f'.text {"identical" if result.text_identical else "differs"}')
            print('     ' + result.report.splitlines()[0]
                  if result.report else '     (no bloat-o-meter output)')
            if not result.ok:
                print(result.report)
        tally.add(result.ok)
    if settings.layered:
        cost_step(settings, tally)


def cost_step(settings: Settings, tally: Tally) -> None:
    """What the upstream layer costs tcp_output.o: measured, printed."""
    try:
        rows = bloat.production_cost(settings)
    except HarnessError as error:
        print(f'FAIL production cost: {error}')
        tally.add(False)
        return
    for row in rows:
        print(f'cost of the upstream layer, {bloat.OBJECT}, {row.line()}')
        print('\n'.join('     ' + line for line in row.report.splitlines()))
    tally.add(all(row.delta is not None for row in rows))


def bisectable_step(settings: Settings, tally: Tally) -> None:
    for result in bisectable.check(settings):
        name = worktree.display(result.patch)
        print(f'PASS {name}' if result.ok else f'FAIL {name}: {result.problem}')
        tally.add(result.ok)


def series_step(settings: Settings, tally: Tally) -> None:
    """The stored series holds no identity and matches kunit/."""
    problems = series.check(settings)
    source = worktree.prepare(settings)
    problems += series.kunitconfig_problems(settings, source)
    for problem in problems:
        print(f'FAIL {problem}')
    if not problems:
        print(f'PASS kernel-patches/{settings.tree} adds every kunit/ source '
              'byte for byte, its net/ipv4/.kunitconfig is .kunitconfig, '
              'and no stored patch carries an identity')
    tally.add(not problems)


def print_export(result: plain.ExportResult) -> None:
    for check in result.checks:
        name = check.path.name
        if check.ok:
            print(f'PASS checkpatch.pl --strict {name}')
        else:
            print(f'FAIL checkpatch.pl --strict {name}: ' +
                  '; '.join(check.problems[:-1] or check.problems))
            print(check.problems[-1])
    print('get_maintainer.pl --nogit:')
    for line in result.recipients:
        print(f'  {line}')


def export_step(settings: Settings, tally: Tally) -> None:
    """Export with a throwaway identity; every patch passes checkpatch."""
    result = plain.ci_export(settings)
    print(f'exported {len(result.patches)} files to '
          f'{plain.export_dir(settings)}')
    print_export(result)
    for check in result.checks:
        tally.add(check.ok)


def plain_step(settings: Settings, tally: Tally) -> None:
    """git am of the export, then kunit.py exactly as the README says."""
    patches = series.mails(plain.export_dir(settings))
    if not patches:
        raise HarnessError(f'no export in {plain.export_dir(settings)}: the '
                           'export step failed')
    repo = plain.git_am(settings, patches)
    print(f'git am: {len(patches)} patches onto {settings.package} in {repo}')
    print('$ ' + ' '.join(plain.plain_command(settings)), flush=True)
    status, log = plain.run_plain_kunit(settings, repo)
    for line in plain.closing_lines(log):
        print(f'  {line}')
    verdict = plain.plain_verdict(settings, repo)
    reports = plain.plain_splats(settings, repo)
    for report in reports:
        print('\n' + report.render())
    ok = status == 0 and verdict.ok and not reports
    splats = f', {sanitize.counts(reports)} splats' if settings.sanitize \
        else ''
    print(f'{"PASS" if ok else "FAIL"} plain kunit.py on {settings.tree}: '
          f'exit {status}, {len(verdict.passed)} passed, '
          f'{len(verdict.failed)} failed, {len(verdict.skipped)} skipped, '
          f'{len(verdict.missing)} missing{splats} (log {log})')
    tally.add(ok)


def kconfig_step(settings: Settings, tally: Tally) -> None:
    for row in kconfig_matrix.check(settings):
        print(row.line(settings.tree), flush=True)
        tally.add(row.ok)


def cmd_series(settings: Settings, action: str,
               dest: Optional[Path] = None,
               trailers: Sequence[str] = ()) -> int:
    if action == 'regen':
        written = series.regen(settings)
        for path in written:
            print(f'rewrote {worktree.display(path)}')
        print(f'kernel-patches/{settings.tree}: {len(written)} patches '
              'regenerated from kunit/')
        return 0
    if action == 'cost':
        if not settings.layered:
            raise UsageError(f'--cost: kernel-patches/{settings.tree} has no '
                             'upstream layer')
        tally = Tally()
        with worktree.locked(settings):
            worktree.prepare(settings)
            cost_step(settings, tally)
        return 0 if tally.failed == 0 else 1
    if action == 'build-check':
        with worktree.locked(settings):
            results = buildcheck.check(settings)
        for result in results:
            print(result.line())
            for line in result.diagnostics[:5]:
                print(f'    {line}')
            for line in result.inherited[:5]:
                print(f'    (as in the pristine tree) {line}')
        return 0 if all(r.ok for r in results) else 1
    if action == 'export':
        who = series.user_identity(REPO)
        with worktree.locked(settings):
            result = plain.export_and_check(settings, dest, who, trailers)
        for patch in result.patches:
            print(patch)
        print_export(result)
        return 0 if result.ok else 1
    problems = series.check(settings)
    for problem in problems:
        print(f'FAIL {problem}')
    if not problems:
        print(f'PASS kernel-patches/{settings.tree} matches kunit/')
    return 1 if problems else 0


def cmd_kconfig(settings: Settings) -> int:
    tally = Tally()
    with worktree.locked(settings):
        worktree.prepare(settings)
        if not (settings.build_dir / '.config').is_file():
            kunit_step(settings)
        kconfig_step(settings, tally)
    return 1 if tally.failed else 0


def cmd_plain(settings: Settings) -> int:
    tally = Tally()
    with worktree.locked(settings):
        export_step(settings, tally)
        plain_step(settings, tally)
    return 1 if tally.failed else 0


def mutants_step(settings: Settings, tally: Tally,
                 new_only: bool = False) -> bool:
    results = mutants.run_all(settings, new_only)
    print(mutants.kill_matrix(results))
    for result in results:
        tally.add(result.killed)
    return all(result.killed for result in results)


def cmd_mutants(settings: Settings) -> int:
    with worktree.locked(settings):
        worktree.prepare(settings)
        if not (settings.build_dir / '.config').is_file():
            kunit_step(settings)
        heading(f'mutants: kernel-patches/regressions/{settings.tree}')
        return 0 if mutants_step(settings, Tally()) else 1


def mutate_run(settings: Settings, functions: Optional[List[str]],
               size: Optional[int], seed: int,
               ids: Optional[List[str]] = None) -> tuple:
    """The chosen generated mutants, run (resuming), and their score."""
    worktree.prepare(settings)
    tree = mutants.scratch(settings)
    tree.ensure()
    build = mutants.mutant_dirs(settings)[1]
    every = mutate.select(mutate.all_mutants(settings, tree.src, functions),
                          ids)
    chosen = mutate.sample(every, size, seed)
    equivalents = mutate.read_equivalents(mutate.equivalent_file(settings))
    results = mutate.run_all(settings, tree, build, chosen)
    return chosen, results, equivalents


def mutate_step(settings: Settings, tally: Tally) -> bool:
    """The fixed sample: every mutant killed or declared equivalent."""
    chosen, results, equivalents = mutate_run(
        settings, None, MUTATION_SAMPLE, MUTATION_SEED)
    total = mutate.score(chosen, results, equivalents)
    alive = mutate.survivors(chosen, results, equivalents)
    for mutant in alive:
        print(f'SURVIVED {mutant.ident} {mutant.file}:{mutant.line} '
              f'({mutant.function}, {mutant.kind}): {mutant.describe()}')
    for ident in total.flagged:
        print(f'FLAGGED {ident}: declared equivalent, but a case kills it')
    ok = not alive and not total.flagged and not total.no_build
    print(f'{"PASS" if ok else "FAIL"} sample of {len(chosen)} generated '
          f'mutants (seed {MUTATION_SEED}): {total.line()}')
    tally.add(ok)
    return ok


def machine_line(settings: Settings) -> str:
    """Where the mutants ran, for the report: CPUs and QEMU's accelerator."""
    build = mutants.mutant_dirs(settings)[1]
    chosen = accel.choose(build).name if build.is_dir() else 'tcg'
    return f'{os.cpu_count()} CPUs, QEMU under {chosen.upper()}'


def list_mutants(settings: Settings, functions: Optional[List[str]],
                 size: Optional[int], seed: int,
                 ids: Optional[List[str]]) -> None:
    """Only reads the sources: a prepared tree needs no lock, so a list
    works while a run holds it."""
    if worktree.read_state(settings.source) is None:
        with worktree.locked(settings):
            worktree.prepare(settings)
    every = mutate.select(mutate.all_mutants(
        settings, settings.source, functions), ids)
    for mutant in mutate.sample(every, size, seed):
        print(f'{mutant.ident}  {mutant.file}:{mutant.line}  '
              f'{mutant.kind:10}  {mutant.describe()}')


def cmd_mutate(settings: Settings, functions: Optional[List[str]],
               size: Optional[int], seed: int, listing: bool,
               ids: Optional[List[str]] = None) -> int:
    if listing:
        list_mutants(settings, functions, size, seed, ids)
        return 0
    with worktree.locked(settings):
        if not (settings.build_dir / '.config').is_file():
            kunit_step(settings)
        started = time.monotonic()
        chosen, results, equivalents = mutate_run(settings, functions,
                                                  size, seed, ids)
        total = mutate.score(chosen, results, equivalents)
        for mutant in chosen:
            result = results[mutant.ident]
            print(f'{result.verdict:9} {mutant.ident}  {mutant.describe()}'
                  + (f'  [{" ".join(result.failing[:6])}'
                     f'{" ..." if len(result.failing) > 6 else ""}]'
                     if result.failing else ''))
        print(total.line())
        group = mutate.group_of(functions)
        if size is None and not ids and (not functions or group):
            name = settings.tree + (f'-{group}' if group else '')
            out = settings.repo / 'docs' / 'mutation' / f'{name}.md'
            out.parent.mkdir(parents=True, exist_ok=True)
            worktree.write_atomic(out, mutate.render(
                settings, chosen, results, equivalents,
                f'./run.sh mutate --tree {settings.tree}'
                + (f' --functions {group}' if group else ''),
                time.strftime('%Y-%m-%d'), machine_line(settings),
                functions))
            print(f'wrote {worktree.display(out)} '
                  f'({time.monotonic() - started:.0f} s this run)')
        alive = mutate.survivors(chosen, results, equivalents)
        return 0 if not alive and not total.flagged else 1


def need(settings: Settings, run: Optional[ktap.Run]) -> ktap.Run:
    """The KUnit step's run: the checks of its output need one."""
    if run is None:
        raise HarnessError(f'no KUnit log at {settings.build_dir / "test.log"}'
                           ': the KUnit step failed')
    return run


def layouts_step(settings: Settings, tally: Tally, run: ktap.Run) -> None:
    """docs/layouts/<tree>.md is golden: any layout change is a diff."""
    problems = layouts.check_golden(run, settings.tree, layouts.DOCS_DIR)
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
    result = sweep.compare(run.sweep,
                           ao=settings.has_tcp_ao,
                           accecn=settings.has_accecn,
                           mptcp=settings.has_mptcp)
    print(sweep.format_report(result))
    print(f'{"PASS" if result.ok else "FAIL"} sweep on {settings.tree}')
    tally.add(result.ok)


def tshark_step(tally: Tally, run: ktap.Run) -> None:
    problems = dissect.check_with_tshark(run)
    checked = len([row for row in layouts.rows(run) if row.layout is not None])
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


def cmd_capture(settings: Settings) -> int:
    with worktree.locked(settings):
        verdict, run = kunit_step(settings)
        heading(f'live capture: {capture.SUITE} on {settings.tree}')
        captured = capture_report(settings, Tally(), run)
    return 0 if verdict.ok and captured else 1


def cmd_layouts(settings: Settings, update: bool = False, png: bool = False,
                inject: Optional[List[Path]] = None) -> int:
    with worktree.locked(settings):
        verdict, run = kunit_step(settings, inject)
        if update:
            written = layouts.write_layouts(need(settings, run),
                                            settings.tree, layouts.DOCS_DIR,
                                            png=png)
            print(f'wrote {len(written)} files under {layouts.DOCS_DIR}')
            return 0 if verdict.ok else 1
        tally = Tally()
        heading(f'docs/layouts/{settings.tree}.md against the kernel')
        layouts_step(settings, tally, need(settings, run))
    return 0 if verdict.ok and not tally.failed else 1


def cmd_compare(trees: List[Settings]) -> int:
    """docs/layouts/compare-<tree>-<tree>[-<tree>].md from the trees' last
    runs, oldest tree first: only reads their logs, builds nothing."""
    logs = [settings.build_dir / 'test.log' for settings in trees]
    missing = [s.tree for s, log in zip(trees, logs) if not log.is_file()]
    if missing:
        raise UsageError(f'--compare: no last run of {", ".join(missing)} '
                         'to compare (./run.sh run --tree T makes one)')
    runs = []
    for settings, log in zip(trees, logs):
        run = ktap.read(log)
        due = expected_cases(settings.kunit_dir, settings.upstream_suites)
        if not judge(run, due).ok:
            print(f'run.sh: error: --compare: the last {settings.tree} run '
                  f'({log}) did not pass every case; run it again',
                  file=sys.stderr)
            return EXIT_FAILED
        runs.append(run)
    names = [settings.tree for settings in trees]
    text = compare.render(names, runs)
    out = layouts.DOCS_DIR / f'compare-{"-".join(names)}.md'
    out.write_text(text)
    heading(f'{out.relative_to(REPO)}')
    print(text, end='')
    return 0


def debug_kunit_step(settings: Settings, tally: Tally
                     ) -> Optional[ktap.Run]:
    """The KUnit step on the debug kernel: every case as kunit_test_step
    counts it, and any KASAN, UBSAN, KFENCE or lockdep report fails."""
    run = kunit_test_step(settings, tally)
    tally.add(report_splats(settings, run.sanitizer if run else []))
    return run


def report_splats(settings: Settings, reports: list) -> bool:
    """Print each report and the verdict line; True if there were none."""
    for report in reports:
        print('\n' + report.render())
    log = settings.build_dir / 'test.log'
    print(f'\n{"FAIL" if reports else "PASS"} {settings.tree} with KASAN, '
          f'UBSAN, KFENCE and lockdep: {sanitize.counts(reports)} splats in '
          f'{worktree.display(log)}', flush=True)
    return not reports


def sanitize_step(settings: Settings, tally: Tally,
                  inject: Optional[List[Path]] = None,
                  raw: Optional[str] = None
                  ) -> tuple[bool, Verdict, Optional[ktap.Run]]:
    """The suites under KASAN, UBSAN and KFENCE: any report fails, even
    in a case KUnit calls passed."""
    verdict, run = kunit_step(settings, inject, raw)
    clean = report_splats(settings, run.sanitizer if run else [])
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
          + f' in {worktree.display(settings.build_dir / "twice.log")}',
          flush=True)
    tally.add(ok)
    return ok


def cmd_run(settings: Settings, inject: Optional[List[Path]] = None,
            output: Output = Output(), twice: bool = False) -> int:
    with worktree.locked(settings), json_channel(output) as channel:
        if settings.sanitize:
            ok, verdict, run = sanitize_step(settings, Tally(), inject,
                                             output.raw)
        else:
            verdict, run = kunit_step(settings, inject, output.raw)
            ok = verdict.ok
        if twice:
            heading(f'{settings.tree}: every suite twice in one boot')
            ok = twice_step(settings, Tally()) and ok
        write_json(output.json, as_json(settings.tree, verdict, run),
                   channel)
    return EXIT_OK if ok else EXIT_FAILED


def parse_paths(settings: Settings, log: Optional[Path],
                output: Output) -> Path:
    """The log parse reads, checked; --json may never name it."""
    log = log or settings.build_dir / 'test.log'
    if log.is_dir():
        raise UsageError(f'{log} is a directory: give a KUnit log file')
    if not log.is_file():
        raise UsageError(f'{log}: no such KUnit log (run ./run.sh first, or '
                         'name one)')
    if output.json not in (None, 'stdout') and \
            Path(output.json).resolve() == log.resolve():
        raise UsageError(f'--json {output.json} is the log parse reads: it '
                         'would overwrite it')
    return log


def run_filter(settings: Settings, run: ktap.Run) -> Optional[str]:
    """--filter's glob, else the one the kernel's command line shows; None
    for a default run (its glob only leaves out the benchmark)."""
    glob = settings.filter_glob or run.filter_glob
    return None if glob == DEFAULT_SUITES else glob


def due_in(settings: Settings, run: ktap.Run) -> List[str]:
    """The cases a log must report: none by name under a filter, as with
    run --filter."""
    return [] if run_filter(settings, run) else \
        expected_cases(settings.kunit_dir, settings.upstream_suites)


def cmd_parse(settings: Settings, log: Optional[Path],
              output: Output = Output()) -> int:
    """kunit.py parse: an existing log, judged against kunit/'s cases.
    The log is only read."""
    log = parse_paths(settings, log, output)
    run = ktap.read(log)
    if not run.started:
        raise UsageError(f'no KTAP output in {log}')
    glob = run_filter(settings, run)
    with json_channel(output) as channel:
        verdict = judge(run, due_in(settings, run))
        print(f'log: {worktree.display(log)}' +
              (f' (filter {glob}: what ran is judged)' if glob else ''))
        show_run(run, verdict, output.raw)
        write_json(output.json, as_json(settings.tree, verdict, run),
                   channel)
    return EXIT_OK if verdict.ok else EXIT_FAILED


def bisect_demo_step(settings: Settings, tally: Tally) -> bool:
    result = bisect_demo.run(settings)
    print(f'{"PASS" if result.ok else "FAIL"} git bisect run '
          f'tools/bisect-layout named {result.named or "nothing"}; '
          f'injected {result.injected}; {result.builds} builds '
          f'(budget {result.budget})')
    tally.add(result.ok)
    return result.ok


def cmd_bisect_demo(settings: Settings) -> int:
    with worktree.locked(settings):
        worktree.prepare(settings)
    return 0 if bisect_demo_step(settings, Tally()) else 1


# Every build-heavy step, for test --all-steps: what CI spreads over the
# trees (HEAVY_STEPS), all of it on the trees named.
ALL_HEAVY_STEPS = ('bloat', 'plain', 'kconfig', 'bisectable', 'mutants',
                   'mutate')


def tree_steps(settings: Settings, tally: Tally, demo: bool,
               every: bool = False, build_free: bool = False) -> list:
    """What the test command checks on one tree, in order: the KUnit
    suites and every check of their output, the series check and the
    export on each tree; the build-heavy steps HEAVY_STEPS names for it
    (a cold CI must stay under 60 minutes; README says which run where).
    On the debug tree (@settings.sanitize) every step takes the debug
    kernel, and its suites run twice in one boot too.
    """
    tree = settings.tree
    runs: List[Optional[ktap.Run]] = []  # the KUnit step's, read once

    def checks(step: Callable[[ktap.Run], None]) -> Callable[[], None]:
        return lambda: step(need(settings, runs[-1]))

    kunit_title = f'KUnit suites in QEMU ({settings.package})'
    if settings.sanitize:
        kunit_title = (f'KUnit suites in QEMU ({settings.package}) with KASAN, '
                       'UBSAN, KFENCE and lockdep: no splat (./run.sh '
                       '--sanitize)')
    steps = [
        ('kunit-debug' if settings.sanitize else 'kunit', kunit_title,
         lambda: runs.append(debug_kunit_step(settings, tally)
                             if settings.sanitize else
                             kunit_test_step(settings, tally))),
        ('sweep', f'sweep: every {tree} combination against the reference '
         'model', checks(lambda run: sweep_step(settings, tally, run))),
        ('layouts', f'docs/layouts/{tree}.md is golden',
         checks(lambda run: layouts_step(settings, tally, run))),
        ('tshark', f'tshark decodes every {tree} layout the same way',
         checks(lambda run: tshark_step(tally, run))),
        ('capture', f'live capture: the {tree} {capture.SUITE} packets as a '
         'pcap that tshark reads cleanly',
         checks(lambda run: capture_step(settings, tally, run))),
        ('series', f'kernel-patches/{tree} is kunit/ byte for byte, with no '
         'identity', lambda: series_step(settings, tally)),
        ('export', f'export of kernel-patches/{tree} (throwaway identity): '
         'checkpatch.pl --strict and get_maintainer.pl',
         lambda: export_step(settings, tally)),
    ]
    heavy = {
        'bloat': (f'zero-delta check: {tree} tcp_output.o with '
                  'CONFIG_TCP_OPTIONS_KUNIT_TEST=n, pristine (plus the '
                  'series\' fixes) vs patched',
                  lambda: bloat_step(settings, tally)),
        'plain': (f'git am of the export onto {settings.package}, then '
                  'plain kunit.py --kunitconfig='
                  f'{plain.plain_kunitconfig(settings)}',
                  lambda: plain_step(settings, tally)),
        'kconfig': (f'Kconfig matrix: every {tree} test symbol without each '
                    'dependency', lambda: kconfig_step(settings, tally)),
        'bisectable': (f'every prefix of kernel-patches/{tree} builds '
                       '(bisectable)', lambda: bisectable_step(settings, tally)),
        'mutants': (f'mutants: every {tree} regression fails a named case',
                    lambda: mutants_step(settings, tally)),
        'new-mutants': (f'mutants: every {tree} regression of code '
                        f'{DEFAULT_TREE} lacks fails a named case',
                        lambda: mutants_step(settings, tally, new_only=True)),
        'mutate': (f'generated mutants: a fixed sample of {MUTATION_SAMPLE} '
                   f'on {tree}, each killed or declared equivalent',
                   lambda: mutate_step(settings, tally)),
    }
    if build_free:
        return [step for step in steps if step[0] in BUILD_FREE_STEPS]
    chosen = ALL_HEAVY_STEPS if every else HEAVY_STEPS.get(tree, ())
    steps += [(name, *heavy[name]) for name in chosen]
    if demo and every:
        steps.append(('bisect-demo', f'git bisect run tools/bisect-layout on '
                      f'a synthetic {tree} history',
                      lambda: bisect_demo_step(settings, tally)))
    if settings.sanitize and settings.has_kunit_debugfs_run:
        steps.append(('twice', f'every suite twice in one boot of the {tree} '
                      'debug kernel (KUnit\'s debugfs run file): both runs '
                      'pass, no splat (./run.sh run --twice)',
                      lambda: twice_step(settings, tally)))
    return steps


def cmd_test(trees: List[Settings], quick: bool = False,
             every: bool = False, named: bool = True) -> int:
    """Host tests once, then every step on every tree; unless the trees
    were @named, those in BUILD_FREE_IN_CI only get the steps that build
    no kernel.

    The debug build (KASAN, UBSAN, KFENCE and lockdep) runs on the last
    tree named, the newest; with @every the bisect demonstration, which
    proves a helper that is the same code for every tree, on the first. Each step is timed (build, boot, ccache)
    into <work dir>/test-steps.md, and stopped once past its budget
    (steptime.budget()).
    """
    tally = Tally()
    steps = [('host', 'host tool unit tests', None,
              lambda: unit_test_step(tally))]
    for index, settings in enumerate(trees):
        demo = index == 0 and not quick
        if index == len(trees) - 1 and not quick:
            # One debug kernel for the tree's every step: a second cold
            # build of the same tree is what a cold CI cannot afford.
            settings = dataclasses.replace(settings, sanitize=True)
        build_free = not named and settings.tree in BUILD_FREE_IN_CI
        steps += [(step, title, settings, fn) for step, title, fn in
                  tree_steps(settings, tally, demo, every, build_free)]
    times: List[steptime.StepTime] = []
    ccache_dir = trees[0].ccache_dir
    header = {'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
              'commit': steptime.commit_of(REPO), 'planned': len(steps),
              'cpus': os.cpu_count(), 'cold': starts_cold(trees),
              'command': ' '.join(['./run.sh'] + sys.argv[1:])
              if sys.argv[1:] else './run.sh test'}
    for number, (step, title, settings, run_step) in enumerate(steps, 1):
        heading(f'{number}/{len(steps)} {title}')
        try:
            with steptime.measured(number, step,
                                   settings.tree if settings else '',
                                   title, ccache_dir, times), \
                    steptime.alarm_after(steptime.budget(step), step):
                if settings is None:
                    run_step()
                else:
                    with worktree.locked(settings):
                        run_step()
        except steptime.OverBudget as error:
            print(f'FAIL {error} (measured cold: '
                  f'{steptime.COLD_SECONDS[step]} s): this machine is too '
                  'slow for the test command\'s 60-minute budget; the '
                  'remaining steps were not run')
            tally.add(False)
            break
        finally:
            if times and times[-1].number == number:
                print(times[-1].line(len(steps)), flush=True)
    write_step_times(trees[0], times, header)
    print()
    print(tally.closing_line(), flush=True)
    return 0 if tally.failed == 0 else 1


def starts_cold(trees: List[Settings]) -> bool:
    """No tree's work dir yet, and nothing in the ccache."""
    counts = steptime.ccache_counts(trees[0].ccache_dir)
    return not any(settings.tree_dir.exists() for settings in trees) and \
        counts.hits + counts.misses == 0


def write_step_times(settings: Settings, times: List[steptime.StepTime],
                     header: dict) -> None:
    """<work dir>/test-steps.{json,md}: where this run's time went (the
    header says when it started, at which commit), and the disk its work
    dir takes."""
    header['disk'] = workdir.disk_usage(settings.work_dir)
    steptime.save(times, settings.work_dir / 'test-steps.json', header)
    worktree.write_atomic(settings.work_dir / 'test-steps.md',
                          steptime.section(header, times))
    print(f'step times: {settings.work_dir / "test-steps.md"}')


def kunit_test_step(settings: Settings, tally: Tally) -> Optional[ktap.Run]:
    verdict, run = kunit_step(settings)
    tally.add(True, len(verdict.passed))
    tally.add(False, len(verdict.failed) + len(verdict.missing))
    tally.skipped += len(verdict.skipped)
    if verdict.crashed:
        tally.add(False)
    return run


def cmd_clean(trees: List[Settings], keep_build: bool) -> int:
    """Remove a tree's work dir, or with @keep_build all but its main
    build: the scratch trees (mutants, bisection, git am, sanitizer...)."""
    for settings in trees:
        if not settings.tree_dir.is_dir():
            print(f'{settings.tree}: nothing in {settings.tree_dir}')
            continue
        with worktree.locked(settings):
            removed = workdir.clean(settings, keep_build)
        for path, size in removed:
            print(f'removed {path} ({size / 2**30:.1f} GiB)')
        freed = sum(size for _, size in removed)
        print(f'{settings.tree}: freed {freed / 2**30:.1f} GiB'
              + (' (kept pristine/, src/ and build/)' if keep_build else ''))
    return EXIT_OK


def cmd_hot_path(settings: Settings) -> int:
    """The hot-path benchmark alone, with its verdict."""
    from . import perfreport
    with worktree.locked(settings):
        worktree.prepare(settings)
        worktree.ensure_pristine(settings)
        hot = hotpath.measure(settings, accel.choose(settings.build_dir),
                              scale=False)
    if hot.problem:
        print(f'FAIL hot path: {hot.problem}')
        return EXIT_FAILED
    for cells in perfreport.hot_cells(hot):
        print('  '.join(cells))
    for note in hot.notes:
        print(note)
    result = hotpath.verdict(hot.comparisons)
    print(result.line())
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_bench(settings: Settings, costs: bool = False,
              argv: Optional[List[str]] = None) -> int:
    return bench.main(settings, argv or ['bench'], costs=costs)


COMMANDS = {'run': cmd_run, 'test': cmd_test, 'mutants': cmd_mutants,
            'parse': cmd_parse,
            'mutate': cmd_mutate,
            'bisect-demo': cmd_bisect_demo, 'layouts': cmd_layouts,
            'capture': cmd_capture, 'bench': cmd_bench, 'series': cmd_series,
            'kconfig': cmd_kconfig, 'plain': cmd_plain, 'clean': cmd_clean}


def tree_order(name: str) -> tuple:
    """'6.1' before '6.12': compare versions, not strings."""
    return tuple(int(part) for part in name.split('.'))


def step_titles(tree: str, debug: bool = False) -> List[str]:
    settings = Settings(tree, Path('<work dir>'), sanitize=debug)
    return [title for _, title, _ in
            tree_steps(settings, Tally(), demo=False)]


def test_help() -> str:
    """The test command's steps for --help, from tree_steps() itself, so
    the help cannot fall behind them."""
    last = TEST_TREES[-1]
    every = step_titles(DEFAULT_TREE)
    common = len(every) - len(HEAVY_STEPS[DEFAULT_TREE])
    lines = ['the test command, in order:', '  1. host tool unit tests',
             f'  on every tree ({", ".join(TEST_TREES)}), here '
             f'{DEFAULT_TREE}:']
    lines += [f'  {n}. {title}' for n, title in
              enumerate(every[:common], 2)]
    for tree in TEST_TREES:
        if tree in BUILD_FREE_IN_CI:
            lines.append(f'  on {tree}, only what builds no kernel '
                         f'({", ".join(BUILD_FREE_STEPS)}): --tree {tree} '
                         'runs the rest')
            continue
        heavy = step_titles(tree)[common:]
        lines.append(f'  then on {tree}:' if heavy else
                     f'  on {tree}, no build-heavy step')
        lines += [f'  - {title}' for title in heavy]
    lines.append(f'  on the last tree ({last}), unless --quick, every step '
                 'takes one debug kernel (KASAN, UBSAN, KFENCE, lockdep; any '
                 'splat fails), and:')
    lines += [f'  - {title}' for title in
              step_titles(last, debug=True)[len(step_titles(last)):]]
    lines.append('  --all-steps: every build-heavy step on every tree named '
                 '(bloat, plain, kconfig, bisectable, mutants, mutate), and '
                 'the bisect demonstration on the first')
    return '\n'.join(lines)


# Options that exclude each other: the first would silently win.
EXCLUSIVE = (('regen', 'export'), ('regen', 'build_check'),
             ('export', 'build_check'), ('cost', 'regen'), ('cost', 'export'),
             ('cost', 'build_check'), ('compare', 'update'),
             ('compare', 'inject'), ('compare', 'tree'), ('source', 'tree'))
# Exit status, as kunit.py's.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_HELP = (f'exit status, as kunit.py\'s: {EXIT_OK} every check passed, '
             f'{EXIT_FAILED} a test or check failed, {EXIT_USAGE} a usage or '
             'set-up error (nothing was tested: a bad option, a missing '
             'package, a tarball or patch that does not apply); 130 '
             'interrupted.')
# kunit.py's own spellings (underscores) where it has the concept.
KUNIT_SPELLINGS = ('build_dir', 'raw_output')
# The options that take a value: a command name after one is that value.
TAKES_VALUE = ('--tree', '--inject', '--source', '--filter', '--build_dir',
               '--timeout', '--jobs', '--export', '--functions', '--sample',
               '--seed', '--ids', '--json', '--raw_output', '--compare',
               '--trailer')


def flag(dest: str) -> str:
    if dest in KUNIT_SPELLINGS:
        return '--' + dest
    return '--' + dest.replace('_', '-')


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a UsageError: one line, exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def add_tree_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--tree', choices=sorted(TREES, key=tree_order),
                        action='append',
                        help=f'kernel tree (default {DEFAULT_TREE}; the test '
                        'command runs every tree unless one is named)')


def add_build_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--jobs', type=positive, metavar='N',
                        help='make -jN (default: one per CPU)')


def add_exec_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--timeout', type=positive, metavar='SECONDS',
                        help='how long the kernel may run in QEMU (default '
                        f'{kernel.DEFAULT_TIMEOUT}, or $TCPOPT_KUNIT_TIMEOUT)')


def add_output_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--json', nargs='?', const='stdout', metavar='FILE',
                        help='the verdict and the layout table as JSON, to '
                        'FILE or (without one) to stdout; everything else '
                        'then goes to stderr')
    parser.add_argument('--raw_output', nargs='?', const='all',
                        choices=('all', 'kunit'),
                        help='print the kernel\'s console output (all, the '
                        'default) or its KTAP part (kunit) instead of the '
                        'layout table')


def add_inject_opt(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--inject', action='append', type=Path,
                        metavar='PATCH',
                        help='apply PATCH on top of the series for this run '
                        'only (a fault to show the suites catch it); the '
                        'next run without it rebuilds the clean tree')


def add_filter_opt(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--filter', metavar='GLOB', dest='filter_glob',
                        help='only the suites (and cases) matching GLOB, '
                        'kunit.py\'s filter_glob: suite_glob[.test_glob]; '
                        'cases it leaves out are not due')


def add_run_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--sanitize', action='store_true',
                        help='build with KASAN, UBSAN and KFENCE in a '
                        'separate build dir; any sanitizer report fails')
    parser.add_argument('--twice', action='store_true',
                        help='with the --sanitize build (implied), then boot '
                        'it once more and run every suite a second time in '
                        "the same boot, through KUnit's debugfs run file "
                        '(Linux 6.7 and later); any failure or splat fails')
    add_inject_opt(parser)
    parser.add_argument('--source', type=Path, metavar='DIR',
                        help='the suites on your own kernel tree or git '
                        'checkout (6.1 or later), with the series of the '
                        'nearest supported tree; DIR is only read, its copy '
                        'and warm build live in the work dir')
    add_filter_opt(parser)
    parser.add_argument('--build_dir', type=Path, metavar='DIR',
                        help='kunit.py --build_dir (default <work '
                        'dir>/<tree>/build)')


def add_layouts_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--update', action='store_true',
                        help='rewrite docs/layouts/<tree>.md and its '
                        'pictures from this run')
    parser.add_argument('--png', action='store_true',
                        help='with --update: PNGs too, if rsvg-convert '
                        '(librsvg2-bin) is installed')
    parser.add_argument('--compare', nargs='+', metavar='TREE',
                        choices=sorted(TREES, key=tree_order),
                        help='side-by-side table of the cases that differ '
                        'between two or three trees, oldest first, with the '
                        'reason')
    add_inject_opt(parser)


def add_mutate_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--functions', type=lambda text: text.split(','),
                        metavar='F,...',
                        help='only these functions (default: all the '
                        'targets in tools/tcpopt/mutate.py), or a group: '
                        '"layout", the layout functions of the upstream '
                        'series, whose run writes docs/mutation/<tree>-'
                        'layout.md')
    parser.add_argument('--sample', type=positive, metavar='N',
                        help='N mutants picked with --seed')
    parser.add_argument('--seed', type=int, metavar='S',
                        help=f'the sample\'s seed (default {MUTATION_SEED}, '
                        'the one the test command uses)')
    parser.add_argument('--list', action='store_true',
                        help='print the mutants, run nothing')
    parser.add_argument('--ids', type=lambda text: text.split(','),
                        metavar='ID,...',
                        help='only these mutants (ids from --list)')


def add_series_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--regen', action='store_true',
                        help='rewrite the test files in kernel-patches/<tree> '
                        'from kunit/')
    parser.add_argument('--export', type=Path, metavar='DIR',
                        help='write the series for posting to DIR (git '
                        'format-patch signed with your git user.name and '
                        'user.email; on a tree with two layers, the fix as '
                        'DIR/net/ [PATCH net] and the rest of upstream/ as '
                        'DIR/net-next/ [PATCH net-next n/m]), then run '
                        'checkpatch.pl --strict and get_maintainer.pl')
    parser.add_argument('--build-check', action='store_true',
                        help='build the objects each patch of the upstream '
                        'layer touches with W=1 under gcc and clang-19, '
                        'patch by patch; any new warning fails')
    parser.add_argument('--cost', action='store_true',
                        help="what the upstream layer costs tcp_output.o: "
                        'bloat-o-meter and .text against the pristine tree '
                        'plus the fixes, CONFIG_KUNIT off and on')
    parser.add_argument('--trailer', action='append', default=[],
                        metavar="'KEY: VALUE'",
                        help='with --export: add this trailer to every '
                        "commit (git commit --trailer), e.g. 'Cc: ...'; "
                        'repeatable')


def add_test_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--quick', action='store_true',
                        help='skip the sanitizer build')
    parser.add_argument('--all-steps', action='store_true',
                        help='every build-heavy step on every tree named, '
                        'not only those CI runs there (README): e.g. '
                        '--tree 6.12 --all-steps')


def add_parse_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('log', nargs='?', type=Path, metavar='LOG',
                        help='a KUnit console log, only read (default: the '
                        'last run\'s <work dir>/<tree>/build/test.log); a '
                        'word right after --json is the LOG: write '
                        '--json=FILE for a file')
    add_filter_opt(parser)


def add_clean_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--keep-build', action='store_true',
                        help='keep the extracted tree, the patched tree and '
                        'the main build (the next run stays warm); remove '
                        'the scratch trees only')


def add_bench_opts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--kunitconfig-costs', action='store_true',
                        help='also build without each .kunitconfig option '
                        'and report what it costs')
    parser.add_argument('--hot-path', action='store_true',
                        help='only the hot path, pristine against patched, '
                        'with its verdict (median ratio <= 1.02)')


# command: (what it does, its option groups). Every command takes --tree.
SUBCOMMANDS = {
    'run': ('build, run the suites in QEMU and print the layout table (the '
            'default command)',
            (add_run_opts, add_build_opts, add_exec_opts, add_output_opts)),
    'test': ('the test command (what .ci/run calls)',
             (add_test_opts, add_build_opts, add_exec_opts)),
    'parse': ('read an existing KUnit log and print its verdict and layout '
              'table, as kunit.py parse; a filtered run\'s log is judged '
              'by its filter', (add_parse_opts, add_output_opts)),
    'layouts': ('check docs/layouts/<tree>.md against this run',
                (add_layouts_opts, add_build_opts, add_exec_opts)),
    'capture': ('run the suites, write the tcp_opt_live packets to <work '
                'dir>/<tree>/capture/live.pcap and check it with tshark',
                (add_build_opts, add_exec_opts)),
    'mutants': ('the kill matrix of kernel-patches/regressions/',
                (add_build_opts, add_exec_opts)),
    'mutate': ('generated mutants of the option code, run (resuming where a '
               'run stopped) and scored; the full run writes '
               'docs/mutation/<tree>.md', (add_mutate_opts, add_build_opts)),
    'bisect-demo': ('git bisect run tools/bisect-layout on a synthetic '
                    'history', ()),
    'bench': ('time the developer loop (cold, warm, edits, QEMU boots) and '
              'the hot path; writes <work dir>/bench/performance.md',
              (add_bench_opts,)),
    'series': ('check that kernel-patches/<tree> matches kunit/',
               (add_series_opts,)),
    'kconfig': ('the Kconfig matrix', (add_build_opts,)),
    'plain': ('export, git am and plain kunit.py, as a reviewer would', ()),
    'clean': ('remove the work dir of a tree (every tree without --tree), '
              'or with --keep-build only its scratch trees',
              (add_clean_opts,)),
}


def build_parser() -> Parser:
    parser = Parser(
        prog='run.sh', epilog=EXIT_HELP,
        description='Build the TCP option KUnit suites on a Debian kernel '
        'tree and run them under QEMU. Without a command: run. '
        '"./run.sh COMMAND --help" lists a command\'s options.')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND',
                                     parser_class=Parser)
    for name, (text, groups) in SUBCOMMANDS.items():
        epilog = (test_help() + '\n\n' if name == 'test' else '') + EXIT_HELP
        sub = commands.add_parser(
            name, help=text, description=text, epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        add_tree_opts(sub)
        for group in groups:
            group(sub)
    return parser


def commands_taking(option: str) -> List[str]:
    """The commands that take @option, e.g. '--quick'."""
    found = []
    for name, (_, groups) in SUBCOMMANDS.items():
        probe = argparse.ArgumentParser(add_help=False)
        for group in groups:
            group(probe)
        if option in probe._option_string_actions:
            found.append(name)
    return found


def with_command_first(argv: List[str]) -> List[str]:
    """kunit.py wants the command first; run.sh also takes it after the
    options ('./run.sh --tree 6.12 test') and defaults to run."""
    if argv[:1] in (['-h'], ['--help']):
        return argv
    for index, arg in enumerate(argv):
        if arg in SUBCOMMANDS and (index == 0 or
                                   argv[index - 1] not in TAKES_VALUE):
            return [arg] + argv[:index] + argv[index + 1:]
    return ['run'] + argv


def usage_problem(args: argparse.Namespace) -> Optional[str]:
    """Why these options do not fit together; None if they do."""
    if args.tree and len(args.tree) > 1:
        return f'--tree given {len(args.tree)} times ' \
            f'({", ".join(args.tree)}): name one tree'
    for first, second in EXCLUSIVE:
        if getattr(args, first, None) and getattr(args, second, None):
            return f'{args.command}: give {flag(first)} or ' \
                f'{flag(second)}, not both'
    compare = getattr(args, 'compare', None)
    if compare and (not 2 <= len(compare) <= 3 or
                    compare != sorted(set(compare), key=tree_order)):
        return '--compare takes 2 or 3 different trees, oldest first'
    if getattr(args, 'png', False) and not args.update:
        return '--png only goes with --update'
    return None


def parse_args(argv: List[str]) -> argparse.Namespace:
    """The command and its options, or a UsageError: an option the
    command does not take names the commands that do."""
    args, extra = build_parser().parse_known_args(with_command_first(argv))
    if extra:
        option = extra[0].split('=', 1)[0]
        takers = commands_taking(option) if option.startswith('-') else []
        if takers:
            raise UsageError(f'{option} only applies to ' + ' and '.join(
                f'./run.sh {name}' for name in takers))
        if not option.startswith('-'):
            raise UsageError(f'{args.command}: unexpected {extra[0]!r} '
                             f'(commands: {", ".join(SUBCOMMANDS)})')
        raise UsageError(f'{args.command}: unrecognized arguments: '
                         f'{" ".join(extra)}')
    problem = usage_problem(args)
    if problem:
        raise UsageError(problem)
    return json_took_the_log(args, argv)


def json_took_the_log(args: argparse.Namespace,
                      argv: List[str]) -> argparse.Namespace:
    """'parse --json LOG': argparse hands LOG to --json as its file, which
    would overwrite the log. A word after a bare --json is parse's LOG;
    a file for the JSON is written --json=FILE."""
    if args.command != 'parse' or args.log is not None or \
            args.json in (None, 'stdout') or '--json' not in argv:
        return args
    following = argv[argv.index('--json') + 1:argv.index('--json') + 2]
    if following == [args.json]:
        args.log, args.json = Path(args.json), 'stdout'
    return args


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f'{text}: not a positive number')
    return value


def _existing(patches: Optional[List[Path]]) -> List[Path]:
    for patch in patches or []:
        if not patch.is_file():
            raise HarnessError(f'--inject {patch}: no such file')
    return [patch.resolve() for patch in patches or []]


def source_settings(directory: Path, sanitize: bool) -> Settings:
    """--source DIR: a readable kernel tree, and the series it takes."""
    directory = directory.expanduser().resolve()
    if not (directory / 'Makefile').is_file():
        raise UsageError(f'--source {directory}: not the top of a kernel '
                         'source tree (no Makefile)')
    return Settings.for_source(directory, worktree.kernel_version(directory),
                               sanitize=sanitize)


def install(trees: List[Settings]) -> None:
    """The Debian packages of these trees, and the backported ones."""
    deps.ensure_packages(deps.required_packages(
        *[package for tree in trees for package in tree.apt_packages]))
    for settings in trees:
        if settings.tree in BACKPORTED and not settings.user_source:
            backports.ensure(settings.work_dir, settings.tree)


def tree_settings(args: argparse.Namespace) -> List[Settings]:
    """The trees the command runs on, with its --build_dir and --filter."""
    # The test command covers every tree unless one is named.
    names = args.tree or \
        (list(TEST_TREES) if args.command == 'test' else [DEFAULT_TREE])
    sanitize = getattr(args, 'sanitize', False) or \
        getattr(args, 'twice', False)
    source = getattr(args, 'source', None)
    trees = [source_settings(source, sanitize)] if source else \
        [Settings.create(name, sanitize=sanitize) for name in names]
    build_dir = getattr(args, 'build_dir', None)
    return [dataclasses.replace(
        settings, filter_glob=getattr(args, 'filter_glob', None),
        build_override=build_dir and build_dir.expanduser().resolve())
        for settings in trees]


def export_build_options(args: argparse.Namespace) -> None:
    """--jobs and --timeout reach every build and boot of the command,
    through the variables the harness reads (TCPOPT_JOBS,
    TCPOPT_KUNIT_TIMEOUT)."""
    if getattr(args, 'jobs', None):
        os.environ['TCPOPT_JOBS'] = str(args.jobs)
    if getattr(args, 'timeout', None):
        os.environ['TCPOPT_KUNIT_TIMEOUT'] = str(args.timeout)


def check_before_work(args: argparse.Namespace, settings: Settings) -> None:
    """What can be judged from the arguments alone, before a package is
    installed or a tree prepared."""
    glob = getattr(args, 'filter_glob', None)
    if glob and args.command == 'run':
        problem = filter_problem(glob, settings.kunit_dir)
        if problem:
            raise UsageError(problem)
    if getattr(args, 'twice', False) and not settings.has_kunit_debugfs_run:
        raise UsageError(f'--twice: KUnit runs a suite again from debugfs '
                         f'since Linux 6.7; {settings.tree} cannot (use '
                         '--tree 6.12 or 7.3)')
    if args.command == 'mutate':
        mutate.check_arguments(args.functions, args.ids)
        args.functions = mutate.expand(args.functions)
    if args.command == 'series':
        check_trailers(args.trailer, args.export)


TRAILER = re.compile(r'[A-Za-z][A-Za-z0-9-]*: \S.*')


def check_trailers(trailers: List[str], export: Optional[Path]) -> None:
    if trailers and not export:
        raise UsageError('--trailer goes with --export DIR')
    for trailer in trailers:
        if not TRAILER.fullmatch(trailer):
            raise UsageError(f'--trailer {trailer!r}: want "Key: value", '
                             "e.g. 'Cc: netdev@vger.kernel.org'")


def dispatch(args: argparse.Namespace, argv: List[str]) -> int:
    trees = tree_settings(args)
    output = Output(getattr(args, 'json', None),
                    getattr(args, 'raw_output', None))
    check_before_work(args, trees[0])
    if args.command == 'clean':
        return cmd_clean(trees if args.tree else
                         [Settings.create(name) for name in TEST_TREES],
                         args.keep_build)
    if args.command == 'parse':
        return cmd_parse(trees[0], args.log, output)
    if args.command == 'layouts' and args.compare:
        return cmd_compare([Settings.create(name) for name in args.compare])
    install(trees)
    if args.command == 'test':
        return cmd_test(trees, quick=args.quick, every=args.all_steps,
                        named=bool(args.tree))
    if args.command == 'layouts':
        return cmd_layouts(trees[0], update=args.update, png=args.png,
                           inject=_existing(args.inject))
    if args.command == 'run':
        return cmd_run(trees[0], _existing(args.inject), output,
                       twice=args.twice)
    if args.command == 'series':
        action = 'regen' if args.regen else \
            'export' if args.export else \
            'build-check' if args.build_check else \
            'cost' if args.cost else 'check'
        return cmd_series(trees[0], action, args.export and
                          args.export.expanduser().resolve(), args.trailer)
    if args.command == 'mutate':
        return cmd_mutate(trees[0], args.functions, args.sample,
                          MUTATION_SEED if args.seed is None
                          else args.seed, args.list, args.ids)
    if args.command == 'bench':
        if args.hot_path:
            return cmd_hot_path(trees[0])
        return cmd_bench(trees[0], costs=args.kunitconfig_costs, argv=argv)
    return COMMANDS[args.command](trees[0])


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
        export_build_options(args)
        return dispatch(args, argv)
    except (UsageError, SetupError) as error:
        print(f'run.sh: error: {error}', file=sys.stderr)
        return EXIT_USAGE
    except HarnessError as error:
        print(f'run.sh: error: {error}', file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        # stdout closed early ('| head'): not worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        return EXIT_FAILED
    except OSError as error:
        if not no_space(error):
            raise
        print(f'run.sh: error: {no_space(error)}', file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print('run.sh: interrupted; the next run picks up where this one '
              'stopped', file=sys.stderr)
        return 130

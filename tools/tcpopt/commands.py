"""What each run.sh command but test does, given its trees' settings.

run, parse, layouts (and --compare), capture, series, kconfig, plain,
selftest, mutants, mutate, bisect-demo, bench, clean. The test command is
pipeline.py's."""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Dict, Iterator, List, Optional, Sequence

from tcpopt.bench import hotpath, timings
from tcpopt.core import fs, workdir
from tcpopt.core.errors import EXIT_FAILED, EXIT_OK, UsageError
from tcpopt.core.settings import DEFAULT_SUITES, REPO, Settings
from tcpopt.layout import capture, tables
from tcpopt.log import compare, ktap
from tcpopt.log.expected import expected_cases
from tcpopt.log.report import as_json, judge
from tcpopt.mutation import generated, regressions
from tcpopt.mutation.operators import Mutant
from tcpopt.mutation.results import Result
from tcpopt.pipeline import (bisect_demo_step, cost_step, export_step,
                             kconfig_step, mutants_step, mutate_run,
                             plain_step, print_export, selftest_step)
from tcpopt.run_checks import (Tally, capture_report, heading, kunit_step,
                               layouts_step, need, need_build, sanitize_step,
                               show_run, twice_step)
from tcpopt.selftest import runner as selftest
from tcpopt.series import buildcheck, patchset, plain
from tcpopt.tree import accel, worktree
from tcpopt.tree.identity import read_state
from tcpopt.tree.worktree import PreparedTree


@dataclass
class Output:
    """run and parse: --json (a file, or 'stdout') and --raw_output."""
    json: Optional[str] = None
    raw: Optional[str] = None


def write_json(target: Optional[str], document: dict,
               stdout: Optional[IO] = None) -> None:
    if not target:
        return
    text = json.dumps(document, indent=1) + '\n'
    if target == 'stdout':
        (stdout or sys.stdout).write(text)
        (stdout or sys.stdout).flush()
    else:
        fs.write_atomic(Path(target), text)


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


def cmd_run(settings: Settings, inject: Optional[List[Path]] = None,
            output: Output = Output(), twice: bool = False) -> int:
    tree = PreparedTree(settings, inject or ())
    with worktree.locked(settings), json_channel(output) as channel:
        if settings.sanitize:
            ok, verdict, run = sanitize_step(tree, Tally(), output.raw)
        else:
            verdict, run = kunit_step(tree, output.raw)
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
    log = log or settings.test_log
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
        print(f'log: {fs.display(log)}' +
              (f' (filter {glob}: what ran is judged)' if glob else ''))
        show_run(run, verdict, output.raw)
        write_json(output.json, as_json(settings.tree, verdict, run),
                   channel)
    return EXIT_OK if verdict.ok else EXIT_FAILED


def cmd_layouts(settings: Settings, update: bool = False, png: bool = False,
                inject: Optional[List[Path]] = None) -> int:
    with worktree.locked(settings):
        verdict, run = kunit_step(PreparedTree(settings, inject or ()))
        if update:
            written = tables.write_layouts(need(settings, run),
                                           settings.tree, tables.DOCS_DIR,
                                           png=png)
            print(f'wrote {len(written)} files under {tables.DOCS_DIR}')
            return 0 if verdict.ok else 1
        tally = Tally()
        heading(f'docs/layouts/{settings.tree}.md against the kernel')
        layouts_step(settings, tally, need(settings, run))
    return 0 if verdict.ok and not tally.failed else 1


def cmd_compare(trees: List[Settings]) -> int:
    """docs/layouts/compare-<tree>-<tree>[-<tree>].md from the trees' last
    runs, oldest tree first: only reads their logs, builds nothing."""
    logs = [settings.test_log for settings in trees]
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
    out = tables.DOCS_DIR / f'compare-{"-".join(names)}.md'
    out.write_text(text)
    heading(f'{out.relative_to(REPO)}')
    print(text, end='')
    return 0


def cmd_capture(settings: Settings) -> int:
    with worktree.locked(settings):
        verdict, run = kunit_step(PreparedTree(settings))
        heading(f'live capture: {capture.SUITE} on {settings.tree}')
        captured = capture_report(settings, Tally(), run)
    return 0 if verdict.ok and captured else 1


def cmd_series(settings: Settings, action: str,
               dest: Optional[Path] = None,
               trailers: Sequence[str] = ()) -> int:
    if action == 'regen':
        written = patchset.regen(settings)
        for path in written:
            print(f'rewrote {fs.display(path)}')
        print(f'kernel-patches/{settings.tree}: {len(written)} patches '
              'regenerated from kunit/')
        return 0
    if action == 'cost':
        if not settings.layered:
            raise UsageError(f'--cost: kernel-patches/{settings.tree} has no '
                             'upstream layer')
        tally = Tally()
        with worktree.locked(settings):
            need_build(PreparedTree(settings))
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
        who = patchset.user_identity(REPO)
        with worktree.locked(settings):
            result = plain.export_and_check(settings, dest, who, trailers)
        for patch in result.patches:
            print(patch)
        print_export(result)
        return 0 if result.ok else 1
    problems = patchset.check(settings)
    for problem in problems:
        print(f'FAIL {problem}')
    if not problems:
        print(f'PASS kernel-patches/{settings.tree} matches kunit/')
    return 1 if problems else 0


def cmd_kconfig(settings: Settings) -> int:
    tally = Tally()
    with worktree.locked(settings):
        need_build(PreparedTree(settings))
        kconfig_step(settings, tally)
    return 1 if tally.failed else 0


def cmd_plain(settings: Settings) -> int:
    tally = Tally()
    with worktree.locked(settings):
        export_step(settings, tally)
        plain_step(settings, tally)
    return 1 if tally.failed else 0


def cmd_selftest(settings: Settings, tests: Sequence[str], unfixed: bool,
                 each: Optional[int]) -> int:
    tally = Tally()
    with worktree.locked(settings):
        selftest.check_names(settings, tests)
        export_step(settings, tally)
        selftest_step(settings, tally, tests, unfixed, each)
    return 1 if tally.failed else 0


def cmd_mutants(settings: Settings) -> int:
    with worktree.locked(settings):
        need_build(PreparedTree(settings))
        heading(f'mutants: kernel-patches/regressions/{settings.tree}')
        return 0 if mutants_step(settings, Tally()) else 1


def machine_line(settings: Settings) -> str:
    """Where the mutants ran, for the report: CPUs and QEMU's accelerator."""
    build = regressions.mutant_dirs(settings)[1]
    chosen = accel.choose(build).name if build.is_dir() else 'tcg'
    return f'{os.cpu_count()} CPUs, QEMU under {chosen.upper()}'


def chosen_mutants(settings: Settings, functions: Optional[List[str]],
                   size: Optional[int], seed: int,
                   ids: Optional[List[str]]) -> List[Mutant]:
    """Only reads the sources: a prepared tree needs no lock, so a list
    or a report works while a run holds it."""
    if read_state(settings.source) is None:
        with worktree.locked(settings):
            PreparedTree(settings).source()
    every = generated.select(generated.all_mutants(
        settings, settings.source, functions), ids)
    return generated.sample(every, size, seed)


def list_mutants(settings: Settings, functions: Optional[List[str]],
                 size: Optional[int], seed: int,
                 ids: Optional[List[str]]) -> None:
    for mutant in chosen_mutants(settings, functions, size, seed, ids):
        print(f'{mutant.ident}  {mutant.file}:{mutant.line}  '
              f'{mutant.kind:10}  {mutant.describe()}')


def report_name(settings: Settings,
                functions: Optional[List[str]]) -> Optional[str]:
    """The report a run of these mutants writes: the tree's, or its
    group's; None for a run of other functions."""
    group = generated.group_of(functions)
    if functions and not group:
        return None
    return settings.tree + (f'-{group}' if group else '')


def write_report(settings: Settings, functions: Optional[List[str]],
                 chosen: List[Mutant], results: Dict[str, Result],
                 equivalents: Dict[str, str]) -> None:
    """docs/mutation/<tree>[-group].md; a run of every target, once no
    mutant is left to run, also the tree's block in docs/mutation.md."""
    name = report_name(settings, functions)
    group = generated.group_of(functions)
    out = settings.repo / 'docs' / 'mutation' / f'{name}.md'
    out.parent.mkdir(parents=True, exist_ok=True)
    fs.write_atomic(out, generated.render(
        settings, chosen, results, equivalents,
        f'./run.sh mutate --tree {settings.tree}'
        + (f' --functions {group}' if group else ''),
        time.strftime('%Y-%m-%d'), machine_line(settings), functions))
    print(f'wrote {fs.display(out)}')
    if not group and not generated.score(chosen, results,
                                         equivalents).not_run:
        write_summary(settings, chosen, results, equivalents)


def report_mutants(settings: Settings, functions: Optional[List[str]],
                   size: Optional[int], ids: Optional[List[str]]) -> int:
    """The report from the verdicts kept, in the work dir and the
    repository's record; runs nothing."""
    if size is not None or ids or report_name(settings, functions) is None:
        raise UsageError('--report writes the report of a whole run: of '
                         'every target or of a group, without --sample '
                         'or --ids')
    chosen = chosen_mutants(settings, functions, None, 0, None)
    results = generated.load_results(settings, settings.source, record=True)
    equivalents = generated.read_equivalents(
        generated.equivalent_file(settings))
    write_report(settings, functions, chosen, results, equivalents)
    print(generated.score(chosen, results, equivalents).line())
    return EXIT_OK


def write_summary(settings: Settings, chosen: List[Mutant],
                  results: Dict[str, Result],
                  equivalents: Dict[str, str]) -> None:
    """The tree's per-function block in docs/mutation.md."""
    doc = settings.repo / 'docs' / 'mutation.md'
    block = generated.summary_block(
        settings.tree, generated.score(chosen, results, equivalents),
        generated.function_table(chosen, results, equivalents),
        time.strftime('%Y-%m-%d'))
    fs.write_atomic(doc, generated.update_summary(doc.read_text(),
                                                  settings.tree, block))
    print(f'wrote {fs.display(doc)} (the {settings.tree} block)')


def cmd_mutate(settings: Settings, functions: Optional[List[str]],
               size: Optional[int], seed: int, listing: bool,
               ids: Optional[List[str]] = None,
               report_only: bool = False) -> int:
    if listing:
        list_mutants(settings, functions, size, seed, ids)
        return 0
    if report_only:
        return report_mutants(settings, functions, size, ids)
    tree = PreparedTree(settings)
    with worktree.locked(settings):
        need_build(tree)
        started = time.monotonic()
        chosen, results, equivalents = mutate_run(tree, functions, size,
                                                  seed, ids, record=True)
        total = generated.score(chosen, results, equivalents)
        for mutant in chosen:
            result = results[mutant.ident]
            print(f'{result.verdict:9} {mutant.ident}  {mutant.describe()}'
                  + (f'  [{" ".join(result.failing[:6])}'
                     f'{" ..." if len(result.failing) > 6 else ""}]'
                     if result.failing else ''))
        print(total.line())
        if size is None and not ids and report_name(settings, functions):
            write_report(settings, functions, chosen, results, equivalents)
            print(f'{time.monotonic() - started:.0f} s this run')
        alive = generated.survivors(chosen, results, equivalents)
        return 0 if not alive and not total.flagged else 1


def cmd_bisect_demo(settings: Settings) -> int:
    with worktree.locked(settings):
        PreparedTree(settings).source()
    return 0 if bisect_demo_step(settings, Tally()) else 1


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
    from tcpopt.bench import table
    with worktree.locked(settings):
        PreparedTree(settings).source()    # pristine/ too
        hot = hotpath.measure(settings, accel.choose(settings.build_dir),
                              scale=False)
    if hot.problem:
        print(f'FAIL hot path: {hot.problem}')
        return EXIT_FAILED
    for cells in table.hot_cells(hot):
        print('  '.join(cells))
    for note in hot.notes:
        print(note)
    result = hotpath.verdict(hot.comparisons)
    print(result.line())
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_bench(settings: Settings, costs: bool = False,
              argv: Optional[List[str]] = None) -> int:
    return timings.main(settings, argv or ['bench'], costs=costs)

"""The test command: its steps on every tree, in order, timed and budgeted.

Each step is timed and held to its budget; the steps that build or
check the series are here, the KUnit step and the checks of its output
in run_checks.py."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import unittest
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from tcpopt.bench import steptime
from tcpopt.bisect import demo as bisect_demo
from tcpopt.core import fs, workdir
from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import (BUILD_FREE_IN_CI, BUILD_FREE_STEPS,
                                  DEFAULT_TREE, HEAVY_STEPS, MUTATION_SAMPLE,
                                  MUTATION_SEED, REGRESSIONS_2008, REPO,
                                  TEST_TREES, Settings)
from tcpopt.layout import capture
from tcpopt.log import ktap
from tcpopt.mutation import generated, regressions
from tcpopt.run_checks import (Tally, capture_step, debug_kunit_step, heading,
                               kunit_test_step, layouts_step, need, sweep_step,
                               tshark_step, twice_step)
from tcpopt.selftest import catalog
from tcpopt.selftest import report as selftest_report
from tcpopt.selftest import runner as selftest
from tcpopt.series import bisectable, bloat, kconfig_matrix, patchset, plain
from tcpopt.tree import sanitize, worktree
from tcpopt.tree.worktree import PreparedTree


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
        name = fs.display(result.patch)
        print(f'PASS {name}' if result.ok else f'FAIL {name}: {result.problem}')
        tally.add(result.ok)


def series_step(tree: PreparedTree, tally: Tally) -> None:
    """The stored series holds no identity and matches kunit/."""
    settings = tree.settings
    problems = patchset.check(settings)
    problems += patchset.kunitconfig_problems(settings, tree.source())
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
    patches = patchset.mails(plain.export_dir(settings))
    if not patches:
        raise HarnessError(f'no export in {plain.export_dir(settings)}: the '
                           'export step failed')
    repo = plain.git_am(settings, patches)
    print(f'git am: {len(patches)} patches onto {settings.package} in {repo}')
    print('$ ' + ' '.join(plain.plain_command(settings, repo)), flush=True)
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


def selftest_step(settings: Settings, tally: Tally,
                  tests: Optional[Sequence[str]] = None, unfixed: bool = True,
                  each: Optional[int] = None) -> None:
    """The TCP-AO selftests on the series, the syncookie one without the
    fix (selftest/runner.py): @tests, every one when empty; the test
    command's (None) leaves out the slow ones, which it names."""
    if tests is None:
        for name, why in catalog.SLOW.items():
            print(f'not run: {name} ({why}; ./run.sh selftest --tree '
                  f'{settings.tree} {name} --test-timeout 900)')
    for outcome in selftest.run(settings, tests, unfixed, each):
        print(selftest_report.render(outcome))
        tally.add(outcome.ok)


def kconfig_step(settings: Settings, tally: Tally) -> None:
    for row in kconfig_matrix.check(settings):
        print(row.line(settings.tree), flush=True)
        tally.add(row.ok)


def mutants_step(settings: Settings, tally: Tally,
                 only: Sequence[str] = ()) -> bool:
    results = regressions.run_all(settings, only)
    print(regressions.kill_matrix(results))
    for result in results:
        tally.add(result.killed)
    return all(result.killed for result in results)


def mutate_run(tree: PreparedTree, functions: Optional[List[str]],
               size: Optional[int], seed: int,
               ids: Optional[List[str]] = None,
               record: bool = False) -> tuple:
    """The chosen generated mutants, run (resuming), and their score;
    with @record their verdicts are kept in the repository as well."""
    settings = tree.settings
    tree.source()               # the base of the mutants' copy
    scratch = regressions.scratch(settings)
    scratch.ensure()
    build = regressions.mutant_dirs(settings)[1]
    every = generated.select(
        generated.all_mutants(settings, scratch.src, functions), ids)
    chosen = generated.sample(every, size, seed)
    equivalents = generated.read_equivalents(
        generated.equivalent_file(settings))
    results = generated.run_all(settings, scratch, build, chosen, record)
    return chosen, results, equivalents


def mutate_step(tree: PreparedTree, tally: Tally) -> bool:
    """The fixed sample: every mutant killed or declared equivalent."""
    chosen, results, equivalents = mutate_run(
        tree, None, MUTATION_SAMPLE, MUTATION_SEED)
    total = generated.score(chosen, results, equivalents)
    alive = generated.survivors(chosen, results, equivalents)
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


def bisect_demo_step(settings: Settings, tally: Tally) -> bool:
    result = bisect_demo.run(settings)
    print(f'{"PASS" if result.ok else "FAIL"} git bisect run '
          f'tools/bisect-layout named {result.named or "nothing"}; '
          f'injected {result.injected}; {result.builds} builds '
          f'(budget {result.budget})')
    tally.add(result.ok)
    return result.ok


# Every build-heavy step, for test --all-steps: what CI spreads over the
# trees (HEAVY_STEPS), all of it on the trees named.
ALL_HEAVY_STEPS = ('bloat', 'plain', 'selftest', 'kconfig', 'bisectable',
                   'mutants', 'mutate')


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
    prepared = PreparedTree(settings)   # prepared once, by the first step
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
         lambda: runs.append(debug_kunit_step(prepared, tally)
                             if settings.sanitize else
                             kunit_test_step(prepared, tally))),
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
         'identity', lambda: series_step(prepared, tally)),
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
        'selftest': (f'TCP-AO selftests in QEMU on the {tree} series\' debug '
                     'kernel, every one passing or skipping; the syncookie '
                     'one failing without the fix (./run.sh selftest)',
                     lambda: selftest_step(settings, tally)),
        'kconfig': (f'Kconfig matrix: every {tree} test symbol without each '
                    'dependency', lambda: kconfig_step(settings, tally)),
        'bisectable': (f'every prefix of kernel-patches/{tree} builds '
                       '(bisectable)', lambda: bisectable_step(settings, tally)),
        'mutants': (f'mutants: every {tree} regression fails a named case',
                    lambda: mutants_step(settings, tally)),
        'mutants-2008': (f'mutants: the {tree} regressions of 2.6.27 (MSS '
                         'behind TS, SACK_PERM not counted) fail named cases',
                         lambda: mutants_step(settings, tally,
                                              only=REGRESSIONS_2008)),
        'mutate': (f'generated mutants: a fixed sample of {MUTATION_SAMPLE} '
                   f'on {tree}, each killed or declared equivalent',
                   lambda: mutate_step(prepared, tally)),
    }
    if build_free:
        return [step for step in steps if step[0] in BUILD_FREE_STEPS]
    chosen = ALL_HEAVY_STEPS if every else HEAVY_STEPS.get(tree, ())
    steps += [(name, *heavy[name]) for name in chosen
              if name != 'selftest' or settings.has_ao_selftests]
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
    proves a helper that is the same code for every tree, on the first.
    Each step is timed (build, boot, ccache) into <work
    dir>/test-steps.md, and stopped once past its budget
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
    header['wall'] = round(time.monotonic() - steptime.STARTED)
    steptime.save(times, settings.work_dir / 'test-steps.json', header)
    fs.write_atomic(settings.work_dir / 'test-steps.md',
                    steptime.section(header, times))
    print(f'step times: {settings.work_dir / "test-steps.md"}')


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

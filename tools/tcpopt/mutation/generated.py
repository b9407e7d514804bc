"""Generated mutants (./run.sh mutate): each code change built and booted.

The regressions of kernel-patches/regressions/ are the bugs someone
thought of. This generates the ones nobody did, one change at one place
in the functions that compute and write the options (tcp_output.c, and
MPTCP's in net/mptcp/options.c) and parse them (tcp_input.c):

  relational   <  <=  >  >=  ==  !=  each into its neighbour
  arithmetic   +  -  (binary), +=  -=, <<  >>
  logical      &&  ||
  bitwise      &  |  (binary), |=  &=
  constant     an integer literal +1 and -1
  twin         TCPOLEN_X and TCPOLEN_X_ALIGNED swapped
  family       a TCPOLEN_MPTCP_ length and a neighbour of its family
               swapped: a word more or less (_PRIO, _PRIO_ALIGN) or one
               word's digits (_DSS_ACK32, _DSS_ACK64)
  delete       an expression statement or a bare return removed
  if-true      an if condition replaced by 1
  swap         two adjacent writes through one pointer swapped: '*ptr++ =
               ...;', or 'put_unaligned_be*(..., ptr);' with the
               'ptr += n;' after it

Each mutant is applied to the mutant scratch tree (regressions.py), built
incrementally, its object compared with the unmutated one (the same
bytes: 'same-code', never booted), booted with the unit suites and then,
if it survived them, the live suite (stages()), and reversed. Its verdict
is 'killed' (the cases that failed are kept), 'survived', 'same-code' or
'no-build'.
Results are kept per mutant in <work>/<tree>/mutate/results.json under a
fingerprint of the mutated files, each with one of the test sources it
was measured with, so an interrupted run resumes where it stopped, and
after a test change only the survivors and the kills whose cases are
gone run again (still_valid()). ./run.sh mutate keeps them in the
repository as well, in tools/mutation/<tree>.verdicts: a run too long for
one machine resumes on the next from a commit (the CI sample does not:
it measures). Mutants declared equivalent in
tools/mutation/<tree>.equivalent (one line each: the mutant's id, then
why) leave the score's denominator; one that a case kills anyway is
flagged in the report.

This module runs the mutants. The others of tcpopt.mutation make them
(operators), choose them (targets), boot them in stages (boot), keep their
verdicts and the equivalents (results) and score them (scorecard).
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

from tcpopt.core.errors import HarnessError, log
from tcpopt.core.fs import display as fs_display
from tcpopt.core.settings import Settings
from tcpopt.log.ktap import Run
from tcpopt.log.report import judge
from tcpopt.mutation.operators import Mutant
from tcpopt.mutation.results import (SAME_CODE, Result, load_results,
                                     save_results, tests_fingerprint)
from tcpopt.mutation.boot import Stage, stages
from tcpopt.mutation.targets import TARGETS
from tcpopt.tree.scratch import ScratchTree

# What the command layer calls as generated.<name>: the choice of
# mutants, the equivalents and the report live in their own modules.
from tcpopt.mutation.results import equivalent_file, read_equivalents
from tcpopt.mutation.scorecard import (function_table, render, score,
                                       summary_block, survivors,
                                       update_summary)
from tcpopt.mutation.targets import (LAYOUT_FUNCTIONS, all_mutants,
                                     check_arguments, expand, group_of,
                                     sample, select)


def apply(tree: Path, mutant: Mutant) -> str:
    """Write the mutant into @tree; returns the file's original text."""
    path = tree / mutant.file
    original = path.read_text()
    lines = original.split('\n')
    got = '\n'.join(lines[mutant.line - 1:mutant.line - 1 + mutant.count])
    if got != mutant.before:
        raise HarnessError(f'{mutant.file}:{mutant.line}: the scratch tree '
                           'no longer has the text this mutant changes')
    lines[mutant.line - 1:mutant.line - 1 + mutant.count] = \
        mutant.after.split('\n')
    path.write_text('\n'.join(lines))
    return original


def run_one(settings: Settings, tree: ScratchTree, build: Path,
            mutant: Mutant, reference: Dict[str, str],
            plan: List[Stage]) -> Result:
    started = time.monotonic()
    original = apply(tree.src, mutant)
    # Put back even on Ctrl-C: a resumed run reuses the tree as it is.
    with tree.trying(f'mutant {mutant.ident}', undo=lambda: (
            tree.src / mutant.file).write_text(original)) as src:
        verdict = run_stages(settings, src, build, mutant, reference, plan)
        survivor = object_digest(build, mutant.file) \
            if verdict.verdict == 'survived' else None
    if survivor is not None:
        verdict = recheck_survivor(settings, tree, build, mutant, reference,
                                   survivor, verdict)
    seconds = round(time.monotonic() - started, 1)
    return dataclasses.replace(verdict, seconds=seconds)


def recheck_survivor(settings: Settings, tree: ScratchTree, build: Path,
                     mutant: Mutant, reference: Dict[str, str],
                     survivor: str, verdict: Result) -> Result:
    """A survivor's object against the original's built again, the
    mutant undone: the objects of the run's start are not always those of
    the original later in the run (2026-12-07: tcp_options_write-4df3249a,
    TCPOLEN_MSS for its equal TCPOLEN_MSS_ALIGNED, survived a long run and
    was the same object code on its own). Only a survivor can be such a
    mutant: the same code as the original fails no case."""
    reference.update(reference_objects(settings, tree, build))
    if reference[mutant.file] == survivor:
        return Result(SAME_CODE, compared=True)
    return verdict


def object_digest(build: Path, file: str) -> str:
    """@file's object without its debug sections: the same digest is the
    same code, data and relocations, whatever the source says."""
    with tempfile.TemporaryDirectory() as tmp:
        stripped = Path(tmp) / 'stripped.o'
        subprocess.run(['objcopy', '--strip-debug',
                        str(build / Path(file).with_suffix('.o')),
                        str(stripped)], check=True, capture_output=True)
        return hashlib.sha256(stripped.read_bytes()).hexdigest()


def build_only(settings: Settings, src: Path, build: Path,
               output: Path) -> bool:
    from tcpopt.tree.kernel import run_kunit
    build.mkdir(parents=True, exist_ok=True)
    with open(output, 'w') as out:
        status, _ = run_kunit(settings, src, build_dir=build, output=out,
                              action='build')
    return status == 0


def reference_objects(settings: Settings, tree: ScratchTree,
                      build: Path) -> Dict[str, str]:
    """The objects of the unmutated tree, built once per run."""
    output = build / 'mutate-reference.out'
    if not build_only(settings, tree.src, build, output):
        raise HarnessError(f'{tree.src} does not build without a mutant; '
                           f'see {output}')
    return {file: object_digest(build, file) for file in TARGETS}


# A stage stopped by its timeout, with no case failed and no crash, boots
# once more with this many times its seconds before its missing cases kill.
STALL_RETRY_FACTOR = 4


def boot_stage(settings: Settings, src: Path, build: Path, output: Path,
               stage: Stage, seconds: int) -> Optional[Run]:
    """The stage's run; None if the kernel never booted."""
    # regressions.py owns the scratch tree; imported here, not at the top,
    # so that listing mutants needs no kernel tooling.
    from tcpopt.mutation import regressions
    return regressions.run_suites(settings, src, build, output,
                                  timeout=seconds, filter_glob=stage.glob,
                                  action='exec')


def stalled(run: Run) -> bool:
    """Stopped before the end with nothing failed and no oops or panic: a
    mutant that stalls the kernel, or a machine too busy for the time."""
    return not run.complete and not run.crash_lines and \
        all(case.status != 'fail' for case in run.cases)


def run_stages(settings: Settings, src: Path, build: Path, mutant: Mutant,
               reference: Dict[str, str], plan: List[Stage]) -> Result:
    """Build; a mutant the compiler turns into the original object is
    equivalent by construction (no boot). Otherwise boot the stages."""
    output = build / f'mutate-{mutant.ident}.out'
    if not build_only(settings, src, build, output):
        return Result('no-build')
    if object_digest(build, mutant.file) == reference[mutant.file]:
        return Result(SAME_CODE, compared=True)
    for stage in plan:
        run = boot_stage(settings, src, build, output, stage,
                         stage.seconds)
        if run and stalled(run):    # once more with longer tells which
            run = boot_stage(settings, src, build, output, stage,
                             stage.seconds * STALL_RETRY_FACTOR)
        if run is None:     # kunit.py stopped before the kernel booted
            return Result('no-build', compared=True)
        verdict = judge(run, list(stage.cases))
        failing = verdict.failed + verdict.missing
        if verdict.crashed and not failing:
            failing = ['(kernel crashed)']
        if failing:
            return Result('killed', failing, compared=True,
                          stage=stage.glob)
    return Result('survived', compared=True)


def run_all(settings: Settings, tree: ScratchTree, build: Path,
            chosen: List[Mutant], record: bool = False) -> Dict[str, Result]:
    """Every chosen mutant without a result yet; saved after each one,
    with @record in the repository's record too (results.py)."""
    results = load_results(settings, tree.src, record)
    tests = tests_fingerprint(settings)
    todo = [m for m in chosen if m.ident not in results]
    if len(todo) < len(chosen):
        log(f'{len(chosen) - len(todo)} of {len(chosen)} mutants already '
            f'run on these sources; {len(todo)} to go')
    reference = reference_objects(settings, tree, build) if todo else {}
    # The cases each stage must report, read once: the kernel booted is
    # built from kunit/ as it was when the run began.
    plan = stages(settings)
    for number, mutant in enumerate(todo, 1):
        if tests_fingerprint(settings) != tests:
            raise HarnessError(
                f'{fs_display(settings.kunit_dir)} changed during the run: '
                f'{number - 1} of {len(todo)} mutants were measured with '
                'the tests it began with; run it again to measure the '
                'rest with the new ones')
        result = run_one(settings, tree, build, mutant, reference, plan)
        result.tests = tests
        result.measured = time.strftime('%Y-%m-%d')
        results[mutant.ident] = result
        save_results(settings, tree.src, results, record)
        log(f'[{number}/{len(todo)}] {mutant.ident} {mutant.kind} '
            f'{mutant.file}:{mutant.line}: {result.verdict} '
            f'({result.seconds:.0f} s)')
    return results


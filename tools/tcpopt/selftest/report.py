"""A selftest boot as the test command prints it: a line a binary, a verdict."""

from __future__ import annotations

from typing import List

from tcpopt.core.fs import display
from tcpopt.selftest.runner import SERIES, Outcome
from tcpopt.selftest.tap import Result

TITLES = {SERIES: 'the series (fix, selftest, net-next)',
          'unfixed': 'the tree without the fix (the selftest alone)'}
SHOWN_TOTALS = ('pass', 'fail', 'skip')


def result_line(result: Result) -> str:
    counts = ' '.join(f'{key}:{result.totals[key]}' for key in SHOWN_TOTALS
                      if key in result.totals)
    line = f'  {result.status:<4}  {result.binary:<26} {counts}'
    if result.status == 'skip' and result.skip_reason:
        line += f'  ({result.skip_reason})'
    elif result.status == 'fail' and result.directive:
        line += f'  ({result.directive})'
    return line


def render(outcome: Outcome) -> str:
    boot = outcome.boot
    lines: List[str] = [f'{TITLES.get(outcome.variant, outcome.variant)}:']
    for result in boot.results:
        lines.append(result_line(result))
        lines += [f'        {failure}' for failure in result.failures]
    verdict = 'PASS' if outcome.ok else 'FAIL'
    summary = (f'{boot.count("pass")} passed, {boot.count("fail")} failed, '
               f'{boot.count("skip")} skipped')
    if outcome.variant == SERIES:
        claim = 'TCP-AO selftests on the series'
    else:
        claim = 'the syncookie selftest fails without the fix'
    lines.append(f'{verdict} {claim}: {summary}, '
                 f'{len(boot.splats.sanitizer)} splats (log '
                 f'{display(outcome.log)})')
    lines += [f'  problem: {problem}' for problem in outcome.problems]
    return '\n'.join(lines)

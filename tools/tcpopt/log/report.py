"""Human-readable output: the per-case layout table and the verdicts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from tcpopt.layout.options import bracketed
from tcpopt.log.ktap import Case, Run

# Crash lines the summary shows after the first one.
MORE_CRASH_LINES = 8


@dataclass
class Verdict:
    """KUnit cases against the names the source declares."""

    passed: List[str] = field(default_factory=list)
    failed: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)
    crashed: bool = False

    @property
    def ok(self) -> bool:
        return not (self.failed or self.missing or self.crashed) and \
            bool(self.passed)


def judge(run: Run, expected: Sequence[str]) -> Verdict:
    verdict = Verdict()
    for case in run.cases:
        {'pass': verdict.passed, 'skip': verdict.skipped,
         'fail': verdict.failed}[case.status].append(case.name)
    seen = {case.name for case in run.cases}
    verdict.missing = [name for name in expected if name not in seen]
    verdict.crashed = bool(run.crash_lines) or not run.complete
    return verdict


def layout_table(cases: Sequence[Case]) -> str:
    """One line per case and layout: verdict, suite, case, size, layout."""
    rows = [('result', 'suite', 'case', 'size', 'mss delta', 'layout')]
    for case in cases:
        # A case without layout lines (a sweep group) shows what it said.
        layouts = case.layouts or [None]
        for i, layout in enumerate(layouts):
            size = str(case.sizes[i]) if i < len(case.sizes) else '-'
            delta = str(case.mss_deltas[i]) if i < len(case.mss_deltas) \
                else ''
            first = i == 0
            rows.append((case.status.upper() if first else '',
                         case.suite if first else '',
                         case.name if first else '', size, delta,
                         bracketed(layout) if layout is not None
                         else (case.diagnostics or ['(no layout line)'])[0]))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]),
                 row[2].ljust(widths[2]), row[3].rjust(widths[3]),
                 row[4].rjust(widths[4]), row[5]]
        lines.append('  '.join(cells).rstrip())
    return '\n'.join(lines)


def failure_details(cases: Sequence[Case]) -> str:
    blocks = []
    for case in cases:
        if case.status != 'fail':
            continue
        detail = '\n'.join(f'    {line}' for line in case.diagnostics)
        blocks.append(f'FAIL {case.suite}/{case.name}\n{detail}')
    return '\n'.join(blocks)


def summary(verdict: Verdict, run: Run) -> str:
    total = len(verdict.passed) + len(verdict.failed) + len(verdict.skipped)
    parts = [f'{total} KUnit cases: {len(verdict.passed)} passed',
             f'{len(verdict.failed)} failed', f'{len(verdict.skipped)} skipped',
             f'{len(verdict.missing)} missing']
    text = ', '.join(parts)
    if verdict.missing:
        shown = ', '.join(verdict.missing[:5])
        more = ' ...' if len(verdict.missing) > 5 else ''
        text += f'\nmissing cases (never reported): {shown}{more}'
    if verdict.crashed:
        reason = run.crash_lines[0] if run.crash_lines else \
            'the KTAP output stopped before the last suite'
        text += f'\nthe kernel did not finish cleanly: {reason}'
        # The rest of the oops or panic: where it died and why.
        more = list(dict.fromkeys(run.crash_lines[1:]))[:MORE_CRASH_LINES]
        text += ''.join(f'\n    {line}' for line in more)
    return text


def as_json(tree: str, verdict: Verdict, run: Optional[Run]) -> dict:
    """--json: the verdict and the layout table, machine-readable; each
    layout in packetdrill notation, as the table prints it, with its raw
    option words."""
    cases = run.cases if run else []
    return {
        'tree': tree,
        'ok': verdict.ok,
        'verdict': {'passed': verdict.passed, 'failed': verdict.failed,
                    'skipped': verdict.skipped, 'missing': verdict.missing,
                    'crashed': verdict.crashed},
        'cases': [{'suite': case.suite, 'name': case.name,
                   'status': case.status,
                   'layouts': [{'options': bracketed(layout),
                                'size': case.sizes[i]
                                if i < len(case.sizes) else None,
                                'mss_delta': case.mss_deltas[i]
                                if i < len(case.mss_deltas) else None,
                                # The option area's 32-bit words, as the
                                # kernel wrote them (docs/layouts' words).
                                'words': case.words[i]
                                if i < len(case.words) else None}
                               for i, layout in enumerate(case.layouts)],
                   'diagnostics': case.diagnostics} for case in cases],
    }


KTAP_START = re.compile(r'K?TAP version \d+')


def raw_lines(log: Path, mode: str) -> List[str]:
    """--raw_output: the console log as the kernel printed it; 'kunit'
    keeps what comes from the first KTAP header on, as kunit.py does."""
    lines = log.read_text(errors='replace').splitlines()
    if mode == 'all':
        return lines
    for index, line in enumerate(lines):
        if KTAP_START.search(line):
            return lines[index:]
    return []

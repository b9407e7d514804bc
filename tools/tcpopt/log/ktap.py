"""Read the raw KTAP a KUnit kernel printed: cases, verdicts, layout lines.

kunit.py's own parser (tools/testing/kunit/kunit_parser.py) prints while it
parses and, with --json, drops the diagnostic lines that carry the layouts;
this reader keeps every '# ' line with the case it belongs to. It needs
nothing from the kernel tree, so the host tests run before one exists.
One pass gives the whole Run, so a test.log is read once (the record
lines: docs/suites.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from tcpopt.core.errors import HarnessError
from tcpopt.tree import sanitize

RESULT = re.compile(r'^(?P<indent> *)(?P<not>not )?ok (?P<num>\d+) '
                    r'(?:- )?(?P<name>[^#]*?)\s*(?:#\s*(?P<directive>.*))?$')
SUBTEST = re.compile(r'^(?P<indent> *)# Subtest: (?P<name>\S+)')
DIAG = re.compile(r'^ *# (?P<text>.*)$')
LAYOUT = re.compile(r'^layout: (?P<layout>.*) \((?P<size>\d+) bytes\)$')
MSS_DELTA = re.compile(r'^mss delta: (?P<delta>-?\d+)$')
INPUT = re.compile(r'^input: (?P<fields>.*)$')
WORDS = re.compile(r'^words:\s*(?P<words>[0-9a-f ]*)$')
SWEEP = re.compile(r'^sweep: (?P<fields>.*)$')
WIRE = re.compile(r'^\s*# wire: ')         # anywhere in the log: capture.py
# kunit.py passes its filter on the kernel's command line, which the
# kernel prints before the KTAP.
FILTER = re.compile(r'Kernel command line:.*?\bkunit\.filter_glob=(\S+)')
# What a dying kernel prints instead of finishing its KTAP.
CRASH = re.compile(r'(Kernel panic|BUG:|Oops|general protection fault|'
                   r'Call Trace:|WARNING: CPU:|RIP: [0-9a-f]{4}:)')


@dataclass
class Case:
    """One leaf result: a plain case or one row of a parameterized case."""

    suite: str
    name: str
    status: str                     # 'pass', 'fail' or 'skip'
    layouts: List[str] = field(default_factory=list)
    sizes: List[int] = field(default_factory=list)
    mss_deltas: List[int] = field(default_factory=list)
    inputs: List[Dict[str, str]] = field(default_factory=list)
    words: List[List[str]] = field(default_factory=list)
    diagnostics: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in ('pass', 'skip')


@dataclass
class Run:
    cases: List[Case]
    crash_lines: List[str]
    complete: bool                  # the top-level plan was fully reported
    sweep: List[Dict[str, str]] = field(default_factory=list)
    wire: List[Tuple[int, str]] = field(default_factory=list)  # (line, text)
    sanitizer: List[sanitize.Report] = field(default_factory=list)
    log: Optional[Path] = None
    started: bool = True            # a 'KTAP version' line was seen
    filter_glob: Optional[str] = None   # kunit.filter_glob= on the cmdline

    def by_name(self) -> Dict[str, Case]:
        return {case.name: case for case in self.cases}


def _status(match: re.Match) -> str:
    directive = (match.group('directive') or '').upper()
    if directive.startswith('SKIP'):
        return 'skip'
    return 'fail' if match.group('not') else 'pass'


def parse(lines: Iterable[str], log: Optional[Path] = None) -> Run:
    """Parse a console log; lines that are not KTAP are ignored."""
    open_subtests: Dict[int, str] = {}
    pending: List[str] = []
    cases: List[Case] = []
    crash: List[str] = []
    top_plan: Optional[int] = None
    top_results = 0
    started = False
    in_failure = False
    records: List[Dict[str, str]] = []
    wire: List[Tuple[int, str]] = []
    reports = sanitize.Scan()
    filter_glob: Optional[str] = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip('\r\n')
        reports.feed(line)
        if WIRE.match(line):
            wire.append((number, line))
        if not started:
            started = line.strip().startswith('KTAP version')
            command_line = FILTER.search(line)
            if command_line:
                filter_glob = command_line.group(1)
            continue
        if CRASH.search(line):
            crash.append(line.strip())
        depth_line = line.expandtabs()
        subtest = SUBTEST.match(depth_line)
        if subtest:
            # A header at depth d announces a test whose children sit at d
            # and whose own result comes back at depth d - 1.
            depth = len(subtest.group('indent')) // 4
            open_subtests[depth] = subtest.group('name')
            for deeper in [d for d in open_subtests if d > depth]:
                del open_subtests[deeper]
            in_failure = False
            continue
        result = RESULT.match(depth_line)
        if result:
            depth = len(result.group('indent')) // 4
            name = result.group('name').strip()
            if depth == 0:
                top_results += 1
            if open_subtests.get(depth + 1) == name:
                del open_subtests[depth + 1]     # a parent closing
            else:
                suite = open_subtests.get(1, name if depth == 0 else '?')
                cases.append(_case(suite, name, _status(result), pending))
            pending = []
            in_failure = False
            continue
        plan = re.match(r'^1\.\.(\d+)$', line)
        if plan and top_plan is None:
            top_plan = int(plan.group(1))
            continue
        diag = DIAG.match(depth_line)
        sweep = SWEEP.match(diag.group('text')) if diag else None
        if sweep:
            # Thousands of records: keep them out of the case diagnostics.
            records.append(fields(sweep.group('fields')))
        elif diag and diag.group('text').startswith('wire: '):
            in_failure = False      # packet bytes: capture.py reads them
        elif diag:
            pending.append(diag.group('text'))
            in_failure = 'FAILED' in diag.group('text')
        elif in_failure and line.strip() and not line.startswith('KTAP'):
            # KUnit prefixes only the first line of a failure message.
            pending.append(line.strip())
    complete = top_plan is not None and top_results >= top_plan
    return Run(cases=cases, crash_lines=crash, complete=complete,
               sweep=records, wire=wire, sanitizer=reports.reports, log=log,
               started=started, filter_glob=filter_glob)


def read(log: Path) -> Run:
    """A test.log read once: the checks after the KUnit step take this."""
    if not log.is_file():
        raise HarnessError(f'no KUnit log at {log}: the KUnit step failed')
    with open(log, errors='replace') as lines:
        return parse(lines, log)


def fields(text: str) -> Dict[str, str]:
    """'kind=syn ts=1 bytes=0204' -> {'kind': 'syn', 'ts': '1', ...}."""
    return dict(item.split('=', 1) for item in text.split() if '=' in item)


def _case(suite: str, name: str, status: str, diags: List[str]) -> Case:
    # Old kernels print a skipped row as a plain 'ok'; the suite says so.
    if status == 'pass' and any(d.startswith('skip: ') for d in diags):
        status = 'skip'
    case = Case(suite=suite, name=name, status=status)
    for text in diags:
        layout = LAYOUT.match(text)
        delta = MSS_DELTA.match(text)
        given = INPUT.match(text)
        words = WORDS.match(text)
        if given:
            case.inputs.append(fields(given.group('fields')))
        elif words:
            case.words.append(words.group('words').split())
        elif layout:
            case.layouts.append(layout.group('layout'))
            case.sizes.append(int(layout.group('size')))
        elif delta:
            case.mss_deltas.append(int(delta.group('delta')))
        elif not re.match(r'^\S+: pass:\d+ fail:\d+', text) and \
                not text.startswith('Totals:'):
            case.diagnostics.append(text)
    return case

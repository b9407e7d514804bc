"""--sanitize: the suites built with KASAN, UBSAN and KFENCE, and the
kernel's console log scanned for their reports.

Whether a sanitizer report fails the KUnit case it happened in depends on
the tree and the sanitizer (a UBSAN report never does), so the raw log is
the authority: any report fails the run, even if every case passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional

# Generic inline KASAN catches a one-byte over-read of a kmalloc'd buffer;
# UBSAN's bounds checks catch indexing past a fixed array; KFENCE samples
# allocations and catches what lands on its guard pages.
KCONFIG = [
    'CONFIG_KASAN=y',
    'CONFIG_KASAN_GENERIC=y',
    'CONFIG_KASAN_INLINE=y',
    'CONFIG_UBSAN=y',
    'CONFIG_UBSAN_BOUNDS=y',
    'CONFIG_KFENCE=y',
]

START = re.compile(r'(BUG: KASAN: |BUG: KFENCE: |UBSAN: )')
# The KTAP result line that follows a report names the case it hit.
RESULT = re.compile(r'^\s*(?:not )?ok \d+ (?:- )?(?P<name>[^#\s]+)')
# KASAN and KFENCE close a report with a line of '='; UBSAN with '-' too.
RULE = re.compile(r'^[=-]{20,}$')
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
MAX_LINES = 40


@dataclass
class Report:
    title: str
    lines: List[str] = field(default_factory=list)
    case: str = ''                  # the KUnit case running, if known

    def render(self) -> str:
        where = f' (case {self.case})' if self.case else ''
        return '\n'.join([self.title + where] +
                         ['    ' + line for line in self.lines])


def _clean(line: str) -> str:
    return TIMESTAMP.sub('', line.rstrip('\n').rstrip())


class Scan:
    """Every sanitizer report in the console log ktap.parse() feeds it,
    line by line, with its lines."""

    def __init__(self) -> None:
        self.reports: List[Report] = []
        self.current: Optional[Report] = None

    def feed(self, raw: str) -> None:
        line = _clean(raw)
        match = START.search(line)
        if match:
            self.current = Report(line[match.start():])
            self.reports.append(self.current)
            return
        result = RESULT.match(line)
        if result:
            for report in self.reports:
                report.case = report.case or result.group('name')
        if self.current is None:
            return
        if RULE.match(line) or len(self.current.lines) >= MAX_LINES:
            self.current = None
        else:
            self.current.lines.append(line)

"""--sanitize: the sanitizers' build options, and the scan for their splats.

The suites built with KASAN, UBSAN, KFENCE and lockdep, and the kernel's
console log scanned for their reports (splats).

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
    # Lockdep and RCU checking, might_sleep() in atomic context, and
    # freeing a live timer or work item: what the real callers' locking
    # would show. (kmemleak reports only when a scan is asked for from
    # user space, which a KUnit boot has none of: it is left out.)
    'CONFIG_DEBUG_KERNEL=y',
    'CONFIG_PROVE_LOCKING=y',
    'CONFIG_PROVE_RCU=y',
    'CONFIG_DEBUG_ATOMIC_SLEEP=y',
    'CONFIG_DEBUG_OBJECTS=y',
    'CONFIG_DEBUG_OBJECTS_FREE=y',
    # For --twice (twice.py): /sys/kernel/debug/kunit/<suite>/run
    # (KUNIT_DEBUGFS defaults to y with DEBUG_FS), and an initramfs.
    'CONFIG_DEBUG_FS=y',
    'CONFIG_BLK_DEV_INITRD=y',
]

# Every splat opens with one of these: KASAN, KFENCE, UBSAN, and WARNING:
# (lockdep's and RCU's reports, WARN_ON(), debugobjects) or BUG: (might_
# sleep() and the rest).
START = re.compile(r'(BUG: KASAN: |BUG: KFENCE: |UBSAN: |^WARNING: |^BUG: )')
# lockdep and RCU underline their WARNING: title with a rule of '-'.
UNDERLINE = re.compile(r'^-{20,}$')
KINDS = (('KASAN', 'KASAN'), ('KFENCE', 'KFENCE'), ('UBSAN', 'UBSAN'),
         ('lock', 'lockdep'), ('RCU', 'RCU'))
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

    @property
    def kind(self) -> str:
        """KASAN, KFENCE, UBSAN, lockdep, RCU, or other."""
        return next((kind for word, kind in KINDS if word in self.title),
                    'other')

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
        if self.current.title.startswith('WARNING: ') and \
                UNDERLINE.match(line) and len(self.current.lines) < 2:
            self.current.lines.append(line)
        elif RULE.match(line) or len(self.current.lines) >= MAX_LINES:
            self.current = None
        else:
            self.current.lines.append(line)


def counts(reports: List[Report]) -> str:
    """'2 (lockdep 1, RCU 1)': how many splats, of which kinds."""
    kinds: dict = {}
    for report in reports:
        kinds[report.kind] = kinds.get(report.kind, 0) + 1
    detail = ', '.join(f'{kind} {n}' for kind, n in sorted(kinds.items()))
    return f'{len(reports)}' + (f' ({detail})' if detail else '')

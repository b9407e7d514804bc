"""The selftest boot's console, read once: a result per binary, and splats.

Each result has the counts of the binary's own TAP and the lines that
name a failure.

A binary's block, as /init prints it (kselftest's runner format):

    # selftests: net/tcp_ao: syncookies_ipv4
    # ok 1 hmac(sha1), 12-byte MAC: both ends have TS, SACK and WS ...
    # not ok 2 cmac(aes128), 16-byte MAC: the windows disagree: ...
    # # Totals: pass:7 fail:1 xfail:0 xpass:0 skip:0 error:0
    not ok 1 selftests: net/tcp_ao: syncookies_ipv4 # exit=1
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from tcpopt.log import ktap
from tcpopt.selftest.initramfs import COLLECTION, MARK

RESULT = re.compile(rf'^(ok|not ok) \d+ {re.escape(COLLECTION)}: (\S+)'
                    r'(?: # (.*))?$')
TOTALS = re.compile(r'^# # Totals: (.*)$')
INNER_FAIL = re.compile(r'^# (not ok \d+ .*)$')
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\] ?')


@dataclass
class Result:
    binary: str
    status: str                   # 'pass', 'skip' or 'fail'
    directive: str = ''           # '# SKIP', 'exit=1', 'TIMEOUT ...'
    totals: Dict[str, int] = field(default_factory=dict)
    failures: List[str] = field(default_factory=list)   # inner 'not ok'
    output: List[str] = field(default_factory=list)

    @property
    def skip_reason(self) -> str:
        """What the binary said when it skipped: its last '# ' line."""
        said = [line[2:].strip() for line in self.output
                if line.startswith('# ') and not TOTALS.match(line)]
        return said[-1] if said else ''


@dataclass
class Boot:
    results: List[Result]
    splats: ktap.Run              # the kernel log's reports
    done: bool                    # /init reached its last line

    def result(self, binary: str) -> Optional[Result]:
        return next((r for r in self.results if r.binary == binary), None)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)


def totals(text: str) -> Dict[str, int]:
    return {key: int(value) for key, value in
            re.findall(r'(\w+):(\d+)', text)}


def status_of(verdict: str, directive: str) -> str:
    if verdict == 'not ok':
        return 'fail'
    return 'skip' if directive.upper().startswith('SKIP') else 'pass'


def results(lines: Sequence[str]) -> List[Result]:
    found: List[Result] = []
    block: List[str] = []
    for line in lines:
        match = RESULT.match(line)
        if not match:
            block.append(line)
            continue
        verdict, binary, directive = match.group(1), match.group(2), \
            match.group(3) or ''
        result = Result(binary, status_of(verdict, directive), directive,
                        output=block)
        for inner in block:
            count = TOTALS.match(inner)
            if count:
                result.totals = totals(count.group(1))
            failed = INNER_FAIL.match(inner)
            if failed:
                result.failures.append(failed.group(1))
        found.append(result)
        block = []
    return found


def read(lines: Sequence[str]) -> Boot:
    lines = [TIMESTAMP.sub('', line.rstrip('\r\n')) for line in lines]
    start = next((i for i, line in enumerate(lines)
                  if line.strip() == f'{MARK} tap'), len(lines))
    log = next((i for i, line in enumerate(lines)
                if line.strip() == f'{MARK} kernel log'), len(lines))
    end = next((i for i, line in enumerate(lines)
                if line.strip() == f'{MARK} done'), len(lines))
    return Boot(results(lines[start + 1:log]), ktap.parse(lines[log:end]),
                end < len(lines))

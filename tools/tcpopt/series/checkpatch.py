"""checkpatch.pl --strict over the series and the shared test sources."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List

from tcpopt.core.settings import SELFTEST_DIR

TOTAL = re.compile(r'^total: (\d+) errors, (\d+) warnings, (?:(\d+) checks, )?'
                   r'\d+ lines checked', re.M)
SUBJECT = re.compile(r'^Subject: \[PATCH(?: net(?:-next)?)?(?: \d+/\d+)?\] (.*)$',
                     re.M)
# A new file under net/ipv4/ always draws "does MAINTAINERS need
# updating?"; NETWORKING [IPv4/IPv6] already covers net/ipv4/, and the
# export prints get_maintainer.pl's answer for every patch instead.
# The Debian trees have no git history to look "commit <id>" up in, so
# every reference would be "unknown"; the id format is still checked.
IGNORED = 'FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID'
# What one patch, named by its subject, may draw beyond that, and why:
# code moved verbatim keeps the style it had.
KNOWN = {
    'tcp: move the option layout definitions to tcp_options.h':
        ('PARENTHESIS_ALIGNMENT', 'the struct_group() of struct '
         'tcp_out_options, moved verbatim from tcp_output.c'),
}



@dataclass
class CheckResult:
    path: Path
    problems: List[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def parse_totals(output: str) -> List[str]:
    """Non-zero error, warning and check counts, as readable strings."""
    match = TOTAL.search(output)
    if not match:
        return ['checkpatch printed no totals']
    counts = zip(('errors', 'warnings', 'checks'), match.groups())
    return [f'{n} {kind}' for kind, n in counts if n and n != '0']


def series_conventions(patch: Path) -> List[str]:
    """What netdev expects of every patch beyond checkpatch's checks."""
    text = patch.read_text(errors='replace')
    problems = []
    subject = SUBJECT.search(text)
    prefix = subject_prefix(text)
    if not subject or not subject.group(1).startswith(prefix):
        problems.append(f'subject does not start with "{prefix}"')
    if not re.search(r'^Signed-off-by: .+ <.+@.+>$', text, re.M):
        problems.append('no Signed-off-by')
    return problems


def subject_prefix(text: str) -> str:
    """"tcp: ", or for a patch that only touches the TCP-AO selftests
    "selftests/tcp_ao: ", as that folder's history has it."""
    touched = re.findall(r'^\+\+\+ b/(\S+)', text, re.M)
    if touched and all(name.startswith(SELFTEST_DIR + '/')
                       for name in touched):
        return 'selftests/tcp_ao: '
    return 'tcp: '


def known_exception(path: Path) -> str:
    """The check type KNOWN lets @path draw, or ''."""
    # git format-patch folds a long Subject: onto indented lines.
    head = path.read_text(errors='replace').split('\n\n', 1)[0]
    subject = SUBJECT.search(re.sub(r'\n[ \t]+', ' ', head))
    return KNOWN.get(subject.group(1), ('',))[0] if subject else ''


def run(source: Path, path: Path, as_file: bool) -> CheckResult:
    ignored = ','.join(filter(None, [IGNORED, known_exception(path)]))
    cmd = ['perl', str(source / 'scripts/checkpatch.pl'), '--strict',
           '--color=never', f'--ignore={ignored}']
    if as_file:
        cmd += ['-f']
    cmd.append(str(path))
    # scripts/spdxcheck.py wants Debian's python3 with python3-ply, not
    # whichever python3 comes first on the user's PATH.
    env = dict(os.environ, PATH='/usr/bin:' + os.environ.get('PATH', ''))
    proc = subprocess.run(cmd, cwd=source, capture_output=True, text=True,
                          check=False, env=env)
    problems = parse_totals(proc.stdout)
    if proc.stderr.strip():
        problems.append(f'stderr: {proc.stderr.strip().splitlines()[-1]}')
    if problems:
        problems.append(proc.stdout.strip())
    return CheckResult(path, problems)


def check(source: Path, patches: List[Path],
          test_sources: List[Path]) -> List[CheckResult]:
    results = []
    for patch in patches:
        result = run(source, patch, as_file=False)
        result.problems[:0] = series_conventions(patch)
        results.append(result)
    for path in test_sources:
        results.append(run(source, path, as_file=True))
    return results

"""A patch applied to a kernel tree whole or not at all, a failure named by hunk.

patch(1) runs dry first: a patch that does not apply leaves the tree as
it was, and the error names the file and hunk instead of patch's output."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tcpopt.core.errors import HarnessError, SetupError, first_error
from tcpopt.core.fs import display


def describe_patch_failure(output: str) -> str:
    """Boil patch(1) output down to 'file: hunk #N FAILED at L'."""
    current = None
    missing_next = False
    failures = []
    for line in output.splitlines():
        match = re.match(r'(?:checking|patching) file (\S+)', line)
        if match:
            current = match.group(1)
            continue
        match = re.match(r'Hunk #(\d+) FAILED at (\d+)', line)
        if match:
            failures.append(f'{current}: hunk #{match.group(1)} FAILED at '
                            f'line {match.group(2)}')
            continue
        if line.startswith("can't find file to patch"):
            missing_next = True
            continue
        match = re.match(r'\|\+\+\+ (?:b/)?(\S+)', line)
        if match and missing_next:
            failures.append(f'{match.group(1)}: not found in the tree')
            missing_next = False
        elif 'Reversed (or previously applied) patch detected' in line:
            failures.append(f'{current}: already applied')
    if failures:
        more = f' (+{len(failures) - 1} more)' if len(failures) > 1 else ''
        return failures[0] + more
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else 'patch failed'


def apply_patch(tree: Path, patch: Path, what: str) -> None:
    """Apply one patch, or raise naming the patch and the hunk."""
    base = ['patch', '-p1', '-N', '-f', '--no-backup-if-mismatch', '-d',
            str(tree), '-i', str(patch)]
    check = subprocess.run(base + ['--dry-run'], capture_output=True,
                           text=True, check=False)
    if check.returncode:
        cause = describe_patch_failure(check.stdout + check.stderr)
        raise SetupError(f'{display(patch)} does not apply to {what}: '
                           f'{cause}')
    result = subprocess.run(base + ['-s'], capture_output=True, text=True,
                            check=False)
    if result.returncode:
        cause = first_error(result.stdout + result.stderr, 'patch failed')
        raise HarnessError(f'could not apply {display(patch)} to {what}: '
                           f'{cause}')


def apply_if_clean(tree: Path, patch: Path) -> bool:
    """Apply @patch if all of it applies; otherwise leave @tree alone."""
    base = ['patch', '-p1', '-N', '-f', '-s', '--no-backup-if-mismatch',
            '-d', str(tree), '-i', str(patch)]
    if subprocess.run(base + ['--dry-run'], capture_output=True,
                      check=False).returncode:
        return False
    apply_patch(tree, patch, str(tree))
    return True

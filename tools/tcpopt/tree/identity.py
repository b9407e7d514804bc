"""What a kernel tree was made from: its release, and the markers that say so.

pristine/ holds a stamp of its tarball (STAMP); src/ a state of its
tarball and series (STATE). A tree copied from either (a scratch tree)
compares them to know whether it is still a copy of it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, Optional

from tcpopt.core.errors import HarnessError

STAMP = '.tcpopt-pristine'
STATE = '.tcpopt-state.json'


def kernel_version(tree: Path) -> str:
    """VERSION.PATCHLEVEL.SUBLEVEL(EXTRAVERSION) from the top Makefile."""
    fields: Dict[str, str] = {}
    try:
        head = tree.joinpath('Makefile').read_text().splitlines()[:12]
    except OSError:
        return 'unknown'
    for line in head:
        match = re.match(r'(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*'
                         r'(\S*)', line)
        if match:
            fields[match.group(1)] = match.group(2)
    return '{}.{}.{}{}'.format(fields.get('VERSION', '?'),
                               fields.get('PATCHLEVEL', '?'),
                               fields.get('SUBLEVEL', '?'),
                               fields.get('EXTRAVERSION', ''))


def tarball_identity(tarball: Path) -> str:
    st = tarball.stat()
    return f'{tarball.name}:{st.st_size}:{st.st_mtime_ns}'


def read_state(tree: Path) -> Optional[dict]:
    """src/'s record of its tarball and series; None before the first."""
    try:
        return json.loads((tree / STATE).read_text())
    except (OSError, ValueError):
        return None


def base_identity(base: Path) -> str:
    """What a base tree holds: src/'s state (its tarball and series), or
    pristine/'s tarball stamp. The state goes first: src/ may carry a copy
    of the stamp, which says nothing of the series."""
    for name in (STATE, STAMP):
        if (base / name).is_file():
            return (base / name).read_text()
    raise HarnessError(f'{base} has no {STAMP} or {STATE}: run ./run.sh '
                       'first to prepare it')

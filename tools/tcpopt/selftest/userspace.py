"""The selftests' user space: the tree's UAPI headers, static binaries.

`make headers` puts the UAPI headers of the tree being tested in its
build dir; the selftest folder's own Makefile then builds each binary
against them, linked static (-static) so that the initramfs needs no C
library."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import List, Sequence

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import Settings
from tcpopt.selftest import catalog
from tcpopt.tree import kernel


def headers(settings: Settings, src: Path, build: Path) -> Path:
    """The tree's UAPI headers, installed in @build/usr/include."""
    result = kernel.make(settings, src, build, 'headers')
    if result.returncode:
        raise HarnessError(f'make headers in {src} failed: '
                           f'{last_lines(result.stderr)}')
    return build / 'usr' / 'include'


def build(settings: Settings, src: Path, include: Path, out: Path,
          names: Sequence[str]) -> List[Path]:
    """Static binaries of @names, _ipv4 and _ipv6, in @out."""
    out.mkdir(parents=True, exist_ok=True)
    targets = [out / name for name in catalog.binaries(names)]
    cmd = ['make', '-s', '-C', str(catalog.folder(src)), f'OUTPUT={out}',
           f'KHDR_INCLUDES=-isystem {include}', 'LDFLAGS=-static',
           f'-j{kernel.jobs(settings)}', *map(str, targets)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    missing = [path.name for path in targets if not path.is_file()]
    if result.returncode or missing:
        raise HarnessError(f'building the TCP-AO selftests in '
                           f'{catalog.folder(src)} failed: '
                           f'{last_lines(result.stderr) or missing}')
    return targets


def last_lines(text: str, count: int = 3) -> str:
    return ' / '.join(line.strip() for line in text.strip().splitlines()
                      [-count:])

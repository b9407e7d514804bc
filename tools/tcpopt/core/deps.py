"""Debian packages the harness needs, installed with apt-get when missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Iterable, List

from tcpopt.core.errors import SetupError, log

# Everything a build, a QEMU run, the bloat check and checkpatch need.
BASE_PACKAGES = [
    'qemu-system-x86',      # qemu-system-x86_64, and qboot.rom via -data
    'gcc', 'make', 'flex', 'bison', 'bc', 'libelf-dev', 'libssl-dev',
    'python3', 'patch', 'xz-utils', 'ccache', 'git', 'rsync',
    'python3-ply', 'python3-git',   # scripts/spdxcheck.py under checkpatch
    'tshark',                       # independent decoding of the layouts
    'busybox-static',               # the --twice and selftest boots' /init
    'libc6-dev',                    # libc.a: the static TCP-AO selftests
]


def required_packages(*tree_packages: str) -> List[str]:
    return list(tree_packages) + BASE_PACKAGES


def missing_packages(packages: Iterable[str]) -> List[str]:
    """The packages dpkg does not report as installed."""
    packages = list(packages)
    if not shutil.which('dpkg-query'):
        raise SetupError('dpkg-query not found: the harness needs Debian '
                           f'with these packages: {" ".join(packages)}')
    out = subprocess.run(
        ['dpkg-query', '-W', '-f', '${Package} ${db:Status-Abbrev}\n',
         *packages], capture_output=True, text=True, check=False).stdout
    installed = {line.split()[0] for line in out.splitlines()
                 if len(line.split()) > 1 and line.split()[1] == 'ii'}
    return [p for p in packages if p not in installed]


def ensure_packages(packages: Iterable[str]) -> None:
    """Install what is missing, or say exactly what is missing and why."""
    missing = missing_packages(packages)
    if not missing:
        return
    names = ' '.join(missing)
    if os.environ.get('TCPOPT_NO_INSTALL'):
        raise SetupError(f'missing Debian packages: {names} '
                           '(TCPOPT_NO_INSTALL is set; install them with '
                           f'apt-get install {names})')
    if os.geteuid() != 0 or not shutil.which('apt-get'):
        raise SetupError(f'missing Debian packages: {names} (run as root '
                           f'with apt-get, or: sudo apt-get install {names})')
    log(f'installing {names}')
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    for cmd in (['apt-get', 'update', '-qq'],
                ['apt-get', 'install', '-y', '-qq', '--no-install-recommends',
                 *missing]):
        result = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                check=False)
        if result.returncode:
            last = (result.stderr.strip().splitlines() or ['no output'])[-1]
            raise SetupError(f'apt-get could not install {names}: {last}')
    still = missing_packages(missing)
    if still:
        raise SetupError(f'missing Debian packages after apt-get: '
                           f'{" ".join(still)}')

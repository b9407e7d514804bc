"""Trees Debian 12 gets from trixie-backports, fetched without touching apt.

linux-source-7.3 and linux-config-7.3 are in trixie-backports, which this
machine's apt does not list. They are fetched under a private apt
configuration in <work>/apt/: its own one-line sources list (signed-by
Debian's archive keyring, so `apt-get update` checks the Release
signature), its own lists and cache. `apt-get download` gets the .debs,
`dpkg-deb -x` unpacks them into <work>/apt/root/. Nothing is installed,
and the machine's apt setup is never read for sources nor written.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Dict, List

from tcpopt.core.errors import SetupError, first_error, log
from tcpopt.core.fs import remove_tree
from tcpopt.core.settings import BACKPORTED, backport_root

SUITE = 'trixie-backports'
MIRROR = 'http://deb.debian.org/debian'
KEYRING = Path('/usr/share/keyrings/debian-archive-keyring.gpg')


def apt_dir(work_dir: Path) -> Path:
    return backport_root(work_dir).parent


def root_dir(work_dir: Path) -> Path:
    """Where the .debs are unpacked: usr/src/... as a package would put it."""
    return backport_root(work_dir)


def apt_options(work_dir: Path) -> List[str]:
    base = apt_dir(work_dir)
    return ['-o', f'Dir::Etc::sourcelist={base / "sources.list"}',
            '-o', 'Dir::Etc::sourceparts=/nonexistent',
            '-o', f'Dir::State::Lists={base / "lists"}',
            '-o', f'Dir::Cache={base / "cache"}',
            '-o', 'APT::Get::List-Cleanup=0']


def write_config(work_dir: Path) -> None:
    base = apt_dir(work_dir)
    for sub in ('lists/partial', 'cache/archives/partial', 'debs'):
        (base / sub).mkdir(parents=True, exist_ok=True)
    (base / 'sources.list').write_text(
        f'deb [signed-by={KEYRING}] {MIRROR} {SUITE} main\n')


def run(cmd: List[str], cwd: Path, what: str) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                            check=False)
    if result.returncode:
        raise SetupError(f'{what}: {first_error(result.stderr, "failed")}')


def fetch(work_dir: Path, packages: List[str]) -> Dict[str, Path]:
    """Download and unpack @packages from trixie-backports; their .debs."""
    if not KEYRING.is_file():
        raise SetupError(f'{KEYRING} is missing: install debian-archive-'
                           'keyring to check trixie-backports\' signature')
    write_config(work_dir)
    base = apt_dir(work_dir)
    options = apt_options(work_dir)
    names = ' '.join(packages)
    log(f'fetching {names} from {SUITE} into {base}')
    run(['apt-get', *options, 'update', '-qq'], base,
        f'apt-get update of {SUITE} for {names} failed')
    debs = base / 'debs'
    run(['apt-get', *options, 'download', '-qq', *packages], debs,
        f'apt-get download {names} from {SUITE} failed')
    found = {}
    for package in packages:
        matches = sorted(debs.glob(f'{package}_*.deb'))
        if not matches:
            raise SetupError(f'apt-get download left no {package} .deb in '
                               f'{debs}')
        found[package] = matches[-1]
    staging = root_dir(work_dir).with_name('root.new')
    remove_tree(staging)
    try:
        for deb in found.values():
            run(['dpkg-deb', '-x', str(deb), str(staging)], base,
                f'dpkg-deb -x {deb.name} failed')
    except BaseException:
        remove_tree(staging)
        raise
    remove_tree(root_dir(work_dir))
    staging.rename(root_dir(work_dir))
    return found


def ensure(work_dir: Path, tree: str) -> None:
    """The tree's tarball and config under <work>/apt/root/, fetched once."""
    package = BACKPORTED[tree]
    tarball = root_dir(work_dir) / 'usr/src' / f'{package}.tar.xz'
    if tarball.is_file():
        return
    fetch(work_dir, [package, f'linux-config-{tree}'])
    if not tarball.is_file():
        raise SetupError(f'{package} from {SUITE} holds no {tarball.name}')

"""The main kernel tree: the tarball extracted once, the series, kunit/ overlaid.

Layout under <work dir>/<tree>/:
  pristine/  the tarball, extracted once and never modified
  src/       a copy of pristine/ with the series applied and kunit/ copied in
  build/     the KUnit build directory (O=)

With --source, pristine/ is a mirror of the user's tree (usersource.py).
Every other tree the harness builds is a ScratchTree (scratch.py).

Every step builds into a '.new' directory and renames it into place, so an
interrupted or failed run leaves either the previous good tree or nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from tcpopt.core.errors import HarnessError, SetupError, first_error, log
from tcpopt.core.fs import copy_into, remove_tree, replace_dir, sha256
from tcpopt.core.settings import Settings
from tcpopt.series.seriesfile import files_touched, read_series
from tcpopt.tree.identity import (STAMP, STATE, kernel_version, read_state,
                                  tarball_identity)
from tcpopt.tree.overlay import overlay_sources
from tcpopt.tree.patching import apply_patch
from tcpopt.tree.usersource import ensure_user_source

# Object directories under <tree>/, all made from one base tree.
BUILD_DIRS = ('build*', 'bloat', 'steps', 'mutants', 'bench')


@contextmanager
def locked(settings: Settings, lock_file: Optional[Path] = None
           ) -> Iterator[None]:
    """Serialise runs that share a work tree (or another lock file)."""
    lock_file = lock_file or settings.lock_file
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, 'a+') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f'waiting for another run using {lock_file.parent}')
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure_pristine(settings: Settings) -> Path:
    """Extract the tarball unless the same one already is."""
    tarball = settings.tarball
    if not tarball.is_file():
        raise SetupError(f'{tarball} is missing: install the Debian package '
                           f'{settings.package} again (apt-get install '
                           f'--reinstall {settings.package})')
    identity = tarball_identity(tarball)
    stamp = settings.pristine / STAMP
    if stamp.is_file() and stamp.read_text() == identity:
        return settings.pristine
    log(f'extracting {tarball} into {settings.pristine}')
    staging = settings.tree_dir / 'pristine.new'
    remove_tree(staging)
    staging.mkdir(parents=True)
    result = subprocess.run(['tar', '-xJf', str(tarball), '-C', str(staging)],
                            capture_output=True, text=True, check=False)
    if result.returncode:
        remove_tree(staging)
        raise HarnessError(f'could not extract {tarball} into '
                           f'{settings.tree_dir}: '
                           f'{first_error(result.stderr, "tar failed")}')
    tops = [p for p in staging.iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / 'Makefile').is_file():
        remove_tree(staging)
        raise SetupError(f'{tarball} does not hold one kernel tree')
    version = kernel_version(tops[0])
    if not version.startswith(f'{settings.tree}.'):
        remove_tree(staging)
        raise SetupError(f'{tarball} holds Linux {version}, not '
                           f'{settings.tree}: use the {settings.package} '
                           'tarball')
    (tops[0] / STAMP).write_text(identity)
    tree = settings.tree_dir / 'pristine.tree'
    remove_tree(tree)
    tops[0].rename(tree)
    remove_tree(staging)
    replace_dir(tree, settings.pristine)
    return settings.pristine


def desired_state(settings: Settings, patches: List[Path]) -> dict:
    identity = tarball_identity(settings.tarball)
    return {
        'base': identity,
        'version': kernel_version(settings.pristine),
        'series': [[p.name, sha256(p)] for p in patches],
        'files': sorted({f for p in patches for f in files_touched(p)}),
    }


def ensure_source(settings: Settings,
                  extra_patches: Optional[List[Path]] = None) -> Path:
    """src/ = pristine + series (+ extra patches); rebuilt when they change."""
    ensure_pristine(settings)
    patches = read_series(settings.patch_dir) + list(extra_patches or [])
    want = desired_state(settings, patches)
    have = read_state(settings.source)
    if have == want:
        return settings.source
    what = f'{settings.package} {want["version"]}'
    log(f'preparing {settings.source}: {len(patches)} patches on {what}')
    staging = settings.tree_dir / 'src.new'
    remove_tree(staging)
    try:
        copy_into(settings.pristine, staging)
        for patch in patches:
            apply_patch(staging, patch, what)
        # Files an earlier series changed are back to their pristine mtime,
        # older than their objects: touch them so make rebuilds them.
        for name in (have or {}).get('files', []):
            if (staging / name).exists():
                os.utime(staging / name)
        (staging / STATE).write_text(json.dumps(want, indent=1))
    except BaseException:
        remove_tree(staging)
        raise
    # Objects built from another tarball are newer than its sources, so
    # make would reuse them: without a record of the old base, assume so.
    if have is None or have.get('base') != want['base']:
        drop_builds(settings)
    replace_dir(staging, settings.source)
    return settings.source


def drop_builds(settings: Settings) -> None:
    """Remove every directory of objects made from an earlier base tree."""
    for pattern in BUILD_DIRS:
        for path in sorted(settings.tree_dir.glob(pattern)):
            log(f'{path} was built from another kernel tree: removing it')
            remove_tree(path)


def prepare(settings: Settings,
            extra_patches: Optional[List[Path]] = None) -> Path:
    """The tree KUnit builds from, ready and up to date."""
    if settings.user_source:
        source = ensure_user_source(settings, extra_patches)
    else:
        source = ensure_source(settings, extra_patches)
    overlay_sources(settings)
    return source


@dataclass
class PreparedTree:
    """One kernel tree as the steps of a command share it: prepare()d on
    first use and at most once, with the patches injected for this run
    (run --inject). Each command makes one per tree and hands it to every
    step that needs src/."""
    settings: Settings
    inject: Sequence[Path] = ()
    _source: Optional[Path] = field(default=None, init=False, repr=False)

    def source(self) -> Path:
        """src/, ready and up to date: prepared on the first call."""
        if self._source is None:
            self._source = prepare(self.settings, list(self.inject))
        return self._source

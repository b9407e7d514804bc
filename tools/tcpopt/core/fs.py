"""Files and trees replaced whole: atomic writes, copies swapped in once done.

A reader, or a run stopped half-way, sees the old file or directory or
the new one, never a part of either."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from tcpopt.core.errors import HarnessError, first_error, log
from tcpopt.core.settings import REPO


def display(path: Path) -> str:
    """A path as the user knows it: relative to the checkout if inside."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def replace_dir(new: Path, final: Path) -> None:
    """Swap a finished directory into place, old one removed afterwards."""
    old = final.with_name(final.name + '.old')
    remove_tree(old)
    if final.exists():
        final.rename(old)
    new.rename(final)
    remove_tree(old)


def write_atomic(path: Path, text: str) -> None:
    """Write @text to @path so that a reader sees the old or the new file."""
    tmp = path.with_name(path.name + '.new')
    try:
        tmp.write_text(text)
        tmp.rename(path)
    finally:
        tmp.unlink(missing_ok=True)


def write_if_changed(path: Path, data: bytes) -> None:
    """@data at @path, its mtime kept when the bytes are the same (make
    then leaves what depends on it alone)."""
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + '.new')
    tmp.write_bytes(data)
    tmp.rename(path)


def copy_into(source: Path, staging: Path) -> None:
    """cp -a source staging; on failure, remove staging and say why."""
    result = subprocess.run(['cp', '-a', '--reflink=auto', str(source),
                             str(staging)], capture_output=True, text=True,
                            check=False)
    if result.returncode:
        remove_tree(staging)
        raise HarnessError(f'could not copy {source} to {staging}: '
                           f'{first_error(result.stderr, "cp failed")}')


def copy_tree(source: Path, target: Path) -> Path:
    """target = a full copy of source, swapped in only once complete."""
    log(f'copying {source} to {target}')
    staging = target.with_name(target.name + '.new')
    remove_tree(staging)
    target.parent.mkdir(parents=True, exist_ok=True)
    copy_into(source, staging)
    replace_dir(staging, target)
    return target


def copy_files(source: Path, target: Path, names: Sequence[str]) -> None:
    """Copy those of @names that @source has into @target."""
    target.mkdir(parents=True, exist_ok=True)
    for name in sorted(set(names)):
        if (source / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target / name)

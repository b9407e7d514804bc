"""The series file of kernel-patches/<tree>: its patches, their tags, their files.

<patch dir>/series names the patches in order, one a line; a '# tag'
after a name marks what a bisection applies ('# test-only') or a fix the
tests need ('# fix')."""

from __future__ import annotations

from pathlib import Path
from typing import List

from tcpopt.core.errors import HarnessError


def read_series(patch_dir: Path) -> List[Path]:
    """The patches named by <patch_dir>/series, in order."""
    series = patch_dir / 'series'
    if not series.is_file():
        raise HarnessError(f'{series} is missing')
    patches = []
    for line in series.read_text().splitlines():
        name = line.split('#', 1)[0].strip()
        if not name:
            continue
        path = patch_dir / name
        if not path.is_file():
            raise HarnessError(f'{series} names {name}, which does not exist')
        patches.append(path)
    return patches


def tagged_patches(patch_dir: Path, tag: str) -> List[Path]:
    """Patches the series tags '# <tag>', in series order."""
    tagged = []
    for line in (patch_dir / 'series').read_text().splitlines():
        name, _, comment = line.partition('#')
        if name.strip() and comment.strip() == tag:
            tagged.append(patch_dir / name.strip())
    return tagged


def test_only_patches(patch_dir: Path) -> List[Path]:
    """Patches the series tags '# test-only': what a bisection applies."""
    return tagged_patches(patch_dir, 'test-only')


def fix_patches(patch_dir: Path) -> List[Path]:
    """Patches the series tags '# fix': bug fixes its tests need, which
    change production code on purpose (the zero-delta baseline has them).
    """
    return tagged_patches(patch_dir, 'fix')


def files_touched(patch: Path) -> List[str]:
    """The files a patch modifies, from its '+++ b/...' lines."""
    names = []
    for line in patch.read_text(errors='replace').splitlines():
        if line.startswith('+++ b/'):
            names.append(line[len('+++ b/'):].split('\t')[0])
    return names


def files_read(patch: Path) -> List[str]:
    """The files a patch reads or writes: its '--- a/' and '+++ b/'
    names (a patch deleting a file names it only on '--- a/')."""
    names = files_touched(patch)
    for line in patch.read_text(errors='replace').splitlines():
        if line.startswith('--- a/'):
            names.append(line[len('--- a/'):].split('\t')[0])
    return names

"""The user's own tree (--source): mirrored file by file, the series put on it.

The tree is only read. Its copy under the work dir keeps the mtime of
every file that did not change, and the series goes on less the patches
the tree already carries (a checkout after `git am` of the series), so
that a run rebuilds only what changed since the last one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

from tcpopt.core.errors import HarnessError, first_error, log
from tcpopt.core.fs import (copy_files, display, remove_tree, sha256,
                            write_if_changed)
from tcpopt.core.settings import Settings
from tcpopt.series.seriesfile import files_read, files_touched, read_series
from tcpopt.tree.identity import STATE, kernel_version
from tcpopt.tree.overlay import kunit_sources
from tcpopt.tree.patching import apply_patch


def _rsync(*args: str) -> None:
    # --modify-window=-1: nanoseconds count, so a same-size edit within
    # the second of the last sync is not taken for unchanged.
    result = subprocess.run(['rsync', '-a', '--modify-window=-1', *args],
                            capture_output=True, check=False)
    if result.returncode not in (0, 24):        # 24: a file vanished
        raise HarnessError('rsync failed: ' + first_error(
            result.stderr.decode(errors='replace'), 'rsync failed'))


def _git_files(directory: Path) -> Optional[List[str]]:
    """The files git would check in (tracked and untracked, not ignored),
    or None when @directory is not a git checkout."""
    if not (directory / '.git').exists():
        return None
    result = subprocess.run(['git', '-C', str(directory), 'ls-files', '-z',
                             '--cached', '--others', '--exclude-standard'],
                            capture_output=True, check=False)
    if result.returncode:
        raise HarnessError(f'git ls-files failed in {directory}: '
                           f'{first_error(result.stderr.decode(), "")}')
    return [name for name in result.stdout.decode().split('\0') if name]


def _copy_changed(source: Path, target: Path, files: List[str]) -> None:
    """Copy each of @files whose size or mtime (in ns) differ; a stat of
    each is all an unchanged tree costs (rsync spends seconds on the
    directories --files-from implies)."""
    for name in files:
        src, dst = os.path.join(source, name), os.path.join(target, name)
        try:
            have = os.lstat(src)
        except FileNotFoundError:
            continue                # deleted, not yet staged
        try:
            had = os.lstat(dst)
            if had.st_size == have.st_size and \
                    had.st_mtime_ns == have.st_mtime_ns:
                continue
            os.unlink(dst)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)


def _remove_extra(mirror: Path, keep: List[str]) -> None:
    """Delete what the user's tree no longer has."""
    wanted = set(keep)
    top = len(str(mirror)) + 1
    for root, _, files in os.walk(mirror):
        for name in files:
            path = os.path.join(root, name)
            if path[top:] not in wanted:
                os.unlink(path)


def mirror_user_tree(directory: Path, mirror: Path) -> None:
    """mirror = the user's sources, file by file: what did not change keeps
    its mtime. Only read from @directory, never written."""
    mirror.mkdir(parents=True, exist_ok=True)
    files = _git_files(directory)
    if files is None:
        if (directory / '.config').exists():
            raise HarnessError(f'{directory} holds build output (.config): '
                               'run make mrproper there, build with O=, or '
                               'give a git checkout')
        _rsync('--delete', '--exclude=/.git', f'{directory}/', f'{mirror}/')
        return
    _copy_changed(directory, mirror, files)
    _remove_extra(mirror, files)


def _reverses(tree: Path, patch: Path) -> bool:
    """Reverse-apply @patch in @tree; False if a hunk fails (@tree is then
    half undone). -f: take the patch as given, never as reversed."""
    result = subprocess.run(['patch', '-p1', '-R', '-f', '-s',
                             '--no-backup-if-mismatch', '-d', str(tree),
                             '-i', str(patch)],
                            capture_output=True, check=False)
    return result.returncode == 0


def carries(directory: Path, patches: Sequence[Path]) -> bool:
    """Whether @directory holds all of @patches: they reverse-apply, the
    last first, to a copy of their files. @directory is only read."""
    with tempfile.TemporaryDirectory(prefix='tcpopt-carried-') as tmp:
        copy_files(directory, Path(tmp),
                   [name for p in patches for name in files_read(p)])
        return all(_reverses(Path(tmp), p) for p in reversed(patches))


def carried_prefix(directory: Path, patches: Sequence[Path]) -> int:
    """How many leading @patches @directory already holds (a tree after
    `git am` of the series, or with its first fix merged), 0 to all."""
    for count in range(len(patches), 0, -1):
        if carries(directory, patches[:count]):
            return count
    return 0


def report_carried(settings: Settings, series: Sequence[Path],
                   carried: int) -> None:
    if not carried:
        return
    directory = settings.user_source
    rest = len(series) - carried
    names = ', '.join(p.name for p in series[:carried])
    if rest:
        head, tail = f'{carried} of', f'applying the other {rest}'
    else:
        head, tail = 'all', 'applying none'
    log(f'{directory} already carries {head} {len(series)} patches of '
        f'{display(settings.patch_dir)} ({names}): {tail}')


def _patched_files(settings: Settings, source: Path, patches: List[Path],
                   what: str) -> Path:
    """A scratch dir with the files @patches touch, from @source, patched."""
    scratch = settings.tree_dir / 'series.new'
    remove_tree(scratch)
    copy_files(source, scratch,
               [f for p in patches for f in files_touched(p)])
    try:
        for patch in patches:
            apply_patch(scratch, patch, what)
    except BaseException:
        remove_tree(scratch)
        raise
    return scratch


def ensure_user_source(settings: Settings,
                       extra_patches: Optional[List[Path]] = None) -> Path:
    """src/ = the user's tree + the series (less the patches it already
    carries) + kunit/, synced so that only what changed since the last
    run is rebuilt."""
    directory = settings.user_source
    assert directory is not None
    version = kernel_version(directory)
    what = f'Linux {version} from {directory}'
    series = read_series(settings.patch_dir)
    carried = carried_prefix(directory, series)
    report_carried(settings, series, carried)
    patches = series[carried:] + list(extra_patches or [])
    # Before the mirror: a series that does not apply stops the run
    # before it copies the whole tree.
    scratch = _patched_files(settings, directory, patches, what)
    try:
        mirror_user_tree(directory, settings.pristine)
        touched = sorted(str(p.relative_to(scratch))
                         for p in scratch.rglob('*') if p.is_file())
        overlay = list(kunit_sources(settings.kunit_dir, settings.layered,
                                     settings.has_ao_selftests))
        excludes = [f'--exclude=/{name}'
                    for name in touched + overlay + [STATE]]
        settings.source.mkdir(parents=True, exist_ok=True)
        _rsync('--delete', *excludes, f'{settings.pristine}/',
               f'{settings.source}/')
        for name in touched:
            write_if_changed(settings.source / name,
                             (scratch / name).read_bytes())
    finally:
        remove_tree(scratch)
    state = {'user_source': str(directory), 'version': version,
             'series': [[p.name, sha256(p)]
                        for p in series + list(extra_patches or [])],
             'carried': carried}
    write_if_changed(settings.source / STATE,
                     json.dumps(state, indent=1).encode())
    return settings.source

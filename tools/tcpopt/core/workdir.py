"""What a work dir holds and costs, and ./run.sh clean that removes it.

Its parts' sizes, and removing them (./run.sh clean)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Tuple

from tcpopt.core.fs import remove_tree
from tcpopt.core.settings import TREES, Settings

# What clean --keep-build keeps of a tree's work dir: the extracted
# tarball, the patched tree and the main build, so the next run is warm.
KEPT_BY_KEEP_BUILD = ('pristine', 'src', 'build')


def tree_size(path: Path) -> int:
    """Bytes under @path, links not followed."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass            # removed while we walked
    return total


def disk_usage(work_dir: Path) -> Dict[str, float]:
    """GiB under each top-level part of each tree's work dir, and of the
    shared parts (ccache, apt)."""
    usage = {}
    for top in sorted(p for p in work_dir.iterdir() if p.is_dir()):
        parts = [top] if top.name not in TREES else \
            sorted(p for p in top.iterdir() if p.is_dir())
        for part in parts:
            usage[str(part.relative_to(work_dir))] = \
                round(tree_size(part) / 2**30, 2)
    return usage


def clean(settings: Settings, keep_build: bool) -> List[Tuple[Path, int]]:
    """Remove the tree's work dir but its lock (a run waiting on it must
    find the same file), or with @keep_build only what is not
    KEPT_BY_KEEP_BUILD; the caller holds the lock. (path, bytes) each."""
    doomed = sorted(p for p in settings.tree_dir.iterdir()
                    if p != settings.lock_file and
                    (not keep_build or p.name not in KEPT_BY_KEEP_BUILD))
    removed = []
    for path in doomed:
        size = tree_size(path)
        remove_tree(path)
        removed.append((path, size))
    return removed

"""Throw-away kernel trees: a base copied, patches on it, kunit/ overlaid.

Every tree the harness builds besides src/ (mutants, bisectability
steps, the zero-delta baseline, the bench's two sides, bisect-layout's
checkout) is a ScratchTree, with one marker file beside it that says
what it holds; seed_build() gives one a copy of the main build, so that
it rebuilds only what differs."""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

from tcpopt.core.errors import log
from tcpopt.core.fs import (copy_into, copy_tree, display, remove_tree,
                            replace_dir, sha256, write_atomic)
from tcpopt.core.settings import Settings
from tcpopt.tree.identity import base_identity, kernel_version
from tcpopt.tree.overlay import overlay_sources
from tcpopt.tree.patching import apply_if_clean, apply_patch

# Beside a scratch tree's src: what it holds (ScratchTree).
SCRATCH_SUFFIX = '.scratch.json'


@dataclass
class ScratchTree:
    """A throw-away kernel tree: a copy of @base, @patches on it (and
    @optional ones where they apply cleanly), kunit/ overlaid if asked.

    One marker, <src>.scratch.json beside it, records what src holds.
    While a change is tried in it (trying()) the marker says so: a run
    stopped half-way leaves that, and the next ensure() copies afresh.
    The build directories made from src are the caller's; ensure() empties
    @builds when it copies afresh (make would keep objects newer than
    their new sources), and touches @touch, the files a trial changes, so
    that their objects rebuild.
    """
    settings: Settings
    src: Path
    base: Path
    patches: Sequence[Path] = ()
    optional: Sequence[Path] = ()
    overlay: bool = False
    touch: Sequence[str] = ()
    builds: Sequence[Path] = ()
    # (build dir of @base, build dir of src): copied with src, so that src
    # builds incrementally from @base's objects (seed_build()).
    seed: Optional[tuple] = None

    @property
    def marker(self) -> Path:
        return self.src.with_name(self.src.name + SCRATCH_SUFFIX)

    def base_id(self) -> str:
        return base_identity(self.base)

    def identity(self) -> dict:
        return {'base': self.base_id(),
                'patches': [[p.name, sha256(p)] for p in self.patches],
                'optional': [[p.name, sha256(p)] for p in self.optional]}

    def recorded(self) -> Optional[dict]:
        try:
            return json.loads(self.marker.read_text())
        except (OSError, ValueError):
            return None

    def _mark(self, state: dict) -> None:
        self.marker.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.marker, json.dumps(state, indent=1))

    def fill(self) -> None:
        """Put the base into src."""
        copy_tree(self.base, self.src)

    def renew(self) -> Path:
        want = self.identity()
        self._mark(dict(want, trying='copying the base'))
        for build in self.builds:
            remove_tree(build)
        self.fill()
        if self.seed:
            seed_build(self.seed[0], self.seed[1], self.base, self.src)
        what = f'{display(self.src)} ({kernel_version(self.src)})'
        for patch in self.optional:
            apply_if_clean(self.src, patch)
        for patch in self.patches:
            apply_patch(self.src, patch, what)
        for name in self.touch:
            if (self.src / name).is_file():
                (self.src / name).touch()
        self._mark(want)
        return self.src

    def ensure(self) -> Path:
        """src as the fields describe it, copied afresh only if it is not."""
        if self.recorded() != self.identity() or not self.src.is_dir():
            self.renew()
        if self.overlay:
            overlay_sources(self.settings, self.src)
        return self.src

    def mark_changed(self, change: str) -> None:
        """src no longer holds what the fields describe: the next
        ensure() copies it afresh."""
        self._mark(dict(self.recorded() or self.identity(), trying=change))

    @contextmanager
    def trying(self, change: str,
               undo: Optional[Callable[[], None]] = None) -> Iterator[Path]:
        """Change src for a while. The body undoes its change, or @undo
        does, also when the body raises (an interrupt): src is then as
        before and stays reusable. If the body raises without @undo, the
        marker keeps @change and the next ensure() renews src."""
        state = self.recorded() or self.identity()
        self.mark_changed(change)
        try:
            yield self.src
        finally:
            if undo is not None:
                undo()
                self._mark(state)
        self._mark(state)


# What kbuild writes the absolute source tree into, in an O= build dir
# that is not a subdirectory of the source: each object's command line,
# source and dependencies, and Kconfig's record of its input files.
PATH_RECORDS = ('.cmd',)
PATH_RECORD_FILES = ('include/config/auto.conf.cmd',)


def seed_build(build: Path, target: Path, source: Path,
               new_source: Path) -> bool:
    """target = a copy of @build, made from @source, as if made from
    @new_source (a copy of it with the same mtimes): kbuild then rebuilds
    only what differs, instead of every object (ccache or not, a full
    build costs minutes here). False, and no target, when @build holds no
    finished kernel."""
    if not (build / '.config').is_file() or \
            not (build / 'arch/x86/boot/bzImage').is_file():
        return False
    log(f'seeding {target} from {build}')
    staging = target.with_name(target.name + '.new')
    remove_tree(staging)
    target.parent.mkdir(parents=True, exist_ok=True)
    copy_into(build, staging)
    # The source tree, and the build dir itself (objtool's build records
    # its output by absolute path).
    moves = ((str(source.resolve()), str(new_source.resolve())),
             (str(build.resolve()), str(target.resolve())))
    for path in staging.rglob('*'):
        if path.suffix in PATH_RECORDS or \
                str(path.relative_to(staging)) in PATH_RECORD_FILES:
            rewrite_prefixes(path, moves)
    (staging / 'source').unlink(missing_ok=True)   # kbuild links it anew
    replace_dir(staging, target)
    return True


# What may follow a recorded path: a deeper path, the end of a word, a
# make rule or quote ('ifneq "$(srctree)" "/abs/src"' in auto.conf.cmd).
PATH_END = r'(?=[/\s:"\'),]|$)'


def rewrite_prefixes(path: Path, moves: Sequence[tuple]) -> None:
    """Each (old, new) directory of @moves moved in a text file, its mtime
    kept: the copy stays as old as the objects it describes."""
    if not path.is_file() or path.is_symlink():
        return
    text = path.read_text(errors='surrogateescape')
    changed = text
    for old, new in moves:
        changed = re.sub(re.escape(old) + PATH_END, new, changed, flags=re.M)
    if changed == text:
        return
    stat = path.stat()
    path.write_text(changed, errors='surrogateescape')
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))

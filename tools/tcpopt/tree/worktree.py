"""The kernel work tree: extract once, apply the series atomically, overlay.

Layout under <work dir>/<tree>/:
  pristine/  the tarball, extracted once and never modified
  src/       a copy of pristine/ with the series applied and kunit/ copied in
  build/     the KUnit build directory (O=)

Every other tree the harness builds (mutants, bisectability steps, the
zero-delta baseline, the bench's two sides, bisect-layout's checkout) is a
ScratchTree: a base, patches, an overlay, with one marker file.

Every step builds into a '.new' directory and renames it into place, so an
interrupted or failed run leaves either the previous good tree or nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple
from contextlib import contextmanager
from dataclasses import dataclass

from tcpopt.core.errors import HarnessError, SetupError, log
from tcpopt.core.settings import (OVERLAY_DIR, REPO, UPSTREAM_TEST_DIR,
                                  UPSTREAM_TESTS, Settings)
from tcpopt.series.upstream_tests import source_for_tree

STAMP = '.tcpopt-pristine'
# Beside a scratch tree's src: what it holds (ScratchTree).
SCRATCH_SUFFIX = '.scratch.json'
STATE = '.tcpopt-state.json'
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


def display(path: Path) -> str:
    """A path as the user knows it: relative to the checkout if inside."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def tarball_identity(tarball: Path) -> str:
    st = tarball.stat()
    return f'{tarball.name}:{st.st_size}:{st.st_mtime_ns}'


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


def first_error(output: str, default: str) -> str:
    """The cause: tools print it first and a summary ('Exiting with
    failure status due to previous errors') last."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[0] if lines else default


def write_atomic(path: Path, text: str) -> None:
    """Write @text to @path so that a reader sees the old or the new file."""
    tmp = path.with_name(path.name + '.new')
    try:
        tmp.write_text(text)
        tmp.rename(path)
    finally:
        tmp.unlink(missing_ok=True)


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


def base_identity(base: Path) -> str:
    """What a base tree holds: src/'s state (its tarball and series), or
    pristine/'s tarball stamp. The state goes first: src/ may carry a copy
    of the stamp, which says nothing of the series."""
    for name in (STATE, STAMP):
        if (base / name).is_file():
            return (base / name).read_text()
    raise HarnessError(f'{base} has no {STAMP} or {STATE}: run ./run.sh '
                       'first to prepare it')


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


def describe_patch_failure(output: str) -> str:
    """Boil patch(1) output down to 'file: hunk #N FAILED at L'."""
    current = None
    missing_next = False
    failures = []
    for line in output.splitlines():
        match = re.match(r'(?:checking|patching) file (\S+)', line)
        if match:
            current = match.group(1)
            continue
        match = re.match(r'Hunk #(\d+) FAILED at (\d+)', line)
        if match:
            failures.append(f'{current}: hunk #{match.group(1)} FAILED at '
                            f'line {match.group(2)}')
            continue
        if line.startswith("can't find file to patch"):
            missing_next = True
            continue
        match = re.match(r'\|\+\+\+ (?:b/)?(\S+)', line)
        if match and missing_next:
            failures.append(f'{match.group(1)}: not found in the tree')
            missing_next = False
        elif 'Reversed (or previously applied) patch detected' in line:
            failures.append(f'{current}: already applied')
    if failures:
        more = f' (+{len(failures) - 1} more)' if len(failures) > 1 else ''
        return failures[0] + more
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else 'patch failed'


def apply_patch(tree: Path, patch: Path, what: str) -> None:
    """Apply one patch, or raise naming the patch and the hunk."""
    base = ['patch', '-p1', '-N', '-f', '--no-backup-if-mismatch', '-d',
            str(tree), '-i', str(patch)]
    check = subprocess.run(base + ['--dry-run'], capture_output=True,
                           text=True, check=False)
    if check.returncode:
        cause = describe_patch_failure(check.stdout + check.stderr)
        raise SetupError(f'{display(patch)} does not apply to {what}: '
                           f'{cause}')
    result = subprocess.run(base + ['-s'], capture_output=True, text=True,
                            check=False)
    if result.returncode:
        cause = first_error(result.stdout + result.stderr, 'patch failed')
        raise HarnessError(f'could not apply {display(patch)} to {what}: '
                           f'{cause}')


def apply_if_clean(tree: Path, patch: Path) -> bool:
    """Apply @patch if all of it applies; otherwise leave @tree alone."""
    base = ['patch', '-p1', '-N', '-f', '-s', '--no-backup-if-mismatch',
            '-d', str(tree), '-i', str(patch)]
    if subprocess.run(base + ['--dry-run'], capture_output=True,
                      check=False).returncode:
        return False
    apply_patch(tree, patch, str(tree))
    return True


def desired_state(settings: Settings, patches: List[Path]) -> dict:
    identity = tarball_identity(settings.tarball)
    return {
        'base': identity,
        'version': kernel_version(settings.pristine),
        'series': [[p.name, sha256(p)] for p in patches],
        'files': sorted({f for p in patches for f in files_touched(p)}),
    }


def read_state(tree: Path) -> Optional[dict]:
    try:
        return json.loads((tree / STATE).read_text())
    except (OSError, ValueError):
        return None


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


# --- the user's own tree (--source) -----------------------------------------

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


def _copy_files(source: Path, target: Path, names: Sequence[str]) -> None:
    """Copy those of @names that @source has into @target."""
    target.mkdir(parents=True, exist_ok=True)
    for name in sorted(set(names)):
        if (source / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target / name)


def _files_read(patch: Path) -> List[str]:
    """The files a patch reads or writes: its '--- a/' and '+++ b/'
    names (a patch deleting a file names it only on '--- a/')."""
    names = files_touched(patch)
    for line in patch.read_text(errors='replace').splitlines():
        if line.startswith('--- a/'):
            names.append(line[len('--- a/'):].split('\t')[0])
    return names


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
        _copy_files(directory, Path(tmp),
                    [name for p in patches for name in _files_read(p)])
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
    _copy_files(source, scratch,
                [f for p in patches for f in files_touched(p)])
    try:
        for patch in patches:
            apply_patch(scratch, patch, what)
    except BaseException:
        remove_tree(scratch)
        raise
    return scratch


def _write_if_changed(data: bytes, target: Path) -> None:
    if target.is_file() and target.read_bytes() == data:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + '.new')
    tmp.write_bytes(data)
    tmp.rename(target)


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
        overlay = list(kunit_sources(settings.kunit_dir, settings.layered))
        excludes = [f'--exclude=/{name}'
                    for name in touched + overlay + [STATE]]
        settings.source.mkdir(parents=True, exist_ok=True)
        _rsync('--delete', *excludes, f'{settings.pristine}/',
               f'{settings.source}/')
        for name in touched:
            _write_if_changed((scratch / name).read_bytes(),
                              settings.source / name)
    finally:
        remove_tree(scratch)
    state = {'user_source': str(directory), 'version': version,
             'series': [[p.name, sha256(p)]
                        for p in series + list(extra_patches or [])],
             'carried': carried}
    _write_if_changed(json.dumps(state, indent=1).encode(),
                      settings.source / STATE)
    return settings.source


def drop_builds(settings: Settings) -> None:
    """Remove every directory of objects made from an earlier base tree."""
    for pattern in BUILD_DIRS:
        for path in sorted(settings.tree_dir.glob(pattern)):
            log(f'{path} was built from another kernel tree: removing it')
            remove_tree(path)


def kunit_sources(kunit_dir: Path, upstream: bool) -> Dict[str, Path]:
    """In-tree path -> kunit/ file, for every test source of a tree: the
    harness's in net/ipv4/, and with @upstream those of kunit/tests/ in
    net/ipv4/tests/."""
    places = [(kunit_dir, OVERLAY_DIR)]
    if upstream:
        places.append((kunit_dir / UPSTREAM_TESTS, UPSTREAM_TEST_DIR))
    return {f'{where}/{p.name}': p
            for folder, where in places if folder.is_dir()
            for p in sorted(folder.iterdir()) if p.suffix in ('.c', '.h')}


def source_bytes(name: str, path: Path, version: Tuple[int, int]) -> bytes:
    """What the tree of @version gets at @name from kunit/ @path: the
    upstream suites with the guards of that tree resolved."""
    if name.startswith(UPSTREAM_TEST_DIR + '/'):
        return source_for_tree(path, version).encode()
    return path.read_bytes()


def overlay_sources(settings: Settings,
                    tree: Optional[Path] = None) -> List[Path]:
    """Copy kunit/ into the tree, touching only files whose bytes changed."""
    root = tree or settings.source
    copied = []
    for name, src in kunit_sources(settings.kunit_dir,
                                   settings.layered).items():
        dst = root / name
        data = source_bytes(name, src, settings.version)
        if dst.is_file() and dst.read_bytes() == data:
            continue
        tmp = dst.with_name(dst.name + '.new')
        try:
            tmp.write_bytes(data)
        except OSError as error:
            tmp.unlink(missing_ok=True)     # a full disk: no half file
            error.filename = error.filename or str(tmp)
            raise
        tmp.rename(dst)
        copied.append(dst)
    return copied


def prepare(settings: Settings,
            extra_patches: Optional[List[Path]] = None) -> Path:
    """The tree KUnit builds from, ready and up to date."""
    if settings.user_source:
        source = ensure_user_source(settings, extra_patches)
    else:
        source = ensure_source(settings, extra_patches)
    overlay_sources(settings)
    return source

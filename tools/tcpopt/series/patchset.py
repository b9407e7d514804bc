"""The series as stored, its test files generated from kunit/, and its export.

A stored patch is a mail with no identity in it: no From:, no Date: and no
Signed-off-by: (the export signs with the user's own git identity):

    Subject: [PATCH] tcp: <summary>

    <message>
    ---
    diff --git a/<file> b/<file>
    ...

Every file the series creates under net/ipv4/ that kunit/ also holds is
generated from kunit/, the one place the test sources are edited:
`./run.sh series --regen` rewrites those sections, and `./run.sh series`
(a step of the test command) fails while they differ.

`./run.sh series --export DIR` applies the stored patches to a git copy of
the pristine tree, commits each as the user (`git commit -s`), and writes
the upstream layer alone: the patches marked as fixes as DIR/net/
(`[PATCH net]`, no cover letter), the rest as DIR/net-next/ (`[PATCH
net-next n/m]` with a cover letter); a tree of one layer exports all of it
as net-next.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tcpopt.core.errors import HarnessError, UsageError, log
from tcpopt.core.fs import display, remove_tree, replace_dir, write_atomic
from tcpopt.core.settings import (OVERLAY_DIR, TREE_KCONFIG, UPSTREAM_KCONFIG,
                                  UPSTREAM_LAYER, Settings)
from tcpopt.series.seriesfile import fix_patches, read_series
from tcpopt.tree.identity import tarball_identity
from tcpopt.tree.overlay import kunit_sources, source_bytes
from tcpopt.tree.worktree import ensure_pristine

COVER = '0000-cover-letter.patch'
# The net set's, when it has more than one patch (the fix and its selftest).
NET_COVER = '0000-net-cover-letter.patch'
SUBJECT_PREFIX = 'PATCH net-next'
# Headers a stored patch must not carry: they would invent an identity.
IDENTITY = re.compile(r'^(From|Date|Signed-off-by|Co-developed-by):', re.M)
BASE_STAMP = '.tcpopt-git-base'
BASE_BRANCH = 'pristine'
# What plain.git_am applied last (the digest of the mails), in .git/.
APPLIED = 'tcpopt-applied'


@dataclass
class Section:
    path: str           # the file, as in 'diff --git a/<path> b/<path>'
    text: str           # the whole section, from 'diff --git' on

    @property
    def creates(self) -> bool:
        return '\nnew file mode ' in self.text.split('\n@@', 1)[0]


@dataclass
class StoredPatch:
    path: Path
    subject: str        # the summary, without '[PATCH ...]'
    message: str        # the commit message body
    sections: List[Section] = field(default_factory=list)

    def render(self) -> str:
        return (f'Subject: [PATCH] {self.subject}\n\n{self.message}---\n' +
                ''.join(s.text for s in self.sections))


def parse_patch(path: Path) -> StoredPatch:
    """Split a stored patch into subject, message and per-file sections."""
    text = path.read_text()
    found = IDENTITY.search(text)
    if found:
        raise HarnessError(f'{display(path)} carries a "{found.group(1)}:" '
                           'line: stored patches hold no identity, the '
                           'export adds the user\'s')
    match = re.match(r'Subject: \[PATCH[^\]]*\] (.+?)\n\n(.*?)^---\n(.*)\Z',
                     text, re.S | re.M)
    if not match:
        raise HarnessError(f'{display(path)} is not a stored patch: want '
                           '"Subject: [PATCH] tcp: ...", a message, "---" '
                           'and the diff')
    subject, message, diff = match.groups()
    sections = []
    for chunk in re.split(r'^(?=diff --git )', diff, flags=re.M):
        if not chunk:
            continue
        head = re.match(r'diff --git a/(\S+) b/\S+\n', chunk)
        if not head:
            raise HarnessError(f'{display(path)}: text before the first '
                               '"diff --git" line')
        sections.append(Section(head.group(1), chunk))
    return StoredPatch(path, subject.replace('\n ', ' '), message, sections)


def new_file_section(path: str, data: str) -> str:
    """A git diff that creates @path with @data (which ends in a newline)."""
    lines = data.splitlines()
    span = '1' if len(lines) == 1 else f'1,{len(lines)}'
    return (f'diff --git a/{path} b/{path}\nnew file mode 100644\n'
            f'--- /dev/null\n+++ b/{path}\n@@ -0,0 +{span} @@\n' +
            ''.join(f'+{line}\n' for line in lines))


def stored_patches(settings: Settings) -> Tuple[Optional[Path], List[Path]]:
    """The cover letter (if any) and the patches, in series order."""
    folder = settings.patch_dir / (UPSTREAM_LAYER if settings.layered
                                   else '')
    cover = folder / COVER
    return (cover if cover.is_file() else None,
            read_series(settings.patch_dir))


def regenerate(patch: StoredPatch, sources: Dict[str, Path],
               version: Tuple[int, int]) -> StoredPatch:
    """@patch with every kunit/-backed new file taken from kunit/, as the
    tree of @version gets it."""
    sections = []
    for section in patch.sections:
        source = sources.get(section.path)
        if source is not None and section.creates:
            data = source_bytes(section.path, source, version).decode()
            if not data.endswith('\n'):
                raise HarnessError(f'{display(source)} does not end with a '
                                   'newline')
            section = Section(section.path,
                              new_file_section(section.path, data))
        sections.append(section)
    return StoredPatch(patch.path, patch.subject, patch.message, sections)


def check(settings: Settings) -> List[str]:
    """Where the stored series and kunit/ disagree; empty when in sync."""
    sources = kunit_sources(settings.kunit_dir, settings.layered,
                            settings.has_ao_selftests)
    problems = []
    created: Dict[str, Path] = {}
    for path in stored_patches(settings)[1]:
        patch = parse_patch(path)
        for section in patch.sections:
            if section.creates:
                created[section.path] = path
        fresh = regenerate(patch, sources, settings.version)
        if fresh.render() != path.read_text():
            stale = [s.path for s, n in zip(patch.sections, fresh.sections)
                     if s.text != n.text]
            problems.append(f'{display(path)}: {", ".join(stale)} differs '
                            'from kunit/: run ./run.sh series --regen')
    for name, source in sources.items():
        if name not in created:
            problems.append(f'{display(source)}: no patch of '
                            f'kernel-patches/{settings.tree} adds {name}')
    return problems


def regen(settings: Settings) -> List[Path]:
    """Rewrite the stored patches whose kunit/ files changed."""
    sources = kunit_sources(settings.kunit_dir, settings.layered,
                            settings.has_ao_selftests)
    patches = [parse_patch(p) for p in stored_patches(settings)[1]]
    written = []
    for patch in patches:
        text = regenerate(patch, sources, settings.version).render()
        if text != patch.path.read_text():
            write_atomic(patch.path, text)
            written.append(patch.path)
    return written


def options(kunitconfig: str) -> set:
    """The CONFIG_ lines of a .kunitconfig, comments left out."""
    return {line.strip() for line in kunitconfig.splitlines()
            if line.strip() and not line.lstrip().startswith('#')}


def kunitconfig_problems(settings: Settings, tree: Path) -> List[str]:
    """The series' net/ipv4/.kunitconfig must be the harness's own."""
    shipped = tree / OVERLAY_DIR / '.kunitconfig'
    if not shipped.is_file():
        return [f'the series adds no {OVERLAY_DIR}/.kunitconfig']
    want = options(settings.kunitconfig.read_text()) | \
        set(TREE_KCONFIG.get(settings.tree, [])) | \
        set(UPSTREAM_KCONFIG.get(settings.tree, []))
    have = options(shipped.read_text())
    problems = []
    if want - have:
        problems.append(f'{OVERLAY_DIR}/.kunitconfig lacks '
                        f'{" ".join(sorted(want - have))}')
    if have - want:
        problems.append(f'{OVERLAY_DIR}/.kunitconfig has '
                        f'{" ".join(sorted(have - want))}, which .kunitconfig '
                        'does not')
    return problems


# --- git -----------------------------------------------------------------

@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def git_env(self) -> Dict[str, str]:
        return {'GIT_AUTHOR_NAME': self.name, 'GIT_AUTHOR_EMAIL': self.email,
                'GIT_COMMITTER_NAME': self.name,
                'GIT_COMMITTER_EMAIL': self.email}


def user_identity(cwd: Path) -> Identity:
    """The user's git user.name and user.email, or a usage error."""
    values = []
    for key in ('user.name', 'user.email'):
        proc = subprocess.run(['git', 'config', key], cwd=cwd,
                              capture_output=True, text=True, check=False)
        value = proc.stdout.strip()
        if not value:
            raise UsageError(f'git config {key} is unset: the export signs '
                             'the patches as you; set it with git config '
                             f'--global {key} "..."')
        values.append(value)
    return Identity(*values)


def git(repo: Path, *args: str, env: Optional[Dict[str, str]] = None,
        what: str = '') -> str:
    proc = subprocess.run(['git', '-C', str(repo), *args],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})
    if proc.returncode:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or \
            ['failed']
        raise HarnessError(f'{what or "git " + args[0]}: {lines[0]}')
    return proc.stdout


# The base commit is a scratch commit of the pristine tree, never exported.
BASE_IDENTITY = Identity('pristine tree', 'pristine@localhost')


def git_base_dir(settings: Settings) -> Path:
    """<tree>/git/src, so that git/build sits as build/ sits beside src/:
    the same relative paths, so ccache serves one build from the other."""
    return settings.tree_dir / 'git' / 'src'


def ensure_git_base(settings: Settings) -> Path:
    """A git repository whose 'pristine' branch is the tarball."""
    ensure_pristine(settings)
    repo = git_base_dir(settings)
    identity = tarball_identity(settings.tarball)
    stamp = repo / '.git' / BASE_STAMP
    if stamp.is_file() and stamp.read_text() == identity:
        return repo
    log(f'making {repo}, a git repository of the pristine tree')
    staging = repo.with_name('src.new')
    remove_tree(staging)
    staging.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(settings.pristine, staging, symlinks=True)
        (staging / '.tcpopt-pristine').unlink(missing_ok=True)
        git(staging, 'init', '-q', '-b', BASE_BRANCH)
        git(staging, 'add', '-A', '-f', '.')
        git(staging, 'commit', '-q', '--no-verify', '-m',
            f'{settings.package}: pristine', env=BASE_IDENTITY.git_env())
        (staging / '.git' / BASE_STAMP).write_text(identity)
    except BaseException:
        remove_tree(staging)
        raise
    replace_dir(staging, repo)
    return repo


def reset_to_base(repo: Path) -> None:
    """Back to the pristine commit, with nothing else in the tree."""
    (repo / '.git' / APPLIED).unlink(missing_ok=True)
    if (repo / '.git' / 'rebase-apply').exists():     # a git am cut short
        git(repo, 'am', '--abort', what='git am --abort')
    git(repo, 'checkout', '-q', '-f', '--detach', BASE_BRANCH)
    git(repo, 'clean', '-q', '-f', '-d', '-x')


@dataclass(frozen=True)
class MailSet:
    """Patches posted together: one subject prefix, one folder."""
    folder: str                 # under the export dir; '' for the dir itself
    prefix: str                 # git format-patch --subject-prefix
    patches: List[Path]
    cover: Optional[Path]       # the stored cover letter's text, if any
    cover_letter: bool          # git format-patch --cover-letter


def mail_sets(settings: Settings) -> List[MailSet]:
    """What the export posts. A series with two layers: its fixes alone
    to net, then the rest of its upstream layer to net-next; never the
    harness layer. A series of one layer: all of it to net-next."""
    cover, patches = stored_patches(settings)
    if not settings.layered:
        return [MailSet('', SUBJECT_PREFIX, patches, cover, True)]
    upstream = [p for p in patches if p.parent.name == UPSTREAM_LAYER]
    fixes = set(fix_patches(settings.patch_dir))
    net = [p for p in upstream if p in fixes]
    if upstream[:len(net)] != net:
        raise HarnessError(f'kernel-patches/{settings.tree}/series: a "# fix" '
                           'patch of upstream/ follows a net-next one; the '
                           'fixes go first')
    net_cover = cover.with_name(NET_COVER) if cover else None
    net_cover = net_cover if net_cover and net_cover.is_file() else None
    sets = [MailSet('net', 'PATCH net', net, net_cover, len(net) > 1)] \
        if net else []
    return sets + [MailSet('net-next', SUBJECT_PREFIX, upstream[len(net):],
                           cover, True)]


def commit_patches(settings: Settings, repo: Path, patches: List[Path],
                   who: Identity, trailers: Sequence[str] = ()) -> None:
    """Apply each stored patch and commit it as @who, signed off, with
    the user's @trailers ('Cc: ...')."""
    extra = [f'--trailer={trailer}' for trailer in trailers]
    for path in patches:
        patch = parse_patch(path)
        git(repo, 'apply', '--index', str(path),
            what=f'{display(path)} does not apply to {settings.package}')
        message = f'{patch.subject}\n\n{patch.message}'
        git(repo, 'commit', '-q', '-s', '--no-verify', *extra, '-m', message,
            env=who.git_env(), what=f'committing {display(path)}')


def fill_cover(cover: Path, stored: Optional[Path]) -> None:
    """Put the stored cover letter's subject and text into git's template."""
    if stored is None:
        return
    match = re.match(r'Subject: \[PATCH[^\]]*\] (.+?)\n\n(.*)\Z',
                     stored.read_text(), re.S)
    if not match:
        raise HarnessError(f'{display(stored)}: want "Subject: [PATCH 0/N] '
                           '...", a blank line and the text')
    text = cover.read_text()
    text = text.replace('*** SUBJECT HERE ***', match.group(1).strip())
    text = text.replace('*** BLURB HERE ***', match.group(2).rstrip())
    cover.write_text(text)


def format_mail_set(repo: Path, mail_set: MailSet, since: str,
                    out: Path, who: Identity) -> None:
    """git format-patch of since..HEAD into @out."""
    args = ['format-patch', '-q', f'--subject-prefix={mail_set.prefix}',
            '-o', str(out)]
    if mail_set.cover_letter:
        args.append('--cover-letter')
    git(repo, *args, f'{since}..HEAD', env=who.git_env())
    if mail_set.cover_letter:
        fill_cover(sorted(out.glob('*.patch'))[0], mail_set.cover)


def mails(dest: Path) -> List[Path]:
    """An export's patches in the order git am takes them: net's, then
    net-next's; no cover letter."""
    files = sorted(dest.glob('*.patch')) + \
        sorted(dest.glob('net/*.patch')) + sorted(dest.glob('net-next/*.patch'))
    return [f for f in files if not f.name.startswith('0000-')]


def export(settings: Settings, dest: Path, who: Identity,
           trailers: Sequence[str] = ()) -> List[Path]:
    """git format-patch of each mail set, signed by @who, into @dest:
    every file written, cover letters included."""
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f'{dest} exists and is not empty: name a new '
                         'directory')
    sets = mail_sets(settings)
    repo = ensure_git_base(settings)
    reset_to_base(repo)
    staging = dest.with_name(dest.name + '.new')
    remove_tree(staging)
    try:
        since = BASE_BRANCH
        for mail_set in sets:
            commit_patches(settings, repo, mail_set.patches, who, trailers)
            format_mail_set(repo, mail_set, since, staging / mail_set.folder,
                            who)
            since = git(repo, 'rev-parse', 'HEAD').strip()
    except BaseException:
        remove_tree(staging)
        raise
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.rmdir()
    staging.rename(dest)
    return sorted(dest.rglob('*.patch'))


def get_maintainer(repo: Path, patches: List[Path]) -> List[str]:
    """scripts/get_maintainer.pl --nogit over the patches: the recipients."""
    proc = subprocess.run(['perl', 'scripts/get_maintainer.pl', '--nogit',
                           '--nogit-fallback', *map(str, patches)],
                          cwd=repo, capture_output=True, text=True,
                          check=False)
    if proc.returncode:
        raise HarnessError('get_maintainer.pl failed: ' +
                           (proc.stderr.strip().splitlines() or ['?'])[0])
    return [line for line in proc.stdout.splitlines() if line.strip()]

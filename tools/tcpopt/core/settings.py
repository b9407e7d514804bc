"""Where things live: the repository, the kernel trees and the work dir."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple, Union

from tcpopt.core.errors import SetupError, UsageError
from tcpopt.layout.options import ACCECN0, AO, KINDS, MPTCP, Kind
from tcpopt.tree.sanitize import KCONFIG as SANITIZER_KCONFIG

REPO = Path(__file__).resolve().parents[3]

# The Debian package that ships each supported tree, and its tarball.
TREES = {
    '6.1': 'linux-source-6.1',
    '6.12': 'linux-source-6.12',
    '7.3': 'linux-source-7.3',
}
# Trees Debian 12's apt does not have: fetched from trixie-backports under
# a private apt configuration in <work dir>/apt/ (backports.py).
BACKPORTED = {'7.3': 'linux-source-7.3'}
# Options only a tree has, added to .kunitconfig for that tree.
TREE_KCONFIG = {
    '6.1': [],
    # TCP-AO arrived in 6.7; on 6.12 the live suite's hmac(sha1) comes from
    # the crypto API (7.3's TCP-AO uses the SHA-1 library)
    '6.12': ['CONFIG_TCP_AO=y', 'CONFIG_CRYPTO_HMAC=y', 'CONFIG_CRYPTO_SHA1=y'],
    '7.3': ['CONFIG_TCP_AO=y'],
}
DEFAULT_TREE = '6.1'
# The trees ./run.sh test covers when no --tree is given, and those it
# runs the build-heavy steps on (pipeline.tree_steps).
TEST_TREES = ('6.1', '6.12', '7.3')
# Trees the test command, with no --tree, checks without a build: its
# series against kunit/ and its export (checkpatch). Their KUnit build is
# a third cold build CI cannot afford; ./run.sh test --tree 6.12 runs it.
BUILD_FREE_IN_CI = ('6.12',)
# The steps that need no kernel build.
BUILD_FREE_STEPS = ('series', 'export')
# KUnit's debugfs run file, 'kunit: add ability to run tests after boot
# using debugfs'.
KUNIT_RUN_SINCE = (6, 7)
# The generated mutants the test command's mutate step runs (./run.sh
# test --all-steps, ./run.sh mutate --sample): a fixed sample, every one
# killed or declared equivalent; as many as 7.3 has functions with
# mutants, so that the sample draws one from each target.
MUTATION_SAMPLE = 32
MUTATION_SEED = 20261205
# The upstream layer's own test symbol: built beside the harness's suites
# where the tree has the layer (the main, mutants and debug builds), not
# in the bench's stub trees or a bisected revision, which carry the
# harness alone.
UPSTREAM_KCONFIG = {
    '6.1': ['CONFIG_TCP_OUTPUT_KUNIT_TEST=y'],
    '6.12': ['CONFIG_TCP_OUTPUT_KUNIT_TEST=y'],
    '7.3': ['CONFIG_TCP_OUTPUT_KUNIT_TEST=y'],
}

# The build-heavy steps of the test command, per tree. A cold CI must
# stay under 60 minutes and a warm one under 15, and this machine compiles
# 70 to 190 objects a minute (docs/performance.md): a cold KUnit build
# takes 6 to 17 minutes, plain kunit.py on the upstream layer alone (its
# own, smaller .kunitconfig, so few objects come from ccache) up to 14, a
# regression mutant 40 s. So CI runs, beside each tree's KUnit suites and
# checks, git am of the upstream layer + plain kunit.py on 7.3 (the series
# netdev would take) and, on 6.1, the two regressions that started it all;
# the rest runs by hand: ./run.sh test --tree T --all-steps, or ./run.sh
# mutants --tree T (README).
HEAVY_STEPS = {
    '6.1': ('mutants-2008',),
    '6.12': (),
    '7.3': ('plain', 'selftest'),
}
# The 2.6.27 option writer's two regressions (33ad798c924b): MSS behind
# SACK_PERM/TS in SYNs, and SACK_PERM left out of the size.
REGRESSIONS_2008 = ('01-2.6.27-mss-after-ts.patch',
                    '02-2.6.27-sackperm-not-counted.patch')

# The Kconfig symbol the series adds; off in production builds.
TEST_KCONFIG = 'TCP_OPTIONS_KUNIT_TEST'
# Every test symbol of the series: the writer suite (TEST_KCONFIG), the
# parser suite (a module when =m), the live suite and the benchmark.
TEST_SYMBOLS = (TEST_KCONFIG, 'TCP_PARSE_OPTIONS_KUNIT_TEST',
                'TCP_OPTIONS_LIVE_KUNIT_TEST', 'TCP_OPTIONS_KUNIT_BENCH')
# Where the shared test sources go inside the kernel tree.
OVERLAY_DIR = 'net/ipv4'
# A tree whose series has the two layers keeps them in these folders of
# kernel-patches/<tree>/: the upstream series (exported, one fix for net
# and the refactor plus its tests for net-next) and the harness-only
# patches on top of it (never exported).
UPSTREAM_LAYER = 'upstream'
HARNESS_LAYER = 'harness'
# The upstream tests: kunit/tests/ holds them, the series adds them here,
# with the .kunitconfig plain kunit.py takes.
UPSTREAM_TESTS = 'tests'
UPSTREAM_TEST_DIR = f'{OVERLAY_DIR}/{UPSTREAM_TESTS}'
# The TCP-AO selftests (6.7 and later): kunit/selftests/tcp_ao/ holds the
# one the net series adds there.
SELFTEST_DIR = 'tools/testing/selftests/net/tcp_ao'
KUNIT_SELFTESTS = 'selftests/tcp_ao'

# Built into ./run.sh bench's kernels only (Settings.bench): it boots
# tcp_opt_bench for the hot path and the sweep scale.
BENCH_KCONFIG = 'CONFIG_TCP_OPTIONS_KUNIT_BENCH=y'
# What x86_64's defaults build and nothing of ours uses under QEMU (ACPI
# tables, thermal zones, HID, idle states, ethtool's netlink API): off in
# every build the harness makes, about a fifth fewer objects to compile
# (docs/performance.md, "Cold builds"). Not in .kunitconfig, which holds
# what the suites need and is checked against the series' own; plain
# kunit.py gets them as --kconfig_add (plain.plain_kconfig_add).
TRIM_KCONFIG = ['CONFIG_ACPI=n', 'CONFIG_HID=n', 'CONFIG_THERMAL=n',
                'CONFIG_ETHTOOL_NETLINK=n', 'CONFIG_CPU_IDLE=n']
# The hot-path benchmark suite (kunit/tcp_options_bench.c): marked slow,
# built into every kernel (tcp_options_test.c includes it), booted only by
# ./run.sh bench.
BENCH_SUITE = 'tcp_opt_bench'
BENCH_SOURCE = 'tcp_options_bench.c'
# The suites a default run boots. kunit.py takes one glob, and the
# kernel's glob_match() has no 'except': a class skips tcp_opt_b*, so
# tcp_opt_bench stays out. The 6.1 kernel has no kunit.filter attributes
# ('speed>slow', 6.6 on), so the glob does this job on both trees.
DEFAULT_SUITES = 'tcp_opt_[!b]*'


def version_key(version: str) -> Tuple[int, int]:
    """'6.12.57' -> (6, 12); ValueError when it is not a version."""
    major, minor = version.split('.')[:2]
    return int(major), int(minor)


def series_tree_for(version: str, directory: Path) -> str:
    """The supported tree whose series Linux @version takes: the newest
    one not newer than it (net-next beyond the newest takes the newest)."""
    try:
        key = version_key(version)
    except ValueError:
        raise UsageError(f'--source {directory}: no kernel version in its '
                         'Makefile: give the top of a Linux source tree')
    older = [tree for tree in TREES if version_key(tree) <= key]
    if not older:
        oldest = min(TREES, key=version_key)
        raise UsageError(f'--source {directory} holds Linux {version}: the '
                         f'series serves {oldest} and later')
    return max(older, key=version_key)


def backport_root(work_dir: Path) -> Path:
    """Where the backported packages are unpacked (usr/src/...)."""
    return work_dir / 'apt' / 'root'


# Seconds the kernel may run in QEMU, unless --timeout or
# TCPOPT_KUNIT_TIMEOUT says otherwise.
DEFAULT_KUNIT_TIMEOUT = 300
# kunit.py logs every run to this file of its build dir.
KUNIT_LOG = 'test.log'


def kunit_log(build_dir: Path) -> Path:
    """Where kunit.py leaves the console log of a build dir's last run."""
    return build_dir / KUNIT_LOG


def default_work_dir() -> Path:
    """$TCPOPT_WORK_DIR, else a cache dir outside the checkout."""
    if os.environ.get('TCPOPT_WORK_DIR'):
        return Path(os.environ['TCPOPT_WORK_DIR']).expanduser().resolve()
    cache = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
    return Path(cache).expanduser().resolve() / 'tcpopt-kunit'


def jobs_from(text: str) -> Optional[int]:
    """TCPOPT_JOBS as make's -j; None (one per CPU) unless a positive
    whole number."""
    text = text.strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def kunit_timeout_from(text: str) -> int:
    """TCPOPT_KUNIT_TIMEOUT in seconds, DEFAULT_KUNIT_TIMEOUT when empty."""
    text = text.strip()
    if not text:
        return DEFAULT_KUNIT_TIMEOUT
    if not text.isdigit() or int(text) < 1:
        raise SetupError(f'TCPOPT_KUNIT_TIMEOUT={text!r}: give a whole '
                         'number of seconds, at least 1')
    return int(text)


def optional_path(text: Optional[str]) -> Optional[Path]:
    return Path(text) if text else None


def environment_fields(environ: Mapping[str, str]) -> dict:
    """The Settings fields the environment sets: read here, once, when
    the Settings are made; Settings.child_env() hands them on."""
    return {'jobs': jobs_from(environ.get('TCPOPT_JOBS', '')),
            'kunit_timeout': kunit_timeout_from(
                environ.get('TCPOPT_KUNIT_TIMEOUT', '')),
            'kunit_override': optional_path(environ.get('TCPOPT_KUNIT_DIR')),
            'tarball_override': optional_path(environ.get('TCPOPT_TARBALL')),
            'ccache_override': optional_path(environ.get('CCACHE_DIR'))}


@dataclass(frozen=True)
class Settings:
    """Every path one run touches, derived from the tree and the work dir."""

    tree: str
    work_dir: Path
    repo: Path = REPO
    sanitize: bool = False          # KASAN, UBSAN and KFENCE build
    # ./run.sh bench's kernels: with the benchmark suite built in. Left out
    # of every other build, so that the main build's .config is the
    # series' own .kunitconfig and the git am tree hits its ccache.
    bench: bool = False
    # --source: the user's own kernel tree, read only; tree then names the
    # series it takes (series_tree_for()).
    user_source: Optional[Path] = None
    # run --build_dir and --filter, as kunit.py spells them.
    build_override: Optional[Path] = None
    filter_glob: Optional[str] = None
    # The tree carries the harness layer but not the upstream one (a
    # bisected revision): the upstream test symbol is not asked for.
    harness_only: bool = False
    # Set once where the Settings are made (create(), from the
    # environment, then --jobs and --timeout): make's -j, None for one
    # per CPU; the kernel's seconds in QEMU; and, when given, kunit/'s
    # stand-in (the bench's throw-away copy of it), the tarball and the
    # ccache to use instead of the usual ones.
    jobs: Optional[int] = None
    kunit_timeout: int = DEFAULT_KUNIT_TIMEOUT
    kunit_override: Optional[Path] = None
    tarball_override: Optional[Path] = None
    ccache_override: Optional[Path] = None

    @classmethod
    def create(cls, tree: str = DEFAULT_TREE,
               work_dir: Path | None = None,
               sanitize: bool = False) -> 'Settings':
        if tree not in TREES:
            raise UsageError(f'unknown tree {tree!r}: choose one of '
                               f'{", ".join(sorted(TREES))}')
        work = Path(work_dir).expanduser().resolve() if work_dir \
            else default_work_dir()
        if work == REPO or REPO in work.parents:
            raise SetupError(f'work dir {work} is inside the checkout: '
                               'set TCPOPT_WORK_DIR to a directory outside it')
        return cls(tree=tree, work_dir=work, sanitize=sanitize,
                   **environment_fields(os.environ))

    @classmethod
    def for_source(cls, directory: Path, version: str,
                   sanitize: bool = False) -> 'Settings':
        """The user's tree at @directory, Linux @version, with the series
        of the nearest supported tree."""
        base = cls.create(series_tree_for(version, directory),
                          sanitize=sanitize)
        return dataclasses.replace(base, user_source=directory)

    @property
    def package(self) -> str:
        return TREES[self.tree]

    @property
    def config_package(self) -> str:
        """Debian's own kernel configs, for the zero-delta check."""
        return f'linux-config-{self.tree}'

    @property
    def kconfig_add(self) -> List[str]:
        """The tree's options, the trimmed defaults, and the benchmark and
        the sanitizers when asked."""
        upstream = [] if self.bench or self.harness_only else \
            UPSTREAM_KCONFIG.get(self.tree, [])
        return TRIM_KCONFIG + TREE_KCONFIG.get(self.tree, []) + upstream + \
            ([BENCH_KCONFIG] if self.bench else []) + \
            (SANITIZER_KCONFIG if self.sanitize else [])

    def enables(self, symbol: str) -> bool:
        """Whether the kunit build sets Kconfig @symbol (CONFIG_MPTCP) to
        y, through the tree's options or .kunitconfig."""
        line = f'{symbol}=y'
        return line in self.kconfig_add or \
            line in self.kunitconfig.read_text().split()

    def writes(self, kind: Kind) -> bool:
        """Whether the kunit build's writer sends option @kind: the tree
        is of its release or later and the build enables its symbol."""
        if kind.since and self.version < kind.since:
            return False
        return not kind.kconfig or self.enables(kind.kconfig)

    @property
    def kinds(self) -> Tuple[Kind, ...]:
        """The option kinds the kunit build writes, so their groups of
        the sweep run (sweep.compare)."""
        return tuple(kind for kind in KINDS if self.writes(kind))

    @property
    def has_tcp_ao(self) -> bool:
        """Whether the kunit build enables TCP-AO, so the AO groups run."""
        return self.writes(AO)

    @property
    def has_mptcp(self) -> bool:
        """Whether the kunit build enables MPTCP, so the MPTCP groups run."""
        return self.writes(MPTCP)

    @property
    def has_accecn(self) -> bool:
        """Whether the tree writes the AccECN option (6.18 and later), so
        the AccECN groups run."""
        return self.writes(ACCECN0)

    @property
    def version(self) -> Tuple[int, int]:
        """The tree's release, (6, 12) for '6.12'."""
        return version_key(self.tree)

    @property
    def upstream_suites(self) -> Union[bool, Tuple[int, int]]:
        """Which upstream suites a run counts (expected.Upstream): those
        of this tree's release, or none (False) without the upstream
        layer."""
        return self.version if self.layered else False

    @property
    def has_ao_selftests(self) -> bool:
        """Whether the tree ships the TCP-AO selftests (6.7 and later),
        which the net series extends on a tree of two layers."""
        return self.layered and self.version >= AO.since

    @property
    def has_kunit_debugfs_run(self) -> bool:
        """Whether KUnit can run a suite again after boot, from debugfs
        (6.7 and later): what --twice needs."""
        return tuple(map(int, self.tree.split('.'))) >= KUNIT_RUN_SINCE

    @property
    def tarball(self) -> Path:
        return self.tarball_override or \
            self.usr_src / f'{self.package}.tar.xz'

    @property
    def usr_src(self) -> Path:
        """/usr/src, or the backported packages' unpacked copy of it."""
        if self.tree in BACKPORTED:
            return backport_root(self.work_dir) / 'usr' / 'src'
        return Path('/usr/src')

    @property
    def apt_packages(self) -> List[str]:
        """What apt-get installs for this tree; none for a backport or the
        user's own tree."""
        if self.user_source:
            return []
        if self.tree in BACKPORTED:
            return ['debian-archive-keyring']
        return [self.package, self.config_package]

    @property
    def tree_dir(self) -> Path:
        if self.user_source:
            # One per source directory, so that its build stays warm.
            digest = hashlib.sha1(str(self.user_source).encode())
            return self.work_dir / 'source' / \
                f'{self.user_source.name}-{digest.hexdigest()[:8]}'
        return self.work_dir / self.tree

    @property
    def pristine(self) -> Path:
        """The extracted tarball, or the mirror of the user's tree; never
        modified."""
        return self.tree_dir / ('mirror' if self.user_source else 'pristine')

    @property
    def label(self) -> str:
        """What the run is on, for headings."""
        if self.user_source:
            return f'{self.user_source} (series of {self.tree})'
        return self.package

    @property
    def source(self) -> Path:
        """The pristine tree plus the series and the kunit/ overlay."""
        return self.tree_dir / 'src'

    @property
    def build_dir(self) -> Path:
        """The sanitizer build has its own: its .config differs."""
        if self.build_override:
            return self.build_override
        if self.sanitize:
            return self.tree_dir / 'build-sanitize'
        return self.tree_dir / ('build-bench' if self.bench else 'build')

    @property
    def bloat_dir(self) -> Path:
        return self.tree_dir / 'bloat'

    @property
    def lock_file(self) -> Path:
        return self.tree_dir / '.lock'

    @property
    def ccache_dir(self) -> Path:
        return self.ccache_override or self.work_dir / 'ccache'

    @property
    def patch_dir(self) -> Path:
        return self.repo / 'kernel-patches' / self.tree

    @property
    def layered(self) -> bool:
        """The series has an upstream layer and a harness one."""
        return (self.patch_dir / UPSTREAM_LAYER).is_dir()

    @property
    def kunit_dir(self) -> Path:
        """kunit/, or TCPOPT_KUNIT_DIR: the bench's throw-away copy of it,
        which it edits instead of the checkout."""
        return self.kunit_override or self.repo / 'kunit'

    @property
    def kunitconfig(self) -> Path:
        return self.repo / '.kunitconfig'

    @property
    def test_log(self) -> Path:
        """kunit.py's log of the last run in build_dir."""
        return kunit_log(self.build_dir)

    def child_env(self, **extra: str) -> Dict[str, str]:
        """The environment of a process that runs the harness again (git
        bisect run tools/bisect-layout, the bench's ./run.sh): this one's,
        with the variables that make these Settings there, and @extra."""
        env = dict(os.environ)
        for name, value in self.environment_variables().items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        env.update(extra)
        return env

    def environment_variables(self) -> Dict[str, Optional[str]]:
        """What environment_fields() reads back as these Settings; None
        for a variable that must be unset."""
        given = {'TCPOPT_WORK_DIR': self.work_dir,
                 'TCPOPT_JOBS': self.jobs,
                 'TCPOPT_KUNIT_TIMEOUT': self.kunit_timeout,
                 'TCPOPT_KUNIT_DIR': self.kunit_override,
                 'TCPOPT_TARBALL': self.tarball_override,
                 'CCACHE_DIR': self.ccache_override}
        return {name: None if value is None else str(value)
                for name, value in given.items()}

"""The Kconfig matrix: each test symbol without each of its dependencies.

Starting from the KUnit step's .config with every test symbol on, one
dependency at a time is turned off and `make olddefconfig` run. For each
test symbol the result must be one of:

- dropped: olddefconfig turned the symbol off, its `depends on` said so;
- kept: the symbol stays, and `make net/ipv4/ net/ipv6/` builds without a
  warning (the cases that need the missing option skip at run time).

Object builds only, in <work>/<tree>/kconfig/, one build directory for the
whole matrix so that ccache serves what a row does not change.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import TEST_SYMBOLS, TREE_KCONFIG, Settings
from tcpopt.tree.kernel import make, set_kconfig


@dataclass
class Row:
    setting: str        # what the row changed: 'NETFILTER=n', ...
    symbol: str
    kept: bool
    problem: str = ''
    note: str = ''       # what 'kept' means, when not the default

    @property
    def ok(self) -> bool:
        return not self.problem

    def line(self, tree: str) -> str:
        what = self.note or 'kept, net/ipv4/ and net/ipv6/ build' if self.kept \
            else 'dropped by olddefconfig'
        verdict = 'PASS' if self.ok else 'FAIL'
        return (f'{verdict} {tree} {self.setting} {self.symbol}: '
                f'{self.problem or what}')


def dependencies(settings: Settings) -> List[str]:
    """What the suites use: the .kunitconfig's options and the tree's.
    The crypto options only give the live suite's TCP-AO cases their MAC
    at run time (they skip without it): they build nothing of ours.
    """
    deps = ['NETFILTER', 'NET_NS', 'TCP_MD5SIG', 'SYN_COOKIES', 'IPV6']
    extra = [line.split('=')[0][len('CONFIG_'):]
             for line in TREE_KCONFIG.get(settings.tree, [])]
    return deps + [name for name in extra if not name.startswith('CRYPTO_')]


def enabled(config: Path) -> set:
    return {line.split('=')[0][len('CONFIG_'):]
            for line in config.read_text().splitlines()
            if line.startswith('CONFIG_') and line.endswith(('=y', '=m'))}


# Which symbol's sources a warning or error names; any other file is
# blamed on every symbol the row kept.
OWNERS = (('tcp_parse_options_test.c', 'TCP_PARSE_OPTIONS_KUNIT_TEST'),
          ('tcp_live_test.c', 'TCP_OPTIONS_LIVE_KUNIT_TEST'),
          ('tcp_options_bench.c', 'TCP_OPTIONS_KUNIT_BENCH'),
          ('tcp_options_test', 'TCP_OPTIONS_KUNIT_TEST'))


def build(settings: Settings, out: Path, ipv6: bool) -> str:
    """'' when net/ipv4/ (and net/ipv6/) build warning-free."""
    targets = ['net/ipv4/'] + (['net/ipv6/'] if ipv6 else [])
    result = make(settings, settings.source, out, *targets)
    if result.returncode:
        errors = [line for line in result.stderr.splitlines()
                  if 'error:' in line]
        return 'build failed: ' + (errors[0] if errors else
                                   result.stderr.strip()[-300:])
    warnings = [line for line in result.stderr.splitlines()
                if 'warning:' in line]
    return f'build warning: {warnings[0]}' if warnings else ''


def blamed(problem: str, kept: List[str]) -> List[str]:
    """The kept symbols a build problem belongs to."""
    for fragment, symbol in OWNERS:
        if fragment in problem:
            return [symbol] if symbol in kept else kept
    return kept


def row_config(settings: Settings, out: Path, base: bytes,
               dependency: str) -> set:
    """The test symbols olddefconfig keeps with @dependency off."""
    config = out / '.config'
    config.write_bytes(base)
    for symbol in TEST_SYMBOLS:
        set_kconfig(settings.source, config, symbol, True)
    set_kconfig(settings.source, config, dependency, False)
    result = make(settings, settings.source, out, 'olddefconfig')
    if result.returncode:
        raise HarnessError(f'make olddefconfig failed in {out}: '
                           f'{result.stderr.strip()[-300:]}')
    have = enabled(config)
    if dependency in have:
        raise HarnessError(f'{dependency} is still on after olddefconfig in '
                           f'{out}: something selects it')
    return have


def check(settings: Settings) -> List[Row]:
    base_config = settings.build_dir / '.config'
    if not base_config.is_file():
        raise HarnessError(f'{base_config} is missing: run the KUnit step '
                           'first')
    base = base_config.read_bytes()
    out = settings.tree_dir / 'kconfig'
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for dependency in dependencies(settings):
        have = row_config(settings, out, base, dependency)
        kept = [s for s in TEST_SYMBOLS if s in have]
        problem = build(settings, out, 'IPV6' in have) if kept else ''
        guilty = blamed(problem, kept) if problem else []
        rows += [Row(f'{dependency}=n', symbol, symbol in kept,
                     problem if symbol in guilty else '')
                 for symbol in TEST_SYMBOLS]
    rows.append(module_row(settings, out, base))
    return rows


PARSER = 'TCP_PARSE_OPTIONS_KUNIT_TEST'


def module_row(settings: Settings, out: Path, base: bytes) -> Row:
    """The parser suite, which needs nothing static, as a module."""
    config = out / '.config'
    config.write_bytes(base)
    set_kconfig(settings.source, config, 'MODULES', True)
    subprocess.run([str(settings.source / 'scripts/config'), '--file',
                    str(config), '--module', PARSER], check=True)
    result = make(settings, settings.source, out, 'olddefconfig')
    if result.returncode:
        raise HarnessError(f'make olddefconfig failed in {out}: '
                           f'{result.stderr.strip()[-300:]}')
    if f'CONFIG_{PARSER}=m' not in config.read_text().splitlines():
        return Row('MODULES=y', f'{PARSER}=m', False,
                   'olddefconfig did not keep it a module')
    problem = build(settings, out, ipv6=False)
    if not problem and not (out / 'net/ipv4/tcp_parse_options_test.mod')\
            .is_file():
        problem = 'no tcp_parse_options_test.mod: not built as a module'
    return Row('MODULES=y', f'{PARSER}=m', True, problem,
               note='net/ipv4/ builds it as a module object (.mod)')

"""Which TCP-AO selftests a tree ships, and the Kconfig they ask for.

Both come from the tree itself: the tests from TEST_BOTH_AF in
tools/testing/selftests/net/tcp_ao/Makefile (each built as _ipv4 and
_ipv6), the options from that folder's config fragment."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Sequence

from tcpopt.core.errors import UsageError
from tcpopt.core.settings import SELFTEST_DIR

# The selftest the net series adds.
SYNCOOKIES = 'syncookies'
# What the test command leaves to a run by hand, and why: measured on
# 7.3's debug kernel under TCG (docs/selftests.md).
SLOW = {
    'bench-lookups': 'a benchmark: its IPv6 run overran the 120 s timeout '
                     'under TCG with KASAN',
    'connect-deny': 'each denied connect waits out a timeout: 8 of 22 '
                    'results in the 120 s timeout under TCG with KASAN',
}
# The folder's own per-test timeout (its 'settings' file), when it has none.
DEFAULT_TIMEOUT = 45
# What a kernel built from kunit.py's defaults also needs for the
# selftests: network devices for veth, IPv4 policy routing for VRF, and
# the crypto API's MACs where TCP-AO takes them from it (6.12; 7.3's
# uses the library functions).
BASE_KCONFIG = ['CONFIG_NETDEVICES=y', 'CONFIG_NET_CORE=y',
                'CONFIG_IP_ADVANCED_ROUTER=y', 'CONFIG_IP_MULTIPLE_TABLES=y']
CRYPTO_API_KCONFIG = ['CONFIG_CRYPTO_HMAC=y', 'CONFIG_CRYPTO_CMAC=y',
                      'CONFIG_CRYPTO_AES=y', 'CONFIG_CRYPTO_SHA1=y',
                      # key-management's random keys: sha224/256,
                      # sha384/512, sha3-512
                      'CONFIG_CRYPTO_SHA256=y', 'CONFIG_CRYPTO_SHA512=y',
                      'CONFIG_CRYPTO_SHA3=y']
# Symbols the config fragment names that only a selection can set.
SELECTED_ONLY = {'CONFIG_TRACEPOINTS'}


def folder(src: Path) -> Path:
    return src / SELFTEST_DIR


def tests(src: Path) -> List[str]:
    """TEST_BOTH_AF of the tree's Makefile, in its order."""
    makefile = folder(src) / 'Makefile'
    if not makefile.is_file():
        raise UsageError(f'{src} has no {SELFTEST_DIR}/Makefile: TCP-AO and '
                         'its selftests arrived in Linux 6.7')
    names: List[str] = []
    for match in re.finditer(r'^TEST_BOTH_AF\s*:?\+?=\s*(.*)$',
                             makefile.read_text(), re.M):
        names += match.group(1).split()
    return names


def for_ci(src: Path) -> List[str]:
    """Every test the tree ships but the SLOW ones."""
    return [name for name in tests(src) if name not in SLOW]


def binaries(names: Sequence[str]) -> List[str]:
    return [f'{name}_{family}' for name in names for family in ('ipv4',
                                                                'ipv6')]


def choose(src: Path, wanted: Sequence[str],
           added: Sequence[str] = ()) -> List[str]:
    """@wanted (every test when empty), each checked against the tree and
    the tests a patch not yet applied will add (@added)."""
    shipped = tests(src) + [name for name in added if name not in tests(src)]
    unknown = [name for name in wanted if name not in shipped]
    if unknown:
        raise UsageError(f'selftest: no TCP-AO selftest {unknown[0]!r} in '
                         f'{SELFTEST_DIR} (it has: {", ".join(shipped)})')
    return list(wanted) or shipped


def timeout(src: Path) -> int:
    """Seconds per test: the folder's settings file, as kselftest reads it."""
    settings = folder(src) / 'settings'
    text = settings.read_text() if settings.is_file() else ''
    match = re.search(r'^timeout=(\d+)$', text, re.M)
    return int(match.group(1)) if match else DEFAULT_TIMEOUT


def uses_crypto_api(src: Path) -> bool:
    """Whether TCP-AO takes its MACs from the crypto API (tcp_sigpool),
    as before 7.0, rather than from the library functions."""
    tcp_ao = src / 'net/ipv4/tcp_ao.c'
    return tcp_ao.is_file() and 'tcp_sigpool' in tcp_ao.read_text()


def kconfig(src: Path) -> List[str]:
    """The fragment's options as kunit.py --kconfig_add takes them: built
    in (the initramfs loads no modules), those only a selection sets left
    out."""
    fragment = folder(src) / 'config'
    options = []
    for line in fragment.read_text().splitlines():
        match = re.match(r'^(CONFIG_\w+)=([ym])$', line.strip())
        if match and match.group(1) not in SELECTED_ONLY:
            options.append(f'{match.group(1)}=y')
    extra = BASE_KCONFIG + (CRYPTO_API_KCONFIG if uses_crypto_api(src)
                           else [])
    return extra + [option for option in options if option not in extra]

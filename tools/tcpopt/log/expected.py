"""The case names the KUnit source declares, so that missing ones show.

A kernel that crashes or hangs half-way prints a valid but short KTAP log;
comparing against the source's own tables catches the cases never run.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

from tcpopt.core.settings import BENCH_SOURCE, UPSTREAM_TESTS
from tcpopt.series.upstream_tests import source_for_tree

# Which upstream suites count: none (False), mainline's (True), or those
# the tree of a (major, minor) release gets (kunit/tests/ with its
# feature guards resolved).
Upstream = Union[bool, Tuple[int, int]]
MAINLINE = (99, 0)


def read_source(path: Path, upstream: Upstream = True) -> str:
    """A kunit/ source as the tree counts it."""
    if path.parent.name != UPSTREAM_TESTS:
        return path.read_text()
    return source_for_tree(path, MAINLINE if upstream is True else upstream)

ARRAY_PARAM = re.compile(r'KUNIT_ARRAY_PARAM(?:_DESC)?\(\s*(\w+)\s*,\s*(\w+)\s*,')
ARRAY = re.compile(r'static const struct \w+ (\w+)\[\] = \{(.*?)\n\};', re.S)
CASE_ARRAY = re.compile(r'static struct kunit_case (\w+)\[\] = \{(.*?)\n\};',
                        re.S)
# Rows name themselves with '.name = "x"' or, in one-line rows, '{ "x", '.
NAME = re.compile(r'^\t(?:\t\.name = |\{ )"([^"]+)"', re.M)
CASE = re.compile(r'KUNIT_CASE(?:_SLOW)?\(\s*(\w+)\s*\)')
CASE_PARAM = re.compile(r'KUNIT_CASE_PARAM\(\s*\w+\s*,\s*(\w+)\s*\)')
CASE_PARAM_FUNCTION = re.compile(r'KUNIT_CASE_PARAM\(\s*(\w+)\s*,')


def case_names(source: str) -> List[str]:
    """Leaf case names in run order: table rows and plain cases."""
    generators: Dict[str, str] = {
        f'{m.group(1)}_gen_params': m.group(2)
        for m in ARRAY_PARAM.finditer(source)}
    tables = {m.group(1): NAME.findall(m.group(2))
              for m in ARRAY.finditer(source)}
    names: List[str] = []
    for case_array in CASE_ARRAY.finditer(source):
        body = case_array.group(2)
        for entry in re.finditer(r'KUNIT_CASE\w*\([^)]*\)', body):
            param = CASE_PARAM.match(entry.group(0))
            plain = CASE.match(entry.group(0))
            if param:
                names.extend(tables.get(generators.get(param.group(1), ''),
                                        []))
            elif plain:
                names.append(plain.group(1))
    return names


def sources(kunit_dir: Path, upstream: Upstream = True) -> List[Path]:
    """kunit/'s suites, the benchmark's aside: the harness's, then, with
    @upstream, the upstream series' own (kunit/tests/, which only a tree
    with the two layers carries)."""
    paths = [p for p in sorted(kunit_dir.glob('*.c'))
             if p.name != BENCH_SOURCE]
    if upstream:
        paths += sorted((kunit_dir / UPSTREAM_TESTS).glob('*.c'))
    return paths


def expected_cases(kunit_dir: Path, upstream: Upstream = False) -> List[str]:
    """Every case a default run reports: not the benchmark's, which only
    ./run.sh bench builds and boots; the upstream suites' with
    @upstream."""
    names: List[str] = []
    for path in sources(kunit_dir, upstream):
        names.extend(case_names(read_source(path, upstream)))
    return names


def upstream_cases(kunit_dir: Path, upstream: Upstream = True) -> List[str]:
    """The cases of the upstream suites alone: what plain kunit.py runs
    on the upstream layer."""
    names: List[str] = []
    for path in sorted((kunit_dir / UPSTREAM_TESTS).glob('*.c')):
        names.extend(case_names(read_source(path, upstream)))
    return names


SUITE = re.compile(r'struct kunit_suite \w+ = \{\s*\.name = "([^"]+)"')
# A macro that declares a suite named after its argument, and its uses.
SUITE_MACRO = re.compile(r'#define (\w+)\((\w+)\)[^\n]*\\\n'
                         r'\s*static struct kunit_suite[^\n]*\\\n'
                         r'\s*\.name = #\2,')


def suite_names(kunit_dir: Path, upstream: Upstream = True) -> List[str]:
    """The suites a default run can boot (the benchmark's aside); the
    upstream suites' only with @upstream."""
    return [name for path in sources(kunit_dir, upstream)
            for name in source_suites(read_source(path, upstream))]


def source_suites(source: str) -> List[str]:
    """The suites one source declares, plain or through a macro."""
    names = SUITE.findall(source)
    for macro in SUITE_MACRO.finditer(source):
        names += re.findall(rf'^{macro.group(1)}\((\w+)\);', source, re.M)
    return names


def test_names(kunit_dir: Path) -> List[str]:
    """What a filter's test part can match: the KUNIT_CASE functions
    (KUnit filters by them, not by parameter rows)."""
    names: List[str] = []
    for path in sources(kunit_dir):
        text = path.read_text()
        names += CASE.findall(text) + CASE_PARAM_FUNCTION.findall(text)
    return names


def filter_problem(glob: str, kunit_dir: Path) -> Optional[str]:
    """Why kunit.py's filter_glob (suite_glob[.test_glob]) can match no
    case of kunit/; None when it can."""
    suite_glob, _, test_glob = glob.partition('.')
    suites = suite_names(kunit_dir)
    if not any(fnmatch.fnmatchcase(s, suite_glob) for s in suites):
        return (f'--filter {glob!r} matches no suite (suites: '
                f'{", ".join(suites)}; tcp_opt_bench only in ./run.sh bench)')
    if test_glob and not any(fnmatch.fnmatchcase(t, test_glob)
                             for t in test_names(kunit_dir)):
        return (f'--filter {glob!r}: {test_glob!r} matches no KUNIT_CASE '
                'of those suites (a parameterized case filters by its '
                'function name, not by its rows)')
    return None

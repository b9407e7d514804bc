"""The case names the KUnit source declares, so that missing ones show.

A kernel that crashes or hangs half-way prints a valid but short KTAP log;
comparing against the source's own tables catches the cases never run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

from .settings import BENCH_SOURCE

ARRAY_PARAM = re.compile(r'KUNIT_ARRAY_PARAM\(\s*(\w+)\s*,\s*(\w+)\s*,')
ARRAY = re.compile(r'static const struct \w+ (\w+)\[\] = \{(.*?)\n\};', re.S)
CASE_ARRAY = re.compile(r'static struct kunit_case (\w+)\[\] = \{(.*?)\n\};',
                        re.S)
# Rows name themselves with '.name = "x"' or, in one-line rows, '{ "x", '.
NAME = re.compile(r'^\t(?:\t\.name = |\{ )"([^"]+)"', re.M)
CASE = re.compile(r'KUNIT_CASE(?:_SLOW)?\(\s*(\w+)\s*\)')
CASE_PARAM = re.compile(r'KUNIT_CASE_PARAM\(\s*\w+\s*,\s*(\w+)\s*\)')


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


def expected_cases(kunit_dir: Path) -> List[str]:
    """Every case a default run reports: not the benchmark's, which only
    ./run.sh bench builds and boots."""
    names: List[str] = []
    for path in sorted(kunit_dir.glob('*.c')):
        if path.name != BENCH_SOURCE:
            names.extend(case_names(path.read_text()))
    return names

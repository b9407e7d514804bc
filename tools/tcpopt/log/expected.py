"""The case names the KUnit source declares, so that missing ones show.

A kernel that crashes or hangs half-way prints a valid but short KTAP log;
comparing against the source's own tables catches the cases never run.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import (Dict, List, NamedTuple, Optional, Sequence, Tuple,
                    Union)

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


CASE = re.compile(r'KUNIT_CASE(?:_SLOW)?\(\s*(\w+)\s*\)')
CASE_PARAM_FUNCTION = re.compile(r'KUNIT_CASE_PARAM\(\s*(\w+)\s*,')


# --- a C scanner: enough of C to read the initializer tables --------------

# One token at a time, the first alternative that matches: comments and
# preprocessor lines (with their continuations) are skipped whole, so no
# brace or quote inside them counts; a string or char literal is one token.
TOKEN = re.compile('|'.join([
    r'(?P<comment>//[^\n]*|/\*.*?\*/)',
    r'(?P<directive>^[ \t]*#(?:\\\n|[^\n])*)',
    r'(?P<string>"(?:\\.|[^"\\\n])*")',
    r'(?P<char>\'(?:\\.|[^\'\\\n])*\')',
    r'(?P<word>\w+)',
    r'(?P<space>\n|[^\S\n]+)',
    r'(?P<punct>.)',
]), re.S | re.M)
SKIPPED = ('comment', 'directive', 'space')
OPENING, CLOSING = '{([', '})]'


class Token(NamedTuple):
    kind: str                        # 'string', 'char', 'word' or 'punct'
    text: str                        # a string's contents, without quotes


@dataclass
class Table:
    """A 'static [const] struct <struct> <name>[] = { ... };' array."""

    struct: str
    elements: List[List[Token]]      # its top-level elements, in order


def tokens(source: str) -> List[Token]:
    """The C tokens of @source; adjacent string literals are one, as the
    compiler joins them."""
    out: List[Token] = []
    for match in TOKEN.finditer(source):
        kind = match.lastgroup or 'punct'
        if kind in SKIPPED:
            continue
        text = match.group()[1:-1] if kind == 'string' else match.group()
        if kind == 'string' and out and out[-1].kind == 'string':
            out[-1] = Token('string', out[-1].text + text)
        else:
            out.append(Token(kind, text))
    return out


def _texts(items: Sequence[Token]) -> List[str]:
    """Token texts to compare with C spellings; a string literal is '"'."""
    return [token.text if token.kind != 'string' else '"'
            for token in items]


def _words(items: Sequence[Token]) -> bool:
    return all(token.kind == 'word' for token in items)


def _array_header(items: List[Token], at: int) -> Optional[Tuple[str, str,
                                                                 int]]:
    """(struct, name, index after the '{') of a 'static [const] struct
    <struct> <name>[] = {' at @at."""
    if _texts(items[at:at + 1]) != ['static']:
        return None
    start = at + 1 + (_texts(items[at + 1:at + 2]) == ['const'])
    head = items[start:start + 7]
    texts = _texts(head)
    if texts[:1] != ['struct'] or texts[3:] != ['[', ']', '=', '{'] or \
            not _words(head[1:3]):
        return None
    return texts[1], texts[2], start + 7


def _elements(items: List[Token], at: int) -> Tuple[List[List[Token]], int]:
    """The elements of an initializer list whose '{' ends before @at, split
    at its own commas, and the index after its '}'."""
    elements: List[List[Token]] = []
    current: List[Token] = []
    depth = 0
    for index in range(at, len(items)):
        token = items[index]
        if token.kind == 'punct' and token.text in CLOSING and not depth:
            return elements + ([current] if current else []), index + 1
        if token.kind == 'punct' and token.text == ',' and not depth:
            elements.append(current)
            current = []
            continue
        if token.kind == 'punct':
            depth += (token.text in OPENING) - (token.text in CLOSING)
        current.append(token)
    return elements + ([current] if current else []), len(items)


def tables(source: str) -> Dict[str, Table]:
    """Every struct array @source defines, by name; a later one of the
    same name wins."""
    return _tables(tokens(source))


def _tables(items: List[Token]) -> Dict[str, Table]:
    found: Dict[str, Table] = {}
    at = 0
    while at < len(items):
        header = _array_header(items, at)
        if header is None:
            at += 1
            continue
        struct, name, body = header
        elements, at = _elements(items, body)
        found[name] = Table(struct, elements)
    return found


def row_name(element: List[Token]) -> Optional[str]:
    """A row's name: its '.name = "..."' at the row's own depth, else its
    first string literal there ('{ "syn", ... }'); None for a row that is
    no '{ ... }' or has neither."""
    if _texts(element[:1]) != ['{'] or _texts(element[-1:]) != ['}']:
        return None
    first = None
    depth = 0
    inner = element[1:-1]
    for index, token in enumerate(inner):
        if token.kind == 'punct':
            depth += (token.text in OPENING) - (token.text in CLOSING)
        elif token.kind == 'string' and not depth:
            if _texts(inner[max(0, index - 3):index]) == ['.', 'name', '=']:
                return token.text
            first = first if first is not None else token.text
    return first


def _generators(items: List[Token]) -> Dict[str, str]:
    """'<name>_gen_params' -> its table, from KUNIT_ARRAY_PARAM(name,
    table, ...) and KUNIT_ARRAY_PARAM_DESC."""
    found = {}
    for at, token in enumerate(items):
        call = items[at:at + 6]
        if token.text in ('KUNIT_ARRAY_PARAM', 'KUNIT_ARRAY_PARAM_DESC') and \
                _words(call[:1]) and _texts(call[1::2]) == ['(', ',', ','] \
                and _words(call[2::2]):
            found[f'{call[2].text}_gen_params'] = call[4].text
    return found


def _case_entry(entry: List[Token], rows: Dict[str, List[str]],
                generators: Dict[str, str]) -> List[str]:
    """The names one KUNIT_CASE*() entry of a case array stands for."""
    texts = _texts(entry)
    if len(texts) == 6 and texts[0] == 'KUNIT_CASE_PARAM' and \
            texts[1::2] == ['(', ',', ')']:
        return rows.get(generators.get(texts[4], ''), [])
    if len(texts) == 4 and texts[0] in ('KUNIT_CASE', 'KUNIT_CASE_SLOW') and \
            texts[1::2] == ['(', ')']:
        return [texts[2]]
    return []


def case_names(source: str) -> List[str]:
    """Leaf case names in run order: table rows and plain cases."""
    items = tokens(source)
    found = _tables(items)
    generators = _generators(items)
    rows = {name: [row for row in map(row_name, table.elements) if row]
            for name, table in found.items()}
    return [name for table in found.values()
            if table.struct == 'kunit_case'
            for entry in table.elements
            for name in _case_entry(entry, rows, generators)]


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

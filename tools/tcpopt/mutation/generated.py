"""Generated mutants (./run.sh mutate): small code changes the suites kill.

Every small change of the code under test, and what the suites kill.

The regressions of kernel-patches/regressions/ are the bugs someone
thought of. This generates the ones nobody did, one change at one place
in the functions that compute and write the options (tcp_output.c) and
parse them (tcp_input.c):

  relational   <  <=  >  >=  ==  !=  each into its neighbour
  arithmetic   +  -  (binary), +=  -=, <<  >>
  logical      &&  ||
  bitwise      &  |  (binary), |=  &=
  constant     an integer literal +1 and -1
  twin         TCPOLEN_X and TCPOLEN_X_ALIGNED swapped
  delete       an expression statement or a bare return removed
  if-true      an if condition replaced by 1
  swap         two adjacent '*ptr++ = ...;' writes swapped

Each mutant is applied to the mutant scratch tree (regressions.py), built
incrementally, its object compared with the unmutated one (the same
bytes: 'same-code', never booted), booted with the unit suites and then,
if it survived them, the live suite (stages()), and reversed. Its verdict
is 'killed' (the cases that failed are kept), 'survived', 'same-code' or
'no-build'.
Results are kept per mutant in <work>/<tree>/mutate/results.json under a
fingerprint of the mutated files, each with one of the test sources it
was measured with, so an interrupted run resumes where it stopped, and
after a test change only the survivors and the kills whose cases are
gone run again (still_valid()). Mutants declared equivalent in tools/mutation/<tree>.equivalent
(one line each: the mutant's id, then why) leave the score's
denominator; one that a case kills anyway is flagged in the report.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import random
import re
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import Settings
from tcpopt.log.expected import (UPSTREAM_TESTS, case_names, expected_cases,
                                 read_source, source_suites, sources)
from tcpopt.log.report import judge
from tcpopt.series.upstream_tests import COMPAT_DIR
from tcpopt.tree.worktree import ScratchTree, log, write_atomic

# The layout functions the upstream series splits out of the
# calculators (every tree), and the two helpers they share.
LAYOUT_FUNCTIONS = (
    'tcp_syn_options_layout', 'tcp_synack_options_layout',
    'tcp_established_options_start', 'tcp_established_options_finish',
    'tcp_options_header_delta', 'tcp_syn_common_layout',
    'tcp_key_option_layout')

# Names --functions takes for a set of functions; a run of one writes
# its own report, docs/mutation/<tree>-<name>.md.
GROUPS: Dict[str, Tuple[str, ...]] = {'layout': LAYOUT_FUNCTIONS}

# The functions mutated, by file. Helpers they call in tcp_output.c are
# listed too: what decides a layout or a size.
TARGETS: Dict[str, Tuple[str, ...]] = {
    'net/ipv4/tcp_output.c': (
        'tcp_options_write', 'tcp_syn_options', 'tcp_synack_options',
        'tcp_established_options', 'tcp_current_mss', 'tcp_sync_mss',
        '__tcp_mtu_to_mss', 'tcp_mtu_to_mss', 'tcp_fastopen_opt_space',
        'tcp_options_fit_accecn', 'tcp_accecn_option_beacon_check',
        *LAYOUT_FUNCTIONS),
    'net/ipv4/tcp_input.c': ('tcp_parse_options',),
}

# A mutant boots in stages, each only if no case of the ones before it
# failed, on the same kernel (kunit.py exec): on a tree with the two
# layers the upstream suites first (what netdev would merge, measured
# alone: their kills are theirs), then the harness's unit suites, about
# 2 s under TCG, then the live suite, about 4 s, and up to 10 s more when
# a mutant stalls its connections. A mutant's report lists the failing
# cases of the stage that killed it. Each stage gets the seconds here: a
# crashed case would make KUnit wait 300 s for it; a kernel stopped
# before the end misses cases, and the mutant is killed. stages() checks
# that each glob picks exactly its suites.
UPSTREAM_STAGE = ('tcp_opt_[lw][ar]*', 15)
UNIT_STAGE = ('tcp_opt_[!bl]*', 15)
LAYERED_UNIT_STAGE = ('tcp_opt_[!blw]*', 15)
LIVE_STAGE = ('tcp_opt_live', 30)
# The verdict of a mutant whose object, debug info aside, is the
# original's: equivalent by construction, never booted.
SAME_CODE = 'same-code'
LIVE_SOURCE = 'tcp_live_test.c'

RELATIONAL = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=',
              '!=': '=='}
ARITHMETIC = {'+': '-', '-': '+', '+=': '-=', '-=': '+=', '<<': '>>',
              '>>': '<<'}
LOGICAL = {'&&': '||', '||': '&&'}
BITWISE = {'&': '|', '|': '&', '|=': '&=', '&=': '|='}
# Longest first, so that '<<=' is never read as '<<' and '='.
TOKEN = re.compile(r'<<=|>>=|->|\+\+|--|&&|\|\||<<|>>|<=|>=|==|!=|\+=|-=|'
                   r'\|=|&=|[-+<>&|]|\b0[xX][0-9a-fA-F]+\b|\b\d+[uUlL]*\b|'
                   r'\bTCPOLEN_\w+|[A-Za-z_]\w*|[)\]]')
DECLARATION = re.compile(r'^\s*(?:const\s+|static\s+|unsigned\s+|struct\s+|'
                         r'enum\s+)*(?:u8|u16|u32|u64|int|bool|__be32|__be16|'
                         r'__u8|__u16|__u32|long|char|size_t|[a-z_]+_t|'
                         r'tcp_\w+|inet_\w+|sock|sk_buff|mptcp_\w+)\b[\s*]')


@dataclass
class Mutant:
    file: str
    function: str
    line: int               # first line replaced, 1-based
    count: int              # lines replaced
    kind: str
    before: str             # the replaced lines
    after: str              # what replaces them
    occurrence: int = 0     # same change, same text: which one

    @property
    def ident(self) -> str:
        digest = hashlib.sha1('\0'.join(
            (self.file, self.function, self.kind, self.before, self.after,
             str(self.occurrence))).encode()).hexdigest()
        return f'{self.function}-{digest[:8]}'

    def describe(self) -> str:
        old = ' '.join(self.before.split())
        new = ' '.join(self.after.split())
        if self.kind == 'delete':
            new = '(deleted)'
        return f'{old}  ->  {new}'


@dataclass
class Result:
    verdict: str            # killed, survived, same-code, no-build
    failing: List[str] = field(default_factory=list)
    seconds: float = 0.0
    tests: str = ''         # tests_fingerprint() of the run
    compared: bool = False  # its object was compared with the original's
    stage: str = ''         # the glob of the stage that killed it


# --- finding the functions -------------------------------------------------

def function_span(lines: Sequence[str], name: str) -> Optional[Tuple[int, int]]:
    """0-based first and last line of @name's body braces, or None.
    A definition starts at column 0 and names the function before '(',
    on the line of its type or, kernel style, on a line of its own.
    """
    head = re.compile(r'^(?:[A-Za-z_].*\b)?' + re.escape(name) + r'\(')
    for i, line in enumerate(lines):
        if not head.match(line) or line.rstrip().endswith(';'):
            continue
        j = i
        while j < len(lines) and not lines[j].startswith('{'):
            if lines[j].rstrip().endswith(';'):
                break           # a prototype after all
            j += 1
        if j >= len(lines) or not lines[j].startswith('{'):
            continue
        for k in range(j + 1, len(lines)):
            if lines[k].startswith('}'):
                return j, k
    return None


def code_lines(lines: Sequence[str], start: int, end: int) -> Iterator[int]:
    """Body lines that hold code: no comment, no preprocessor line."""
    in_comment = False
    for i in range(start + 1, end):
        text = lines[i].strip()
        if in_comment:
            in_comment = '*/' not in text
            continue
        if text.startswith('/*'):
            in_comment = '*/' not in text
            continue
        if not text or text.startswith(('#', '//')):
            continue
        yield i


def strip_comment(line: str) -> str:
    """The line with a trailing /* ... */ blanked, same length."""
    at = line.find('/*')
    return line if at < 0 else line[:at] + ' ' * (len(line) - at)


# --- the mutation operators ------------------------------------------------

def is_binary(code: str, at: int) -> bool:
    """Whether the operator at @at follows an operand (else it is unary)."""
    before = code[:at].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in ')]_')


def token_mutants(code: str, twins: Dict[str, str]) -> Iterator[
        Tuple[str, int, int, str]]:
    """(kind, start, end, replacement) for each token of one line."""
    for match in TOKEN.finditer(code):
        tok, start, end = match.group(), match.start(), match.end()
        if tok in RELATIONAL:
            yield 'relational', start, end, RELATIONAL[tok]
        elif tok in LOGICAL:
            yield 'logical', start, end, LOGICAL[tok]
        elif tok in ('+', '-', '&', '|') and not is_binary(code, start):
            continue
        elif tok in ARITHMETIC:
            yield 'arithmetic', start, end, ARITHMETIC[tok]
        elif tok in BITWISE:
            yield 'bitwise', start, end, BITWISE[tok]
        elif re.fullmatch(r'0[xX][0-9a-fA-F]+|\d+[uUlL]*', tok):
            digits = re.match(r'0[xX][0-9a-fA-F]+|\d+', tok).group()
            value = int(digits, 0)
            suffix = tok[len(digits):]
            yield 'constant', start, end, f'{value + 1}{suffix}'
            if value > 0:
                yield 'constant', start, end, f'{value - 1}{suffix}'
        elif tok in twins:
            yield 'twin', start, end, twins[tok]


def statement_end(lines: Sequence[str], i: int, end: int) -> Optional[int]:
    """The line that ends the statement starting at @i, if it is one
    statement with balanced parentheses and no block."""
    depth = 0
    for k in range(i, end):
        code = strip_comment(lines[k])
        if '{' in code or '}' in code:
            return None
        depth += code.count('(') - code.count(')')
        if code.rstrip().endswith(';') and depth == 0:
            return k
    return None


def is_expression_statement(first: str) -> bool:
    """An expression statement, or a bare 'return;': deleting one is how
    a guard like 'if (opsize > length) return;' goes missing."""
    text = first.strip()
    if text.startswith('return;'):
        return True
    return not (DECLARATION.match(first) or text.startswith(
        ('return', 'break', 'continue', 'goto', 'if', 'else', 'for',
         'while', 'do', 'case', 'default', 'switch')))


def starts_statement(lines: Sequence[str], i: int) -> bool:
    """Whether line @i starts a statement (the previous code line ended
    one or opened or closed a block, or is a label)."""
    k = i - 1
    while k >= 0 and (not strip_comment(lines[k]).strip() or
                      lines[k].lstrip().startswith('#')):
        k -= 1
    prev = strip_comment(lines[k]).rstrip() if k >= 0 else '{'
    return prev.endswith((';', '{', '}', ':')) or \
        re.match(r'^\s*(?:else|if \(.*\)|for \(.*\)|while \(.*\))\s*$',
                 prev) is not None


def generate(file: str, text: str, functions: Sequence[str],
             twins: Dict[str, str]) -> List[Mutant]:
    """Every mutant of @functions in @text, in source order."""
    lines = text.split('\n')
    out: List[Mutant] = []
    for name in functions:
        span = function_span(lines, name)
        if span is None:
            continue            # not in this tree (AccECN before 6.18)
        start, end = span
        body = list(code_lines(lines, start, end))
        for i in body:
            out += line_mutants(file, name, lines, i, twins)
            out += statement_mutants(file, name, lines, i, end)
    seen: Dict[Tuple[str, str, str, str], int] = {}
    for mutant in out:
        key = (mutant.function, mutant.kind, mutant.before, mutant.after)
        mutant.occurrence = seen.get(key, 0)
        seen[key] = mutant.occurrence + 1
    return out


def line_mutants(file: str, name: str, lines: Sequence[str], i: int,
                 twins: Dict[str, str]) -> List[Mutant]:
    line = lines[i]
    code = strip_comment(line)
    out = []
    for kind, s, e, new in token_mutants(code, twins):
        out.append(Mutant(file, name, i + 1, 1, kind, line,
                          line[:s] + new + line[e:]))
    cond = re.match(r'^(\s*(?:\} else )?if \()(.*)(\)\s*\{?\s*)$', code)
    if cond and cond.group(2).count('(') == cond.group(2).count(')'):
        out.append(Mutant(file, name, i + 1, 1, 'if-true', line,
                          cond.group(1) + '1' + cond.group(3).rstrip()))
    return out


def statement_mutants(file: str, name: str, lines: Sequence[str], i: int,
                      end: int) -> List[Mutant]:
    if not starts_statement(lines, i) or \
            not is_expression_statement(lines[i]):
        return []
    last = statement_end(lines, i, end)
    if last is None:
        return []
    before = '\n'.join(lines[i:last + 1])
    # An empty statement keeps an unbraced if's body an if's body.
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    out = [Mutant(file, name, i + 1, last - i + 1, 'delete', before,
                  indent + ';')]
    nxt = last + 1
    if lines[i].strip().startswith('*ptr++ =') and nxt < end and \
            lines[nxt].strip().startswith('*ptr++ ='):
        last2 = statement_end(lines, nxt, end)
        if last2 is not None:
            second = '\n'.join(lines[nxt:last2 + 1])
            out.append(Mutant(file, name, i + 1, last2 - i + 1, 'swap',
                              before + '\n' + second,
                              second + '\n' + before))
    return out


def tcpolen_twins(tree: Path) -> Dict[str, str]:
    """TCPOLEN_X <-> TCPOLEN_X_ALIGNED where the tree defines both."""
    names = set()
    for header in ('include/net/tcp.h', 'include/uapi/linux/tcp.h',
                   'include/net/mptcp.h'):
        path = tree / header
        if path.is_file():
            names |= set(re.findall(r'#define\s+(TCPOLEN_\w+)',
                                    path.read_text(errors='replace')))
    twins = {}
    for name in names:
        if name.endswith('_ALIGNED') and name[:-len('_ALIGNED')] in names:
            twins[name] = name[:-len('_ALIGNED')]
            twins[name[:-len('_ALIGNED')]] = name
    return twins


# A mutant's id: its function, '-', 8 hex digits (Mutant.ident).
IDENT = re.compile(r'(?P<function>\w+)-[0-9a-f]{8}')


def expand(functions: Optional[Sequence[str]]) -> Optional[List[str]]:
    """--functions with each group name replaced by its functions."""
    if functions is None:
        return None
    return [n for name in functions for n in GROUPS.get(name, (name,))]


def group_of(functions: Optional[Sequence[str]]) -> Optional[str]:
    """The group these functions are, exactly, or None."""
    for name, members in GROUPS.items():
        if functions and list(functions) == list(members):
            return name
    return None


def check_arguments(functions: Optional[Sequence[str]],
                    ids: Optional[Sequence[str]]) -> None:
    """--functions and --ids, checked before any tree is prepared: a
    name that is no target, or an id no mutant could have."""
    known = {n for names in TARGETS.values() for n in names}
    unknown = sorted(set(functions or ()) - known - set(GROUPS))
    if unknown:
        raise UsageError(f'--functions: no such target {", ".join(unknown)} '
                         f'(known: {", ".join(sorted(known))}; groups: '
                         f'{", ".join(GROUPS)})')
    malformed = [i for i in ids or () if not IDENT.fullmatch(i) or
                 IDENT.fullmatch(i).group('function') not in known]
    if malformed:
        raise UsageError(f'--ids: no such mutant {", ".join(malformed)} '
                         '(an id is a target function, "-" and 8 hex digits; '
                         './run.sh mutate --list shows them)')


def all_mutants(settings: Settings, tree: Path,
                functions: Optional[Sequence[str]] = None) -> List[Mutant]:
    twins = tcpolen_twins(tree)
    wanted = set(functions) if functions else None
    out = []
    for file, names in TARGETS.items():
        chosen = [n for n in names if wanted is None or n in wanted]
        if chosen:
            out += generate(file, (tree / file).read_text(), chosen, twins)
    if wanted:
        known = {n for names in TARGETS.values() for n in names}
        unknown = sorted(wanted - known)
        if unknown:
            raise UsageError(f'--functions: no such target '
                             f'{", ".join(unknown)} (known: '
                             f'{", ".join(sorted(known))})')
    return out


def select(mutants: List[Mutant], ids: Optional[Sequence[str]]
           ) -> List[Mutant]:
    """The mutants with these ids, or all; an unknown id is an error."""
    if not ids:
        return mutants
    known = {m.ident: m for m in mutants}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(f'--ids: no such mutant {", ".join(unknown)} '
                         '(./run.sh mutate --list shows them)')
    return [known[i] for i in ids]


def sample(mutants: List[Mutant], size: Optional[int],
           seed: int) -> List[Mutant]:
    if size is None or size >= len(mutants):
        return mutants
    picked = random.Random(seed).sample(range(len(mutants)), size)
    return [mutants[i] for i in sorted(picked)]


# --- equivalents and results -------------------------------------------------

def equivalent_file(settings: Settings) -> Path:
    return settings.repo / 'tools' / 'mutation' / f'{settings.tree}.equivalent'


def read_equivalents(path: Path) -> Dict[str, str]:
    """id -> reason; a line without a reason is an error."""
    found: Dict[str, str] = {}
    if not path.is_file():
        return found
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split('#', 1)[0].strip() if raw.lstrip().startswith('#') \
            else raw.strip()
        if not line:
            continue
        ident, _, reason = line.partition(' ')
        if not reason.strip():
            raise HarnessError(f'{path}:{number}: {ident} has no reason')
        found[ident] = reason.strip()
    return found


def digest(paths: Sequence[Path]) -> str:
    hashed = hashlib.sha256()
    for path in paths:
        hashed.update(path.read_bytes())
    return hashed.hexdigest()[:16]


def target_paths(tree: Path) -> List[Path]:
    return [tree / file for file in TARGETS]


def test_paths(settings: Settings) -> List[Path]:
    """The harness's test sources and the upstream layer's."""
    kunit_dir = settings.kunit_dir
    return sorted(kunit_dir.glob('*.[ch]')) + \
        sorted((kunit_dir / UPSTREAM_TESTS).glob('*.[ch]')) + \
        sorted((kunit_dir / UPSTREAM_TESTS / COMPAT_DIR).glob('*.h'))


def code_fingerprint(tree: Path) -> str:
    """The mutated files: a verdict of other code is no verdict."""
    return digest(target_paths(tree))


def config_fingerprint(settings: Settings) -> str:
    """The build options: the same source built with other options is
    other object code."""
    options = sorted(set(settings.kunitconfig.read_text().split()) |
                     set(settings.kconfig_add))
    return hashlib.sha256('\n'.join(options).encode()).hexdigest()[:16]


def tests_fingerprint(settings: Settings) -> str:
    return digest(test_paths(settings))


def combined_fingerprint(settings: Settings, tree: Path) -> str:
    """The one fingerprint results.json had before code and tests were
    kept apart: read once, to carry such a file over."""
    return digest(target_paths(tree) + test_paths(settings))


def results_file(settings: Settings) -> Path:
    return settings.tree_dir / 'mutate' / 'results.json'


def still_valid(result: Result, tests: str, cases: Set[str],
                config_changed: bool = False) -> bool:
    """A verdict measured with other test sources stands if no test could
    change it: a no-build, or a kill whose failing cases all still exist
    (tests are added, rarely weakened; delete results.json to measure
    every verdict again). A survivor is measured again. After a change of
    build options only such kills stand: the object comparison and the
    build are measured again."""
    if result.verdict in ('no-build', SAME_CODE):
        return not config_changed
    if result.verdict == 'survived' and not result.compared:
        return False            # measured before objects were compared
    if result.tests == tests and not config_changed:
        return True
    return result.verdict == 'killed' and bool(result.failing) and \
        all(name in cases for name in result.failing)


def load_results(settings: Settings, tree: Path) -> Dict[str, Result]:
    path = results_file(settings)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    tests = tests_fingerprint(settings)
    if 'fingerprint' in data:           # the older, combined format
        if data['fingerprint'] != combined_fingerprint(settings, tree):
            return {}
        results = {k: Result(**dict(v, tests=tests))
                   for k, v in data.get('results', {}).items()}
        save_results(settings, tree, results)
        return results
    if data.get('code') != code_fingerprint(tree):
        return {}
    # A file from before the options were recorded: they are unknown.
    config_changed = data.get('config') != config_fingerprint(settings)
    cases = set(expected_cases(settings.kunit_dir, settings.upstream_suites))
    results = {k: Result(**v) for k, v in data.get('results', {}).items()}
    return {k: r for k, r in results.items()
            if still_valid(r, tests, cases, config_changed)}


def save_results(settings: Settings, tree: Path,
                 results: Dict[str, Result]) -> None:
    path = results_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(
        {'code': code_fingerprint(tree),
         'config': config_fingerprint(settings),
         'results': {k: asdict(v) for k, v in results.items()}}, indent=1))


# --- running -------------------------------------------------------------------

def apply(tree: Path, mutant: Mutant) -> str:
    """Write the mutant into @tree; returns the file's original text."""
    path = tree / mutant.file
    original = path.read_text()
    lines = original.split('\n')
    got = '\n'.join(lines[mutant.line - 1:mutant.line - 1 + mutant.count])
    if got != mutant.before:
        raise HarnessError(f'{mutant.file}:{mutant.line}: the scratch tree '
                           'no longer has the text this mutant changes')
    lines[mutant.line - 1:mutant.line - 1 + mutant.count] = \
        mutant.after.split('\n')
    path.write_text('\n'.join(lines))
    return original


def run_one(settings: Settings, tree: ScratchTree, build: Path,
            mutant: Mutant, reference: Dict[str, str]) -> Result:
    started = time.monotonic()
    original = apply(tree.src, mutant)
    # Put back even on Ctrl-C: a resumed run reuses the tree as it is.
    with tree.trying(f'mutant {mutant.ident}', undo=lambda: (
            tree.src / mutant.file).write_text(original)) as src:
        verdict = run_stages(settings, src, build, mutant, reference)
    seconds = round(time.monotonic() - started, 1)
    return dataclasses.replace(verdict, seconds=seconds)


@dataclass(frozen=True)
class Stage:
    glob: str
    seconds: int
    cases: Tuple[str, ...]


def stages(settings: Settings) -> List[Stage]:
    """What a mutant boots, in order, and the cases each must report."""
    kunit_dir = settings.kunit_dir
    live = [kunit_dir / LIVE_SOURCE]
    upstream = sorted((kunit_dir / UPSTREAM_TESTS).glob('*.c'))
    units = [p for p in sources(kunit_dir, upstream=False) if p not in live]
    plan = [(LAYERED_UNIT_STAGE if settings.layered else UNIT_STAGE, units),
            (LIVE_STAGE, live)]
    if settings.layered:
        plan.insert(0, (UPSTREAM_STAGE, upstream))
    every = [s for _, paths in plan for p in paths
             for s in source_suites(read_source(p, settings.version))]
    out = []
    for (glob, seconds), paths in plan:
        mine = [s for p in paths for s in source_suites(read_source(p, settings.version))]
        picked = [s for s in every if fnmatch.fnmatchcase(s, glob)]
        if sorted(picked) != sorted(mine):
            raise HarnessError(f'mutate stage {glob!r} picks the suites '
                               f'{", ".join(picked) or "none"}, not '
                               f'{", ".join(mine)}: fix generated.py\'s globs')
        cases = [c for p in paths for c in case_names(read_source(p, settings.version))]
        out.append(Stage(glob, seconds, tuple(cases)))
    return out


def object_digest(build: Path, file: str) -> str:
    """@file's object without its debug sections: the same digest is the
    same code, data and relocations, whatever the source says."""
    with tempfile.TemporaryDirectory() as tmp:
        stripped = Path(tmp) / 'stripped.o'
        subprocess.run(['objcopy', '--strip-debug',
                        str(build / Path(file).with_suffix('.o')),
                        str(stripped)], check=True, capture_output=True)
        return hashlib.sha256(stripped.read_bytes()).hexdigest()


def build_only(settings: Settings, src: Path, build: Path,
               output: Path) -> bool:
    from tcpopt.tree.kernel import run_kunit
    build.mkdir(parents=True, exist_ok=True)
    with open(output, 'w') as out:
        status, _ = run_kunit(settings, src, build_dir=build, output=out,
                              action='build')
    return status == 0


def reference_objects(settings: Settings, tree: ScratchTree,
                      build: Path) -> Dict[str, str]:
    """The objects of the unmutated tree, built once per run."""
    output = build / 'mutate-reference.out'
    if not build_only(settings, tree.src, build, output):
        raise HarnessError(f'{tree.src} does not build without a mutant; '
                           f'see {output}')
    return {file: object_digest(build, file) for file in TARGETS}


def run_stages(settings: Settings, src: Path, build: Path, mutant: Mutant,
               reference: Dict[str, str]) -> Result:
    """Build; a mutant the compiler turns into the original object is
    equivalent by construction (no boot). Otherwise boot the stages."""
    # regressions.py owns the scratch tree; imported here, not at the top,
    # so that listing mutants needs no kernel tooling.
    from tcpopt.mutation import regressions
    output = build / f'mutate-{mutant.ident}.out'
    if not build_only(settings, src, build, output):
        return Result('no-build')
    if object_digest(build, mutant.file) == reference[mutant.file]:
        return Result(SAME_CODE, compared=True)
    for stage in stages(settings):
        run = regressions.run_suites(settings, src, build, output,
                                     timeout=stage.seconds,
                                     filter_glob=stage.glob, action='exec')
        if run is None:     # kunit.py stopped before the kernel booted
            return Result('no-build', compared=True)
        verdict = judge(run, list(stage.cases))
        failing = verdict.failed + verdict.missing
        if verdict.crashed and not failing:
            failing = ['(kernel crashed)']
        if failing:
            return Result('killed', failing, compared=True,
                          stage=stage.glob)
    return Result('survived', compared=True)


def run_all(settings: Settings, tree: ScratchTree, build: Path,
            chosen: List[Mutant]) -> Dict[str, Result]:
    """Every chosen mutant without a result yet; saved after each one."""
    results = load_results(settings, tree.src)
    tests = tests_fingerprint(settings)
    todo = [m for m in chosen if m.ident not in results]
    if len(todo) < len(chosen):
        log(f'{len(chosen) - len(todo)} of {len(chosen)} mutants already '
            f'run on these sources; {len(todo)} to go')
    reference = reference_objects(settings, tree, build) if todo else {}
    for number, mutant in enumerate(todo, 1):
        result = run_one(settings, tree, build, mutant, reference)
        result.tests = tests
        results[mutant.ident] = result
        save_results(settings, tree.src, results)
        log(f'[{number}/{len(todo)}] {mutant.ident} {mutant.kind} '
            f'{mutant.file}:{mutant.line}: {result.verdict} '
            f'({result.seconds:.0f} s)')
    return results


# --- the report ----------------------------------------------------------------

@dataclass
class Score:
    generated: int = 0
    no_build: int = 0
    same_code: int = 0      # compiled to the original object
    equivalent: int = 0     # declared, with a reason
    killed: int = 0
    survived: int = 0
    not_run: int = 0
    flagged: List[str] = field(default_factory=list)   # equivalent, killed

    @property
    def denominator(self) -> int:
        return self.generated - self.no_build - self.same_code - \
            self.equivalent - self.not_run

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.denominator if self.denominator \
            else 100.0

    def line(self) -> str:
        return (f'{self.generated} mutants: {self.killed} killed, '
                f'{self.survived} survived, {self.same_code} same object '
                f'code, {self.equivalent} declared equivalent, '
                f'{self.no_build} did not build'
                + (f', {self.not_run} not run' if self.not_run else '')
                + f'; score {self.killed}/{self.denominator} = '
                f'{self.percent:.1f} %')


def score(mutants: List[Mutant], results: Dict[str, Result],
          equivalents: Dict[str, str]) -> Score:
    total = Score(generated=len(mutants))
    for mutant in mutants:
        result = results.get(mutant.ident)
        if result is None:
            total.not_run += 1
        elif result.verdict == 'no-build':
            total.no_build += 1
        elif result.verdict == SAME_CODE:
            total.same_code += 1
        elif mutant.ident in equivalents:
            total.equivalent += 1
            if result.verdict == 'killed':
                total.flagged.append(mutant.ident)
        elif result.verdict == 'killed':
            total.killed += 1
        else:
            total.survived += 1
    return total


def survivors(mutants: List[Mutant], results: Dict[str, Result],
              equivalents: Dict[str, str]) -> List[Mutant]:
    return [m for m in mutants if m.ident not in equivalents and
            results.get(m.ident, Result('')).verdict == 'survived']


def upstream_line(mutants: List[Mutant], results: Dict[str, Result]) -> str:
    """How many kills were the upstream suites' alone: their stage boots
    first, so a mutant they kill never reaches the harness."""
    killed = [results[m.ident] for m in mutants if m.ident in results
              and results[m.ident].verdict == 'killed']
    theirs = sum(r.stage == UPSTREAM_STAGE[0] for r in killed)
    unknown = sum(not r.stage for r in killed)
    return (f'The upstream suites alone (`{UPSTREAM_STAGE[0]}`, booted '
            f'first) killed {theirs} of the {len(killed)} killed'
            + (f'; {unknown} were killed before stages were recorded'
               if unknown else '') + '.')


def cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def render(settings: Settings, mutants: List[Mutant],
           results: Dict[str, Result], equivalents: Dict[str, str],
           command: str, date: str, machine: str,
           functions: Optional[Sequence[str]] = None) -> str:
    total = score(mutants, results, equivalents)
    seconds = sum(r.seconds for r in results.values())
    tests = tests_fingerprint(settings)
    carried = [k for k, r in results.items()
               if r.verdict == 'killed' and r.tests != tests]
    lines = [f'# Generated mutants on {settings.tree}', '',
             f'Generated by `{command}` on {date}; do not edit. '
             f'{total.line()}. Machine time of the runs: '
             f'{seconds / 3600:.1f} h ({seconds / max(1, len(results)):.0f} s '
             f'per mutant), {machine}. Test sources '
             f'(`kunit/*.[ch]`, `kunit/tests/*.[ch]`) fingerprint `{tests}`'
             + (f'; {len(carried)} kills were measured with earlier test '
                'sources whose failing cases all still exist, marked '
                '"(earlier tests)"' if carried else '') + '.', '',
             'Operators and the score are described in `tools/tcpopt/'
             'mutation/generated.py`. A mutant whose object file, debug '
             'sections stripped, is byte for byte the original\'s is *same '
             'object code*: equivalent by construction, never booted. Other '
             'equivalent mutants are declared, with a reason, in '
             f'`tools/mutation/{settings.tree}.equivalent`.', '']
    if functions:
        lines += ['Mutated: ' + ', '.join(f'`{f}()`' for f in functions)
                  + ' (of `TARGETS`).', '']
    if total.flagged:
        lines += ['## Declared equivalent, but killed', '',
                  'A case fails with these; the declaration is wrong:', '']
        lines += [f'- `{ident}`' for ident in total.flagged] + ['']
    if settings.layered:
        lines += [upstream_line(mutants, results), '']
    alive = survivors(mutants, results, equivalents)
    lines += ['## Survivors', '']
    lines += [f'- `{m.ident}` {m.file}:{m.line} ({m.function}, {m.kind}): '
              f'`{cell(m.describe())}`' for m in alive] or ['None.']
    lines += ['', '## Every mutant', '',
              '| id | place | kind | change | verdict | killed by |',
              '| --- | --- | --- | --- | --- | --- |']
    for m in mutants:
        result = results.get(m.ident)
        verdict = result.verdict if result else 'not run'
        if result and result.verdict == 'killed' and result.tests != tests:
            verdict += ' (earlier tests)'
        if verdict == SAME_CODE:
            verdict = 'same object code'
        elif m.ident in equivalents and verdict != 'no-build':
            verdict = f'equivalent ({verdict}): {equivalents[m.ident]}'
        killers = ' '.join(result.failing[:4]) + \
            (f' (+{len(result.failing) - 4})' if result and
             len(result.failing) > 4 else '') if result else ''
        lines.append(f'| `{m.ident}` | {m.file}:{m.line} {m.function} | '
                     f'{m.kind} | `{cell(m.describe())}` | {cell(verdict)} | '
                     f'{cell(killers)} |')
    return '\n'.join(lines) + '\n'

"""Mutant verdicts (results.json, the record) and the declared equivalents.

A verdict is kept under fingerprints of the mutated files, the build
options and the test sources, so that a run resumes and a test change
measures again only what it could change (still_valid()).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Sequence, Set

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import Settings
from tcpopt.log.expected import UPSTREAM_TESTS, expected_cases
from tcpopt.mutation.targets import TARGETS
from tcpopt.series.upstream_tests import COMPAT_DIR
from tcpopt.core.fs import write_atomic

# The verdict of a mutant whose object, debug info aside, is the
# original's: equivalent by construction, never booted.
SAME_CODE = 'same-code'


@dataclass
class Result:
    verdict: str            # killed, survived, same-code, no-build
    failing: List[str] = field(default_factory=list)
    seconds: float = 0.0
    tests: str = ''         # tests_fingerprint() of the run
    compared: bool = False  # its object was compared with the original's
    stage: str = ''         # the glob of the stage that killed it
    measured: str = ''      # the date of the run, YYYY-MM-DD
    more_failing: int = 0   # failing cases the repository's record left out


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


# The files TARGETS had before MPTCP's options.c joined them: what the
# fingerprints of older results.json files were made of.
LEGACY_FILES = ('net/ipv4/tcp_output.c', 'net/ipv4/tcp_input.c')


def test_paths(settings: Settings) -> List[Path]:
    """The harness's test sources and the upstream layer's."""
    kunit_dir = settings.kunit_dir
    return sorted(kunit_dir.glob('*.[ch]')) + \
        sorted((kunit_dir / UPSTREAM_TESTS).glob('*.[ch]')) + \
        sorted((kunit_dir / UPSTREAM_TESTS / COMPAT_DIR).glob('*.h'))


def code_fingerprint(tree: Path) -> Dict[str, str]:
    """Each mutated file's digest: a verdict of other code is no verdict."""
    return {file: digest([tree / file]) for file in TARGETS}


def same_code(stored: object, tree: Path) -> bool:
    """Whether the files a results.json was measured on are unchanged. A
    file TARGETS gained since is no change: the tree did not change, only
    what is mutated in it. The older format is one digest of
    LEGACY_FILES."""
    if isinstance(stored, str):
        return stored == digest([tree / file for file in LEGACY_FILES])
    if not isinstance(stored, dict) or not stored:
        return False
    return all((tree / file).is_file() and digest([tree / file]) == value
               for file, value in stored.items())


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
    return digest([tree / file for file in LEGACY_FILES] +
                  test_paths(settings))


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


def load_results(settings: Settings, tree: Path,
                 record: bool = False) -> Dict[str, Result]:
    """The verdicts of the work directory that still stand; with @record,
    those of the repository's record too, for the mutants the work
    directory has none of (a new machine has no work directory)."""
    kept = {} if not record else load_record(settings, tree)
    kept.update(load_work_results(settings, tree))
    return kept


def load_work_results(settings: Settings, tree: Path) -> Dict[str, Result]:
    path = results_file(settings)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if 'fingerprint' in data:           # the older, combined format
        if data['fingerprint'] != combined_fingerprint(settings, tree):
            return {}
        tests = tests_fingerprint(settings)
        results = {k: Result(**dict(v, tests=tests))
                   for k, v in data.get('results', {}).items()}
        save_results(settings, tree, results)
        return results
    stored = data.get('results', {})
    return standing(settings, tree, data,
                    {k: Result(**v) for k, v in stored.items()})


def standing(settings: Settings, tree: Path, header: dict,
             results: Dict[str, Result]) -> Dict[str, Result]:
    """The verdicts measured on @tree's code that no change since undid."""
    if not same_code(header.get('code'), tree):
        return {}
    # A file from before the options were recorded: they are unknown.
    config_changed = header.get('config') != config_fingerprint(settings)
    cases = set(expected_cases(settings.kunit_dir, settings.upstream_suites))
    tests = tests_fingerprint(settings)
    return {k: r for k, r in results.items()
            if still_valid(r, tests, cases, config_changed)}


# The record keeps a kill's first failing cases only (the report names
# four): still_valid() then asks that those still exist.
RECORD_FAILING = 8


def record_file(settings: Settings) -> Path:
    """The verdicts kept in the repository: one JSON object a line, the
    fingerprints first, then a mutant a line in the order of their ids,
    so that a run spread over machines and commits resumes."""
    return settings.repo / 'tools' / 'mutation' / f'{settings.tree}.verdicts'


def load_record(settings: Settings, tree: Path) -> Dict[str, Result]:
    path = record_file(settings)
    try:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        header, rows = lines[0], lines[1:]
        results = {row.pop('id'): Result(**row) for row in rows}
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return {}
    return standing(settings, tree, header, results)


def record_row(ident: str, result: Result) -> str:
    row = asdict(result)
    failing = row['failing']
    row['failing'] = failing[:RECORD_FAILING]
    row['more_failing'] += len(failing) - len(row['failing'])
    return json.dumps(dict(id=ident, **row), sort_keys=True)


def save_record(settings: Settings, tree: Path,
                results: Dict[str, Result]) -> None:
    header = json.dumps({'code': code_fingerprint(tree),
                         'config': config_fingerprint(settings)},
                        sort_keys=True)
    rows = [record_row(k, results[k]) for k in sorted(results)]
    record_file(settings).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(record_file(settings), '\n'.join([header] + rows) + '\n')


def save_results(settings: Settings, tree: Path,
                 results: Dict[str, Result], record: bool = False) -> None:
    if record:
        save_record(settings, tree, results)
    path = results_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(
        {'code': code_fingerprint(tree),
         'config': config_fingerprint(settings),
         'results': {k: asdict(v) for k, v in results.items()}}, indent=1))


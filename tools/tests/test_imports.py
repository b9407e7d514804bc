"""The import graph of tools/tcpopt: no cycle, and no import upward.

Every import counts, also one inside a function or under TYPE_CHECKING:
Python lets such a cycle through, but it still ties the two modules into
one, and the next top-level import turns it into an ImportError.

The command layer (cli, handlers, commands, pipeline, run_checks,
__main__) sits at the top of the package and uses the subpackages
(core, tree, log, layout, series, mutation, bisect, bench); no module of
a subpackage imports a command module back.
"""

from __future__ import annotations

import ast
import unittest
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

PACKAGE = Path(__file__).resolve().parents[1] / 'tcpopt'
COMMANDS = frozenset(f'tcpopt.{name}' for name in (
    'cli', 'handlers', 'commands', 'pipeline', 'run_checks', '__main__'))
SUBPACKAGES = frozenset(f'tcpopt.{path.parent.name}'
                        for path in PACKAGE.glob('*/__init__.py'))

Graph = Dict[str, Set[str]]


def module_files(package: Path = PACKAGE) -> Dict[str, Path]:
    """Every module of the package, subpackages too, by dotted name: a
    package's __init__.py is the package itself (tcpopt, tcpopt.log)."""
    modules = {}
    for path in sorted(package.rglob('*.py')):
        parts = (package.name,) + path.relative_to(package).with_suffix(
            '').parts
        if parts[-1] == '__init__':
            parts = parts[:-1]
        modules['.'.join(parts)] = path
    return modules


def is_package(name: str, modules: Dict[str, Path]) -> bool:
    return modules[name].name == '__init__.py'


def imported_modules(node: ast.AST, modules: Dict[str, Path],
                     current: str) -> Set[str]:
    """The package's modules one import statement in module @current
    names: 'from tcpopt.log import ktap' names tcpopt.log.ktap, 'from
    tcpopt.log.ktap import Run' names it too."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & set(modules)
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ''
    if node.level:
        here = current.split('.')
        if not is_package(current, modules):
            here = here[:-1]
        anchor = here[:len(here) - node.level + 1]
        base = '.'.join(anchor + ([base] if base else []))
    named = set()
    for alias in node.names:
        if f'{base}.{alias.name}' in modules:
            named.add(f'{base}.{alias.name}')
        elif base in modules:
            named.add(base)
    return named


def import_graph(package: Path = PACKAGE) -> Graph:
    modules = module_files(package)
    graph: Graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        graph[name] = set().union(*(imported_modules(node, modules, name)
                                    for node in ast.walk(tree))) - {name}
    return graph


def find_cycle(graph: Graph) -> Optional[List[str]]:
    """One cycle as [a, b, ..., a], or None: depth first, the path on a
    stack, a back edge to a module on it closes the cycle."""
    done: Set[str] = set()

    def visit(name: str, path: List[str]) -> Optional[List[str]]:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return None
        for target in sorted(graph.get(name, ())):
            cycle = visit(target, path + [name])
            if cycle:
                return cycle
        done.add(name)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def subpackage_of(name: str) -> Optional[str]:
    """tcpopt.log for tcpopt.log.ktap and tcpopt.log; None for tcpopt
    and the modules beside its __init__.py (tcpopt.cli)."""
    package = '.'.join(name.split('.')[:2])
    return package if package in SUBPACKAGES else None


def upward_imports(graph: Graph) -> List[Tuple[str, str]]:
    """(importer, command module) for every module of a subpackage that
    imports one of the command layer's modules."""
    return sorted((name, target) for name, targets in graph.items()
                  for target in targets
                  if target in COMMANDS and subpackage_of(name))


def package_graph(graph: Graph) -> Graph:
    """The graph one level up: which subpackage imports which; the
    command modules and tcpopt/__init__.py count as 'tcpopt'."""
    out: Graph = {}
    for name, targets in graph.items():
        out.setdefault(subpackage_of(name) or 'tcpopt', set()).update(
            subpackage_of(target) or 'tcpopt' for target in targets)
    return {name: targets - {name} for name, targets in out.items()}


class FindCycleTest(unittest.TestCase):
    """The checker itself, on small graphs: it must be able to fail."""

    def test_two_modules_that_import_each_other(self) -> None:
        self.assertEqual(find_cycle({'bench.timings': {'bench.table'},
                                     'bench.table': {'bench.timings'}}),
                         ['bench.table', 'bench.timings', 'bench.table'])

    def test_a_longer_cycle(self) -> None:
        self.assertEqual(find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'},
                                     'd': {'a'}}), ['a', 'b', 'c', 'a'])

    def test_a_diamond_is_no_cycle(self) -> None:
        self.assertIsNone(find_cycle({'a': {'b', 'c'}, 'b': {'d'},
                                      'c': {'d'}, 'd': set()}))


class UpwardImportTest(unittest.TestCase):
    """The upward rule on small graphs: it must be able to fail."""

    def test_a_subpackage_module_importing_a_command_fails(self) -> None:
        graph = {'tcpopt.core.settings': {'tcpopt.cli'},
                 'tcpopt.log.ktap': {'tcpopt.core.settings'},
                 'tcpopt.bench': {'tcpopt.pipeline'}}
        self.assertEqual(upward_imports(graph),
                         [('tcpopt.bench', 'tcpopt.pipeline'),
                          ('tcpopt.core.settings', 'tcpopt.cli')])

    def test_commands_may_import_each_other_and_go_down(self) -> None:
        graph = {'tcpopt.cli': {'tcpopt.handlers', 'tcpopt.core.errors'},
                 'tcpopt.__main__': {'tcpopt.cli'},
                 'tcpopt.commands': {'tcpopt.pipeline', 'tcpopt.log.ktap'},
                 'tcpopt.log.ktap': set()}
        self.assertEqual(upward_imports(graph), [])

    def test_package_graph(self) -> None:
        graph = {'tcpopt.cli': {'tcpopt.log.ktap'},
                 'tcpopt.log.ktap': {'tcpopt.core.errors', 'tcpopt.log'},
                 'tcpopt.log.report': {'tcpopt.log.ktap'},
                 'tcpopt.core.errors': set()}
        self.assertEqual(package_graph(graph),
                         {'tcpopt': {'tcpopt.log'},
                          'tcpopt.log': {'tcpopt.core'},
                          'tcpopt.core': set()})


class ImportedModulesTest(unittest.TestCase):

    MODULES = {name: Path(f'{name.replace(".", "/")}.py') for name in (
        'tcpopt.log.ktap', 'tcpopt.layout.tables', 'tcpopt.layout.dissect',
        'tcpopt.cli')}
    MODULES.update({name: Path(f'{name.replace(".", "/")}/__init__.py')
                    for name in ('tcpopt', 'tcpopt.log', 'tcpopt.layout')})

    def names(self, source: str,
              current: str = 'tcpopt.layout.dissect') -> Set[str]:
        return set().union(*(imported_modules(node, self.MODULES, current)
                             for node in ast.walk(ast.parse(source))))

    def test_every_spelling_of_an_import(self) -> None:
        self.assertEqual(self.names('from tcpopt.log import ktap'),
                         {'tcpopt.log.ktap'})
        # A name that is no module is the package's own: its __init__.py.
        self.assertEqual(self.names('from tcpopt.log import ktap, Run'),
                         {'tcpopt.log.ktap', 'tcpopt.log'})
        self.assertEqual(self.names('from tcpopt.layout.tables import rows'),
                         {'tcpopt.layout.tables'})
        self.assertEqual(self.names('import tcpopt.layout.tables'),
                         {'tcpopt.layout.tables'})
        self.assertEqual(self.names('from tcpopt.log.ktap import Run'),
                         {'tcpopt.log.ktap'})
        self.assertEqual(self.names('from tcpopt import cli'), {'tcpopt.cli'})

    def test_relative_imports_resolve_from_the_module(self) -> None:
        self.assertEqual(self.names('from . import tables'),
                         {'tcpopt.layout.tables'})
        self.assertEqual(self.names('from ..log.ktap import Run'),
                         {'tcpopt.log.ktap'})
        self.assertEqual(self.names('from .. import cli'), {'tcpopt.cli'})
        self.assertEqual(self.names('from .log import ktap', 'tcpopt'),
                         {'tcpopt.log.ktap'})

    def test_imports_inside_functions_and_type_checking_count(self) -> None:
        source = ('if TYPE_CHECKING:\n    from tcpopt.log.ktap import Run\n'
                  'def f():\n    from tcpopt.layout import tables\n')
        self.assertEqual(self.names(source, 'tcpopt.cli'),
                         {'tcpopt.log.ktap', 'tcpopt.layout.tables'})


class TcpoptImportGraphTest(unittest.TestCase):

    def test_no_import_cycle(self) -> None:
        cycle = find_cycle(import_graph())
        self.assertIsNone(cycle, 'import cycle in tools/tcpopt: ' +
                          ' -> '.join(cycle or []))

    def test_no_upward_import(self) -> None:
        upward = upward_imports(import_graph())
        self.assertEqual(upward, [], 'a subpackage imports the command '
                         'layer: ' + ', '.join(f'{a} -> {b}'
                                               for a, b in upward))

    def test_imports_are_absolute(self) -> None:
        for name, path in module_files().items():
            relative = [node.lineno for node in ast.walk(ast.parse(
                path.read_text())) if isinstance(node, ast.ImportFrom)
                and node.level]
            with self.subTest(module=name):
                self.assertEqual(relative, [])

    def test_the_graph_sees_the_package(self) -> None:
        graph = import_graph()
        self.assertIn('tcpopt.log.ktap', graph['tcpopt.layout.tables'])
        self.assertIn('tcpopt.bench.timings', graph['tcpopt.commands'])
        self.assertIn('tcpopt.mutation.regressions',
                      graph['tcpopt.mutation.generated'])
        self.assertIn('tcpopt.cli', graph['tcpopt.__main__'])
        self.assertEqual(len(graph), len(list(PACKAGE.rglob('*.py'))))


if __name__ == '__main__':
    unittest.main()

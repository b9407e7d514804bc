"""The import graph of tools/tcpopt: no module imports itself through others.

Every import counts, also one inside a function or under TYPE_CHECKING:
Python lets such a cycle through, but it still ties the two modules into
one, and the next top-level import turns it into an ImportError.
"""

from __future__ import annotations

import ast
import unittest
from pathlib import Path
from typing import Dict, List, Optional, Set

PACKAGE = Path(__file__).resolve().parents[1] / 'tcpopt'

Graph = Dict[str, Set[str]]


def imported_modules(node: ast.AST, modules: Set[str]) -> Set[str]:
    """The package's modules one import statement names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level:
        # 'from . import a, b' names modules; 'from .a import x' names a.
        names = [node.module] if node.module else \
            [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        names = [node.module or '']
    else:
        return set()
    short = {name.split('.')[1] if name.startswith('tcpopt.') else name
             for name in names}
    return short & modules


def import_graph(package: Path = PACKAGE) -> Graph:
    modules = {path.stem for path in package.glob('*.py')}
    graph: Graph = {}
    for name in sorted(modules):
        tree = ast.parse((package / f'{name}.py').read_text())
        graph[name] = set().union(*(imported_modules(node, modules)
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


class FindCycleTest(unittest.TestCase):
    """The checker itself, on small graphs: it must be able to fail."""

    def test_two_modules_that_import_each_other(self) -> None:
        self.assertEqual(find_cycle({'bench': {'perfreport'},
                                     'perfreport': {'bench'}}),
                         ['bench', 'perfreport', 'bench'])

    def test_a_longer_cycle(self) -> None:
        self.assertEqual(find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'},
                                     'd': {'a'}}), ['a', 'b', 'c', 'a'])

    def test_a_diamond_is_no_cycle(self) -> None:
        self.assertIsNone(find_cycle({'a': {'b', 'c'}, 'b': {'d'},
                                      'c': {'d'}, 'd': set()}))


class ImportedModulesTest(unittest.TestCase):

    def names(self, source: str) -> Set[str]:
        modules = {'ktap', 'layouts', 'dissect'}
        return set().union(*(imported_modules(node, modules)
                             for node in ast.walk(ast.parse(source))))

    def test_every_spelling_of_an_import(self) -> None:
        self.assertEqual(self.names('from . import ktap, os_path'), {'ktap'})
        self.assertEqual(self.names('from .layouts import rows'), {'layouts'})
        self.assertEqual(self.names('import tcpopt.dissect'), {'dissect'})
        self.assertEqual(self.names('from tcpopt.ktap import Run'), {'ktap'})

    def test_imports_inside_functions_and_type_checking_count(self) -> None:
        source = ('if TYPE_CHECKING:\n    from .ktap import Run\n'
                  'def f():\n    from .dissect import check\n')
        self.assertEqual(self.names(source), {'ktap', 'dissect'})


class TcpoptImportGraphTest(unittest.TestCase):

    def test_no_import_cycle(self) -> None:
        cycle = find_cycle(import_graph())
        self.assertIsNone(cycle, 'import cycle in tools/tcpopt: ' +
                          ' -> '.join(cycle or []))

    def test_the_graph_sees_the_package(self) -> None:
        graph = import_graph()
        self.assertIn('ktap', graph['layouts'])
        self.assertIn('bench', graph['commands'])


if __name__ == '__main__':
    unittest.main()

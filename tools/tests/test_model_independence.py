"""The reference model stays independent of the code it checks.

tcpopt.layout.model and the modules it is split into describe the
options from the RFCs; the sweep is worth something only while they
share nothing with what renders or decodes the kernel's output
(tcpopt.layout.options, dissect, tables, svg, the log parsers).
"""

from __future__ import annotations

import unittest

from tests.test_imports import import_graph

MODEL = 'tcpopt.layout.model'
# The modules of the model, and the one outside it that it may use: the
# MPTCP option's own RFC model, which imports nothing of the package.
MODEL_MODULES = frozenset({MODEL, f'{MODEL}_inputs', f'{MODEL}_encodings',
                           f'{MODEL}_sweep'})
ALLOWED = MODEL_MODULES | {'tcpopt.layout.mptcp_model'}


def reachable(graph, start):
    """Every module @start imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        for target in graph.get(name, ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


class ModelIndependenceTest(unittest.TestCase):

    def test_the_model_imports_only_itself_and_the_mptcp_model(self):
        graph = import_graph()
        self.assertLessEqual(MODEL_MODULES, set(graph))
        self.assertEqual(reachable(graph, MODEL) - ALLOWED, set())

    def test_the_mptcp_model_imports_nothing_of_the_package(self):
        self.assertEqual(import_graph()['tcpopt.layout.mptcp_model'], set())


if __name__ == '__main__':
    unittest.main()

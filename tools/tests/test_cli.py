"""cli: the closing tally line and the argument parser."""

from __future__ import annotations

import unittest

from tcpopt import cli
from tcpopt.settings import DEFAULT_TREE


class TallyTest(unittest.TestCase):

    def test_closing_line_without_skips(self) -> None:
        self.assertEqual(cli.Tally(passed=5).closing_line(),
                         '5 passed, 0 failed')

    def test_closing_line_with_skips(self) -> None:
        self.assertEqual(cli.Tally(passed=5, skipped=2).closing_line(),
                         '5 passed, 0 failed, 2 skipped')

    def test_closing_line_with_failures(self) -> None:
        self.assertEqual(cli.Tally(3, 1, 0).closing_line(),
                         '3 passed, 1 failed')

    def test_add_counts_passes_and_failures(self) -> None:
        tally = cli.Tally()
        tally.add(True)
        tally.add(True, 4)
        tally.add(False, 2)
        tally.add(False, 0)
        self.assertEqual((tally.passed, tally.failed, tally.skipped),
                         (5, 2, 0))


class ParseArgsTest(unittest.TestCase):

    def test_defaults(self) -> None:
        args = cli.parse_args([])
        self.assertEqual(args.command, 'run')
        # No tree named: the main job takes DEFAULT_TREE, the test
        # command every tree.
        self.assertIsNone(args.tree)
        self.assertEqual(DEFAULT_TREE, '6.1')

    def test_trees_sort_as_versions(self) -> None:
        self.assertEqual(sorted(['6.12', '6.1'], key=cli.tree_order),
                         ['6.1', '6.12'])

    def test_test_command_and_tree(self) -> None:
        args = cli.parse_args(['--tree', '6.1', 'test'])
        self.assertEqual((args.command, args.tree), ('test', '6.1'))

    def test_unknown_command_exits(self) -> None:
        import contextlib
        import io
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                cli.parse_args(['build'])

    def test_every_command_has_a_handler(self) -> None:
        self.assertEqual(sorted(cli.COMMANDS),
                         ['bisect-demo', 'layouts', 'mutants', 'run',
                          'test'])


class MisusedOptionsTest(unittest.TestCase):
    """Options that do not fit the command: one line, exit 1, nothing run."""

    def main(self, *argv: str) -> tuple:
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = cli.main(list(argv))
        return status, err.getvalue().strip()

    def test_sanitize_needs_the_run_command(self) -> None:
        self.assertEqual(self.main('--sanitize', 'mutants'),
                         (1, 'run.sh: error: --sanitize only applies to '
                          './run.sh run'))

    def test_inject_needs_run_or_layouts(self) -> None:
        self.assertEqual(self.main('--inject', 'x.patch', 'bisect-demo'),
                         (1, 'run.sh: error: --inject only applies to '
                          './run.sh run and ./run.sh layouts'))

    def test_inject_of_a_missing_file(self) -> None:
        import os
        from unittest import mock
        with mock.patch.dict(os.environ, {'TCPOPT_NO_INSTALL': '1'}), \
                mock.patch('tcpopt.deps.ensure_packages'):
            self.assertEqual(self.main('--inject', '/nonexistent.patch'),
                             (1, 'run.sh: error: --inject '
                              '/nonexistent.patch: no such file'))


if __name__ == '__main__':
    unittest.main()

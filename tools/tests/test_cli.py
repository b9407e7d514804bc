"""cli and the test command: the closing tally line, the argument parser,
the steps and their one reading of each log."""

from __future__ import annotations

import shutil
import unittest
from pathlib import Path

from tcpopt import cli, commands, handlers, pipeline, run_checks
from tcpopt.core.errors import UsageError
from tcpopt.core.settings import (BUILD_FREE_IN_CI, DEFAULT_TREE, HEAVY_STEPS,
                                  TEST_TREES, version_key)
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'


class TallyTest(unittest.TestCase):

    def test_closing_line_without_skips(self) -> None:
        self.assertEqual(run_checks.Tally(passed=5).closing_line(),
                         '5 passed, 0 failed')

    def test_closing_line_with_skips(self) -> None:
        self.assertEqual(run_checks.Tally(passed=5, skipped=2).closing_line(),
                         '5 passed, 0 failed, 2 skipped')

    def test_closing_line_with_failures(self) -> None:
        self.assertEqual(run_checks.Tally(3, 1, 0).closing_line(),
                         '3 passed, 1 failed')

    def test_add_counts_passes_and_failures(self) -> None:
        tally = run_checks.Tally()
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
        self.assertEqual(sorted(['6.12', '6.1'], key=version_key),
                         ['6.1', '6.12'])

    def test_test_command_and_tree(self) -> None:
        args = cli.parse_args(['--tree', '6.1', 'test'])
        self.assertEqual((args.command, args.tree), ('test', ['6.1']))

    def test_unknown_command_is_a_usage_error(self) -> None:
        with self.assertRaisesRegex(UsageError, "run: unexpected 'build' "
                                    r'\(commands: run, test, parse'):
            cli.parse_args(['build'])

    def test_the_command_may_follow_the_options(self) -> None:
        for argv in (['--tree', '6.12', 'mutate', '--list'],
                     ['mutate', '--tree', '6.12', '--list']):
            args = cli.parse_args(argv)
            self.assertEqual((args.command, args.tree, args.list),
                             ('mutate', ['6.12'], True))

    def test_an_option_value_is_not_taken_for_the_command(self) -> None:
        args = cli.parse_args(['--inject', 'test'])
        self.assertEqual((args.command, args.inject), ('run', [Path('test')]))

    def test_kunit_py_spellings(self) -> None:
        args = cli.parse_args(['run', '--filter', 'tcp_opt_parse',
                               '--timeout', '60', '--jobs', '3',
                               '--build_dir', '/tmp/b', '--json',
                               '--raw_output', 'kunit'])
        self.assertEqual((args.filter_glob, args.timeout, args.jobs,
                          args.build_dir, args.json, args.raw_output),
                         ('tcp_opt_parse', 60, 3, Path('/tmp/b'), 'stdout',
                          'kunit'))

    def test_every_command_has_a_handler(self) -> None:
        self.assertEqual(sorted(cli.HANDLERS),
                         ['bench', 'bisect-demo', 'capture', 'clean', 'kconfig',
                          'layouts', 'mutants', 'mutate', 'parse', 'plain',
                          'run', 'selftest', 'series', 'test'])
        self.assertEqual(sorted(cli.HANDLERS), sorted(cli.SUBCOMMANDS))

    def test_no_option_value_is_taken_for_the_command(self) -> None:
        self.assertIn('--jobs', cli.TAKES_VALUE)
        self.assertNotIn('--quick', cli.TAKES_VALUE)
        for option in sorted(cli.TAKES_VALUE):
            with self.subTest(option):
                self.assertEqual(cli.with_command_first([option, 'test']),
                                 ['run', option, 'test'])


class MainTest(unittest.TestCase):
    """main: the handler the table names, what reaches it, and how a
    failure ends."""

    def test_a_closed_stdout_exits_one_without_a_traceback(self) -> None:
        """'./run.sh parse LOG | head': BrokenPipeError is an OSError,
        so its handler must come before OSError's."""
        from unittest import mock
        handler = mock.Mock(side_effect=BrokenPipeError)
        with mock.patch.dict(cli.HANDLERS, {'run': handler}), \
                mock.patch('tcpopt.cli.silence_stdout') as silence:
            self.assertEqual(cli.main(['run']), 1)
        silence.assert_called_once_with()

    def test_jobs_and_timeout_reach_the_processes_it_starts(self) -> None:
        """Through the trees' Settings, into the environment those build
        for the processes the command starts (git bisect run
        tools/bisect-layout); this process's environment stays as it
        was."""
        import os
        import tempfile
        from unittest import mock
        handler = mock.Mock(return_value=0)
        with tempfile.TemporaryDirectory() as work, \
                mock.patch.dict(cli.HANDLERS, {'test': handler}), \
                mock.patch.dict(os.environ, {'TCPOPT_WORK_DIR': work,
                                             'TCPOPT_JOBS': '1'}):
            before = dict(os.environ)
            self.assertEqual(cli.main(['test', '--jobs', '3',
                                       '--timeout', '60']), 0)
            self.assertEqual(dict(os.environ), before)
            trees = handlers.tree_settings(handler.call_args.args[0])
        for settings in trees:
            child = settings.child_env()
            self.assertEqual((settings.jobs, settings.kunit_timeout),
                             (3, 60))
            self.assertEqual((child['TCPOPT_JOBS'],
                              child['TCPOPT_KUNIT_TIMEOUT']), ('3', '60'))

    def test_the_bench_quotes_the_command_line_as_typed(self) -> None:
        import os
        import tempfile
        from unittest import mock
        with tempfile.TemporaryDirectory() as work, \
                mock.patch.dict(os.environ, {'TCPOPT_WORK_DIR': work}), \
                mock.patch('tcpopt.handlers.install'), \
                mock.patch('tcpopt.handlers.cmd_bench',
                           return_value=0) as bench:
            self.assertEqual(cli.main(['--tree=6.12', 'bench']), 0)
        self.assertEqual(bench.call_args.kwargs['argv'],
                         ['--tree=6.12', 'bench'])


class NeedBuildTest(unittest.TestCase):
    """run_checks.need_build: the KUnit step first, only without a build."""

    def setUp(self) -> None:
        import tempfile
        from tcpopt.core.settings import Settings
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.settings = Settings(tree='6.1', work_dir=Path(tmp.name))

    def need_build(self) -> tuple:
        from unittest import mock
        from tcpopt.tree.worktree import PreparedTree
        tree = PreparedTree(self.settings)
        with mock.patch('tcpopt.tree.worktree.prepare',
                        return_value=Path('/src')) as prepare, \
                mock.patch('tcpopt.run_checks.kunit_step',
                           side_effect=lambda tree: tree.source()) as step:
            source = run_checks.need_build(tree)
        return source, step.call_count, prepare.call_count

    def test_no_build_runs_the_kunit_step_first(self) -> None:
        self.assertEqual(self.need_build(), (Path('/src'), 1, 1))

    def test_a_configured_build_is_used_as_it_is(self) -> None:
        self.settings.build_dir.mkdir(parents=True)
        (self.settings.build_dir / '.config').write_text('CONFIG_KUNIT=y\n')
        self.assertEqual(self.need_build(), (Path('/src'), 0, 1))


class BuiltKernelCommandsTest(unittest.TestCase):
    """The commands that build on the main build go through need_build()
    with the tree they prepare, once."""

    def test_each_command_needs_the_build(self) -> None:
        import tempfile
        from unittest import mock
        from tcpopt.core.settings import Settings
        with tempfile.TemporaryDirectory() as work:
            settings = Settings.create('7.3', Path(work))
            for name, command in (
                    ('kconfig', lambda: commands.cmd_kconfig(settings)),
                    ('mutants', lambda: commands.cmd_mutants(settings)),
                    ('series --cost', lambda: commands.cmd_series(
                        settings, 'cost'))):
                with self.subTest(name), \
                        mock.patch('tcpopt.commands.need_build') as need, \
                        mock.patch.multiple(
                            'tcpopt.commands', kconfig_step=mock.DEFAULT,
                            mutants_step=mock.DEFAULT,
                            cost_step=mock.DEFAULT), \
                        mock.patch('tcpopt.commands.heading'):
                    command()
                (tree,), _ = need.call_args
                self.assertEqual((need.call_count, tree.settings),
                                 (1, settings))


class TestHelpTest(unittest.TestCase):

    def test_help_lists_every_step_of_the_test_command(self) -> None:
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            cli.parse_args(['test', '--help'])
        text = out.getvalue()
        titles = pipeline.step_titles(DEFAULT_TREE)
        self.assertEqual(len(titles), 7 + len(HEAVY_STEPS[DEFAULT_TREE]))
        self.assertIn('  1. host tool unit tests\n', text)
        lines = text.splitlines()
        last = TEST_TREES[-1]
        for tree in TEST_TREES:
            if tree in BUILD_FREE_IN_CI:
                self.assertIn(f'  on {tree}, only what builds no kernel '
                              '(series, export)', text)
                continue
            # Another tree's common steps are the default's, renamed; the
            # debug kernel is the last tree's, which adds --twice.
            steps = pipeline.step_titles(tree, debug=tree == last)
            if tree != DEFAULT_TREE:
                steps = steps[len(steps) - len(HEAVY_STEPS[tree]) -
                              (tree == last):]
            for title in steps:
                with self.subTest(tree=tree, title=title):
                    self.assertTrue(any(line.endswith(f'. {title}') or
                                        line == f'  - {title}'
                                        for line in lines))


class MisusedOptionsTest(unittest.TestCase):
    """An option the command does not take: one line, exit 2, nothing
    built or installed (main stops before the tree and the packages)."""

    def main(self, *argv: str) -> tuple:
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = cli.main(list(argv))
        return status, err.getvalue().strip()

    def assert_rejected(self, argv: str, message: str) -> None:
        from unittest import mock
        with mock.patch('tcpopt.core.settings.Settings.create',
                        side_effect=AssertionError('got past usage')):
            self.assertEqual(self.main(*argv.split()),
                             (2, f'run.sh: error: {message}'))

    def test_twice_on_a_kunit_without_a_debugfs_run_file(self) -> None:
        from unittest import mock
        with mock.patch('tcpopt.handlers.install',
                        side_effect=AssertionError('got past usage')):
            self.assertEqual(self.main('run', '--tree', '6.1', '--twice'),
                             (2, 'run.sh: error: --twice: KUnit runs a '
                              'suite again from debugfs since Linux 6.7; 6.1 '
                              'cannot (use --tree 6.12 or 7.3)'))

    def test_compare_with_test(self) -> None:
        self.assert_rejected('test --compare 6.1 6.12',
                             '--compare only applies to ./run.sh layouts')

    def test_quick_outside_test(self) -> None:
        for argv in ('--quick', 'run --quick', 'mutants --quick',
                     'bench --quick'):
            with self.subTest(argv):
                self.assert_rejected(argv,
                                     '--quick only applies to ./run.sh test')

    def test_a_repeated_tree(self) -> None:
        self.assert_rejected('--tree 6.1 test --tree 6.12',
                             '--tree given 2 times (6.1, 6.12): name one '
                             'tree')

    def test_the_same_tree_twice(self) -> None:
        self.assert_rejected('--tree 6.1 --tree 6.1',
                             '--tree given 2 times (6.1, 6.1): name one tree')

    def test_sanitize_outside_run(self) -> None:
        for command in ('test', 'mutants', 'layouts', 'bench', 'capture'):
            with self.subTest(command):
                self.assert_rejected(f'--sanitize {command}',
                                     '--sanitize only applies to ./run.sh '
                                     'run')

    def test_inject_outside_run_and_layouts(self) -> None:
        self.assert_rejected('--inject x.patch bisect-demo',
                             '--inject only applies to ./run.sh run and '
                             './run.sh layouts')

    def test_update_outside_layouts(self) -> None:
        self.assert_rejected('test --update',
                             '--update only applies to ./run.sh layouts')

    def test_kunitconfig_costs_outside_bench(self) -> None:
        self.assert_rejected('run --kunitconfig-costs',
                             '--kunitconfig-costs only applies to ./run.sh '
                             'bench')

    def test_regen_and_export_outside_series(self) -> None:
        self.assert_rejected('test --regen',
                             '--regen only applies to ./run.sh series')
        self.assert_rejected('--export /tmp/x',
                             '--export only applies to ./run.sh series')

    def test_the_series_actions_exclude_each_other(self) -> None:
        import itertools
        actions = ('--regen', '--export /tmp/x', '--build-check', '--cost')
        for first, second in itertools.combinations(actions, 2):
            with self.subTest(first=first, second=second):
                self.assert_rejected(
                    f'series {first} {second}',
                    f'argument {second.split()[0]}: not allowed with '
                    f'argument {first.split()[0]}')

    def test_source_with_tree(self) -> None:
        self.assert_rejected('run --tree 6.1 --source /k',
                             'argument --source: not allowed with argument '
                             '--tree')

    def test_compare_needs_two_or_three_trees_oldest_first(self) -> None:
        for trees in ('6.1', '6.12 6.1', '6.1 6.1', '6.1 6.12 7.3 7.3'):
            with self.subTest(trees=trees):
                self.assert_rejected(
                    f'layouts --compare {trees}',
                    '--compare takes 2 or 3 different trees, oldest first')

    def test_compare_with_update_or_inject(self) -> None:
        for other in ('--update', '--inject x.patch'):
            with self.subTest(other):
                self.assert_rejected(
                    f'layouts --compare 6.1 6.12 {other}',
                    f'layouts: give --compare or {other.split()[0]}, not '
                    'both')

    def test_compare_with_tree(self) -> None:
        self.assert_rejected('layouts --compare 6.1 6.12 --tree 6.12',
                             'argument --tree: not allowed with argument '
                             '--compare')

    def test_every_option_is_refused_by_every_other_command(self) -> None:
        parser = cli.build_parser()
        commands = parser._subparsers._group_actions[0].choices
        options = {option for sub in commands.values()
                   for option in sub._option_string_actions
                   if option.startswith('--') and option not in
                   ('--help', '--tree')}
        for option in sorted(options):
            takers = cli.commands_taking(option)
            self.assertTrue(takers, option)
            for command in set(commands) - set(takers):
                with self.subTest(option=option, command=command):
                    self.assert_rejected(
                        f'{command} {option}',
                        f'{option} only applies to ' + ' and '.join(
                            f'./run.sh {name}' for name in takers))

    def test_options_that_take_a_value_are_known(self) -> None:
        """with_command_first() must not take a value for the command."""
        parser = cli.build_parser()
        for sub in parser._subparsers._group_actions[0].choices.values():
            for action in sub._actions:
                if action.option_strings and action.nargs != 0:
                    with self.subTest(option=action.option_strings[0]):
                        self.assertIn(action.option_strings[0],
                                      cli.TAKES_VALUE)

    def test_inject_of_a_missing_file(self) -> None:
        import os
        from unittest import mock
        with mock.patch.dict(os.environ, {'TCPOPT_NO_INSTALL': '1'}), \
                mock.patch('tcpopt.core.deps.ensure_packages'):
            self.assertEqual(self.main('--inject', '/nonexistent.patch'),
                             (1, 'run.sh: error: --inject '
                              '/nonexistent.patch: no such file'))


class CaptureStepTest(unittest.TestCase):
    """The test command's live capture step on a copied log: no kernel."""

    def setUp(self) -> None:
        import tempfile
        from tcpopt.core.settings import Settings
        self.tmp = tempfile.TemporaryDirectory()
        self.settings = Settings.create('6.1', work_dir=Path(self.tmp.name))
        self.settings.build_dir.mkdir(parents=True)
        self.pcap = self.settings.tree_dir / 'capture' / 'live.pcap'

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def step(self, log: str, declared: bool = True) -> tuple:
        import contextlib
        import io
        from unittest import mock
        shutil.copy(DATA / log, self.settings.build_dir / 'test.log')
        tally, out = run_checks.Tally(), io.StringIO()
        with mock.patch('tcpopt.layout.capture.suite_declared',
                        return_value=declared), \
                contextlib.redirect_stdout(out):
            run_checks.capture_step(self.settings, tally, ktap.read(
                self.settings.build_dir / 'test.log'))
        return out.getvalue().splitlines(), tally

    def test_skipped_until_kunit_has_the_suite(self) -> None:
        lines, tally = self.step('ktap-pass.log', declared=False)
        self.assertEqual(lines, ['SKIP kunit/ has no tcp_opt_live suite'])
        self.assertEqual((tally.passed, tally.failed, tally.skipped),
                         (0, 0, 1))

    def test_a_log_without_packets_fails(self) -> None:
        lines, tally = self.step('ktap-pass.log')
        log = self.settings.build_dir / 'test.log'
        self.assertEqual(lines, [f'FAIL live capture: no "# wire:" lines in '
                                 f'{log}: the tcp_opt_live suite did not '
                                 'print any packets'])
        self.assertEqual(tally.failed, 1)
        self.assertFalse(self.pcap.exists())

    @unittest.skipUnless(shutil.which('tshark'), 'tshark is not installed')
    def test_writes_and_checks_the_pcap(self) -> None:
        lines, tally = self.step('ktap-live-sample.log')
        self.assertEqual(lines[-1], f'PASS wrote {self.pcap}: 9 packets (6 '
                         'IPv4, 3 IPv6) from 5 cases; tshark: checksums '
                         'good, 0 problems')
        self.assertEqual(len(lines), 6)         # a line per case
        self.assertEqual((tally.passed, tally.failed), (1, 0))
        self.assertEqual(sorted(p.name for p in self.pcap.parent.iterdir()),
                         ['live.pcap'])

    def test_runs_right_after_the_tshark_step(self) -> None:
        titles = [title for _, title, _ in
                  pipeline.tree_steps(self.settings, run_checks.Tally(), demo=False)]
        tshark = next(i for i, title in enumerate(titles)
                      if title.startswith('tshark decodes'))
        self.assertEqual(titles[tshark + 1],
                         'live capture: the 6.1 tcp_opt_live packets as a '
                         'pcap that tshark reads cleanly')


class OneParsePerTreeTest(unittest.TestCase):
    """./run.sh test reads each tree's test.log once: the KUnit step
    parses it and hands the run to every later step of the tree; so do
    the commands that run the suites and check their output. The build
    and boot are faked with a fixture log holding every kind of record;
    the steps that read no log are skipped."""

    def setUp(self) -> None:
        import tempfile
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.work = Path(tmp.name)

    def reads(self, command, keep: tuple = ()) -> tuple:
        """command() with the kernel faked and the steps but those @keep
        names skipped: (the reads of each test.log, the paths ktap.parse
        was given, stdout); self.prepare is worktree.prepare's mock."""
        import collections
        import contextlib
        import io
        from unittest import mock
        fixture = (DATA / 'ktap-every-record.log').read_bytes()
        parsed, opened = [], collections.Counter()
        real_parse, real_open = ktap.parse, open

        def counting_parse(lines, log=None):
            parsed.append(getattr(lines, 'name', None))
            return real_parse(lines, log)

        def counting_open(file, mode='r', *args, **kwargs):
            if str(file).endswith('test.log') and not set(mode) & set('wax+'):
                opened[str(file)] += 1
            return real_open(file, mode, *args, **kwargs)

        def boot(settings, source):
            log = settings.build_dir / 'test.log'
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_bytes(fixture)
            return 0, log

        def nothing(*args, **kwargs):
            return None

        skipped = {name: nothing for name in (
            'unit_test_step', 'series_step', 'export_step', 'bloat_step',
            'plain_step', 'kconfig_step', 'bisectable_step', 'mutants_step',
            'mutate_step', 'bisect_demo_step', 'twice_step', 'selftest_step')
            if name not in keep}
        with mock.patch('tcpopt.run_checks.build_and_boot', boot), \
                mock.patch.multiple('tcpopt.pipeline', **skipped), \
                mock.patch('tcpopt.tree.worktree.prepare',
                           return_value=self.work) as self.prepare, \
                mock.patch('tcpopt.run_checks.kernel_version',
                           return_value='6.1.192'), \
                mock.patch('tcpopt.layout.dissect.find_tshark',
                           return_value='tshark'), \
                mock.patch('tcpopt.layout.dissect.run_tshark',
                           return_value=[]), \
                mock.patch('tcpopt.log.ktap.parse', counting_parse), \
                mock.patch('builtins.open', counting_open), \
                mock.patch('io.open', counting_open), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            command()
        return dict(opened), sorted(parsed), out.getvalue()

    def log(self, tree: str = TEST_TREES[0], sanitize: bool = False) -> str:
        from tcpopt.core.settings import Settings
        return str(Settings.create(tree, self.work, sanitize=sanitize)
                   .build_dir / 'test.log')

    def test_the_test_command_reads_each_log_once(self) -> None:
        from tcpopt.core.settings import Settings
        trees = [Settings.create(tree, self.work) for tree in TEST_TREES]
        opened, parsed, out = self.reads(lambda: pipeline.cmd_test(trees))
        # The last tree's every step takes the debug kernel's one log.
        logs = [self.log(tree) for tree in TEST_TREES[:-1]] + \
            [self.log(TEST_TREES[-1], sanitize=True)]
        self.assertIn('tshark decodes every 7.3 layout', out)
        self.assertIn('KFENCE and lockdep: 1 (KASAN 1) splats in', out)
        self.assertEqual(opened, {log: 1 for log in logs})
        self.assertEqual(parsed, sorted(logs))

    def test_without_tree_names_a_build_free_tree_boots_nothing(self) -> None:
        from tcpopt.core.settings import Settings
        trees = [Settings.create(tree, self.work) for tree in TEST_TREES]
        opened, parsed, out = self.reads(
            lambda: pipeline.cmd_test(trees, named=False))
        logs = [self.log(tree) for tree in TEST_TREES
                if tree not in BUILD_FREE_IN_CI][:-1] + \
            [self.log(TEST_TREES[-1], sanitize=True)]
        self.assertEqual(opened, {log: 1 for log in logs})
        self.assertNotIn('KUnit suites in QEMU (linux-source-6.12)', out)

    def test_layouts_capture_and_sanitize_read_the_log_once(self) -> None:
        from tcpopt.core.settings import Settings
        plain = Settings.create(TEST_TREES[0], self.work)
        sanitized = Settings.create(TEST_TREES[0], self.work, sanitize=True)
        for name, command, log in (
                ('layouts', lambda: commands.cmd_layouts(plain), self.log()),
                ('capture', lambda: commands.cmd_capture(plain), self.log()),
                ('run --sanitize', lambda: commands.cmd_run(sanitized),
                 self.log(sanitize=True))):
            with self.subTest(name):
                opened, parsed, _ = self.reads(command)
                self.assertEqual((opened, parsed), ({log: 1}, [log]))

    def test_the_test_command_prepares_each_tree_once(self) -> None:
        """The KUnit and the series steps share the tree's one prepare()."""
        from unittest import mock
        from tcpopt.core.settings import Settings
        trees = [Settings.create(tree, self.work) for tree in TEST_TREES]
        with mock.patch('tcpopt.pipeline.patchset.check', return_value=[]), \
                mock.patch('tcpopt.pipeline.patchset.kunitconfig_problems',
                           return_value=[]):
            self.reads(lambda: pipeline.cmd_test(trees),
                       keep=('series_step',))
        prepared = [call.args[0] for call in self.prepare.call_args_list]
        self.assertEqual([(s.tree, s.sanitize) for s in prepared],
                         [(tree, tree == TEST_TREES[-1])
                          for tree in TEST_TREES])

if __name__ == '__main__':
    unittest.main()

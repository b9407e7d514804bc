"""Each command's handler: settings from the arguments, then the command.

The trees' settings come from the parsed arguments and are checked
before any work (no package installed, no tree prepared), then the
command itself runs (commands.py, pipeline.py)."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path
from typing import List, Optional

from tcpopt.commands import (Output, cmd_bench, cmd_bisect_demo, cmd_capture,
                             cmd_clean, cmd_compare, cmd_hot_path, cmd_kconfig,
                             cmd_layouts, cmd_mutants, cmd_mutate, cmd_parse,
                             cmd_plain, cmd_run, cmd_selftest, cmd_series)
from tcpopt.core import deps
from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import (BACKPORTED, DEFAULT_TREE, MUTATION_SEED,
                                  TEST_TREES, Settings)
from tcpopt.log.expected import filter_problem
from tcpopt.mutation import generated
from tcpopt.pipeline import cmd_test
from tcpopt.selftest.runner import check_tree as check_selftest_tree
from tcpopt.tree import backports
from tcpopt.tree.identity import kernel_version


def existing(patches: Optional[List[Path]]) -> List[Path]:
    for patch in patches or []:
        if not patch.is_file():
            raise HarnessError(f'--inject {patch}: no such file')
    return [patch.resolve() for patch in patches or []]


def source_settings(directory: Path, sanitize: bool) -> Settings:
    """--source DIR: a readable kernel tree, and the series it takes."""
    directory = directory.expanduser().resolve()
    if not (directory / 'Makefile').is_file():
        raise UsageError(f'--source {directory}: not the top of a kernel '
                         'source tree (no Makefile)')
    return Settings.for_source(directory, kernel_version(directory),
                               sanitize=sanitize)


def install(trees: List[Settings]) -> None:
    """The Debian packages of these trees, and the backported ones."""
    deps.ensure_packages(deps.required_packages(
        *[package for tree in trees for package in tree.apt_packages]))
    for settings in trees:
        if settings.tree in BACKPORTED and not settings.user_source:
            backports.ensure(settings.work_dir, settings.tree)


def tree_settings(args: argparse.Namespace) -> List[Settings]:
    """The trees the command runs on, with its --build_dir, --filter,
    --jobs and --timeout (over TCPOPT_JOBS and TCPOPT_KUNIT_TIMEOUT)."""
    # The test command covers every tree unless one is named.
    names = args.tree or \
        (list(TEST_TREES) if args.command == 'test' else [DEFAULT_TREE])
    sanitize = getattr(args, 'sanitize', False) or \
        getattr(args, 'twice', False)
    source = getattr(args, 'source', None)
    trees = [source_settings(source, sanitize)] if source else \
        [Settings.create(name, sanitize=sanitize) for name in names]
    build_dir = getattr(args, 'build_dir', None)
    return [dataclasses.replace(
        settings, filter_glob=getattr(args, 'filter_glob', None),
        build_override=build_dir and build_dir.expanduser().resolve(),
        jobs=getattr(args, 'jobs', None) or settings.jobs,
        kunit_timeout=getattr(args, 'timeout', None) or
        settings.kunit_timeout)
        for settings in trees]


def installed_tree(args: argparse.Namespace) -> Settings:
    """The one tree of a command with nothing more to check, installed."""
    trees = tree_settings(args)
    install(trees)
    return trees[0]


def check_filter(glob: Optional[str], settings: Settings) -> None:
    problem = filter_problem(glob, settings.kunit_dir) if glob else None
    if problem:
        raise UsageError(problem)


def check_twice(settings: Settings) -> None:
    if not settings.has_kunit_debugfs_run:
        raise UsageError(f'--twice: KUnit runs a suite again from debugfs '
                         f'since Linux 6.7; {settings.tree} cannot (use '
                         '--tree 6.12 or 7.3)')


TRAILER = re.compile(r'[A-Za-z][A-Za-z0-9-]*: \S.*')


def check_trailers(trailers: List[str], export: Optional[Path]) -> None:
    if trailers and not export:
        raise UsageError('--trailer goes with --export DIR')
    for trailer in trailers:
        if not TRAILER.fullmatch(trailer):
            raise UsageError(f'--trailer {trailer!r}: want "Key: value", '
                             "e.g. 'Cc: netdev@vger.kernel.org'")


def output_of(args: argparse.Namespace) -> Output:
    return Output(args.json, args.raw_output)


def run_handler(args: argparse.Namespace) -> int:
    settings = tree_settings(args)[0]
    check_filter(args.filter_glob, settings)
    if args.twice:
        check_twice(settings)
    install([settings])
    return cmd_run(settings, existing(args.inject), output_of(args),
                   twice=args.twice)


def test_handler(args: argparse.Namespace) -> int:
    trees = tree_settings(args)
    install(trees)
    return cmd_test(trees, quick=args.quick, every=args.all_steps,
                    named=bool(args.tree))


def json_took_the_log(args: argparse.Namespace) -> None:
    """'parse --json LOG': argparse hands LOG to --json as its file, which
    would overwrite the log. A word after a bare --json is parse's LOG;
    a file for the JSON is written --json=FILE."""
    argv = args.argv
    if args.log is not None or args.json in (None, 'stdout') or \
            '--json' not in argv:
        return
    following = argv[argv.index('--json') + 1:argv.index('--json') + 2]
    if following == [args.json]:
        args.log, args.json = Path(args.json), 'stdout'


def parse_handler(args: argparse.Namespace) -> int:
    """Only reads a log: nothing to install."""
    json_took_the_log(args)
    return cmd_parse(tree_settings(args)[0], args.log, output_of(args))


def layouts_handler(args: argparse.Namespace) -> int:
    trees = tree_settings(args)
    if args.compare:
        # Only reads the trees' last runs: nothing to install.
        return cmd_compare([Settings.create(name) for name in args.compare])
    install(trees)
    return cmd_layouts(trees[0], update=args.update, png=args.png,
                       inject=existing(args.inject))


def capture_handler(args: argparse.Namespace) -> int:
    return cmd_capture(installed_tree(args))


def mutants_handler(args: argparse.Namespace) -> int:
    return cmd_mutants(installed_tree(args))


def mutate_handler(args: argparse.Namespace) -> int:
    trees = tree_settings(args)
    generated.check_arguments(args.functions, args.ids)
    functions = generated.expand(args.functions)
    install(trees)
    seed = MUTATION_SEED if args.seed is None else args.seed
    return cmd_mutate(trees[0], functions, args.sample, seed, args.list,
                      args.ids, args.report)


def bisect_demo_handler(args: argparse.Namespace) -> int:
    return cmd_bisect_demo(installed_tree(args))


def bench_handler(args: argparse.Namespace) -> int:
    settings = installed_tree(args)
    if args.hot_path:
        return cmd_hot_path(settings)
    return cmd_bench(settings, costs=args.kunitconfig_costs, argv=args.argv)


def series_action(args: argparse.Namespace) -> str:
    """The one of --regen, --export, --build-check and --cost given (they
    exclude each other), else the check."""
    return 'regen' if args.regen else \
        'export' if args.export else \
        'build-check' if args.build_check else \
        'cost' if args.cost else 'check'


def series_handler(args: argparse.Namespace) -> int:
    trees = tree_settings(args)
    check_trailers(args.trailer, args.export)
    install(trees)
    return cmd_series(trees[0], series_action(args), args.export and
                      args.export.expanduser().resolve(), args.trailer)


def kconfig_handler(args: argparse.Namespace) -> int:
    return cmd_kconfig(installed_tree(args))


def plain_handler(args: argparse.Namespace) -> int:
    return cmd_plain(installed_tree(args))


def selftest_handler(args: argparse.Namespace) -> int:
    """On the debug kernel, the one the test command's plain step builds."""
    trees = [dataclasses.replace(settings, sanitize=True)
             for settings in tree_settings(args)]
    check_selftest_tree(trees[0])
    install(trees)
    return cmd_selftest(trees[0], args.tests, args.unfixed, args.test_timeout)


def clean_handler(args: argparse.Namespace) -> int:
    """Every tree's work dir unless one is named; installs nothing."""
    trees = tree_settings(args) if args.tree else \
        [Settings.create(name) for name in TEST_TREES]
    return cmd_clean(trees, args.keep_build)

"""run.sh's command line: its commands and options, parsed and dispatched.

The commands and their options (argparse), and main, which hands the
parsed arguments to the command's handler."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from tcpopt import handlers
from tcpopt.argparser import Parser, positive
from tcpopt.core.errors import (EXIT_FAILED, EXIT_HELP, EXIT_INTERRUPTED,
                                EXIT_USAGE, HarnessError, SetupError,
                                UsageError, no_space)
from tcpopt.core.settings import (DEFAULT_KUNIT_TIMEOUT, DEFAULT_TREE,
                                  MUTATION_SEED, TREES, version_key)
from tcpopt.pipeline import test_help


# The mutually exclusive groups: the options that name the trees another
# way than --tree, and the series command's actions.
TREE_CHOICE, SERIES_ACTION = 'tree', 'series action'


def add_tree_opts(parser: Parser) -> None:
    parser.add_argument('--tree', choices=sorted(TREES, key=version_key),
                        action='append', one_of=TREE_CHOICE,
                        help=f'kernel tree (default {DEFAULT_TREE}; the test '
                        'command runs every tree unless one is named)')


def add_build_opts(parser: Parser) -> None:
    parser.add_argument('--jobs', type=positive, metavar='N',
                        help='make -jN (default: one per CPU)')


def add_exec_opts(parser: Parser) -> None:
    parser.add_argument('--timeout', type=positive, metavar='SECONDS',
                        help='how long the kernel may run in QEMU (default '
                        f'{DEFAULT_KUNIT_TIMEOUT}, or $TCPOPT_KUNIT_TIMEOUT)')


def add_output_opts(parser: Parser) -> None:
    parser.add_argument('--json', nargs='?', const='stdout', metavar='FILE',
                        help='the verdict and the layout table as JSON, to '
                        'FILE or (without one) to stdout; everything else '
                        'then goes to stderr')
    parser.add_argument('--raw_output', nargs='?', const='all',
                        choices=('all', 'kunit'),
                        help='print the kernel\'s console output (all, the '
                        'default) or its KTAP part (kunit) instead of the '
                        'layout table')


def add_inject_opt(parser: Parser) -> None:
    parser.add_argument('--inject', action='append', type=Path,
                        metavar='PATCH',
                        help='apply PATCH on top of the series for this run '
                        'only (a fault to show the suites catch it); the '
                        'next run without it rebuilds the clean tree')


def add_filter_opt(parser: Parser) -> None:
    parser.add_argument('--filter', metavar='GLOB', dest='filter_glob',
                        help='only the suites (and cases) matching GLOB, '
                        'kunit.py\'s filter_glob: suite_glob[.test_glob]; '
                        'cases it leaves out are not due')


def add_run_opts(parser: Parser) -> None:
    parser.add_argument('--sanitize', action='store_true',
                        help='build with KASAN, UBSAN and KFENCE in a '
                        'separate build dir; any sanitizer report fails')
    parser.add_argument('--twice', action='store_true',
                        help='with the --sanitize build (implied), then boot '
                        'it once more and run every suite a second time in '
                        "the same boot, through KUnit's debugfs run file "
                        '(Linux 6.7 and later); any failure or splat fails')
    add_inject_opt(parser)
    parser.add_argument('--source', type=Path, metavar='DIR',
                        one_of=TREE_CHOICE, help='the suites on your own kernel tree or git '
                        'checkout (6.1 or later), with the series of the '
                        'nearest supported tree; DIR is only read, its copy '
                        'and warm build live in the work dir')
    add_filter_opt(parser)
    parser.add_argument('--build_dir', type=Path, metavar='DIR',
                        help='kunit.py --build_dir (default <work '
                        'dir>/<tree>/build)')


def add_layouts_opts(parser: Parser) -> None:
    parser.add_argument('--update', action='store_true',
                        help='rewrite docs/layouts/<tree>.md and its '
                        'pictures from this run')
    parser.add_argument('--png', action='store_true',
                        help='with --update: PNGs too, if rsvg-convert '
                        '(librsvg2-bin) is installed')
    parser.add_argument('--compare', nargs='+', metavar='TREE',
                        choices=sorted(TREES, key=version_key),
                        one_of=TREE_CHOICE,
                        help='side-by-side table of the cases that differ '
                        'between two or three trees, oldest first, with the '
                        'reason')
    add_inject_opt(parser)


def add_mutate_opts(parser: Parser) -> None:
    parser.add_argument('--functions', type=lambda text: text.split(','),
                        metavar='F,...',
                        help='only these functions (default: all the '
                        'targets in tools/tcpopt/mutation/targets.py), or '
                        'a group, whose run writes docs/mutation/<tree>-'
                        '<group>.md: "layout", the layout functions of the '
                        'upstream series; "tcp", the targets in tcp_output.c '
                        'and tcp_input.c; "mptcp", those in '
                        'net/mptcp/options.c')
    parser.add_argument('--sample', type=positive, metavar='N',
                        help='N mutants picked with --seed')
    parser.add_argument('--seed', type=int, metavar='S',
                        help=f'the sample\'s seed (default {MUTATION_SEED}, '
                        'the one the test command uses)')
    parser.add_argument('--list', action='store_true',
                        help='print the mutants, run nothing')
    parser.add_argument('--ids', type=lambda text: text.split(','),
                        metavar='ID,...',
                        help='only these mutants (ids from --list)')
    parser.add_argument('--report', action='store_true',
                        help='write docs/mutation/<tree>[-<group>].md from '
                        'the verdicts kept (the work dir and tools/mutation/'
                        '<tree>.verdicts), run nothing; works while a run '
                        'goes on')


def add_selftest_opts(parser: Parser) -> None:
    parser.add_argument('tests', nargs='*', metavar='TEST',
                        help='TCP-AO selftests by name, as in '
                        'tools/testing/selftests/net/tcp_ao/Makefile (default: '
                        'all; each runs as _ipv4 and _ipv6)')
    parser.add_argument('--test-timeout', type=positive, metavar='S',
                        help='seconds each binary may run (default: the '
                        'folder\'s settings file, 120)')
    parser.add_argument('--no-unfixed', dest='unfixed', action='store_false',
                        help='skip the second boot, the syncookie selftest '
                        'on the tree without the fix')


def add_series_opts(parser: Parser) -> None:
    parser.add_argument('--regen', action='store_true', one_of=SERIES_ACTION,
                        help='rewrite the test files in kernel-patches/<tree> '
                        'from kunit/')
    parser.add_argument('--export', type=Path, metavar='DIR',
                        one_of=SERIES_ACTION, help='write the series for posting to DIR (git '
                        'format-patch signed with your git user.name and '
                        'user.email; on a tree with two layers, the fix as '
                        'DIR/net/ [PATCH net] and the rest of upstream/ as '
                        'DIR/net-next/ [PATCH net-next n/m]), then run '
                        'checkpatch.pl --strict and get_maintainer.pl')
    parser.add_argument('--build-check', action='store_true',
                        one_of=SERIES_ACTION, help='build the objects each patch of the upstream '
                        'layer touches with W=1 under gcc and clang-19, '
                        'patch by patch; any new warning fails')
    parser.add_argument('--cost', action='store_true', one_of=SERIES_ACTION,
                        help="what the upstream layer costs tcp_output.o: "
                        'bloat-o-meter and .text against the pristine tree '
                        'plus the fixes, CONFIG_KUNIT off and on')
    parser.add_argument('--trailer', action='append', default=[],
                        metavar="'KEY: VALUE'",
                        help='with --export: add this trailer to every '
                        "commit (git commit --trailer), e.g. 'Cc: ...'; "
                        'repeatable')


def add_test_opts(parser: Parser) -> None:
    parser.add_argument('--quick', action='store_true',
                        help='skip the sanitizer build')
    parser.add_argument('--all-steps', action='store_true',
                        help='every build-heavy step on every tree named, '
                        'not only those CI runs there (README): e.g. '
                        '--tree 6.12 --all-steps')


def add_parse_opts(parser: Parser) -> None:
    parser.add_argument('log', nargs='?', type=Path, metavar='LOG',
                        help='a KUnit console log, only read (default: the '
                        'last run\'s <work dir>/<tree>/build/test.log); a '
                        'word right after --json is the LOG: write '
                        '--json=FILE for a file')
    add_filter_opt(parser)


def add_clean_opts(parser: Parser) -> None:
    parser.add_argument('--keep-build', action='store_true',
                        help='keep the extracted tree, the patched tree and '
                        'the main build (the next run stays warm); remove '
                        'the scratch trees only')


def add_bench_opts(parser: Parser) -> None:
    parser.add_argument('--kunitconfig-costs', action='store_true',
                        help='also build without each .kunitconfig option '
                        'and report what it costs')
    parser.add_argument('--hot-path', action='store_true',
                        help='only the hot path, pristine against patched, '
                        'with its verdict (median ratio <= 1.02)')


# command: (what it does, its option groups). Every command takes --tree.
SUBCOMMANDS = {
    'run': ('build, run the suites in QEMU and print the layout table (the '
            'default command)',
            (add_run_opts, add_build_opts, add_exec_opts, add_output_opts)),
    'test': ('the test command (what .ci/run calls)',
             (add_test_opts, add_build_opts, add_exec_opts)),
    'parse': ('read an existing KUnit log and print its verdict and layout '
              'table, as kunit.py parse; a filtered run\'s log is judged '
              'by its filter', (add_parse_opts, add_output_opts)),
    'layouts': ('check docs/layouts/<tree>.md against this run',
                (add_layouts_opts, add_build_opts, add_exec_opts)),
    'capture': ('run the suites, write the tcp_opt_live packets to <work '
                'dir>/<tree>/capture/live.pcap and check it with tshark',
                (add_build_opts, add_exec_opts)),
    'mutants': ('the kill matrix of kernel-patches/regressions/',
                (add_build_opts, add_exec_opts)),
    'mutate': ('generated mutants of the option code, run (resuming where a '
               'run stopped) and scored; the full run writes '
               'docs/mutation/<tree>.md', (add_mutate_opts, add_build_opts)),
    'bisect-demo': ('git bisect run tools/bisect-layout on a synthetic '
                    'history', ()),
    'bench': ('time the developer loop (cold, warm, edits, QEMU boots) and '
              'the hot path; writes <work dir>/bench/performance.md',
              (add_bench_opts,)),
    'series': ('check that kernel-patches/<tree> matches kunit/',
               (add_series_opts,)),
    'kconfig': ('the Kconfig matrix', (add_build_opts,)),
    'plain': ('export, git am and plain kunit.py, as a reviewer would', ()),
    'selftest': ('the TCP-AO selftests (tools/testing/selftests/net/tcp_ao) on '
                 'the series\' debug kernel in QEMU, then the syncookie one '
                 'on the tree without the fix, where it must fail',
                 (add_selftest_opts,)),
    'clean': ('remove the work dir of a tree (every tree without --tree), '
              'or with --keep-build only its scratch trees',
              (add_clean_opts,)),
}


OptionGroup = Callable[[Parser], None]


def options_of(groups: Sequence[OptionGroup]) -> List[argparse.Action]:
    """The options @groups add, read off a parser of their own."""
    probe = Parser(add_help=False)
    for group in groups:
        group(probe)
    return probe.options


# Every command's options, --tree included, as argparse keeps them.
EVERY_OPTION = [action for _, groups in SUBCOMMANDS.values()
                for action in options_of((add_tree_opts, *groups))]
# The options that take a value: a command name after one is that value.
TAKES_VALUE = frozenset(option for action in EVERY_OPTION
                        if action.nargs != 0
                        for option in action.option_strings)
# Where argparse keeps each option's value: --filter's is filter_glob.
DEST = {option: action.dest for action in EVERY_OPTION
        for option in action.option_strings}
# Options that exclude each other beyond the groups: argparse puts an
# option in one group only, and --compare's is --tree's (--update and
# --inject, which go together, cannot share one with it).
EXCLUSIVE = (('--compare', '--update'), ('--compare', '--inject'))


def build_parser() -> Parser:
    parser = Parser(
        prog='run.sh', epilog=EXIT_HELP,
        description='Build the TCP option KUnit suites on a Debian kernel '
        'tree and run them under QEMU. Without a command: run. '
        '"./run.sh COMMAND --help" lists a command\'s options.')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND',
                                     parser_class=Parser)
    for name, (text, groups) in SUBCOMMANDS.items():
        epilog = (test_help() + '\n\n' if name == 'test' else '') + EXIT_HELP
        sub = commands.add_parser(
            name, help=text, description=text, epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        add_tree_opts(sub)
        for group in groups:
            group(sub)
    return parser


def commands_taking(option: str) -> List[str]:
    """The commands that take @option, e.g. '--quick'."""
    return [name for name, (_, groups) in SUBCOMMANDS.items()
            if any(option in action.option_strings
                   for action in options_of(groups))]


def with_command_first(argv: List[str]) -> List[str]:
    """kunit.py wants the command first; run.sh also takes it after the
    options ('./run.sh --tree 6.12 test') and defaults to run."""
    if argv[:1] in (['-h'], ['--help']):
        return argv
    for index, arg in enumerate(argv):
        if arg in SUBCOMMANDS and (index == 0 or
                                   argv[index - 1] not in TAKES_VALUE):
            return [arg] + argv[:index] + argv[index + 1:]
    return ['run'] + argv


def usage_problem(args: argparse.Namespace) -> Optional[str]:
    """Why these options do not fit together; None if they do."""
    if args.tree and len(args.tree) > 1:
        return f'--tree given {len(args.tree)} times ' \
            f'({", ".join(args.tree)}): name one tree'
    for first, second in EXCLUSIVE:
        if getattr(args, DEST[first], None) and \
                getattr(args, DEST[second], None):
            return f'{args.command}: give {first} or {second}, not both'
    compare = getattr(args, 'compare', None)
    if compare and (not 2 <= len(compare) <= 3 or
                    compare != sorted(set(compare), key=version_key)):
        return '--compare takes 2 or 3 different trees, oldest first'
    if getattr(args, 'png', False) and not args.update:
        return '--png only goes with --update'
    return None


def parse_args(argv: List[str]) -> argparse.Namespace:
    """The command and its options, or a UsageError: an option the
    command does not take names the commands that do."""
    args, extra = build_parser().parse_known_args(with_command_first(argv))
    if extra:
        option = extra[0].split('=', 1)[0]
        takers = commands_taking(option) if option.startswith('-') else []
        if takers:
            raise UsageError(f'{option} only applies to ' + ' and '.join(
                f'./run.sh {name}' for name in takers))
        if not option.startswith('-'):
            raise UsageError(f'{args.command}: unexpected {extra[0]!r} '
                             f'(commands: {", ".join(SUBCOMMANDS)})')
        raise UsageError(f'{args.command}: unrecognized arguments: '
                         f'{" ".join(extra)}')
    problem = usage_problem(args)
    if problem:
        raise UsageError(problem)
    # As typed: the bench's report quotes it, parse reads --json LOG off it.
    args.argv = argv
    return args


# The one dispatch table: a command's handler takes the parsed arguments
# and returns the exit status.
HANDLERS: Dict[str, Callable[[argparse.Namespace], int]] = {
    'run': handlers.run_handler, 'test': handlers.test_handler,
    'parse': handlers.parse_handler, 'layouts': handlers.layouts_handler,
    'capture': handlers.capture_handler,
    'mutants': handlers.mutants_handler, 'mutate': handlers.mutate_handler,
    'bisect-demo': handlers.bisect_demo_handler,
    'bench': handlers.bench_handler, 'series': handlers.series_handler,
    'kconfig': handlers.kconfig_handler, 'plain': handlers.plain_handler,
    'selftest': handlers.selftest_handler,
    'clean': handlers.clean_handler}


def silence_stdout() -> None:
    """File 1 to /dev/null: the interpreter's last flush of stdout, at
    exit, then meets no broken pipe either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
        return HANDLERS[args.command](args)
    except BrokenPipeError:
        # stdout closed early ('| head'): not worth a traceback. Before
        # OSError, which would take it: a broken pipe is one.
        silence_stdout()
        return EXIT_FAILED
    except (UsageError, SetupError) as error:
        print(f'run.sh: error: {error}', file=sys.stderr)
        return EXIT_USAGE
    except HarnessError as error:
        print(f'run.sh: error: {error}', file=sys.stderr)
        return EXIT_FAILED
    except OSError as error:
        if not no_space(error):
            raise
        print(f'run.sh: error: {no_space(error)}', file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print('run.sh: interrupted; the next run picks up where this one '
              'stopped', file=sys.stderr)
        return EXIT_INTERRUPTED

"""What a new user hit (issue 26): each misuse gets one line and the right
exit status before any work, and parse never writes to what it reads."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import List, Tuple
from unittest import mock

from tcpopt import cli
from tcpopt.core import workdir
from tcpopt.core.errors import EXIT_HELP, SetupError
from tcpopt.core.settings import REPO, Settings
from tcpopt.log import ktap
from tcpopt.log.report import as_json, judge
from tcpopt.tree import kernel

DATA = Path(__file__).resolve().parent / 'data'

# A filtered run's log, as kunit.py's kernel prints it: the filter on the
# command line, then only the suite it picked.
FILTERED_LOG = '''\
Command line: kunit.filter_glob=tcp_opt_syn* kunit.enable=1 console=ttyS0
Kernel command line: kunit.filter_glob=tcp_opt_syn* kunit.enable=1 \
console=ttyS0
KTAP version 1
1..1
    KTAP version 1
    # Subtest: tcp_opt_syn
    1..1
    ok 1 tcp_opt_syn_mss_only
# tcp_opt_syn: pass:1 fail:0 skip:0 total:1
ok 1 tcp_opt_syn
'''


class CommandTestCase(unittest.TestCase):
    """cli.main in a scratch work dir; nothing may be installed or
    prepared unless a test says so."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(subprocess.run, ['rm', '-rf', str(self.tmp)])
        patcher = mock.patch.dict(os.environ,
                                  {'TCPOPT_WORK_DIR': str(self.tmp / 'w')})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.work: List[str] = []

        def no_work(*args: object, **kwargs: object) -> None:
            self.work.append('install or prepare')
            raise AssertionError('work started before the arguments were '
                                 'checked')
        for target in ('tcpopt.handlers.install',
                       'tcpopt.tree.worktree.prepare',
                       'tcpopt.commands.kunit_step',
                       'tcpopt.run_checks.kunit_step'):
            patcher = mock.patch(target, side_effect=no_work)
            patcher.start()
            self.addCleanup(patcher.stop)

    def main(self, *argv: str) -> Tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(list(argv))
        return status, out.getvalue(), err.getvalue()

    def log(self, text: str, name: str = 'test.log') -> Path:
        path = self.tmp / name
        path.write_text(text)
        return path

    def assert_one_line(self, err: str, text: str) -> None:
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith('run.sh: error: '), err)
        self.assertIn(text, lines[0])


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


class ParseNeverWritesItsLogTest(CommandTestCase):
    """1. 'parse --json LOG' wrote the JSON over LOG."""

    def test_json_then_log_reads_the_log_and_prints_json(self) -> None:
        log = self.log((DATA / 'ktap-pass.log').read_text())
        before = md5(log)
        # A process of its own: --json to stdout writes to file 1 itself.
        result = subprocess.run(
            [str(REPO / 'run.sh'), 'parse', '--json', str(log)],
            capture_output=True, text=True, check=False)
        self.assertEqual(md5(log), before)
        self.assertIn('cases', json.loads(result.stdout))

    def test_json_file_equal_to_the_log_is_refused(self) -> None:
        log = self.log((DATA / 'ktap-pass.log').read_text())
        before = md5(log)
        status, _, err = self.main('parse', f'--json={log}', str(log))
        self.assertEqual(status, 2)
        self.assert_one_line(err, 'is the log parse reads')
        self.assertEqual(md5(log), before)

    def test_a_missing_log_is_the_one_named(self) -> None:
        status, _, err = self.main('parse', '--json', '/nonexistent/test.log')
        self.assertEqual(status, 2)
        self.assert_one_line(err, '/nonexistent/test.log: no such KUnit log')


class ParseTakesTheRunsFilterTest(CommandTestCase):
    """3. parse judged a filtered run's log against every case."""

    def test_the_filter_on_the_command_line_is_taken(self) -> None:
        status, out, _ = self.main('parse', str(self.log(FILTERED_LOG)))
        self.assertEqual(status, 0, out)
        self.assertIn('1 passed', out)
        self.assertIn('0 missing', out)
        self.assertIn('filter tcp_opt_syn*', out)

    def test_without_the_filter_every_case_is_due(self) -> None:
        text = FILTERED_LOG.replace('kunit.filter_glob=tcp_opt_syn* ', '')
        status, out, _ = self.main('parse', str(self.log(text)))
        self.assertEqual(status, 1)
        self.assertNotIn(' 0 missing', out)

    def test_filter_option_as_run_takes_it(self) -> None:
        text = FILTERED_LOG.replace('kunit.filter_glob=tcp_opt_syn* ', '')
        status, out, _ = self.main('parse', '--filter', 'tcp_opt_syn*',
                                   str(self.log(text)))
        self.assertEqual(status, 0, out)


class ParseNeedsKtapTest(CommandTestCase):
    """9. Random bytes, plain text, an empty file, a directory."""

    def test_no_ktap(self) -> None:
        for name, data in (('random', os.urandom(4096)),
                           ('text', b'hello\nworld\n'), ('empty', b'')):
            with self.subTest(name):
                path = self.tmp / name
                path.write_bytes(data)
                status, _, err = self.main('parse', str(path))
                self.assertEqual(status, 2)
                self.assert_one_line(err, f'no KTAP output in {path}')

    def test_a_directory(self) -> None:
        status, _, err = self.main('parse', str(self.tmp))
        self.assertEqual(status, 2)
        self.assert_one_line(err, f'{self.tmp} is a directory')


class ArgumentsCheckedBeforeWorkTest(CommandTestCase):
    """2 and 7: nothing is installed, unpacked or built first."""

    REFUSED = (
        (('mutate', '--sample', '3', '--ids', 'a'),
         '--ids: no such mutant a'),
        (('mutate', '--functions', 'tcp_nope'),
         '--functions: no such target tcp_nope'),
        (('run', '--filter', 'tcp_opt_sny*'),
         "--filter 'tcp_opt_sny*' matches no suite"),
        (('run', '--filter', 'tcp_opt_syn.nope'),
         "'nope' matches no KUNIT_CASE"),
    )

    def test_refused_with_one_line_before_any_work(self) -> None:
        for argv, text in self.REFUSED:
            with self.subTest(argv=argv):
                status, _, err = self.main(*argv)
                self.assertEqual((status, self.work), (2, []))
                self.assert_one_line(err, text)


class CompareReadsLastRunsTest(CommandTestCase):
    """4. layouts --compare installed packages and built cold trees."""

    def test_trees_without_a_run_are_named(self) -> None:
        status, _, err = self.main('layouts', '--compare', '6.1', '6.12',
                                   '7.3')
        self.assertEqual((status, self.work), (2, []))
        self.assert_one_line(err, '--compare: no last run of 6.1, 6.12, 7.3')


class SetupErrorsExitTwoTest(CommandTestCase):
    """6. One contract: 2 for a usage or set-up error, 1 for a failure."""

    def test_missing_packages_exit_two(self) -> None:
        with mock.patch('tcpopt.handlers.install',
                        side_effect=SetupError('missing Debian packages: x')):
            status, _, err = self.main('run')
        self.assertEqual(status, 2)
        self.assert_one_line(err, 'missing Debian packages: x')

    def test_help_and_readme_say_so(self) -> None:
        self.assertIn('2 a usage or set-up error', EXIT_HELP)
        readme = (REPO / 'README.md').read_text()
        self.assertIn('2 a usage or set-up error', ' '.join(readme.split()))


class JsonCarriesTheWordsTest(unittest.TestCase):
    """--json had the packetdrill text but not docs/layouts' raw words."""

    def test_each_layout_has_its_words(self) -> None:
        run = ktap.read(DATA / 'layouts-sample.log')
        document = as_json('6.1', judge(run, []), run)
        layouts = [layout for case in document['cases']
                   for layout in case['layouts']]
        self.assertTrue(layouts)
        with_words = [layout for layout in layouts if layout['words']]
        self.assertTrue(with_words)
        first = with_words[0]
        # 4 bytes a word, the layout's size in all.
        self.assertEqual(4 * len(first['words']), first['size'])


class CleanTest(unittest.TestCase):
    """./run.sh clean [--tree T] [--keep-build]: the work dir's 12 GB."""

    def setUp(self) -> None:
        self.work = Path(tempfile.mkdtemp())
        self.addCleanup(subprocess.run, ['rm', '-rf', str(self.work)])
        self.tree = self.work / '6.1'
        for name in ('pristine', 'src', 'build', 'mutants/src', 'git/src',
                     'build-sanitize'):
            (self.tree / name).mkdir(parents=True)
            (self.tree / name / 'f').write_text('x')

    def clean(self, *argv: str) -> int:
        with mock.patch.dict(os.environ, {'TCPOPT_WORK_DIR': str(self.work)}), \
                contextlib.redirect_stdout(io.StringIO()):
            return cli.main(['clean', '--tree', '6.1', *argv])

    def test_keep_build_removes_the_scratch_trees_only(self) -> None:
        self.assertEqual(self.clean('--keep-build'), 0)
        self.assertEqual(sorted(p.name for p in self.tree.iterdir()),
                         ['.lock', 'build', 'pristine', 'src'])

    def test_disk_usage_names_each_part(self) -> None:
        (self.work / 'ccache').mkdir()
        (self.tree / 'build' / 'vmlinux').write_bytes(b'\0' * 2**20)
        usage = workdir.disk_usage(self.work)
        self.assertEqual(usage['6.1/build'], round((2**20 + 1) / 2**30, 2))
        self.assertIn('6.1/mutants', usage)
        self.assertIn('ccache', usage)

    def test_clean_removes_everything_but_the_lock(self) -> None:
        self.assertEqual(self.clean(), 0)
        self.assertEqual([p.name for p in self.tree.iterdir()], ['.lock'])


class ReadmeCommandsTest(unittest.TestCase):
    """The README's command table says what --help says."""

    def rows(self) -> List[str]:
        text = (REPO / 'README.md').read_text()
        table = text.split('## Commands', 1)[1].split('\n## ', 1)[0]
        return [line for line in table.splitlines()
                if line.startswith('| `')]

    def test_every_command_is_in_the_table(self) -> None:
        named = ' '.join(self.rows())
        for command in cli.SUBCOMMANDS:
            with self.subTest(command):
                self.assertRegex(named, rf'`{command}[ `]')

    def test_every_option_in_the_table_is_its_commands(self) -> None:
        import re
        for row in self.rows():
            cell = row.split('|')[1]
            for snippet in re.findall(r'`([^`]+)`', cell):
                command = snippet.split()[0]
                for option in re.findall(r'--[a-z_-]+', snippet):
                    with self.subTest(command=command, option=option):
                        self.assertIn(command, cli.commands_taking(option))


class QuietSttyTest(unittest.TestCase):
    """10. kunit.py's 'stty sane' printed an error on every run."""

    def test_no_terminal_no_noise(self) -> None:
        result = subprocess.run([str(kernel.QUIET_STTY_DIR / 'stty'), 'sane'],
                                stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, check=False)
        self.assertEqual((result.returncode, result.stderr), (0, ''))

    def test_every_boot_finds_it_first(self) -> None:
        settings = Settings.create('6.1', Path('/w'))
        for accel in (None, kernel.Accel('tcg', 'probe failed')):
            path = kernel.boot_env(settings, accel)['PATH'].split(':')
            with self.subTest(accel=accel):
                self.assertIn(str(kernel.QUIET_STTY_DIR), path)
                self.assertLess(path.index(str(kernel.QUIET_STTY_DIR)),
                                path.index('/usr/bin') if '/usr/bin' in path
                                else len(path))


if __name__ == '__main__':
    unittest.main()

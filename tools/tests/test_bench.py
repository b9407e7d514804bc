"""bench: the developer-loop rows with a fake run.sh, the edits, the boots,
docs/performance.md; nothing is built and no QEMU runs."""

from __future__ import annotations

import datetime
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import Callable, Dict, List, Optional
from unittest import mock

from tcpopt import cli
from tcpopt.bench import hotpath, table, timings
from tcpopt.bench.kconfig_costs import Cost
from tcpopt.core.settings import REPO, Settings
from tcpopt.tree.accel import Accel, Probe

DATA = Path(__file__).resolve().parent / 'data'
KUNIT_SOURCE = ('static struct kunit_case demo_cases[] = {\n'
                '\tKUNIT_CASE(demo_test),\n\t{}\n};\n')
OUTPUT_C = b'int tcp_output;\r\n/* bytes kept as they are */\n'
PASSING_KTAP = ('KTAP version 1\n1..1\n    # Subtest: demo\n'
                '    ok 1 demo_test\nok 1 demo\n')


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeRunSh:
    """Stands in for run_logged: a run takes the seconds it is given,
    prints a QEMU line and leaves a ccache stats log."""

    def __init__(self, clock: Clock, seconds: float = 7.0,
                 status: int = 0) -> None:
        self.clock, self.seconds, self.status = clock, seconds, status
        self.calls: List[Dict[str, object]] = []
        self.during: Optional[Callable[[], None]] = None

    def __call__(self, argv: List[str], env: Dict[str, str],
                 log: Path) -> int:
        self.calls.append({'argv': argv, 'env': env, 'log': log})
        if self.during:
            self.during()
        self.clock.now += self.seconds
        log.write_text('tree: linux-source-6.1 6.1.192\n'
                       'QEMU: tcg (/dev/kvm: No such file or directory)\n')
        Path(env['CCACHE_STATSLOG']).write_text(
            '# ../src/a.c\ndirect_cache_hit\nlocal_storage_hit\n'
            '# ../src/b.c\ncache_miss\ndirect_cache_miss\n'
            '# ../src/c.c\npreprocessed_cache_hit\n')
        return self.status


class BenchTestCase(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        repo = self.root / 'repo'
        (repo / 'kunit').mkdir(parents=True)
        self.kunit_file = repo / 'kunit' / 'tcp_options_test.c'
        self.kunit_file.write_text(KUNIT_SOURCE)
        os.utime(self.kunit_file, ns=(10**18, 10**18))
        self.settings = Settings(tree='6.1', work_dir=self.root / 'work',
                                 repo=repo)
        self.output_c = self.settings.source / 'net/ipv4/tcp_output.c'
        self.output_c.parent.mkdir(parents=True)
        self.output_c.write_bytes(OUTPUT_C)
        self.clock = Clock()
        self.fake = FakeRunSh(self.clock)
        self.bench = timings.Bench(self.settings, self.fake, self.clock)
        env = mock.patch.dict(os.environ, {'CCACHE_DIR': ''})
        env.start()
        self.addCleanup(env.stop)
        quiet = mock.patch('tcpopt.bench.timings.say')
        self.said = quiet.start()
        self.addCleanup(quiet.stop)


class RunShTest(BenchTestCase):

    def test_the_real_run_sh_with_the_tree(self) -> None:
        timing = self.bench.run_sh('warm')
        call = self.fake.calls[0]
        self.assertEqual(call['argv'], [str(self.settings.repo / 'run.sh'),
                                        '--tree', '6.1'])
        self.assertEqual(timing.seconds, 7.0)
        self.assertTrue(timing.ok)
        self.assertEqual(timing.log, self.settings.work_dir / 'bench' /
                         'logs' / '6.1-warm.log')

    def test_qemu_line_and_ccache_counts_are_read_back(self) -> None:
        timing = self.bench.run_sh('warm')
        self.assertEqual(timing.qemu,
                         'tcg (/dev/kvm: No such file or directory)')
        self.assertEqual((timing.hits, timing.misses), (2, 1))
        self.assertEqual(timing.ccache(),
                         'ccache 2 hits, 1 misses (67 % hits)')

    def test_no_stats_log_means_no_ccache_note(self) -> None:
        self.assertEqual(timings.ccache_counts(self.root / 'none'),
                         (None, None))
        self.assertEqual(timings.Timing(1.0, 0, self.root).ccache(), '')


class WarmAndColdTest(BenchTestCase):

    def test_the_second_warm_run_is_the_one_timed(self) -> None:
        seconds = iter([40.0, 6.5])

        def vary() -> None:
            self.fake.seconds = next(seconds)
        self.fake.during = vary
        first, warm = timings.warm_rows(self.bench)
        self.assertEqual((first.seconds, first.target), (40.0, None))
        self.assertEqual((warm.what, warm.seconds, warm.target, warm.met),
                         ('warm, no change', 6.5, timings.TARGET_WARM, 'yes'))
        self.assertIn('QEMU: tcg (/dev/kvm: No such file or directory)',
                      warm.notes)

    def test_a_slow_warm_run_misses_its_target(self) -> None:
        self.fake.seconds = 16.0
        self.assertEqual(timings.warm_rows(self.bench)[1].met, 'no')

    def test_cold_runs_start_from_nothing_and_clean_up(self) -> None:
        cold = self.bench.cold_dir
        (cold / '6.1').mkdir(parents=True)
        seen = []
        self.fake.during = lambda: seen.append(cold.exists())
        empty = timings.cold_row(self.bench, warm_ccache=False)
        self.assertEqual(seen, [False])
        self.assertFalse(cold.exists())
        env = self.fake.calls[0]['env']
        self.assertEqual(env['TCPOPT_WORK_DIR'], str(cold))
        self.assertEqual(env['CCACHE_DIR'], str(cold / 'ccache'))
        self.assertEqual((empty.what, empty.target),
                         ('cold, empty ccache', None))
        self.assertIn(f'TCPOPT_WORK_DIR={cold}', empty.how)

    def test_cold_with_the_warm_ccache_uses_the_main_one(self) -> None:
        row = timings.cold_row(self.bench, warm_ccache=True)
        env = self.fake.calls[0]['env']
        self.assertEqual(env['CCACHE_DIR'], str(self.settings.work_dir /
                                                'ccache'))
        self.assertEqual((row.target, row.met),
                         (timings.TARGET_COLD_WARM_CCACHE, 'yes'))
        self.assertIn('ccache 2 hits, 1 misses (67 % hits)', row.notes)

    def test_a_failed_run_is_a_failed_row(self) -> None:
        self.fake.status = 1
        row = timings.cold_row(self.bench, warm_ccache=True)
        self.assertTrue(row.failed)
        self.assertEqual(row.met, 'no')
        self.assertTrue(row.notes[-1].startswith('FAILED: exit 1, see '))

    def test_the_cold_dir_goes_even_when_interrupted(self) -> None:
        def interrupt() -> None:
            (self.bench.cold_dir / '6.1').mkdir(parents=True)
            raise KeyboardInterrupt
        self.fake.during = interrupt
        with self.assertRaises(KeyboardInterrupt):
            timings.cold_row(self.bench, warm_ccache=False)
        self.assertFalse(self.bench.cold_dir.exists())


class EditTest(BenchTestCase):

    def seen_by_run_sh(self) -> List[tuple]:
        """Per run: TCPOPT_KUNIT_DIR, the test source it names (or the
        checkout's), and tcp_output.c, as run.sh would read them."""
        seen: List[tuple] = []

        def look() -> None:
            env = self.fake.calls[-1]['env']
            kunit = Path(env.get('TCPOPT_KUNIT_DIR') or self.kunit_file.parent)
            seen.append((env.get('TCPOPT_KUNIT_DIR'),
                         (kunit / self.kunit_file.name).read_bytes(),
                         self.output_c.read_bytes()))
        self.fake.during = look
        return seen

    def test_each_edit_is_run_then_undone_and_run_again(self) -> None:
        seen = self.seen_by_run_sh()
        rows = timings.edit_rows(self.bench)
        names = [Path(str(c['log'])).stem for c in self.fake.calls]
        self.assertEqual(names, ['6.1-edit-kunit', '6.1-edit-kunit-undo',
                                 '6.1-edit-tcp-output',
                                 '6.1-edit-tcp-output-undo'])
        copy, kunit_edited, output_seen = seen[0]
        self.assertEqual(Path(copy).parent.parent, self.bench.root)
        self.assertTrue(kunit_edited.startswith(KUNIT_SOURCE.encode()))
        self.assertIn(b'static const int tcpopt_bench_edit_', kunit_edited)
        self.assertEqual(output_seen, OUTPUT_C)
        self.assertEqual(seen[1][:2], (None, KUNIT_SOURCE.encode()))
        self.assertTrue(seen[2][2].startswith(OUTPUT_C))
        self.assertGreater(len(seen[2][2]), len(OUTPUT_C))
        self.assertEqual(seen[3][2], OUTPUT_C)
        self.assertEqual(rows[0].target, timings.TARGET_EDIT)
        self.assertIn('the run after undoing it: 7.0 s', rows[0].notes)

    def test_the_checkout_is_never_written(self) -> None:
        timings.edit_rows(self.bench)
        self.assertEqual(self.kunit_file.read_bytes(), KUNIT_SOURCE.encode())
        self.assertEqual(self.kunit_file.stat().st_mtime_ns, 10**18)
        self.assertEqual(self.output_c.read_bytes(), OUTPUT_C)
        self.assertEqual(sorted(p.name for p in self.bench.root.iterdir()),
                         ['logs'])

    def test_an_interrupt_during_the_run_still_restores(self) -> None:
        def interrupt() -> None:
            raise KeyboardInterrupt
        self.fake.during = interrupt
        with self.assertRaises(KeyboardInterrupt):
            timings.output_edit_row(self.bench)
        self.assertEqual(self.output_c.read_bytes(), OUTPUT_C)
        with self.assertRaises(KeyboardInterrupt):
            timings.kunit_edit_row(self.bench)
        self.assertEqual(sorted(p.name for p in self.bench.root.iterdir()),
                         ['logs'])

    def test_a_missing_source_is_not_measured(self) -> None:
        self.output_c.unlink()
        rows = timings.edit_rows(self.bench)
        self.assertTrue(rows[1].failed)
        self.assertEqual(rows[1].notes, [f'not measured: no {self.output_c}'])

    def test_the_edit_is_code_so_ccache_cannot_serve_it(self) -> None:
        text = timings.edit_text(42)
        self.assertIn('static const int tcpopt_bench_edit_42 __maybe_unused;',
                      text)
        self.assertIn(timings.EDIT_MARK, text)


class BootTest(BenchTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.boots: List[str] = []

    def fake_run(self, settings: Settings, source: Path, *, action: str,
                 accel: Accel, output: object, **_: object) -> tuple:
        self.boots.append(f'{action} {accel.name}')
        self.clock.now += 12.0 if accel.name == 'tcg' else 3.0
        log = settings.build_dir / 'test.log'
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(PASSING_KTAP)
        return 0, log

    def test_tcg_boots_and_kvm_unavailable(self) -> None:
        tcg, kvm = timings.boot_rows(
            self.bench, run=self.fake_run,
            check=lambda build: (Probe(False, '/dev/kvm: Permission denied'),
                                 False))
        self.assertEqual(self.boots, ['exec tcg'] * 3)
        self.assertEqual((tcg.median, tcg.failures), (12.0, 0))
        self.assertEqual(kvm.unavailable, '/dev/kvm: Permission denied')
        cells = table.boot_cells(kvm)
        self.assertEqual(cells[-1],
                         'not available (/dev/kvm: Permission denied)')

    def test_kvm_boots_when_the_probe_worked(self) -> None:
        tcg, kvm = timings.boot_rows(
            self.bench, run=self.fake_run,
            check=lambda build: (Probe(True, 'probe boot ok in 0.9 s'),
                                 True))
        self.assertEqual(self.boots, ['exec tcg'] * 3 + ['exec kvm'] * 3)
        self.assertEqual(kvm.seconds, [3.0, 3.0, 3.0])

    def test_a_boot_that_fails_its_verdict_counts(self) -> None:
        self.kunit_file.write_text(KUNIT_SOURCE.replace(
            'KUNIT_CASE(demo_test),', 'KUNIT_CASE(demo_test),\n'
            '\tKUNIT_CASE(never_run_test),'))
        tcg, _ = timings.boot_rows(
            self.bench, run=self.fake_run,
            check=lambda build: (Probe(False, 'x'), False))
        self.assertEqual(tcg.failures, 3)


class RunLoggedTest(unittest.TestCase):

    def test_output_goes_to_the_log(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / 'out.log'
            status = timings.run_logged(['/bin/sh', '-c', 'echo hi; exit 3'],
                                        dict(os.environ), log)
            self.assertEqual((status, log.read_text()), (3, 'hi\n'))

    def test_an_interrupt_is_passed_on_once_as_sigterm(self) -> None:
        proc = mock.Mock()
        proc.wait.side_effect = [KeyboardInterrupt, 130]
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch('tcpopt.bench.timings.subprocess.Popen',
                           return_value=proc), \
                self.assertRaises(KeyboardInterrupt):
            timings.run_logged(['run.sh'], {}, Path(tmp) / 'out.log')
        proc.send_signal.assert_called_once_with(signal.SIGTERM)


def sample_report(rows: Optional[List[table.Row]] = None) -> table.Report:
    with open(DATA / 'bench-pristine.log') as lines:
        pristine = hotpath.parse(lines)
    with open(DATA / 'bench-patched.log') as lines:
        patched = hotpath.parse(lines)
    with open(DATA / 'bench-sweep-scale.log') as lines:
        sweep = hotpath.parse(lines)
    hot = hotpath.HotPath('tcg', hotpath.compare(pristine, patched),
                          hotpath.scaling(sweep))
    return table.Report(
        command='./run.sh bench --tree 6.1',
        machine={'nproc': '2', 'memory': '23.5 GiB (MemTotal 24634312 kB)',
                 'CPU': 'AMD EPYC', 'date': '2026-12-04 10:00 UTC',
                 'commit': 'abc1234'},
        tree='linux-source-6.1 6.1.192',
        qemu='QEMU: tcg (/dev/kvm opens, but the probe boot failed)',
        rows=rows if rows is not None else [
            table.Row('warm, no change', '`./run.sh --tree 6.1` again', 6.7,
                      15.0, ['QEMU: tcg (x)'])],
        boots=[table.Boots('tcg', [11.0, 12.5, 11.8]),
               table.Boots('kvm', unavailable='/dev/kvm: x')],
        hot=hot,
        costs=[Cost('', 150.0, True, 2000),
               Cost('CONFIG_TCP_MD5SIG', 140.0, True, 1990)])


class ReportTest(unittest.TestCase):

    def test_document_has_machine_rows_and_sections(self) -> None:
        text = table.render(sample_report())
        self.assertTrue(text.startswith('# Performance\n'))
        self.assertIn('Generated by `./run.sh bench --tree 6.1`', text)
        self.assertIn('| nproc | 2 |', text)
        self.assertIn('| QEMU | QEMU: tcg (/dev/kvm opens, but the probe '
                      'boot failed) |', text)
        self.assertIn('| warm, no change | `./run.sh --tree 6.1` again | 6.7 '
                      '| < 15 | yes | QEMU: tcg (x) |', text)
        self.assertIn('| tcg | 3 | 11.8 | 11.0–12.5 | all passed |', text)
        self.assertIn('| syn | tcp_syn_options | 38.1 | 38.3 | 1.005 |', text)
        self.assertNotIn('verdict', text.split('## Hot path')[1])
        self.assertIn('zero-delta check', text)
        self.assertIn('| 16x | 177736 | 40112 | 0.226 | +3 % |', text)
        self.assertIn('linear: time per combination within 3 %', text)
        self.assertIn('| without CONFIG_TCP_MD5SIG | 140.0 | 10.0 | 1990 | '
                      '10 | not needed by any suite |', text)

    def test_terminal_table_is_plain(self) -> None:
        text = table.terminal(sample_report())
        self.assertIn('== Developer loop', text)
        self.assertNotIn('| ', text.split('== QEMU')[0])

    def test_a_sweep_without_lines_is_one_sentence(self) -> None:
        report = sample_report()
        report.hot.scaling = hotpath.scaling(hotpath.Samples())
        text = table.render(report)
        self.assertIn('## Sweep scaling (tcp_opt_bench in the main build)'
                      '\n\nnot measured: no sweep-scale line for 1x, 4x, '
                      '16x\n', text)

    def test_a_hot_path_that_was_not_measured(self) -> None:
        report = sample_report()
        report.hot = hotpath.HotPath('tcg', problem='kunit/x is missing')
        text = table.render(report)
        self.assertIn('not measured: kunit/x is missing', text)
        self.assertFalse(report.ok)

    def test_ok_means_every_run_worked(self) -> None:
        self.assertTrue(sample_report().ok)
        failed = table.Row('cold', 'x', 1.0, failed=True)
        self.assertFalse(sample_report([failed]).ok)

    def test_write_replaces_whole_and_leaves_no_temp(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            doc = Path(tmp) / 'performance.md'
            doc.write_text('old\n')
            table.write(doc, 'new\n')
            self.assertEqual(doc.read_text(), 'new\n')
            self.assertEqual(os.listdir(tmp), ['performance.md'])

    def test_a_failed_write_leaves_the_old_document(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            doc = Path(tmp) / 'performance.md'
            doc.write_text('old\n')
            with mock.patch.object(Path, 'rename', side_effect=OSError), \
                    self.assertRaises(OSError):
                table.write(doc, 'new\n')
            self.assertEqual(doc.read_text(), 'old\n')
            self.assertEqual(os.listdir(tmp), ['performance.md'])

    def test_machine_from_proc(self) -> None:
        files = {'/proc/meminfo': 'MemTotal:       24634312 kB\n',
                 '/proc/cpuinfo': 'processor\t: 0\nmodel name\t: AMD EPYC\n'}
        info = table.machine(
            Path('/nonexistent'), read=lambda path: files.get(path, ''),
            now=datetime.datetime(2026, 12, 4, 10, 0,
                                  tzinfo=datetime.timezone.utc))
        self.assertEqual(info['memory'], '23.5 GiB (MemTotal 24634312 kB)')
        self.assertEqual(info['CPU'], 'AMD EPYC')
        self.assertEqual(info['date'], '2026-12-04 10:00 UTC')
        self.assertEqual(info['commit'], 'unknown')
        self.assertEqual(info['nproc'], str(len(os.sched_getaffinity(0))))


class MainTest(BenchTestCase):
    """timings.main end to end, the kernel-side steps faked."""

    def run_main(self) -> tuple:
        doc = self.root / 'performance.md'
        hot = sample_report().hot
        with mock.patch('tcpopt.bench.timings.boot_rows',
                        return_value=[table.Boots('tcg', [10.0])]), \
                mock.patch('tcpopt.bench.timings.accel.choose',
                           return_value=Accel('tcg', 'test')), \
                mock.patch('tcpopt.bench.timings.worktree.ensure_pristine'), \
                mock.patch('tcpopt.bench.timings.hotpath.measure',
                           return_value=hot), \
                mock.patch('tcpopt.bench.timings.kconfig_costs.measure') \
                as costs, \
                mock.patch('sys.stdout'):
            status = timings.main(self.settings, ['bench', '--tree', '6.1'],
                                  runner=self.fake, doc=doc)
        return status, doc, costs

    def test_every_row_and_the_document(self) -> None:
        status, doc, costs = self.run_main()
        self.assertEqual(status, 0)
        names = [Path(str(c['log'])).stem for c in self.fake.calls]
        self.assertEqual(names, ['6.1-warm-first', '6.1-warm',
                                 '6.1-cold-empty-ccache',
                                 '6.1-cold-warm-ccache', '6.1-edit-kunit',
                                 '6.1-edit-kunit-undo', '6.1-edit-tcp-output',
                                 '6.1-edit-tcp-output-undo'])
        text = doc.read_text()
        self.assertIn('Generated by `./run.sh bench --tree 6.1`', text)
        self.assertIn('| cold, warm ccache |', text)
        costs.assert_not_called()
        self.assertEqual(self.kunit_file.read_text(), KUNIT_SOURCE)

    def test_a_failed_run_makes_the_bench_fail(self) -> None:
        self.fake.status = 1
        status, doc, _ = self.run_main()
        self.assertEqual(status, 1)
        self.assertTrue(doc.is_file())


@unittest.skipUnless(shutil.which('git') and (REPO / '.git').exists(),
                     'needs git and the checkout')
class CheckoutStaysCleanTest(unittest.TestCase):
    """timings.main on the real checkout, its kernel builds and boots faked
    (run.sh, kunit.py, the KVM probe, the tarball): git status --porcelain
    is the same before and after."""

    def git_status(self) -> str:
        """git status --porcelain, and the diff behind it: a file already
        modified (' M') that the bench wrote would show only there."""
        def git(*args: str) -> str:
            return subprocess.run(['git', *args], cwd=REPO, check=True,
                                  capture_output=True, text=True).stdout
        return git('status', '--porcelain') + git('diff', '--binary')

    def fake_boot(self, settings: Settings, source: Path, *,
                  build_dir: Optional[Path] = None, **_: object) -> tuple:
        """kernel.run_kunit's stand-in: a bench tree or the main build
        'prints' its golden log."""
        build = build_dir or settings.build_dir
        build.mkdir(parents=True, exist_ok=True)
        name = {'pristine': 'bench-pristine.log',
                'patched': 'bench-patched.log'}.get(build.parent.name,
                                                     'bench-sweep-scale.log')
        shutil.copy(DATA / name, build / 'test.log')
        return 0, build / 'test.log'

    def fake_sync(self, settings: Settings, side: str) -> Path:
        """hotpath.sync_tree without a kernel tarball: kunit/ in, alone."""
        src = hotpath.side_dirs(settings, side)[0]
        (src / 'net/ipv4').mkdir(parents=True, exist_ok=True)
        hotpath.overlay_bench(settings, src)
        return src

    def run_bench(self, settings: Settings, fake: FakeRunSh) -> None:
        no_kvm = (Probe(False, 'test'), False)
        with mock.patch.dict(os.environ, {'TCPOPT_KUNIT_DIR': ''}), \
                mock.patch('tcpopt.bench.timings.boot_rows', functools.partial(
                    timings.boot_rows, run=self.fake_boot,
                    check=lambda build: no_kvm)), \
                mock.patch('tcpopt.bench.timings.hotpath.measure',
                           functools.partial(hotpath.measure,
                                             run=self.fake_boot)), \
                mock.patch('tcpopt.bench.hotpath.sync_tree', self.fake_sync), \
                mock.patch('tcpopt.bench.timings.accel.choose',
                           return_value=Accel('tcg', 'test')), \
                mock.patch('tcpopt.bench.timings.worktree.ensure_pristine'), \
                mock.patch('tcpopt.bench.timings.kconfig_costs.measure',
                           return_value=[]), \
                mock.patch('tcpopt.bench.timings.say'), \
                mock.patch('tcpopt.bench.hotpath.log'), \
                mock.patch('sys.stdout'):
            timings.main(settings, ['bench', '--kunitconfig-costs'],
                         costs=True, runner=fake)

    def test_git_status_is_unchanged(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings.create('6.1', work_dir=Path(tmp))
            output_c = settings.source / 'net/ipv4/tcp_output.c'
            output_c.parent.mkdir(parents=True)
            output_c.write_bytes(OUTPUT_C)
            fake = FakeRunSh(Clock())
            before = self.git_status()
            self.run_bench(settings, fake)
            self.assertEqual(self.git_status(), before)
            copies = [c['env'].get('TCPOPT_KUNIT_DIR') for c in fake.calls]
            edited = [Path(copy) for copy in copies if copy]
            self.assertEqual(len(edited), 1)
            self.assertIn(settings.work_dir, edited[0].parents)
            self.assertTrue((settings.work_dir / 'bench' /
                             'performance.md').is_file())
            self.assertEqual(output_c.read_bytes(), OUTPUT_C)


class CommandLineTest(unittest.TestCase):

    def test_bench_is_a_command(self) -> None:
        self.assertIn('bench', cli.HANDLERS)
        args = cli.parse_args(['bench', '--tree', '6.12',
                               '--kunitconfig-costs'])
        self.assertEqual((args.command, args.tree, args.kunitconfig_costs),
                         ('bench', ['6.12'], True))

    def test_kunitconfig_costs_needs_the_bench_command(self) -> None:
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = cli.main(['run', '--kunitconfig-costs'])
        self.assertEqual((status, err.getvalue().strip()),
                         (2, 'run.sh: error: --kunitconfig-costs only applies '
                          'to ./run.sh bench'))

    def test_tools_bench_calls_run_sh_bench(self) -> None:
        script = Path(REPO / 'tools' / 'bench')
        self.assertTrue(os.access(script, os.X_OK))
        self.assertIn('run.sh" bench "$@"', script.read_text())


if __name__ == '__main__':
    unittest.main()

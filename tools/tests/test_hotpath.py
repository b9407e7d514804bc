"""hotpath: the tcp_opt_bench lines, the ratios, the scaling, the trees."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path
from typing import List, Optional
from unittest import mock

from tcpopt.bench import hotpath
from tcpopt.core.settings import BENCH_SOURCE, BENCH_SUITE, Settings
from tcpopt.tree import scratch
from tcpopt.tree.accel import Accel
from tcpopt.tree.identity import STAMP

DATA = Path(__file__).resolve().parent / 'data'
LOGS = {'pristine': 'bench-pristine.log', 'patched': 'bench-patched.log',
        'main': 'bench-sweep-scale.log'}
LAYOUTS = [('ack_ts', 'tcp_established_options'),
           ('ack_ts', 'tcp_options_write'),
           ('ack_sack3', 'tcp_established_options'),
           ('ack_sack3', 'tcp_options_write'),
           ('syn', 'tcp_syn_options'),
           ('syn', 'tcp_options_write')]


def golden(side: str) -> hotpath.Samples:
    with open(DATA / f'bench-{side}.log') as lines:
        return hotpath.parse(lines)


class ParseTest(unittest.TestCase):

    def test_golden_log_has_every_layout_and_function(self) -> None:
        samples = golden('pristine')
        self.assertEqual(list(samples.calls), LAYOUTS)
        self.assertEqual(samples.calls[('syn', 'tcp_syn_options')],
                         {1: 38.1, 2: 37.9, 3: 38.6, 4: 38.0, 5: 38.3})

    def test_repetitions_go_round_the_layouts(self) -> None:
        with open(DATA / 'bench-patched.log') as lines:
            reps = [int(line.split()[-1]) for line in lines
                    if '# bench:' in line]
        self.assertEqual(reps[:7], [1, 1, 1, 1, 1, 1, 2])

    def test_console_noise_between_lines_is_ignored(self) -> None:
        samples = golden('patched')
        self.assertEqual(len(samples.calls[('ack_sack3',
                                            'tcp_established_options')]), 5)

    def test_sweep_scale_lines(self) -> None:
        self.assertEqual(golden('sweep-scale').scale,
                         {1: [(13096, 2870.0)], 4: [(46024, 10215.0)],
                          16: [(177736, 40112.0)]})

    def test_the_benchmark_built_alone_has_no_sweep(self) -> None:
        self.assertEqual(golden('patched').scale, {})

    def test_kunit_info_prefix_and_timestamps_are_accepted(self) -> None:
        samples = hotpath.parse([
            '    # tcp_opt_bench_calls_test: bench: syn tcp_syn_options 40 '
            'ns/call rep 1\n',
            '[    2.500000]         # bench: syn tcp_options_write 12.5 '
            'ns/call rep 2\r\n',
            '    # sweep-scale: 4x 8 combinations in 9.5 us\n'])
        self.assertEqual(samples.calls, {('syn', 'tcp_syn_options'): {1: 40},
                                         ('syn', 'tcp_options_write'):
                                         {2: 12.5}})
        self.assertEqual(samples.scale, {4: [(8, 9.5)]})

    def test_malformed_lines_are_not_samples(self) -> None:
        samples = hotpath.parse(['# bench: syn tcp_syn_options fast ns/call '
                                 'rep 1', '# bench: syn 12 ns/call rep 1',
                                 '# sweep-scale: x 1 combinations in 2 us'])
        self.assertEqual((samples.calls, samples.scale), ({}, {}))


class CompareTest(unittest.TestCase):

    def setUp(self) -> None:
        self.rows = hotpath.compare(golden('pristine'), golden('patched'))

    def test_one_row_per_layout_and_function(self) -> None:
        self.assertEqual([(c.layout, c.function) for c in self.rows], LAYOUTS)

    def test_ratio_of_medians(self) -> None:
        first = self.rows[0]
        self.assertEqual((first.pristine_ns, first.patched_ns), (21.1, 21.1))
        self.assertAlmostEqual(first.ratio, 1.0)
        syn = self.rows[4]
        self.assertAlmostEqual(syn.ratio, 38.3 / 38.1)

    def test_noise_is_the_wider_relative_spread(self) -> None:
        syn = self.rows[4]
        self.assertAlmostEqual(syn.noise, max((38.6 - 37.9) / 38.1,
                                              (38.9 - 38.0) / 38.3))

    def test_boot_rounds_pair_by_round(self) -> None:
        merged = [hotpath.merge_rounds([golden(side), golden(side)])
                  for side in ('pristine', 'patched')]
        row = hotpath.compare(*merged)[0]
        self.assertEqual(row.reps, 10)
        self.assertEqual(len(row.rep_ratios()), 2)
        self.assertAlmostEqual(row.rep_ratios()[0], row.ratio)

    def test_per_rep_ratios_pair_by_repetition(self) -> None:
        self.assertAlmostEqual(self.rows[0].rep_ratios()[0], 21.1 / 21.0)
        self.assertEqual(len(self.rows[0].rep_ratios()), 5)

    def test_a_row_only_one_tree_printed(self) -> None:
        patched = golden('patched')
        patched.calls[('syn_md5', 'tcp_syn_options')] = {1: 50.0}
        rows = hotpath.compare(golden('pristine'), patched)
        self.assertEqual(hotpath.missing_sides(rows),
                         ['syn_md5 tcp_syn_options: no pristine samples'])


class ScalingTest(unittest.TestCase):

    def test_golden_sweep_is_linear(self) -> None:
        scale = hotpath.scaling(golden('sweep-scale'))
        self.assertEqual([s.factor for s in scale.steps], [1, 4, 16])
        self.assertTrue(scale.linear)
        self.assertTrue(scale.verdict().startswith('linear: time per '
                                                   'combination within 3 %'))

    def test_quadratic_growth_is_not_linear(self) -> None:
        samples = hotpath.Samples(scale={1: [(100, 100.0)],
                                         4: [(400, 1600.0)],
                                         16: [(1600, 25600.0)]})
        scale = hotpath.scaling(samples)
        self.assertFalse(scale.linear)
        self.assertTrue(scale.verdict().startswith('not linear'))
        self.assertAlmostEqual(scale.drift(scale.steps[2]), 15.0)

    def test_median_of_repeated_lines(self) -> None:
        samples = hotpath.Samples(scale={1: [(10, 10.0), (10, 30.0),
                                             (10, 12.0)]})
        self.assertEqual(hotpath.scaling(samples).steps[0].guest_us, 12.0)

    def test_a_missing_factor(self) -> None:
        samples = hotpath.Samples(scale={1: [(10, 10.0)], 4: [(40, 40.0)]})
        scale = hotpath.scaling(samples)
        self.assertFalse(scale.linear)
        self.assertEqual(scale.verdict(),
                         'not measured: no sweep-scale line for 16x')


KCONFIG = 'config TCP_MD5SIG\n\tbool "MD5"\n'
OUTPUT_C = 'int tcp_output;\n\nEXPORT_SYMBOL(tcp_rtx_synack);\n'
CHANGE = '''--- a/net/ipv4/tcp_output.c
+++ b/net/ipv4/tcp_output.c
@@ -1,3 +1,3 @@
-int tcp_output;
+int tcp_output_changed;
 
 EXPORT_SYMBOL(tcp_rtx_synack);
'''
HOOK = '''--- a/net/ipv4/tcp_output.c
+++ b/net/ipv4/tcp_output.c
@@ -1,3 +1,5 @@
 int tcp_output;
 
 EXPORT_SYMBOL(tcp_rtx_synack);
+
+#include "tcp_options_test.c"
'''


class TreesTest(unittest.TestCase):
    """The pristine and patched bench trees, from a tiny fake kernel."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = Path(tmp.name)
        repo = root / 'repo'
        patches = repo / 'kernel-patches' / '6.1'
        patches.mkdir(parents=True)
        (patches / '0001-change.patch').write_text(CHANGE)
        # The hook patch applies alone too: it only adds lines at the end.
        (patches / '0002-hook.patch').write_text(HOOK)
        (patches / 'series').write_text('0001-change.patch\n'
                                        '0002-hook.patch  # test-only\n')
        kunit = repo / 'kunit'
        kunit.mkdir()
        for name in ('tcp_options_test.c', BENCH_SOURCE, 'compat.h'):
            (kunit / name).write_text(f'/* {name} */\n')
        (repo / '.kunitconfig').write_text('CONFIG_KUNIT=y\n')
        tarball = root / 'linux.tar.xz'
        tarball.write_text('')
        self.settings = Settings(tree='6.1', work_dir=root / 'work',
                                 repo=repo, tarball_override=tarball)
        pristine = self.settings.pristine / 'net' / 'ipv4'
        pristine.mkdir(parents=True)
        (pristine / 'tcp_output.c').write_text(OUTPUT_C)
        (pristine / 'Kconfig').write_text(KCONFIG)
        (self.settings.pristine / STAMP).write_text('')

    def sync(self, side: str) -> Path:
        with mock.patch('tcpopt.bench.hotpath.log'), \
                mock.patch('tcpopt.core.fs.log'):
            return hotpath.sync_tree(self.settings, side)

    def test_patched_tree_has_the_whole_series(self) -> None:
        src = self.sync('patched')
        text = (src / 'net/ipv4/tcp_output.c').read_text()
        self.assertIn('tcp_output_changed', text)
        self.assertIn('#include "tcp_options_test.c"', text)

    def test_pristine_tree_has_only_the_test_only_patch(self) -> None:
        src = self.sync('pristine')
        text = (src / 'net/ipv4/tcp_output.c').read_text()
        self.assertNotIn('tcp_output_changed', text)
        self.assertIn('#include "tcp_options_test.c"', text)

    def test_the_test_source_is_the_stub_in_both(self) -> None:
        for side in hotpath.SIDES:
            ipv4 = self.sync(side) / 'net/ipv4'
            self.assertEqual((ipv4 / 'tcp_options_test.c').read_text(),
                             hotpath.STUB)
            self.assertTrue((ipv4 / BENCH_SOURCE).is_file())
            self.assertTrue((ipv4 / 'compat.h').is_file())

    def test_a_second_sync_leaves_files_and_build_alone(self) -> None:
        src = self.sync('patched')
        build = hotpath.side_dirs(self.settings, 'patched')[1]
        build.mkdir(parents=True)
        stub = src / 'net/ipv4/tcp_options_test.c'
        before = stub.stat().st_mtime_ns
        self.sync('patched')
        self.assertEqual(stub.stat().st_mtime_ns, before)
        self.assertTrue(build.is_dir())

    def test_a_changed_series_rebuilds_tree_and_build_dir(self) -> None:
        self.sync('patched')
        build = hotpath.side_dirs(self.settings, 'patched')[1]
        build.mkdir(parents=True)
        (self.settings.patch_dir / '0001-change.patch').write_text(
            CHANGE.replace('tcp_output_changed', 'tcp_output_again'))
        src = self.sync('patched')
        self.assertFalse(build.exists())
        self.assertIn('tcp_output_again',
                      (src / 'net/ipv4/tcp_output.c').read_text())
        mark = json.loads(src.with_name(
            src.name + scratch.SCRATCH_SUFFIX).read_text())
        self.assertEqual([name for name, _ in mark['patches']],
                         ['0001-change.patch', '0002-hook.patch'])

    def fake_run(self, logs: dict):
        """kernel.run_kunit's stand-in: 'boots' by copying a golden log."""
        calls: List[dict] = []

        def run(settings: Settings, source: Path, *, filter_glob: str,
                accel: Accel, output: object,
                build_dir: Optional[Path] = None, action: str = 'run',
                **_: object) -> tuple:
            build_dir = build_dir or settings.build_dir
            calls.append({'source': source, 'build': build_dir,
                          'filter': filter_glob, 'accel': accel.name,
                          'action': action})
            side = 'main' if build_dir == settings.build_dir \
                else build_dir.parent.name
            build_dir.mkdir(parents=True, exist_ok=True)
            (build_dir / '.config').write_text('CONFIG_KUNIT=y\n')
            log = build_dir / 'test.log'
            if logs.get(side):
                log.write_text((DATA / logs[side]).read_text())
            return (0 if logs.get(side) else 1), log
        return run, calls

    def measure(self, logs: dict) -> tuple:
        run, calls = self.fake_run(logs)
        with mock.patch('tcpopt.bench.hotpath.log'), \
                mock.patch('tcpopt.core.fs.log'):
            result = hotpath.measure(self.settings, Accel('tcg', 'test'), run)
        return result, calls

    def test_measure_boots_both_trees_with_the_bench_suite(self) -> None:
        result, calls = self.measure(LOGS)
        self.assertEqual([c['build'].parent.name for c in calls[:2]],
                         ['pristine', 'patched'])
        # Built and booted once each, then booted in turn, then the sweep.
        self.assertEqual([c['action'] for c in calls],
                         ['run', 'run'] + ['exec'] * (2 * (hotpath.ROUNDS - 1))
                         + ['run'])
        self.assertEqual([c['build'].parent.name for c in calls[2:4]],
                         ['pristine', 'patched'])
        self.assertEqual({c['filter'] for c in calls}, {BENCH_SUITE})
        self.assertEqual(result.problem, '')
        self.assertEqual(len(result.comparisons), 6)

    def test_the_sweep_scales_in_the_main_tree_with_the_bench_built(
            self) -> None:
        main_log = self.settings.build_dir / 'test.log'
        main_log.parent.mkdir(parents=True)
        main_log.write_text('the last run\n')
        result, calls = self.measure(LOGS)
        self.assertEqual((calls[-1]['source'], calls[-1]['build']),
                         (self.settings.source,
                          self.settings.tree_dir / 'build-bench'))
        self.assertTrue(result.scaling.linear)
        self.assertEqual(main_log.read_text(), 'the last run\n')
        self.assertEqual((self.settings.tree_dir / 'bench' /
                          'sweep-scale.log').read_text(),
                         (DATA / 'bench-sweep-scale.log').read_text())

    def test_a_main_build_without_the_sweep_scale_case(self) -> None:
        result, _ = self.measure(dict(LOGS, main=None))
        self.assertEqual(result.scaling.verdict(), 'not measured: no '
                         'sweep-scale line for 1x, 4x, 16x')
        self.assertEqual(result.problem, '')

    def test_a_kernel_that_never_booted(self) -> None:
        result, _ = self.measure({'pristine': 'bench-pristine.log'})
        self.assertTrue(result.problem.startswith(
            'the patched kernel did not build or boot (kunit.py exit 1)'))

    def test_without_the_bench_source_nothing_is_built(self) -> None:
        (self.settings.kunit_dir / BENCH_SOURCE).unlink()
        result, calls = self.measure({})
        self.assertEqual(calls, [])
        self.assertEqual(result.problem,
                         f'kunit/{BENCH_SOURCE} is missing: no {BENCH_SUITE} '
                         'suite to run')


class ConfigDifferenceTest(unittest.TestCase):

    def test_comments_do_not_count(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            a, b = Path(tmp, 'a'), Path(tmp, 'b')
            a.mkdir()
            b.mkdir()
            (a / '.config').write_text('# made at 1\nCONFIG_X=y\n')
            (b / '.config').write_text('# made at 2\nCONFIG_X=y\n')
            self.assertEqual(hotpath.config_difference(a, b), '')
            (b / '.config').write_text('CONFIG_X=y\nCONFIG_Y=y\n')
            self.assertEqual(hotpath.config_difference(a, b),
                             ".config differs: pristine '', patched "
                             "'CONFIG_Y=y'")


if __name__ == '__main__':
    unittest.main()

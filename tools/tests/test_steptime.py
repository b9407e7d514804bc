"""steptime: where the test command's time goes, and the step budget."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from tcpopt import pipeline, run_checks
from tcpopt.bench import steptime
from tcpopt.core.settings import Settings
from tcpopt.tree import kernel


class BudgetTest(unittest.TestCase):

    def test_twice_the_cold_time_with_a_floor(self) -> None:
        self.assertEqual(steptime.budget('kunit'),
                         2 * steptime.COLD_SECONDS['kunit'])
        self.assertEqual(steptime.budget('sweep'), steptime.BUDGET_FLOOR)

    def test_every_step_of_the_test_command_has_a_budget(self) -> None:
        settings = Settings('6.1', Path('/w'))
        steps = [step for step, _, _ in
                 pipeline.tree_steps(settings, run_checks.Tally(), demo=True,
                                every=True)]
        steps += [step for step, _, _ in
                  pipeline.tree_steps(Settings('7.3', Path('/w')), run_checks.Tally(),
                                 demo=False)]
        for step in steps + ['host']:
            with self.subTest(step):
                self.assertGreater(steptime.budget(step), 0)

    def test_a_step_past_its_budget_is_stopped(self) -> None:
        started = time.monotonic()
        with self.assertRaisesRegex(steptime.OverBudget,
                                    "step 'kunit' ran past its budget"):
            with steptime.alarm_after(1, 'kunit'):
                time.sleep(5)
        self.assertLess(time.monotonic() - started, 3)


    def test_an_inner_budget_leaves_the_outer_one(self) -> None:
        with steptime.alarm_after(100, 'host'):
            with steptime.alarm_after(50, 'kunit'):
                pass
            self.assertGreater(signal.alarm(0), 90)


class MeasuredTest(unittest.TestCase):

    def test_build_and_boot_of_a_kunit_run_are_split_at_the_log(
            self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / 'test.log'
            # 'Builds' 1 s, then creates the log and 'boots' 1 s.
            proc = subprocess.Popen([sys.executable, '-c',
                                     'import time, pathlib; time.sleep(1); '
                                     f'pathlib.Path({str(log)!r}).touch(); '
                                     'time.sleep(1)'])
            clock = steptime.Spent()
            self.assertTrue(kernel.wait_for_kunit(proc, log, 30, clock))
        self.assertAlmostEqual(clock.build, 1, delta=0.6)
        self.assertAlmostEqual(clock.boot, 1, delta=0.6)

    def test_a_failing_step_is_still_timed(self) -> None:
        times: list = []
        with mock.patch('tcpopt.bench.steptime.ccache_counts',
                        side_effect=[steptime.Ccache(5, 7),
                                     steptime.Ccache(9, 10)]):
            with self.assertRaises(RuntimeError):
                with steptime.measured(3, 'plain', '6.1', 'git am', Path('/c'),
                                       times):
                    steptime.add(build=12.0, boot=3.0)
                    raise RuntimeError('the step failed')
        row = times[0]
        self.assertEqual((row.number, row.step, row.build, row.boot,
                          row.hits, row.misses), (3, 'plain', 12.0, 3.0, 4, 3))
        self.assertIn('took', row.line(31))

    def test_ccache_counts_read_the_statistics(self) -> None:
        out = 'cache_miss\t3\ndirect_cache_hit\t4\npreprocessed_cache_hit\t1\n'
        with mock.patch('subprocess.run') as run, \
                mock.patch('shutil.which', return_value='/usr/bin/ccache'):
            run.return_value.stdout = out
            counts = steptime.ccache_counts(Path('/c'))
        self.assertEqual((counts.hits, counts.misses), (5, 3))


class SectionTest(unittest.TestCase):

    def test_the_section_totals_the_steps(self) -> None:
        times = [steptime.StepTime(1, 'host', '', 'host tests', 50, 0, 0,
                                   0, 0),
                 steptime.StepTime(2, 'kunit', '6.1', 'KUnit', 370, 300, 40,
                                   10, 1700)]
        text = steptime.section({'date': '2026-12-06 02:39 UTC',
                                 'commit': 'a4a029c', 'planned': 31,
                                 'cpus': 2, 'cold': True}, times)
        self.assertIn('2 of 31 steps, **420 s (7.0 min)** in the steps.',
                      text)
        self.assertIn('an empty work dir and an empty ccache', text)
        # The wall time counts what ran before the first step as well.
        walled = steptime.section({'date': 'd', 'commit': 'c', 'wall': 480},
                                  times)
        self.assertIn('in the steps; 480 s (8.0 min) from the command\'s '
                      'start', walled)
        budget = steptime.budget('kunit')
        self.assertIn('| 2 | 6.1 | kunit | 370 | 300 | 40 | 10 | 1700 | '
                      f'{budget} |', text)

    def test_saved_and_loaded_alike(self) -> None:
        times = [steptime.StepTime(1, 'host', '', 'host tests', 50, 0, 0,
                                   0, 0)]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / 'test-steps.json'
            steptime.save(times, path, {'date': 'd', 'commit': 'c'})
            header, loaded = steptime.load(path)
        self.assertEqual((header, loaded), ({'date': 'd', 'commit': 'c'},
                                            times))


if __name__ == '__main__':
    unittest.main()

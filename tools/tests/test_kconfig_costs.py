"""kconfig_costs: one scratch build per .kunitconfig option, faked."""

from __future__ import annotations

import tempfile
import unittest
from collections import Counter
from pathlib import Path
from typing import List
from unittest import mock

from tcpopt.bench import kconfig_costs
from tcpopt.core.settings import Settings
from tcpopt.tree.accel import Accel

KUNITCONFIG = ('CONFIG_KUNIT=y\nCONFIG_NET=y\nCONFIG_INET=y\n'
               'CONFIG_TCP_MD5SIG=y\nCONFIG_TCP_OPTIONS_KUNIT_TEST=y\n')
KTAP = '''KTAP version 1
1..2
    # Subtest: tcp_opt_syn
    ok 1 syn_a
    ok 2 syn_b
ok 1 tcp_opt_syn
    # Subtest: tcp_opt_md5
    {md5}
ok 2 tcp_opt_md5
'''


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class CostsTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = Path(tmp.name)
        (root / 'repo').mkdir()
        (root / 'repo' / '.kunitconfig').write_text(KUNITCONFIG)
        self.settings = Settings(tree='6.1', work_dir=root / 'work',
                                 repo=root / 'repo')
        self.clock = Clock()
        self.calls: List[tuple] = []
        quiet = mock.patch('tcpopt.bench.kconfig_costs.log')
        quiet.start()
        self.addCleanup(quiet.stop)

    def fake_run(self, settings: Settings, source: Path, *, build_dir: Path,
                 action: str, kunitconfig: Path, output: object,
                 **_: object) -> tuple:
        """'Builds' in 100 s minus 10 s per option left out; without NET
        kunit.py refuses; without MD5 the md5 case is skipped."""
        wanted = kunitconfig.read_text()
        self.calls.append((action, kunitconfig.name))
        log = build_dir / 'test.log'
        if action == 'build':
            build_dir.mkdir(parents=True, exist_ok=True)
            if 'CONFIG_NET=y' not in wanted:
                output.write('ERROR:root:Not all Kconfig options selected in '
                             'kunitconfig were in the generated .config.\n'
                             'Missing: CONFIG_TCP_OPTIONS_KUNIT_TEST=y\n')
                return 1, log
            self.clock.now += 100 - 10 * (5 - len(wanted.splitlines()))
            objects = 10 + len(wanted.splitlines())
            for number in range(objects):
                (build_dir / f'{number}.o').write_text('')
            # INET is selected anyway by something else.
            config = wanted if 'CONFIG_INET=y' in wanted \
                else wanted + 'CONFIG_INET=y\n'
            (build_dir / '.config').write_text(config)
            return 0, log
        md5 = 'ok 1 md5_a' if 'CONFIG_TCP_MD5SIG=y' in wanted \
            else 'ok 1 md5_a # SKIP no MD5'
        log.write_text(KTAP.format(md5=md5))
        return 0, log

    def measure(self) -> List[kconfig_costs.Cost]:
        return kconfig_costs.measure(self.settings, Path('/src'),
                                     Accel('tcg', 'test'), self.fake_run,
                                     self.clock)

    def test_options_to_drop_leave_the_suite_itself(self) -> None:
        self.assertEqual(kconfig_costs.options(self.settings.kunitconfig),
                         ['CONFIG_NET', 'CONFIG_INET', 'CONFIG_TCP_MD5SIG'])

    def test_without_drops_that_option_alone(self) -> None:
        config = self.settings.kunitconfig
        config.write_text(KUNITCONFIG + 'CONFIG_NET_NS=y\n')
        text = kconfig_costs.without(config, 'CONFIG_NET')
        self.assertNotIn('CONFIG_NET=y', text)
        self.assertIn('CONFIG_NET_NS=y', text)
        self.assertIn('CONFIG_INET=y', text)

    def test_a_build_per_option_after_the_whole_config(self) -> None:
        costs = self.measure()
        self.assertEqual([c.option for c in costs],
                         ['', 'CONFIG_NET', 'CONFIG_INET',
                          'CONFIG_TCP_MD5SIG'])
        self.assertEqual(self.calls[:2], [('build', 'all.kunitconfig'),
                                          ('exec', 'all.kunitconfig')])
        self.assertFalse((self.settings.tree_dir / 'bench' / 'kconfig' /
                          'build').exists())

    def test_effects(self) -> None:
        whole, net, inet, md5 = self.measure()
        self.assertEqual(whole.seconds, 100)
        self.assertEqual(whole.passes, Counter({'tcp_opt_syn': 2,
                                                'tcp_opt_md5': 1}))
        self.assertEqual(kconfig_costs.effect(net, whole),
                         'needed by every suite (kunit.py: cannot set '
                         'CONFIG_TCP_OPTIONS_KUNIT_TEST=y)')
        self.assertIsNone(kconfig_costs.delta(net, whole))
        self.assertEqual(kconfig_costs.effect(inet, whole),
                         'set anyway (a default or a select): no saving')
        self.assertEqual(kconfig_costs.effect(md5, whole),
                         'needed by tcp_opt_md5 (1 cases)')
        self.assertEqual(kconfig_costs.delta(md5, whole), 10)
        self.assertEqual(whole.objects - md5.objects, 1)

    def test_an_option_nothing_needs(self) -> None:
        whole = kconfig_costs.Cost('', 100, True, 20,
                                   passes=Counter({'s': 3}))
        spare = kconfig_costs.Cost('CONFIG_X', 90, True, 18,
                                   passes=Counter({'s': 3}))
        self.assertEqual(kconfig_costs.effect(spare, whole),
                         'not needed by any suite')


if __name__ == '__main__':
    unittest.main()

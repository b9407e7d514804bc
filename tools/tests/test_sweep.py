"""tcpopt.layout.sweep: the kernel's '# sweep:' records against the model."""

from __future__ import annotations

import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from typing import Dict, List

from tcpopt import run_checks
from tcpopt.core.settings import TREES, Settings
from tcpopt.layout import model, sweep
from tcpopt.layout.model import Inputs
from tcpopt.layout.options import ACCECN0, AO, MPTCP
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'

# The deliberately wrong record of sweep-sample.log: the D-SACK block is
# missing and the SACK blocks moved up into its place.
WRONG = ('kind=established ts=1 sack=0 ws=0 md5=0 syncookie=0 mss=0 '
         'wscale=0 fo=none fo_len=0 sacks=4 dsack=1')
WRONG_KERNEL = ('0101080a00000003000000020101051a'
                '000010000000200000003000000040000000500000006000')
WRONG_MODEL = ('0101080a00000003000000020101051a'
               '000001000000020000001000000020000000300000004000')


def sample_records() -> List[Dict[str, str]]:
    with open(DATA / 'sweep-sample.log', errors='replace') as lines:
        return ktap.parse(lines).sweep


def record(inputs: Inputs, data: bytes, size: int = -1) -> Dict[str, str]:
    """A record as ktap.fields() returns it, with the given kernel bytes."""
    return {**model.to_fields(inputs), 'size': str(len(data) if size < 0
                                                   else size),
            'bytes': data.hex()}


def model_records(ao: bool = False,
                  mptcp: bool = False) -> List[Dict[str, str]]:
    return [record(i, model.layout(i))
            for i in model.cross_product(ao=ao, mptcp=mptcp)]


def ktap_log(records: List[Dict[str, str]]) -> List[str]:
    """A tcp_opt_sweep run printing @records, as lines with newlines."""
    lines = ['KTAP version 1', '1..1']
    lines += ['        # sweep: ' + ' '.join(f'{k}={v}' for k, v in r.items())
              for r in records]
    lines += ['ok 1 tcp_opt_sweep']
    return [line + '\n' for line in lines]


class SampleLogTest(unittest.TestCase):
    """Hand-written records: nine right, one wrong."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.records = sample_records()
        cls.result = sweep.compare(cls.records)

    def test_ktap_collects_every_record(self) -> None:
        self.assertEqual(len(self.records), 10)

    def test_matched_count(self) -> None:
        self.assertEqual(self.result.total, 10)
        self.assertEqual(self.result.matched, 9)
        self.assertEqual(self.result.invalid, [])
        self.assertEqual(self.result.duplicates, [])
        self.assertFalse(self.result.ok)

    def test_the_wrong_record(self) -> None:
        [wrong] = self.result.mismatches
        self.assertEqual(model.to_text(wrong.inputs), WRONG)
        self.assertEqual(wrong.kernel.hex(), WRONG_KERNEL)
        self.assertEqual(wrong.model.hex(), WRONG_MODEL)
        self.assertEqual(wrong.first_difference, 18)
        self.assertFalse(wrong.size_differs)

    def test_empty_layout_matches(self) -> None:
        empty = [r for r in self.records if r['size'] == '0']
        self.assertEqual(len(empty), 1)
        self.assertEqual(empty[0]['bytes'], '')

    def test_report(self) -> None:
        lines = sweep.format_report(self.result).splitlines()
        self.assertEqual(lines[:6], [
            '10 combinations, 9 matched',
            '',
            WRONG,
            f'kernel: {WRONG_KERNEL}',
            f'model:  {WRONG_MODEL}',
            'first differing byte: 18 (kernel 0x10, model 0x01)'])

    def test_everything_else_is_missing(self) -> None:
        self.assertEqual(len(self.result.missing), 13096 - 10)
        text = sweep.format_report(self.result)
        self.assertIn('13086 combinations of the cross product were not '
                      'printed:', text)
        self.assertIn('... and 13066 more missing combinations', text)

    def test_against_its_own_combinations(self) -> None:
        given = [model.from_fields(r) for r in self.records]
        result = sweep.compare(self.records, expected=given)
        self.assertEqual(result.missing, [])
        self.assertEqual(sweep.format_report(result).splitlines()[-1],
                         'first differing byte: 18 (kernel 0x10, model 0x01)')


class SelfConsistencyTest(unittest.TestCase):
    """Records made by the model itself: says nothing about the kernel."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.records = model_records()

    def test_whole_cross_product_matches(self) -> None:
        result = sweep.compare(self.records)
        self.assertEqual((result.total, result.matched), (13096, 13096))
        self.assertEqual((result.mismatches, result.invalid,
                          result.duplicates, result.missing), ([], [], [], []))
        self.assertTrue(result.ok)
        self.assertEqual(sweep.format_report(result),
                         '13096 combinations, 13096 matched')

    def test_through_ktap_parse(self) -> None:
        parsed = ktap.parse(ktap_log(self.records)).sweep
        self.assertEqual(parsed, self.records)
        self.assertTrue(sweep.compare(parsed).ok)

    def test_whole_ao_cross_product_matches(self) -> None:
        records = model_records(ao=True)
        result = sweep.compare(records, kinds=[AO])
        self.assertEqual((result.total, result.matched), (15236, 15236))
        self.assertTrue(result.ok)
        self.assertEqual(sweep.format_report(result),
                         '15236 combinations, 15236 matched')
        self.assertEqual(sweep.compare(records, expected=model.cross_product(
            ao=True)), result)

    def test_ao_records_through_ktap_parse(self) -> None:
        records = model_records(ao=True)[13096:]
        parsed = ktap.parse(ktap_log(records)).sweep
        self.assertEqual(parsed, records)
        self.assertTrue(all('ao_maclen' in r for r in parsed))


class FindingsTest(unittest.TestCase):

    SYN = Inputs(kind='syn', ts=True, sack=True, ws=True, mss=1460,
                 wscale=7)

    def test_first_difference(self) -> None:
        self.assertEqual(sweep.first_difference(b'\x01\x02', b'\x01\x03'), 1)
        self.assertEqual(sweep.first_difference(b'\x01', b'\x01\x03'), 1)
        self.assertEqual(sweep.first_difference(b'', b''), 0)

    def test_shorter_kernel_layout(self) -> None:
        good = model.layout(self.SYN)
        result = sweep.compare([record(self.SYN, good[:16])], [self.SYN])
        [m] = result.mismatches
        self.assertTrue(m.size_differs)
        self.assertEqual(m.first_difference, 16)
        lines = sweep.format_report(result).splitlines()
        self.assertIn('first differing byte: 16 (kernel none, model 0x01)',
                      lines)
        self.assertIn('size: kernel 16, model 20', lines)

    def test_kernel_overflowing_40_bytes(self) -> None:
        # 9424e2e7ad93's bug: MD5 + TS + one block reserved 44 bytes.
        inputs = Inputs(kind='established', ts=True, md5=True, sacks=1)
        good = model.layout(inputs)
        # The kernel prints only the first 40 of the 44 bytes.
        printed = good + bytes.fromhex('0101050a 00001000')
        result = sweep.compare([record(inputs, printed, size=44)], [inputs])
        [m] = result.mismatches
        self.assertEqual(m.kernel_size, 44)
        self.assertEqual(m.first_difference, 32)
        self.assertIn('size: kernel 44 (40 printed), model 32',
                      sweep.format_report(result).splitlines())

    def test_duplicates(self) -> None:
        good = record(self.SYN, model.layout(self.SYN))
        result = sweep.compare([good, good, good], [self.SYN])
        self.assertEqual(result.duplicates, [sweep.Duplicate(self.SYN, 3)])
        self.assertEqual(result.matched, 3)
        self.assertFalse(result.ok)
        self.assertIn(f'{model.to_text(self.SYN)} (3 records)',
                      sweep.format_report(result))

    def test_missing(self) -> None:
        records = model_records()
        dropped = records.pop(1234)
        result = sweep.compare(records)
        self.assertEqual(result.missing, [model.from_fields(dropped)])
        self.assertFalse(result.ok)

    def test_invalid_records(self) -> None:
        good = record(self.SYN, model.layout(self.SYN))
        bad = [{**good, 'bytes': 'zz'},
               {**good, 'size': '24'},
               {**good, 'smc': '1'},
               {k: v for k, v in good.items() if k != 'mss'},
               {**good, 'size': ''}]
        result = sweep.compare(bad, [self.SYN])
        self.assertEqual(len(result.invalid), 5)
        self.assertEqual(result.matched, 0)
        # Printed but garbled is invalid, not missing as well.
        self.assertEqual(result.missing, [])
        self.assertIn('the model does not cover smc',
                      sweep.format_report(result))

    def test_invalid_ao_records(self) -> None:
        good = record(self.SYN, model.layout(self.SYN))
        bad = [{**good, 'md5': '1', 'ao_maclen': '12'},
               {**good, 'ao_maclen': '17'},
               {**good, 'ao_maclen': 'x'}]
        result = sweep.compare(bad, [], kinds=[AO])
        self.assertEqual([r.reason.split(': ')[-1] for r in result.invalid],
                         ['MD5 and TCP-AO are exclusive',
                          'ao_maclen must be 0..16', 'expected a decimal '
                          'number'])
        self.assertEqual((result.matched, result.unexpected), (0, []))

    def test_report_lists_at_most_20_mismatches(self) -> None:
        records = model_records()[:25]
        for r in records:
            r['bytes'] = 'ff' + r['bytes'][2:]
        result = sweep.compare(records, [model.from_fields(r)
                                         for r in records])
        text = sweep.format_report(result)
        self.assertTrue(text.startswith('25 combinations, 0 matched\n'))
        self.assertEqual(text.count('first differing byte: 0 '), 20)
        self.assertTrue(text.endswith('... and 5 more mismatches'))



# Hand-written TCP-AO records, bytes worked out from RFC 5925 and the
# rules in tcpopt.layout.model: one plain record, four right AO ones, and a
# syncookie SYN-ACK that kept TS the way MD5 would (AO drops it).
AO_SAMPLE = """\
KTAP version 1
1..1
    # sweep: kind=syn ts=1 sack=1 ws=1 md5=0 syncookie=0 mss=1460 \
wscale=7 fo=none fo_len=0 sacks=0 dsack=0 size=20 \
bytes=020405b40402080a000000010000000001030307
    # sweep: kind=syn ts=1 sack=1 ws=1 md5=0 syncookie=0 mss=1460 \
wscale=7 fo=none fo_len=0 sacks=0 dsack=0 ao_maclen=10 size=36 \
bytes=1d0e0709a5a5a5a5a5a5a5a501010101020405b40402080a000000010000000001030307
    # sweep: kind=syn ts=1 sack=1 ws=1 md5=0 syncookie=0 mss=1460 \
wscale=7 fo=exp fo_len=4 sacks=0 dsack=0 ao_maclen=6 size=40 \
bytes=1d0a0709a5a5a5a501010101020405b40402080a000000010000000001030307\
fe08f989c0c1c2c3
    # sweep: kind=synack ts=1 sack=1 ws=1 md5=0 syncookie=1 mss=1460 \
wscale=7 fo=none fo_len=0 sacks=0 dsack=0 ao_maclen=12 size=36 \
bytes=1d100304a5a5a5a5a5a5a5a5a5a5a5a5020405b40402080a00000002000000010103\
0307
    # sweep: kind=established ts=1 sack=0 ws=0 md5=0 syncookie=0 mss=0 \
wscale=0 fo=none fo_len=0 sacks=3 dsack=0 ao_maclen=10 size=40 \
bytes=1d0e0709a5a5a5a5a5a5a5a5010101010101080a00000003000000020101050a\
0000100000002000
    # sweep: kind=synack ts=1 sack=1 ws=1 md5=0 syncookie=1 mss=1460 \
wscale=7 fo=none fo_len=0 sacks=0 dsack=0 ao_maclen=4 size=20 \
bytes=1d080304a5a5a5a5020405b40101040201030307
ok 1 tcp_opt_sweep
"""
AO_WRONG = ('kind=synack ts=1 sack=1 ws=1 md5=0 syncookie=1 mss=1460 '
            'wscale=7 fo=none fo_len=0 sacks=0 dsack=0 ao_maclen=4')


class AoSampleTest(unittest.TestCase):
    """A 6.12 run with TCP-AO records, judged as 6.12 and as 6.1."""

    @classmethod
    def setUpClass(cls) -> None:
        # The backslashes join each record back into one line.
        cls.records = ktap.parse(io.StringIO(AO_SAMPLE)).sweep

    def test_ao_maclen_only_on_ao_records(self) -> None:
        self.assertEqual([r.get('ao_maclen') for r in self.records],
                         [None, '10', '6', '12', '10', '4'])

    def test_as_a_tree_with_ao(self) -> None:
        result = sweep.compare(self.records, kinds=[AO])
        self.assertEqual((result.total, result.matched), (6, 5))
        self.assertEqual((result.invalid, result.unexpected), ([], []))
        self.assertEqual(len(result.missing), 15236 - 6)
        [wrong] = result.mismatches
        self.assertEqual(model.to_text(wrong.inputs), AO_WRONG)
        # Without the series' fix (docs/bugs.md): TS dropped.
        self.assertEqual(wrong.model.hex(), '1d080304a5a5a5a5020405b4'
                         '0402080a000000020000000101030307')
        self.assertEqual(wrong.first_difference, 12)
        self.assertTrue(wrong.size_differs)
        lines = sweep.format_report(result).splitlines()
        self.assertEqual(lines[:3], ['6 combinations, 5 matched', '',
                                     AO_WRONG])
        self.assertIn('first differing byte: 12 (kernel 0x01, model 0x04)',
                      lines)
        self.assertIn('size: kernel 20, model 28', lines)
        self.assertIn('15230 combinations of the cross product were not '
                      'printed:', lines)

    def test_as_a_tree_without_ao(self) -> None:
        result = sweep.compare(self.records)
        self.assertEqual(len(result.missing), 13096 - 1)
        self.assertEqual([i.ao_maclen for i in result.unexpected],
                         [10, 6, 12, 10, 4])
        self.assertFalse(result.ok)
        text = sweep.format_report(result)
        self.assertIn('5 combinations printed are not in the cross product '
                      'of this tree:\n' + model.to_text(result.unexpected[0]),
                      text)

    def test_against_its_own_combinations(self) -> None:
        given = [model.from_fields(r) for r in self.records]
        result = sweep.compare(self.records, expected=given)
        self.assertEqual((result.missing, result.unexpected), ([], []))
        self.assertEqual(len(result.mismatches), 1)


class TreeAwareTest(unittest.TestCase):
    """run_checks.sweep_step expects the AO groups on the tree built with AO,
    and the MPTCP groups on every tree (.kunitconfig has CONFIG_MPTCP)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.logs = {ao: ktap_log(model_records(ao=ao, mptcp=True))
                    for ao in (False, True)}

    def sweep_step(self, tree: str, ao_records: bool) -> str:
        with tempfile.TemporaryDirectory() as work:
            settings = Settings.create(tree, Path(work))
            settings.build_dir.mkdir(parents=True)
            (settings.build_dir / 'test.log').write_text(
                ''.join(self.logs[ao_records]))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                run_checks.sweep_step(settings, run_checks.Tally(),
                               ktap.read(settings.build_dir / 'test.log'))
        return out.getvalue()

    def test_trees_from_6_7_have_tcp_ao(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            self.assertEqual({tree: Settings.create(tree, Path(work))
                              .has_tcp_ao for tree in TREES},
                             {'6.1': False, '6.12': True, '7.3': True})

    def test_6_12_with_its_ao_records(self) -> None:
        out = self.sweep_step('6.12', ao_records=True)
        self.assertTrue(out.startswith('15728 combinations, 15728 matched'))
        self.assertTrue(out.endswith('PASS sweep on 6.12\n'))

    def test_6_12_without_ao_records(self) -> None:
        out = self.sweep_step('6.12', ao_records=False)
        self.assertIn('2140 combinations of the cross product were not '
                      'printed:', out)
        self.assertTrue(out.endswith('FAIL sweep on 6.12\n'))

    def test_6_1_with_ao_records(self) -> None:
        out = self.sweep_step('6.1', ao_records=True)
        self.assertIn('2140 combinations printed are not in the cross '
                      'product of this tree:', out)
        self.assertTrue(out.endswith('FAIL sweep on 6.1\n'))

    def test_6_1_plain(self) -> None:
        out = self.sweep_step('6.1', ao_records=False)
        self.assertEqual(out, '13588 combinations, 13588 matched\n'
                         'PASS sweep on 6.1\n')

    def test_the_kinds_name_the_model_groups(self) -> None:
        self.assertEqual(sweep.cross_product([AO, ACCECN0, MPTCP]),
                         model.cross_product(ao=True, accecn=True,
                                             mptcp=True))
        self.assertEqual(sweep.cross_product(), model.cross_product())

    def test_every_tree_has_mptcp(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            self.assertTrue(all(Settings.create(tree, Path(work)).has_mptcp
                                for tree in TREES))


if __name__ == '__main__':
    unittest.main()

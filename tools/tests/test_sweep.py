"""tcpopt.sweep: the kernel's '# sweep:' records against the model."""

from __future__ import annotations

import unittest
from pathlib import Path
from typing import Dict, List

from tcpopt import ktap, model, sweep
from tcpopt.model import Inputs

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


def model_records() -> List[Dict[str, str]]:
    return [record(i, model.layout(i)) for i in model.cross_product()]


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
        lines = ['KTAP version 1', '1..1']
        lines += ['        # sweep: ' + ' '.join(f'{k}={v}'
                                                 for k, v in r.items())
                  for r in self.records]
        lines += ['ok 1 tcp_opt_sweep']
        parsed = ktap.parse(line + '\n' for line in lines).sweep
        self.assertEqual(parsed, self.records)
        self.assertTrue(sweep.compare(parsed).ok)


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
               {**good, 'ao_maclen': '12'},
               {k: v for k, v in good.items() if k != 'mss'},
               {**good, 'size': ''}]
        result = sweep.compare(bad, [self.SYN])
        self.assertEqual(len(result.invalid), 5)
        self.assertEqual(result.matched, 0)
        # Printed but garbled is invalid, not missing as well.
        self.assertEqual(result.missing, [])
        self.assertIn('the model does not cover ao_maclen',
                      sweep.format_report(result))

    def test_report_lists_at_most_20_mismatches(self) -> None:
        records = model_records()[:25]
        for r in records:
            r['bytes'] = 'ff' + r['bytes'][2:]
        result = sweep.compare(records, [])
        text = sweep.format_report(result)
        self.assertTrue(text.startswith('25 combinations, 0 matched\n'))
        self.assertEqual(text.count('first differing byte: 0 '), 20)
        self.assertTrue(text.endswith('... and 5 more mismatches'))


if __name__ == '__main__':
    unittest.main()

"""tcpopt.model: known layouts from the RFCs, and properties of all of them."""

from __future__ import annotations

import itertools
import re
import unittest
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Iterator, List

from tcpopt import ktap, model
from tcpopt.model import Inputs

DATA = Path(__file__).resolve().parent / 'data'
MD5_WORDS = '01011312' + 'a5a5a5a5' * 4


def words(text: str) -> bytes:
    """'020405b4 0402080a' -> bytes; the tables below are written in words."""
    return bytes.fromhex(''.join(text.split()))


def syn(**given: object) -> Inputs:
    values = {'kind': 'syn', 'mss': 1460, 'wscale': 7, **given}
    return Inputs(**values)  # type: ignore[arg-type]


def synack(**given: object) -> Inputs:
    values = {'kind': 'synack', 'mss': 1460, 'wscale': 7, **given}
    return Inputs(**values)  # type: ignore[arg-type]


def est(**given: object) -> Inputs:
    return Inputs(kind='established', **given)  # type: ignore[arg-type]


def handshake_space() -> Iterator[Inputs]:
    """Every handshake input the model takes, wider than the kernel sweep."""
    for kind in ('syn', 'synack'):
        cookies = (False, True) if kind == 'synack' else (False,)
        for ts, sack, ws, md5, syncookie in itertools.product(
                (False, True), (False, True), (False, True), (False, True),
                cookies):
            for fo in model.FO_KINDS:
                lens = (0,) if fo == 'none' else range(0, 17, 2)
                for fo_len in lens:
                    for mss, wscale in ((1, 0), (1460, 7), (65535, 14)):
                        yield Inputs(kind=kind, ts=ts, sack=sack, ws=ws,
                                     md5=md5, syncookie=syncookie, mss=mss,
                                     wscale=wscale, fo=fo, fo_len=fo_len)


def established_space() -> Iterator[Inputs]:
    for ts, md5, dsack in itertools.product((False, True), repeat=3):
        for sacks in range(model.MAX_SACK_BLOCKS + 1):
            yield est(ts=ts, md5=md5, sacks=sacks, dsack=dsack)


def whole_space() -> List[Inputs]:
    return list(handshake_space()) + list(established_space())


class SynLayoutTest(unittest.TestCase):

    def test_p0f_linux_signature_mss_sok_ts_nop_ws(self) -> None:
        got = model.layout(syn(ts=True, sack=True, ws=True))
        self.assertEqual(got, words('02 04 05 b4 04 02 08 0a 00000001 '
                                    '00000000 01 03 03 07'))
        self.assertEqual(model.packetdrill(got),
                         'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7')

    def test_sack_and_ws_without_ts(self) -> None:
        got = model.layout(syn(sack=True, ws=True))
        self.assertEqual(got, words('02 04 05 b4 01 01 04 02 01 03 03 07'))
        self.assertEqual(model.packetdrill(got),
                         'mss 1460,nop,nop,sackOK,nop,wscale 7')

    def test_ts_only_is_led_by_two_nops(self) -> None:
        self.assertEqual(model.layout(syn(ts=True)),
                         words('020405b4 0101080a 00000001 00000000'))

    def test_mss_only(self) -> None:
        self.assertEqual(model.layout(syn(mss=536)), words('02040218'))

    def test_md5_syn_has_no_ts(self) -> None:
        got = model.layout(syn(md5=True, ts=True, sack=True, ws=True))
        self.assertEqual(len(got), 32)
        self.assertEqual(got, words(MD5_WORDS + '020405b4 01010402 01030307'))
        self.assertEqual(model.packetdrill(got),
                         'nop,nop,md5,mss 1460,nop,nop,sackOK,nop,wscale 7')

    def test_md5_syn_ts_only_is_md5_and_mss(self) -> None:
        self.assertEqual(model.layout(syn(md5=True, ts=True)),
                         words(MD5_WORDS + '020405b4'))


class SynAckLayoutTest(unittest.TestCase):

    def test_ts_values_of_a_synack(self) -> None:
        self.assertEqual(model.layout(synack(ts=True, mss=1440)),
                         words('020405a0 0101080a 00000002 00000001'))

    def test_md5_with_sack_drops_ts(self) -> None:
        got = model.layout(synack(md5=True, ts=True, sack=True, ws=True,
                                  mss=1440, wscale=9))
        self.assertEqual(got, words(MD5_WORDS + '020405a0 01010402 01030309'))

    def test_md5_without_sack_keeps_ts(self) -> None:
        got = model.layout(synack(md5=True, ts=True, ws=True, mss=1440,
                                  wscale=9))
        self.assertEqual(got, words(MD5_WORDS + '020405a0 0101080a 00000002 '
                                    '00000001 01030309'))

    def test_syncookie_keeps_ts_with_md5_and_sack(self) -> None:
        got = model.layout(synack(md5=True, syncookie=True, ts=True,
                                  sack=True, ws=True, mss=1440, wscale=9))
        self.assertEqual(got, words(MD5_WORDS + '020405a0 0402080a 00000002 '
                                    '00000001 01030309'))
        self.assertEqual(len(got), 40)


class FastOpenTest(unittest.TestCase):

    def test_kind34_len4_is_padded_with_two_nops(self) -> None:
        got = model.layout(syn(fo='rfc7413', fo_len=4))
        self.assertEqual(got[4:], words('2206c0c1 c2c30101'))
        self.assertEqual(model.packetdrill(got),
                         'mss 1460,FO c0c1c2c3,nop,nop')

    def test_exp_len6_takes_12_bytes(self) -> None:
        got = model.layout(syn(fo='exp', fo_len=6))
        self.assertEqual(got[4:], words('fe0af989 c0c1c2c3 c4c50101'))
        self.assertEqual(model.packetdrill(got),
                         'mss 1460,FOEXP c0c1c2c3c4c5,nop,nop')

    def test_unpadded_lengths(self) -> None:
        self.assertEqual(model.layout(syn(fo='rfc7413', fo_len=6))[4:],
                         words('2208c0c1 c2c3c4c5'))
        self.assertEqual(model.layout(syn(fo='exp', fo_len=4))[4:],
                         words('fe08f989 c0c1c2c3'))

    def test_cookie_requests_print_bare(self) -> None:
        request = model.layout(syn(fo='rfc7413'))
        self.assertEqual(request[4:], words('22020101'))
        self.assertEqual(model.packetdrill(request), 'mss 1460,FO,nop,nop')
        exp = model.layout(syn(fo='exp'))
        self.assertEqual(exp[4:], words('fe04f989'))
        self.assertEqual(model.packetdrill(exp), 'mss 1460,FOEXP')

    def test_full_syn_and_16_byte_cookie_fill_40(self) -> None:
        got = model.layout(syn(ts=True, sack=True, ws=True, fo='rfc7413',
                               fo_len=16))
        self.assertEqual(len(got), 40)
        self.assertEqual(got[-4:], words('cecf0101'))

    def test_md5_syn_kind34_len8_is_dropped(self) -> None:
        plain = model.layout(syn(md5=True, ts=True, sack=True, ws=True))
        got = model.layout(syn(md5=True, ts=True, sack=True, ws=True,
                               fo='rfc7413', fo_len=8))
        self.assertEqual(got, plain)
        self.assertEqual(len(got), 32)

    def test_md5_syn_exp_len4_fits_exactly(self) -> None:
        got = model.layout(syn(md5=True, ts=True, sack=True, ws=True,
                               fo='exp', fo_len=4))
        self.assertEqual(len(got), 40)
        self.assertEqual(got[32:], words('fe08f989 c0c1c2c3'))

    def test_md5_syn_exp_len6_is_dropped(self) -> None:
        got = model.layout(syn(md5=True, ts=True, sack=True, ws=True,
                               fo='exp', fo_len=6))
        self.assertEqual(len(got), 32)

    def test_synack_carries_a_cookie_too(self) -> None:
        got = model.layout(synack(ts=True, sack=True, ws=True, mss=1440,
                                  wscale=9, fo='rfc7413', fo_len=8))
        self.assertEqual(got[20:], words('220ac0c1 c2c3c4c5 c6c70101'))


class EstablishedTest(unittest.TestCase):

    def test_no_options(self) -> None:
        self.assertEqual(model.layout(est()), b'')
        self.assertEqual(model.packetdrill(b''), '')
        self.assertEqual(model.mss_delta(est()), 0)

    def test_ts_and_three_blocks_fill_40(self) -> None:
        got = model.layout(est(ts=True, sacks=3))
        self.assertEqual(got, words(
            '0101080a 00000003 00000002 0101051a 00001000 00002000 '
            '00003000 00004000 00005000 00006000'))
        self.assertEqual(model.mss_delta(est(ts=True, sacks=3)), 28)
        self.assertEqual(model.packetdrill(got),
                         'nop,nop,TS val 3 ecr 2,nop,nop,sack 4096:8192 '
                         '12288:16384 20480:24576')

    def test_fourth_block_does_not_fit_next_to_ts(self) -> None:
        self.assertEqual(model.layout(est(ts=True, sacks=4)),
                         model.layout(est(ts=True, sacks=3)))

    def test_four_blocks_without_ts(self) -> None:
        got = model.layout(est(sacks=4))
        self.assertEqual(len(got), 36)
        self.assertEqual(got[:4], words('01010522'))
        self.assertEqual(model.mss_delta(est(sacks=4)), 36)

    def test_md5_ts_leaves_no_room_for_a_block(self) -> None:
        got = model.layout(est(md5=True, ts=True, sacks=1))
        self.assertEqual(len(got), 32)
        self.assertEqual(got, words(MD5_WORDS + '0101080a 00000003 00000002'))
        self.assertNotIn('sack', model.packetdrill(got))
        self.assertEqual(model.mss_delta(est(md5=True, ts=True, sacks=1)), 0)

    def test_md5_without_ts_takes_two_blocks(self) -> None:
        for sacks in (2, 3, 4):
            got = model.layout(est(md5=True, sacks=sacks))
            self.assertEqual(got, words(MD5_WORDS + '01010512 00001000 '
                                        '00002000 00003000 00004000'))
        self.assertEqual(model.mss_delta(est(md5=True, sacks=2)), 20)

    def test_dsack_goes_first(self) -> None:
        got = model.layout(est(ts=True, sacks=4, dsack=True))
        self.assertEqual(got[12:], words('0101051a 00000100 00000200 '
                                         '00001000 00002000 00003000 '
                                         '00004000'))
        self.assertEqual(model.packetdrill(got),
                         'nop,nop,TS val 3 ecr 2,nop,nop,sack 256:512 '
                         '4096:8192 12288:16384')

    def test_dsack_alone_is_one_block(self) -> None:
        self.assertEqual(model.layout(est(dsack=True)),
                         words('0101050a 00000100 00000200'))

    def test_mss_delta_is_established_only(self) -> None:
        with self.assertRaises(ValueError):
            model.mss_delta(syn())


class KernelTablesTest(unittest.TestCase):
    """Every row of the suite's hand-written tables, as a real run printed.

    layouts-sample.log was captured before the suite stopped printing a
    space after an empty cookie ('FO ,nop'), hence the normalisation.
    """

    @classmethod
    def setUpClass(cls) -> None:
        with open(DATA / 'layouts-sample.log', errors='replace') as lines:
            cls.cases = ktap.parse(lines).cases

    def rows(self) -> Iterator[tuple]:
        for case in self.cases:
            for n, given in enumerate(case.inputs):
                yield case, n, model.from_fields(given)

    def test_64_rows(self) -> None:
        self.assertEqual(len(list(self.rows())), 64)

    def test_bytes_and_sizes(self) -> None:
        for case, n, inputs in self.rows():
            with self.subTest(case=case.name, row=n):
                got = model.layout(inputs)
                self.assertEqual(got.hex(), ''.join(case.words[n]))
                self.assertEqual(len(got), case.sizes[n])

    def test_packetdrill_text(self) -> None:
        for case, n, inputs in self.rows():
            with self.subTest(case=case.name, row=n):
                printed = re.sub(r'\b(FOEXP|FO) (?=,|$)', r'\1',
                                 case.layouts[n])
                self.assertEqual(model.packetdrill(model.layout(inputs)),
                                 printed)

    def test_mss_deltas(self) -> None:
        checked = 0
        for case, n, inputs in self.rows():
            if inputs.kind == 'established':
                with self.subTest(case=case.name, row=n):
                    self.assertEqual(model.mss_delta(inputs),
                                     case.mss_deltas[n])
                checked += 1
        self.assertEqual(checked, 19)


class PropertyTest(unittest.TestCase):
    """What RFC 9293 and the documented order promise, for every input."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.space = whole_space() + model.cross_product()
        cls.layouts = [(i, model.layout(i)) for i in cls.space]

    def test_aligned_and_within_40_bytes(self) -> None:
        for inputs, got in self.layouts:
            self.assertEqual(len(got) % 4, 0, model.to_text(inputs))
            self.assertLessEqual(len(got), model.MAX_OPTION_SPACE)

    def test_well_formed_and_decodable(self) -> None:
        for inputs, got in self.layouts:
            self.assertIsInstance(model.packetdrill(got), str)

    def test_md5_first_then_mss(self) -> None:
        for inputs, got in self.layouts:
            kinds = [o.kind for o in model.parse_options(got)
                     if o.kind != model.TCPOPT_NOP]
            if inputs.md5:
                self.assertEqual(kinds[0], model.TCPOPT_MD5SIG)
                kinds = kinds[1:]
            if inputs.kind != 'established':
                self.assertEqual(kinds[0], model.TCPOPT_MSS,
                                 model.to_text(inputs))
            else:
                self.assertNotIn(model.TCPOPT_MSS, kinds)

    def test_sack_perm_never_first(self) -> None:
        for inputs, got in self.layouts:
            kinds = [o.kind for o in model.parse_options(got)
                     if o.kind != model.TCPOPT_NOP]
            if kinds:
                self.assertNotEqual(kinds[0], model.TCPOPT_SACK_PERM)

    def test_every_option_once_at_most(self) -> None:
        for inputs, got in self.layouts:
            kinds = Counter(o.kind for o in model.parse_options(got)
                            if o.kind != model.TCPOPT_NOP)
            self.assertTrue(all(n == 1 for n in kinds.values()),
                            model.to_text(inputs))

    def test_md5_hash_left_untouched(self) -> None:
        for inputs, got in self.layouts:
            if inputs.md5:
                self.assertEqual(got[:20].hex(), MD5_WORDS)

    def test_no_ts_on_an_md5_syn(self) -> None:
        for inputs, got in self.layouts:
            if inputs.kind == 'syn' and inputs.md5:
                self.assertNotIn('TS', model.packetdrill(got))

    def test_cookie_whole_or_absent(self) -> None:
        for inputs, got in self.layouts:
            if inputs.fo == 'none':
                continue
            text = model.packetdrill(got)
            name = 'FOEXP' if inputs.fo == 'exp' else 'FO'
            whole = name + (f' {model.cookie(inputs).hex()}'
                            if inputs.fo_len else '')
            without = model.layout(replace(inputs, fo='none', fo_len=0))
            if len(got) == len(without):
                self.assertEqual(got, without)
                self.assertGreater(len(without) +
                                   model.fast_open_size(inputs), 40)
            else:
                self.assertIn(whole, text.split(','))

    def test_sack_blocks_rfc2018_limits(self) -> None:
        for inputs, got in self.layouts:
            sacks = [o for o in model.parse_options(got)
                     if o.kind == model.TCPOPT_SACK]
            if not sacks:
                continue
            blocks = len(sacks[0].payload) // 8
            self.assertLessEqual(blocks, 3 if inputs.ts else 4)
            self.assertLessEqual(blocks, inputs.sacks + inputs.dsack)

    def test_size_matches_the_budget(self) -> None:
        for inputs, got in self.layouts:
            self.assertEqual(len(got), model.reserved_size(
                model.plan(inputs), inputs))


class CrossProductTest(unittest.TestCase):

    def test_13096_unique_combinations(self) -> None:
        combos = model.cross_product()
        self.assertEqual(len(combos), 13096)
        self.assertEqual(len(set(combos)), 13096)

    def test_per_kind(self) -> None:
        kinds = Counter(i.kind for i in model.cross_product())
        self.assertEqual(kinds, {'syn': 8 * 2 * 17 * 16,
                                 'synack': 8 * 2 * 2 * 17 * 16,
                                 'established': 2 * 2 * 5 * 2})

    def test_cookie_variants(self) -> None:
        variants = {(i.fo, i.fo_len) for i in model.cross_product()
                    if i.kind == 'syn'}
        self.assertEqual(len(variants), 17)

    def test_starts_where_the_kernel_starts(self) -> None:
        first = model.cross_product()[0]
        self.assertEqual(first, syn(mss=536, wscale=0))
        self.assertEqual(model.cross_product()[-1],
                         est(ts=True, md5=True, dsack=True, sacks=4))


class FieldsTest(unittest.TestCase):

    RECORD = ('kind=synack ts=1 sack=0 ws=1 md5=1 syncookie=0 mss=1460 '
              'wscale=7 fo=exp fo_len=8 sacks=0 dsack=0 size=40 bytes=00')

    def test_from_a_kernel_record(self) -> None:
        got = model.from_fields(ktap.fields(self.RECORD))
        self.assertEqual(got, synack(ts=True, ws=True, md5=True, fo='exp',
                                     fo_len=8))

    def test_round_trip_over_the_cross_product(self) -> None:
        for inputs in model.cross_product():
            self.assertEqual(model.from_fields(model.to_fields(inputs)),
                             inputs)

    def test_text_is_the_kernel_form(self) -> None:
        self.assertEqual(model.to_text(est(ts=True, sacks=2)),
                         'kind=established ts=1 sack=0 ws=0 md5=0 '
                         'syncookie=0 mss=0 wscale=0 fo=none fo_len=0 '
                         'sacks=2 dsack=0')

    def test_unknown_key_is_refused(self) -> None:
        fields = ktap.fields(self.RECORD + ' ao_maclen=12')
        with self.assertRaisesRegex(ValueError, 'ao_maclen'):
            model.from_fields(fields)

    def test_missing_key(self) -> None:
        fields = ktap.fields(self.RECORD)
        del fields['dsack']
        with self.assertRaisesRegex(ValueError, 'missing dsack'):
            model.from_fields(fields)

    def test_bad_values(self) -> None:
        for key, value in (('ts', 'yes'), ('mss', '-1'), ('kind', 'rst'),
                           ('fo', 'tfo'), ('fo_len', '5'), ('wscale', '15')):
            fields = {**ktap.fields(self.RECORD), key: value}
            with self.subTest(key=key), self.assertRaises(ValueError):
                model.from_fields(fields)


class InputsTest(unittest.TestCase):

    def test_refused_combinations(self) -> None:
        for bad in (dict(kind='syn', mss=0),
                    dict(kind='syn', mss=1460, syncookie=True),
                    dict(kind='syn', mss=1460, sacks=1),
                    dict(kind='syn', mss=1460, fo_len=4),
                    dict(kind='syn', mss=1460, fo='exp', fo_len=18),
                    dict(kind='established', sacks=5),
                    dict(kind='established', mss=1460),
                    dict(kind='established', fo='exp')):
            with self.subTest(**bad), self.assertRaises(ValueError):
                Inputs(**bad)  # type: ignore[arg-type]


class DecoderTest(unittest.TestCase):

    def test_malformed_areas(self) -> None:
        for bad in ('00000000', '0204', '020405', '0201', '02050000',
                    '1e020101', 'fe04aaaa', '05030000'):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                model.packetdrill(bytes.fromhex(bad))

    def test_nops_are_listed(self) -> None:
        self.assertEqual(model.packetdrill(words('01010101')),
                         'nop,nop,nop,nop')


if __name__ == '__main__':
    unittest.main()

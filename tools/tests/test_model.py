"""tcpopt.layout.model: known layouts from the RFCs, properties of them all."""

from __future__ import annotations

import itertools
import re
import struct
import unittest
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Iterator, List, NamedTuple

from tcpopt.layout import model
from tcpopt.layout.model import Inputs
from tcpopt.log import ktap

DATA = Path(__file__).resolve().parent / 'data'
MD5_WORDS = '01011312' + 'a5a5a5a5' * 4
MAC_WORD = 'a5a5a5a5'               # a MAC word the writer leaves alone
NOP_WORD = '01010101'
# The signatures a segment can carry: none, MD5, or AO with each MAC.
AUTH = [dict(md5=False, ao_maclen=0), dict(md5=True, ao_maclen=0)] + \
    [dict(md5=False, ao_maclen=n)
     for n in range(1, model.MAX_AO_MACLEN + 1)]


def words(text: str) -> bytes:
    """'020405b4 0402080a' -> bytes; the tables below are written in words."""
    return bytes.fromhex(''.join(text.split()))


# --- a strict reading of the model's bytes ---------------------------------
# The model's own decoder, kept with its tests and independent of
# tcpopt.layout.options: it raises on anything the writer never emits.

class Option(NamedTuple):
    """One option as found on the wire; NOPs included, payload empty."""

    offset: int
    kind: int
    payload: bytes


def parse_options(data: bytes) -> List[Option]:
    """Split an option area by the RFC 9293 rules; ValueError if malformed."""
    out: List[Option] = []
    offset = 0
    while offset < len(data):
        kind = data[offset]
        if kind == model.TCPOPT_EOL:
            # Linux never writes EOL: its layouts end on a word boundary.
            raise ValueError(f'EOL at byte {offset}')
        if kind == model.TCPOPT_NOP:
            out.append(Option(offset, kind, b''))
            offset += 1
            continue
        if offset + 2 > len(data):
            raise ValueError(f'kind {kind} at byte {offset} has no length')
        length = data[offset + 1]
        if length < 2 or offset + length > len(data):
            raise ValueError(f'kind {kind} at byte {offset}: bad length '
                             f'{length}')
        out.append(Option(offset, kind, data[offset + 2:offset + length]))
        offset += length
    return out


def _expect_len(option: Option, length: int) -> None:
    if len(option.payload) + 2 != length:
        raise ValueError(f'kind {option.kind} at byte {option.offset}: '
                         f'length {len(option.payload) + 2}, not {length}')


def _describe(option: Option) -> str:
    """One option in packetdrill notation, as the kernel suite prints it."""
    kind, body = option.kind, option.payload
    fixed = {model.TCPOPT_MSS: model.TCPOLEN_MSS,
             model.TCPOPT_WINDOW: model.TCPOLEN_WINDOW,
             model.TCPOPT_SACK_PERM: model.TCPOLEN_SACK_PERM,
             model.TCPOPT_TIMESTAMP: model.TCPOLEN_TIMESTAMP,
             model.TCPOPT_MD5SIG: model.TCPOLEN_MD5SIG}
    if kind in fixed:
        _expect_len(option, fixed[kind])
    if kind == model.TCPOPT_AO and len(body) + 2 <= model.TCPOLEN_AO_BASE:
        raise ValueError(f'TCP-AO at byte {option.offset}: no MAC')
    if kind == model.TCPOPT_NOP:
        return 'nop'
    if kind == model.TCPOPT_MSS:
        return f'mss {struct.unpack("!H", body)[0]}'
    if kind == model.TCPOPT_WINDOW:
        return f'wscale {body[0]}'
    if kind == model.TCPOPT_SACK_PERM:
        return 'sackOK'
    if kind == model.TCPOPT_TIMESTAMP:
        return 'TS val {} ecr {}'.format(*struct.unpack('!II', body))
    if kind == model.TCPOPT_MD5SIG:
        return 'md5'
    if kind == model.TCPOPT_AO:
        # The kernel suite's notation: the MAC by its length, not bytes.
        return f'AO keyid {body[0]} rnext {body[1]} mac {len(body) - 2}'
    if kind == model.TCPOPT_SACK:
        if len(body) % model.TCPOLEN_SACK_PERBLOCK:
            raise ValueError(f'SACK at byte {option.offset}: partial block')
        edges = struct.unpack(f'!{len(body) // 4}I', body)
        return 'sack' + ''.join(f' {edges[n]}:{edges[n + 1]}'
                                for n in range(0, len(edges), 2))
    if kind in (model.TCPOPT_ACCECN0, model.TCPOPT_ACCECN1):
        return _describe_accecn(option)
    if kind == model.TCPOPT_FASTOPEN:
        return 'FO' + (f' {body.hex()}' if body else '')
    if kind == model.TCPOPT_EXP and len(body) >= 2 and \
            struct.unpack('!H', body[:2])[0] == model.FASTOPEN_MAGIC:
        return 'FOEXP' + (f' {body[2:].hex()}' if len(body) > 2 else '')
    raise ValueError(f'kind {kind} at byte {option.offset} is not one the '
                     'writer emits')


def _describe_accecn(option: Option) -> str:
    body = option.payload
    if len(body) % model.ACCECN_FIELD_LEN or \
            len(body) > model.ACCECN_FIELD_LEN * model.ACCECN_MAX_FIELDS:
        raise ValueError(f'AccECN at byte {option.offset}: length '
                         f'{len(body) + 2}')
    order = model.ACCECN1_ORDER if option.kind == model.TCPOPT_ACCECN1 \
        else model.ACCECN0_ORDER
    fields = [f'{name} {int.from_bytes(body[n:n + 3], "big")}'
              for name, n in zip(order, range(0, len(body), 3))]
    name = f'AccECN{int(option.kind == model.TCPOPT_ACCECN1)}'
    return ' '.join([name] + fields)


def layout_text(data: bytes) -> str:
    """'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7'; '' for no options."""
    return ','.join(_describe(option) for option in parse_options(data))


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
        for ts, sack, ws, auth, syncookie in itertools.product(
                (False, True), (False, True), (False, True), AUTH, cookies):
            for fo in model.FO_KINDS:
                lens = (0,) if fo == 'none' else range(0, 17, 2)
                for fo_len in lens:
                    for mss, wscale in ((1, 0), (1460, 7), (65535, 14)):
                        yield Inputs(kind=kind, ts=ts, sack=sack, ws=ws,
                                     syncookie=syncookie, mss=mss,
                                     wscale=wscale, fo=fo, fo_len=fo_len,
                                     **auth)  # type: ignore[arg-type]


def established_space() -> Iterator[Inputs]:
    for ts, auth, dsack in itertools.product((False, True), AUTH,
                                             (False, True)):
        for sacks in range(model.MAX_SACK_BLOCKS + 1):
            yield est(ts=ts, sacks=sacks, dsack=dsack, **auth)


def whole_space() -> List[Inputs]:
    return list(handshake_space()) + list(established_space())


class SynLayoutTest(unittest.TestCase):

    def test_p0f_linux_signature_mss_sok_ts_nop_ws(self) -> None:
        got = model.layout(syn(ts=True, sack=True, ws=True))
        self.assertEqual(got, words('02 04 05 b4 04 02 08 0a 00000001 '
                                    '00000000 01 03 03 07'))
        self.assertEqual(layout_text(got),
                         'mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7')

    def test_sack_and_ws_without_ts(self) -> None:
        got = model.layout(syn(sack=True, ws=True))
        self.assertEqual(got, words('02 04 05 b4 01 01 04 02 01 03 03 07'))
        self.assertEqual(layout_text(got),
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
        self.assertEqual(layout_text(got),
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
        self.assertEqual(layout_text(got),
                         'mss 1460,FO c0c1c2c3,nop,nop')

    def test_exp_len6_takes_12_bytes(self) -> None:
        got = model.layout(syn(fo='exp', fo_len=6))
        self.assertEqual(got[4:], words('fe0af989 c0c1c2c3 c4c50101'))
        self.assertEqual(layout_text(got),
                         'mss 1460,FOEXP c0c1c2c3c4c5,nop,nop')

    def test_unpadded_lengths(self) -> None:
        self.assertEqual(model.layout(syn(fo='rfc7413', fo_len=6))[4:],
                         words('2208c0c1 c2c3c4c5'))
        self.assertEqual(model.layout(syn(fo='exp', fo_len=4))[4:],
                         words('fe08f989 c0c1c2c3'))

    def test_cookie_requests_print_bare(self) -> None:
        request = model.layout(syn(fo='rfc7413'))
        self.assertEqual(request[4:], words('22020101'))
        self.assertEqual(layout_text(request), 'mss 1460,FO,nop,nop')
        exp = model.layout(syn(fo='exp'))
        self.assertEqual(exp[4:], words('fe04f989'))
        self.assertEqual(layout_text(exp), 'mss 1460,FOEXP')

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
        self.assertEqual(layout_text(b''), '')
        self.assertEqual(model.mss_delta(est()), 0)

    def test_ts_and_three_blocks_fill_40(self) -> None:
        got = model.layout(est(ts=True, sacks=3))
        self.assertEqual(got, words(
            '0101080a 00000003 00000002 0101051a 00001000 00002000 '
            '00003000 00004000 00005000 00006000'))
        self.assertEqual(model.mss_delta(est(ts=True, sacks=3)), 28)
        self.assertEqual(layout_text(got),
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
        self.assertNotIn('sack', layout_text(got))
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
        self.assertEqual(layout_text(got),
                         'nop,nop,TS val 3 ecr 2,nop,nop,sack 256:512 '
                         '4096:8192 12288:16384')

    def test_dsack_alone_is_one_block(self) -> None:
        self.assertEqual(model.layout(est(dsack=True)),
                         words('0101050a 00000100 00000200'))

    def test_mss_delta_is_established_only(self) -> None:
        with self.assertRaises(ValueError):
            model.mss_delta(syn())

    def test_mss_delta_is_6_1_only(self) -> None:
        with self.assertRaisesRegex(ValueError, 'TCP-AO'):
            model.mss_delta(est(ts=True, ao_maclen=12))


def ao(maclen: int, ids: str = '0709') -> str:
    """The AO option as the writer leaves it: header, MAC words, NOPs."""
    return f'1d{4 + maclen:02x}{ids} ' + f'{MAC_WORD} ' * (maclen // 4) + \
        (NOP_WORD if maclen % 4 else '')


class AoEncodingTest(unittest.TestCase):
    """RFC 5925 section 2.2, and what the writer leaves of the MAC."""

    def test_mac_4_is_one_untouched_word(self) -> None:
        self.assertEqual(model.layout(est(ao_maclen=4)),
                         words('1d080709 a5a5a5a5'))

    def test_mac_6_ends_in_a_nop_word(self) -> None:
        self.assertEqual(model.layout(est(ao_maclen=6)),
                         words('1d0a0709 a5a5a5a5 01010101'))

    def test_mac_10_ends_in_a_nop_word(self) -> None:
        got = model.layout(est(ao_maclen=10))
        self.assertEqual(got, words('1d0e0709 a5a5a5a5 a5a5a5a5 01010101'))
        # The length byte is unaligned: the option ends 2 bytes into the
        # NOP word, whose last 2 bytes are padding.
        self.assertEqual(layout_text(got),
                         'AO keyid 7 rnext 9 mac 10,nop,nop')

    def test_mac_12_and_16_are_whole_words(self) -> None:
        self.assertEqual(model.layout(est(ao_maclen=12)),
                         words('1d100709' + MAC_WORD * 3))
        self.assertEqual(model.layout(est(ao_maclen=16)),
                         words('1d140709' + MAC_WORD * 4))

    def test_mac_shorter_than_a_word(self) -> None:
        self.assertEqual(model.layout(est(ao_maclen=1)),
                         words('1d050709 01010101'))

    def test_aligned_sizes(self) -> None:
        self.assertEqual({n: model.ao_size(est(ao_maclen=n))
                          for n in (0, 1, 4, 5, 6, 8, 10, 12, 13, 16)},
                         {0: 0, 1: 8, 4: 8, 5: 12, 6: 12, 8: 12, 10: 16,
                          12: 16, 13: 20, 16: 20})

    def test_synack_has_the_request_key_ids(self) -> None:
        self.assertEqual(model.layout(synack(ao_maclen=4))[:8],
                         words('1d080304 a5a5a5a5'))
        self.assertEqual(model.layout(syn(ao_maclen=4))[:8],
                         words('1d080709 a5a5a5a5'))


class SynAoTest(unittest.TestCase):

    def test_mac_4_keeps_ts(self) -> None:
        got = model.layout(syn(ts=True, sack=True, ws=True, ao_maclen=4))
        self.assertEqual(got, words('1d080709 a5a5a5a5 020405b4 0402080a '
                                    '00000001 00000000 01030307'))
        self.assertEqual(layout_text(got),
                         'AO keyid 7 rnext 9 mac 4,mss 1460,sackOK,'
                         'TS val 1 ecr 0,nop,wscale 7')

    def test_mac_10_nop_padded(self) -> None:
        got = model.layout(syn(ts=True, sack=True, ws=True, ao_maclen=10))
        self.assertEqual(len(got), 36)
        self.assertEqual(got, words('1d0e0709 a5a5a5a5 a5a5a5a5 01010101 '
                                    '020405b4 0402080a 00000001 00000000 '
                                    '01030307'))

    def test_mac_16_fills_40(self) -> None:
        got = model.layout(syn(ts=True, sack=True, ws=True, ao_maclen=16))
        self.assertEqual(got, words(ao(16) + '020405b4 0402080a 00000001 '
                                    '00000000 01030307'))
        self.assertEqual(len(got), 40)

    def test_mac_16_leaves_no_room_for_a_cookie_request(self) -> None:
        full = syn(ts=True, sack=True, ws=True, ao_maclen=16)
        self.assertEqual(model.layout(replace(full, fo='rfc7413')),
                         model.layout(full))

    def test_cookie_after_ws(self) -> None:
        # 12 + 4 + 12 + 4 leave 8: an experimental 4-byte cookie fits...
        got = model.layout(syn(ts=True, sack=True, ws=True, ao_maclen=6,
                               fo='exp', fo_len=4))
        self.assertEqual(got, words(ao(6) + '020405b4 0402080a 00000001 '
                                    '00000000 01030307 fe08f989 c0c1c2c3'))
        # ... a 6-byte one does not and is left out whole.
        self.assertEqual(len(model.layout(syn(ts=True, sack=True, ws=True,
                                              ao_maclen=6, fo='exp',
                                              fo_len=6))), 32)


class SynAckAoTest(unittest.TestCase):

    def test_sack_drops_ts(self) -> None:
        got = model.layout(synack(ts=True, sack=True, ws=True, mss=1440,
                                  wscale=9, ao_maclen=12))
        self.assertEqual(got, words('1d100304' + MAC_WORD * 3 +
                                    '020405a0 01010402 01030309'))

    def test_syncookie_keeps_ts_with_sack(self) -> None:
        # As with MD5 (SynAckLayoutTest.test_syncookie_keeps_ts_with_md5_
        # and_sack): the cookie lives in TS (the series' fix, docs/bugs.md).
        for maclen in (4, 10):
            got = model.layout(synack(syncookie=True, ts=True, sack=True,
                                      ws=True, ao_maclen=maclen))
            self.assertEqual(got, words(ao(maclen, '0304') + '020405b4 '
                                        '0402080a 00000002 00000001 '
                                        '01030307'))

    def test_without_sack_keeps_ts(self) -> None:
        for syncookie in (False, True):
            got = model.layout(synack(syncookie=syncookie, ts=True, ws=True,
                                      mss=1440, wscale=9, ao_maclen=12))
            self.assertEqual(got, words('1d100304' + MAC_WORD * 3 +
                                        '020405a0 0101080a 00000002 '
                                        '00000001 01030309'))


class EstablishedAoTest(unittest.TestCase):

    def test_mac_10_ts_leaves_one_block(self) -> None:
        # 16 + 12 leave 12: (12 - 4) // 8 = 1 of the 3 queued blocks.
        got = model.layout(est(ts=True, sacks=3, ao_maclen=10))
        self.assertEqual(len(got), 40)
        self.assertEqual(got, words('1d0e0709 a5a5a5a5 a5a5a5a5 01010101 '
                                    '0101080a 00000003 00000002 0101050a '
                                    '00001000 00002000'))

    def test_mac_10_ts_dsack_goes_first(self) -> None:
        got = model.layout(est(ts=True, sacks=2, dsack=True, ao_maclen=10))
        self.assertEqual(got[28:], words('0101050a 00000100 00000200'))

    def test_mac_4_ts_leaves_two_blocks(self) -> None:
        # 8 + 12 leave 20: (20 - 4) // 8 = 2, where 20 // 8 would also
        # say 2 but (20 - 4) / 8 rounded up would say 3.
        got = model.layout(est(ts=True, sacks=3, ao_maclen=4))
        self.assertEqual(got, words('1d080709 a5a5a5a5 0101080a 00000003 '
                                    '00000002 01010512 00001000 00002000 '
                                    '00003000 00004000'))

    def test_mac_16_ts_no_room_for_sack(self) -> None:
        for sacks in range(1, 5):
            got = model.layout(est(ts=True, sacks=sacks, ao_maclen=16))
            self.assertEqual(len(got), 32)
            self.assertEqual(got, words(ao(16) + '0101080a 00000003 '
                                        '00000002'))
            self.assertNotIn('sack', layout_text(got))

    def test_mac_16_without_ts_takes_two_blocks(self) -> None:
        # 20 leave 20: (20 - 4) // 8 = 2.
        got = model.layout(est(sacks=4, ao_maclen=16))
        self.assertEqual(got, words(ao(16) + '01010512 00001000 00002000 '
                                    '00003000 00004000'))


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

    def test_layout_text(self) -> None:
        for case, n, inputs in self.rows():
            with self.subTest(case=case.name, row=n):
                printed = re.sub(r'\b(FOEXP|FO) (?=,|$)', r'\1',
                                 case.layouts[n])
                self.assertEqual(layout_text(model.layout(inputs)),
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
        cls.space = whole_space() + model.cross_product(ao=True)
        cls.layouts = [(i, model.layout(i)) for i in cls.space]

    def test_aligned_and_within_40_bytes(self) -> None:
        for inputs, got in self.layouts:
            self.assertEqual(len(got) % 4, 0, model.to_text(inputs))
            self.assertLessEqual(len(got), model.MAX_OPTION_SPACE)

    def test_well_formed_and_decodable(self) -> None:
        for inputs, got in self.layouts:
            self.assertIsInstance(layout_text(got), str)

    def test_md5_or_ao_first_then_mss(self) -> None:
        for inputs, got in self.layouts:
            kinds = [o.kind for o in parse_options(got)
                     if o.kind != model.TCPOPT_NOP]
            if inputs.md5:
                self.assertEqual(kinds[0], model.TCPOPT_MD5SIG)
                kinds = kinds[1:]
            if inputs.ao_maclen:
                self.assertEqual(kinds[0], model.TCPOPT_AO)
                kinds = kinds[1:]
            if inputs.kind != 'established':
                self.assertEqual(kinds[0], model.TCPOPT_MSS,
                                 model.to_text(inputs))
            else:
                self.assertNotIn(model.TCPOPT_MSS, kinds)

    def test_sack_perm_never_first(self) -> None:
        for inputs, got in self.layouts:
            kinds = [o.kind for o in parse_options(got)
                     if o.kind != model.TCPOPT_NOP]
            if kinds:
                self.assertNotEqual(kinds[0], model.TCPOPT_SACK_PERM)

    def test_every_option_once_at_most(self) -> None:
        for inputs, got in self.layouts:
            kinds = Counter(o.kind for o in parse_options(got)
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
                self.assertNotIn('TS', layout_text(got))

    def test_ao_option_as_rfc5925_lays_it_out(self) -> None:
        for inputs, got in self.layouts:
            if not inputs.ao_maclen:
                continue
            first = parse_options(got)[0]
            self.assertEqual(first.kind, model.TCPOPT_AO)
            self.assertEqual(len(first.payload) + 2, 4 + inputs.ao_maclen)
            self.assertEqual(tuple(first.payload[:2]),
                             model.AO_KEY_IDS[inputs.kind])
            # The MAC's whole words are untouched, the rest is NOPs up to
            # the next word, where the next option starts.
            whole = inputs.ao_maclen // 4 * 4
            self.assertEqual(set(got[4:4 + whole]), {model.UNWRITTEN}
                             if whole else set())
            aligned = model.ao_size(inputs)
            self.assertEqual(set(got[4 + whole:aligned]),
                             {model.TCPOPT_NOP} if aligned > 4 + whole
                             else set())

    def test_ao_syn_keeps_ts(self) -> None:
        for inputs, got in self.layouts:
            if inputs.kind == 'syn' and inputs.ao_maclen and inputs.ts:
                self.assertIn('TS val 1 ecr 0', layout_text(got))

    def test_ao_synack_gives_ts_up_for_sack(self) -> None:
        for inputs, got in self.layouts:
            if inputs.kind == 'synack' and inputs.ao_maclen and inputs.ts:
                self.assertEqual('TS' in layout_text(got),
                                 not inputs.sack or inputs.syncookie,
                                 model.to_text(inputs))

    def test_ao_keeps_the_established_order(self) -> None:
        def options(data: bytes) -> List[Option]:
            return [o for o in parse_options(data)
                    if o.kind != model.TCPOPT_NOP]

        for inputs, got in self.layouts:
            if inputs.kind != 'established' or not inputs.ao_maclen:
                continue
            rest = options(got[model.ao_size(inputs):])
            plain = options(model.layout(replace(inputs, ao_maclen=0)))
            # What follows AO is the layout without it, less at most the
            # last SACK blocks (or the whole SACK option).
            self.assertEqual([o.kind for o in rest],
                             [o.kind for o in plain][:len(rest)])
            for mine, theirs in zip(rest, plain):
                self.assertEqual(mine.payload,
                                 theirs.payload[:len(mine.payload)])

    def test_cookie_whole_or_absent(self) -> None:
        for inputs, got in self.layouts:
            if inputs.fo == 'none':
                continue
            text = layout_text(got)
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
            sacks = [o for o in parse_options(got)
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

    def test_15236_unique_combinations_with_ao(self) -> None:
        combos = model.cross_product(ao=True)
        self.assertEqual(len(combos), 15236)
        self.assertEqual(len(set(combos)), 15236)
        # The AO groups come after all the others.
        self.assertEqual(combos[:13096], model.cross_product())
        self.assertTrue(all(i.ao_maclen for i in combos[13096:]))
        self.assertFalse(any(i.md5 for i in combos[13096:]))

    def test_ao_groups_per_kind(self) -> None:
        ao = model.cross_product(ao=True)[13096:]
        self.assertEqual(Counter((i.kind, i.syncookie) for i in ao),
                         {('syn', False): 40 + 320 + 320,
                          ('synack', False): 40 + 320 + 320,
                          ('synack', True): 40 + 320 + 320,
                          ('established', False): 100})
        self.assertEqual({(i.mss, i.wscale) for i in ao
                          if i.kind != 'established'}, {(1460, 7)})

    def test_ao_groups_in_the_kernel_order(self) -> None:
        ao = model.cross_product(ao=True)[13096:]
        # syn, fo none: flags, then the MAC.
        self.assertEqual(ao[:6], [syn(ao_maclen=n) for n in (4, 6, 10, 12,
                                                             16)] +
                         [syn(ts=True, ao_maclen=4)])
        # syn, fo rfc7413: flags, MAC, then the cookie length.
        self.assertEqual(ao[40:42], [syn(ao_maclen=4, fo='rfc7413'),
                                     syn(ao_maclen=4, fo='rfc7413',
                                         fo_len=4)])
        self.assertEqual(ao[40 + 8], syn(ao_maclen=6, fo='rfc7413'))
        self.assertEqual(ao[680], synack(ao_maclen=4))
        self.assertEqual(ao[1360], synack(syncookie=True, ao_maclen=4))
        # established: the MAC, then flags.
        self.assertEqual(ao[2040:2042], [est(ao_maclen=4),
                                         est(ts=True, ao_maclen=4)])
        self.assertEqual(ao[2060], est(ao_maclen=6))
        self.assertEqual(ao[-1], est(ts=True, dsack=True, sacks=4,
                                     ao_maclen=16))


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
        fields = ktap.fields(self.RECORD + ' smc=1')
        with self.assertRaisesRegex(ValueError, 'does not cover smc'):
            model.from_fields(fields)

    def test_from_an_ao_record(self) -> None:
        fields = ktap.fields(
            'kind=established ts=1 sack=0 ws=0 md5=0 syncookie=0 mss=0 '
            'wscale=0 fo=none fo_len=0 sacks=3 dsack=0 ao_maclen=10 '
            'size=40 bytes=00')
        self.assertEqual(model.from_fields(fields),
                         est(ts=True, sacks=3, ao_maclen=10))

    def test_round_trip_over_the_ao_cross_product(self) -> None:
        for inputs in model.cross_product(ao=True)[13096:]:
            fields = model.to_fields(inputs)
            self.assertEqual(list(fields)[-2:], ['dsack', 'ao_maclen'])
            self.assertEqual(model.from_fields(fields), inputs)

    def test_ao_maclen_printed_only_when_set(self) -> None:
        self.assertNotIn('ao_maclen', model.to_fields(syn()))
        self.assertEqual(model.to_text(est(ts=True, ao_maclen=6)),
                         'kind=established ts=1 sack=0 ws=0 md5=0 '
                         'syncookie=0 mss=0 wscale=0 fo=none fo_len=0 '
                         'sacks=0 dsack=0 ao_maclen=6')
        # An explicit 0 is no AO, and prints as the kernel would: not at all.
        fields = {**model.to_fields(syn()), 'ao_maclen': '0'}
        self.assertEqual(model.to_fields(model.from_fields(fields)),
                         model.to_fields(syn()))

    def test_missing_key(self) -> None:
        fields = ktap.fields(self.RECORD)
        del fields['dsack']
        with self.assertRaisesRegex(ValueError, 'missing dsack'):
            model.from_fields(fields)

    def test_bad_values(self) -> None:
        for key, value in (('ts', 'yes'), ('mss', '-1'), ('kind', 'rst'),
                           ('fo', 'tfo'), ('fo_len', '5'), ('wscale', '15'),
                           ('ao_maclen', '17'), ('ao_maclen', '-4'),
                           ('ao_maclen', '12')):
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
                    dict(kind='established', fo='exp'),
                    dict(kind='established', ao_maclen=17),
                    dict(kind='established', ao_maclen=-1),
                    dict(kind='syn', mss=1460, ao_maclen=33)):
            with self.subTest(**bad), self.assertRaises(ValueError):
                Inputs(**bad)  # type: ignore[arg-type]


    def test_md5_and_ao_are_exclusive(self) -> None:
        for bad in (syn, synack, est):
            with self.subTest(kind=bad.__name__), \
                    self.assertRaisesRegex(ValueError, 'exclusive'):
                bad(md5=True, ao_maclen=12)


class DecoderTest(unittest.TestCase):

    def test_malformed_areas(self) -> None:
        for bad in ('00000000', '0204', '020405', '0201', '02050000',
                    '1e020101', 'fe04aaaa', '05030000', '1d040709',
                    '1d030701'):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                layout_text(bytes.fromhex(bad))

    def test_nops_are_listed(self) -> None:
        self.assertEqual(layout_text(words('01010101')),
                         'nop,nop,nop,nop')


if __name__ == '__main__':
    unittest.main()


class AccEcnTest(unittest.TestCase):
    """RFC 9768 section 3.2.3 encodings under the Linux fitting policy."""

    EST = dict(kind='established', ts=True, accecn=True, ecn_option=2)

    def layout_hex(self, **fields) -> str:
        return model.layout(model.Inputs(**fields)).hex()

    def test_three_fields_are_padded_with_one_nop(self) -> None:
        self.assertEqual(model.accecn_cost(3, 2), 12)
        self.assertEqual(self.layout_hex(**self.EST),
                         '0101080a0000000300000002'
                         'ae0b111111222222333333' '01')

    def test_bare_option_takes_the_sack_words_nops(self) -> None:
        self.assertEqual(self.layout_hex(sacks=3, **self.EST)[24:32],
                         'ae02051a')

    def test_one_field_leftover_takes_the_first_sack_nop(self) -> None:
        inputs = dict(self.EST, ts=False, sacks=4)
        self.assertEqual(self.layout_hex(**inputs)[:16], 'ae05111111010522')

    def test_owed_fields_cost_a_sack_block(self) -> None:
        plan = model.plan(model.Inputs(sacks=3, minlen=1, **self.EST))
        self.assertEqual((plan.accecn_fields, plan.sack_blocks), (2, 2))

    def test_owed_fields_that_never_fit_keep_the_blocks(self) -> None:
        plan = model.plan(model.Inputs(sacks=3, minlen=3, **self.EST))
        self.assertEqual((plan.accecn_fields, plan.sack_blocks), (-1, 3))

    def test_synack_one_field_leftover_takes_wscale_nop(self) -> None:
        inputs = model.Inputs(kind='synack', ts=True, sack=True, ws=True,
                              mss=1460, wscale=7, fo='rfc7413', fo_len=12,
                              accecn=True, ecn_option=2)
        self.assertEqual(model.layout(inputs).hex()[32:48],
                         'ae05000001030307')

    def test_two_byte_leftover_never_splits_around_wscale(self) -> None:
        # WSCALE's one NOP cannot take kind and length: padded after it.
        words, spare = model.accecn_tail(bytes([174, 2]))
        self.assertEqual((words, spare), (b'', bytes([174, 2])))
        self.assertEqual(model._take_nops(bytes([1, 3, 3, 7]), spare),
                         (bytes([1, 3, 3, 7]), spare))

    def test_minimum_sends_only_when_owed(self) -> None:
        quiet = dict(self.EST, ecn_option=1)
        self.assertEqual(self.layout_hex(**quiet), '0101080a0000000300000002')
        self.assertIn('ae0b', self.layout_hex(demand=True, **quiet))

    def test_fail_send_stops_all_but_persist(self) -> None:
        self.assertNotIn('ae', self.layout_hex(fail_send=True, **self.EST)[24:])
        persist = dict(self.EST, ecn_option=3)
        self.assertIn('ae0b', self.layout_hex(fail_send=True, **persist))

    def test_record_keys_come_all_or_none(self) -> None:
        fields = model.to_fields(model.Inputs(**self.EST))
        self.assertEqual(model.from_fields(fields), model.Inputs(**self.EST))
        del fields['minlen']
        with self.assertRaisesRegex(ValueError, 'missing minlen'):
            model.from_fields(fields)

    def test_layout_text_names_the_fields_in_wire_order(self) -> None:
        self.assertEqual(layout_text(bytes.fromhex('ac08000001000002')),
                         'AccECN0 e0b 1 ceb 2')


class MptcpTest(unittest.TestCase):
    """MPTCP (RFC 8684) after every TCP option, within what is left."""

    SYN = dict(kind='syn', ts=True, sack=True, ws=True, mss=1460, wscale=7)
    SYNACK = dict(kind='synack', ts=True, sack=True, ws=True, mss=1440,
                  wscale=9)

    def words(self, inputs: model.Inputs) -> str:
        data = model.layout(inputs)
        return ' '.join(data[i:i + 4].hex() for i in range(0, len(data), 4))

    def test_mp_capable_syn_goes_last(self) -> None:
        # <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,mp_capable v1 H>
        self.assertEqual(self.words(model.Inputs(**self.SYN, mptcp='mpc')),
                         '020405b4 0402080a 00000001 00000000 01030307 '
                         '1e040101')

    def test_a_full_syn_leaves_mp_capable_out(self) -> None:
        # 06d64ab46f19: no room, no option (and no wrap of the budget).
        inputs = model.Inputs(**self.SYN, fo='exp', fo_len=16, mptcp='mpc')
        self.assertEqual(model.plan(inputs).mptcp, 0)
        self.assertEqual(len(model.layout(inputs)), 40)
        fits = model.Inputs(**self.SYN, fo='rfc7413', fo_len=14,
                            mptcp='mpc')
        self.assertEqual(model.layout(fits)[-4:].hex(), '1e040101')

    def test_mp_join_synack(self) -> None:
        inputs = model.Inputs(**self.SYNACK, mptcp='mpj')
        self.assertEqual(self.words(inputs).split()[5:],
                         ['1e101003', '88776655', '44332211', '55667788'])

    def test_mp_capable_synack_flags(self) -> None:
        inputs = model.Inputs(kind='synack', mss=1440, wscale=9,
                              mptcp='mpc', mptcp_csum=True,
                              mptcp_deny_join_id0=True)
        self.assertEqual(self.words(inputs),
                         '020405a0 1e0c01a1 01020304 05060708')

    def test_data_ack_takes_space_before_sack(self) -> None:
        est32 = model.Inputs(kind='established', ts=True, sacks=3,
                             mptcp='mpc', mptcp_ack=32)
        self.assertEqual(model.plan(est32).sack_blocks, 2)
        self.assertEqual(self.words(est32).split()[-2:],
                         ['1e082001', '0000000b'])
        est64 = model.Inputs(kind='established', ts=True, sacks=3,
                             mptcp='mpc', mptcp_ack=64)
        self.assertEqual(model.plan(est64).sack_blocks, 1)
        self.assertEqual(self.words(est64).split()[-3:],
                         ['1e0c2003', '0000000a', '0000000b'])
        none = model.Inputs(kind='established', ts=True, sacks=3,
                            mptcp='mpc')
        self.assertEqual(model.plan(none).sack_blocks, 3)
        self.assertEqual(model.plan(none).mptcp, 0)

    def test_impossible_inputs(self) -> None:
        for bad in (dict(self.SYN, mptcp='dss'),
                    dict(self.SYN, mptcp='mpc', mptcp_csum=True),
                    dict(self.SYN, mptcp='mpc', md5=True),
                    dict(self.SYNACK, mptcp='mpj', mptcp_csum=True),
                    dict(self.SYNACK, mptcp='mpc', mptcp_ack=32),
                    dict(kind='established', mptcp='mpc', mptcp_ack=16),
                    dict(kind='established', mptcp_ack=32)):
            with self.subTest(bad), self.assertRaises(ValueError):
                model.Inputs(**bad)

    def test_fields_round_trip_and_groups(self) -> None:
        inputs = model.Inputs(**self.SYNACK, mptcp='mpj', mptcp_backup=True)
        self.assertEqual(model.from_fields(model.to_fields(inputs)), inputs)
        self.assertIn('mptcp=mpj mptcp_ack=0 mptcp_csum=0 '
                      'mptcp_deny_join_id0=0 mptcp_backup=1',
                      model.to_text(inputs))
        extra = len(model.cross_product(mptcp=True)) - \
            len(model.cross_product())
        # syn: 3 cookie kinds x 8 flags x (1 or 8 lengths) + MP_JOIN, the
        # same twice for SYN-ACKs (with and without syncookies), then 3
        # established groups of 20.
        per_kind = 8 * (1 + 8 + 8) + 8
        self.assertEqual(extra, 3 * per_kind + 3 * 20)

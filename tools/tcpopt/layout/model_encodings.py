"""The bytes of each TCP option the reference model writes, from its RFC.

MSS (RFC 9293 section 3.2: kind 2, len 4), window scale and timestamps
(RFC 7323: kind 3 len 3, kind 8 len 10), SACK_PERM and SACK (RFC 2018:
kind 4 len 2, kind 5 len 2 + 8n), MD5 (RFC 2385: kind 19 len 18), TCP-AO
(RFC 5925 section 2.2: kind 29 len 4 + MAC, KeyID, RNextKeyID), Fast Open
(RFC 7413: kind 34 len 2 + cookie) and its experimental form (RFC 6994:
kind 254 len 4 + cookie, ExID 0xF989), AccECN (RFC 9768 section 3.2.3:
kind 174, len 2 + 3 per field, EE1B, ECEB, EE0B) and MPTCP (RFC 8684,
tcpopt.layout.mptcp_model); each with the NOPs that align it the way
Linux does, and the values the in-kernel harness feeds the writer.
Which options go out, and in what order, is tcpopt.layout.model's.
Part of the independent model: it imports nothing that renders or
decodes the kernel's output.
"""

from __future__ import annotations

import struct
from typing import List, Tuple

from tcpopt.layout import mptcp_model
from tcpopt.layout.model_inputs import Inputs

# Option kinds and lengths, by RFC.
TCPOPT_EOL = 0
TCPOPT_NOP = 1
TCPOPT_MSS, TCPOLEN_MSS = 2, 4                  # RFC 9293
TCPOPT_WINDOW, TCPOLEN_WINDOW = 3, 3            # RFC 7323
TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM = 4, 2      # RFC 2018
TCPOPT_SACK, TCPOLEN_SACK_BASE = 5, 2           # RFC 2018
TCPOLEN_SACK_PERBLOCK = 8
TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP = 8, 10     # RFC 7323
TCPOPT_MD5SIG, TCPOLEN_MD5SIG = 19, 18          # RFC 2385
MD5_DIGEST_LEN = 16
TCPOPT_AO, TCPOLEN_AO_BASE = 29, 4              # RFC 5925: + the MAC
TCPOPT_FASTOPEN, TCPOLEN_FASTOPEN_BASE = 34, 2  # RFC 7413
TCPOPT_EXP, TCPOLEN_EXP_FASTOPEN_BASE = 254, 4  # RFC 6994
TCPOPT_ACCECN0, TCPOPT_ACCECN1 = 172, 174       # RFC 9768 section 3.2.3
TCPOLEN_ACCECN_BASE, ACCECN_FIELD_LEN = 2, 3
FASTOPEN_MAGIC = 0xF989                         # RFC 7413's ExID

# Linux's 32-bit aligned cost of each option (NOP padding included).
ALIGNED_MD5 = 20
ALIGNED_MSS = 4
ALIGNED_TS = 12
ALIGNED_SACK_PERM = 4               # 0 when it shares the TS word
ALIGNED_WS = 4
ALIGNED_SACK_BASE = 4               # NOP,NOP,kind,len before the blocks
ALIGNED_WORD = 4

# What the in-kernel harness feeds the writer.
TS_VALUES = {'syn': (1, 0), 'synack': (2, 1), 'established': (3, 2)}
DSACK_BLOCK = (0x00000100, 0x00000200)
SACK_BLOCKS = ((0x00001000, 0x00002000), (0x00003000, 0x00004000),
               (0x00005000, 0x00006000), (0x00007000, 0x00008000))
COOKIE_FIRST_BYTE = 0xc0
# TCP-AO (KeyID, RNextKeyID): a SYN or an established segment takes the
# socket's current and RNext keys, a SYN-ACK the request sock's own pair.
AO_KEY_IDS = {'syn': (0x07, 0x09), 'synack': (0x03, 0x04),
              'established': (0x07, 0x09)}
# The harness poisons the option space; the writer leaves the hash alone.
UNWRITTEN = 0xa5
# AccECN fields, 24 bits each. A SYN-ACK reports the counters' initial
# values (RFC 9768 section 3.2.1: EE0B and EE1B start at 1, ECEB at 0); the
# harness's established socket has counted bytes that make these fields.
ACCECN_SYNACK = {'e1b': 1, 'ceb': 0, 'e0b': 1}
ACCECN_ESTABLISHED = {'e1b': 0x111111, 'ceb': 0x222222, 'e0b': 0x333333}
ACCECN1_ORDER = ('e1b', 'ceb', 'e0b')
ACCECN0_ORDER = ('e0b', 'ceb', 'e1b')
# What the harness puts in the MPTCP options.
MPTCP_LOCAL_ID = 3
MPTCP_REMOTE_TOKEN = 0x11223344
MPTCP_LOCAL_NONCE = 0x55667788
MPTCP_LOCAL_KEY = 0x0102030405060708
MPTCP_THMAC = 0x8877665544332211
MPTCP_ACK_SEQ = 0x0000000a0000000b


def align4(length: int) -> int:
    return (length + 3) & ~3


def nops(count: int) -> bytes:
    return bytes([TCPOPT_NOP] * count)


# --- the aligned space an option takes ---------------------------------------

def ao_size(i: Inputs) -> int:
    """The aligned space Linux reserves for @i's TCP-AO option, or 0."""
    return align4(TCPOLEN_AO_BASE + i.ao_maclen) if i.ao_maclen else 0


def fast_open_size(i: Inputs) -> int:
    """The aligned space a Fast Open option with @i's cookie needs."""
    base = TCPOLEN_EXP_FASTOPEN_BASE if i.fo == 'exp' \
        else TCPOLEN_FASTOPEN_BASE
    return align4(base + i.fo_len)


def accecn_length(fields: int) -> int:
    return TCPOLEN_ACCECN_BASE + ACCECN_FIELD_LEN * fields


# --- the options, in the order Linux writes them -----------------------------

def md5_option() -> bytes:
    return nops(2) + bytes([TCPOPT_MD5SIG, TCPOLEN_MD5SIG]) + \
        bytes([UNWRITTEN] * MD5_DIGEST_LEN)


def ao_option(i: Inputs) -> bytes:
    """TCP-AO as the writer leaves it, before the MAC is computed.

    The length byte is 4 + maclen, unaligned (RFC 5925 section 2.2). Linux
    convention: the writer steps over the whole 32-bit words of the MAC
    (they keep the harness's 0xa5) and, when maclen is not a multiple of
    4, fills the whole next word with NOPs. The hash overwrites the MAC's
    tail bytes of that word later; the NOPs after it are the padding.
    """
    key_id, rnext_key_id = AO_KEY_IDS[i.kind]
    whole_words, tail = divmod(i.ao_maclen, ALIGNED_WORD)
    return bytes([TCPOPT_AO, TCPOLEN_AO_BASE + i.ao_maclen, key_id,
                  rnext_key_id]) + \
        bytes([UNWRITTEN] * ALIGNED_WORD * whole_words) + \
        (nops(ALIGNED_WORD) if tail else b'')


def mss_option(i: Inputs) -> bytes:
    return struct.pack('!BBH', TCPOPT_MSS, TCPOLEN_MSS, i.mss)


def timestamps_option(i: Inputs, sack_perm: bool) -> bytes:
    """TS, led by SACK_PERM when both go out: they share one word."""
    lead = bytes([TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM]) if sack_perm \
        else nops(2)
    tsval, tsecr = TS_VALUES[i.kind]
    return lead + struct.pack('!BBII', TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
                              tsval, tsecr)


def accecn_option(i: Inputs, fields: int) -> bytes:
    """Kind 174 and the first @fields of EE1B, ECEB, EE0B, 24 bits each."""
    values = ACCECN_SYNACK if i.kind == 'synack' else ACCECN_ESTABLISHED
    return bytes([TCPOPT_ACCECN1, accecn_length(fields)]) + b''.join(
        (values[name] & 0xffffff).to_bytes(3, 'big')
        for name in ACCECN1_ORDER[:fields])


def sack_perm_option() -> bytes:
    """SACK_PERM in a word of its own, when TS does not carry it."""
    return nops(2) + bytes([TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM])


def window_option(i: Inputs) -> bytes:
    return nops(1) + bytes([TCPOPT_WINDOW, TCPOLEN_WINDOW, i.wscale])


def sack_blocks(i: Inputs) -> List[Tuple[int, int]]:
    """The blocks queued on an established socket: the D-SACK first."""
    queued = [DSACK_BLOCK] if i.dsack else []
    return queued + list(SACK_BLOCKS[:i.sacks])


def sack_option(i: Inputs, count: int) -> bytes:
    head = nops(2) + bytes([TCPOPT_SACK, TCPOLEN_SACK_BASE +
                            TCPOLEN_SACK_PERBLOCK * count])
    return head + b''.join(struct.pack('!II', start, end)
                           for start, end in sack_blocks(i)[:count])


def cookie(i: Inputs) -> bytes:
    return bytes(COOKIE_FIRST_BYTE + n for n in range(i.fo_len))


def fast_open_option(i: Inputs) -> bytes:
    if i.fo == 'exp':
        length = TCPOLEN_EXP_FASTOPEN_BASE + i.fo_len
        option = struct.pack('!BBH', TCPOPT_EXP, length, FASTOPEN_MAGIC)
    else:
        length = TCPOLEN_FASTOPEN_BASE + i.fo_len
        option = bytes([TCPOPT_FASTOPEN, length])
    option += cookie(i)
    # Even cookies end 2 bytes short of a word or on one.
    return option + (nops(2) if length % 4 == 2 else b'')


def mptcp_option(i: Inputs) -> bytes:
    """The MPTCP option @i asks for, from RFC 8684's formats."""
    if i.kind == 'established':
        # Section 3.3: a Data ACK alone (no mapping: no payload).
        return mptcp_model.dss(ack=MPTCP_ACK_SEQ % (1 << i.mptcp_ack),
                               ack_bits=i.mptcp_ack) if i.mptcp_ack else b''
    packet = 'syn' if i.kind == 'syn' else 'synack'
    if i.mptcp == 'mpj':
        if packet == 'syn':
            return mptcp_model.mp_join(
                'syn', backup=i.mptcp_backup, addr_id=MPTCP_LOCAL_ID,
                token=MPTCP_REMOTE_TOKEN, nonce=MPTCP_LOCAL_NONCE)
        return mptcp_model.mp_join(
            'synack', backup=i.mptcp_backup, addr_id=MPTCP_LOCAL_ID,
            truncated_hmac=MPTCP_THMAC, nonce=MPTCP_LOCAL_NONCE)
    if packet == 'syn':
        return mptcp_model.mp_capable('syn')
    return mptcp_model.mp_capable(
        'synack', checksum=i.mptcp_csum,
        deny_join_id0=i.mptcp_deny_join_id0, sender_key=MPTCP_LOCAL_KEY)

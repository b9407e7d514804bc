"""The TCP options Linux 6.1, 6.12 and 7.3 write, modelled from the RFCs.

The encodings come from the RFCs: MSS (RFC 9293 section 3.2: kind 2,
len 4), window scale and timestamps (RFC 7323: kind 3 len 3, kind 8
len 10), SACK_PERM and SACK (RFC 2018: kind 4 len 2, kind 5 len 2 + 8n),
MD5 (RFC 2385: kind 19 len 18), TCP-AO (RFC 5925 section 2.2: kind 29
len 4 + MAC, KeyID, RNextKeyID), Fast Open (RFC 7413: kind 34 len 2 +
cookie) and its experimental form (RFC 6994: kind 254 len 4 + cookie,
ExID 0xF989) and AccECN (RFC 9768 section 3.2.3: kind 174, len 2 + 3
per field, EE1B, ECEB, EE0B). The order and the 40-byte budget are the ones Linux
documents (the comments above tcp_options_write() and in
tcp_synack_options(), and the TCP-AO setsockopt's size check); nothing
here is transcribed from the C code, so the sweep in tcpopt.layout.sweep
compares two independent descriptions. For the same reason this module
keeps its own option constants and encoders on purpose, rather than
the host's shared vocabulary in tcpopt.layout.options, and imports nothing from
it.

Without TCP-AO, 6.1 and 6.12 write the same layouts. TCP-AO exists from
Linux 6.7 on, so of the supported trees 6.12 and 7.3 have it: inputs with
ao_maclen > 0 describe those. AccECN (6.18 on) is 7.3's only; how many
of its fields Linux sends, and where their spare bytes go, is Linux
policy, written down once in the AccECN section below.

The values the in-kernel harness feeds the writer (TS val/ecr per packet
kind, the SACK blocks, the Fast Open cookie bytes, the TCP-AO KeyIDs, the
0xa5 the hash bytes keep) are fixed below, so a layout compares byte for
byte with the kernel's '# sweep:' records.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Dict, List, Mapping, NamedTuple, Tuple

from tcpopt.layout import mptcp_model

KINDS = ('syn', 'synack', 'established')
FO_KINDS = ('none', 'rfc7413', 'exp')

MAX_OPTION_SPACE = 40               # 60-byte header limit minus 20 (RFC 9293)

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
ACCECN_MAX_FIELDS = 3
FASTOPEN_MAGIC = 0xF989                         # RFC 7413's ExID

# Linux's 32-bit aligned cost of each option (NOP padding included).
ALIGNED_MD5 = 20
ALIGNED_MSS = 4
ALIGNED_TS = 12
ALIGNED_SACK_PERM = 4               # 0 when it shares the TS word
ALIGNED_WS = 4
ALIGNED_SACK_BASE = 4               # NOP,NOP,kind,len before the blocks
ALIGNED_WORD = 4

# Limits of the inputs the model describes.
MAX_SACK_BLOCKS = 4                 # Linux's TCP_NUM_SACKS
MAX_WSCALE = 14                     # RFC 7323 section 2.3
MAX_COOKIE_LEN = 16                 # RFC 7413 section 4.1.1
# RFC 5925 allows any MAC that fits; Linux's TCP-AO setsockopt refuses a
# key whose aligned option leaves a SYN no room for MSS, TS and WS:
# align4(4 + maclen) <= 40 - 4 - 12 - 4, so at most 16 bytes of MAC.
MAX_AO_MACLEN = 16

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
# tcp_ecn_option (Documentation/networking/ip-sysctl.rst).
ECN_OPTION_OFF, ECN_OPTION_MINIMUM, ECN_OPTION_FULL, ECN_OPTION_PERSIST = \
    range(4)

# The cross product the kernel's tcp_opt_sweep suite walks.
SWEEP_MSS = (536, 1220, 1460, 65495)
SWEEP_WSCALE = (0, 1, 7, 14)
SWEEP_FO_LEN = (0, 4, 6, 8, 10, 12, 14, 16)
# The TCP-AO groups (6.12 only): MSS and wscale fixed, the MAC varies.
SWEEP_AO_MACLEN = (4, 6, 10, 12, 16)
SWEEP_AO_MSS = 1460
SWEEP_AO_WSCALE = 7
# The AccECN groups (7.3 only) fix MSS and wscale as the AO ones do.
SWEEP_ACCECN_MINLEN = tuple(range(ACCECN_MAX_FIELDS + 1))
SWEEP_MPTCP_ACK = (0, 32, 64)

# MPTCP (RFC 8684), on trees built with CONFIG_MPTCP. The handshake
# option a subflow or request asks for, and what the harness puts in it.
MPTCP_KINDS = ('none', 'mpc', 'mpj')
MPTCP_LOCAL_ID = 3
MPTCP_REMOTE_TOKEN = 0x11223344
MPTCP_LOCAL_NONCE = 0x55667788
MPTCP_LOCAL_KEY = 0x0102030405060708
MPTCP_THMAC = 0x8877665544332211
MPTCP_ACK_SEQ = 0x0000000a0000000b

# Keys of a '# sweep:' record, in the order the kernel prints them.
FIELDS = ('kind', 'ts', 'sack', 'ws', 'md5', 'syncookie', 'mss', 'wscale',
          'fo', 'fo_len', 'sacks', 'dsack')
# Keys a record has only when not zero: 6.12's TCP-AO MAC length, printed
# after dsack, so that 6.1's records and 6.12's non-AO ones are unchanged.
OPTIONAL_FIELDS = ('ao_maclen',)
MPTCP_FIELDS = ('mptcp', 'mptcp_ack', 'mptcp_csum', 'mptcp_deny_join_id0',
                'mptcp_backup')
# Keys of a record about an AccECN packet, all present or none (7.3).
ACCECN_FIELDS = ('accecn', 'ecn_option', 'minlen', 'demand', 'fail_send')
# Keys that describe the kernel's output, not the inputs.
OUTPUT_FIELDS = ('size', 'bytes')


@dataclass(frozen=True)
class Inputs:
    """Everything the 6.1 and 6.12 option calculators read, for one packet.

    SYN: ts, sack, ws are the sysctls. SYN-ACK: the request's tstamp_ok,
    sack_ok, wscale_ok. Established: ts is tstamp_ok; sacks and dsack are
    the queued SACK and D-SACK blocks. ao_maclen is the MAC length of the
    TCP-AO key in use (6.12), 0 for none. accecn: the SYN-ACK's request or
    the established connection negotiated AccECN and saw the peer's option;
    ecn_option is the sysctl, minlen the fields owed, demand an ACK owed
    an option, fail_send a failed send (7.3). Fields a packet kind does not
    read must keep their zero value, so that equal packets compare equal.
    """

    kind: str
    ts: bool = False
    sack: bool = False
    ws: bool = False
    md5: bool = False
    syncookie: bool = False
    mss: int = 0
    wscale: int = 0
    fo: str = 'none'
    fo_len: int = 0
    sacks: int = 0
    dsack: bool = False
    ao_maclen: int = 0
    accecn: bool = False
    ecn_option: int = 0
    minlen: int = 0
    demand: bool = False
    fail_send: bool = False
    mptcp: str = 'none'
    mptcp_ack: int = 0
    mptcp_csum: bool = False
    mptcp_deny_join_id0: bool = False
    mptcp_backup: bool = False

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem:
            raise ValueError(f'{to_text(self)}: {problem}')


class Plan(NamedTuple):
    """Which options go out once the 40-byte budget has been applied."""

    md5: bool
    mss: bool
    ts: bool
    sack_perm: bool
    ws: bool
    sack_blocks: int
    fast_open: bool
    ao: bool = False
    accecn_fields: int = -1         # -1: no AccECN option
    mptcp: int = 0                  # bytes of the MPTCP option, 0: none


def _problem(i: Inputs) -> str:
    """Why @i is not a packet the model describes, or ''."""
    if i.kind not in KINDS:
        return f'kind must be one of {", ".join(KINDS)}'
    if i.fo not in FO_KINDS:
        return f'fo must be one of {", ".join(FO_KINDS)}'
    if not 0 <= i.ao_maclen <= MAX_AO_MACLEN:
        return f'ao_maclen must be 0..{MAX_AO_MACLEN}'
    if i.md5 and i.ao_maclen:
        # A segment carries one signature: Linux picks one key per packet.
        return 'MD5 and TCP-AO are exclusive'
    problem = _mptcp_problem(i)
    if problem:
        return problem
    if not i.accecn and (i.ecn_option or i.minlen or i.demand or
                         i.fail_send):
        return 'ecn_option, minlen, demand and fail_send need accecn'
    if i.accecn and i.kind == 'syn':
        return 'AccECN is modelled on SYN-ACKs and established segments'
    if not 0 <= i.ecn_option <= ECN_OPTION_PERSIST:
        return f'ecn_option must be 0..{ECN_OPTION_PERSIST}'
    if not 0 <= i.minlen <= ACCECN_MAX_FIELDS or \
            (i.kind != 'established' and (i.minlen or i.demand or
                                          i.fail_send)):
        return 'minlen (0..3), demand and fail_send are established-only'
    if i.kind == 'established':
        # The established calculator reads none of these.
        if i.sack or i.ws or i.syncookie or i.mss or i.wscale or \
                i.fo != 'none' or i.fo_len:
            return 'established takes only ts, md5, ao_maclen, sacks and ' \
                'dsack'
        if not 0 <= i.sacks <= MAX_SACK_BLOCKS:
            return f'sacks must be 0..{MAX_SACK_BLOCKS}'
        return ''
    if i.sacks or i.dsack:
        return 'SACK blocks are only sent on established segments'
    if i.kind == 'syn' and i.syncookie:
        return 'syncookie applies to SYN-ACKs only'
    if not 1 <= i.mss <= 0xffff:
        # The writer skips a zero MSS but still reserves its 4 bytes.
        return 'mss must be 1..65535'
    if not 0 <= i.wscale <= MAX_WSCALE:
        return f'wscale must be 0..{MAX_WSCALE}'
    if i.fo == 'none' and i.fo_len:
        return 'fo_len without a Fast Open option'
    if not 0 <= i.fo_len <= MAX_COOKIE_LEN or i.fo_len % 2:
        # An odd cookie leaves pad bytes the writer never fills.
        return f'fo_len must be even and 0..{MAX_COOKIE_LEN}'
    return ''


def _mptcp_problem(i: Inputs) -> str:
    if i.mptcp not in MPTCP_KINDS:
        return f'mptcp must be one of {", ".join(MPTCP_KINDS)}'
    if i.mptcp == 'none':
        if i.mptcp_ack or i.mptcp_csum or i.mptcp_deny_join_id0 or \
                i.mptcp_backup:
            return 'mptcp_ack, mptcp_csum, mptcp_deny_join_id0 and ' \
                'mptcp_backup need mptcp'
        return ''
    if i.accecn or i.md5 or i.ao_maclen:
        return 'MPTCP is modelled without AccECN, MD5 and TCP-AO'
    if i.kind == 'established':
        if i.mptcp != 'mpc' or i.mptcp_csum or i.mptcp_deny_join_id0 or \
                i.mptcp_backup:
            return 'an established MPTCP subflow takes mptcp=mpc and ' \
                'mptcp_ack only'
        if i.mptcp_ack not in SWEEP_MPTCP_ACK:
            return 'mptcp_ack must be 0, 32 or 64'
        return ''
    if i.mptcp_ack:
        return 'mptcp_ack is established-only'
    if i.kind == 'syn' and (i.mptcp_csum or i.mptcp_deny_join_id0):
        # A SYN takes both flags from the netns's sysctls (defaults).
        return 'mptcp_csum and mptcp_deny_join_id0 are SYN-ACK inputs'
    if i.mptcp == 'mpj' and (i.mptcp_csum or i.mptcp_deny_join_id0):
        return 'mptcp_csum and mptcp_deny_join_id0 belong to MP_CAPABLE'
    if i.mptcp == 'mpc' and i.mptcp_backup:
        return 'mptcp_backup belongs to MP_JOIN'
    return ''


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


def align4(length: int) -> int:
    return (length + 3) & ~3


def fast_open_size(i: Inputs) -> int:
    """The aligned space a Fast Open option with @i's cookie needs."""
    base = TCPOLEN_EXP_FASTOPEN_BASE if i.fo == 'exp' \
        else TCPOLEN_FASTOPEN_BASE
    return align4(base + i.fo_len)


def ao_size(i: Inputs) -> int:
    """The aligned space Linux reserves for @i's TCP-AO option, or 0."""
    return align4(TCPOLEN_AO_BASE + i.ao_maclen) if i.ao_maclen else 0


def _keeps_ts(i: Inputs) -> bool:
    """Whether MD5 or TCP-AO leaves TS on a handshake packet asking for it."""
    # A syncookie SYN-ACK encodes WS and SACK_PERM in its TS value, so it
    # keeps TS whatever else is on (with TCP-AO since the series' fix,
    # docs/bugs.md).
    if i.kind == 'synack' and i.syncookie:
        return True
    if i.ao_maclen:
        # RFC 5925 section 7.6 sizes AO to leave room for TS, and Linux
        # keeps it on a SYN. A SYN-ACK gives TS up for SACK as with MD5.
        return i.kind == 'syn' or not i.sack
    if not i.md5:
        return True
    if i.kind == 'syn':
        # No room for TS and SACK blocks later: a MD5 SYN never offers TS.
        return False
    # A SYN-ACK only gives TS up for SACK.
    return not i.sack


def _handshake_plan(i: Inputs) -> Plan:
    remaining = MAX_OPTION_SPACE - ALIGNED_MSS
    if i.md5:
        remaining -= ALIGNED_MD5
    remaining -= ao_size(i)
    ts = i.ts and _keeps_ts(i)
    if ts:
        remaining -= ALIGNED_TS
    if i.ws:
        remaining -= ALIGNED_WS
    if i.sack and not ts:
        remaining -= ALIGNED_SACK_PERM
    # A cookie that does not fit is left out whole, never cut.
    fast_open = i.fo != 'none' and fast_open_size(i) <= remaining
    if fast_open:
        remaining -= fast_open_size(i)
    # MPTCP takes what is left, whole or not at all (RFC 8684 section
    # 3.7: without it the connection falls back to TCP).
    mptcp = len(mptcp_option(i)) if i.mptcp != 'none' else 0
    if mptcp > remaining:
        mptcp = 0
    remaining -= mptcp
    fields = -1
    if i.accecn and i.ecn_option != ECN_OPTION_OFF and \
            remaining >= TCPOLEN_ACCECN_BASE:
        fields, _ = accecn_fit(remaining, synack_saving(ts, i.sack, i.ws),
                               0, 0)
    return Plan(md5=i.md5, mss=True, ts=ts, sack_perm=i.sack, ws=i.ws,
                sack_blocks=0, fast_open=fast_open, ao=bool(i.ao_maclen),
                accecn_fields=fields, mptcp=mptcp)


def _established_plan(i: Inputs) -> Plan:
    used = (ALIGNED_MD5 if i.md5 else 0) + ao_size(i) + \
        (ALIGNED_TS if i.ts else 0)
    blocks = 0
    queued = i.sacks + int(i.dsack)
    # MPTCP before SACK: a subflow without its options falls back to TCP
    # (the comment in tcp_established_options()).
    mptcp = len(mptcp_option(i)) if i.mptcp != 'none' else 0
    used += mptcp
    remaining = MAX_OPTION_SPACE - used
    # Less than one block's worth left: no SACK option at all.
    if queued and remaining >= ALIGNED_SACK_BASE + TCPOLEN_SACK_PERBLOCK:
        blocks = min(queued, (remaining - ALIGNED_SACK_BASE) //
                     TCPOLEN_SACK_PERBLOCK)
    fields = -1
    if accecn_sent_established(i):
        used = MAX_OPTION_SPACE - remaining
        if blocks:
            used += ALIGNED_SACK_BASE + TCPOLEN_SACK_PERBLOCK * blocks
        fields, blocks = accecn_fit(MAX_OPTION_SPACE - used,
                                    2 if blocks else 0, i.minlen, blocks)
    return Plan(md5=i.md5, mss=False, ts=i.ts, sack_perm=False, ws=False,
                sack_blocks=blocks, fast_open=False, ao=bool(i.ao_maclen),
                accecn_fields=fields, mptcp=mptcp)


# --- AccECN: the Linux policy ------------------------------------------------
#
# RFC 9768 fixes the encoding and leaves to the implementation when to send
# the option and with how many fields. Linux's choices, from the comments
# of tcp_options_write() and tcp_options_fit_accecn() and from ip-sysctl.rst
# (tcp_ecn_option), are this section and nothing else in this file:
#  - The option goes right after TS (after MSS, MD5 or AO without TS).
#  - It carries as many fields as fit, three first. Its length mod 4 is
#    spare bytes: they go into the NOPs of the next option when that has
#    room (2 before SACK blocks; on a SYN-ACK, 2 before SACK_PERM without
#    TS, else 1 before WSCALE), and the option is padded to a word when it
#    has not. A 2-byte leftover never splits around WSCALE's single NOP:
#    it waits for two NOPs or is padded (accecn_tail()).
#  - An established segment owes at least minlen fields. If they do not
#    fit and more than 2 SACK blocks go out, blocks are given up one at a
#    time and the count restarts from three; if even then no count fits,
#    the blocks come back and no option goes out.
#  - A SYN-ACK sends it when the request negotiated AccECN, tcp_ecn_option
#    is not 0 and 2 bytes are left (never on a retransmission). An
#    established segment sends it with tcp_ecn_option 3; with 2 unless a
#    send failed; with 1 only when owed (demand; the beacon is off here).

def accecn_length(fields: int) -> int:
    return TCPOLEN_ACCECN_BASE + ACCECN_FIELD_LEN * fields


def accecn_cost(fields: int, saving: int) -> int:
    """The option space an option of @fields takes when the next option
    has @saving NOP bytes it can give up."""
    length = accecn_length(fields)
    spare = length % ALIGNED_WORD
    return length - spare if spare <= saving else align4(length)


def accecn_fit(space: int, saving: int, owed: int,
               blocks: int) -> Tuple[int, int]:
    """(fields, SACK blocks) Linux sends in @space; fields -1: none."""
    kept = blocks
    while True:
        for fields in range(ACCECN_MAX_FIELDS, owed - 1, -1):
            if accecn_cost(fields, saving) <= space:
                return fields, kept
        if owed == 0 or kept <= 2:
            return -1, blocks
        kept -= 1
        space += TCPOLEN_SACK_PERBLOCK


def synack_saving(ts: bool, sack_perm: bool, ws: bool) -> int:
    if sack_perm and not ts:
        return 2
    return 1 if ws else 0


def accecn_sent_established(i: Inputs) -> bool:
    if not i.accecn or i.ecn_option == ECN_OPTION_OFF:
        return False
    if i.fail_send and i.ecn_option < ECN_OPTION_PERSIST:
        return False
    return i.ecn_option >= ECN_OPTION_FULL or i.demand


def accecn_option(i: Inputs, fields: int) -> bytes:
    """Kind 174 and the first @fields of EE1B, ECEB, EE0B, 24 bits each."""
    values = ACCECN_SYNACK if i.kind == 'synack' else ACCECN_ESTABLISHED
    return bytes([TCPOPT_ACCECN1, accecn_length(fields)]) + b''.join(
        (values[name] & 0xffffff).to_bytes(3, 'big')
        for name in ACCECN1_ORDER[:fields])


def accecn_tail(option: bytes) -> Tuple[bytes, bytes]:
    """(the whole words, the spare bytes) of an AccECN option; three
    spare bytes never combine, so they come padded."""
    whole = len(option) - len(option) % ALIGNED_WORD
    head, spare = option[:whole], option[whole:]
    if len(spare) == 3:
        return head + spare + _nops(1), b''
    return head, spare


def _take_nops(word: bytes, spare: bytes) -> Tuple[bytes, bytes]:
    """@word with its leading NOPs replaced by @spare when they are enough;
    else @word unchanged and @spare still waiting."""
    nops = len(word) - len(word.lstrip(bytes([TCPOPT_NOP])))
    if spare and len(spare) <= nops:
        return spare + word[len(spare):], b''
    return word, spare


def plan(i: Inputs) -> Plan:
    return _established_plan(i) if i.kind == 'established' \
        else _handshake_plan(i)


def reserved_size(p: Plan, i: Inputs) -> int:
    """The bytes the calculator reserves for @p, counted option by option."""
    size = (ALIGNED_MD5 if p.md5 else 0) + (ao_size(i) if p.ao else 0)
    size += ALIGNED_MSS if p.mss else 0
    size += ALIGNED_TS if p.ts else 0
    size += ALIGNED_SACK_PERM if p.sack_perm and not p.ts else 0
    size += ALIGNED_WS if p.ws else 0
    if p.sack_blocks:
        size += ALIGNED_SACK_BASE + TCPOLEN_SACK_PERBLOCK * p.sack_blocks
    size += fast_open_size(i) if p.fast_open else 0
    if p.accecn_fields >= 0:
        saving = 2 if p.sack_blocks else 0
        if i.kind == 'synack':
            saving = synack_saving(p.ts, p.sack_perm, p.ws)
        size += accecn_cost(p.accecn_fields, saving)
    return size + p.mptcp


def _nops(count: int) -> bytes:
    return bytes([TCPOPT_NOP] * count)


def _md5() -> bytes:
    return _nops(2) + bytes([TCPOPT_MD5SIG, TCPOLEN_MD5SIG]) + \
        bytes([UNWRITTEN] * MD5_DIGEST_LEN)


def _ao(i: Inputs) -> bytes:
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
        (_nops(ALIGNED_WORD) if tail else b'')


def _timestamps(i: Inputs, sack_perm: bool) -> bytes:
    """TS, led by SACK_PERM when both go out: they share one word."""
    lead = bytes([TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM]) if sack_perm \
        else _nops(2)
    tsval, tsecr = TS_VALUES[i.kind]
    return lead + struct.pack('!BBII', TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
                              tsval, tsecr)


def sack_blocks(i: Inputs) -> List[Tuple[int, int]]:
    """The blocks queued on an established socket: the D-SACK first."""
    queued = [DSACK_BLOCK] if i.dsack else []
    return queued + list(SACK_BLOCKS[:i.sacks])


def _sack(i: Inputs, count: int) -> bytes:
    head = _nops(2) + bytes([TCPOPT_SACK, TCPOLEN_SACK_BASE +
                             TCPOLEN_SACK_PERBLOCK * count])
    return head + b''.join(struct.pack('!II', start, end)
                           for start, end in sack_blocks(i)[:count])


def cookie(i: Inputs) -> bytes:
    return bytes(COOKIE_FIRST_BYTE + n for n in range(i.fo_len))


def _fast_open(i: Inputs) -> bytes:
    if i.fo == 'exp':
        length = TCPOLEN_EXP_FASTOPEN_BASE + i.fo_len
        option = struct.pack('!BBH', TCPOPT_EXP, length, FASTOPEN_MAGIC)
    else:
        length = TCPOLEN_FASTOPEN_BASE + i.fo_len
        option = bytes([TCPOPT_FASTOPEN, length])
    option += cookie(i)
    # Even cookies end 2 bytes short of a word or on one.
    return option + (_nops(2) if length % 4 == 2 else b'')


def layout(i: Inputs) -> bytes:
    """The option bytes the writer puts after the 20-byte header.

    MD5 or TCP-AO (never both) comes first, then the 6.1 order, AccECN
    after TS.
    """
    p = plan(i)
    out = _md5() if p.md5 else _ao(i) if p.ao else b''
    if p.mss:
        out += struct.pack('!BBH', TCPOPT_MSS, TCPOLEN_MSS, i.mss)
    if p.ts:
        out += _timestamps(i, p.sack_perm)
    spare = b''
    if p.accecn_fields >= 0:
        words, spare = accecn_tail(accecn_option(i, p.accecn_fields))
        out += words
    if p.sack_perm and not p.ts:
        word, spare = _take_nops(
            _nops(2) + bytes([TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM]), spare)
        out += word
    if p.ws:
        word, spare = _take_nops(
            _nops(1) + bytes([TCPOPT_WINDOW, TCPOLEN_WINDOW, i.wscale]), spare)
        out += word
    if p.sack_blocks:
        word, spare = _take_nops(_sack(i, p.sack_blocks), spare)
        out += word
    if spare:
        out += spare + _nops(ALIGNED_WORD - len(spare))
    if p.fast_open:
        out += _fast_open(i)
    if p.mptcp:
        # Last, after everything else (tcp_options_write()).
        out += mptcp_option(i)
    # The encoder and the budget are written separately; they must agree.
    assert len(out) == reserved_size(p, i), (to_text(i), out.hex())
    return out


def mss_delta(i: Inputs) -> int:
    """mss_cache - tcp_current_mss() on an accepted 6.1 socket.

    mss_cache was sized for tcp_header_len, which on an accepted 6.1
    socket counts TS and MD5 (tcp_create_openreq_child()); only what the
    segment adds beyond that (SACK blocks) comes off.
    TCP-AO is 6.12 only, and how a 6.12 socket counts it in
    tcp_header_len is not part of this model: refused.
    """
    if i.kind != 'established':
        raise ValueError('tcp_current_mss() applies to established sockets')
    if i.ao_maclen:
        raise ValueError('mss_delta models 6.1, which has no TCP-AO')
    if i.mptcp != 'none':
        raise ValueError('mss_delta does not model MPTCP reservations')
    counted = (ALIGNED_TS if i.ts else 0) + (ALIGNED_MD5 if i.md5 else 0)
    return len(layout(i)) - counted


def _flag(name: str, value: str) -> bool:
    if value not in ('0', '1'):
        raise ValueError(f'{name}={value}: expected 0 or 1')
    return value == '1'


def _number(name: str, value: str) -> int:
    if not value.isdigit():
        raise ValueError(f'{name}={value}: expected a decimal number')
    return int(value)


def from_fields(fields: Mapping[str, str]) -> Inputs:
    """Inputs from a record's key=value pairs (tcpopt.log.ktap.fields()).

    'size' and 'bytes' are ignored, ao_maclen may be left out (0); a key
    the model does not know (a newer kernel's input) is an error rather
    than silently compared against a model that ignores it.
    """
    missing = [key for key in FIELDS if key not in fields]
    if missing:
        raise ValueError(f'missing {", ".join(missing)}')
    known = FIELDS + OPTIONAL_FIELDS + ACCECN_FIELDS + MPTCP_FIELDS + \
        OUTPUT_FIELDS
    unknown = [key for key in fields if key not in known]
    if unknown:
        raise ValueError(f'the model does not cover {", ".join(unknown)}')
    def flag(key: str) -> bool:
        return _flag(key, fields[key])

    def number(key: str) -> int:
        return _number(key, fields[key])

    return Inputs(kind=fields['kind'], ts=flag('ts'), sack=flag('sack'),
                  ws=flag('ws'), md5=flag('md5'), syncookie=flag('syncookie'),
                  mss=number('mss'), wscale=number('wscale'), fo=fields['fo'],
                  fo_len=number('fo_len'), sacks=number('sacks'),
                  dsack=flag('dsack'),
                  ao_maclen=_number('ao_maclen',
                                    fields.get('ao_maclen', '0')),
                  **_accecn_inputs(fields), **_mptcp_inputs(fields))


def _accecn_inputs(fields: Mapping[str, str]) -> Dict[str, object]:
    """The AccECN keys, all or none, as Inputs arguments."""
    present = [key for key in ACCECN_FIELDS if key in fields]
    if not present:
        return {}
    if len(present) != len(ACCECN_FIELDS):
        missing = [key for key in ACCECN_FIELDS if key not in fields]
        raise ValueError(f'missing {", ".join(missing)}')
    return {'accecn': _flag('accecn', fields['accecn']),
            'ecn_option': _number('ecn_option', fields['ecn_option']),
            'minlen': _number('minlen', fields['minlen']),
            'demand': _flag('demand', fields['demand']),
            'fail_send': _flag('fail_send', fields['fail_send'])}


def _mptcp_inputs(fields: Mapping[str, str]) -> Dict[str, object]:
    """The MPTCP keys, all or none, as Inputs arguments."""
    present = [key for key in MPTCP_FIELDS if key in fields]
    if not present:
        return {}
    missing = [key for key in MPTCP_FIELDS if key not in fields]
    if missing:
        raise ValueError(f'missing {", ".join(missing)}')
    return {'mptcp': fields['mptcp'],
            'mptcp_ack': _number('mptcp_ack', fields['mptcp_ack']),
            **{key: _flag(key, fields[key]) for key in MPTCP_FIELDS[2:]}}


def to_fields(i: Inputs) -> Dict[str, str]:
    """The record form of @i, keys in the kernel's order.

    ao_maclen only when there is an AO key, as the kernel prints it.
    """
    out: Dict[str, str] = {}
    for key in FIELDS + OPTIONAL_FIELDS + ACCECN_FIELDS + MPTCP_FIELDS:
        value = getattr(i, key)
        if key in OPTIONAL_FIELDS and not value:
            continue
        if key in ACCECN_FIELDS and not i.accecn:
            continue
        if key in MPTCP_FIELDS and i.mptcp == 'none':
            continue
        out[key] = str(int(value)) if isinstance(value, bool) else str(value)
    return out


def to_text(i: Inputs) -> str:
    """'kind=syn ts=1 ... dsack=0', as the kernel prints the inputs.

    ' ao_maclen=N' follows dsack on a TCP-AO packet.
    """
    return ' '.join(f'{key}={value}' for key, value in to_fields(i).items())


def _handshake_group(kind: str, md5: bool, syncookie: bool, fo: str,
                     ao: bool = False, accecn: bool = False,
                     mptcp: str = 'none') -> List[Inputs]:
    fo_lens = (0,) if fo == 'none' else SWEEP_FO_LEN
    # AO, AccECN and MPTCP groups fix MSS and wscale; AO walks the MAC
    # lengths.
    fixed = ao or accecn or mptcp != 'none'
    msses = (SWEEP_AO_MSS,) if fixed else SWEEP_MSS
    wscales = (SWEEP_AO_WSCALE,) if fixed else SWEEP_WSCALE
    maclens = SWEEP_AO_MACLEN if ao else (0,)
    ecn = {'accecn': True, 'ecn_option': ECN_OPTION_FULL} if accecn else {}
    # The kernel's loop order: flags, MSS, wscale, MAC, cookie length.
    return [Inputs(kind=kind, ts=bool(flags & 1), sack=bool(flags & 2),
                   ws=bool(flags & 4), md5=md5, syncookie=syncookie,
                   mss=mss, wscale=wscale, fo=fo, fo_len=fo_len,
                   ao_maclen=maclen, mptcp=mptcp, **ecn)
            for flags in range(8) for mss in msses for wscale in wscales
            for maclen in maclens for fo_len in fo_lens]


def _established_group(md5: bool, ao_maclen: int = 0,
                       accecn: bool = False,
                       mptcp_ack: int | None = None) -> List[Inputs]:
    owed = SWEEP_ACCECN_MINLEN if accecn else (0,)
    ecn = {'accecn': True, 'ecn_option': ECN_OPTION_FULL} if accecn else {}
    mptcp = {} if mptcp_ack is None else {'mptcp': 'mpc',
                                          'mptcp_ack': mptcp_ack}
    return [Inputs(kind='established', ts=bool(flags & 1), md5=md5,
                   dsack=bool(flags & 2), sacks=flags >> 2,
                   ao_maclen=ao_maclen, minlen=minlen, **ecn, **mptcp)
            for flags in range(2 * (MAX_SACK_BLOCKS + 1) * 2)
            for minlen in owed]


def _ao_groups() -> List[Inputs]:
    """The 6.12-only TCP-AO groups, after all the others; MD5 stays off."""
    out: List[Inputs] = []
    for kind, syncookie in (('syn', False), ('synack', False),
                            ('synack', True)):
        for fo in FO_KINDS:
            out += _handshake_group(kind, False, syncookie, fo, ao=True)
    for maclen in SWEEP_AO_MACLEN:
        out += _established_group(False, maclen)
    return out


def _accecn_groups() -> List[Inputs]:
    """The 7.3-only AccECN groups, after the AO ones."""
    out: List[Inputs] = []
    for fo in FO_KINDS:
        out += _handshake_group('synack', False, False, fo, accecn=True)
    out += _handshake_group('synack', True, False, 'none', accecn=True)
    out += _handshake_group('synack', False, True, 'none', accecn=True)
    out += _handshake_group('synack', False, False, 'none', ao=True,
                            accecn=True)
    out += _established_group(False, accecn=True)
    out += _established_group(True, accecn=True)
    for maclen in SWEEP_AO_MACLEN:
        out += _established_group(False, maclen, accecn=True)
    return out


def _mptcp_groups() -> List[Inputs]:
    """The MPTCP groups, last: MP_CAPABLE and MP_JOIN handshakes, then
    an established subflow per Data ACK size."""
    out: List[Inputs] = []
    for kind, cookies in (('syn', (False,)), ('synack', (False, True))):
        for syncookie in cookies:
            for fo in FO_KINDS:
                out += _handshake_group(kind, False, syncookie, fo,
                                        mptcp='mpc')
            out += _handshake_group(kind, False, syncookie, 'none',
                                    mptcp='mpj')
    for ack in SWEEP_MPTCP_ACK:
        out += _established_group(False, mptcp_ack=ack)
    return out


def cross_product(ao: bool = False, accecn: bool = False,
                  mptcp: bool = False) -> List[Inputs]:
    """Every combination the kernel's tcp_opt_sweep suite emits, in order.

    @ao: the tree has TCP-AO (6.12 and 7.3 with CONFIG_TCP_AO), so the
    suite also runs its AO groups; on 6.1 they are skipped and print
    nothing. @accecn: the tree has AccECN (7.3), and the AccECN groups run.
    @mptcp: the build has CONFIG_MPTCP, and the MPTCP groups run last.
    """
    out: List[Inputs] = []
    for kind, cookies in (('syn', (False,)), ('synack', (False, True))):
        for syncookie in cookies:
            for md5 in (False, True):
                for fo in FO_KINDS:
                    out += _handshake_group(kind, md5, syncookie, fo)
    for md5 in (False, True):
        out += _established_group(md5)
    return out + (_ao_groups() if ao else []) + \
        (_accecn_groups() if accecn else []) + \
        (_mptcp_groups() if mptcp else [])

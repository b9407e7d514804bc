"""The TCP options Linux 6.1, 6.12 and 7.3 write, modelled from the RFCs.

Which options a packet gets, in what order, within the 40-byte budget.
The order and the budget are the ones Linux documents (the comments
above tcp_options_write() and in tcp_synack_options(), and the TCP-AO
setsockopt's size check); nothing here is transcribed from the C code,
so the sweep in tcpopt.layout.sweep compares two independent
descriptions. For the same reason the model keeps its own option
constants and encoders on purpose, rather than the host's shared
vocabulary in tcpopt.layout.options, and imports nothing from it: nor
do the modules it is split into, model_inputs (a packet's inputs and
their '# sweep:' record form), model_encodings (the bytes of each
option, from its RFC, with the values the in-kernel harness feeds the
writer, so that a layout compares byte for byte with the kernel's
records) and model_sweep (the cross product the suite walks).

Without TCP-AO, 6.1 and 6.12 write the same layouts. TCP-AO exists from
Linux 6.7 on, so of the supported trees 6.12 and 7.3 have it: inputs with
ao_maclen > 0 describe those. AccECN (6.18 on) is 7.3's only; how many
of its fields Linux sends, and where their spare bytes go, is Linux
policy, written down once in the AccECN section below.
"""

from __future__ import annotations

from typing import NamedTuple, Tuple

from tcpopt.layout.model_encodings import (
    ALIGNED_MD5, ALIGNED_MSS, ALIGNED_SACK_BASE, ALIGNED_SACK_PERM,
    ALIGNED_TS, ALIGNED_WORD, ALIGNED_WS, TCPOLEN_ACCECN_BASE,
    TCPOLEN_SACK_PERBLOCK, TCPOPT_NOP, accecn_length, accecn_option, align4,
    ao_option, ao_size, fast_open_option, fast_open_size, md5_option,
    mptcp_option, mss_option, nops, sack_option, sack_perm_option,
    timestamps_option, window_option)
from tcpopt.layout.model_inputs import (ACCECN_MAX_FIELDS, ECN_OPTION_FULL,
                                        ECN_OPTION_OFF, ECN_OPTION_PERSIST,
                                        Inputs, to_text)

# The names the sweep and the tests read as model.<name>; they live in
# the modules the model is split into.
from tcpopt.layout.model_encodings import (
    ACCECN0_ORDER, ACCECN1_ORDER, ACCECN_FIELD_LEN, AO_KEY_IDS,
    FASTOPEN_MAGIC, TCPOLEN_AO_BASE, TCPOLEN_MD5SIG, TCPOLEN_MSS,
    TCPOLEN_SACK_PERM, TCPOLEN_TIMESTAMP, TCPOLEN_WINDOW, TCPOPT_ACCECN0,
    TCPOPT_ACCECN1, TCPOPT_AO, TCPOPT_EOL, TCPOPT_EXP, TCPOPT_FASTOPEN,
    TCPOPT_MD5SIG, TCPOPT_MSS, TCPOPT_SACK, TCPOPT_SACK_PERM,
    TCPOPT_TIMESTAMP, TCPOPT_WINDOW, UNWRITTEN, cookie)
from tcpopt.layout.model_inputs import (FO_KINDS, MAX_AO_MACLEN,
                                        MAX_SACK_BLOCKS, OUTPUT_FIELDS,
                                        from_fields, to_fields)
from tcpopt.layout.model_sweep import cross_product

MAX_OPTION_SPACE = 40               # 60-byte header limit minus 20 (RFC 9293)


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


def accecn_tail(option: bytes) -> Tuple[bytes, bytes]:
    """(the whole words, the spare bytes) of an AccECN option; three
    spare bytes never combine, so they come padded."""
    whole = len(option) - len(option) % ALIGNED_WORD
    head, spare = option[:whole], option[whole:]
    if len(spare) == 3:
        return head + spare + nops(1), b''
    return head, spare


def _take_nops(word: bytes, spare: bytes) -> Tuple[bytes, bytes]:
    """@word with its leading NOPs replaced by @spare when they are enough;
    else @word unchanged and @spare still waiting."""
    leading = len(word) - len(word.lstrip(bytes([TCPOPT_NOP])))
    if spare and len(spare) <= leading:
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


def layout(i: Inputs) -> bytes:
    """The option bytes the writer puts after the 20-byte header.

    MD5 or TCP-AO (never both) comes first, then the 6.1 order, AccECN
    after TS.
    """
    p = plan(i)
    out = md5_option() if p.md5 else ao_option(i) if p.ao else b''
    if p.mss:
        out += mss_option(i)
    if p.ts:
        out += timestamps_option(i, p.sack_perm)
    spare = b''
    if p.accecn_fields >= 0:
        words, spare = accecn_tail(accecn_option(i, p.accecn_fields))
        out += words
    if p.sack_perm and not p.ts:
        word, spare = _take_nops(sack_perm_option(), spare)
        out += word
    if p.ws:
        word, spare = _take_nops(window_option(i), spare)
        out += word
    if p.sack_blocks:
        word, spare = _take_nops(sack_option(i, p.sack_blocks), spare)
        out += word
    if spare:
        out += spare + nops(ALIGNED_WORD - len(spare))
    if p.fast_open:
        out += fast_open_option(i)
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


"""The inputs the kernel's tcp_opt_sweep suite walks, in its order.

The model's side of the sweep: tcpopt.layout.sweep expects one record
of each, and compares its bytes with tcpopt.layout.model.layout().
"""

from __future__ import annotations

from typing import List

from tcpopt.layout.model_inputs import (ACCECN_MAX_FIELDS, ECN_OPTION_FULL,
                                        FO_KINDS, MAX_SACK_BLOCKS,
                                        MPTCP_ACK_BITS, Inputs)

# The values the suite walks for each input.
SWEEP_MSS = (536, 1220, 1460, 65495)
SWEEP_WSCALE = (0, 1, 7, 14)
SWEEP_FO_LEN = (0, 4, 6, 8, 10, 12, 14, 16)
# The TCP-AO groups (6.12 only): MSS and wscale fixed, the MAC varies.
SWEEP_AO_MACLEN = (4, 6, 10, 12, 16)
SWEEP_AO_MSS = 1460
SWEEP_AO_WSCALE = 7
# The AccECN groups (7.3 only) fix MSS and wscale as the AO ones do.
SWEEP_ACCECN_MINLEN = tuple(range(ACCECN_MAX_FIELDS + 1))
SWEEP_MPTCP_ACK = MPTCP_ACK_BITS


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

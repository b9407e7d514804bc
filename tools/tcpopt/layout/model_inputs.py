"""The packets the reference model describes, and their '# sweep:' record form.

Part of the independent model (tcpopt.layout.model): it imports nothing
that renders or decodes the kernel's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping

KINDS = ('syn', 'synack', 'established')
FO_KINDS = ('none', 'rfc7413', 'exp')

# Limits of the inputs the model describes.
MAX_SACK_BLOCKS = 4                 # Linux's TCP_NUM_SACKS
MAX_WSCALE = 14                     # RFC 7323 section 2.3
MAX_COOKIE_LEN = 16                 # RFC 7413 section 4.1.1
# RFC 5925 allows any MAC that fits; Linux's TCP-AO setsockopt refuses a
# key whose aligned option leaves a SYN no room for MSS, TS and WS:
# align4(4 + maclen) <= 40 - 4 - 12 - 4, so at most 16 bytes of MAC.
MAX_AO_MACLEN = 16
ACCECN_MAX_FIELDS = 3               # RFC 9768 section 3.2.3: EE1B, ECEB, EE0B
# tcp_ecn_option (Documentation/networking/ip-sysctl.rst).
ECN_OPTION_OFF, ECN_OPTION_MINIMUM, ECN_OPTION_FULL, ECN_OPTION_PERSIST = \
    range(4)
# MPTCP (RFC 8684), on trees built with CONFIG_MPTCP: the handshake
# option a subflow or request asks for, and the bits of an established
# subflow's Data ACK (none, 32 or 64).
MPTCP_KINDS = ('none', 'mpc', 'mpj')
MPTCP_ACK_BITS = (0, 32, 64)

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
        if i.mptcp_ack not in MPTCP_ACK_BITS:
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


"""Reference model of the MPTCP v1 TCP option (kind 30), from RFC 8684.

The encoders follow the RFC's figures, not Linux's net/mptcp code, so a host
test can compare their bytes with the bytes a KUnit test prints. Sections:
3.1 MP_CAPABLE, 3.2 MP_JOIN, 3.3 DSS, 3.3.1 DSS checksum, 3.3.8 MP_PRIO,
3.4.1 ADD_ADDR, 3.4.2 REMOVE_ADDR, 3.5 MP_FASTCLOSE, 3.6 MP_TCPRST, 3.7 MP_FAIL.

Where the RFC leaves a choice, the model pins Linux's documented policy:
H (HMAC-SHA256) always set, 8-octet DSNs in every mapping, a checksum of 0
in an infinite mapping, at most 8 IDs in a REMOVE_ADDR, and NOPs after every
suboption whose length is not a multiple of 4. Integers are big-endian.
"""
from __future__ import annotations

from typing import Callable, Sequence

TCPOPT_NOP = 0x01
TCPOPT_MPTCP = 30
MPTCP_VERSION = 1
MAX_TCP_OPTION_SPACE = 40  # 60-byte TCP header minus the fixed 20

MP_CAPABLE = 0
MP_JOIN = 1
DSS = 2
ADD_ADDR = 3
REMOVE_ADDR = 4
MP_PRIO = 5
MP_FAIL = 6
MP_FASTCLOSE = 7
MP_TCPRST = 8

# MP_CAPABLE flags (3.1); B (0x40, extensibility) is never set.
MPC_FLAG_CHECKSUM = 0x80       # A: checksum required
MPC_FLAG_DENY_JOIN_ID0 = 0x20  # C: no subflow to the sender's initial address
MPC_FLAG_HMAC_SHA256 = 0x01    # H
MPC_PACKETS = ("syn", "synack", "ack", "ack_data")

MPJ_PACKETS = ("syn", "synack", "ack")
MPJ_FLAG_BACKUP = 0x01  # B
MPJ_HMAC_LEN = 20

# DSS flags (3.3): A, a, M, m, F.
DSS_FLAG_DATA_ACK = 0x01     # A: Data ACK present
DSS_FLAG_DATA_ACK_8 = 0x02   # a: Data ACK is 8 octets
DSS_FLAG_MAPPING = 0x04      # M: DSN, SSN, Data-Level Length (+ checksum)
DSS_FLAG_DSN_8 = 0x08        # m: DSN is 8 octets
DSS_FLAG_DATA_FIN = 0x10     # F
DSS_ACK_BITS = (0, 32, 64)

ADD_ADDR_FLAG_ECHO = 0x01      # E
ADDR_LEN_TO_FAMILY = {4: "v4", 16: "v6"}
MP_PRIO_FLAG_BACKUP = 0x01     # B
MP_TCPRST_FLAG_TRANSIENT = 0x01  # T
REMOVE_ADDR_MAX_IDS = 8


# --- small helpers ---------------------------------------------------------

def _check_uint(name: str, value: int, bits: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << bits:
        raise ValueError(f"{name}={value!r} does not fit in {bits} unsigned bits")


def _reject_unused(what: str, **fields: object) -> None:
    # A non-zero value for a field the option does not carry is a caller bug.
    for name, value in fields.items():
        if any(value) if isinstance(value, (bytes, bytearray)) else value:
            raise ValueError(f"{what} does not carry {name}")


def _be(value: int, octets: int) -> bytes:
    return value.to_bytes(octets, "big")


def _suboption(subtype: int, low_nibble: int, body: bytes) -> bytes:
    """Kind, Length, Subtype|nibble, then the body; Length counts all of it."""
    return bytes((TCPOPT_MPTCP, 3 + len(body), subtype << 4 | low_nibble)) + body


def _pad_to_4(option: bytes) -> bytes:
    # Linux policy: NOPs after a suboption keep the next one word-aligned.
    return option + bytes([TCPOPT_NOP]) * (-len(option) % 4)


# --- DSS checksum (RFC 8684 3.3.1) -----------------------------------------

def ones_complement_add(*words: int) -> int:
    """Add 16-bit words (or partial sums) with end-around carry."""
    total = 0
    for word in words:
        _check_uint("word", word, 16)
        total += word
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def ones_complement_sum(data: bytes) -> int:
    """16-bit one's complement sum of a payload; an odd tail is zero-padded."""
    padded = bytes(data) + b"\0" * (len(data) % 2)
    return ones_complement_add(*(int.from_bytes(padded[i:i + 2], "big")
                                 for i in range(0, len(padded), 2)))


def pseudo_header(dsn: int, ssn: int, data_len: int, checksum_field: int = 0) -> bytes:
    """DSN (64 bits), subflow sequence (32), Data-Level Length (16), checksum (16)."""
    for name, value, bits in (("dsn", dsn, 64), ("ssn", ssn, 32),
                              ("data_len", data_len, 16), ("checksum_field", checksum_field, 16)):
        _check_uint(name, value, bits)
    return _be(dsn, 8) + _be(ssn, 4) + _be(data_len, 2) + _be(checksum_field, 2)


def _checksum(dsn: int, ssn: int, data_len: int, payload_sum: int) -> int:
    # The encoders' `checksum` flag shadows checksum(), so they call this one.
    _check_uint("payload_sum", payload_sum, 16)
    total = ones_complement_add(ones_complement_sum(pseudo_header(dsn, ssn, data_len)), payload_sum)
    return ~total & 0xFFFF


def checksum(dsn: int, ssn: int, data_len: int, payload_sum: int) -> int:
    """The DSS checksum: one's complement of the pseudo-header + payload sum."""
    return _checksum(dsn, ssn, data_len, payload_sum)


def _mapping_checksum(dsn: int, ssn: int, data_len: int, payload_sum: int) -> int:
    # Linux policy: an infinite mapping (Data-Level Length 0) carries 0.
    return 0 if data_len == 0 else _checksum(dsn, ssn, data_len, payload_sum)


# --- suboption encoders ----------------------------------------------------

def mp_capable(packet: str, *, checksum: bool = False, deny_join_id0: bool = False,
               sender_key: int = 0, receiver_key: int = 0, data_len: int = 0,
               dsn: int = 0, ssn: int = 0, payload_sum: int = 0) -> bytes:
    """MP_CAPABLE v1 (3.1): SYN 4, SYN-ACK 12, ACK 20, ACK with data 22/24.

    dsn, ssn and payload_sum only feed the checksum of an 'ack_data' option.
    """
    if packet not in MPC_PACKETS:
        raise ValueError(f"unknown MP_CAPABLE packet {packet!r}, expected one of {MPC_PACKETS}")
    for name, value, bits in (("sender_key", sender_key, 64), ("receiver_key", receiver_key, 64),
                              ("data_len", data_len, 16)):
        _check_uint(name, value, bits)
    what = f"an MP_CAPABLE {packet}"
    _reject_unused(what, sender_key=sender_key if packet == "syn" else 0,
                   receiver_key=receiver_key if packet in ("syn", "synack") else 0)
    if packet != "ack_data":
        _reject_unused(what, data_len=data_len)
    elif data_len == 0:
        raise ValueError("an MP_CAPABLE ack_data needs data_len > 0")

    flags = (MPC_FLAG_HMAC_SHA256 | (MPC_FLAG_CHECKSUM if checksum else 0)
             | (MPC_FLAG_DENY_JOIN_ID0 if deny_join_id0 else 0))
    body = bytes([flags])
    if packet != "syn":
        body += _be(sender_key, 8)
    if packet in ("ack", "ack_data"):
        body += _be(receiver_key, 8)
    if packet == "ack_data":
        body += _be(data_len, 2)
        if checksum:
            body += _be(_checksum(dsn, ssn, data_len, payload_sum), 2)
    return _pad_to_4(_suboption(MP_CAPABLE, MPTCP_VERSION, body))


def mp_join(packet: str, *, backup: bool = False, addr_id: int = 0, token: int = 0,
            nonce: int = 0, truncated_hmac: int = 0, hmac: bytes = bytes(20)) -> bytes:
    """MP_JOIN (3.2): SYN 12, SYN-ACK 16, third ACK 24."""
    if packet not in MPJ_PACKETS:
        raise ValueError(f"unknown MP_JOIN packet {packet!r}, expected one of {MPJ_PACKETS}")
    for name, value, bits in (("addr_id", addr_id, 8), ("token", token, 32),
                              ("nonce", nonce, 32), ("truncated_hmac", truncated_hmac, 64)):
        _check_uint(name, value, bits)
    if not isinstance(hmac, (bytes, bytearray)) or len(hmac) != MPJ_HMAC_LEN:
        raise ValueError(f"hmac must be {MPJ_HMAC_LEN} bytes")
    what = f"an MP_JOIN {packet}"
    backup_flag = MPJ_FLAG_BACKUP if backup else 0
    if packet == "syn":
        _reject_unused(what, truncated_hmac=truncated_hmac, hmac=hmac)
        return _suboption(MP_JOIN, backup_flag, bytes([addr_id]) + _be(token, 4) + _be(nonce, 4))
    if packet == "synack":
        _reject_unused(what, token=token, hmac=hmac)
        body = bytes([addr_id]) + _be(truncated_hmac, 8) + _be(nonce, 4)
        return _suboption(MP_JOIN, backup_flag, body)
    _reject_unused(what, backup=backup, addr_id=addr_id, token=token, nonce=nonce,
                   truncated_hmac=truncated_hmac)
    # Subtype then 12 reserved bits: the nibble and one zero octet.
    return _suboption(MP_JOIN, 0, b"\0" + bytes(hmac))


def dss(*, ack: int = 0, ack_bits: int = 0, dsn: int | None = None, ssn: int = 0,
        data_len: int = 0, checksum: bool = False, payload_sum: int = 0,
        data_fin: bool = False) -> bytes:
    """DSS (3.3): optional Data ACK (4/8 octets), optional mapping (8-octet DSN)."""
    if ack_bits not in DSS_ACK_BITS:
        raise ValueError(f"ack_bits={ack_bits!r}, expected one of {DSS_ACK_BITS}")
    if ack_bits == 0:
        _reject_unused("a DSS without a Data ACK", ack=ack)
    else:
        _check_uint("ack", ack, ack_bits)
    if dsn is None:
        # F is only set with a mapping (Linux policy); the rest are mapping fields.
        _reject_unused("a DSS without a mapping", ssn=ssn, data_len=data_len,
                       payload_sum=payload_sum, data_fin=data_fin)
        if ack_bits == 0:
            raise ValueError("a DSS needs a Data ACK or a mapping")

    flags, body = 0, b""
    if ack_bits:
        flags |= DSS_FLAG_DATA_ACK | (DSS_FLAG_DATA_ACK_8 if ack_bits == 64 else 0)
        body += _be(ack, ack_bits // 8)
    if dsn is not None:
        body += pseudo_header(dsn, ssn, data_len)[:14]  # DSN, SSN, Data-Level Length
        flags |= DSS_FLAG_MAPPING | DSS_FLAG_DSN_8
        flags |= DSS_FLAG_DATA_FIN if data_fin else 0
        if checksum:
            body += _be(_mapping_checksum(dsn, ssn, data_len, payload_sum), 2)
    return _pad_to_4(_suboption(DSS, 0, bytes([flags]) + body))


def add_addr(*, addr: bytes, addr_id: int, port: int = 0, echo: bool = False,
             hmac: int = 0) -> bytes:
    """ADD_ADDR (3.4.1): ID, address, optional port, truncated HMAC unless echo."""
    if not isinstance(addr, (bytes, bytearray)) or len(addr) not in ADDR_LEN_TO_FAMILY:
        raise ValueError("addr must be 4 (IPv4) or 16 (IPv6) bytes")
    for name, value, bits in (("addr_id", addr_id, 8), ("port", port, 16), ("hmac", hmac, 64)):
        _check_uint(name, value, bits)
    if echo:
        _reject_unused("an ADD_ADDR echo", hmac=hmac)
    body = bytes([addr_id]) + bytes(addr)
    if port:
        body += _be(port, 2)  # the RFC orders the port before the HMAC
    if not echo:
        body += _be(hmac, 8)
    return _pad_to_4(_suboption(ADD_ADDR, ADD_ADDR_FLAG_ECHO if echo else 0, body))


def remove_addr(ids: Sequence[int]) -> bytes:
    """REMOVE_ADDR (3.4.2): length 3 + n."""
    if not 1 <= len(ids) <= REMOVE_ADDR_MAX_IDS:
        raise ValueError(f"remove_addr takes 1 to {REMOVE_ADDR_MAX_IDS} ids, got {len(ids)}")
    for addr_id in ids:
        _check_uint("addr_id", addr_id, 8)
    return _pad_to_4(_suboption(REMOVE_ADDR, 0, bytes(ids)))


def mp_prio(*, backup: bool) -> bytes:
    """MP_PRIO (3.3.8): length 3, the B flag only."""
    return _pad_to_4(_suboption(MP_PRIO, MP_PRIO_FLAG_BACKUP if backup else 0, b""))


def mp_fastclose(receiver_key: int) -> bytes:
    """MP_FASTCLOSE (3.5): 12 reserved bits, then the receiver's key."""
    _check_uint("receiver_key", receiver_key, 64)
    return _suboption(MP_FASTCLOSE, 0, b"\0" + _be(receiver_key, 8))


def mp_tcprst(*, transient: bool = False, reason: int = 0) -> bytes:
    """MP_TCPRST (3.6): flags U|V|W|T in the low nibble, then the reason."""
    _check_uint("reason", reason, 8)
    return _suboption(MP_TCPRST, MP_TCPRST_FLAG_TRANSIENT if transient else 0, bytes([reason]))


def mp_fail(dsn: int) -> bytes:
    """MP_FAIL (3.7): 12 reserved bits, then the 64-bit DSN."""
    _check_uint("dsn", dsn, 64)
    return _suboption(MP_FAIL, 0, b"\0" + _be(dsn, 8))


def sequence(*options: bytes) -> bytes:
    """Suboptions Linux writes in one segment, each already padded to 4 bytes."""
    for option in options:
        if len(option) % 4 or len(option) < 4 or option[0] != TCPOPT_MPTCP:
            raise ValueError(f"not a padded MPTCP suboption: {bytes(option).hex()}")
    joined = b"".join(options)
    if len(joined) > MAX_TCP_OPTION_SPACE:
        raise ValueError(f"{len(joined)} bytes exceed the {MAX_TCP_OPTION_SPACE}-byte option space")
    return joined


# --- text description ------------------------------------------------------

def _text_mp_capable(option: bytes, _nibble: int) -> str:
    packet = {4: "syn", 12: "synack", 20: "ack", 22: "ack_data", 24: "ack_data"}[len(option)]
    bits = ((0x80, "A"), (0x40, "B"), (0x20, "C"), (0x01, "H"))
    letters = [letter for bit, letter in bits if option[3] & bit]
    return " ".join(["mp_capable", packet, *letters] + (["csum"] if len(option) == 24 else []))


def _text_mp_join(option: bytes, nibble: int) -> str:
    packet = {12: "syn", 16: "synack", 24: "ack"}[len(option)]
    if packet == "ack":
        return "mp_join ack"
    return f"mp_join {packet} id {option[3]}" + (" backup" if nibble & MPJ_FLAG_BACKUP else "")


def _text_dss(option: bytes, _nibble: int) -> str:
    flags, words, length = option[3], ["dss"], 4
    if flags & DSS_FLAG_DATA_ACK:
        wide = flags & DSS_FLAG_DATA_ACK_8
        words.append("ack64" if wide else "ack32")
        length += 8 if wide else 4
    if flags & DSS_FLAG_MAPPING:
        words.append("map")
        length += (8 if flags & DSS_FLAG_DSN_8 else 4) + 6
        if len(option) == length + 2:
            words.append("csum")
    if flags & DSS_FLAG_DATA_FIN:
        words.append("fin")
    return " ".join(words)


def _text_add_addr(option: bytes, nibble: int) -> str:
    echo = bool(nibble & ADD_ADDR_FLAG_ECHO)
    without_hmac = len(option) - (0 if echo else 8)
    addr_len = 4 if without_hmac in (8, 10) else 16
    words = ["add_addr", ADDR_LEN_TO_FAMILY[addr_len], "id", str(option[3])]
    if without_hmac in (10, 22):
        words += ["port", str(int.from_bytes(option[4 + addr_len:6 + addr_len], "big"))]
    return " ".join(words + ["echo" if echo else "hmac"])


_DESCRIBERS: dict[int, Callable[[bytes, int], str]] = {
    MP_CAPABLE: _text_mp_capable,
    MP_JOIN: _text_mp_join,
    DSS: _text_dss,
    ADD_ADDR: _text_add_addr,
    REMOVE_ADDR: lambda o, _n: "remove_addr ids " + " ".join(str(i) for i in o[3:]),
    MP_PRIO: lambda _o, n: "mp_prio backup" if n & MP_PRIO_FLAG_BACKUP else "mp_prio",
    MP_FAIL: lambda o, _n: f"mp_fail dsn {int.from_bytes(o[4:12], 'big')}",
    MP_FASTCLOSE: lambda _o, _n: "mp_fastclose",
    MP_TCPRST: lambda o, n: f"mp_tcprst reason {o[3]}"
                            + (" transient" if n & MP_TCPRST_FLAG_TRANSIENT else ""),
}


def to_text(option: bytes) -> str:
    """Short description in packetdrill's spirit, e.g. 'dss ack32 map csum fin'."""
    if len(option) < 3 or option[0] != TCPOPT_MPTCP:
        raise ValueError(f"not an MPTCP option: {bytes(option).hex()}")
    length, subtype, nibble = option[1], option[2] >> 4, option[2] & 0x0F
    if not 3 <= length <= len(option):
        raise ValueError(f"bad MPTCP option length {length}")
    describe = _DESCRIBERS.get(subtype)
    if describe is None:
        raise ValueError(f"unknown MPTCP subtype {subtype}")
    try:
        return describe(bytes(option[:length]), nibble)  # trailing NOPs are ignored
    except (KeyError, IndexError):
        raise ValueError(f"bad length {length} for MPTCP subtype {subtype}") from None

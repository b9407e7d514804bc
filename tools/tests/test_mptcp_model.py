"""Tests for tcpopt.layout.mptcp_model against bytes typed from RFC 8684.

Every expected value below was typed from the RFC's option figures (kind 0x1e,
length, subtype in the high nibble of the third octet), not produced by the
module. Run: cd tools && python3 -m unittest tests.test_mptcp_model
"""
from __future__ import annotations

import unittest

from tcpopt.layout import mptcp_model as m


def h(text: str) -> bytes:
    """Hex with spaces allowed, so the expected bytes read like the figures."""
    return bytes.fromhex(text)


KEY_A = 0x0102030405060708
KEY_B = 0x1112131415161718
NOPS = "01 01"


class MpCapableTest(unittest.TestCase):
    def test_packets(self) -> None:
        cases = [
            ("syn with checksum", m.mp_capable("syn", checksum=True), h("1e 04 01 81")),
            ("syn", m.mp_capable("syn"), h("1e 04 01 01")),
            ("syn deny join id0", m.mp_capable("syn", deny_join_id0=True), h("1e 04 01 21")),
            ("synack", m.mp_capable("synack", sender_key=KEY_A),
             h("1e 0c 01 01 0102030405060708")),
            ("synack csum C", m.mp_capable("synack", checksum=True, deny_join_id0=True,
                                           sender_key=KEY_A),
             h("1e 0c 01 a1 0102030405060708")),
            ("ack", m.mp_capable("ack", sender_key=KEY_A, receiver_key=KEY_B),
             h("1e 14 01 01 0102030405060708 1112131415161718")),
            # Length 22: keys + Data-Level Length 100, then two NOPs (Linux policy).
            ("ack_data", m.mp_capable("ack_data", sender_key=KEY_A, receiver_key=KEY_B,
                                      data_len=100, dsn=5, ssn=1, payload_sum=0x1234),
             h("1e 16 01 01 0102030405060708 1112131415161718 0064" + NOPS)),
            # Checksum over DSN 0x1122334455667788, SSN 1, length 0x0064, payload 0x1234:
            #   0x1122 + 0x3344 + 0x5566 + 0x7788 = 0x11154 -> fold -> 0x1155
            #   + 0x0000 + 0x0001 (SSN) = 0x1156; + 0x0064 = 0x11ba; + 0x0000 (zero csum)
            #   + 0x1234 (payload) = 0x23ee; one's complement -> 0xdc11
            ("ack_data csum", m.mp_capable("ack_data", checksum=True, sender_key=KEY_A,
                                           receiver_key=KEY_B, data_len=100,
                                           dsn=0x1122334455667788, ssn=1, payload_sum=0x1234),
             h("1e 18 01 81 0102030405060708 1112131415161718 0064 dc11")),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(got.hex(" "), want.hex(" "))

    def test_errors(self) -> None:
        bad = [
            lambda: m.mp_capable("fin"),
            lambda: m.mp_capable("syn", sender_key=1),           # v1 SYN has no key
            lambda: m.mp_capable("synack", receiver_key=1),
            lambda: m.mp_capable("ack", data_len=10),
            lambda: m.mp_capable("ack_data", data_len=0),
            lambda: m.mp_capable("ack_data", data_len=1 << 16),
            lambda: m.mp_capable("synack", sender_key=1 << 64),
            lambda: m.mp_capable("synack", sender_key=-1),
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()


class MpJoinTest(unittest.TestCase):
    def test_packets(self) -> None:
        cases = [
            ("syn", m.mp_join("syn", backup=True, addr_id=2, token=0xAABBCCDD, nonce=0x11223344),
             h("1e 0c 11 02 aabbccdd 11223344")),
            ("synack", m.mp_join("synack", addr_id=3, truncated_hmac=KEY_A, nonce=0x55667788),
             h("1e 10 10 03 0102030405060708 55667788")),
            ("synack backup", m.mp_join("synack", backup=True, truncated_hmac=KEY_A, nonce=1),
             h("1e 10 11 00 0102030405060708 00000001")),
            ("ack", m.mp_join("ack", hmac=bytes(range(20))),
             h("1e 18 10 00 000102030405060708090a0b0c0d0e0f10111213")),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(got.hex(" "), want.hex(" "))

    def test_errors(self) -> None:
        bad = [
            lambda: m.mp_join("rst"),
            lambda: m.mp_join("ack", hmac=bytes(19)),
            lambda: m.mp_join("ack", backup=True),                # the ACK has no B flag
            lambda: m.mp_join("syn", truncated_hmac=1),
            lambda: m.mp_join("synack", token=1),
            lambda: m.mp_join("syn", addr_id=256),
            lambda: m.mp_join("syn", token=1 << 32),
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()


DSN = "0102030405060708"
SSN = "0a0b0c0d"


class DssTest(unittest.TestCase):
    def test_options(self) -> None:
        mapping = dict(dsn=KEY_A, ssn=0x0A0B0C0D, data_len=0x0100)
        cases = [
            ("ack32", m.dss(ack=0x01020304, ack_bits=32), h("1e 08 20 01 01020304")),
            ("ack64", m.dss(ack=KEY_A, ack_bits=64), h("1e 0c 20 03" + DSN)),
            # 4 + 8 + 4 + 2 = 18, then two NOPs; m is set with M (8-octet DSN).
            ("map", m.dss(**mapping), h(f"1e 12 20 0c {DSN} {SSN} 0100 {NOPS}")),
            # 0x1014 (DSN words) + 0x0a0b + 0x0c0d + 0x0100 = 0x272c -> ~ = 0xd8d3
            ("map csum", m.dss(checksum=True, **mapping),
             h(f"1e 14 20 0c {DSN} {SSN} 0100 d8d3")),
            ("ack32 map", m.dss(ack=0x01020304, ack_bits=32, **mapping),
             h(f"1e 16 20 0d 01020304 {DSN} {SSN} 0100 {NOPS}")),
            ("ack64 map csum", m.dss(ack=KEY_B, ack_bits=64, checksum=True, **mapping),
             h(f"1e 1c 20 0f 1112131415161718 {DSN} {SSN} 0100 d8d3")),
            ("ack32 map csum", m.dss(ack=7, ack_bits=32, checksum=True, **mapping),
             h(f"1e 18 20 0d 00000007 {DSN} {SSN} 0100 d8d3")),
            # Bare DATA_FIN (RFC 8684 3.3.3): SSN 0, Data-Level Length 1.
            ("data_fin", m.dss(ack=11, ack_bits=64, dsn=3001, ssn=0, data_len=1, data_fin=True),
             h(f"1e 1a 20 1f 000000000000000b 0000000000000bb9 00000000 0001 {NOPS}")),
            # Infinite mapping (length 0): checksum field 0 (Linux policy).
            ("infinite map csum", m.dss(dsn=5, ssn=1, data_len=0, checksum=True),
             h("1e 14 20 0c 0000000000000005 00000001 0000 0000")),
            # Checksums on, but no mapping: an ACK-only DSS has no checksum field.
            ("ack32 csum on", m.dss(ack=1, ack_bits=32, checksum=True), h("1e 08 20 01 00000001")),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(got.hex(" "), want.hex(" "))

    def test_errors(self) -> None:
        bad = [
            lambda: m.dss(ack=1, ack_bits=16),
            lambda: m.dss(ack=1 << 32, ack_bits=32),
            lambda: m.dss(ack=1),                                  # ack without ack_bits
            lambda: m.dss(ack=1, ack_bits=32, data_fin=True),     # F only with a mapping
            lambda: m.dss(ack=1, ack_bits=32, ssn=5),
            lambda: m.dss(),                                       # nothing to say
            lambda: m.dss(dsn=1 << 64),
            lambda: m.dss(dsn=0, ssn=1 << 32),
            lambda: m.dss(dsn=0, data_len=1 << 16),
            lambda: m.dss(dsn=0, data_len=1, checksum=True, payload_sum=1 << 16),
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()


V4 = bytes([192, 0, 2, 1])
V6 = bytes.fromhex("20010db8000000000000000000000001")
HMAC = 0x1122334455667788
V6_HEX = V6.hex()


class AddAddrTest(unittest.TestCase):
    def test_options(self) -> None:
        cases = [
            ("v4 echo", m.add_addr(addr=V4, addr_id=1, echo=True), h("1e 08 31 01 c0000201")),
            ("v4 hmac", m.add_addr(addr=V4, addr_id=1, hmac=HMAC),
             h("1e 10 30 01 c0000201 1122334455667788")),
            ("v4 port echo", m.add_addr(addr=V4, addr_id=1, port=8080, echo=True),
             h(f"1e 0a 31 01 c0000201 1f90 {NOPS}")),
            ("v4 port hmac", m.add_addr(addr=V4, addr_id=1, port=8080, hmac=HMAC),
             h(f"1e 12 30 01 c0000201 1f90 1122334455667788 {NOPS}")),
            ("v6 echo", m.add_addr(addr=V6, addr_id=2, echo=True), h(f"1e 14 31 02 {V6_HEX}")),
            ("v6 hmac", m.add_addr(addr=V6, addr_id=2, hmac=HMAC),
             h(f"1e 1c 30 02 {V6_HEX} 1122334455667788")),
            ("v6 port echo", m.add_addr(addr=V6, addr_id=2, port=443, echo=True),
             h(f"1e 16 31 02 {V6_HEX} 01bb {NOPS}")),
            ("v6 port hmac", m.add_addr(addr=V6, addr_id=2, port=443, hmac=HMAC),
             h(f"1e 1e 30 02 {V6_HEX} 01bb 1122334455667788 {NOPS}")),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(got.hex(" "), want.hex(" "))

    def test_errors(self) -> None:
        bad = [
            lambda: m.add_addr(addr=bytes(5), addr_id=1),
            lambda: m.add_addr(addr="10.0.0.1", addr_id=1),       # type: ignore[arg-type]
            lambda: m.add_addr(addr=V4, addr_id=256),
            lambda: m.add_addr(addr=V4, addr_id=1, port=1 << 16),
            lambda: m.add_addr(addr=V4, addr_id=1, hmac=1 << 64),
            lambda: m.add_addr(addr=V4, addr_id=1, echo=True, hmac=1),  # echo has no HMAC
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()


class SmallOptionsTest(unittest.TestCase):
    def test_remove_addr(self) -> None:
        cases = [
            ([1], h("1e 04 40 01")),
            ([1, 2], h("1e 05 40 01 02 010101")),
            ([1, 2, 3, 4, 5], h("1e 08 40 0102030405")),
            ([1, 2, 3, 4, 5, 6], h("1e 09 40 010203040506 010101")),
            ([1, 2, 3, 4, 5, 6, 7, 8], h("1e 0b 40 0102030405060708 01")),
        ]
        for ids, want in cases:
            with self.subTest(ids=ids):
                self.assertEqual(m.remove_addr(ids).hex(" "), want.hex(" "))

    def test_remove_addr_errors(self) -> None:
        for ids in ([], list(range(9)), [256], [-1]):
            with self.subTest(ids=ids), self.assertRaises(ValueError):
                m.remove_addr(ids)

    def test_fixed_layouts(self) -> None:
        cases = [
            ("prio backup", m.mp_prio(backup=True), h("1e 03 51 01")),
            ("prio", m.mp_prio(backup=False), h("1e 03 50 01")),
            ("fastclose", m.mp_fastclose(KEY_B), h("1e 0c 70 00 1112131415161718")),
            ("tcprst transient", m.mp_tcprst(transient=True, reason=3), h("1e 04 81 03")),
            ("tcprst", m.mp_tcprst(), h("1e 04 80 00")),
            ("mp_fail", m.mp_fail(KEY_A), h("1e 0c 60 00 0102030405060708")),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(got.hex(" "), want.hex(" "))

    def test_fixed_layout_errors(self) -> None:
        bad = [
            lambda: m.mp_fastclose(1 << 64),
            lambda: m.mp_tcprst(reason=256),
            lambda: m.mp_fail(-1),
            lambda: m.mp_fail(True),                               # a bool is not a DSN
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()


class ChecksumTest(unittest.TestCase):
    def test_hand_computed(self) -> None:
        # DSN 0x0102030405060708, SSN 1, length 4, payload "abcd":
        #   DSN words 0x0102 + 0x0304 + 0x0506 + 0x0708 = 0x1014
        #   + SSN 0x0000 + 0x0001 = 0x1015; + length 0x0004 = 0x1019; + zero csum
        #   payload 0x6162 + 0x6364 = 0xc4c6; 0x1019 + 0xc4c6 = 0xd4df
        #   one's complement: 0xffff - 0xd4df = 0x2b20
        self.assertEqual(m.ones_complement_sum(b"abcd"), 0xC4C6)
        self.assertEqual(m.checksum(KEY_A, 1, 4, 0xC4C6), 0x2B20)

    def test_end_around_carry(self) -> None:
        # 0xffff + 0xffff + 0 + 0 (DSN) + 0xffff + 0 (SSN) + 0x0002 + 0x0001 = 0x30000
        # fold: 0x0000 + 0x3 = 0x0003; one's complement -> 0xfffc
        self.assertEqual(m.checksum(0xFFFFFFFF00000000, 0xFFFF0000, 2, 1), 0xFFFC)
        self.assertEqual(m.ones_complement_add(0xFFFF, 0x0001), 0x0001)
        self.assertEqual(m.ones_complement_sum(b"\x01"), 0x0100)  # odd tail padded

    def test_resum_gives_all_ones(self) -> None:
        for dsn, ssn, data_len, payload in [(KEY_A, 1, 4, b"abcd"), (0, 0, 1, b""),
                                            ((1 << 64) - 1, 0xDEADBEEF, 1400, bytes(range(255)))]:
            with self.subTest(dsn=dsn, ssn=ssn):
                payload_sum = m.ones_complement_sum(payload)
                csum = m.checksum(dsn, ssn, data_len, payload_sum)
                header = m.pseudo_header(dsn, ssn, data_len, checksum_field=csum)
                self.assertEqual(m.ones_complement_add(m.ones_complement_sum(header),
                                                       payload_sum), 0xFFFF)

    def test_errors(self) -> None:
        bad = [
            lambda: m.checksum(1 << 64, 0, 0, 0),
            lambda: m.checksum(0, 1 << 32, 0, 0),
            lambda: m.checksum(0, 0, 1 << 16, 0),
            lambda: m.checksum(0, 0, 0, 1 << 16),
            lambda: m.ones_complement_add(0x10000),
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()


class SequenceAndTextTest(unittest.TestCase):
    def test_sequence_concatenates(self) -> None:
        got = m.sequence(m.dss(ack=1, ack_bits=32), m.mp_prio(backup=True))
        self.assertEqual(got.hex(" "), h("1e 08 20 01 00000001 1e 03 51 01").hex(" "))

    def test_sequence_errors(self) -> None:
        bad = [
            lambda: m.sequence(h("1e 03 51")),                     # not padded
            lambda: m.sequence(h("02 04 05 b4")),                  # MSS, not MPTCP
            lambda: m.sequence(*[m.mp_fail(1)] * 4),               # 48 > 40 bytes
        ]
        for i, call in enumerate(bad):
            with self.subTest(i), self.assertRaises(ValueError):
                call()

    def test_to_text(self) -> None:
        cases = [
            (m.mp_capable("syn", checksum=True), "mp_capable syn A H"),
            (m.mp_capable("ack_data", checksum=True, sender_key=1, receiver_key=2, data_len=1),
             "mp_capable ack_data A H csum"),
            (m.mp_join("syn", backup=True, addr_id=2), "mp_join syn id 2 backup"),
            (m.mp_join("ack"), "mp_join ack"),
            (m.dss(ack=1, ack_bits=32, dsn=1, data_len=1, checksum=True, data_fin=True),
             "dss ack32 map csum fin"),
            (m.dss(ack=1, ack_bits=64, dsn=1, data_len=1), "dss ack64 map"),
            (m.add_addr(addr=V4, addr_id=1, port=8080, hmac=HMAC), "add_addr v4 id 1 port 8080 hmac"),
            (m.add_addr(addr=V6, addr_id=4, echo=True), "add_addr v6 id 4 echo"),
            (m.remove_addr([1, 2]), "remove_addr ids 1 2"),
            (m.mp_prio(backup=True), "mp_prio backup"),
            (m.mp_fastclose(1), "mp_fastclose"),
            (m.mp_tcprst(transient=True, reason=2), "mp_tcprst reason 2 transient"),
            (m.mp_fail(42), "mp_fail dsn 42"),
        ]
        for option, want in cases:
            with self.subTest(want):
                self.assertEqual(m.to_text(option), want)

    def test_to_text_errors(self) -> None:
        for option in (h("02 04 05 b4"), h("1e 20 01 01"), h("1e 04 f0 00"), h("1e 05 01 01 00"),
                       h("1e 03 20")):
            with self.subTest(option.hex()), self.assertRaises(ValueError):
                m.to_text(option)


class LengthInvariantTest(unittest.TestCase):
    def test_length_field_and_padding(self) -> None:
        # The Length octet never counts the NOPs, and every result is word-aligned.
        options = [
            m.mp_capable("ack_data", sender_key=1, receiver_key=2, data_len=1),
            m.dss(dsn=0, data_len=1), m.add_addr(addr=V4, addr_id=1, port=1),
            m.remove_addr([1, 2, 3, 4, 5, 6]), m.mp_prio(backup=False),
        ]
        for option in options:
            with self.subTest(option.hex()):
                self.assertEqual(len(option) % 4, 0)
                self.assertEqual(set(option[option[1]:]), {m.TCPOPT_NOP})


if __name__ == "__main__":
    unittest.main()

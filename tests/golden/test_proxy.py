#!/usr/bin/env python3
"""Tests of proxy.py's address rewrite on hand-built frames: python3 tests/golden/test_proxy.py"""

import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy  # noqa: E402


def s16(s):
    return struct.pack(">h", len(s)) + s


def cs(s):
    return proxy.put_uvarint(len(s) + 1) + s


NULL16 = struct.pack(">h", -1)
I32 = lambda n: struct.pack(">i", n)  # noqa: E731
I16 = lambda n: struct.pack(">h", n)  # noqa: E731


class RewriteTest(unittest.TestCase):
    def test_metadata_v1_non_flexible(self):
        head = I32(7)  # correlation id (header v0)
        broker = lambda h, p: I32(1) + s16(h) + I32(p) + NULL16  # noqa: E731
        rest = I32(1) + I32(0)  # controller id, no topics
        frame = head + I32(1) + broker(b"kafka-host", 9092) + rest
        want = head + I32(1) + broker(b"127.0.0.1", 5555) + rest
        self.assertEqual(proxy.rewrite_addresses(3, 1, frame, 5555), want)

    def test_metadata_v12_flexible_two_brokers(self):
        head = I32(7) + b"\x00"  # header v1: empty tagged section
        broker = lambda h, p: I32(2) + cs(h) + I32(p) + cs(b"rack") + b"\x00"  # noqa: E731
        rest = b"\x05rest"
        frame = head + I32(0) + b"\x03" + broker(b"a", 1) + broker(b"bb", 2) + rest
        new = broker(b"127.0.0.1", 5555)
        want = head + I32(0) + b"\x03" + new + new + rest
        self.assertEqual(proxy.rewrite_addresses(3, 12, frame, 5555), want)

    def test_find_coordinator_v0_and_v1_and_v3(self):
        v0 = I32(7) + I16(0) + I32(1) + s16(b"h") + I32(1)
        self.assertEqual(
            proxy.rewrite_addresses(10, 0, v0, 5555),
            I32(7) + I16(0) + I32(1) + s16(b"127.0.0.1") + I32(5555),
        )
        v1 = I32(7) + I32(0) + I16(0) + NULL16 + I32(1) + s16(b"h") + I32(1)
        self.assertEqual(
            proxy.rewrite_addresses(10, 1, v1, 5555),
            I32(7) + I32(0) + I16(0) + NULL16 + I32(1) + s16(b"127.0.0.1") + I32(5555),
        )
        v3 = I32(7) + b"\x00" + I32(0) + I16(0) + b"\x00" + I32(1) + cs(b"h") + I32(1) + b"\x00"
        want = (
            I32(7) + b"\x00" + I32(0) + I16(0) + b"\x00" + I32(1)
            + cs(b"127.0.0.1") + I32(5555) + b"\x00"
        )
        self.assertEqual(proxy.rewrite_addresses(10, 3, v3, 5555), want)

    def test_find_coordinator_v4_batched(self):
        head = I32(7) + b"\x00" + I32(0)
        coord = lambda h, p: cs(b"g") + I32(1) + cs(h) + I32(p) + I16(0) + b"\x00" + b"\x00"  # noqa: E731
        frame = head + b"\x02" + coord(b"host", 9) + b"\x00"
        want = head + b"\x02" + coord(b"127.0.0.1", 5555) + b"\x00"
        self.assertEqual(proxy.rewrite_addresses(10, 4, frame, 5555), want)

    def test_other_apis_untouched_and_truncation_refused(self):
        self.assertEqual(proxy.rewrite_addresses(1, 17, b"abcd", 1), b"abcd")
        with self.assertRaises(ValueError):
            proxy.rewrite_addresses(3, 1, I32(7) + I32(1) + I32(1), 5555)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""A recording TCP proxy for the Kafka protocol (test utility, stdlib only).

Listens on 127.0.0.1:<listen-port>, forwards every connection to the broker at <upstream>, and
records every request and response frame (the whole frame after the 4-byte size prefix: header
and body) under <out-dir>/, one file per frame, plus <out-dir>/log.tsv with one line per frame:

    seq  conn  dir(req|resp)  correlation_id  api_key  api_version  client_id  file

Responses are matched to requests by (connection, correlation id); the api key and version of a
response are those of its request.

A client learns broker addresses from Metadata and FindCoordinator responses and would then
connect to the broker directly. So the proxy forwards those two responses with every broker
address replaced by its own (127.0.0.1:<listen-port>); the recorded frame is the broker's
original, unchanged. This keeps the broker's configuration untouched (the capture uses the
project's ordinary test broker); it assumes a single-node cluster.

Usage: proxy.py <listen-port> <upstream-host:port> <out-dir> [--corrupt-fetch] [--fail API:CODE:N]...
<listen-port> 0 picks a free port. It prints "PROXY_READY <port>" on stdout once listening, and
runs until killed. Faults no real broker can be made to produce on demand:
- --corrupt-fetch: every Fetch response of more than 1 KiB reaches the client with its 64th byte
  from the end inverted: inside the last record batch, whose CRC then fails (cli/tests/cli/commits.rs).
- --fail API:CODE:N (API fetch or list-offsets, flexible versions: Fetch 12+, ListOffsets 6+):
  the first N responses of that API that carry a partition reach the client with every
  partition's error code set to CODE, and the last byte of every non-empty Fetch records field
  inverted (records sent with an error must not be used; this makes any use fail the batch's
  CRC). Each such response appends a line "API CODE" to <out-dir>/injected (tests/read/main.rs).
"""

import os
import socket
import struct
import sys
import threading

LOCK = threading.Lock()
STATE = {"seq": 0, "conn": 0}


def read_exact(sock, n):
    """Reads exactly n bytes, or returns None at end of stream."""
    chunks = []
    while n > 0:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(sock):
    """Returns (size prefix, frame without prefix), or None at end of stream."""
    prefix = read_exact(sock, 4)
    if prefix is None:
        return None
    (size,) = struct.unpack(">i", prefix)
    body = read_exact(sock, size)
    if body is None:
        return None
    return prefix, body


class Recorder:
    """Writes frames and their log lines; shared by all connections."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.log = open(os.path.join(out_dir, "log.tsv"), "a", encoding="utf-8")

    def record(self, conn, direction, corr, api_key, api_version, client_id, frame):
        with LOCK:
            STATE["seq"] += 1
            seq = STATE["seq"]
            name = "%06d-%s.bin" % (seq, direction)
            with open(os.path.join(self.out_dir, name), "wb") as f:
                f.write(frame)
            self.log.write(
                "%d\t%d\t%s\t%d\t%d\t%d\t%s\t%s\n"
                % (seq, conn, direction, corr, api_key, api_version, client_id, name)
            )
            self.log.flush()


def parse_request_header(frame):
    """api_key, api_version, correlation_id and client_id: the same layout in every header version."""
    api_key, api_version, corr = struct.unpack(">hhi", frame[:8])
    (n,) = struct.unpack(">h", frame[8:10])
    client_id = "-" if n < 0 else frame[10 : 10 + n].decode("utf-8", "replace")
    return api_key, api_version, corr, client_id


class Reader:
    """A cursor over a response body, for the few fields the rewrite needs."""

    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int(self, n):
        return int.from_bytes(self.take(n), "big", signed=True)

    def uvarint(self):
        value, shift = 0, 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    def string(self, flexible):
        """Skips a (nullable) string and returns its bytes, None for null."""
        n = self.uvarint() - 1 if flexible else self.int(2)
        return None if n < 0 else self.take(n)

    def tagged(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())

    def array_len(self, flexible):
        return self.uvarint() - 1 if flexible else self.int(4)


def put_uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def put_string(s, flexible):
    return (put_uvarint(len(s) + 1) if flexible else struct.pack(">h", len(s))) + s


def rewrite_addresses(api_key, version, frame, port):
    """Returns the frame of a Metadata or FindCoordinator response with every broker address
    replaced by 127.0.0.1:port; other frames are returned as they are."""
    host = b"127.0.0.1"
    if api_key == 3:
        flexible = version >= 9
        r = Reader(frame, 4)
        if flexible:
            r.tagged()
        if version >= 3:
            r.int(4)
        out = bytearray(frame[: r.pos])
        start = r.pos
        count = r.array_len(flexible)
        out += frame[start : r.pos]
        for _ in range(max(count, 0)):
            out += r.take(4)  # node_id
            r.string(flexible)
            r.int(4)
            out += put_string(host, flexible) + struct.pack(">i", port)
            start = r.pos
            if version >= 1:
                r.string(flexible)  # rack
            if flexible:
                r.tagged()
            out += frame[start : r.pos]
        return bytes(out + frame[r.pos :])
    if api_key == 10:
        flexible = version >= 3
        r = Reader(frame, 4)
        if flexible:
            r.tagged()
        if version >= 4:
            r.int(4)  # throttle_time_ms
            out = bytearray(frame[: r.pos])
            start = r.pos
            count = r.array_len(True)
            out += frame[start : r.pos]
            for _ in range(max(count, 0)):
                start = r.pos
                r.string(True)  # key
                r.int(4)  # node_id
                out += frame[start : r.pos]
                r.string(True)
                r.int(4)
                out += put_string(host, True) + struct.pack(">i", port)
                start = r.pos
                r.int(2)  # error_code
                r.string(True)  # error_message
                r.tagged()
                out += frame[start : r.pos]
            return bytes(out + frame[r.pos :])
        if version >= 1:
            r.int(4)  # throttle_time_ms
        r.int(2)  # error_code
        if version >= 1:
            r.string(flexible)  # error_message
        r.int(4)  # node_id
        out = bytearray(frame[: r.pos])
        r.string(flexible)
        r.int(4)
        out += put_string(host, flexible) + struct.pack(">i", port)
        return bytes(out + frame[r.pos :])
    return frame


FETCH, LIST_OFFSETS = 1, 2
API_NAMES = {"fetch": FETCH, "list-offsets": LIST_OFFSETS}


def partition_error_positions(api_key, version, frame, records=None):
    """Offsets in a flexible Fetch (v12+) or ListOffsets (v6+) response frame of every
    partition's error code. With a list as `records`, appends the (start, end) of every
    non-empty Fetch records field to it."""
    r = Reader(frame, 4)
    r.tagged()  # response header v1
    if api_key == FETCH:
        if version < 12:
            raise ValueError("Fetch v%d is not flexible" % version)
        r.int(4)  # throttle_time_ms
        r.int(2)  # error_code
        r.int(4)  # session_id
    else:
        if version < 6:
            raise ValueError("ListOffsets v%d is not flexible" % version)
        r.int(4)  # throttle_time_ms
    positions = []
    for _ in range(max(r.array_len(True), 0)):
        if api_key == FETCH and version >= 13:
            r.take(16)  # topic_id
        else:
            r.string(True)  # topic name
        for _ in range(max(r.array_len(True), 0)):
            r.int(4)  # partition_index
            positions.append(r.pos)
            r.int(2)  # error_code
            if api_key == FETCH:
                r.take(24)  # high_watermark, last_stable_offset, log_start_offset
                for _ in range(max(r.array_len(True), 0)):
                    r.take(16)  # producer_id, first_offset
                    r.tagged()
                r.int(4)  # preferred_read_replica
                n = r.uvarint() - 1  # records (compact nullable bytes)
                if n > 0:
                    if records is not None:
                        records.append((r.pos, r.pos + n))
                    r.take(n)
            else:
                r.take(20)  # timestamp, offset, leader_epoch
            r.tagged()
        r.tagged()
    return positions


class Faults:
    """The --fail injections still to make, shared by all connections."""

    def __init__(self, specs, out_dir):
        self.left = {}  # api_key -> [code, count]
        for spec in specs:
            api, code, count = spec.split(":")
            self.left[API_NAMES[api]] = [int(code), int(count)]
        self.path = os.path.join(out_dir, "injected")

    def apply(self, api_key, version, frame):
        with LOCK:
            left = self.left.get(api_key)
            if not left or left[1] <= 0:
                return frame
            records = []
            positions = partition_error_positions(api_key, version, frame, records)
            if not positions:
                return frame
            left[1] -= 1
            code = left[0]
            with open(self.path, "a", encoding="utf-8") as f:
                name = "fetch" if api_key == FETCH else "list-offsets"
                f.write("%s %d\n" % (name, code))
        out = bytearray(frame)
        for pos in positions:
            out[pos : pos + 2] = struct.pack(">h", code)
        # Records that come with an error must not be used: damage them (a byte of the last
        # batch inverted, so its CRC fails) to make any use of them show.
        for _, end in records:
            out[end - 1] ^= 0xFF
        return bytes(out)


def handle(client, upstream, recorder, port, corrupt_fetch, faults):
    with LOCK:
        STATE["conn"] += 1
        conn = STATE["conn"]
    try:
        broker = socket.create_connection(upstream)
    except OSError:
        client.close()
        return
    pending = {}
    pending_lock = threading.Lock()

    def requests():
        try:
            while True:
                got = read_frame(client)
                if got is None:
                    break
                prefix, frame = got
                api_key, api_version, corr, client_id = parse_request_header(frame)
                with pending_lock:
                    pending[corr] = (api_key, api_version, client_id)
                recorder.record(conn, "req", corr, api_key, api_version, client_id, frame)
                broker.sendall(prefix + frame)
        except OSError:
            pass
        finally:
            for s in (broker, client):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def responses():
        try:
            while True:
                got = read_frame(broker)
                if got is None:
                    break
                prefix, frame = got
                (corr,) = struct.unpack(">i", frame[:4])
                with pending_lock:
                    api_key, api_version, client_id = pending.pop(corr, (-1, -1, "-"))
                recorder.record(conn, "resp", corr, api_key, api_version, client_id, frame)
                if api_key in (3, 10):
                    frame = rewrite_addresses(api_key, api_version, frame, port)
                    prefix = struct.pack(">i", len(frame))
                elif api_key == 1 and corrupt_fetch and len(frame) > 1024:
                    damaged = bytearray(frame)
                    damaged[-64] ^= 0xFF
                    frame = bytes(damaged)
                elif api_key in (FETCH, LIST_OFFSETS):
                    frame = faults.apply(api_key, api_version, frame)
                client.sendall(prefix + frame)
        except OSError:
            pass
        finally:
            for s in (broker, client):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    t = threading.Thread(target=responses, daemon=True)
    t.start()
    requests()
    t.join()
    broker.close()
    client.close()


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    corrupt_fetch, fails = False, []
    rest = sys.argv[4:]
    while rest:
        if rest[0] == "--corrupt-fetch":
            corrupt_fetch, rest = True, rest[1:]
        elif rest[0] == "--fail" and len(rest) > 1 and rest[1].split(":")[0] in API_NAMES:
            fails.append(rest[1])
            rest = rest[2:]
        else:
            sys.exit(__doc__)
    port = int(sys.argv[1])
    host, uport = sys.argv[2].rsplit(":", 1)
    upstream = (host, int(uport))
    recorder = Recorder(sys.argv[3])
    faults = Faults(fails, sys.argv[3])
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    port = server.getsockname()[1]
    print("PROXY_READY %d" % port, flush=True)
    while True:
        client, _ = server.accept()
        args = (client, upstream, recorder, port, corrupt_fetch, faults)
        threading.Thread(target=handle, args=args, daemon=True).start()


if __name__ == "__main__":
    main()

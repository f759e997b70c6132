#!/usr/bin/env python3
"""Selects golden frames from a proxy recording (see proxy.py) and writes them to a data directory.

Usage: pick_frames.py <raw-dir> <out-dir> <description>

Keeps request/response pairs of the eight APIs kseek implements and the capture drives, drops pairs whose request body
and response body both equal those of an earlier pair of the same API and version (headers
differ only by correlation id and client id), keeps for each Fetch phase (client id
golden-fetch-<codec>) the pair with the largest response (the one carrying the batch), and for
golden-fetch-empty the first and last pair (a full and an incremental empty answer). Drops every
other Fetch pair, and keeps at most MAX_PER_VERSION pairs of any other API and version.

Writes <seq>-<Api>-v<version>-request.bin and ...-response.bin (each the whole frame after the
4-byte size: header and body) and index.tsv with one line per pair.
"""

import os
import sys

# api key -> (name, first flexible version)
APIS = {
    18: ("ApiVersions", 3),
    3: ("Metadata", 9),
    2: ("ListOffsets", 6),
    1: ("Fetch", 12),
    8: ("OffsetCommit", 8),
    9: ("OffsetFetch", 6),
    10: ("FindCoordinator", 3),
    32: ("DescribeConfigs", 4),
}
MAX_PER_VERSION = 4


def uvarint(buf, pos):
    value, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def skip_tagged(buf, pos):
    count, pos = uvarint(buf, pos)
    for _ in range(count):
        _, pos = uvarint(buf, pos)
        size, pos = uvarint(buf, pos)
        pos += size
    return pos


def request_body(frame, header_version):
    n = int.from_bytes(frame[8:10], "big", signed=True)
    pos = 10 + max(n, 0)
    if header_version >= 2:
        pos = skip_tagged(frame, pos)
    return frame[pos:]


def response_body(frame, header_version):
    pos = 4
    if header_version >= 1:
        pos = skip_tagged(frame, pos)
    return frame[pos:]


def write_pairs(out, description, kept):
    """Writes each kept pair's request and response frames into OUT (the .bin files and the
    index.tsv of earlier runs removed first). Shared with pick_sasl_frames.py."""
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.endswith(".bin") or name == "index.tsv":
            os.remove(os.path.join(out, name))
    lines = [
        "# " + description,
        "# seq\tapi_key\tapi\tapi_version\trequest_header_version\tresponse_header_version"
        "\tclient_id\trequest_file\tresponse_file",
    ]
    for seq, p in enumerate(kept, 1):
        stem = "%04d-%s-v%d" % (seq, p["api"], p["ver"])
        files = (stem + "-request.bin", stem + "-response.bin")
        for fname, data in zip(files, (p["req"], p["resp"])):
            with open(os.path.join(out, fname), "wb") as f:
                f.write(data)
        lines.append(
            "\t".join(
                str(x)
                for x in (
                    seq,
                    p["key"],
                    p["api"],
                    p["ver"],
                    p["req_hv"],
                    p["resp_hv"],
                    p["client_id"],
                    files[0],
                    files[1],
                )
            )
        )
    with open(os.path.join(out, "index.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("selected %d pairs into %s" % (len(kept), out))


def main():
    raw, out, description = sys.argv[1], sys.argv[2], sys.argv[3]
    requests, responses = [], {}
    with open(os.path.join(raw, "log.tsv"), encoding="utf-8") as f:
        for line in f:
            seq, conn, direction, corr, key, ver, client_id, name = line.rstrip("\n").split("\t")
            row = (int(seq), int(conn), int(corr), int(key), int(ver), client_id, name)
            if direction == "req":
                requests.append(row)
            else:
                responses[(int(conn), int(corr))] = row
    pairs = []
    for seq, conn, corr, key, ver, client_id, name in sorted(requests):
        if key not in APIS or (conn, corr) not in responses:
            continue
        api, first_flexible = APIS[key]
        req_hv = 2 if ver >= first_flexible else 1
        resp_hv = 1 if ver >= first_flexible and key != 18 else 0
        with open(os.path.join(raw, name), "rb") as f:
            req = f.read()
        with open(os.path.join(raw, responses[(conn, corr)][6]), "rb") as f:
            resp = f.read()
        pairs.append(
            {
                "key": key,
                "api": api,
                "ver": ver,
                "req_hv": req_hv,
                "resp_hv": resp_hv,
                "client_id": client_id,
                "req": req,
                "resp": resp,
                "bodies": (request_body(req, req_hv), response_body(resp, resp_hv)),
            }
        )

    # Fetch: one pair per phase, chosen as described above.
    keep_fetch = set()
    by_phase = {}
    for i, p in enumerate(pairs):
        if p["key"] == 1:
            by_phase.setdefault(p["client_id"], []).append(i)
    for phase, idx in by_phase.items():
        if phase == "golden-fetch-empty":
            keep_fetch.update({idx[0], idx[-1]})
        elif phase.startswith("golden-fetch-"):
            keep_fetch.add(max(idx, key=lambda i: len(pairs[i]["resp"])))

    seen, counts, kept = set(), {}, []
    for i, p in enumerate(pairs):
        if p["key"] == 1 and i not in keep_fetch:
            continue
        dedup = (p["key"], p["ver"]) + p["bodies"]
        if dedup in seen:
            continue
        seen.add(dedup)
        n = counts.get((p["key"], p["ver"]), 0)
        if p["key"] != 1 and n >= MAX_PER_VERSION:
            continue
        counts[(p["key"], p["ver"])] = n + 1
        kept.append(p)

    write_pairs(out, description, kept)


if __name__ == "__main__":
    main()

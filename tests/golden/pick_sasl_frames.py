#!/usr/bin/env python3
"""Selects the SASL frames from a proxy recording (see proxy.py) and writes them to a data directory.

Usage: pick_sasl_frames.py <raw-dir> <out-dir> <description>

For each capture phase (client id golden-sasl-*), keeps the SaslHandshake (17) and
SaslAuthenticate (36) request/response pairs of the phase's first connection that carried any,
in the order they were sent: one complete login (or refused login) per phase. A client opens
more than one connection per phase (bootstrap, then the node); the later logins repeat the first.

Writes <seq>-<Api>-v<version>-request.bin and ...-response.bin (each the whole frame after the
4-byte size: header and body) and index.tsv with one line per pair, in the format of
pick_frames.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pick_frames import write_pairs  # noqa: E402

# api key -> (name, first flexible version); SaslHandshake has none.
APIS = {
    17: ("SaslHandshake", None),
    36: ("SaslAuthenticate", 2),
}


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
    first_conn = {}
    kept = []
    for seq, conn, corr, key, ver, client_id, name in sorted(requests):
        if key not in APIS or not client_id.startswith("golden-sasl-"):
            continue
        if first_conn.setdefault(client_id, conn) != conn:
            continue
        if (conn, corr) not in responses:
            sys.exit("%s: request %d on connection %d has no response" % (client_id, corr, conn))
        api, first_flexible = APIS[key]
        flexible = first_flexible is not None and ver >= first_flexible
        with open(os.path.join(raw, name), "rb") as f:
            req = f.read()
        with open(os.path.join(raw, responses[(conn, corr)][6]), "rb") as f:
            resp = f.read()
        kept.append(
            {
                "key": key,
                "api": api,
                "ver": ver,
                "req_hv": 2 if flexible else 1,
                "resp_hv": 1 if flexible else 0,
                "client_id": client_id,
                "req": req,
                "resp": resp,
            }
        )

    write_pairs(out, description, kept)


if __name__ == "__main__":
    main()

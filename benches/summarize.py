#!/usr/bin/env python3
"""Summarize a `cargo bench --bench decode` run as the Markdown tables of BENCHMARKS.md.

Usage: python3 benches/summarize.py [CRITERION_DIR]

CRITERION_DIR defaults to $CARGO_TARGET_DIR/criterion, else target/criterion. Reads each
benchmark's median from `new/estimates.json` and its throughput from `new/benchmark.json`.
Rates are per second of the bench's clock (thread CPU time unless KSEEK_BENCH_CLOCK=wall).
The reference lines of uncompressed inputs (`kseek-no-crc`, `crc32c-only`) are rows like the
peers; their "kseek ÷" figure below 1 is the full decode's speed as a share of theirs.
"""

import json
import os
import sys
from collections import OrderedDict


def load(root):
    groups = OrderedDict()
    for group_dir in sorted(os.listdir(root)):
        path = os.path.join(root, group_dir)
        if not os.path.isdir(path) or group_dir == "report":
            continue
        for fn_dir in sorted(os.listdir(path)):
            new = os.path.join(path, fn_dir, "new")
            try:
                with open(os.path.join(new, "benchmark.json")) as f:
                    bench = json.load(f)
                with open(os.path.join(new, "estimates.json")) as f:
                    median_ns = json.load(f)["median"]["point_estimate"]
            except (OSError, KeyError, ValueError):
                continue
            throughput = bench.get("throughput") or {}
            if "ElementsAndBytes" in throughput:
                elements = throughput["ElementsAndBytes"]["elements"]
                nbytes = throughput["ElementsAndBytes"]["bytes"]
            elif "Bytes" in throughput:
                elements, nbytes = None, throughput["Bytes"]
            else:
                elements, nbytes = None, None
            groups.setdefault(bench["group_id"], []).append(
                (bench["function_id"], median_ns, elements, nbytes)
            )
    return groups


def rate(n, ns):
    return None if n is None else n / (ns / 1e9)


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_rate(r, unit):
    if r is None:
        return "–"
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if r >= scale:
            return f"{r / scale:.3g} {prefix}{unit}"
    return f"{r:.3g} {unit}"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "criterion"
    )
    groups = load(root)
    decode = [(g, rows) for g, rows in groups.items() if not g.startswith("codec/")]
    codec = [(g, rows) for g, rows in groups.items() if g.startswith("codec/")]

    if decode:
        print("| input | decoder | median | records/s | bytes/s (uncompressed) | kseek ÷ decoder |")
        print("| --- | --- | --- | --- | --- | --- |")
        for group, rows in decode:
            ours = next((ns for fn, ns, _, _ in rows if fn == "kseek"), None)
            for fn, ns, elements, nbytes in rows:
                ratio = f"{ns / ours:.2f}x" if ours and fn != "kseek" else ""
                print(
                    f"| {group} | {fn} | {fmt_time(ns)} | {fmt_rate(rate(elements, ns), '')} | "
                    f"{fmt_rate(rate(nbytes, ns), 'B/s')} | {ratio} |"
                )
        print()

    if codec:
        print("| payload | decompressor | median | uncompressed bytes/s | kseek-decompress ÷ this |")
        print("| --- | --- | --- | --- | --- |")
        for group, rows in codec:
            ours = next((ns for fn, ns, _, _ in rows if fn == "kseek-decompress"), None)
            for fn, ns, _, nbytes in rows:
                ratio = f"{ns / ours:.2f}x" if ours and fn != "kseek-decompress" else ""
                print(
                    f"| {group} | {fn} | {fmt_time(ns)} | {fmt_rate(rate(nbytes, ns), 'B/s')} | "
                    f"{ratio} |"
                )

    if decode and codec:
        # The "within 20% of the codec crate's own decompression" target: the full decode's
        # uncompressed bytes/s over each of the codec crate's own calls on the same payload.
        print()
        print("| payload | full kseek decode | codec crate's own | full decode ÷ codec's own |")
        print("| --- | --- | --- | --- |")
        full = {g[len("decode/"):]: rows for g, rows in decode if g.startswith("decode/")}
        for group, rows in codec:
            payload = group[len("codec/"):]
            ours = next(
                (rate(b, ns) for fn, ns, _, b in full.get(payload, []) if fn == "kseek"), None
            )
            if ours is None:
                continue
            for fn, ns, _, nbytes in rows:
                if fn == "kseek-decompress":
                    continue
                theirs = rate(nbytes, ns)
                print(
                    f"| {payload} | {fmt_rate(ours, 'B/s')} | {fn} {fmt_rate(theirs, 'B/s')} | "
                    f"{ours / theirs:.2f} |"
                )


if __name__ == "__main__":
    main()

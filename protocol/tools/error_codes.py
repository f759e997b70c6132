#!/usr/bin/env python3
"""Regenerate the error code table in protocol/src/error_code.rs from error-codes.tsv.

error-codes.tsv (beside this script) lists every error code of Kafka's
clients/src/main/java/org/apache/kafka/common/protocol/Errors.java (Kafka 4.2.1): columns
code, name, retriable (the exception class extends RetriableException) and a one-line
description written for this project. To take in a new Kafka release, update the TSV and run:

    python3 protocol/tools/error_codes.py          # rewrite the table in error_code.rs
    python3 protocol/tools/error_codes.py --check  # exit 1 if error_code.rs is out of date

The script replaces only the body of the `error_codes! { ... }` invocation.
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
TSV = HERE / "error-codes.tsv"
RUST = HERE.parent / "src" / "error_code.rs"
OPEN = "error_codes! {\n"
CLOSE = "\n}\n"


def table(tsv_text):
    """The invocation's body: one `NAME = code, retriable, "description";` line per code."""
    lines = tsv_text.splitlines()
    if lines[0].split("\t") != ["code", "name", "retriable", "description"]:
        sys.exit(f"{TSV}: unexpected header {lines[0]!r}")
    out = []
    for n, line in enumerate(lines[1:], start=2):
        code, name, retriable, desc = line.split("\t")
        int(code)
        if retriable not in ("true", "false"):
            sys.exit(f"{TSV}:{n}: retriable is {retriable!r}")
        if '"' in desc or "\\" in desc:
            sys.exit(f"{TSV}:{n}: description needs escaping")
        out.append(f'    {name} = {code}, {retriable}, "{desc}";')
    return "\n".join(out)


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit(__doc__)
    source = RUST.read_text()
    start = source.index("\n" + OPEN) + 1 + len(OPEN)
    end = source.index(CLOSE, start)
    new = source[:start] + table(TSV.read_text()) + source[end:]
    if check:
        if new != source:
            sys.exit(f"{RUST} is out of date: run python3 {pathlib.Path(__file__).name}")
        print(f"{RUST.name} matches {TSV.name}")
    elif new != source:
        RUST.write_text(new)
        print(f"rewrote the table in {RUST}")


if __name__ == "__main__":
    main()

"""Reads a Parquet file or an Arrow IPC stream written by kseek with pyarrow (and the Parquet
file again with DuckDB), and prints, as one JSON object, its schema and its rows in a form the
Rust tests compare with the records Kafka's Java producer stored:

    read_table.py parquet FILE   |   read_table.py arrow FILE

{"schema": [[name, type], ...], "rows": [{"partition", "offset", "timestamp_us", "timestampType",
"topic", "key_hex", "value_hex", "headers": [[key, value_hex], ...]}, ...],
"duckdb": {"rows": N, "offsets": [[partition, min, max], ...]}}   (duckdb for Parquet only)

Bytes are hex (null stays null); timestamps are microseconds since the epoch.
"""
import json
import sys

from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
ONE_US = timedelta(microseconds=1)


def hexed(b):
    return None if b is None else b.hex()


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "parquet":
        table = pq.read_table(path)
    else:
        with open(path, "rb") as f:
            table = pa.ipc.open_stream(f).read_all()
    out = {"schema": [[f.name, str(f.type)] for f in table.schema]}
    rows = []
    for r in table.to_pylist():
        ts = r["timestamp"]
        rows.append({
            "partition": r["partition"],
            "offset": r["offset"],
            # A timezone-aware datetime (UTC): microseconds since the epoch, exactly.
            "timestamp_us": None if ts is None else (ts - EPOCH) // ONE_US,
            "timestampType": r["timestampType"],
            "topic": r["topic"],
            "key_hex": hexed(r["key"]),
            "value_hex": hexed(r["value"]),
            "headers": [[h["key"], hexed(h["value"])] for h in (r["headers"] or [])],
        })
    out["rows"] = rows
    if kind == "parquet":
        import duckdb
        con = duckdb.connect()
        n = con.execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchone()[0]
        offsets = con.execute(
            "SELECT partition, min(\"offset\"), max(\"offset\") FROM read_parquet(?) GROUP BY 1 ORDER BY 1",
            [path]).fetchall()
        out["duckdb"] = {"rows": n, "offsets": [list(o) for o in offsets]}
        out["row_groups"] = pq.ParquetFile(path).metadata.num_row_groups
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

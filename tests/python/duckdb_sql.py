"""The expected side of `kseek sql`'s tests (cli/tests/sql.rs): DuckDB runs the same queries over
the records that Kafka's Java consumer read, never over anything kseek produced.

Reads one JSON object on stdin:

    {"tables": {"NAME": [{"partition", "offset", "timestamp", "key_hex", "value_hex"}, ...]},
     "queries": ["SELECT ...", ...]}

(`timestamp` in ms since the epoch; bytes as hex, null as null) and prints one JSON array: per
query, its rows as objects (column name to value; bytes as hex, timestamps as microseconds since
the epoch, decimals and floats as numbers).

Each table has the Kafka record columns of kseek's tables: key and value (BLOB), topic,
partition (INTEGER), offset (BIGINT), timestamp (TIMESTAMPTZ) and timestampType (INTEGER).
"""
import datetime
import decimal
import json
import sys

import duckdb


def unhex(text):
    return None if text is None else bytes.fromhex(text)


def plain(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, datetime.datetime):
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        delta = value - epoch
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def main():
    spec = json.load(sys.stdin)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for name, records in spec["tables"].items():
        con.execute(
            f'CREATE TABLE "{name}" (key BLOB, value BLOB, topic VARCHAR, partition INTEGER, '
            '"offset" BIGINT, "timestamp" TIMESTAMPTZ, "timestampType" INTEGER)'
        )
        rows = [
            (
                unhex(r["key_hex"]),
                unhex(r["value_hex"]),
                r.get("topic", name),
                r["partition"],
                r["offset"],
                datetime.datetime.fromtimestamp(r["timestamp"] / 1000, tz=datetime.timezone.utc),
                r.get("timestampType", 0),
            )
            for r in records
        ]
        if rows:
            con.executemany(f'INSERT INTO "{name}" VALUES (?, ?, ?, ?, ?, ?, ?)', rows)
    results = []
    for query in spec["queries"]:
        cursor = con.execute(query)
        names = [d[0] for d in cursor.description]
        results.append(
            [{n: plain(v) for n, v in zip(names, row)} for row in cursor.fetchall()]
        )
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()

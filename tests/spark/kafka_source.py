"""The independent reference reader: Spark's OWN Kafka source, written to Parquet.

    $(tests/python/env) tests/spark/kafka_source.py --bootstrap HOST:PORT --out FILE.parquet \\
        [--option key=value]... [--executors N] [--timing]

Reads a batch query with ``spark.read.format("kafka")`` (org.apache.spark:spark-sql-kafka-0-10
4.2.0, the jars of tests/spark/jars) on the local-cluster session of tests/spark/session.py,
with ``kafka.bootstrap.servers`` = --bootstrap and every --option passed through unchanged
(split at the first "="), e.g.

    --option subscribe=t1,t2            --option assign='{"t1":[0,1]}'
    --option startingOffsets=earliest   --option endingOffsets='{"t1":{"0":5,"1":-1}}'
    --option startingTimestamp=1700000000000 --option endingTimestamp=1700000100000
    --option startingOffsetsByTimestamp='{"t1":{"0":1700000000000}}'
    --option startingOffsetsByTimestampStrategy=latest
    --option kafka.isolation.level=read_committed  --option includeHeaders=true

and writes one Parquet file (pyarrow, via toArrow()) with the columns
    key binary, value binary, topic string, partition int32, offset int64,
    timestamp timestamp[us, tz=UTC], timestampType int32[, headers list<struct<key, value>>]
sorted by topic, partition, offset. Spark's defaults for a batch read are
startingOffsets=earliest, endingOffsets=latest, kafka.isolation.level=read_uncommitted
(set it to read_committed for a transactional oracle).

On failure (e.g. Spark refusing a startingTimestamp past the last record) it prints Spark's
error to stderr and exits 1. --timing prints the session start and read times to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no tests/spark/__pycache__ in the work tree
sys.path.insert(0, str(Path(__file__).resolve().parent))

from session import spark_session, stop_session  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--executors", type=int, default=2)
    ap.add_argument("--timing", action="store_true")
    args = ap.parse_args(argv)

    options = {"kafka.bootstrap.servers": args.bootstrap}
    for o in args.option:
        k, sep, v = o.partition("=")
        if not sep or not k:
            ap.error("--option needs key=value, got %r" % o)
        options[k] = v
    if not any(k in options for k in ("subscribe", "subscribePattern", "assign")):
        ap.error("one of --option subscribe=, subscribePattern= or assign= is needed")

    import pyarrow.parquet as pq

    t0 = time.monotonic()
    spark = spark_session("kseek-kafka-source", executors=args.executors, kafka_jars=True)
    t1 = time.monotonic()
    try:
        df = spark.read.format("kafka").options(**options).load()
        cols = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
        if "headers" in df.columns:
            cols.append("headers")
        # Sorted in Arrow, not with orderBy: a Spark sort samples its input first, which
        # reads every Kafka partition twice.
        table = df.select(*cols).toArrow()
        table = table.sort_by([("topic", "ascending"), ("partition", "ascending"), ("offset", "ascending")])
        t2 = time.monotonic()
        pq.write_table(table, args.out)
        if args.timing:
            print(
                "kafka_source: session start %.1f s, read %d rows %.1f s"
                % (t1 - t0, table.num_rows, t2 - t1),
                file=sys.stderr,
            )
        return 0
    except Exception as e:  # Spark's AnalysisException / Py4J error: one readable message
        print("kafka_source: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    finally:
        stop_session(spark)


if __name__ == "__main__":
    sys.exit(main())

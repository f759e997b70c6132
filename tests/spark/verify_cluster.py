"""Checks the Spark test harness of tests/spark/session.py; exits non-zero on any failure.

    $(tests/python/env) tests/spark/verify_cluster.py [--keep]

Starts a local-cluster session (2 executor JVMs) and registers a toy Python Data Source
(pyspark.sql.datasource, Spark 4 API) with 8 input partitions whose read() yields
pyarrow.RecordBatches. Checks:
  * rows came from both executors (executor_id() and executor JVM pids), row count right;
  * read() runs the venv's Python: sys.executable and sys.prefix as the driver's, a package
    installed only in the venv (polars) and a module in a python_path directory import;
  * the RecordBatch contract: types must equal the declared schema's Arrow types exactly
    (timestamp -> timestamp[us, tz=UTC], string -> string, binary -> binary), a mismatch
    (naive timestamp, large_string, other column order, non-nullable fields) fails with
    DATA_SOURCE_RETURN_SCHEMA_MISMATCH;
  * filter push-down: pushFilters() is called with the filters of a WHERE on an int and on
    a timestamp column (the literal types are printed), accepted filters are not
    re-evaluated by Spark, returned ones are;
  * options: a case-insensitive dict, keys lower-cased, dotted names kept as is;
  * whether option values (a kafka.sasl.jaas.config password) appear in plan strings.
Prints what it finds; --keep keeps the session's work directory (executor logs).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no tests/spark/__pycache__ in the work tree
sys.path.insert(0, str(Path(__file__).resolve().parent))

from session import executor_id, executor_pid, spark_session, stop_session  # noqa: E402

FAILURES: list = []


def check(cond: bool, what: str) -> None:
    print(("ok:   " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


# --- The toy data source ----------------------------------------------------------------

from pyspark.sql.datasource import (  # noqa: E402
    DataSource,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)

SCHEMA = (
    "part int, seq bigint, ts timestamp, key string, value binary, "
    "executor string, pid int, python string, prefix string, venv_mod string, extra_mod string"
)
BASE_TS_US = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z
ROWS_PER_PART = 1000


def _probe(options, record: dict) -> None:
    """Appends a JSON line to the file of the probe_file option (driver-side calls)."""
    path = options.get("probe_file")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record, default=repr) + "\n")


class ToyPartition(InputPartition):
    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


class ToyReader(DataSourceReader):
    def __init__(self, options, schema):
        self.options = options
        self.schema = schema
        self.pushed = []  # (column, op, value) accepted in pushFilters

    def pushFilters(self, filters):
        _probe(
            self.options,
            {
                "call": "pushFilters",
                "filters": [repr(f) for f in filters],
                "value_types": [
                    [type(getattr(f, "value", None)).__name__, repr(getattr(f, "value", None))]
                    for f in filters
                ],
                "executor": executor_id(),
            },
        )
        for f in filters:
            ok = isinstance(
                f, (EqualTo, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)
            ) and f.attribute in (("seq",), ("ts",))
            if ok:
                self.pushed.append((f.attribute[0], type(f).__name__, f.value))
            else:
                yield f

    def partitions(self):
        return [ToyPartition(i) for i in range(int(self.options.get("partitions", "8")))]

    def read(self, partition):
        import datetime
        import sys as _sys

        import pyarrow as pa
        import pyarrow.compute as pc

        import polars  # installed in the venv only (no pyspark dependency)

        import session  # tests/spark, on the workers' PYTHONPATH

        extra = "-"
        try:
            import kseek_probe_mod  # from the python_path directory

            extra = kseek_probe_mod.MARK
        except ImportError as e:
            extra = "ImportError: %s" % e

        n = ROWS_PER_PART
        i = partition.index
        seq = pa.array(range(i * n, (i + 1) * n), pa.int64())
        ts = pa.array([BASE_TS_US + s * 1000 for s in range(i * n, (i + 1) * n)], pa.int64())
        ts = ts.cast(pa.timestamp("us", tz="UTC"))
        mode = self.options.get("mode", "good")
        if mode != "ignore_pushed":
            mask = None
            for col, op, value in self.pushed:
                arr = seq if col == "seq" else ts
                if isinstance(value, datetime.datetime):
                    if value.tzinfo is None:
                        value = value.replace(tzinfo=datetime.timezone.utc)
                    value = pa.scalar(value, pa.timestamp("us", tz="UTC"))
                fn = {
                    "EqualTo": pc.equal,
                    "GreaterThan": pc.greater,
                    "GreaterThanOrEqual": pc.greater_equal,
                    "LessThan": pc.less,
                    "LessThanOrEqual": pc.less_equal,
                }[op]
                m = fn(arr, value)
                mask = m if mask is None else pc.and_(mask, m)
            if mask is not None:
                seq, ts = seq.filter(mask), ts.filter(mask)
        rows = len(seq)
        cols = {
            "part": pa.array([i] * rows, pa.int32()),
            "seq": seq,
            "ts": ts,
            "key": pa.array(["k%d" % (s % 10) for s in seq.to_pylist()], pa.string()),
            "value": pa.array([b"v%d" % s for s in seq.to_pylist()], pa.binary()),
            "executor": pa.array([session.executor_id()] * rows, pa.string()),
            "pid": pa.array([session.executor_pid() or -1] * rows, pa.int32()),
            "python": pa.array([_sys.executable] * rows, pa.string()),
            "prefix": pa.array([_sys.prefix] * rows, pa.string()),
            "venv_mod": pa.array([polars.__file__] * rows, pa.string()),
            "extra_mod": pa.array([extra] * rows, pa.string()),
        }
        if mode == "naive_ts":
            cols["ts"] = ts.cast(pa.timestamp("us"))
        elif mode == "large_string":
            cols["key"] = cols["key"].cast(pa.large_string())
        elif mode == "reordered":
            cols = dict(reversed(list(cols.items())))
        elif mode == "not_null":
            batch = pa.RecordBatch.from_pydict(cols)
            fields = [f.with_nullable(False) for f in batch.schema]
            yield pa.RecordBatch.from_arrays(batch.columns, schema=pa.schema(fields))
            return
        batch = pa.RecordBatch.from_pydict(cols)
        # Two batches per partition: read() may yield any number.
        half = batch.num_rows // 2
        yield batch.slice(0, half)
        yield batch.slice(half)


class ToySource(DataSource):
    @classmethod
    def name(cls):
        return "kseek_toy"

    def schema(self):
        _probe(
            self.options,
            {
                "call": "schema",
                "options_type": type(self.options).__name__,
                "keys": sorted(self.options.keys()),
                "get_mixed_case": self.options.get("KAFKA.Bootstrap.Servers"),
                "contains_mixed_case": "Kafka.Bootstrap.SERVERS" in self.options,
            },
        )
        return SCHEMA

    def reader(self, schema):
        _probe(self.options, {"call": "reader", "schema": schema.simpleString()})
        return ToyReader(self.options, schema)


# --- The checks -------------------------------------------------------------------------


def read_probe(path: str) -> list:
    with open(path) as f:
        out = [json.loads(line) for line in f]
    open(path, "w").close()
    return out


def main() -> int:
    keep = "--keep" in sys.argv
    extra_dir = tempfile.mkdtemp(prefix="kseek-probe-mod-")
    Path(extra_dir, "kseek_probe_mod.py").write_text('MARK = "probe-mod-ok"\n')
    probe = os.path.join(extra_dir, "probe.jsonl")
    open(probe, "w").close()

    t0 = time.monotonic()
    spark = spark_session("kseek-verify-cluster", python_path=[extra_dir])
    t_start = time.monotonic() - t0
    print("session start (2 executors registered): %.1f s" % t_start, flush=True)
    try:
        run_checks(spark, probe, extra_dir)
    except Exception as e:  # a check that raised is a failure too
        import traceback

        traceback.print_exc()
        FAILURES.append("exception: %r" % e)
    finally:
        t1 = time.monotonic()
        stop_session(spark, keep_work_dir=keep or bool(FAILURES))
        print("session stop: %.1f s" % (time.monotonic() - t1))
    if FAILURES:
        print("\n%d FAILED:\n  %s" % (len(FAILURES), "\n  ".join(FAILURES)))
        return 1
    print("\nall checks passed")
    return 0


def run_checks(spark, probe: str, extra_dir: str) -> None:
    import pyspark

    print("pyspark", pyspark.__version__, "master", spark.sparkContext.master)
    spark.dataSource.register(ToySource)
    secret = "pw-S3cr3t-xyzzy"
    jaas = (
        'org.apache.kafka.common.security.plain.PlainLoginModule required '
        'username="alice" password="%s";' % secret
    )

    def reader(**opts):
        r = (
            spark.read.format("kseek_toy")
            .option("probe_file", probe)
            .option("kafka.bootstrap.servers", "127.0.0.1:9092")
            .option("Kafka.SASL.Jaas.Config", jaas)
        )
        for k, v in opts.items():
            r = r.option(k, v)
        return r.load()

    # 1. Rows from both executors, venv Python, importable modules.
    t = time.monotonic()
    rows = reader().select("part", "executor", "pid", "python", "prefix", "venv_mod", "extra_mod")
    got = rows.groupBy("part", "executor", "pid", "python", "prefix", "venv_mod", "extra_mod").count().collect()
    print("toy job (8 partitions x %d rows, 2 batches each), first: %.1f s" % (ROWS_PER_PART, time.monotonic() - t))
    t = time.monotonic()
    again = rows.groupBy("executor").count().collect()
    print("toy job again (Python workers warm): %.1f s, rows by executor %s" % (
        time.monotonic() - t, {r["executor"]: r["count"] for r in again}))
    total = sum(r["count"] for r in got)
    check(total == 8 * ROWS_PER_PART, "row count %d == %d" % (total, 8 * ROWS_PER_PART))
    parts = sorted(r["part"] for r in got)
    check(parts == list(range(8)), "each partition read exactly once by one executor: %s" % parts)
    by_exec: dict = {}
    for r in got:
        by_exec.setdefault(r["executor"], set()).add(r["part"])
    print("partitions by executor:", {k: sorted(v) for k, v in by_exec.items()})
    execs = set(by_exec)
    pids = {r["pid"] for r in got}
    check(len(execs) >= 2, "rows from >= 2 distinct executors: %s" % sorted(execs))
    check("driver" not in execs, "every read() ran inside an executor")
    check(len(pids) >= 2 and -1 not in pids, "rows from >= 2 executor JVM pids: %s" % sorted(pids))
    check(os.getpid() not in pids, "executor pids differ from the driver Python's")
    check({r["python"] for r in got} == {sys.executable}, "workers run sys.executable %s" % sys.executable)
    check({r["prefix"] for r in got} == {sys.prefix}, "workers' sys.prefix is the venv %s" % sys.prefix)
    venv_mod = {r["venv_mod"] for r in got}
    check(all(m.startswith(sys.prefix) for m in venv_mod), "venv-only package imports in read(): %s" % venv_mod)
    check({r["extra_mod"] for r in got} == {"probe-mod-ok"}, "python_path module imports in read(): %s" % {r["extra_mod"] for r in got})
    check(executor_id() == "driver" and executor_pid() is None, "executor_id() on the driver is 'driver'")

    # 2. schema() and options.
    calls = read_probe(probe)
    sch = [c for c in calls if c["call"] == "schema"]
    print("schema() probes:", json.dumps(sch[:1]))
    check(bool(sch), "DataSource.schema() called (no user schema)")
    if sch:
        s0 = sch[0]
        check(s0["options_type"] == "CaseInsensitiveDict", "options type %s" % s0["options_type"])
        check("kafka.sasl.jaas.config" in s0["keys"] and "kafka.bootstrap.servers" in s0["keys"],
              "option keys arrive lower-cased, dots kept: %s" % s0["keys"])
        check(s0["get_mixed_case"] == "127.0.0.1:9092" and s0["contains_mixed_case"],
              "options lookups are case-insensitive")
    # With a user schema, is schema() still called?
    spark.read.format("kseek_toy").schema(SCHEMA).option("probe_file", probe).load().limit(1).collect()
    calls = read_probe(probe)
    print("calls with a user-given schema:", sorted({c["call"] for c in calls}))

    # 3. RecordBatch contract.
    for mode in ("naive_ts", "large_string", "reordered", "not_null"):
        try:
            reader(mode=mode, partitions="1").collect()
            print("RecordBatch mode %s: accepted" % mode)
            res = "accepted"
        except Exception as e:
            msg = str(e)
            res = "DATA_SOURCE_RETURN_SCHEMA_MISMATCH" if "DATA_SOURCE_RETURN_SCHEMA_MISMATCH" in msg else msg[:300]
            line = next((l for l in msg.splitlines() if "SCHEMA_MISMATCH" in l), msg.splitlines()[0])
            print("RecordBatch mode %s: %s" % (mode, line.strip()[:400]))
        check(res == "DATA_SOURCE_RETURN_SCHEMA_MISMATCH", "RecordBatch %s rejected" % mode)
    read_probe(probe)

    # 4. Filter push-down.
    df = reader().select("seq", "ts")
    got = df.where("seq >= 100 and seq < 110").collect()
    calls = [c for c in read_probe(probe) if c["call"] == "pushFilters"]
    print("pushFilters (int):", json.dumps(calls))
    check(bool(calls), "pushFilters called for WHERE on an int column")
    check(sorted(r["seq"] for r in got) == list(range(100, 110)), "int filter result right (%d rows)" % len(got))
    check(all(c["executor"] == "driver" for c in calls), "pushFilters runs on the driver side")

    got = df.where("ts >= TIMESTAMP'2024-01-01 00:00:01' and ts < TIMESTAMP'2024-01-01 00:00:01.005'").collect()
    calls = [c for c in read_probe(probe) if c["call"] == "pushFilters"]
    print("pushFilters (timestamp literal):", json.dumps(calls))
    check(bool(calls), "pushFilters called for WHERE on a timestamp column")
    check(sorted(r["seq"] for r in got) == list(range(1000, 1005)), "timestamp filter result right (%d rows)" % len(got))

    import datetime

    lit = datetime.datetime(2024, 1, 1, 0, 0, 2, tzinfo=datetime.timezone.utc)
    from pyspark.sql import functions as F

    got = df.where(F.col("ts") == F.lit(lit)).collect()
    calls = [c for c in read_probe(probe) if c["call"] == "pushFilters"]
    print("pushFilters (python aware datetime literal, ==):", json.dumps(calls))
    check([r["seq"] for r in got] == [2000], "timestamp equality via F.lit(aware datetime)")

    got = df.where("ts > '2024-01-01 00:00:07.995'").collect()  # string compared to timestamp
    calls = [c for c in read_probe(probe) if c["call"] == "pushFilters"]
    print("pushFilters (string literal vs timestamp):", json.dumps(calls))

    # OR, IN, LIKE, IS NULL, <>: what arrives, and what is left to Spark.
    df2 = reader().select("seq", "key")
    got = df2.where("(seq = 1 or seq = 2) and key in ('k1','k2') and key like 'k%' and key is not null and seq <> 3").collect()
    calls = [c for c in read_probe(probe) if c["call"] == "pushFilters"]
    print("pushFilters (or/in/like/not null/<>):", json.dumps(calls))
    check(sorted(r["seq"] for r in got) == [1, 2], "filters returned by pushFilters are evaluated by Spark")

    # Accepted filters are trusted: a reader that accepts but ignores them returns all rows.
    got = reader(mode="ignore_pushed").select("seq").where("seq < 10").count()
    read_probe(probe)
    print("accepted-but-ignored filter seq < 10 -> %d rows (Spark does not re-check pushed filters)" % got)
    check(got == 8 * ROWS_PER_PART, "Spark does not re-evaluate filters accepted by pushFilters")

    # Without the setting, pushFilters is not called (and a reader that implements it fails?).
    spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    print("spark.sql.python.filterPushdown.enabled default:", spark.conf.get("spark.sql.python.filterPushdown.enabled"))
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        n = reader().select("seq").where("seq < 10").count()
        calls = [c for c in read_probe(probe) if c["call"] == "pushFilters"]
        print("filterPushdown.enabled=false: %d rows, pushFilters calls %d" % (n, len(calls)))
    except Exception as e:
        msg = str(e)
        line = next((l for l in msg.splitlines() if "PUSHDOWN_DISABLED" in l), msg.splitlines()[0])
        print("filterPushdown.enabled=false with pushFilters implemented: %s" % line.strip()[:400])
        check("DATA_SOURCE_PUSHDOWN_DISABLED" in msg, "a reader with pushFilters fails when push-down is off")
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
        read_probe(probe)

    # 5. Options in plan strings.
    df = reader().where("seq < 5")
    plans = {
        "queryExecution": df._jdf.queryExecution().toString(),
        "explain formatted": df._sc._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "formatted"),
    }
    for name, text in plans.items():
        print("---- %s ----\n%s" % (name, text))
        print("plan %s: secret shown=%s, bootstrap shown=%s, 'jaas' shown=%s" % (
            name, secret in text, "127.0.0.1:9092" in text, "jaas" in text.lower()))
    check(all(secret not in t for t in plans.values()), "the jaas password is not in plan strings")


if __name__ == "__main__":
    sys.exit(main())

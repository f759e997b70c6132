"""kseek's Spark data source on a Spark cluster of two executor processes, against Spark's own
Kafka source (spark-sql-kafka-0-10) and Kafka's Java consumer, on a real broker."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

import kseek  # noqa: E402
import kseek.spark  # noqa: E402
from conftest import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "spark"))
import session as spark_session  # noqa: E402

import audited  # noqa: E402

HERE = Path(__file__).resolve().parent

BASE = 1_767_261_600_000  # 2026-01-01T10:00:00Z
COLUMNS = ["topic", "partition", "offset", "key", "value", "timestamp", "timestampType"]


@pytest.fixture(scope="module")
def spark():
    # This folder on the executors' PYTHONPATH: audited.py's source is used there.
    s = spark_session.spark_session("kseek-tests", executors=2, python_path=[str(HERE)])
    kseek.spark.register(s)
    s.dataSource.register(audited.AuditedSource)
    yield s
    s.stop()


def rows(df):
    """The rows as sorted tuples of COLUMNS (timestamps as datetimes, bytes as bytes)."""
    return sorted(tuple(r) for r in df.select(*COLUMNS).collect())


def java_rows(kafka, topic, records):
    """ktool's records as rows of COLUMNS."""
    import datetime as dt

    def ts(ms):
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).replace(tzinfo=None)

    kind = {"CreateTime": 0, "LogAppendTime": 1}
    return sorted(
        (topic, r["partition"], r["offset"],
         None if r["key"] is None else r["key"].encode(),
         None if r["value"] is None else r["value"].encode(),
         ts(r["timestamp"]), kind[r["timestamp_type"]])
        for r in records
    )


def both(spark, bootstrap, **options):
    """The same read through kseek's data source and Spark's Kafka source."""
    frames = []
    for fmt in ("kseek", "kafka"):
        reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
        for k, v in options.items():
            reader = reader.option(k, str(v))
        frames.append(reader.load())
    return frames


@pytest.fixture(scope="module")
def out_of_order(kafka):
    """2 partitions, 400 records 1 s apart in CreateTime, every 5th 30 s late."""
    topic = kafka.topic(2)
    lines = [
        {"partition": i % 2, "key": f"k{i}", "value": f"v{i}",
         "timestamp": BASE + i * 1000 - (30_000 if i % 5 == 2 else 0)}
        for i in range(400)
    ]
    kafka.produce(topic, lines)
    return topic


def test_a_window_three_ways(spark, kafka, bootstrap, out_of_order):
    start, end = BASE + 60_000, BASE + 300_000
    ours, theirs = both(spark, bootstrap, subscribe=out_of_order,
                        startingTimestamp=start, endingTimestamp=end)
    assert ours.schema == theirs.schema
    got = rows(ours)
    assert got == rows(theirs)
    java = kafka.window(out_of_order, start, end)
    assert [(r[1], r[2]) for r in got] == [(p, o) for p, o, *_ in java]
    assert [(r[3].decode(), r[4].decode()) for r in got] == [(k, v) for _, _, k, v, _ in java]


def test_offsets_json_and_assign(spark, bootstrap, out_of_order):
    ours, theirs = both(
        spark, bootstrap, assign=f'{{"{out_of_order}": [0, 1]}}',
        startingOffsets=f'{{"{out_of_order}": {{"0": 10, "1": -2}}}}',
        endingOffsets=f'{{"{out_of_order}": {{"0": 50, "1": -1}}}}',
    )
    got = rows(ours)
    assert got == rows(theirs)
    assert len(got) == 40 + 200


def test_subscribe_pattern(spark, kafka, bootstrap):
    """subscribePattern reads the topics the pattern is found in (anywhere in the name), as
    Spark's source does; anchored, only whole names."""
    prefix = kafka.topic(1)
    first, second = f"{prefix}-a", f"{prefix}-b"
    for i, topic in enumerate((first, second, f"x{prefix}-c")):
        kafka.tool("create-topic", "--topic", topic, "--partitions", str(i + 1))
        kafka.produce(topic, [{"value": f"{topic}-{n}"} for n in range(5 + i)])
    ours, theirs = both(spark, bootstrap, subscribePattern=f"{prefix}-.*")
    got = rows(ours)
    assert got == rows(theirs)
    assert {r[0] for r in got} == {first, second, f"x{prefix}-c"} and len(got) == 5 + 6 + 7
    ours, theirs = both(spark, bootstrap, subscribePattern=f"^{prefix}-.*$")
    got = rows(ours)
    assert got == rows(theirs)
    assert {r[0] for r in got} == {first, second} and len(got) == 5 + 6
    none = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribePattern", f"{prefix}-z.*").load())
    assert none.count() == 0


def test_start_past_the_last_record_is_empty(spark, bootstrap, out_of_order):
    later = BASE + 10_000_000
    ours, theirs = both(spark, bootstrap, subscribe=out_of_order, startingTimestamp=later)
    assert ours.count() == 0
    # Spark's own source fails by default on this edge...
    with pytest.raises(Exception, match="(?i)offset|timestamp"):
        theirs.count()
    # ...and needs its non-default strategy to agree.
    _, lenient = both(spark, bootstrap, subscribe=out_of_order, startingTimestamp=later,
                      startingOffsetsByTimestampStrategy="latest")
    assert lenient.count() == 0


def test_read_committed_with_aborted_transactions(spark, kafka, bootstrap):
    topic = kafka.topic(1)
    lines = [{"txn": "begin"}]
    lines += [{"key": f"a{i}", "value": "aborted"} for i in range(5)]
    lines += [{"txn": "abort"}, {"txn": "begin"}]
    lines += [{"key": f"c{i}", "value": "committed"} for i in range(5)]
    lines += [{"txn": "commit"}]
    kafka.produce(topic, lines, "--transactional-id", f"tx-{topic}")
    ours, theirs = both(spark, bootstrap, subscribe=topic,
                        **{"kafka.isolation.level": "read_committed"})
    got = rows(ours)
    assert got == rows(theirs)
    java = java_rows(kafka, topic, kafka.consume(topic, "--isolation", "read_committed"))
    assert got == java
    assert {r[4] for r in got} == {b"committed"}


def test_compacted_topic(spark, kafka, bootstrap):
    topic = kafka.topic(1, ["cleanup.policy=compact", "segment.ms=100",
                            "min.cleanable.dirty.ratio=0.01", "delete.retention.ms=100"])
    keys = list(range(10)) + list(range(0, 10, 2))
    kafka.produce(topic, [{"partition": 0, "key": f"k{k}", "value": f"v{i}"} for i, k in enumerate(keys)])
    kafka.produce(topic, [{"partition": 0, "key": "last", "value": "x"}])
    deadline = time.monotonic() + 120
    while len(java := kafka.consume(topic)) != 11:
        assert time.monotonic() < deadline, f"the log cleaner never ran: {java}"
        # Kafka's own consumer polled until the cleaner (another process) has run.
        time.sleep(0.5)
    ours, theirs = both(spark, bootstrap, subscribe=topic)
    got = rows(ours)
    assert got == java_rows(kafka, topic, java)
    assert got == rows(theirs)


def test_filters_are_pushed_into_offsets(spark, bootstrap, out_of_order):
    where = ("partition = 1 AND offset >= 20 AND "
             "timestamp >= TIMESTAMP '2026-01-01 10:02:00' AND timestamp < TIMESTAMP '2026-01-01 10:05:00'")
    kseek.spark.register(spark, pushdown=True)
    try:
        # A DataFrame loaded for the filtered query alone (Spark keeps what push-down planned
        # on the loaded relation: see test_push_down_is_off_by_default).
        ours, theirs = both(spark, bootstrap, subscribe=out_of_order)
        narrowed = ours.where(where)
        assert rows(narrowed) == rows(theirs.where(where))
        # Only partition 1 is read, from the first offset at or after 10:02: one Spark partition.
        ours, _ = both(spark, bootstrap, subscribe=out_of_order)
        assert ours.where(where).rdd.getNumPartitions() == 1
        ours, _ = both(spark, bootstrap, subscribe=out_of_order)
        assert ours.rdd.getNumPartitions() == 2
    finally:
        kseek.spark.register(spark)


def test_push_down_is_off_by_default(spark, bootstrap, out_of_order):
    kseek.spark.register(spark)
    df = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", out_of_order).load())
    assert df.where("partition = 1").count() == 200
    # With push-down, Spark (4.2.0, 4.3.0) would now read partition 1 only for the whole
    # DataFrame.
    assert df.count() == 400
    assert df.where("partition = 1").rdd.getNumPartitions() == 2


def test_splits_of_one_partition_are_read_by_different_executors(spark, bootstrap, out_of_order):
    df = (spark.read.format(audited.NAME)
          .option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", out_of_order)
          .option("minPartitions", "16")
          .load())
    assert df.rdd.getNumPartitions() >= 16
    seen = df.groupBy("partition").agg(
        pyspark.sql.functions.countDistinct("executor").alias("executors"),
        pyspark.sql.functions.count("*").alias("n"),
    ).orderBy("partition").collect()
    assert [(r["partition"], r["n"]) for r in seen] == [(0, 200), (1, 200)]
    assert all(r["executors"] == 2 for r in seen), seen


def test_push_down_off_in_spark_takes_the_plain_source(spark, bootstrap, out_of_order):
    # Spark fails a reader that takes filters while push-down is off: register() follows
    # the setting, even when asked for push-down.
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        kseek.spark.register(spark, pushdown=True)
        df = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", out_of_order).load())
        assert df.where("partition = 1").count() == 200
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
        kseek.spark.register(spark)


def test_headers(spark, kafka, bootstrap):
    topic = kafka.topic(1)
    kafka.produce(topic, [{"key": "k", "value": "v", "headers": [["a", "1"], ["b", None]]},
                          {"key": "k2", "value": None}])
    ours, theirs = both(spark, bootstrap, subscribe=topic, includeHeaders="true")
    assert ours.schema == theirs.schema
    got = sorted(tuple(r) for r in ours.select("offset", "headers", "value").collect())
    assert got == sorted(tuple(r) for r in theirs.select("offset", "headers", "value").collect())
    assert [None if r[1] is None else len(r[1]) for r in got] == [2, None]


def test_secrets_stay_out_of_plan_strings(spark, bootstrap, out_of_order):
    secret = "s3cr3t-passw0rd"
    df = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", out_of_order)
          .option("kafka.ssl.truststore.password", secret).load())
    assert df.count() == 400
    planned = df._jdf.queryExecution().toString()
    assert "BatchScan" in planned
    assert secret not in planned
    reader = kseek.spark.KseekReader(kseek.spark._Options.parse(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": out_of_order,
         "kafka.ssl.truststore.password": secret}))
    assert secret not in repr(reader)
    parts = reader.partitions()
    assert all(secret.encode() not in b for p in parts for b in p.splits)
    assert all(secret not in repr(p) for p in parts)


def test_bad_options_fail_with_one_line(spark, bootstrap):
    df = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", "t").option("startingTimestamp", "soon"))
    with pytest.raises(Exception, match="option startingTimestamp must be epoch milliseconds"):
        df.load().count()
    with pytest.raises(Exception, match="unknown option 'startingoffset'"):
        spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap) \
            .option("subscribe", "t").option("startingOffset", "earliest").load().count()



def _spark_value(x):
    """A collected Spark value in the shape confluent.py's ``plain`` gives: structs as dicts,
    maps as sorted (key, value) lists, binary as bytes."""
    from pyspark.sql import Row

    if isinstance(x, Row):
        return {k: _spark_value(v) for k, v in x.asDict(recursive=False).items()}
    if isinstance(x, dict):
        return sorted((k, _spark_value(v)) for k, v in x.items())
    if isinstance(x, list):
        return [_spark_value(v) for v in x]
    if isinstance(x, bytearray):
        return bytes(x)
    return x


def _from_avro_shape(value: dict) -> dict:
    """A value as ``plain`` makes it, in the types of Spark's from_avro: timestamps naive in UTC
    (the session's time zone), time-millis as ms and time-micros as µs of the day."""
    import datetime as dt

    def of_day(t: dt.time, per_second: int) -> int:
        seconds = t.hour * 3600 + t.minute * 60 + t.second
        return seconds * per_second + t.microsecond * per_second // 1_000_000

    out = {}
    for k, v in value.items():
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        elif isinstance(v, dt.time):
            v = of_day(v, 1000 if k == "tmil" else 1_000_000)
        out[k] = v
    return out


def test_avro_values_through_the_schema_registry(spark, bootstrap, registry_url, avro_topic):
    """valueFormat avro: one column per field in from_avro's types, on two executors, equal to
    what Confluent's AvroDeserializer reads."""
    from pyspark.sql import types as T

    from conftest import confluent_values, value_mismatches

    df = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", avro_topic).option("minPartitions", 4)
          .option("valueFormat", "avro").option("schema.registry.url", registry_url).load())
    types = {f.name: f.dataType for f in df.schema.fields}
    assert types["dec"] == T.DecimalType(9, 2)
    assert types["tsm"] == T.TimestampType() and types["ltsm"] == T.TimestampNTZType()
    assert types["color"] == T.StringType() and types["tmil"] == T.IntegerType()
    assert [f.name for f in types["choice"].fields] == ["member0", "member1"]
    fields, expected = confluent_values(bootstrap, registry_url, avro_topic)
    got = {
        (r["partition"], r["offset"]):
            None if r["value"] is None else {f: _spark_value(r[f]) for f in fields}
        for r in df.collect()
    }
    expected = {k: None if v is None else _from_avro_shape(v) for k, v in expected.items()}
    assert len(got) == 41
    assert value_mismatches(expected, got) == []
    # Push-down and counts work on the typed columns too.
    assert df.where("l >= 0").count() == 40


def test_avro_options_fail_with_one_line(spark, bootstrap, avro_topic):
    base = (spark.read.format("kseek").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", avro_topic).option("valueFormat", "avro"))
    with pytest.raises(Exception, match="needs the option schema.registry.url"):
        base.load().count()
    with pytest.raises(Exception, match="option valueFormat must be bytes or avro"):
        base.option("valueFormat", "json").load().count()

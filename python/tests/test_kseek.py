"""The kseek Python package against a real Kafka broker, checked with Kafka's Java client."""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import kseek
from conftest import rows_of

BASE = 1_767_261_600_000  # 2026-01-01T10:00:00Z


@pytest.fixture(scope="module")
def window_topic(kafka):
    """3 partitions, 600 records 1 s apart in CreateTime, every 7th written 20 s late (out of
    order), keys and values and a header each."""
    topic = kafka.topic(3)
    lines = []
    for i in range(600):
        ts = BASE + i * 1000 - (20_000 if i % 7 == 3 else 0)
        lines.append({"partition": i % 3, "key": f"k{i}", "value": f"v{i}", "timestamp": ts,
                      "headers": [["n", str(i)]]})
    kafka.produce(topic, lines)
    return topic


def test_window_equals_java_consumer(kafka, bootstrap, window_topic):
    start, end = BASE + 100_000, BASE + 250_000
    plan = kseek.plan(window_topic, start=start, end=str(end), bootstrap=bootstrap)
    expected = kafka.window(window_topic, start, end)
    assert plan.records == len(expected)
    got = kseek.read(plan).read_all()
    assert rows_of(got) == expected
    # The same window by RFC 3339 times, resolved and read in one call.
    again = kseek.read(window_topic, start="2026-01-01T10:01:40Z", end="2026-01-01T10:04:10Z",
                       bootstrap=bootstrap).read_all()
    assert rows_of(again) == expected
    assert got.schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    headers = got.column("headers").to_pylist()
    values = got.column("value").to_pylist()
    assert all(h == [{"key": "n", "value": v[1:]}] for h, v in zip(headers, values))


def test_exact_time_drops_out_of_order_records(kafka, bootstrap, window_topic):
    start, end = BASE + 100_000, BASE + 250_000
    expected = [r for r in kafka.window(window_topic, start, end) if start <= r[4] < end]
    got = kseek.read(window_topic, start=start, end=end, exact_time=True, bootstrap=bootstrap)
    assert rows_of(got.read_all()) == expected


def _read_split(data: bytes):
    split = pickle.loads(data)
    table = kseek.read(split).read_all()
    return rows_of(table)


def test_splits_read_in_other_processes_equal_the_plan(kafka, bootstrap, window_topic):
    plan = kseek.plan(window_topic, start=BASE + 30_000, end=BASE + 400_000, bootstrap=bootstrap)
    splits = plan.splits(max_records=17)
    assert len(splits) >= 3 * (plan.records // 3 // 17)
    assert sum(s.records for s in splits) == plan.records
    assert kseek.Split.from_json(splits[0].to_json()) == splits[0]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        parts = pool.map(_read_split, [pickle.dumps(s) for s in splits])
    union = sorted(r for part in parts for r in part)
    assert union == rows_of(kseek.read(plan).read_all())
    assert len(union) == plan.records


def test_start_past_the_last_record_is_an_empty_range(kafka, bootstrap, window_topic):
    later = BASE + 10_000_000
    # The Java consumer's offsetsForTimes has no offset for it (-1).
    assert set(kafka.offsets_for(window_topic, str(later)).values()) == {-1}
    plan = kseek.plan(window_topic, start=later, bootstrap=bootstrap)
    assert plan.records == 0
    assert kseek.read(plan).read_all().num_rows == 0
    assert plan.splits() == []
    with pytest.raises(kseek.KafkaError, match="timestamp"):
        kseek.plan(window_topic, start=later, strict=True, bootstrap=bootstrap)


def test_read_committed_skips_aborted_transactions(kafka, bootstrap):
    topic = kafka.topic(1)
    lines = [{"txn": "begin"}]
    lines += [{"key": f"a{i}", "value": "aborted", "timestamp": BASE + i} for i in range(5)]
    lines += [{"txn": "abort"}, {"txn": "begin"}]
    lines += [{"key": f"c{i}", "value": "committed", "timestamp": BASE + 10 + i} for i in range(5)]
    lines += [{"txn": "commit"}]
    kafka.produce(topic, lines, "--transactional-id", f"tx-{topic}")
    committed = kseek.read(topic, isolation="read_committed", bootstrap=bootstrap).read_all()
    java = kafka.consume(topic, "--isolation", "read_committed")
    assert [k.decode() for k in committed.column("key").to_pylist()] == [r["key"] for r in java]
    assert set(committed.column("value").to_pylist()) == {b"committed"}
    uncommitted = kseek.read(topic, bootstrap=bootstrap).read_all()
    assert uncommitted.num_rows == 10


def test_errors_are_one_line_exceptions(bootstrap, window_topic):
    with pytest.raises(kseek.ConfigError) as e:
        kseek.plan(window_topic, start="2026-01-01T10:00:00", bootstrap=bootstrap)
    assert str(e.value) == (
        'invalid start "2026-01-01T10:00:00": "2026-01-01T10:00:00" has no time zone. '
        "Add Z or +hh:mm (e.g. 2026-01-01T10:00:00Z for UTC)"
    )
    with pytest.raises(kseek.ConfigError, match="Swap them"):
        kseek.plan(window_topic, start=BASE + 5, end=BASE, bootstrap=bootstrap)
    with pytest.raises(kseek.ConfigError, match="unknown property"):
        kseek.plan(window_topic, bootstrap=bootstrap, properties={"fetch.wait.max.ms": 5})
    with pytest.raises(kseek.KafkaError) as e:
        kseek.read("no-such-topic-here", bootstrap=bootstrap)
    assert 'topic "no-such-topic-here" does not exist' in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(kseek.ConfigError, match="not a kseek split"):
        kseek.Split.from_bytes(b"\x01\xff\xff")
    with pytest.raises(kseek.ConfigError, match="cannot read a int"):
        kseek.Reader([1])


def test_pyarrow_polars_and_duckdb_take_the_reader(bootstrap, window_topic):
    duckdb = pytest.importorskip("duckdb")
    polars = pytest.importorskip("polars")
    reader = kseek.read(window_topic, bootstrap=bootstrap)  # DuckDB finds it by its name
    counts = duckdb.sql("SELECT partition, count(*) FROM reader GROUP BY 1 ORDER BY 1").fetchall()
    assert counts == [(0, 200), (1, 200), (2, 200)]
    frame = polars.from_arrow(kseek.read(window_topic, start="offset:190", bootstrap=bootstrap))
    assert frame.height == 30


INTERRUPTED = textwrap.dedent(
    """
    import sys, kseek
    reader = kseek.read(sys.argv[1], start="latest", follow=True, bootstrap=sys.argv[2])
    print("reading", flush=True)
    try:
        for batch in reader:
            print("batch", batch.num_rows, flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(0)
    sys.exit(1)
    """
)


def test_ctrl_c_interrupts_a_read_waiting_for_records(kafka, bootstrap):
    topic = kafka.topic(1)
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED, topic, bootstrap],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "reading"
        # A record the follower hands out proves it is in the read loop; it then waits in
        # Rust (no GIL) for the next one.
        kafka.produce(topic, [{"value": "x"}])
        assert child.stdout.readline().strip() == "batch 1"
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=20) == 0
        assert child.stdout.read().strip() == "interrupted"
    finally:
        child.kill()


MEMORY = textwrap.dedent(
    """
    import os, sys, kseek
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    reader = kseek.read(sys.argv[1], bootstrap=sys.argv[2], batch_rows=256, batch_bytes=512 << 10)
    base = rss()
    rows, size, peak = 0, 0, base
    for batch in reader:
        # A consumer slower than Kafka (Python objects per value), so the read runs ahead
        # as far as its bounds let it.
        assert all(len(v) == 4000 for v in batch.column("value").to_pylist())
        rows += batch.num_rows
        size = max(size, batch.nbytes)
        peak = max(peak, rss())
    print(rows, peak - base, size)
    """
)


def test_memory_is_bounded_by_the_batch_size(kafka, bootstrap):
    topic = kafka.topic(2)
    value = "x" * 4000
    count = 25_000  # 100 MB of values
    kafka.produce(topic, ({"partition": i % 2, "value": value} for i in range(count)),
                  "--compression", "none")
    out = subprocess.run([sys.executable, "-c", MEMORY, topic, bootstrap],
                         capture_output=True, text=True, check=True).stdout.split()
    rows, growth, largest = int(out[0]), int(out[1]), int(out[2])
    assert rows == count
    assert largest <= 2 * (512 << 10)
    # 100 MB went through; what stayed is a few batches and the fetches ahead (about 2 MiB
    # fetched, 2 MiB waiting decoded), far from the data.
    assert growth < 40 << 20, f"peak RSS grew {growth >> 20} MiB reading 100 MB"


def test_narrow_keeps_exactly_the_rows_in_bounds(kafka, bootstrap, window_topic):
    other = kafka.topic(1)
    kafka.produce(other, [{"value": f"o{i}", "timestamp": BASE + i * 1000} for i in range(50)])
    whole = kseek.plan([window_topic, other], bootstrap=bootstrap)
    lo, hi = BASE + 100_000, BASE + 200_000
    narrowed = whole.narrow(partitions=[0, 2], min_offset=10, min_time=lo, max_time=hi)
    # Partition 2 exists in one topic only; CreateTime without max_lateness keeps the ends.
    assert {(p["topic"], p["partition"]) for p in narrowed.partitions} == {
        (window_topic, 0), (window_topic, 2), (other, 0)}
    assert [p["end"] for p in narrowed.partitions] == [
        p["end"] for p in whole.partitions if p["partition"] in (0, 2)]
    table = kseek.read(narrowed).read_all()
    everything = kseek.read(whole).read_all()

    def inside(t):
        d = t.to_pydict()
        ms = [us // 1000 for us in t.column("timestamp").cast(pa.int64()).to_pylist()]
        return sorted(
            (tp, p, o) for tp, p, o, m in zip(d["topic"], d["partition"], d["offset"], ms)
            if p in (0, 2) and o >= 10 and lo <= m < hi)

    # Narrowing reads less but loses nothing of what the bounds keep.
    assert inside(table) == inside(everything)
    assert table.num_rows < everything.num_rows
    late = whole.narrow(max_time=hi, max_lateness_ms=60_000)
    assert all(p["end"] <= w["end"] for p, w in zip(late.partitions, whole.partitions))
    assert late.records < whole.records

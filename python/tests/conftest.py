"""Fixtures of the Python package's tests: a real Kafka broker (tests/run exports its address
as KSEEK_BOOTSTRAP) and Kafka's own Java client (tests/kafka/ktool) as the independent producer
and reader."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Dict, Iterable, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bootstrap() -> str:
    address = os.environ.get("KSEEK_BOOTSTRAP", "").strip()
    if not address:
        pytest.fail("KSEEK_BOOTSTRAP is not set: run the tests through tests/run (it starts Kafka)")
    return address


class Kafka:
    """Kafka's Java client through tests/kafka/ktool."""

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap

    def tool(self, *args: str, stdin: Optional[str] = None) -> List[dict]:
        done = subprocess.run(
            [str(ROOT / "tests/kafka/ktool"), args[0], "--bootstrap", self.bootstrap, *args[1:]],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"ktool {' '.join(args)} failed: {done.stderr[-2000:]}")
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def topic(self, partitions: int = 3, config: Iterable[str] = ()) -> str:
        name = f"py-{uuid.uuid4().hex[:12]}"
        args = ["create-topic", "--topic", name, "--partitions", str(partitions)]
        for c in config:
            args += ["--config", c]
        self.tool(*args)
        return name

    def produce(self, topic: str, lines: Iterable[dict], *extra: str) -> List[dict]:
        text = "".join(json.dumps(line) + "\n" for line in lines)
        return self.tool("produce", "--topic", topic, *extra, stdin=text)

    def consume(self, topic: str, *extra: str) -> List[dict]:
        return self.tool("consume", "--topic", topic, *extra)

    def offsets_for(self, topic: str, spec: str) -> Dict[int, int]:
        return {r["partition"]: r["offset"] for r in self.tool("list-offsets", "--topic", topic, "--spec", spec)}

    def window(self, topic: str, start_ms: int, end_ms: int, isolation: str = "read_uncommitted") -> List[tuple]:
        """The records from the first offset at or after start_ms to the first at or after
        end_ms (the latest offset where there is none), as the Java consumer reads them:
        (partition, offset, key, value, timestamp) sorted."""
        ends = self.offsets_for(topic, str(end_ms))
        latest = self.offsets_for(topic, "latest")
        rows = self.consume(topic, "--from-timestamp", str(start_ms), "--isolation", isolation)
        out = []
        for r in rows:
            end = ends[r["partition"]]
            if end < 0:
                end = latest[r["partition"]]
            if r["offset"] < end:
                out.append((r["partition"], r["offset"], r["key"], r["value"], r["timestamp"]))
        return sorted(out)


@pytest.fixture(scope="session")
def kafka(bootstrap: str) -> Kafka:
    return Kafka(bootstrap)


def rows_of(table) -> List[tuple]:
    """(partition, offset, key, value, timestamp ms) of a pyarrow table, sorted; keys and values
    as text, as ktool prints them."""
    import pyarrow as pa

    d = table.to_pydict()
    ms = [us // 1000 for us in table.column("timestamp").cast(pa.int64()).to_pylist()]
    text = lambda b: None if b is None else b.decode()  # noqa: E731
    return sorted(
        (p, o, text(k), text(v), t)
        for p, o, k, v, t in zip(d["partition"], d["offset"], d["key"], d["value"], ms)
    )


# ---------------------------------------------------------------- Schema Registry (Avro values)

REGISTRY = ROOT / "tests" / "registry"


@pytest.fixture(scope="session")
def registry_url():
    """A Schema Registry with Confluent's REST API (tests/registry/server.py), for this session;
    it exits when its stdin closes."""
    import sys

    server = subprocess.Popen(
        [sys.executable, str(REGISTRY / "server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline().strip()
    if not line.startswith("URL="):
        server.kill()
        pytest.fail(f"tests/registry/server.py did not start: {line!r}")
    yield line[len("URL="):]
    server.stdin.close()
    server.wait(timeout=30)


def confluent_module():
    """tests/registry/confluent.py as a module: Confluent's serializers (confluent-kafka)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("confluent", REGISTRY / "confluent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def avro_produce(bootstrap: str, url: str) -> str:
    """A new topic of Avro values written by Confluent's AvroSerializer (every Avro type, two
    schema versions, a union of several types, a tombstone; 41 records)."""
    import sys

    topic = f"py-avro-{uuid.uuid4().hex[:12]}"
    done = subprocess.run(
        [sys.executable, str(REGISTRY / "confluent.py"), "produce", bootstrap, url, topic],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"confluent.py produce failed: {done.stderr[-2000:]}")
    return topic


@pytest.fixture(scope="session")
def avro_topic(bootstrap, registry_url) -> str:
    return avro_produce(bootstrap, registry_url)


def confluent_values(bootstrap: str, url: str, topic: str):
    """Every value of ``topic`` as Confluent's AvroDeserializer reads it in the latest schema of
    ``<topic>-value``, shaped as pyarrow gives kseek's columns (confluent.py's ``plain``):
    (the reader schema's field names, {(partition, offset): {field: value} or None})."""
    import json as _json

    c = confluent_module()
    sr = c.registry(url)
    latest = sr.get_latest_version(topic + "-value").schema.schema_str
    reader = _json.loads(latest)
    deserializer = c.AvroDeserializer(sr, schema_str=latest)
    ctx = c.SerializationContext(topic, c.MessageField.VALUE)

    def decode(m):
        return None if m.value() is None else c.plain(reader, deserializer(m.value(), ctx), {})

    return [f["name"] for f in reader["fields"]], c.consume(bootstrap, topic, decode)


def value_mismatches(expected: dict, got: dict) -> List[str]:
    """confluent.py's field-by-field comparison of {(partition, offset): value}."""
    c = confluent_module()
    problems = []
    if sorted(got) != sorted(expected):
        problems.append(f"records: kseek {sorted(got)}, Confluent's consumer {sorted(expected)}")
    for k in sorted(set(got) & set(expected)):
        problems += c.same(expected[k], got[k], "partition %d offset %d" % k)
    return problems


def values_of(rows: Iterable[dict], fields: List[str]) -> dict:
    """{(partition, offset): {field: value} or None (a tombstone: a null ``value``)} of rows
    with kseek's value columns; maps as sorted (key, value) lists, as ``plain`` makes them."""
    def normal(x):
        return sorted(x) if isinstance(x, list) and x and isinstance(x[0], tuple) else x

    return {
        (r["partition"], r["offset"]):
            None if r["value"] is None else {f: normal(r[f]) for f in fields}
        for r in rows
    }

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

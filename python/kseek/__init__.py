"""kseek: read Kafka by time into Arrow, with kseek's Rust reader.

    import kseek
    reader = kseek.read("events", start="2026-11-30T10:00:00Z", end="2026-11-30T10:05:00Z",
                        bootstrap="localhost:9092")
    table = reader.read_all()          # or polars.from_arrow(reader), duckdb.sql("... FROM reader")

``kseek.plan`` resolves a window into per-partition offset ranges without reading it, and
``Plan.splits`` cuts it into ``Split`` objects that pickle, so other processes (Spark's executors,
``kseek.spark``) can read the pieces: reading every split, anywhere and in any order, gives
exactly the records of reading the plan.

Positions (``start``, ``end``) are the command line's: ``earliest``, ``latest``, ``now``, an RFC
3339 time or a date, epoch milliseconds (a string or an int), a relative time (``-2h``),
``offset:N``, ``offset:P=N,P=N`` or ``group`` (with ``group=``). Kafka settings are Kafka's
property names, as ``kseek -X`` takes them (``properties={"security.protocol": "SASL_SSL", ...}``).
Errors are ``KseekError`` (``ConfigError`` before anything is sent, ``KafkaError`` after) with
kseek's one-line messages; Ctrl-C interrupts a read.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import pyarrow as pa

from ._kseek import ConfigError, KafkaError, KseekError, Plan, Reader, Split
from ._kseek import plan as _plan

__all__ = [
    "ConfigError",
    "KafkaError",
    "KseekError",
    "Plan",
    "Reader",
    "Split",
    "plan",
    "read",
]

Position = Union[str, int]


def plan(
    topics: Union[str, Sequence[str]],
    *,
    start: Optional[Position] = None,
    end: Optional[Position] = None,
    partitions: Optional[Iterable[int]] = None,
    group: Optional[str] = None,
    isolation: str = "read_uncommitted",
    exact_time: bool = False,
    strict: bool = False,
    follow: bool = False,
    bootstrap: Optional[str] = None,
    properties: Optional[Mapping[str, Any]] = None,
) -> Plan:
    """Resolves a read into a ``Plan``: per partition, the offsets from ``start`` (default
    ``earliest``) to ``end`` (default ``latest``, exclusive).

    A start time after the last record gives an empty range, never an error (``strict=True``
    makes it one). ``follow=True`` reads on after the last record, until the reader is closed
    or interrupted (no ``end``). ``exact_time=True`` also drops the records of the range whose timestamps
    fall outside the window (out-of-order CreateTime records). ``isolation`` is
    ``read_uncommitted`` or ``read_committed``.
    """
    return _plan(
        topics,
        start=start,
        end=end,
        partitions=None if partitions is None else list(partitions),
        group=group,
        isolation=isolation,
        exact_time=exact_time,
        strict=strict,
        follow=follow,
        bootstrap=bootstrap,
        properties=None if properties is None else dict(properties),
    )


def read(
    source: Union[str, Sequence[str], Plan, Split, Sequence[Split]],
    *,
    start: Optional[Position] = None,
    end: Optional[Position] = None,
    partitions: Optional[Iterable[int]] = None,
    group: Optional[str] = None,
    isolation: str = "read_uncommitted",
    exact_time: bool = False,
    strict: bool = False,
    follow: bool = False,
    bootstrap: Optional[str] = None,
    properties: Optional[Mapping[str, Any]] = None,
    batch_rows: int = 65_536,
    batch_bytes: int = 16 << 20,
    value_format: str = "bytes",
    schema_registry: Optional[str] = None,
    value_schema: str = "latest",
    on_decode_error: str = "fail",
) -> pa.RecordBatchReader:
    """Reads a window as a ``pyarrow.RecordBatchReader``.

    ``source`` is topics (resolved as ``plan`` does, with the same arguments), a ``Plan``, a
    ``Split`` or a list of splits. Each batch holds at most ``batch_rows`` rows and about
    ``batch_bytes`` of keys, values and headers; batches come from Rust through the Arrow C
    data interface, without a copy or a Python object per record. The columns are Spark's
    Kafka source's: key, value (binary), topic, partition, offset, timestamp
    (``timestamp[us, UTC]``), timestampType (0 CreateTime, 1 LogAppendTime) and headers.

    For a split, ``bootstrap`` and ``properties`` are this process's own settings (TLS, SASL:
    a split carries no secrets); the split's bootstrap servers, client id and timeouts win.

    ``value_format="avro"`` also decodes the values (Confluent-framed Avro) through the Schema
    Registry at ``schema_registry`` (else ``properties["schema.registry.url"]``; credentials
    and TLS in Confluent's names, ``basic.auth.user.info``, ``schema.registry.ssl.*``): one
    column per field of the reader schema follows the Kafka columns (``value_<name>`` where a
    name is a Kafka column's): ``value_schema`` is ``latest`` (of the subject
    ``<topic>-value``), ``version:N`` or ``id:N``. Every version in the window is resolved to
    that schema by Avro's rules; a union of several types is a struct of its
    branches (``member0``, ...). One topic at a time. A value that does not decode fails the
    read with a ``KafkaError`` naming its partition and offset (``on_decode_error="fail"``),
    is left out (``"skip"``) or keeps its row with null fields (``"null"``).
    """
    if isinstance(source, (Plan, Split)) or (
        isinstance(source, list) and all(isinstance(s, (Plan, Split)) for s in source) and source
    ):
        sources = source
    else:
        sources = plan(
            source,
            start=start,
            end=end,
            partitions=partitions,
            group=group,
            isolation=isolation,
            exact_time=exact_time,
            strict=strict,
            follow=follow,
            bootstrap=bootstrap,
            properties=properties,
        )
    reader = Reader(
        sources,
        batch_rows=batch_rows,
        batch_bytes=batch_bytes,
        bootstrap=bootstrap,
        properties=None if properties is None else dict(properties),
        value_format=value_format,
        schema_registry=schema_registry,
        value_schema=value_schema,
        on_decode_error=on_decode_error,
    )
    return pa.RecordBatchReader.from_batches(reader.schema, reader)

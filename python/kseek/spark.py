"""A Spark data source that reads Kafka windows with kseek (Spark 4's Python Data Source API).

    import kseek.spark
    kseek.spark.register(spark)
    df = (spark.read.format("kseek")
          .option("kafka.bootstrap.servers", "localhost:9092")
          .option("subscribe", "events")
          .option("startingTimestamp", "1764496800000")
          .option("endingTimestamp", "1764497100000")
          .load())

It takes the option names of Spark's own Kafka source where they exist, so switching is a change
of the format name, and returns that source's schema (key, value, topic, partition, offset,
timestamp, timestampType, and headers with ``includeHeaders``):

``kafka.bootstrap.servers``, ``subscribe`` (comma-separated topics), ``subscribePattern`` (the
topics a regular expression is found in, anywhere in the name, as Spark 4's source reads them
(``findFirstIn``; anchor it with ``^...$`` for whole names); Python's ``re`` syntax, which agrees
with Java's for the usual patterns; internal topics left out),
``assign`` (JSON ``{"t": [0, 1]}``), ``startingOffsets`` / ``endingOffsets`` (``earliest``, ``latest``, or JSON
``{"t": {"0": 23, "1": -2}}`` with -2 earliest and -1 latest), ``startingTimestamp`` /
``endingTimestamp`` (ms), ``startingOffsetsByTimestamp`` / ``endingOffsetsByTimestamp`` (JSON
``{"t": {"0": ms}}``), ``minPartitions``, ``maxRecordsPerPartition``, ``includeHeaders``, and
``kafka.*`` client properties (``kafka.security.protocol``, ``kafka.sasl.jaas.config``,
``kafka.isolation.level``, ...). Spark's precedence holds: a timestamp option over the
by-timestamp JSON over the offsets.

What differs from Spark's source, on purpose:

- a start timestamp after the last record gives an empty range, not an error (Spark's source
  needs ``startingOffsetsByTimestampStrategy=latest`` for that);
- the plan is resolved once, on the driver, by kseek (``partitions()``); each Spark partition is a
  ``kseek.Split`` that an executor reads with kseek's Rust reader, its rows reaching Spark as Arrow
  record batches;
- ``WHERE`` predicates on ``partition``, ``offset`` and ``timestamp`` narrow the offsets read when
  filter push-down is on (``register(spark, pushdown=True)`` and Spark's
  ``spark.sql.python.filterPushdown.enabled``; see ``register`` for why it is off by default): a
  lower time bound by
  ListOffsets, an upper one on LogAppendTime topics (or on CreateTime topics given kseek's
  ``maxLateness`` option, e.g. ``5m``). Spark still applies every predicate to the rows, so
  results are exact;
- kseek's own options: ``exactTime`` (``true``: drop the records of the range whose timestamps
  fall outside the window's times), ``maxLateness``, ``batchRows``;
- ``valueFormat`` ``avro`` decodes the values (Confluent-framed Avro) through the Schema Registry
  named by ``schema.registry.url`` (credentials and TLS in Confluent's names:
  ``basic.auth.user.info``, ``bearer.auth.token``, ``schema.registry.ssl.*``) into one column per
  field of the latest schema of ``<topic>-value`` (``valueSchema``: ``version:N`` or ``id:N``
  for another), after the Kafka columns (one topic). Types are
  Spark's ``from_avro``'s: enums as strings, fixed and uuid as binary, time-millis as int and
  time-micros as bigint, timestamps as timestamps, a union of several types as a struct of
  ``member0``, ``member1``, ...; ``onDecodeError`` ``fail`` (default), ``skip`` or ``null`` says
  what a value that does not decode does.

``failOnDataLoss`` is accepted; kseek starts at the log start when a range's first offsets were
deleted, as Spark's source does with ``failOnDataLoss=false``. Secrets in ``kafka.*`` options stay in the reader: they are not in
the partitions, and not in anything this module prints.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

__all__ = ["KseekDataSource", "KseekPushdownDataSource", "register"]

#: Spark's Kafka source schema (without headers), the one this source returns.
SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)
HEADERS = "headers array<struct<key: string, value: binary>>"

# Spark's option names this source understands, lowercased (Spark hands options over
# case-insensitively), and kseek's own.
_KNOWN = {
    "subscribe",
    "assign",
    "subscribepattern",
    "startingoffsets",
    "endingoffsets",
    "startingtimestamp",
    "endingtimestamp",
    "startingoffsetsbytimestamp",
    "endingoffsetsbytimestamp",
    "startingoffsetsbytimestampstrategy",
    "minpartitions",
    "maxrecordsperpartition",
    "includeheaders",
    "failondataloss",
    "path",
    "exacttime",
    "maxlateness",
    "batchrows",
    "valueformat",
    "valueschema",
    "ondecodeerror",
}

# Options for the Schema Registry, in Confluent's property names.
_REGISTRY_PREFIXES = ("schema.registry.", "basic.auth.", "bearer.auth.")


def register(spark, pushdown: bool = False) -> None:
    """Registers the data source with ``spark``: ``spark.read.format("kseek")``.

    With ``pushdown=True`` (and ``spark.sql.python.filterPushdown.enabled`` on: Spark fails
    every query of a reader that accepts filters while it is off), its reader takes ``WHERE``
    predicates into the offsets it reads. It is off by default because Spark (4.1 to 4.3.0)
    keeps what one query's push-down planned on the relation it was loaded from: a later query
    of the same DataFrame without those predicates reads only the narrowed offsets. With
    push-down on, load a fresh DataFrame for each filtered query. Register again after
    changing the setting.
    """
    setting = spark.conf.get("spark.sql.python.filterPushdown.enabled", "false")
    enabled = str(setting).strip().lower() == "true"
    spark.dataSource.register(KseekPushdownDataSource if pushdown and enabled else KseekDataSource)


class KseekDataSource(DataSource):
    """``spark.read.format("kseek")``: Kafka windows read by kseek (see the module's doc)."""

    @classmethod
    def name(cls) -> str:
        return "kseek"

    def schema(self):
        options = _Options.parse(self.options)
        if options.value_format == "avro":
            return spark_schema(options)
        return f"{SCHEMA}, {HEADERS}" if options.include_headers else SCHEMA

    def reader(self, schema) -> "KseekReader":
        return KseekReader(_Options.parse(self.options))


class KseekPushdownDataSource(KseekDataSource):
    """``spark.read.format("kseek")`` whose reader narrows the read by pushed-down filters
    (``spark.sql.python.filterPushdown.enabled`` must be on)."""

    def reader(self, schema) -> "KseekReader":
        return KseekPushdownReader(_Options.parse(self.options))


@dataclass
class _Options:
    """The options of one read, checked on the driver before anything goes to Kafka."""

    bootstrap: str
    properties: Dict[str, str]
    isolation: str
    # (topic, partitions or None for all); empty with ``pattern``
    topics: List[Tuple[str, Optional[List[int]]]]
    start: Any  # a position, or {(topic, partition): position}
    end: Any
    min_partitions: Optional[int]
    max_records: Optional[int]
    include_headers: bool
    exact_time: bool
    max_lateness_ms: Optional[int]
    batch_rows: int
    # subscribePattern, compiled: the topics are the matching ones when the plan is made.
    pattern: Any = None
    # valueFormat, the Schema Registry's settings (Confluent's names), onDecodeError.
    value_format: str = "bytes"
    value_schema: str = "latest"
    registry: Dict[str, str] = None  # type: ignore[assignment]
    on_decode_error: str = "fail"

    def reader_properties(self) -> Dict[str, str]:
        """The Kafka client's properties and the Schema Registry's, as kseek takes them."""
        return {**self.properties, **(self.registry or {})}

    @staticmethod
    def parse(raw) -> "_Options":
        from . import ConfigError

        opts: Dict[str, str] = {str(k).lower(): str(v) for k, v in dict(raw).items()}
        properties: Dict[str, str] = {}
        for key, value in dict(raw).items():
            if str(key).lower().startswith("kafka."):
                properties[str(key)[len("kafka.") :]] = str(value)
        registry = {k: v for k, v in opts.items() if k.startswith(_REGISTRY_PREFIXES)}
        unknown = sorted(
            k for k in opts
            if not k.startswith("kafka.") and k not in _KNOWN and k not in registry
        )
        if unknown:
            raise ConfigError(f"unknown option {unknown[0]!r} for format kseek")
        bootstrap = properties.pop("bootstrap.servers", None)
        if not bootstrap:
            raise ConfigError("option kafka.bootstrap.servers is required (host:port[,host:port])")
        isolation = properties.pop("isolation.level", "read_uncommitted")
        # Spark's source manages these itself, and so does kseek.
        for managed in ("group.id", "auto.offset.reset", "key.deserializer", "value.deserializer",
                        "enable.auto.commit", "interceptor.classes"):
            properties.pop(managed, None)

        chosen = [k for k in ("subscribe", "assign", "subscribepattern") if k in opts]
        if len(chosen) != 1:
            raise ConfigError("give exactly one of the options subscribe, assign or subscribePattern")
        pattern = None
        topics: List[Tuple[str, Optional[List[int]]]] = []
        if chosen[0] == "subscribepattern":
            import re

            try:
                pattern = re.compile(opts["subscribepattern"])
            except re.error as e:
                raise ConfigError(f"option subscribePattern is not a regular expression: {e}") from None
        elif chosen[0] == "subscribe":
            names = [t.strip() for t in opts["subscribe"].split(",") if t.strip()]
            if not names:
                raise ConfigError("option subscribe names no topic")
            topics = [(t, None) for t in dict.fromkeys(names)]
        else:
            assign = _json(opts["assign"], "assign", '{"topic": [0, 1]}')
            if not isinstance(assign, dict) or not assign or not all(
                isinstance(ps, list) and all(isinstance(p, int) and p >= 0 for p in ps)
                for ps in assign.values()
            ):
                raise ConfigError('option assign must be JSON like {"topic": [0, 1]}')
            topics = [(t, sorted(set(ps))) for t, ps in assign.items()]

        start = _side(opts, "starting", default="earliest")
        end = _side(opts, "ending", default="latest")
        if "startingoffsetsbytimestampstrategy" in opts and opts[
            "startingoffsetsbytimestampstrategy"
        ].lower() not in ("error", "latest"):
            raise ConfigError("option startingOffsetsByTimestampStrategy must be error or latest")

        def positive(name: str) -> Optional[int]:
            if name not in opts:
                return None
            try:
                n = int(opts[name])
            except ValueError:
                n = 0
            if n < 1:
                raise ConfigError(f"option {name} must be a positive integer, not {opts[name]!r}")
            return n

        lateness = None
        if "maxlateness" in opts:
            lateness = _duration_ms(opts["maxlateness"])
        value_format = opts.get("valueformat", "bytes").strip().lower()
        if value_format not in ("bytes", "avro"):
            raise ConfigError(f"option valueFormat must be bytes or avro, not {value_format!r}")
        if value_format == "avro":
            if "schema.registry.url" not in registry:
                raise ConfigError("option valueFormat avro needs the option schema.registry.url")
            if len(topics) != 1 or pattern is not None:
                raise ConfigError("option valueFormat avro reads one topic (its columns are the "
                                  "topic's value schema): name one in subscribe or assign")
        on_decode_error = opts.get("ondecodeerror", "fail").strip().lower()
        if on_decode_error not in ("fail", "skip", "null"):
            raise ConfigError(f"option onDecodeError must be fail, skip or null, not {on_decode_error!r}")
        return _Options(
            bootstrap=bootstrap,
            properties=properties,
            isolation=isolation,
            topics=topics,
            start=start,
            end=end,
            min_partitions=positive("minpartitions"),
            max_records=positive("maxrecordsperpartition"),
            include_headers=_bool(opts, "includeheaders"),
            exact_time=_bool(opts, "exacttime"),
            max_lateness_ms=lateness,
            batch_rows=positive("batchrows") or 65_536,
            value_format=value_format,
            value_schema=opts.get("valueschema", "latest"),
            registry=registry,
            on_decode_error=on_decode_error,
            pattern=pattern,
        )


def _json(text: str, name: str, example: str) -> Any:
    from . import ConfigError

    try:
        return json.loads(text)
    except ValueError:
        raise ConfigError(f"option {name} is not JSON; write it like {example}") from None


def _bool(opts: Dict[str, str], name: str) -> bool:
    from . import ConfigError

    value = opts.get(name, "false").strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"option {name} must be true or false, not {value!r}")
    return value == "true"


def _duration_ms(text: str) -> int:
    from . import ConfigError

    units = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    t = text.strip().lower()
    for unit in sorted(units, key=len, reverse=True):
        if t.endswith(unit) and t[: -len(unit)].strip().isdigit():
            return int(t[: -len(unit)]) * units[unit]
    if t.isdigit():
        return int(t)
    raise ConfigError(f"option maxLateness {text!r} is not a duration such as 5m, 30s or 500ms")


def _side(opts: Dict[str, str], side: str, default: str) -> Any:
    """The start (``side`` = "starting") or end of the read as a kseek position, or a dict of
    positions per (topic, partition), by Spark's precedence."""
    from . import ConfigError

    ts = opts.get(f"{side}timestamp")
    if ts is not None:
        if not ts.strip().isdigit():
            raise ConfigError(f"option {side}Timestamp must be epoch milliseconds, not {ts!r}")
        return int(ts)
    by_ts = opts.get(f"{side}offsetsbytimestamp")
    if by_ts is not None:
        return _per_partition(by_ts, f"{side}OffsetsByTimestamp", side, timestamps=True)
    offsets = opts.get(f"{side}offsets")
    if offsets is None:
        return default
    word = offsets.strip().lower()
    if word in ("earliest", "latest"):
        if side == "ending" and word == "earliest":
            raise ConfigError("option endingOffsets can't be earliest")
        return word
    return _per_partition(offsets, f"{side}Offsets", side, timestamps=False)


def _per_partition(text: str, name: str, side: str, timestamps: bool) -> Dict[Tuple[str, int], Any]:
    from . import ConfigError

    parsed = _json(text, name, '{"topic": {"0": 23, "1": -2}}')
    ok = isinstance(parsed, dict) and all(isinstance(v, dict) for v in parsed.values())
    out: Dict[Tuple[str, int], Any] = {}
    if ok:
        for topic, parts in parsed.items():
            for p, n in parts.items():
                if not (isinstance(n, int) and str(p).isdigit()):
                    ok = False
                    break
                if n == -2:
                    if side == "ending":
                        raise ConfigError(f"option {name}: -2 (earliest) can't end a range")
                    position: Any = "earliest"
                elif n == -1:
                    position = "latest"
                elif n < 0:
                    raise ConfigError(f"option {name}: {n} for partition {p} of {topic!r} is negative")
                else:
                    position = n if timestamps else f"offset:{n}"
                out[(topic, int(p))] = position
    if not ok or not out:
        raise ConfigError(f'option {name} must be JSON like {{"topic": {{"0": 23}}}}')
    return out


class KseekPartition(InputPartition):
    """One Spark partition: kseek splits (as bytes: no secrets in them)."""

    def __init__(self, index: int, splits: Sequence[bytes]):
        super().__init__(index)
        self.index = index
        self.splits = list(splits)

    def __repr__(self) -> str:
        return f"KseekPartition({self.index}, {len(self.splits)} splits)"


class KseekReader(DataSourceReader):
    """Plans on the driver (``partitions``), reads splits on executors (``read``)."""

    def __init__(self, options: _Options):
        self.options = options
        # Pushed-down bounds: partitions kept, offsets [lo, hi), times [lo, hi) in ms.
        self.partitions_kept: Optional[set] = None
        self.partition_range: List[Optional[int]] = [None, None]
        self.offsets: List[Optional[int]] = [None, None]
        self.times: List[Optional[int]] = [None, None]

    def __repr__(self) -> str:
        o = self.options
        topics = o.pattern.pattern if o.pattern is not None else [t for t, _ in o.topics]
        return f"KseekReader(topics={topics!r}, start={o.start!r}, end={o.end!r})"

    def _narrow_by(self, f) -> None:
        from pyspark.sql.datasource import In

        column = tuple(getattr(f, "attribute", ()) or ())
        if len(column) != 1 or column[0].lower() not in ("partition", "offset", "timestamp"):
            return
        name = column[0].lower()
        if isinstance(f, In):
            if name == "partition":
                self._keep_partitions({v for v in f.value if _is_int(v)})
            return
        value = getattr(f, "value", None)
        if name == "timestamp":
            # Kafka timestamps are ms; Spark compares them as microseconds.
            us = _micros(value)
            if us is None:
                return
            lo, hi = _bounds(f, us, 1000)
            target = self.times
        elif _is_int(value):
            lo, hi = _bounds(f, value, 1)
            target = self.partition_range if name == "partition" else self.offsets
        else:
            return
        if lo is not None:
            target[0] = lo if target[0] is None else max(target[0], lo)
        if hi is not None:
            target[1] = hi if target[1] is None else min(target[1], hi)

    def _keep_partitions(self, values: set) -> None:
        self.partitions_kept = values if self.partitions_kept is None else self.partitions_kept & values

    # ------------------------------------------------------------------ driver
    def partitions(self) -> List[KseekPartition]:
        o = self.options
        plans = []
        per_partition = isinstance(o.start, dict) or isinstance(o.end, dict)
        for topic, parts in self._topics():
            if per_partition:
                plans.extend(self._per_partition_plans(topic, parts))
            else:
                plans.append(self._plan(topic, o.start, o.end, parts))
        plans = [self._narrowed(p) for p in plans]
        total = sum(p.records or 0 for p in plans)
        max_records = o.max_records
        if o.min_partitions and total:
            per = max(1, math.ceil(total / o.min_partitions))
            max_records = per if max_records is None else min(max_records, per)
        splits = [s for p in plans for s in p.splits(max_records=max_records)]
        if not splits:
            # Spark needs a partition to run; it reads nothing.
            return [KseekPartition(0, [])]
        return [KseekPartition(i, [s.to_bytes()]) for i, s in enumerate(splits)]

    def _topics(self) -> List[Tuple[str, Optional[List[int]]]]:
        """The options' topics, or the cluster's topics that subscribePattern matches."""
        o = self.options
        if o.pattern is None:
            return o.topics
        from . import _kseek

        names = _kseek.topics(bootstrap=o.bootstrap, properties=o.properties)
        # Spark 4's source keeps the topics the pattern is found in (findFirstIn), not only
        # whole-name matches.
        return [(t, None) for t in names if o.pattern.search(t)]

    def _per_partition_plans(self, topic, parts):
        """Plans of a topic whose start or end is per partition (JSON options): one per
        distinct (start, end) pair of its partitions."""
        import kseek

        o = self.options
        start, end = o.start, o.end
        if parts is None:
            # All partitions of the topic: find them, with a plan from earliest.
            parts = [p["partition"] for p in kseek.plan(
                topic, bootstrap=o.bootstrap, properties=o.properties).partitions]
        pairs: Dict[Tuple[Any, Any], List[int]] = {}
        for p in parts:
            # Partitions a JSON option does not list start at earliest and end at latest.
            s = start.get((topic, p), "earliest") if isinstance(start, dict) else start
            e = end.get((topic, p), "latest") if isinstance(end, dict) else end
            pairs.setdefault((s, e), []).append(p)
        return [self._plan(topic, s, e, ps) for (s, e), ps in pairs.items()]

    def _plan(self, topic, start, end, partitions):
        """The plan of ``topic`` (only ``partitions`` unless None) from ``start`` to ``end``."""
        import kseek

        o = self.options
        return kseek.plan(
            topic,
            start=start,
            end=end,
            partitions=partitions,
            isolation=o.isolation,
            exact_time=o.exact_time,
            bootstrap=o.bootstrap,
            properties=o.properties,
        )

    def _narrowed(self, plan):
        keep = None
        if self.partitions_kept is not None or self.partition_range != [None, None]:
            lo, hi = self.partition_range
            keep = [
                p["partition"]
                for p in plan.partitions
                if (self.partitions_kept is None or p["partition"] in self.partitions_kept)
                and (lo is None or p["partition"] >= lo)
                and (hi is None or p["partition"] < hi)
            ]
        if keep is None and self.offsets == [None, None] and self.times == [None, None]:
            return plan
        return plan.narrow(
            partitions=keep,
            min_offset=self.offsets[0],
            max_offset=self.offsets[1],
            min_time=self.times[0],
            max_time=self.times[1],
            max_lateness_ms=self.options.max_lateness_ms,
        )

    # ------------------------------------------------------------------ executors
    def read(self, partition: KseekPartition) -> Iterator[pa.RecordBatch]:
        import kseek

        o = self.options
        if not partition.splits:
            return
        avro = o.value_format == "avro"
        schema = _to_arrow(spark_schema(o)) if avro else arrow_schema(o.include_headers)
        reader = kseek.Reader(
            [kseek.Split.from_bytes(b) for b in partition.splits],
            batch_rows=o.batch_rows,
            properties=o.reader_properties(),
            bootstrap=o.bootstrap,
            value_format=o.value_format,
            value_schema=o.value_schema,
            on_decode_error=o.on_decode_error,
        )
        for batch in reader:
            columns = []
            for field in schema:
                column = batch.column(field.name)
                # Spark wants its own nullability (every field nullable, headers' too).
                if column.type != field.type:
                    column = column.cast(field.type)
                if field.name == "headers":
                    column = _null_when_empty(column)
                columns.append(column)
            yield pa.RecordBatch.from_arrays(columns, schema=schema)


def _null_when_empty(headers: pa.ListArray) -> pa.ListArray:
    """Headers as Spark's Kafka source gives them: null for a record without any."""
    import pyarrow.compute as pc

    empty = pc.equal(pc.list_value_length(headers), 0)
    if not pc.any(empty).as_py():
        return headers
    return pa.ListArray.from_arrays(headers.offsets, headers.values, type=headers.type, mask=empty)


def spark_schema(options: _Options):
    """The Spark schema of a read with ``valueFormat`` ``avro``: the Kafka columns (headers with
    ``includeHeaders``), then the value's fields in Spark's ``from_avro`` types."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from . import _kseek

    (topic, _), = options.topics
    schema = _kseek.value_schema(
        topic, value_schema=options.value_schema, bootstrap=options.bootstrap,
        properties=options.reader_properties())
    fields = [
        pa.field(f.name, _spark_type(f.type))
        for f in schema
        if f.name != "headers" or options.include_headers
    ]
    return from_arrow_schema(pa.schema(fields), prefer_timestamp_ntz=True)


def _to_arrow(spark_schema) -> pa.Schema:
    """The Arrow schema Spark expects of batches of ``spark_schema``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema, timezone="UTC")


def _spark_type(t: pa.DataType) -> pa.DataType:
    """An Arrow type of kseek's value columns as Spark can take it, in Spark's ``from_avro``
    mapping: enums (dictionaries) as strings, fixed (and uuid) as binary, time-millis as int,
    time-micros as bigint, timestamps in microseconds; nested types likewise."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz else None)
    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_time64(t):
        return pa.int64()
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type)
    if pa.types.is_fixed_size_binary(t) or pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(_spark_type(t.key_type), _spark_type(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_spark_type(t.value_type))
    return t


def arrow_schema(headers: bool) -> pa.Schema:
    """The Arrow schema Spark expects of this source's batches: SCHEMA's (and HEADERS')
    columns as Spark maps them to Arrow, every field nullable."""
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if headers:
        item = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
        fields.append(pa.field("headers", pa.list_(pa.field("element", item))))
    return pa.schema(fields)


class KseekPushdownReader(KseekReader):
    """A ``KseekReader`` that takes Spark's pushed-down filters."""

    def pushFilters(self, filters):
        """Narrows the read by comparisons of partition, offset and timestamp. Every filter is
        handed back, so Spark applies it to the rows too: the narrowing only reads less."""
        for f in filters:
            self._narrow_by(f)
            yield f


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bounds(f, value: int, scale: int) -> Tuple[Optional[int], Optional[int]]:
    """The [lower, upper) bounds, in units of ``scale`` times ``value``'s, of the values x
    with ``x * scale <op> value`` for the comparison ``f``."""
    from pyspark.sql.datasource import (
        EqualTo,
        GreaterThan,
        GreaterThanOrEqual,
        LessThan,
        LessThanOrEqual,
    )

    floor, ceil = value // scale, -(-value // scale)
    if isinstance(f, GreaterThan):
        return floor + 1, None
    if isinstance(f, GreaterThanOrEqual):
        return ceil, None
    if isinstance(f, LessThan):
        return None, ceil
    if isinstance(f, LessThanOrEqual):
        return None, floor + 1
    if isinstance(f, EqualTo):
        return ceil, floor + 1
    return None, None


def _micros(value) -> Optional[int]:
    """A pushed timestamp literal as microseconds since the epoch (naive datetimes are UTC, as
    Spark's session time zone is not known here), or None."""
    import datetime as dt

    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return None

#!/usr/bin/env python3
"""The independent side of kseek's Schema Registry tests: Confluent's own serializers and
deserializers (the confluent-kafka package) write and read the topic.

    confluent.py produce BOOTSTRAP REGISTRY_URL TOPIC [USER:PASSWORD]
        Creates TOPIC (two partitions) unless it exists, and writes Avro values (two versions of a schema: every primitive and logical type,
        nested records, arrays, maps, unions, enums, fixed; then a field added with a
        default and one removed), string keys, and a tombstone, with AvroSerializer.
    confluent.py compare BOOTSTRAP REGISTRY_URL TOPIC KSEEK_JSON_LINES
        Reads the topic with AvroDeserializer and compares each record, field by field,
        with kseek's line for the same partition and offset (kseek prints Avro's JSON
        encoding: unions as {"branch": value}; logical types as documented in
        registry/src/avro.rs). Prints the mismatches; exit 1 if any.
    confluent.py compare-table BOOTSTRAP REGISTRY_URL TOPIC KSEEK_PARQUET
        Reads the topic with AvroDeserializer in the subject's latest schema, and compares each
        value with the `value` struct of kseek's Parquet file as pyarrow reads it (`kseek read
        -s value=avro`), or with its columns named as the schema's fields when `value` is the
        raw bytes (`kseek sql --value-format avro`: a column per field).
    confluent.py produce-json BOOTSTRAP REGISTRY_URL TOPIC
    confluent.py compare-json BOOTSTRAP REGISTRY_URL TOPIC KSEEK_JSON_LINES
        The same with JSONSerializer and JSONDeserializer (JSON Schema).
    confluent.py produce-proto BOOTSTRAP REGISTRY_URL TOPIC
        Registers proto/order.proto and proto/common/money.proto (a reference) as .proto text,
        and writes values of Order, Order.Line and Refund with ProtobufSerializer.
    confluent.py compare-proto BOOTSTRAP REGISTRY_URL TOPIC KSEEK_JSON_LINES
        ProtobufDeserializer's messages, printed by MessageToDict, against kseek's lines.
"""
import datetime
import decimal
import json
import math
import os
import sys
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

INNER = {
    "type": "record", "name": "Inner", "fields": [
        {"name": "name", "type": "string"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}

V1 = {
    "type": "record", "name": "Event", "namespace": "kseek.test", "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "by", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "decf", "type": {"type": "fixed", "name": "Money", "size": 8,
                                   "logicalType": "decimal", "precision": 18, "scale": 4}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tmil", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tmic", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ltsm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "nums", "type": {"type": "array", "items": "int"}},
        {"name": "attrs", "type": {"type": "map", "values": "string"}},
        {"name": "opt", "type": ["null", "string"], "default": None},
        {"name": "choice", "type": ["null", "long", INNER]},
        {"name": "inner", "type": "Inner"},
    ],
}

# Version 2: "s" removed, "extra" added with a default.
V2 = dict(V1, fields=[f for f in V1["fields"] if f["name"] != "s"]
          + [{"name": "extra", "type": "string", "default": "none"}])

# KSEEK_AVRO_PROFILE=table: without the union of several types ("choice"): the tables of the SQL
# and key tests keep to plain columns (cli/tests/registry.rs checks "choice" in Parquet).
# ("Inner", defined inside "choice", is then defined where "inner" uses it.)
if os.environ.get("KSEEK_AVRO_PROFILE") == "table":
    def without_choice(schema):
        fields = [f for f in schema["fields"] if f["name"] != "choice"]
        return dict(schema, fields=[dict(f, type=INNER) if f["name"] == "inner" else f for f in fields])
    V1, V2 = without_choice(V1), without_choice(V2)

KEY_SCHEMA = {"type": "record", "name": "Key", "namespace": "kseek.test", "fields": [
    {"name": "name", "type": "string"}, {"name": "shard", "type": "int"}]}

UTC = datetime.timezone.utc


def event(n, version):
    v = {
        "b": n % 2 == 0,
        "i": -n * 1000,
        "l": n * 10**12,
        "f": 1.5 + n,
        "d": n / 3.0,
        "by": bytes([0, 255, n % 256, 10]),
        "s": "héllo \"%d\"\n" % n,
        "dec": decimal.Decimal("%d.%02d" % (n * 37 - 500, n % 100)),
        "decf": decimal.Decimal("-%d.%04d" % (n * 12345, n)),
        "day": datetime.date(2026, 1, 1) + datetime.timedelta(days=n * 40),
        "tmil": datetime.time(10, n % 60, 5, 250000),
        "tmic": datetime.time(23, 59, n % 60, 123456),
        "tsm": datetime.datetime(2026, 12, 4, 10, 0, n % 60, 250000, tzinfo=UTC),
        "tsu": datetime.datetime(1969, 7, 20, 20, 17, n % 60, 123456, tzinfo=UTC),
        "ltsm": datetime.datetime(2026, 12, 4, 10, 0, 0, 1000 * n, ),
        "id": uuid.UUID(int=n * 7919 + 1),
        "color": ["RED", "GREEN", "BLUE"][n % 3],
        "hash": bytes([n % 256, 1, 2, 3]),
        "nums": list(range(n % 5)),
        "attrs": {"k%d" % j: "v%d" % (n * j) for j in range(n % 3)},
        "opt": None if n % 2 else "opt%d" % n,
        "choice": [None, n, {"name": "c%d" % n, "tags": ["x"] * (n % 3)}][n % 3],
        "inner": {"name": "inner%d" % n, "tags": ["a", "b"][: n % 3]},
    }
    if version == 2:
        del v["s"]
        v["extra"] = "extra%d" % n
    if os.environ.get("KSEEK_AVRO_PROFILE") == "table":
        del v["choice"]
    return v


def registry(url, user_info=None):
    # KSEEK_REGISTRY_TLS: a folder of tests/kafka/secure.sh certificates, for an https registry
    # that requires a client certificate.
    conf = {"url": url}
    tls = os.environ.get("KSEEK_REGISTRY_TLS")
    if tls:
        conf["ssl.ca.location"] = os.path.join(tls, "ca.pem")
        conf["ssl.certificate.location"] = os.path.join(tls, "client.crt")
        conf["ssl.key.location"] = os.path.join(tls, "client.key")
    if user_info:
        conf["basic.auth.user.info"] = user_info
    return SchemaRegistryClient(conf)


def produce(bootstrap, url, topic, user_info=None):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        try:
            f.result(30)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
    sr = registry(url, user_info)
    # KSEEK_AVRO_KEYS=1: Avro keys (subject TOPIC-key) instead of strings.
    avro_keys = AvroSerializer(sr, json.dumps(KEY_SCHEMA)) \
        if os.environ.get("KSEEK_AVRO_KEYS") else None
    strings = StringSerializer()

    def keys(text):
        if avro_keys is None:
            return strings(text)
        return avro_keys({"name": text, "shard": len(text) % 4},
                         SerializationContext(topic, MessageField.KEY))
    values = {1: AvroSerializer(sr, json.dumps(V1)), 2: AvroSerializer(sr, json.dumps(V2))}
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    n = 0
    for version in (1, 2):
        for _ in range(20):
            ctx = SerializationContext(topic, MessageField.VALUE)
            p.produce(topic, key=keys("key%d" % n), value=values[version](event(n, version), ctx),
                      partition=n % 2)
            n += 1
    # A tombstone: a key and no value.
    p.produce(topic, key=keys("gone"), value=None, partition=0)
    assert p.flush(30) == 0, "records left unsent"
    print(n + 1)


def render(schema, value, names):
    """The deserializer's Python value as kseek documents its JSON."""
    if isinstance(schema, str) and schema in names:
        return render(names[schema], value, names)
    if isinstance(schema, list):
        if value is None:
            return None
        for branch in schema:
            if branch == "null":
                continue
            if fits(branch, value, names):
                return {branch_name(branch): render(branch, value, names)}
        raise ValueError("no branch for %r" % (value,))
    t = schema if isinstance(schema, str) else schema["type"]
    logical = None if isinstance(schema, str) else schema.get("logicalType")
    if isinstance(schema, dict) and "name" in schema and t in ("record", "enum", "fixed"):
        names[schema["name"]] = schema
        names[qualified(schema)] = schema
    if logical == "decimal":
        return "%s" % format(value, "f")
    if logical == "date":
        return value.isoformat()
    if logical == "time-millis":
        return value.strftime("%H:%M:%S") + ".%03d" % (value.microsecond // 1000)
    if logical == "time-micros":
        return value.strftime("%H:%M:%S") + ".%06d" % value.microsecond
    if logical in ("timestamp-millis", "local-timestamp-millis", "timestamp-micros"):
        digits = 6 if logical.endswith("micros") else 3
        frac = ("%06d" % value.microsecond)[:digits]
        z = "" if logical.startswith("local") else "Z"
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value.strftime("%Y-%m-%dT%H:%M:%S") + "." + frac + z
    if logical == "uuid":
        return str(value)
    if t in ("bytes", "fixed"):
        return value.decode("latin-1")
    if t == "record":
        return {f["name"]: render(f["type"], value[f["name"]], names) for f in schema["fields"]}
    if t == "array":
        return [render(schema["items"], x, names) for x in value]
    if t == "map":
        return {k: render(schema["values"], x, names) for k, x in value.items()}
    return value


def qualified(schema):
    ns = schema.get("namespace", "kseek.test")
    return schema["name"] if "." in schema["name"] else ns + "." + schema["name"]


def branch_name(branch):
    if isinstance(branch, dict):
        if branch["type"] in ("record", "enum", "fixed"):
            return qualified(branch)
        return branch["type"]
    return branch if "." in branch or branch in (
        "boolean", "int", "long", "float", "double", "bytes", "string") else "kseek.test." + branch


def fits(branch, value, names):
    t = branch if isinstance(branch, str) else branch["type"]
    if t in ("long", "int"):
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "record" or (isinstance(branch, str) and branch in names):
        return isinstance(value, dict)
    return False


def same(a, b, path, ordered=True):
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-6)
        return [] if ok else ["%s: %r != %r" % (path, a, b)]
    if isinstance(a, dict) and isinstance(b, dict):
        if (list(a) if ordered else sorted(a)) != (list(b) if ordered else sorted(b)):
            return ["%s: fields %s != %s" % (path, list(a), list(b))]
        return [m for k in a for m in same(a[k], b[k], path + "." + k, ordered)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return ["%s: %d items != %d" % (path, len(a), len(b))]
        return [m for i, (x, y) in enumerate(zip(a, b)) for m in same(x, y, "%s[%d]" % (path, i), ordered)]
    return [] if a == b and type(a) == type(b) else ["%s: %r != %r" % (path, a, b)]


def consume(bootstrap, topic, decode):
    """Every record of TOPIC as Confluent's consumer reads it: {(partition, offset):
    decode(message)}."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "kseek-compare", "enable.auto.commit": False})
    parts = c.list_topics(topic, timeout=30).topics[topic].partitions
    tps = [(p,) + c.get_watermark_offsets(TopicPartition(topic, p), timeout=30) for p in parts]
    c.assign([TopicPartition(topic, p, lo) for p, lo, _ in tps])
    want = sum(hi - lo for _, lo, hi in tps)
    records = {}
    while len(records) < want:
        m = c.poll(30)
        assert m is not None, "Confluent's consumer timed out"
        assert m.error() is None, m.error()
        records[(m.partition(), m.offset())] = decode(m)
    c.close()
    return records


def kseek_lines(path, fields):
    """kseek's JSON lines: {(partition, offset): the line's `fields`}."""
    got = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        got[(r["partition"], r["offset"])] = tuple(r[f] for f in fields) if len(fields) > 1 else r[fields[0]]
    return got


def report(expected, got, ordered=True):
    """Prints every difference and a count; exit 1 if any."""
    problems = []
    if sorted(got) != sorted(expected):
        problems.append("records: kseek %s, Confluent's consumer %s" % (sorted(got), sorted(expected)))
    for k in sorted(set(got) & set(expected)):
        problems += same(expected[k], got[k], "partition %d offset %d" % k, ordered)
    for p in problems:
        print(p)
    print("%d records compared, %d mismatches" % (len(expected), len(problems)))
    sys.exit(1 if problems else 0)


def compare(bootstrap, url, topic, kseek_path):
    sr = registry(url, os.environ.get("KSEEK_REGISTRY_USER_INFO"))
    deserializer = AvroDeserializer(sr)

    def decode(m):
        value = m.value()
        if value is None:
            return (m.key().decode(), None)
        obj = deserializer(value, SerializationContext(topic, MessageField.VALUE))
        schema = json.loads(sr.get_schema(int.from_bytes(value[1:5], "big")).schema_str)
        return (m.key().decode(), render(schema, obj, {}))
    report(consume(bootstrap, topic, decode), kseek_lines(kseek_path, ["key", "value"]))


def plain(schema, value, names):
    """The deserializer's value as pyarrow reads kseek's Parquet column: decimals, dates and
    times as Python's; uuids as their 16 bytes; maps as (key, value) lists; enums as strings."""
    if isinstance(schema, str) and schema in names:
        return plain(names[schema], value, names)
    if isinstance(schema, list):
        if value is None:
            return None
        branches = [b for b in schema if b != "null"]
        if len(branches) == 1:
            return plain(branches[0], value, names)
        # A union of several types: a struct with a field per branch, as Spark's from_avro.
        hit = next(i for i, b in enumerate(branches) if fits(b, value, names))
        return {"member%d" % i: plain(b, value, names) if i == hit else None
                for i, b in enumerate(branches)}
    t = schema if isinstance(schema, str) else schema["type"]
    logical = None if isinstance(schema, str) else schema.get("logicalType")
    if isinstance(schema, dict) and "name" in schema and t in ("record", "enum", "fixed"):
        names[schema["name"]] = schema
    if logical == "uuid":
        return value.bytes
    if logical in ("timestamp-millis", "timestamp-micros"):
        return value.astimezone(UTC)
    if logical is not None:
        return value
    if t == "record":
        return {f["name"]: plain(f["type"], value[f["name"]], names) for f in schema["fields"]}
    if t == "array":
        return [plain(schema["items"], x, names) for x in value]
    if t == "map":
        return sorted((k, plain(schema["values"], x, names)) for k, x in value.items())
    return value


def compare_table(bootstrap, url, topic, parquet_path):
    """kseek's Parquet file (read by pyarrow) against Confluent's deserializer reading every
    value in the subject's latest schema (its reader schema)."""
    import pyarrow.parquet as pq
    sr = registry(url, os.environ.get("KSEEK_REGISTRY_USER_INFO"))
    latest = sr.get_latest_version(topic + "-value").schema.schema_str
    reader = json.loads(latest)
    deserializer = AvroDeserializer(sr, schema_str=latest)
    ctx = SerializationContext(topic, MessageField.VALUE)
    keys = AvroDeserializer(sr) if os.environ.get("KSEEK_AVRO_KEYS") else None
    key_ctx = SerializationContext(topic, MessageField.KEY)

    def decode(m):
        value = None if m.value() is None else plain(reader, deserializer(m.value(), ctx), {})
        if keys is None:
            return value
        return (keys(m.key(), key_ctx), value)
    expected = consume(bootstrap, topic, decode)
    table = pq.read_table(parquet_path)
    fields = [f["name"] for f in reader["fields"]]
    got = {}
    for row in table.to_pylist():
        v = row["value"]
        if isinstance(v, bytes):
            # A column per field beside the raw value (kseek sql).
            v = {f: row[f] for f in fields}
        if v is not None:
            v = {k: (sorted(x) if isinstance(x, list) and x and isinstance(x[0], tuple) else x)
                 for k, x in v.items()}
        got[(row["partition"], row["offset"])] = v if keys is None else (row["key"], v)
    print("value column type: %s" % table.schema.field("value").type)
    print("key column type: %s" % table.schema.field("key").type)
    report(expected, got)


PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proto")


def proto_classes():
    """The message classes of tests/registry/proto, generated now by protoc (grpc_tools)."""
    import importlib
    import tempfile
    import grpc_tools
    from grpc_tools import protoc
    out = tempfile.mkdtemp(prefix="kseek-proto-")
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + PROTO, "-I" + include, "--python_out=" + out,
                      "order.proto", "common/money.proto"])
    assert rc == 0, "protoc failed"
    sys.path.insert(0, out)
    order = importlib.import_module("order_pb2")
    return {(0,): order.Order, (0, 0): order.Order.Line, (1,): order.Refund}


def proto_message(classes, n):
    from google.protobuf import timestamp_pb2, wrappers_pb2
    import common.money_pb2 as money
    Order, Line, Refund = classes[(0,)], classes[(0, 0)], classes[(1,)]
    kind = n % 5
    if kind == 3:
        return Line(sku="sku-%d" % n, quantity=n, price=money.Money(currency="EUR", units=n, nanos=500000000))
    if kind == 4:
        return Refund(order_id=n, amount=money.Money(currency="USD", units=-n))
    o = Order(id=n * 1_000_000_007, customer="customer %d \"quoted\" é" % n, status=n % 3,
              total=money.Money(currency="EUR", units=n * 3, nanos=n % 1000),
              created=timestamp_pb2.Timestamp(seconds=1_796_380_000 + n, nanos=(n % 4) * 250_000_000),
              blob=bytes([0, 255, n % 256]), ratio=n / 7.0, gift=n % 2 == 0,
              deltas=[-n, n, 0], big=2**63 + n)
    for j in range(n % 3):
        o.lines.add(sku="s%d" % j, quantity=j + 1, price=money.Money(currency="EUR", units=j))
    for j in range(n % 4):
        o.attrs["k%d" % j] = "v%d" % j
    if n % 2:
        o.card = "4111-%04d" % n
    elif n % 4 == 0:
        o.voucher = "V%d" % n
    if n % 3 == 0:
        o.note.CopyFrom(wrappers_pb2.StringValue(value="note %d" % n))
    return o


def indexes_of(cls, classes):
    return [k for k, c in classes.items() if c is cls][0]


def produce_proto(bootstrap, url, topic):
    """Registers order.proto (and money.proto, a reference) as .proto text, then writes values
    of three of its message types with ProtobufSerializer (use.latest.version)."""
    from confluent_kafka.schema_registry import Schema, SchemaReference
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        f.result(30)
    classes = proto_classes()
    sr = registry(url)
    sr.register_schema("common/money.proto", Schema(open(os.path.join(PROTO, "common/money.proto")).read(), "PROTOBUF"))
    sr.register_schema(topic + "-value", Schema(
        open(os.path.join(PROTO, "order.proto")).read(), "PROTOBUF",
        [SchemaReference("common/money.proto", "common/money.proto", 1)]))
    # Order and Refund with the .proto text registered above; Order.Line (a nested type, which
    # the serializer can't look up in the latest version) registers its file as the serializer
    # does, a base64 FileDescriptorProto: both forms reach kseek.
    latest = {"auto.register.schemas": False, "use.latest.version": True}
    serializers = {k: ProtobufSerializer(c, sr, {} if k == (0, 0) else latest) for k, c in classes.items()}
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    n = 0
    for n in range(30):
        m = proto_message(classes, n)
        ctx = SerializationContext(topic, MessageField.VALUE)
        p.produce(topic, key=b"k%d" % n, value=serializers[indexes_of(type(m), classes)](m, ctx), partition=n % 2)
    p.produce(topic, key=b"gone", value=None, partition=0)
    assert p.flush(30) == 0
    print(31)


def message_indexes(value):
    """The message indexes of a Confluent-framed Protobuf value."""
    at = 5

    def varint():
        nonlocal at
        shift = result = 0
        while True:
            b = value[at]
            at += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return (result >> 1) ^ -(result & 1)
    count = varint()
    return (0,) if count == 0 else tuple(varint() for _ in range(count))


def compare_proto(bootstrap, url, topic, kseek_path):
    """Confluent's ProtobufDeserializer (one per message type, picked by the message indexes)
    against kseek's JSON lines, as MessageToDict prints the messages."""
    from google.protobuf import json_format
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    classes = proto_classes()
    sr = registry(url)
    deserializers = {k: ProtobufDeserializer(c, {}, sr) for k, c in classes.items()}
    ctx = SerializationContext(topic, MessageField.VALUE)

    def decode(m):
        v = m.value()
        return None if v is None else json_format.MessageToDict(deserializers[message_indexes(v)](v, ctx))
    # Protobuf maps have no order.
    report(consume(bootstrap, topic, decode), kseek_lines(kseek_path, ["value"]), ordered=False)


JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Shipment",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "to": {"type": "string"},
        "weight": {"type": "number"},
        "express": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
        "note": {"type": ["string", "null"]},
    },
    "required": ["id", "to"],
}


def shipment(n):
    return {"id": n, "to": "city %d \u00e9 \"q\"" % n, "weight": n * 1.25, "express": n % 2 == 0,
            "items": [{"sku": "s%d" % j} for j in range(n % 3)], "note": None if n % 2 else "n%d" % n}


def produce_json(bootstrap, url, topic):
    """Values written by JSONSerializer (JSON Schema, Confluent's framing), string keys."""
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        f.result(30)
    ser = JSONSerializer(json.dumps(JSON_SCHEMA), registry(url))
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for n in range(20):
        ctx = SerializationContext(topic, MessageField.VALUE)
        p.produce(topic, key=b"k%d" % n, value=ser(shipment(n), ctx), partition=n % 2)
    assert p.flush(30) == 0
    print(20)


def compare_json(bootstrap, url, topic, kseek_path):
    """JSONDeserializer's values against kseek's lines."""
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    de = JSONDeserializer(None, schema_registry_client=registry(url))
    ctx = SerializationContext(topic, MessageField.VALUE)
    report(consume(bootstrap, topic, lambda m: de(m.value(), ctx)),
           kseek_lines(kseek_path, ["value"]), ordered=False)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "produce":
        produce(*sys.argv[2:6])
    elif cmd == "compare":
        compare(*sys.argv[2:6])
    elif cmd == "compare-table":
        compare_table(*sys.argv[2:6])
    elif cmd == "produce-json":
        produce_json(*sys.argv[2:5])
    elif cmd == "compare-json":
        compare_json(*sys.argv[2:6])
    elif cmd == "produce-proto":
        produce_proto(*sys.argv[2:5])
    elif cmd == "compare-proto":
        compare_proto(*sys.argv[2:6])
    else:
        sys.exit("usage: confluent.py produce|compare ...")

#!/usr/bin/env python3
"""Values for the Schema Registry decoding benchmark (benches/registry/run), and the
confluent-kafka side of it.

    values.py make REGISTRY_URL OUT N
        N Avro values of about 200 bytes (15 fields: strings, longs, doubles, a decimal, a
        timestamp, an enum, an optional string, an array, a nested record), serialized by
        Confluent's AvroSerializer (topic "bench", subject "bench-value"), to OUT as
        <4-byte big-endian length><value> records.
    values.py python REGISTRY_URL IN RUNS
        Confluent's AvroDeserializer over every value of IN, RUNS times; prints one line per
        run: `python <records> <seconds>` (CPU time of this process).
    values.py make-proto REGISTRY_URL OUT N, values.py python-proto REGISTRY_URL IN RUNS
        The same with Protobuf (bench.proto: the same 15 fields, the decimal as cents),
        ProtobufSerializer and ProtobufDeserializer (to message objects).
"""
import datetime
import decimal
import json
import struct
import sys
import time

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

SCHEMA = {
    "type": "record", "name": "Order", "namespace": "bench", "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "email", "type": "string"},
        {"name": "country", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "quantity", "type": "int"},
        {"name": "price", "type": "double"},
        {"name": "discount", "type": "double"},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED", "RETURNED"]}},
        {"name": "coupon", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": "string"},
            {"name": "city", "type": "string"},
            {"name": "zip", "type": "string"}]}},
        {"name": "gift", "type": "boolean"},
        {"name": "channel", "type": "string"},
    ],
}


def value(n):
    return {
        "order_id": 10_000_000 + n,
        "customer": "customer-%06d Firstname Lastname" % (n % 50000),
        "email": "user%06d@example.com" % (n % 50000),
        "country": ["DE", "FR", "US", "JP", "BR"][n % 5],
        "amount": decimal.Decimal("%d.%02d" % (n % 100000, n % 100)),
        "quantity": 1 + n % 9,
        "price": 9.99 + (n % 1000) / 7.0,
        "discount": (n % 30) / 100.0,
        "created": datetime.datetime(2026, 12, 4, 10, 0, tzinfo=datetime.timezone.utc)
        + datetime.timedelta(milliseconds=n * 37),
        "status": ["NEW", "PAID", "SHIPPED", "RETURNED"][n % 4],
        "coupon": None if n % 3 else "WINTER%02d" % (n % 100),
        "tags": ["priority", "gift-wrap", "b2b"][: n % 4],
        "address": {"street": "%d Long Street Name, Building B, Floor 3" % (n % 999), "city": "Springfield-on-the-River", "zip": "%05d" % (n % 99999)},
        "gift": n % 7 == 0,
        "channel": ["web", "app", "store"][n % 3],
    }


def make(url, out, n):
    sr = SchemaRegistryClient({"url": url})
    ser = AvroSerializer(sr, json.dumps(SCHEMA))
    ctx = SerializationContext("bench", MessageField.VALUE)
    total = 0
    with open(out, "wb") as f:
        for i in range(int(n)):
            v = ser(value(i), ctx)
            total += len(v)
            f.write(struct.pack(">I", len(v)))
            f.write(v)
    print("%d values, %.1f bytes on average" % (int(n), total / int(n)))


def load(path):
    data = open(path, "rb").read()
    values, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from(">I", data, at)
        values.append(data[at + 4:at + 4 + n])
        at += 4 + n
    return values


def python(url, path, runs):
    values = load(path)
    de = AvroDeserializer(SchemaRegistryClient({"url": url}))
    ctx = SerializationContext("bench", MessageField.VALUE)
    de(values[0], ctx)  # the schema fetched and parsed before timing
    for _ in range(int(runs)):
        start = time.process_time()
        for v in values:
            de(v, ctx)
        print("python %d %.6f" % (len(values), time.process_time() - start), flush=True)


def proto_class():
    import importlib
    import os
    import tempfile
    import grpc_tools
    from grpc_tools import protoc
    here = os.path.dirname(os.path.abspath(__file__))
    out = tempfile.mkdtemp(prefix="kseek-bench-proto-")
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    assert protoc.main(["protoc", "-I" + here, "-I" + include, "--python_out=" + out, "bench.proto"]) == 0
    sys.path.insert(0, out)
    return importlib.import_module("bench_pb2").Order


def make_proto(url, out, n):
    from google.protobuf import timestamp_pb2
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    Order = proto_class()
    ser = ProtobufSerializer(Order, SchemaRegistryClient({"url": url}))
    ctx = SerializationContext("bench-proto", MessageField.VALUE)
    total = 0
    with open(out, "wb") as f:
        for i in range(int(n)):
            v = value(i)
            created = v["created"]
            m = Order(order_id=v["order_id"], customer=v["customer"], email=v["email"], country=v["country"],
                      amount_cents=int(v["amount"] * 100), quantity=v["quantity"], price=v["price"],
                      discount=v["discount"], created=timestamp_pb2.Timestamp(seconds=int(created.timestamp()), nanos=created.microsecond * 1000),
                      status=["NEW", "PAID", "SHIPPED", "RETURNED"].index(v["status"]), coupon=v["coupon"] or "",
                      tags=v["tags"], address=Order.Address(**v["address"]), gift=v["gift"], channel=v["channel"])
            b = ser(m, ctx)
            total += len(b)
            f.write(struct.pack(">I", len(b)))
            f.write(b)
    print("%d values, %.1f bytes on average" % (int(n), total / int(n)))


def python_proto(url, path, runs):
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    Order = proto_class()
    values = load(path)
    de = ProtobufDeserializer(Order, {}, SchemaRegistryClient({"url": url}))
    ctx = SerializationContext("bench-proto", MessageField.VALUE)
    de(values[0], ctx)
    for _ in range(int(runs)):
        start = time.process_time()
        for v in values:
            de(v, ctx)
        print("python-protobuf %d %.6f" % (len(values), time.process_time() - start), flush=True)


if __name__ == "__main__":
    {"make": make, "python": python, "make-proto": make_proto, "python-proto": python_proto}[sys.argv[1]](*sys.argv[2:])

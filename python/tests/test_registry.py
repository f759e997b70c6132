"""``value_format="avro"``: values decoded through a Schema Registry with Confluent's REST API
(tests/registry/server.py) into columns, against what Confluent's AvroDeserializer (the
confluent-kafka package) reads from the same topic, on a real broker."""

from __future__ import annotations

import pyarrow as pa
import pytest

import kseek
from conftest import avro_produce, confluent_values, value_mismatches, values_of


def test_avro_values_equal_confluents_deserializer(bootstrap, registry_url, avro_topic):
    fields, expected = confluent_values(bootstrap, registry_url, avro_topic)
    reader = kseek.read(avro_topic, bootstrap=bootstrap, value_format="avro",
                        schema_registry=registry_url, batch_rows=7)
    table = reader.read_all()
    assert table.num_rows == 41
    assert table.schema.names[:8] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    assert table.schema.names[8:] == fields
    types = {f.name: str(f.type) for f in table.schema}
    assert types["dec"] == "decimal128(9, 2)"
    assert types["tsm"] == "timestamp[ms, tz=+00:00]"
    assert types["choice"].startswith("struct<member0: int64, member1: struct<name: string")
    got = values_of(table.to_pylist(), fields)
    assert value_mismatches(expected, got) == []


def test_registry_from_properties_and_splits(bootstrap, registry_url, avro_topic):
    """The URL as a consumer's client.properties has it; splits read one by one give the rows."""
    props = {"schema.registry.url": registry_url}
    plan = kseek.plan(avro_topic, bootstrap=bootstrap)
    splits = plan.splits(max_records=5)
    assert len(splits) > 2
    table = kseek.read(splits, bootstrap=bootstrap, properties=props, value_format="avro").read_all()
    fields, expected = confluent_values(bootstrap, registry_url, avro_topic)
    assert value_mismatches(expected, values_of(table.to_pylist(), fields)) == []


def test_values_that_do_not_decode(kafka, bootstrap, registry_url):
    topic = avro_produce(bootstrap, registry_url)
    # A value without Confluent's framing, written by Kafka's Java producer after the 41.
    [bad] = kafka.produce(topic, [{"partition": 0, "key": "k", "value": "not avro"}])
    where = f"partition 0 offset {bad['offset']}"
    with pytest.raises(kseek.KafkaError, match=where) as failed:
        kseek.read(topic, bootstrap=bootstrap, value_format="avro",
                   schema_registry=registry_url).read_all()
    assert "\n" not in str(failed.value) and "on_decode_error" in str(failed.value)
    skipped = kseek.read(topic, bootstrap=bootstrap, value_format="avro",
                         schema_registry=registry_url, on_decode_error="skip").read_all()
    assert skipped.num_rows == 41
    nulled = kseek.read(topic, bootstrap=bootstrap, value_format="avro",
                        schema_registry=registry_url, on_decode_error="null").read_all()
    assert nulled.num_rows == 42
    row = [r for r in nulled.to_pylist() if (r["partition"], r["offset"]) == (0, bad["offset"])]
    assert row[0]["value"] == b"not avro" and row[0]["l"] is None


def test_registry_errors_are_one_line(bootstrap, registry_url, avro_topic, window_like_topic):
    with pytest.raises(kseek.ConfigError, match="value_format"):
        kseek.read(avro_topic, bootstrap=bootstrap, value_format="protobuf")
    with pytest.raises(kseek.ConfigError, match="schema.registry.url"):
        kseek.read(avro_topic, bootstrap=bootstrap, value_format="avro")
    with pytest.raises(kseek.ConfigError, match="one topic"):
        kseek.read([avro_topic, window_like_topic], bootstrap=bootstrap, value_format="avro",
                   schema_registry=registry_url)
    with pytest.raises(kseek.ConfigError, match="is not in the Schema Registry"):
        kseek.read(window_like_topic, bootstrap=bootstrap, value_format="avro",
                   schema_registry=registry_url)
    with pytest.raises(kseek.ConfigError, match="on_decode_error"):
        kseek.read(avro_topic, bootstrap=bootstrap, value_format="avro",
                   schema_registry=registry_url, on_decode_error="ignore")


@pytest.fixture(scope="module")
def window_like_topic(kafka):
    """A topic with no subject in the registry."""
    topic = kafka.topic(partitions=1)
    kafka.produce(topic, [{"key": "a", "value": "1"}])
    return topic


def test_polars_takes_the_typed_columns(bootstrap, registry_url, avro_topic):
    polars = pytest.importorskip("polars")
    frame = polars.from_arrow(kseek.read(avro_topic, bootstrap=bootstrap, value_format="avro",
                                         schema_registry=registry_url).read_all())
    assert frame.height == 41
    assert isinstance(frame.schema["choice"], polars.Struct)


def test_reader_schema_by_version(bootstrap, registry_url, avro_topic):
    """value_schema names the reader schema, as the command line's --value-schema: version 2 is
    the latest; version 1 has "s" (no default), which version 2 removed, so version 2's values
    do not decode in it."""
    def read(**kw):
        return kseek.read(avro_topic, bootstrap=bootstrap, value_format="avro",
                          schema_registry=registry_url, **kw).read_all()

    latest = read()
    assert read(value_schema="version:2").to_pylist() == latest.to_pylist()
    v1 = read(value_schema="version:1", on_decode_error="skip")
    assert "s" in v1.schema.names and "extra" not in v1.schema.names
    assert 0 < v1.num_rows < latest.num_rows
    with pytest.raises(kseek.KafkaError, match="partition . offset"):
        read(value_schema="version:1")
    with pytest.raises(kseek.ConfigError, match="give latest, version:N or id:N"):
        read(value_schema="v1")
    with pytest.raises(kseek.ConfigError, match="version 9 of subject"):
        read(value_schema="version:9")

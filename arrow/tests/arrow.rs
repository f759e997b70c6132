//! kseek-arrow against a real Kafka 4.4 broker: the records written by Kafka's own Java
//! producer and read back by its Java consumer (the independent oracle) are exactly the rows
//! of the Arrow record batches, column by column and type by type, whatever the batch limits.

#[path = "../../tests/support/mod.rs"]
mod support;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use kseek::{End, ReadOptions, ReadSpec, Start};
use kseek_arrow::{schema, ArrowStream, BatchLimits};
use support::{NewRecord, Record};

/// 2026-01-01T10:00:00Z in ms.
const TEN: i64 = 1_767_261_600_000;

/// The rows of `batch` as the test support's records, with the timestamp type of each.
fn rows(batch: &RecordBatch, topic: &str) -> Vec<(Record, i32)> {
    let column = |name: &str| batch.column_by_name(name).unwrap();
    let (key, value) = (
        column("key").as_binary::<i32>(),
        column("value").as_binary::<i32>(),
    );
    let topics = column("topic").as_string::<i32>();
    let partition = column("partition").as_primitive::<Int32Type>();
    let offset = column("offset").as_primitive::<Int64Type>();
    let timestamp = column("timestamp").as_primitive::<TimestampMicrosecondType>();
    let timestamp_type = column("timestampType").as_primitive::<Int32Type>();
    let headers = column("headers").as_list::<i32>();
    let bytes = |a: &arrow_array::BinaryArray, i: usize| a.is_valid(i).then(|| a.value(i).to_vec());
    (0..batch.num_rows())
        .map(|i| {
            assert_eq!(topics.value(i), topic);
            assert_eq!(timestamp.value(i) % 1000, 0, "whole milliseconds");
            let list = headers.value(i);
            let items = list.as_struct();
            let (names, values) = (
                items.column(0).as_string::<i32>(),
                items.column(1).as_binary::<i32>(),
            );
            let record = Record {
                partition: partition.value(i),
                offset: offset.value(i),
                timestamp: timestamp.value(i) / 1000,
                key: bytes(key, i),
                value: bytes(value, i),
                headers: (0..items.len())
                    .map(|h| (names.value(h).to_owned(), bytes(values, h)))
                    .collect(),
            };
            (record, timestamp_type.value(i))
        })
        .collect()
}

/// Reads all of `topic` through an [`ArrowStream`] with `limits`.
async fn read_all(bootstrap: &str, topic: &str, limits: BatchLimits) -> Vec<RecordBatch> {
    let client = kseek::Client::connect([bootstrap]).await.unwrap();
    let plan = client
        .resolve(&ReadSpec::new([topic], Start::Earliest, End::Latest))
        .await
        .unwrap();
    let mut stream = ArrowStream::new(client.read(plan, ReadOptions::default()), limits);
    let mut batches = Vec::new();
    while let Some(batch) = stream.next().await {
        batches.push(batch.unwrap());
    }
    batches
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_batches_hold_exactly_what_the_java_consumer_reads() {
    let broker = support::broker();
    let topic = broker.new_topic("kseek-arrow", 3, &[]);
    // Keys and values, null or not, empty or not; headers with null and empty values and a
    // key that repeats; records of a few hundred bytes so byte limits cut batches too.
    let input: Vec<support::Input> = (0..240)
        .map(|i: i64| {
            let mut r = NewRecord::new()
                .partition((i % 3) as i32)
                .timestamp(TEN + i * 1000 + i % 7);
            if i % 5 != 0 {
                r = r.key(format!("user-{i}"));
            }
            if i % 11 != 0 {
                r = r.value("v".repeat((i % 4 * 100) as usize) + &i.to_string());
            }
            if i % 2 == 0 {
                r = r
                    .header("trace", Some(format!("t{i}").as_bytes()))
                    .header("nil", None);
            }
            if i % 3 == 0 {
                r = r
                    .header("trace", Some(b""))
                    .header("ünïcode", Some(b"\x00\xff"));
            }
            r.into()
        })
        .collect();
    broker.produce(&topic, &input);
    let mut expected = broker.consume(&topic);
    expected.sort_by_key(|r| (r.partition, r.offset));
    assert_eq!(expected.len(), 240);

    for limits in [
        BatchLimits::default(),
        BatchLimits::new(7, usize::MAX),
        BatchLimits::new(1000, 700),
    ] {
        let batches = read_all(broker.bootstrap(), &topic, limits).await;
        let mut got = Vec::new();
        for batch in &batches {
            assert_eq!(batch.schema(), schema(), "{limits:?}");
            assert!(
                batch.num_rows() >= 1 && batch.num_rows() <= limits.rows,
                "{limits:?}"
            );
            got.extend(rows(batch, &topic));
        }
        assert!(
            got.iter().all(|(_, t)| *t == 0),
            "CreateTime is 0 as in Spark"
        );
        let mut got: Vec<Record> = got.into_iter().map(|(r, _)| r).collect();
        got.sort_by_key(|r| (r.partition, r.offset));
        assert_eq!(got, expected, "{limits:?}");
        if limits.rows == 7 {
            assert!(batches.len() >= 240 / 7, "{} batches", batches.len());
        }
        if limits.bytes == 700 {
            // Cut by bytes: a batch ends at the record that takes it to 700 bytes of keys,
            // values and headers, so none holds 700 plus more than one record (at most 340).
            for batch in &batches {
                let size = |name: &str| {
                    let a = batch.column_by_name(name).unwrap().as_binary::<i32>();
                    a.value_data().len()
                };
                assert!(size("key") + size("value") < 700 + 340, "{batch:?}");
            }
            assert!(batches.len() > 20, "{} batches", batches.len());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_append_time_topics_have_timestamp_type_1_and_the_broker_s_time() {
    let broker = support::broker();
    let topic = broker.new_topic(
        "kseek-arrow-lat",
        1,
        &[("message.timestamp.type", "LogAppendTime")],
    );
    let input: Vec<support::Input> = (0..20)
        .map(|i| {
            NewRecord::new()
                .partition(0)
                .timestamp(TEN + i)
                .value(format!("{i}"))
                .into()
        })
        .collect();
    broker.produce(&topic, &input);
    let expected = broker.consume(&topic);
    let batches = read_all(broker.bootstrap(), &topic, BatchLimits::default()).await;
    let got: Vec<(Record, i32)> = batches.iter().flat_map(|b| rows(b, &topic)).collect();
    assert!(got.iter().all(|(_, t)| *t == 1));
    let got: Vec<Record> = got.into_iter().map(|(r, _)| r).collect();
    assert_eq!(got, expected);
    assert!(
        got.iter().all(|r| r.timestamp > TEN + 1_000_000),
        "the broker's time"
    );
}

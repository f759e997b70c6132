//! The test foundation itself: a real broker, Kafka's Java producer and consumer, and the
//! helpers in `support` agree on 1,000 records, on every supported Kafka version.

mod support;

use support::{brokers, Input, NewRecord, Record};

const RECORDS: i64 = 1_000;
const PARTITIONS: i32 = 3;
const BASE_TS: i64 = 1_700_000_000_000;

/// Record `i` of the smoke data: keys, values (one in seven binary, one in eleven
/// null), headers (one of them null) and explicit, strictly increasing timestamps.
fn record(i: i64) -> NewRecord {
    let mut r = NewRecord::new()
        .partition((i % i64::from(PARTITIONS)) as i32)
        .timestamp(BASE_TS + i * 1_000)
        .header("seq", Some(i.to_string().as_bytes()))
        .header("empty", None);
    if i % 5 != 0 {
        r = r.key(format!("key-{i}"));
    }
    if i % 7 == 0 {
        r = r.value([0xff, 0x00, (i % 256) as u8]);
    } else if i % 11 != 0 {
        r = r.value(format!("value-{i}-{}", "x".repeat((i % 50) as usize)));
    }
    r
}

#[test]
fn java_producer_and_consumer_agree_on_1000_records() {
    for broker in brokers() {
        let topic = broker.new_topic("smoke", PARTITIONS, &[]);
        let input: Vec<NewRecord> = (0..RECORDS).map(record).collect();
        let lines: Vec<Input> = input.iter().cloned().map(Input::from).collect();

        let written = broker.produce(&topic, &lines);

        // The producer reports each record where it was asked to go, unchanged.
        assert_eq!(written.len(), input.len());
        for (sent, stored) in input.iter().zip(&written) {
            assert_eq!(Some(stored.partition), sent.partition);
            assert_eq!(Some(stored.timestamp), sent.timestamp);
            assert_eq!(stored.key, sent.key);
            assert_eq!(stored.value, sent.value);
            assert_eq!(stored.headers, sent.headers);
        }
        // Offsets are dense from zero in every partition, in send order.
        for p in 0..PARTITIONS {
            let offsets: Vec<i64> = written
                .iter()
                .filter(|r| r.partition == p)
                .map(|r| r.offset)
                .collect();
            let dense: Vec<i64> = (0..offsets.len() as i64).collect();
            assert_eq!(offsets, dense, "partition {p} on {:?}", broker.version());
        }

        // Kafka's own consumer reads back exactly what was written.
        let mut expected: Vec<Record> = written.clone();
        expected.sort();
        let read = broker.consume(&topic);
        assert_eq!(
            read.len(),
            expected.len(),
            "record count on {:?}",
            broker.version()
        );
        for (want, got) in expected.iter().zip(&read) {
            assert_eq!(want, got, "on {:?}", broker.version());
        }
    }
}

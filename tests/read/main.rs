//! `Client::read` against real brokers (Kafka 4.4, 3.9 and 2.8): exact record sets compared with
//! what Kafka's Java producer reports it wrote, and the ways a read ends (docs/reading-by-time.md
//! points 3, 4, 5, 6, 7, 10, 11 and 12).

mod admin;
#[path = "../support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use admin::{create_partitions, delete_records};
use kseek::read::{OutOfRange, ReadOptions, TimeFilter};
use kseek::{
    Client, ClientConfig, End, ErrorKind, IsolationLevel, PartitionPlan, Plan, ReadSpec, Start,
};
use kseek_protocol::Uuid;
use support::{Broker, Input, Isolation, NewRecord, OffsetQuery, ProduceOptions, Record};

/// How long any read in these tests may take before the test fails instead of hanging.
const READ_LIMIT: Duration = Duration::from_secs(60);

async fn client(broker: &Broker) -> Client {
    Client::connect(broker.bootstrap().split(','))
        .await
        .unwrap()
}

fn isolation(level: IsolationLevel) -> Isolation {
    if level == IsolationLevel::READ_COMMITTED {
        Isolation::ReadCommitted
    } else {
        Isolation::ReadUncommitted
    }
}

/// A plan from Java's ListOffsets answers, resolved as the contract says: a start with no
/// match is the end, an end with no match is the last fetchable offset.
fn java_plan(
    broker: &Broker,
    topic: &str,
    start: OffsetQuery,
    end: OffsetQuery,
    level: IsolationLevel,
) -> Plan {
    let iso = isolation(level);
    let latest = broker.list_offsets(topic, OffsetQuery::Latest, iso);
    let ends = broker.list_offsets(topic, end, iso);
    let starts = broker.list_offsets(topic, start, iso);
    let earliest = broker.list_offsets(topic, OffsetQuery::Earliest, iso);
    let partitions = latest
        .iter()
        .zip(&ends)
        .zip(&starts)
        .zip(&earliest)
        .map(|(((latest, end), start), earliest)| {
            let end = if end.offset < 0 {
                latest.offset
            } else {
                end.offset
            };
            let start = if start.offset < 0 { end } else { start.offset };
            offsets(
                topic,
                latest.partition,
                start,
                Some(end),
                earliest.offset,
                latest.offset,
            )
        })
        .collect();
    Plan {
        partitions,
        isolation: level,
    }
}

/// kseek's own resolution of `start..end` on `topic` (read_uncommitted).
async fn kseek_plan(client: &Client, topic: &str, start: Start, end: End) -> Plan {
    kseek_plan_at(client, topic, start, end, IsolationLevel::READ_UNCOMMITTED).await
}

/// [`kseek_plan`] at an isolation level.
async fn kseek_plan_at(
    client: &Client,
    topic: &str,
    start: Start,
    end: End,
    level: IsolationLevel,
) -> Plan {
    let mut spec = ReadSpec::new([topic], start, end);
    spec.isolation = level;
    client.resolve(&spec).await.unwrap()
}

fn offsets(
    topic: &str,
    partition: i32,
    start: i64,
    end: Option<i64>,
    log_start_offset: i64,
    last_fetchable_offset: i64,
) -> PartitionPlan {
    PartitionPlan {
        topic: topic.to_owned(),
        topic_id: Uuid::ZERO,
        partition,
        start,
        end,
        log_start_offset,
        last_fetchable_offset,
        leader_epoch: -1,
        adjusted: None,
    }
}

/// Reads `plan` to its end through the per-record stream, sorted by partition and offset.
async fn read_records(client: &Client, plan: Plan, options: ReadOptions) -> Vec<Record> {
    let mut stream = client.read(plan, options).records();
    let mut out = Vec::new();
    tokio::time::timeout(READ_LIMIT, async {
        while let Some(r) = stream.next().await {
            out.push(Record::from(&r.unwrap()));
        }
    })
    .await
    .expect("the read ends");
    assert!(
        stream.positions().iter().all(|p| p.done),
        "{:?}",
        stream.positions()
    );
    out.sort();
    out
}

/// Reads `plan` to its end through the batch stream (zero-copy records), sorted.
async fn read_batches(client: &Client, plan: Plan, options: ReadOptions) -> Vec<Record> {
    let mut stream = client.read(plan, options);
    let mut out = Vec::new();
    tokio::time::timeout(READ_LIMIT, async {
        while let Some(batch) = stream.next().await {
            let batch = batch.unwrap();
            out.extend(batch.to_records().unwrap().iter().map(Record::from));
        }
    })
    .await
    .expect("the read ends");
    out.sort();
    out
}

async fn next_record(stream: &mut kseek::RecordStream) -> kseek::ReadRecord {
    tokio::time::timeout(READ_LIMIT, stream.next())
        .await
        .expect("a record in time")
        .expect("the stream goes on")
        .unwrap()
}

fn record(partition: i32, ts: i64, key: &str, value: &str) -> Input {
    NewRecord::new()
        .partition(partition)
        .timestamp(ts)
        .key(key)
        .value(value)
        .header("h", Some(format!("{key}-h").as_bytes()))
        .header("null", None)
        .into()
}

fn in_range(records: &[Record], plan: &Plan) -> Vec<Record> {
    let mut out: Vec<Record> = records
        .iter()
        .filter(|r| {
            plan.partitions.iter().any(|p| {
                p.partition == r.partition
                    && r.offset >= p.start
                    && p.end.is_none_or(|end| r.offset < end)
            })
        })
        .cloned()
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn reads_between_two_timestamps_across_three_partitions_one_empty() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-ts", 3, &[]);
        let base = 1_700_000_000_000;
        let mut input = Vec::new();
        for i in 0..20 {
            // Partitions 0 and 1 get data; partition 2 stays empty.
            input.push(record(
                i % 2,
                base + i64::from(i) * 1000,
                &format!("k{i}"),
                &format!("v{i}"),
            ));
            if i % 7 == 6 {
                input.push(Input::Flush);
            }
        }
        let written = broker.produce(&topic, &input);
        assert_eq!(written.len(), 20);
        let (t1, t2) = (base + 4_500, base + 15_000);
        let client = client(broker).await;
        let plan = kseek_plan(&client, &topic, Start::Timestamp(t1), End::Timestamp(t2)).await;
        assert!(plan.partitions[2].is_empty(), "{plan:?}");
        // The same ranges as Java's ListOffsets answers give.
        let java = java_plan(
            broker,
            &topic,
            OffsetQuery::Timestamp(t1),
            OffsetQuery::Timestamp(t2),
            IsolationLevel::READ_UNCOMMITTED,
        );
        assert_eq!(support::ranges(&plan), support::ranges(&java));
        let expected: Vec<Record> = {
            let mut e: Vec<Record> = written
                .iter()
                .filter(|r| r.timestamp >= t1 && r.timestamp < t2)
                .cloned()
                .collect();
            e.sort();
            e
        };
        // The timestamps are in order, so the offset range is exactly the time range.
        assert_eq!(expected, in_range(&written, &plan));
        assert_eq!(expected.len(), 10);

        let got = read_records(&client, plan.clone(), ReadOptions::default()).await;
        assert_eq!(got, expected, "{:?}", broker.version());
        let got = read_batches(&client, plan.clone(), ReadOptions::default()).await;
        assert_eq!(got, expected);

        // Positions: every partition at its end, with the epoch of the last record's batch.
        let mut stream = client.read(plan.clone(), ReadOptions::default());
        while let Some(b) = stream.next().await {
            b.unwrap();
        }
        for (pos, p) in stream.positions().iter().zip(&plan.partitions) {
            assert_eq!(
                (pos.topic.as_str(), pos.partition),
                (topic.as_str(), p.partition)
            );
            assert_eq!(pos.next_offset, p.end.unwrap());
            assert!(pos.done);
            if p.is_empty() {
                assert_eq!(pos.leader_epoch, -1);
            } else {
                assert!(pos.leader_epoch >= 0, "{pos:?}");
            }
        }
        assert!(stream.data_loss().is_empty());
    }
}

#[tokio::test]
async fn empty_ranges_end_at_once() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-empty", 2, &[]);
        broker.produce(
            &topic,
            &[record(0, 1_000, "a", "b"), record(0, 2_000, "c", "d")],
        );
        let client = client(broker).await;
        // A long max wait: a fetch would show as a delay.
        let options = ReadOptions::default().max_wait(Duration::from_secs(10));

        // latest..latest: nothing to read on both partitions (one has data, one is empty).
        let plan = kseek_plan(&client, &topic, Start::Latest, End::Latest).await;
        assert!(plan.is_empty());
        let started = Instant::now();
        assert_eq!(read_records(&client, plan, options.clone()).await, []);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );

        // A timestamp after every record: the start resolves to the end.
        let plan = kseek_plan(&client, &topic, Start::Timestamp(10_000), End::Latest).await;
        assert!(plan.is_empty(), "{plan:?}");
        let started = Instant::now();
        assert_eq!(read_records(&client, plan, options.clone()).await, []);
        assert!(started.elapsed() < Duration::from_secs(2));

        // No partitions at all, and a start beyond the end: both end at once.
        let started = Instant::now();
        let nothing = Plan {
            partitions: vec![],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        assert_eq!(read_records(&client, nothing, options.clone()).await, []);
        let backwards = Plan {
            partitions: vec![offsets(&topic, 0, 2, Some(1), 0, 2)],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        let mut stream = client.read(backwards, options.clone());
        assert!(stream.next().await.is_none());
        assert_eq!(stream.positions()[0].next_offset, 2);
        assert!(stream.positions()[0].done);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn a_range_ending_on_a_transaction_marker_ends() {
    for broker in support::brokers_with_transactions() {
        let topic = broker.new_topic("read-marker", 1, &[]);
        let options = ProduceOptions {
            transactional_id: Some(support::unique_name("txn")),
            ..ProduceOptions::default()
        };
        let written = broker.produce_with(
            &topic,
            &options,
            &[
                Input::Begin,
                record(0, 1_000, "a", "1"),
                record(0, 2_000, "b", "2"),
                Input::Commit,
            ],
        );
        let written: Vec<Record> = written.into_iter().map(|w| w.record).collect();
        let client = client(broker).await;
        for level in [
            IsolationLevel::READ_UNCOMMITTED,
            IsolationLevel::READ_COMMITTED,
        ] {
            let plan = kseek_plan_at(&client, &topic, Start::Earliest, End::Latest, level).await;
            // The end is after the commit marker: no record is at end - 1.
            assert_eq!(plan.partitions[0].end, Some(3), "{plan:?}");
            let options = ReadOptions::default().max_wait(Duration::from_secs(10));
            let started = Instant::now();
            assert_eq!(read_records(&client, plan.clone(), options).await, written);
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{:?}",
                started.elapsed()
            );

            // An end exactly on the marker (offset 2) ends too.
            let mut plan = plan;
            plan.partitions[0].end = Some(2);
            let started = Instant::now();
            let got = read_records(
                &client,
                plan,
                ReadOptions::default().max_wait(Duration::from_secs(10)),
            )
            .await;
            assert_eq!(got, written);
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    }
}

#[tokio::test]
async fn read_committed_skips_aborted_records() {
    for broker in support::brokers_with_transactions() {
        let topic = broker.new_topic("read-abort", 1, &[]);
        let options = ProduceOptions {
            transactional_id: Some(support::unique_name("txn")),
            ..ProduceOptions::default()
        };
        let written = broker.produce_with(
            &topic,
            &options,
            &[
                Input::Begin,
                record(0, 1_000, "a", "committed-1"),
                Input::Commit,
                Input::Begin,
                record(0, 2_000, "b", "aborted-1"),
                record(0, 3_000, "c", "aborted-2"),
                Input::Abort,
                Input::Begin,
                record(0, 4_000, "d", "committed-2"),
                Input::Commit,
            ],
        );
        assert_eq!(written.iter().filter(|w| w.aborted).count(), 2);
        let all: Vec<Record> = written.iter().map(|w| w.record.clone()).collect();
        let committed: Vec<Record> = written
            .iter()
            .filter(|w| !w.aborted)
            .map(|w| w.record.clone())
            .collect();
        let client = client(broker).await;

        let plan_c = kseek_plan_at(
            &client,
            &topic,
            Start::Earliest,
            End::Latest,
            IsolationLevel::READ_COMMITTED,
        )
        .await;
        assert_eq!(
            read_records(&client, plan_c.clone(), ReadOptions::default()).await,
            committed
        );
        // The Java consumer agrees.
        let java = broker.consume_with(
            &topic,
            &support::ConsumeOptions {
                isolation: Isolation::ReadCommitted,
                ..Default::default()
            },
        );
        assert_eq!(java, committed);

        let plan_u = kseek_plan(&client, &topic, Start::Earliest, End::Latest).await;
        assert_eq!(
            read_records(&client, plan_u, ReadOptions::default()).await,
            all
        );
    }
}

#[tokio::test]
async fn every_codec_reads_back_exactly() {
    for broker in support::brokers() {
        let client = client(broker).await;
        for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
            let topic = broker.new_topic(&format!("read-{codec}"), 2, &[]);
            let options = ProduceOptions {
                compression: Some(codec.to_owned()),
                linger_ms: Some(50),
                ..ProduceOptions::default()
            };
            let input: Vec<Input> = (0..200)
                .map(|i| {
                    // Compressible values, some large, and null keys/values in the mix.
                    let mut r = NewRecord::new()
                        .partition(i % 2)
                        .timestamp(1_600_000_000_000 + i64::from(i))
                        .value(format!("{codec}-{i}-").repeat(1 + (i as usize % 50)));
                    if i % 10 != 0 {
                        r = r.key(format!("key-{i}"));
                    }
                    if i % 17 == 0 {
                        r.value = None;
                    }
                    r.header("codec", Some(codec.as_bytes())).into()
                })
                .collect();
            let written = broker.produce_with(&topic, &options, &input);
            let mut expected: Vec<Record> = written.into_iter().map(|w| w.record).collect();
            expected.sort();
            let plan = kseek_plan(&client, &topic, Start::Earliest, End::Latest).await;
            let got = read_records(&client, plan.clone(), ReadOptions::default()).await;
            assert_eq!(
                got.len(),
                expected.len(),
                "{codec} on {:?}",
                broker.version()
            );
            assert_eq!(got, expected, "{codec}");
            // And with batches cut by small max bytes: partial batches are fetched again.
            let small = ReadOptions::default()
                .fetch_max_bytes(3000)
                .partition_max_bytes(1500);
            assert_eq!(
                read_batches(&client, plan.clone(), small).await,
                expected,
                "{codec} small"
            );
            // And with a budget of waiting bytes below one batch: the read fetches a response
            // at a time, resuming each time the caller takes the last of its batches.
            let one_at_a_time = ReadOptions::default().max_buffered_bytes(1);
            assert_eq!(
                read_records(&client, plan, one_at_a_time).await,
                expected,
                "{codec} budget of 1 byte"
            );
        }
    }
}

/// zstd and gzip answers large enough for their decompression to be spread over threads
/// (`ReadOptions::decode_threads`: about 1 MiB of 16 KiB batches per partition answer, from
/// 2 MB of hex values that compress to about half): the records read back exactly as Kafka's
/// producer wrote them, on 4 threads and on 1.
#[tokio::test]
async fn large_zstd_and_gzip_answers_decompressed_on_threads_read_back_exactly() {
    for broker in support::brokers() {
        let client = client(broker).await;
        for codec in ["zstd", "gzip"] {
            let topic = broker.new_topic(&format!("read-threads-{codec}"), 1, &[]);
            let options = ProduceOptions {
                compression: Some(codec.to_owned()),
                linger_ms: Some(50),
                ..ProduceOptions::default()
            };
            let mut x: u64 = 0x2545_f491_4f6c_dd1d;
            let mut hex = move || {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                format!("{:08x}", x >> 32)
            };
            let input: Vec<Input> = (0..2_000)
                .map(|i| {
                    let value: String = (0..125).map(|_| hex()).collect();
                    NewRecord::new()
                        .partition(0)
                        .timestamp(1_600_000_000_000 + i64::from(i))
                        .key(format!("key-{i}"))
                        .value(value)
                        .into()
                })
                .collect();
            let written = broker.produce_with(&topic, &options, &input);
            let mut expected: Vec<Record> = written.into_iter().map(|w| w.record).collect();
            expected.sort();
            let plan = kseek_plan(&client, &topic, Start::Earliest, End::Latest).await;
            for threads in [4, 1] {
                let options = ReadOptions::default().decode_threads(threads);
                let got = read_records(&client, plan.clone(), options).await;
                assert_eq!(got.len(), expected.len(), "{codec}, {threads} threads");
                assert!(
                    got == expected,
                    "{codec}, {threads} threads: records differ"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_start_in_the_middle_of_a_batch_drops_earlier_records() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-mid", 1, &[]);
        let options = ProduceOptions {
            linger_ms: Some(1000),
            ..ProduceOptions::default()
        };
        let input: Vec<Input> = (0..10)
            .map(|i| record(0, 1_000 + i, &format!("k{i}"), &format!("v{i}")))
            .collect();
        let written: Vec<Record> = broker
            .produce_with(&topic, &options, &input)
            .into_iter()
            .map(|w| w.record)
            .collect();
        let client = client(broker).await;
        let start = Start::Offsets {
            offsets: [((topic.clone(), 0), 4)].into(),
            default: None,
        };
        let end = End::Offsets([((topic.clone(), 0), 7)].into());
        let plan = kseek_plan(&client, &topic, start, end).await;
        assert_eq!(
            (plan.partitions[0].start, plan.partitions[0].end),
            (4, Some(7))
        );
        let mut stream = client.read(plan.clone(), ReadOptions::default());
        let mut got = Vec::new();
        let mut bases = Vec::new();
        while let Some(batch) = stream.next().await {
            let batch = batch.unwrap();
            bases.push(batch.batch().base_offset());
            got.extend(batch.to_records().unwrap().iter().map(Record::from));
        }
        // The records came in one batch that begins before the start and ends after the end.
        assert_eq!(bases, [Some(0)], "one batch of 10 records");
        assert_eq!(got, written[4..7].to_vec());
        assert_eq!(stream.positions()[0].next_offset, 7);
    }
}

#[tokio::test]
async fn batches_larger_than_max_bytes_are_read_whole() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-big", 1, &[]);
        let options = ProduceOptions {
            linger_ms: Some(1000),
            batch_size: Some(1 << 20),
            ..ProduceOptions::default()
        };
        let input: Vec<Input> = (0..100)
            .map(|i| record(0, 1_000 + i, &format!("k{i}"), &"x".repeat(1000)))
            .collect();
        let mut written: Vec<Record> = broker
            .produce_with(&topic, &options, &input)
            .into_iter()
            .map(|w| w.record)
            .collect();
        written.sort();
        let client = client(broker).await;
        let plan = kseek_plan(&client, &topic, Start::Earliest, End::Latest).await;
        // A budget of waiting bytes smaller than the batches too: each still passes, alone.
        let tiny = ReadOptions::default()
            .fetch_max_bytes(1024)
            .partition_max_bytes(1024)
            .max_buffered_bytes(1024);
        let mut stream = client.read(plan, tiny);
        let mut got = Vec::new();
        let mut largest = 0;
        while let Some(batch) = stream.next().await {
            let batch = batch.unwrap();
            largest = largest.max(batch.batch().size_in_bytes());
            got.extend(batch.to_records().unwrap().iter().map(Record::from));
        }
        assert!(largest > 10 * 1024, "a batch of {largest} bytes");
        assert_eq!(got, written);
    }
}

#[tokio::test]
async fn the_time_filter_drops_out_of_order_create_times() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-ooo", 1, &[]);
        let stamps = [1_000, 5_000, 2_000, 6_000, 3_000, 7_000];
        let input: Vec<Input> = stamps
            .iter()
            .enumerate()
            .map(|(i, ts)| record(0, *ts, &format!("k{i}"), &format!("v{i}")))
            .collect();
        let written = broker.produce(&topic, &input);
        let (t1, t2) = (2_500, 6_000);
        let client = client(broker).await;
        let plan = kseek_plan(&client, &topic, Start::Timestamp(t1), End::Timestamp(t2)).await;
        // First record >= 2500 is offset 1 (5000); first >= 6000 is offset 3.
        assert_eq!(
            (plan.partitions[0].start, plan.partitions[0].end),
            (1, Some(3))
        );
        let unfiltered = read_records(&client, plan.clone(), ReadOptions::default()).await;
        assert_eq!(unfiltered, written[1..3].to_vec(), "5000 and 2000");
        let spec = ReadSpec::new([topic.clone()], Start::Timestamp(t1), End::Timestamp(t2));
        let filter = TimeFilter::from_spec(&spec).unwrap();
        assert_eq!(filter, TimeFilter::new(Some(t1), Some(t2)));
        let filtered = read_records(
            &client,
            plan.clone(),
            ReadOptions::default().time_filter(filter),
        )
        .await;
        assert_eq!(filtered, written[1..2].to_vec(), "only 5000");
        let filtered =
            read_batches(&client, plan, ReadOptions::default().time_filter(filter)).await;
        assert_eq!(filtered, written[1..2].to_vec());
    }
}

#[tokio::test]
async fn an_unbounded_read_follows_new_records_and_new_partitions() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-follow", 1, &[]);
        let first = broker.produce(&topic, &[record(0, 1_000, "a", "1")]);
        let client = client(broker).await;
        let plan = kseek_plan(&client, &topic, Start::Earliest, End::Unbounded).await;
        assert_eq!(
            (plan.partitions[0].start, plan.partitions[0].end),
            (0, None)
        );
        let options = ReadOptions::default()
            .max_wait(Duration::from_millis(200))
            .partition_discovery(Some(Duration::from_millis(300)));
        let mut stream = client.read(plan, options).records();
        assert_eq!(Record::from(&next_record(&mut stream).await), first[0]);
        // Nothing more yet: the read waits (long-polls) instead of ending.
        assert!(
            tokio::time::timeout(Duration::from_millis(800), stream.next())
                .await
                .is_err()
        );
        let second = broker.produce(&topic, &[record(0, 2_000, "b", "2")]);
        assert_eq!(Record::from(&next_record(&mut stream).await), second[0]);
        assert_eq!(stream.positions()[0].next_offset, 2);
        assert!(!stream.positions()[0].done);
        if broker.version() == support::KafkaVersion::V2_8 {
            // Kafka 2.8 in KRaft mode does not offer CreatePartitions (Kafka's own
            // TopicCommand: "The broker does not support CREATE_PARTITIONS").
            continue;
        }

        // A partition added to the topic joins at its beginning.
        create_partitions(broker, &topic, 2).await;
        let third = broker.produce(&topic, &[record(1, 3_000, "c", "3")]);
        assert_eq!(Record::from(&next_record(&mut stream).await), third[0]);
        let positions = stream.positions();
        assert_eq!(positions.len(), 2);
        assert_eq!((positions[1].partition, positions[1].next_offset), (1, 1));
    }
}

#[tokio::test]
async fn deleted_records_are_reported_as_data_loss_or_fail() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-loss", 1, &[]);
        let input: Vec<Input> = (0..10)
            .map(|i| record(0, 1_000 + i, &format!("k{i}"), &format!("v{i}")))
            .collect();
        let written = broker.produce(&topic, &input);
        let client = client(broker).await;
        // The plan was resolved before retention (DeleteRecords) removed offsets 0..6.
        let start = Start::Offsets {
            offsets: [((topic.clone(), 0), 2)].into(),
            default: None,
        };
        let plan = kseek_plan(&client, &topic, start, End::Latest).await;
        assert_eq!(
            (plan.partitions[0].start, plan.partitions[0].end),
            (2, Some(10))
        );
        assert_eq!(delete_records(broker, &topic, 0, 6).await, 6);

        let mut stream = client.read(plan.clone(), ReadOptions::default()).records();
        let mut got = Vec::new();
        while let Some(r) = stream.next().await {
            got.push(Record::from(&r.unwrap()));
        }
        assert_eq!(got, written[6..].to_vec());
        let loss = stream.data_loss();
        assert_eq!(loss.len(), 1, "{loss:?}");
        assert_eq!((loss[0].partition, loss[0].from, loss[0].to), (0, 2, 6));
        assert_eq!(loss[0].skipped(), 4);

        let mut stream = client.read(plan, ReadOptions::default().out_of_range(OutOfRange::Fail));
        match stream
            .next()
            .await
            .map(|r| r.map_err(kseek::Error::into_kind))
        {
            Some(Err(ErrorKind::OffsetOutOfRange {
                topic: t,
                partition: 0,
                offset: 2,
                ..
            })) => assert_eq!(t, topic),
            other => panic!("expected OffsetOutOfRange, got {other:?}"),
        }
        assert!(stream.next().await.is_none());
    }
}

/// Retriable partition errors that a healthy broker cannot be made to send on demand (point 9):
/// `tests/golden/proxy.py --fail` sets every partition's error code in the first two ListOffsets
/// or Fetch answers. Each time kseek refreshes metadata, retries, and the read returns exactly
/// the records the Java producer wrote, none twice. The failed Fetch answers still carry their
/// records, damaged by the proxy (a CRC that fails): records sent with an error must be ignored,
/// and any use of them would fail the read.
#[tokio::test]
async fn retriable_partition_errors_in_list_offsets_and_fetch_are_retried_exactly() {
    let broker = support::broker();
    let topic = broker.new_topic("read-retriable", 2, &[]);
    let input: Vec<Input> = (0..40)
        .map(|i| {
            record(
                i % 2,
                1_000 + i64::from(i),
                &format!("k{i}"),
                &format!("v{i}"),
            )
        })
        .collect();
    let mut written = broker.produce(&topic, &input);
    written.sort();
    let faults = [
        ("list-offsets", 6),  // NOT_LEADER_OR_FOLLOWER
        ("list-offsets", 74), // FENCED_LEADER_EPOCH
        ("list-offsets", 75), // UNKNOWN_LEADER_EPOCH
        ("list-offsets", 78), // OFFSET_NOT_AVAILABLE
        ("fetch", 5),         // LEADER_NOT_AVAILABLE
        ("fetch", 6),
        ("fetch", 74),
        ("fetch", 75),
    ];
    for (api, code) in faults {
        let proxy = support::Proxy::start(broker, &["--fail", &format!("{api}:{code}:2")]);
        let client = Client::with_config(
            ClientConfig::new([proxy.bootstrap.as_str()]).retry_deadline(Duration::from_secs(20)),
        )
        .await
        .unwrap();
        let plan = kseek_plan(&client, &topic, Start::Earliest, End::Latest).await;
        assert_eq!(
            support::ranges(&plan),
            [(0, 0, Some(20)), (1, 0, Some(20))],
            "{api} {code}"
        );
        let got = read_records(&client, plan, ReadOptions::default()).await;
        assert_eq!(got, written, "{api} {code}");
        let injected = proxy.injected();
        assert_eq!(
            injected,
            vec![format!("{api} {code}"); 2],
            "the proxy failed two {api} answers"
        );
    }
}

#[tokio::test]
async fn a_partition_that_keeps_failing_is_retried_until_the_deadline() {
    for broker in support::brokers() {
        let topic = broker.new_topic("read-gone", 1, &[]);
        broker.produce(&topic, &[record(0, 1_000, "a", "1")]);
        let mut config = ClientConfig::new(broker.bootstrap().split(','));
        config.retry_deadline = Duration::from_secs(3);
        let client = Client::with_config(config).await.unwrap();
        // Planned while the topic existed; the topic is gone when the read starts.
        let plan = Plan {
            partitions: vec![offsets(&topic, 0, 0, Some(5), 0, 5)],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        broker.delete_topic(&topic);
        let started = Instant::now();
        let mut stream = client.read(plan, ReadOptions::default());
        // The broker deletes the log in the background: a Fetch that comes first still gets
        // the one record (and the read then waits for the rest of its range); after that,
        // only the failure.
        let result = loop {
            match tokio::time::timeout(READ_LIMIT, stream.next())
                .await
                .unwrap()
            {
                Some(Ok(batch)) => assert!(
                    batch
                        .records()
                        .all(|r| r.map(|r| r.offset() == 0).unwrap_or(false)),
                    "only the record written"
                ),
                other => break other,
            }
        };
        match result.map(|r| r.map_err(kseek::Error::into_kind)) {
            Some(Err(ErrorKind::RetriesExhausted { what, attempts, .. })) => {
                assert!(what.contains(&topic), "{what}");
                assert!(attempts > 2, "{attempts}");
            }
            other => panic!("expected RetriesExhausted, got {other:?}"),
        }
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(20),
            "{elapsed:?}"
        );
        assert!(stream.next().await.is_none());
    }
}

#[tokio::test]
async fn compaction_gaps_end_the_read() {
    for broker in support::brokers() {
        // Offsets 0, 2, 4, 6 and 8 compacted away.
        let (topic, compacted) = support::compacted_topic(broker, "read-compact");
        let client = client(broker).await;
        let plan = kseek_plan(&client, &topic, Start::Earliest, End::Latest).await;
        assert_eq!(plan.partitions[0].end, Some(16));
        let got = read_records(&client, plan, ReadOptions::default()).await;
        assert_eq!(got, compacted);

        // A range inside a gap: nothing to hand out, and the read still ends.
        let start = Start::Offsets {
            offsets: [((topic.clone(), 0), 2)].into(),
            default: None,
        };
        let end = End::Offsets([((topic.clone(), 0), 3)].into());
        let plan = kseek_plan(&client, &topic, start, end).await;
        let started = Instant::now();
        let options = ReadOptions::default().max_wait(Duration::from_secs(10));
        assert_eq!(read_records(&client, plan, options).await, []);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[tokio::test]
async fn reads_follow_a_moved_leader() {
    for version in [support::KafkaVersion::V4_4, support::KafkaVersion::V3_9] {
        moved_leader(version).await;
    }
}

async fn moved_leader(version: support::KafkaVersion) {
    // A private three-node cluster, so a partition's leader can move.
    let broker = Broker::start(version, 3);
    let topic = support::unique_name("read-moved");
    broker.create_topic(&topic, 3, &[]);
    let input: Vec<Input> = (0..6)
        .map(|i| {
            record(
                i % 3,
                1_000 + i64::from(i),
                &format!("k{i}"),
                &format!("v{i}"),
            )
        })
        .collect();
    let mut before: Vec<Record> = broker.produce(&topic, &input);
    before.sort();
    let config = || {
        let mut config = ClientConfig::new(broker.bootstrap().split(','));
        config.retry_deadline = Duration::from_secs(30);
        config
    };
    // A bounded read planned (and its metadata cached) before the move, read after it.
    let bounded_client = Client::with_config(config()).await.unwrap();
    let bounded = kseek_plan(&bounded_client, &topic, Start::Earliest, End::Latest).await;
    // An unbounded read running across the move.
    let client = Client::with_config(config()).await.unwrap();
    let plan = kseek_plan(&client, &topic, Start::Earliest, End::Unbounded).await;
    let mut stream = client
        .read(
            plan,
            ReadOptions::default().max_wait(Duration::from_millis(200)),
        )
        .records();
    let mut got = Vec::new();
    for _ in 0..6 {
        got.push(Record::from(&next_record(&mut stream).await));
    }
    got.sort();
    assert_eq!(got, before);

    let metadata = client.metadata(std::slice::from_ref(&topic)).await.unwrap();
    let (old, new) = (
        metadata[0].partitions[0].leader_id,
        metadata[0].partitions[1].leader_id,
    );
    assert_ne!(old, new, "partitions spread over the nodes");
    broker.reassign(&topic, 0, new);
    let after = broker.produce(&topic, &[record(0, 2_000, "moved", "after")]);
    assert_eq!(Record::from(&next_record(&mut stream).await), after[0]);
    assert_eq!(stream.positions()[0].next_offset, after[0].offset + 1);

    let got = read_records(&bounded_client, bounded, ReadOptions::default()).await;
    assert_eq!(got, before);
}

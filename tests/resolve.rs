//! Resolution of read specs into plans against real brokers (Kafka 4.4, 3.9 and 2.8), with data
//! written by Kafka's Java producer at known CreateTime timestamps and every answer checked
//! against Kafka's own Admin ListOffsets.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kseek::protocol::messages::list_offsets::MAX_TIMESTAMP;
use kseek::{Client, ClientConfig, End, ErrorKind, IsolationLevel, ReadSpec, Start};
use support::{ranges, Broker, Input, Isolation, NewRecord, OffsetQuery};

/// 2023-11-14T22:13:20Z: long before "today".
const BASE: i64 = 1_700_000_000_000;

async fn client(broker: &Broker) -> Client {
    Client::with_config(
        ClientConfig::new([broker.bootstrap()]).retry_deadline(Duration::from_secs(3)),
    )
    .await
    .unwrap()
}

/// A 3-partition topic: p0 holds timestamps BASE+0, +1000, +2000, +3000 (offsets 0-3), p1
/// holds BASE+500, +1500, +2500 (offsets 0-2), p2 is empty.
fn timed_topic(broker: &Broker) -> String {
    let topic = broker.new_topic("resolve", 3, &[]);
    let mut input: Vec<Input> = Vec::new();
    for (i, dt) in [0, 1000, 2000, 3000].into_iter().enumerate() {
        input.push(
            NewRecord::new()
                .partition(0)
                .value(format!("p0-{i}"))
                .timestamp(BASE + dt)
                .into(),
        );
    }
    for (i, dt) in [500, 1500, 2500].into_iter().enumerate() {
        input.push(
            NewRecord::new()
                .partition(1)
                .value(format!("p1-{i}"))
                .timestamp(BASE + dt)
                .into(),
        );
    }
    let written = broker.produce(&topic, &input);
    let placed: Vec<(i32, i64, i64)> = written
        .iter()
        .map(|r| (r.partition, r.offset, r.timestamp - BASE))
        .collect();
    assert_eq!(
        placed,
        vec![
            (0, 0, 0),
            (0, 1, 1000),
            (0, 2, 2000),
            (0, 3, 3000),
            (1, 0, 500),
            (1, 1, 1500),
            (1, 2, 2500)
        ],
        "the producer stored what the test expects"
    );
    topic
}

/// Kafka's own answer (Admin ListOffsets) per partition.
fn java(broker: &Broker, topic: &str, query: OffsetQuery, isolation: Isolation) -> Vec<i64> {
    broker
        .list_offsets(topic, query, isolation)
        .into_iter()
        .map(|p| p.offset)
        .collect()
}

fn today_midnight_ms() -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    now - now % 86_400_000
}

#[tokio::test]
async fn earliest_latest_and_timestamps_on_every_version() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        let version = broker.version();

        // Earliest to latest: the whole log, the snapshot equal to Kafka's answers.
        let plan = client
            .resolve(&ReadSpec::new([&topic], Start::Earliest, End::Latest))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 0, Some(4)), (1, 0, Some(3)), (2, 0, Some(0))],
            "{version:?}"
        );
        let earliest = java(
            broker,
            &topic,
            OffsetQuery::Earliest,
            Isolation::ReadUncommitted,
        );
        let latest = java(
            broker,
            &topic,
            OffsetQuery::Latest,
            Isolation::ReadUncommitted,
        );
        for (i, p) in plan.partitions.iter().enumerate() {
            assert_eq!(p.log_start_offset, earliest[i]);
            assert_eq!(p.last_fetchable_offset, latest[i]);
            assert_eq!(p.topic, topic);
            assert!(p.leader_epoch >= 0);
        }
        assert_eq!(plan.max_records(), Some(7));
        assert!(plan.partitions[2].is_empty(), "the empty partition");

        // Timestamps: the first record at or after each, exclusive ends; the empty
        // partition misses both and resolves to its (empty) snapshot.
        let (t_start, t_end) = (BASE + 1000, BASE + 2500);
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Timestamp(t_start),
                End::Timestamp(t_end),
            ))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 1, Some(3)), (1, 1, Some(2)), (2, 0, Some(0))],
            "{version:?}"
        );
        // Kafka's offsetsForTimes agrees where it has an answer (-1 where it has none).
        assert_eq!(
            java(
                broker,
                &topic,
                OffsetQuery::Timestamp(t_start),
                Isolation::ReadUncommitted
            ),
            vec![1, 1, -1]
        );
        assert_eq!(
            java(
                broker,
                &topic,
                OffsetQuery::Timestamp(t_end),
                Isolation::ReadUncommitted
            ),
            vec![3, 2, -1]
        );

        // A timestamp before every record starts at the log start.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Timestamp(BASE - 60_000),
                End::Unbounded,
            ))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 0, None), (1, 0, None), (2, 0, None)]
        );

        // An end timestamp after every record: the last fetchable offset, not -1.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Timestamp(BASE + 2000),
                End::Timestamp(today_midnight_ms()),
            ))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 2, Some(4)), (1, 2, Some(3)), (2, 0, Some(0))]
        );
    }
}

#[tokio::test]
async fn a_start_after_the_newest_record_is_an_empty_plan_not_an_error() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        // "Today 00:00": after every record. Start = end = last fetchable, on every partition.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Timestamp(today_midnight_ms()),
                End::Latest,
            ))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 4, Some(4)), (1, 3, Some(3)), (2, 0, Some(0))]
        );
        assert!(plan.is_empty());
        assert_eq!(plan.max_records(), Some(0));
        // Unbounded: start at the end, waiting for what comes.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Timestamp(today_midnight_ms()),
                End::Unbounded,
            ))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 4, None), (1, 3, None), (2, 0, None)]
        );
        assert!(plan.partitions.iter().all(|p| p.start >= 0));
    }
}

#[tokio::test]
async fn a_start_after_the_end_is_an_error_for_latest_and_earliest_too() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        let version = broker.version();
        let resolve = |start: Start, end: End| {
            let (client, spec) = (&client, ReadSpec::new([&topic], start, end));
            async move { client.resolve(&spec).await }
        };
        let after =
            |result: kseek::Result<kseek::Plan>| match result.map_err(kseek::Error::into_kind) {
                Err(ErrorKind::StartAfterEnd {
                    topic: t,
                    partition,
                    start,
                    end,
                }) => {
                    assert_eq!(t, topic);
                    (partition, start, end)
                }
                other => panic!("{version:?}: {other:?}"),
            };
        // Latest to earliest, and latest to an earlier time: p0 is the first to say so.
        assert_eq!(
            after(resolve(Start::Latest, End::Earliest).await),
            (0, 4, 0)
        );
        assert_eq!(
            after(resolve(Start::Latest, End::Timestamp(BASE + 1000)).await),
            (0, 4, 1)
        );
        // A time with records after it, to earliest.
        assert_eq!(
            after(resolve(Start::Timestamp(BASE + 2000), End::Earliest).await),
            (0, 2, 0)
        );
        let err = resolve(Start::Latest, End::Earliest).await.unwrap_err();
        assert!(!err.is_retriable());
        assert!(
            err.to_string()
                .contains("start offset 4 is after end offset 0"),
            "{err}"
        );

        // Equal ends are empty ranges, not errors.
        let plan = resolve(Start::Earliest, End::Earliest).await.unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 0, Some(0)), (1, 0, Some(0)), (2, 0, Some(0))],
            "{version:?}"
        );
        // A start time after the newest record finds nothing: the partition's end, whatever
        // the end is.
        let plan = resolve(Start::Timestamp(today_midnight_ms()), End::Earliest)
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 0, Some(0)), (1, 0, Some(0)), (2, 0, Some(0))],
            "{version:?}"
        );
        assert!(plan.is_empty());
        // The empty partition alone: latest is earliest there.
        let plan = client
            .resolve(&ReadSpec::new([&topic], Start::Latest, End::Earliest).partitions([2]))
            .await
            .unwrap();
        assert_eq!(ranges(&plan), vec![(2, 0, Some(0))], "{version:?}");
    }
}

#[tokio::test]
async fn strict_mode_names_what_was_not_found() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        let mut spec = ReadSpec::new([&topic], Start::Timestamp(BASE + 2500), End::Latest);
        spec.strict = true;
        spec.partitions = Some(vec![0, 1]);
        // p0 has BASE+3000 and p1 has BASE+2500: found on both.
        let plan = client.resolve(&spec).await.unwrap();
        assert_eq!(ranges(&plan), vec![(0, 3, Some(4)), (1, 2, Some(3))]);
        // After the newest record of p1 (and p0): an error naming the first partition.
        spec.start = Start::Timestamp(BASE + 2600);
        spec.partitions = Some(vec![1]);
        match client.resolve(&spec).await.map_err(kseek::Error::into_kind) {
            Err(ErrorKind::TimestampNotFound {
                topic: t,
                partition,
                timestamp,
                last_fetchable_offset,
            }) => {
                assert_eq!(
                    (t.as_str(), partition, timestamp, last_fetchable_offset),
                    (topic.as_str(), 1, BASE + 2600, 3)
                );
            }
            other => panic!("{:?}: {other:?}", broker.version()),
        }
        // The end side too: the empty partition has no record at any time.
        let mut spec = ReadSpec::new([&topic], Start::Earliest, End::Timestamp(BASE));
        spec.strict = true;
        spec.partitions = Some(vec![2]);
        let err = client.resolve(&spec).await.unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::TimestampNotFound { partition: 2, .. }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("strict"), "{err}");
    }
}

#[tokio::test]
async fn explicit_offsets_and_their_errors() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        let key = |p: i32| (topic.clone(), p);

        // Given starts and ends; unlisted partitions use the default / latest.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Offsets {
                    offsets: BTreeMap::from([(key(0), 1), (key(1), 2)]),
                    default: Some(Box::new(Start::Earliest)),
                },
                End::Offsets(BTreeMap::from([(key(0), 3)])),
            ))
            .await
            .unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 1, Some(3)), (1, 2, Some(3)), (2, 0, Some(0))]
        );

        // start == end is an empty range, not an error.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Offsets {
                    offsets: BTreeMap::from([(key(0), 2)]),
                    default: Some(Box::new(Start::Earliest)),
                },
                End::Offsets(BTreeMap::from([(key(0), 2)])),
            ))
            .await
            .unwrap();
        assert!(plan.partitions[0].is_empty());

        // start > end: a clear error naming the partition.
        let err = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Offsets {
                    offsets: BTreeMap::from([(key(1), 3)]),
                    default: Some(Box::new(Start::Earliest)),
                },
                End::Offsets(BTreeMap::from([(key(1), 1)])),
            ))
            .await
            .unwrap_err();
        match err.kind() {
            ErrorKind::StartAfterEnd {
                topic: t,
                partition,
                start,
                end,
            } => assert_eq!((t, *partition, *start, *end), (&topic, 1, 3, 1)),
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string().contains("partition 1") && err.to_string().contains(&topic),
            "{err}"
        );
        // A given start beyond the last fetchable offset, with a latest end: that partition is
        // shorter than the offset, an empty range at its end, and the plan says so.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Offsets {
                    offsets: BTreeMap::from([(key(0), 10)]),
                    default: Some(Box::new(Start::Earliest)),
                },
                End::Latest,
            ))
            .await
            .unwrap();
        let p0 = &plan.partitions[0];
        assert_eq!((p0.start, p0.end), (4, Some(4)), "{plan:?}");
        assert_eq!(
            p0.adjusted,
            Some(kseek::Adjusted::PastEnd { requested: 10 })
        );
        assert_eq!(plan.partitions[1].adjusted, None);

        // A partitions filter naming a partition the topic doesn't have.
        let mut spec = ReadSpec::new([&topic], Start::Earliest, End::Latest);
        spec.partitions = Some(vec![0, 7]);
        let err = client.resolve(&spec).await.unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::UnknownPartition {
                    partition: 7,
                    partitions: 3,
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_missing_topic_is_an_error_at_the_deadline() {
    for broker in support::brokers() {
        let client = Client::with_config(
            ClientConfig::new([broker.bootstrap()]).retry_deadline(Duration::from_millis(800)),
        )
        .await
        .unwrap();
        let missing = support::unique_name("no-such-topic");
        let started = std::time::Instant::now();
        let err = client
            .resolve(&ReadSpec::new([&missing], Start::Earliest, End::Latest))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        match err.kind() {
            ErrorKind::RetriesExhausted {
                source,
                what,
                attempts,
                ..
            } => {
                assert!(what.contains("resolving"), "{what}");
                assert!(*attempts > 1);
                assert!(
                    matches!(source.kind(), ErrorKind::UnknownTopic { topic, .. } if *topic == missing),
                    "{source}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("does not exist"), "{err}");
    }
}

#[tokio::test]
async fn a_topic_just_created_resolves() {
    for broker in support::brokers() {
        let client = client(broker).await;
        // The client learns about the topic right after Kafka's Admin reports it created.
        let topic = broker.new_topic("fresh", 2, &[]);
        let plan = client
            .resolve(&ReadSpec::new([&topic], Start::Earliest, End::Latest))
            .await
            .unwrap();
        assert_eq!(ranges(&plan), vec![(0, 0, Some(0)), (1, 0, Some(0))]);
    }
}

#[tokio::test]
async fn committed_starts_with_and_without_commits() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        let group = support::unique_name("resolve-group");
        broker.commit(&group, &topic, 0, 2);

        // p0 has a commit; p1 and p2 fall back to a timestamp.
        let spec = ReadSpec::new(
            [&topic],
            Start::Committed {
                group: group.clone(),
                fallback: Some(Box::new(Start::Timestamp(BASE + 1000))),
            },
            End::Latest,
        );
        let plan = client.resolve(&spec).await.unwrap();
        assert_eq!(
            ranges(&plan),
            vec![(0, 2, Some(4)), (1, 1, Some(3)), (2, 0, Some(0))]
        );

        // Without a fallback: an error naming every partition without a commit.
        let spec = ReadSpec::new(
            [&topic],
            Start::Committed {
                group: group.clone(),
                fallback: None,
            },
            End::Latest,
        );
        let err = client.resolve(&spec).await.unwrap_err();
        match err.kind() {
            ErrorKind::NoCommittedOffset {
                group: g,
                partitions,
            } => {
                assert_eq!(g, &group);
                assert_eq!(partitions, &vec![(topic.clone(), 1), (topic.clone(), 2)]);
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains(&format!("{topic}[1]")), "{err}");

        // A committed end: from earliest up to the commit.
        let mut spec = ReadSpec::new(
            [&topic],
            Start::Earliest,
            End::Committed {
                group: group.clone(),
            },
        );
        spec.partitions = Some(vec![0]);
        let plan = client.resolve(&spec).await.unwrap();
        assert_eq!(ranges(&plan), vec![(0, 0, Some(2))]);

        // A commit beyond the log is clamped to the last fetchable offset.
        broker.commit(&group, &topic, 1, 50);
        let mut spec = ReadSpec::new(
            [&topic],
            Start::Committed {
                group: group.clone(),
                fallback: None,
            },
            End::Latest,
        );
        spec.partitions = Some(vec![1]);
        let plan = client.resolve(&spec).await.unwrap();
        assert_eq!(ranges(&plan), vec![(1, 3, Some(3))]);
    }
}

#[tokio::test]
async fn max_timestamp_special_on_every_version() {
    for broker in support::brokers() {
        let topic = timed_topic(broker);
        let client = client(broker).await;
        // -3: the record with the largest timestamp (ListOffsets v7+, which 3.9 has too).
        let result = client
            .resolve(&ReadSpec::new([&topic], Start::MaxTimestamp, End::Latest))
            .await;
        if broker.version() == support::KafkaVersion::V2_8 {
            // 2.8 tops out at ListOffsets v6: a clear error, never a wrong answer.
            match result.map_err(kseek::Error::into_kind) {
                Err(ErrorKind::UnsupportedTimestamp {
                    timestamp,
                    required_version,
                    broker_max_version,
                    ..
                }) => assert_eq!(
                    (timestamp, required_version, broker_max_version),
                    (MAX_TIMESTAMP, 7, 6)
                ),
                other => panic!("Kafka 2.8 and max timestamp: {other:?}"),
            }
            continue;
        }
        let plan = result.unwrap();
        // The empty partition has no such record: its start is its (empty) end.
        assert_eq!(
            ranges(&plan),
            vec![(0, 3, Some(4)), (1, 2, Some(3)), (2, 0, Some(0))]
        );
        let kafka = java(
            broker,
            &topic,
            OffsetQuery::MaxTimestamp,
            Isolation::ReadUncommitted,
        );
        assert_eq!(&kafka[..2], &[3, 2]);
    }
}

/// Runs Kafka's Java producer with a transactional id, writes `records` to partition 0 inside
/// a transaction, waits until the broker has them, and kills the producer before it can
/// commit or abort: the transaction stays open (until the transaction timeout, 60 s).
fn leave_transaction_open(broker: &Broker, topic: &str, records: usize) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kafka/ktool");
    let mut child = Command::new(script)
        .args([
            "produce",
            "--topic",
            topic,
            "--transactional-id",
            &support::unique_name("open-txn"),
            "--bootstrap",
            broker.bootstrap(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut input = String::from("{\"txn\":\"begin\"}\n");
    for i in 0..records {
        input.push_str(&format!(
            "{{\"partition\":0,\"value\":\"open-{i}\",\"timestamp\":{}}}\n",
            BASE + 10_000
        ));
    }
    input.push_str("{\"flush\":true}\n");
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The tool prints each record once the broker has stored it (after the flush).
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..records {
        let line = lines
            .next()
            .expect("the producer printed a record")
            .unwrap();
        assert!(line.contains("\"offset\""), "{line}");
    }
    // SIGKILL: no chance to abort on close. stdin stays open until then.
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
}

#[tokio::test]
async fn read_committed_latest_is_the_last_stable_offset() {
    for broker in support::brokers_with_transactions() {
        let topic = broker.new_topic("lso", 1, &[]);
        let client = client(broker).await;
        let committed: Vec<Input> = (0..3)
            .map(|i| {
                NewRecord::new()
                    .partition(0)
                    .value(format!("c{i}"))
                    .timestamp(BASE + i)
                    .into()
            })
            .collect();
        broker.produce(&topic, &committed);

        // No transaction open: LSO == HW.
        let mut spec = ReadSpec::new([&topic], Start::Earliest, End::Latest);
        spec.isolation = IsolationLevel::READ_COMMITTED;
        assert_eq!(
            ranges(&client.resolve(&spec).await.unwrap()),
            vec![(0, 0, Some(3))]
        );

        leave_transaction_open(broker, &topic, 2);
        let uncommitted = client
            .resolve(&ReadSpec::new([&topic], Start::Earliest, End::Latest))
            .await
            .unwrap();
        assert_eq!(
            ranges(&uncommitted),
            vec![(0, 0, Some(5))],
            "high watermark"
        );
        let plan = client.resolve(&spec).await.unwrap();
        assert_eq!(ranges(&plan), vec![(0, 0, Some(3))], "last stable offset");
        assert_eq!(plan.partitions[0].last_fetchable_offset, 3);
        assert_eq!(plan.isolation, IsolationLevel::READ_COMMITTED);
        // Kafka's Admin agrees on both.
        assert_eq!(
            java(
                broker,
                &topic,
                OffsetQuery::Latest,
                Isolation::ReadCommitted
            ),
            vec![3]
        );
        assert_eq!(
            java(
                broker,
                &topic,
                OffsetQuery::Latest,
                Isolation::ReadUncommitted
            ),
            vec![5]
        );
        // A timestamp lookup under read_committed can't find the open transaction's records
        // (BASE+10000): the end misses to the LSO.
        spec.end = End::Timestamp(BASE + 5_000);
        assert_eq!(
            ranges(&client.resolve(&spec).await.unwrap()),
            vec![(0, 0, Some(3))]
        );
    }
}

#[tokio::test]
async fn bootstrap_tries_each_server_until_one_answers() {
    let broker = support::broker();
    // Nothing listens on port 1: the next server is tried.
    let client = Client::connect(["127.0.0.1:1", broker.bootstrap()])
        .await
        .unwrap();
    let topic = broker.new_topic("bootstrap", 2, &[]);
    let metadata = client.metadata(std::slice::from_ref(&topic)).await.unwrap();
    assert_eq!(metadata[0].name, topic);
    assert_eq!(metadata[0].partitions.len(), 2);
    assert!(
        !metadata[0].topic_id.is_zero(),
        "Metadata v10+ carries topic ids"
    );
    // None answers: an error naming what was tried.
    let err = Client::connect(["127.0.0.1:1", "127.0.0.1:2"])
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Bootstrap { .. }), "{err}");
    assert!(err.to_string().contains("127.0.0.1:2"), "{err}");
}

#[tokio::test]
async fn a_moved_leader_is_found_again() {
    for version in [support::KafkaVersion::V4_4, support::KafkaVersion::V3_9] {
        moved_leader(version).await;
    }
}

async fn moved_leader(version: support::KafkaVersion) {
    // A private three-node cluster, so a partition's leader can move.
    let broker = Broker::start(version, 3);
    let topic = support::unique_name("moved");
    broker.create_topic(&topic, 3, &[]);
    let input: Vec<Input> = (0..6)
        .map(|i| {
            NewRecord::new()
                .partition(i % 3)
                .value(format!("m{i}"))
                .timestamp(BASE + i64::from(i))
                .into()
        })
        .collect();
    broker.produce(&topic, &input);
    let client = Client::with_config(
        ClientConfig::new([broker.bootstrap()]).retry_deadline(Duration::from_secs(20)),
    )
    .await
    .unwrap();
    let spec = ReadSpec::new([&topic], Start::Timestamp(BASE + 1), End::Latest);
    let before = client.resolve(&spec).await.unwrap();
    // p0 holds BASE+0 and BASE+3, p1 BASE+1 and BASE+4, p2 BASE+2 and BASE+5.
    assert_eq!(
        ranges(&before),
        vec![(0, 1, Some(2)), (1, 0, Some(2)), (2, 0, Some(2))]
    );
    let metadata = client.metadata(std::slice::from_ref(&topic)).await.unwrap();
    let (old, new) = (
        metadata[0].partitions[0].leader_id,
        metadata[0].partitions[1].leader_id,
    );
    assert_ne!(old, new, "partitions spread over the nodes");

    // Move p0 to p1's node. The client's cached metadata (fresh, well within the 5 min max
    // age) still names the old leader: ListOffsets there fails with a retriable error, the
    // client refreshes and asks the new leader.
    broker.reassign(&topic, 0, new);
    let after = client.resolve(&spec).await.unwrap();
    assert_eq!(ranges(&after), ranges(&before));
    assert!(
        after.partitions[0].leader_epoch > before.partitions[0].leader_epoch,
        "{} then {}",
        before.partitions[0].leader_epoch,
        after.partitions[0].leader_epoch
    );
    let metadata = client.metadata(std::slice::from_ref(&topic)).await.unwrap();
    assert_eq!(metadata[0].partitions[0].leader_id, new);
}

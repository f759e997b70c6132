//! Standalone commits and committed-offset reads against real brokers (Kafka 4.4, 3.9 and 2.8),
//! checked with Kafka's own tools: the Admin API's view of the group and a Java consumer
//! resuming from the commits.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use kseek::{Client, ClientConfig, CommitOffset, End, ErrorKind, ReadSpec, Start};
use support::{Broker, ConsumeOptions, Input, NewRecord};

async fn client(broker: &Broker) -> Client {
    Client::with_config(
        ClientConfig::new([broker.bootstrap()]).retry_deadline(Duration::from_secs(5)),
    )
    .await
    .unwrap()
}

/// A 3-partition topic with 4 records in each partition; returns the records as stored.
fn topic_with_records(broker: &Broker) -> (String, Vec<support::Record>) {
    let topic = broker.new_topic("commit", 3, &[]);
    let input: Vec<Input> = (0..12)
        .map(|i| {
            NewRecord::new()
                .partition(i % 3)
                .key(format!("k{i}"))
                .value(format!("v{i}"))
                .timestamp(1_700_000_000_000 + i64::from(i))
                .into()
        })
        .collect();
    let written = broker.produce(&topic, &input);
    (topic, written)
}

fn commit(topic: &str, partition: i32, offset: i64, epoch: i32, metadata: &str) -> CommitOffset {
    CommitOffset {
        topic: topic.to_owned(),
        partition,
        offset,
        leader_epoch: epoch,
        metadata: Some(metadata.to_owned()),
    }
}

#[tokio::test]
async fn commits_are_what_kafka_tools_see_and_where_java_resumes() {
    for broker in support::brokers() {
        let (topic, written) = topic_with_records(broker);
        let client = client(broker).await;
        let group = support::unique_name("kseek-commit");
        // The leader epoch to commit: the one the plan saw.
        let plan = client
            .resolve(&ReadSpec::new([&topic], Start::Earliest, End::Latest))
            .await
            .unwrap();
        let epoch = plan.partitions[0].leader_epoch;
        assert!(epoch >= 0);

        client
            .commit(
                &group,
                &[
                    commit(&topic, 0, 1, epoch, "first"),
                    commit(&topic, 1, 3, epoch, "second"),
                ],
            )
            .await
            .unwrap();

        // kafka-consumer-groups --describe (Admin listConsumerGroupOffsets): exactly these.
        let described = broker.describe_group(&group);
        let seen: Vec<(String, i32, Option<i64>, Option<String>)> = described
            .iter()
            .map(|c| (c.topic.clone(), c.partition, c.offset, c.metadata.clone()))
            .collect();
        assert_eq!(
            seen,
            vec![
                (topic.clone(), 0, Some(1), Some("first".to_owned())),
                (topic.clone(), 1, Some(3), Some("second".to_owned())),
            ],
            "{:?}",
            broker.version()
        );

        // Read back with OffsetFetch: offset, leader epoch and metadata; none for p2.
        let committed = client
            .committed(&group, std::slice::from_ref(&topic))
            .await
            .unwrap();
        let got: Vec<(i32, Option<i64>, i32, Option<&str>)> = committed
            .iter()
            .map(|c| (c.partition, c.offset, c.leader_epoch, c.metadata.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, Some(1), epoch, Some("first")),
                (1, Some(3), epoch, Some("second")),
                (2, None, -1, None),
            ]
        );

        // A Java consumer of the same group resumes exactly there (p2 from the beginning).
        let resumed = broker.consume_with(
            &topic,
            &ConsumeOptions {
                group: Some(group.clone()),
                ..ConsumeOptions::default()
            },
        );
        let expected: Vec<support::Record> = {
            let mut e: Vec<_> = written
                .iter()
                .filter(|r| match r.partition {
                    0 => r.offset >= 1,
                    1 => r.offset >= 3,
                    _ => true,
                })
                .cloned()
                .collect();
            e.sort();
            e
        };
        let mut resumed_sorted = resumed.clone();
        resumed_sorted.sort();
        assert_eq!(resumed_sorted, expected);

        // A later commit replaces the earlier one; a commit without metadata reads back as
        // Kafka stores it.
        client
            .commit(
                &group,
                &[CommitOffset {
                    topic: topic.clone(),
                    partition: 0,
                    offset: 4,
                    leader_epoch: -1,
                    metadata: None,
                }],
            )
            .await
            .unwrap();
        let committed = client
            .committed(&group, std::slice::from_ref(&topic))
            .await
            .unwrap();
        assert_eq!(committed[0].offset, Some(4));
        assert_eq!(committed[0].leader_epoch, -1);
        assert_eq!(
            broker.describe_group(&group)[0].offset,
            Some(4),
            "Kafka's view"
        );

        // And a committed start resolves from it.
        let plan = client
            .resolve(&ReadSpec::new(
                [&topic],
                Start::Committed {
                    group: group.clone(),
                    fallback: Some(Box::new(Start::Earliest)),
                },
                End::Latest,
            ))
            .await
            .unwrap();
        let starts: Vec<i64> = plan.partitions.iter().map(|p| p.start).collect();
        assert_eq!(starts, vec![4, 3, 0]);
    }
}

#[tokio::test]
async fn commits_kafka_made_are_read_back() {
    for broker in support::brokers() {
        let (topic, _) = topic_with_records(broker);
        let client = client(broker).await;
        let group = support::unique_name("java-commit");
        // Kafka's Admin commits; a Java consumer commits its final positions too.
        broker.commit(&group, &topic, 2, 2);
        let committed = client
            .committed(&group, std::slice::from_ref(&topic))
            .await
            .unwrap();
        let offsets: Vec<Option<i64>> = committed.iter().map(|c| c.offset).collect();
        assert_eq!(offsets, vec![None, None, Some(2)]);

        let other = support::unique_name("java-consumer");
        broker.consume_with(
            &topic,
            &ConsumeOptions {
                group: Some(other.clone()),
                commit: true,
                ..ConsumeOptions::default()
            },
        );
        let committed = client
            .committed(&other, std::slice::from_ref(&topic))
            .await
            .unwrap();
        let offsets: Vec<Option<i64>> = committed.iter().map(|c| c.offset).collect();
        assert_eq!(offsets, vec![Some(4), Some(4), Some(4)]);
    }
}

#[tokio::test]
async fn commit_errors_name_the_problem() {
    for broker in support::brokers() {
        let (topic, _) = topic_with_records(broker);
        let client = client(broker).await;
        let group = support::unique_name("bad-commit");
        let err = client
            .commit(&group, &[commit(&topic, 9, 1, -1, "")])
            .await
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::UnknownPartition { partition: 9, .. }),
            "{err}"
        );
    }
}

/// Joins `group` as a classic consumer group member with raw JoinGroup v2 (no tool of ours or
/// Kafka's keeps a member alive: the Java test tool assigns partitions without joining). The
/// member stays in the group until its session times out (30 s), since it never heartbeats.
/// Returns the generation and member id.
fn join_group(bootstrap: &str, group: &str, topic: &str) -> (i32, String) {
    fn string(buf: &mut Vec<u8>, s: &str) {
        buf.extend_from_slice(&(s.len() as i16).to_be_bytes());
        buf.extend_from_slice(s.as_bytes());
    }
    // ConsumerProtocolSubscription v0: topics, null user data.
    let mut subscription = Vec::new();
    subscription.extend_from_slice(&0i16.to_be_bytes());
    subscription.extend_from_slice(&1i32.to_be_bytes());
    string(&mut subscription, topic);
    subscription.extend_from_slice(&(-1i32).to_be_bytes());

    let mut body = Vec::new();
    // Request header v1: api key 11 (JoinGroup), version 2, correlation id, client id.
    body.extend_from_slice(&11i16.to_be_bytes());
    body.extend_from_slice(&2i16.to_be_bytes());
    body.extend_from_slice(&7i32.to_be_bytes());
    string(&mut body, "kseek-test");
    string(&mut body, group);
    body.extend_from_slice(&30_000i32.to_be_bytes()); // session timeout
    body.extend_from_slice(&30_000i32.to_be_bytes()); // rebalance timeout
    string(&mut body, ""); // member id
    string(&mut body, "consumer");
    body.extend_from_slice(&1i32.to_be_bytes());
    string(&mut body, "range");
    body.extend_from_slice(&(subscription.len() as i32).to_be_bytes());
    body.extend_from_slice(&subscription);

    let mut stream = TcpStream::connect(bootstrap).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
        .write_all(&(body.len() as i32).to_be_bytes())
        .unwrap();
    stream.write_all(&body).unwrap();
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).unwrap();
    let mut response = vec![0u8; i32::from_be_bytes(size) as usize];
    stream.read_exact(&mut response).unwrap();
    // correlation id, throttle time, error code, generation, protocol name, leader, member id.
    assert_eq!(i32::from_be_bytes(response[0..4].try_into().unwrap()), 7);
    let error = i16::from_be_bytes(response[8..10].try_into().unwrap());
    assert_eq!(error, 0, "JoinGroup error code");
    let generation = i32::from_be_bytes(response[10..14].try_into().unwrap());
    let mut at = 14;
    let mut next_string = || {
        let len = i16::from_be_bytes(response[at..at + 2].try_into().unwrap()) as usize;
        let s = String::from_utf8(response[at + 2..at + 2 + len].to_vec()).unwrap();
        at += 2 + len;
        s
    };
    let _protocol = next_string();
    let _leader = next_string();
    let member = next_string();
    (generation, member)
}

#[tokio::test]
async fn a_group_with_an_active_member_refuses_standalone_commits_clearly() {
    for broker in support::brokers() {
        let (topic, _) = topic_with_records(broker);
        let client = client(broker).await;
        let group = support::unique_name("busy-group");
        // Empty group: fine.
        client
            .commit(&group, &[commit(&topic, 0, 1, -1, "")])
            .await
            .unwrap();
        let (generation, member) = join_group(broker.bootstrap(), &group, &topic);
        assert!(generation >= 1 && !member.is_empty());
        let err = client
            .commit(&group, &[commit(&topic, 0, 2, -1, "")])
            .await
            .unwrap_err();
        match err.kind() {
            ErrorKind::GroupHasActiveMembers { group: g, code, .. } => {
                assert_eq!(g, &group);
                eprintln!(
                    "Kafka {:?} refuses a standalone commit to a group with a member with {code}",
                    broker.version()
                );
            }
            other => panic!("{:?}: {other:?}", broker.version()),
        }
        let message = err.to_string();
        assert!(
            message.contains("active members") && message.contains("empty group"),
            "{message}"
        );
        // Nothing was committed.
        let committed = client
            .committed(&group, std::slice::from_ref(&topic))
            .await
            .unwrap();
        assert_eq!(committed[0].offset, Some(1));
    }
}

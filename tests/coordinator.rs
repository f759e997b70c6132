//! Commits survive the group coordinator's death: on a private three-node cluster (offsets
//! topic replicated three times), the node coordinating a group is killed between two commits
//! made with the same `Client`; the second commit must find the new coordinator and land,
//! as `committed` and Kafka's own Admin API both show.

mod support;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use kseek::protocol::messages::find_coordinator::{FindCoordinatorRequest, KEY_TYPE_GROUP};
use kseek::{Client, ClientConfig, CommitOffset, Connection, ConnectionConfig};
use support::{Broker, KafkaVersion, NewRecord};

#[tokio::test]
async fn commits_follow_a_dead_coordinator_to_its_successor() {
    for version in [KafkaVersion::V4_4, KafkaVersion::V3_9] {
        coordinator_dies(version).await;
    }
}

fn offset(topic: &str, offset: i64) -> CommitOffset {
    CommitOffset {
        topic: topic.to_owned(),
        partition: 0,
        offset,
        leader_epoch: -1,
        metadata: Some(format!("at {offset}")),
    }
}

async fn coordinator_dies(version: KafkaVersion) {
    // offsets.topic.replication.factor is 3 on a three-node cluster (tests/kafka/broker).
    let broker = Broker::start(version, 3);
    let topic = support::unique_name("coordinator");
    broker.create_topic_replicated(&topic, 1, 3, &[]);
    let written = broker.produce(
        &topic,
        &(0..3)
            .map(|i| NewRecord::new().partition(0).value(format!("v{i}")).into())
            .collect::<Vec<_>>(),
    );
    assert_eq!(written.len(), 3);

    let client = Client::with_config(
        ClientConfig::new(broker.bootstrap().split(',')).retry_deadline(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let group = support::unique_name("kseek-coordinator");
    client.commit(&group, &[offset(&topic, 1)]).await.unwrap();
    let committed = client
        .committed(&group, std::slice::from_ref(&topic))
        .await
        .unwrap();
    assert_eq!(committed[0].offset, Some(1));

    let (coordinator, address) = find_coordinator(&broker, &group, None).await;
    kill_node(&broker, coordinator);
    // Wait (with a deadline) until the coordinator no longer accepts connections.
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(&address).is_ok() {
        assert!(
            Instant::now() < deadline,
            "node {coordinator} still listens"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The same client: its cached coordinator is dead; the commit must rediscover.
    let started = Instant::now();
    client
        .commit(&group, &[offset(&topic, 2)])
        .await
        .unwrap_or_else(|e| panic!("commit after node {coordinator} died: {e}"));
    eprintln!(
        "{version:?}: commit after killing coordinator node {coordinator} took {:?}",
        started.elapsed()
    );
    let committed = client
        .committed(&group, std::slice::from_ref(&topic))
        .await
        .unwrap();
    assert_eq!(committed.len(), 1);
    assert_eq!(committed[0].offset, Some(2));
    assert_eq!(committed[0].metadata.as_deref(), Some("at 2"));

    let (successor, _) = find_coordinator(&broker, &group, Some(&address)).await;
    assert_ne!(successor, coordinator, "the group has a new coordinator");
    let described = broker.describe_group(&group);
    assert_eq!(described.len(), 1, "{described:?}");
    assert_eq!(described[0].topic, topic);
    assert_eq!(described[0].partition, 0);
    assert_eq!(described[0].offset, Some(2));
    assert_eq!(described[0].metadata.as_deref(), Some("at 2"));
}

/// The node id and address of `group`'s coordinator, asked (FindCoordinator v4) of the first
/// node of `broker` other than `skip` that answers.
async fn find_coordinator(broker: &Broker, group: &str, skip: Option<&str>) -> (i32, String) {
    for address in broker.bootstrap().split(',') {
        if Some(address) == skip {
            continue;
        }
        let Ok(conn) = Connection::connect(address, ConnectionConfig::default()).await else {
            continue;
        };
        let request = FindCoordinatorRequest {
            key_type: KEY_TYPE_GROUP,
            coordinator_keys: vec![group.to_owned()],
            ..FindCoordinatorRequest::default()
        };
        let response = conn.send_version(&request, 4).await.unwrap();
        let c = &response.coordinators[0];
        assert_eq!((c.key.as_str(), c.error_code), (group, 0), "{c:?}");
        return (c.node_id, format!("{}:{}", c.host, c.port));
    }
    panic!("no node of {} answered", broker.bootstrap());
}

/// Kills node `node_id` of `broker` (SIGKILL to its process group, see tests/kafka/broker).
fn kill_node(broker: &Broker, node_id: i32) {
    let pid_file = state_dir(broker).join(format!("node-{node_id}/pid"));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let status = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", pid.trim())])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "kill node {node_id} (pid {pid}): {status}"
    );
}

/// The state directory of `broker`, a cluster this process started: the one under the
/// temporary directory whose `state` names its bootstrap servers.
fn state_dir(broker: &Broker) -> PathBuf {
    let prefix = format!(
        "kseek-kafka-{}-{}-",
        broker.version().arg(),
        std::process::id()
    );
    let line = format!("BOOTSTRAP={}", broker.bootstrap());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .find(|dir| {
            std::fs::read_to_string(dir.join("state")).is_ok_and(|s| s.lines().any(|l| l == line))
        })
        .unwrap_or_else(|| panic!("no state directory for {}", broker.bootstrap()))
}

//! Network faults against real Kafka (4.4, and 3.9 where cheap), injected by the Rust fault
//! proxy (`tests/support/proxy.rs`) between kseek and the broker: a connection cut at byte N of
//! a Fetch response, responses delivered one byte at a time, a broker that accepts connections
//! and never answers, and a soak with connections cut at random (RELIABILITY.md).
//!
//! Data is written by Kafka's Java producer (`tests/kafka/ktool`); every read is compared
//! record by record with what the producer reports it stored, and must hand out each record
//! exactly once, in offset order per partition.
//!
//! The soak here is the short one (200k records, about 15 s of random cuts). `tests/soak`
//! runs the long one (`soak_long`, ignored by default) with at least 2 M records and 2 minutes
//! of cuts, and reports peak RSS over time.

mod proxy;
mod soak;
#[path = "../support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kseek::read::ReadOptions;
use kseek::{Client, ClientConfig, End, Error, ErrorKind, ReadSpec, Start};
use kseek_protocol::messages::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kseek_protocol::messages::metadata::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic,
};
use kseek_protocol::{ApiKey, Message, Request, ResponseHeader};
use support::proxy::{CutAt, CutMade, FaultProxy, RandomCuts};
use support::{Broker, NewRecord, Record};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How long a read that should succeed may take before the test fails instead of hanging.
const READ_LIMIT: Duration = Duration::from_secs(120);

async fn client_via(proxy: &FaultProxy) -> Client {
    Client::connect([proxy.bootstrap()]).await.unwrap()
}

/// `per_partition` records in each of `partitions` partitions, values of about `value_len`
/// bytes, with a header: what the Java producer writes for these tests.
fn inputs(partitions: i32, per_partition: usize, value_len: usize) -> Vec<support::Input> {
    let mut out = Vec::new();
    for i in 0..per_partition {
        for p in 0..partitions {
            let value = format!("{p}-{i}-{}", "v".repeat(value_len));
            out.push(
                NewRecord::new()
                    .partition(p)
                    .key(format!("k{i}"))
                    .value(value)
                    .header("i", Some(i.to_string().as_bytes()))
                    .into(),
            );
        }
    }
    out
}

/// The whole plan of `topic` (earliest to latest), resolved through `client`.
async fn whole_plan(client: &Client, topic: &str) -> kseek::Plan {
    client
        .resolve(&ReadSpec::new([topic], Start::Earliest, End::Latest))
        .await
        .unwrap()
}

/// Reads `plan` to its end (see `support::read_plan_exactly`).
async fn read_all(
    client: &Client,
    plan: kseek::Plan,
    options: ReadOptions,
    after: impl FnMut(usize),
) -> Vec<Record> {
    support::read_plan_exactly(client, plan, options, READ_LIMIT, after).await
}

fn sorted(mut records: Vec<Record>) -> Vec<Record> {
    records.sort();
    records
}

/// Small fetches, one response buffered: a read takes many Fetch round trips, so a fault
/// armed mid-read lands on a later response rather than after everything was prefetched.
fn small_fetches() -> ReadOptions {
    ReadOptions::default()
        .partition_max_bytes(16 * 1024)
        .fetch_max_bytes(64 * 1024)
        .buffer(1)
}

#[tokio::test]
async fn every_broker_address_a_client_learns_is_the_proxys() {
    let broker = support::broker();
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = client_via(&proxy).await;
    let cluster = client.cluster_metadata().await.unwrap();
    let ports = proxy.ports();
    assert!(!cluster.brokers.is_empty());
    for b in &cluster.brokers {
        assert_eq!(b.host, "127.0.0.1", "{b:?}");
        assert!(
            ports.contains(&u16::try_from(b.port).unwrap()),
            "{b:?} is not a proxy port {ports:?}"
        );
    }
    // A commit finds its coordinator through FindCoordinator, rewritten too.
    #[cfg(feature = "group")]
    {
        let topic = broker.new_topic("netfaults-coord", 1, &[]);
        broker.produce(&topic, &inputs(1, 3, 10));
        let group = support::unique_name("netfaults-group");
        let commit = kseek::CommitOffset {
            topic: topic.clone(),
            partition: 0,
            offset: 2,
            leader_epoch: -1,
            metadata: None,
        };
        client.commit(&group, &[commit]).await.unwrap();
        let committed = broker.describe_group(&group);
        assert_eq!(committed.len(), 1);
        assert_eq!(committed[0].offset, Some(2));
    }
    // The Metadata answers, and with a commit its FindCoordinator answer.
    let rewrites = if cfg!(feature = "group") { 2 } else { 1 };
    let c = proxy.counters();
    assert!(c.rewritten >= rewrites, "{c:?}");
    assert_eq!(c.rewrite_failures, 0, "{c:?}");
}

/// On a private 3-node cluster: the proxy opens a listener per broker, the client learns only
/// those, reads partitions led by every broker through them (one Fetch cut mid-read) and
/// commits through the rewritten coordinator address.
#[tokio::test]
async fn on_a_three_node_cluster_every_broker_is_reached_through_the_proxy() {
    let cluster = Broker::start(support::KafkaVersion::V4_4, 3);
    let topic = support::unique_name("netfaults-cluster");
    cluster.create_topic_replicated(&topic, 3, 3, &[("min.insync.replicas", "2")]);
    let written = sorted(cluster.produce(&topic, &inputs(3, 800, 100)));
    let proxy = FaultProxy::start(cluster.bootstrap());
    let client = client_via(&proxy).await;
    let metadata = client.cluster_metadata().await.unwrap();
    assert_eq!(metadata.brokers.len(), 3, "{metadata:?}");
    let ports = proxy.ports();
    for b in &metadata.brokers {
        assert_eq!(b.host, "127.0.0.1", "{b:?}");
        assert!(
            ports.contains(&u16::try_from(b.port).unwrap()),
            "{b:?} {ports:?}"
        );
    }
    let upstreams = proxy.upstreams();
    let distinct: std::collections::BTreeSet<u16> = upstreams.values().copied().collect();
    assert!(distinct.len() >= 3, "a listener per broker: {upstreams:?}");
    let plan = whole_plan(&client, &topic).await;
    let got = read_all(&client, plan, small_fetches(), |n| {
        if n == 300 {
            proxy.cut_next_fetch(CutAt::Middle);
        }
    })
    .await;
    assert_eq!(got, written);
    assert_eq!(proxy.counters().fetch_cuts, 1);
    #[cfg(feature = "group")]
    {
        let group = support::unique_name("netfaults-cluster-group");
        let commits: Vec<kseek::CommitOffset> = (0..3)
            .map(|p| kseek::CommitOffset {
                topic: topic.clone(),
                partition: p,
                offset: 800,
                leader_epoch: -1,
                metadata: None,
            })
            .collect();
        client.commit(&group, &commits).await.unwrap();
        let committed = cluster.describe_group(&group);
        assert_eq!(
            committed.iter().map(|c| c.offset).collect::<Vec<_>>(),
            [Some(800); 3]
        );
    }
    assert_eq!(proxy.counters().rewrite_failures, 0);

    // The leader of partition 0 turns into a black hole for clients (Kafka still sees it
    // alive, so no leadership moves): a read of the whole topic fails by its deadline, with
    // an error that says so, and what it handed out before is exact.
    let client = Client::with_config(impatient(proxy.bootstrap()))
        .await
        .unwrap();
    let plan = whole_plan(&client, &topic).await;
    let metadata = client.cluster_metadata().await.unwrap();
    let partitions = &metadata
        .topics
        .iter()
        .find(|t| t.name == topic)
        .expect("the topic")
        .partitions;
    let leader = partitions[0].leader_id;
    let port = metadata
        .brokers
        .iter()
        .find(|b| b.node_id == leader)
        .expect("the leader")
        .port;
    let (upstream, _) = proxy
        .upstreams()
        .into_iter()
        .find(|(_, p)| i32::from(*p) == port)
        .expect("the leader's listener");
    let silent: Vec<i32> = partitions
        .iter()
        .filter(|p| p.leader_id == leader)
        .map(|p| p.partition)
        .collect();
    proxy.set_black_hole_for(&upstream, true);
    let started = Instant::now();
    let mut stream = client.read(plan, ReadOptions::default()).records();
    let mut handed = Vec::new();
    let error = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match stream.next().await {
                Some(Ok(r)) => handed.push(Record::from(&r)),
                Some(Err(e)) => return Some(e),
                None => return None,
            }
        }
    })
    .await
    .expect("the read never hangs");
    let took = started.elapsed();
    let error = error.expect("a read that needs a silent broker fails");
    eprintln!(
        "3 nodes, broker {leader} ({upstream}) silent: {error} after {took:?}, {} records before",
        handed.len()
    );
    assert!(is_no_answer(&error), "{error:?}");
    assert!(took <= BLACK_HOLE_BOUND, "after {took:?}: {error}");
    for r in &handed {
        assert!(
            !silent.contains(&r.partition),
            "{r:?} came from a silent broker"
        );
        assert!(written.binary_search(r).is_ok(), "{r:?} was never written");
    }
    let mut unique = handed.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), handed.len(), "no duplicates");
}

#[tokio::test]
async fn a_fetch_response_cut_at_byte_n_still_gives_the_exact_record_set() {
    for broker in [support::broker(), support::broker_39()] {
        let topic = broker.new_topic("netfaults-cut", 2, &[]);
        let written = sorted(broker.produce(&topic, &inputs(2, 1500, 100)));
        let cuts = [
            CutAt::At(2),          // inside the size prefix
            CutAt::At(6),          // inside the correlation id
            CutAt::At(4 + 4 + 12), // inside the response header fields
            CutAt::Middle,         // inside the records
            CutAt::BeforeEnd(1),   // all but the last byte
            CutAt::AfterFrame,     // the whole frame, then the connection closes
        ];
        for at in cuts {
            let proxy = FaultProxy::start(broker.bootstrap());
            let client = client_via(&proxy).await;
            let plan = whole_plan(&client, &topic).await;
            assert_eq!(
                support::ranges(&plan),
                [(0, 0, Some(1500)), (1, 0, Some(1500))]
            );
            // Arm the cut once some records were handed out: it lands mid-read.
            let got = read_all(&client, plan, small_fetches(), |n| {
                if n == 500 {
                    proxy.cut_next_fetch(at);
                }
            })
            .await;
            assert_eq!(got.len(), written.len(), "{:?} {at:?}", broker.version());
            assert_eq!(got, written, "{:?} {at:?}", broker.version());
            let made = proxy.cuts_made();
            assert_eq!(made.len(), 1, "{at:?}: the cut was made once: {made:?}");
            let cut = made[0];
            match at {
                CutAt::At(n) => assert_eq!(cut.delivered, n),
                CutAt::Middle => {
                    assert!(cut.delivered > 100 && cut.delivered < cut.frame_len - 100)
                }
                CutAt::BeforeEnd(k) => assert_eq!(cut.delivered, cut.frame_len - k),
                CutAt::AfterFrame => assert_eq!(cut.delivered, cut.frame_len),
            }
            assert_eq!(proxy.counters().fetch_cuts, 1);
            assert!(
                proxy.counters().connections >= 2,
                "the client reconnected after the cut: {:?}",
                proxy.counters()
            );
        }
    }
}

#[tokio::test]
async fn responses_in_one_byte_slices_give_the_exact_record_set() {
    for broker in [support::broker(), support::broker_39()] {
        let topic = broker.new_topic("netfaults-slices", 2, &[]);
        let written = sorted(broker.produce(&topic, &inputs(2, 300, 60)));
        let proxy = FaultProxy::start(broker.bootstrap());
        // From the first byte: ApiVersions, Metadata and ListOffsets come sliced too.
        proxy.set_slices(true);
        let client = client_via(&proxy).await;
        let plan = whole_plan(&client, &topic).await;
        let got = read_all(&client, plan, small_fetches(), |_| {}).await;
        assert_eq!(got, written, "{:?}", broker.version());
        let c = proxy.counters();
        assert!(c.sliced_responses >= 4, "{c:?}");
        let values: usize = written
            .iter()
            .map(|r| r.value.as_ref().map_or(0, Vec::len))
            .sum();
        assert!(c.bytes_to_clients > values as u64, "{c:?}");
    }
}

/// A client whose requests time out after 1 s and whose retries stop after 3 s.
fn impatient(bootstrap: &str) -> ClientConfig {
    ClientConfig::new([bootstrap])
        .request_timeout(Duration::from_secs(1))
        .connect_timeout(Duration::from_secs(1))
        .retry_deadline(Duration::from_secs(3))
        .retry_backoff(Duration::from_millis(50))
        .retry_backoff_max(Duration::from_millis(200))
}

/// The longest a read against a black hole may take with [`impatient`]: the retry deadline,
/// then one more request timeout (plus Fetch's max wait) for the try in flight, plus slack.
const BLACK_HOLE_BOUND: Duration = Duration::from_secs(3 + 1 + 1 + 4);

/// Whether `e` says the broker did not answer in time: a request timeout, or the connection
/// given up because a request passed its deadline.
fn is_no_answer(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Timeout { .. } | ErrorKind::ConnectionClosed { .. } => true,
        ErrorKind::RetriesExhausted { source, .. } | ErrorKind::Bootstrap { source, .. } => {
            is_no_answer(source)
        }
        _ => false,
    }
}

#[tokio::test]
async fn a_read_from_a_broker_that_never_answers_fails_by_its_deadline() {
    let broker = support::broker();
    let topic = broker.new_topic("netfaults-hole", 2, &[]);
    broker.produce(&topic, &inputs(2, 50, 20));
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = Client::with_config(impatient(proxy.bootstrap()))
        .await
        .unwrap();
    let plan = whole_plan(&client, &topic).await;
    proxy.set_black_hole(true);
    let started = Instant::now();
    let mut stream = client.read(plan, ReadOptions::default()).records();
    let outcome = tokio::time::timeout(Duration::from_secs(60), async {
        let mut n = 0;
        while let Some(r) = stream.next().await {
            match r {
                Ok(_) => n += 1,
                Err(e) => return (n, Some(e)),
            }
        }
        (n, None)
    })
    .await
    .expect("the read never hangs");
    let took = started.elapsed();
    let (n, error) = outcome;
    let error =
        error.unwrap_or_else(|| panic!("the read ended without an error after {n} records"));
    assert_eq!(n, 0, "no record can come through a black hole");
    eprintln!("black hole read: {error} (after {took:?})");
    assert!(is_no_answer(&error), "a timeout, not: {error:?}");
    assert!(
        took <= BLACK_HOLE_BOUND,
        "failed after {took:?}, the bound is {BLACK_HOLE_BOUND:?}: {error}"
    );
    assert!(proxy.counters().swallowed_requests >= 1);
}

#[tokio::test]
async fn connecting_to_a_broker_that_never_answers_fails_by_its_deadline() {
    let broker = support::broker();
    let proxy = FaultProxy::start(broker.bootstrap());
    proxy.set_black_hole(true);
    let started = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        Client::with_config(impatient(proxy.bootstrap())),
    )
    .await
    .expect("connecting never hangs");
    let took = started.elapsed();
    let error = match result {
        Ok(_) => panic!("connected through a black hole"),
        Err(e) => e,
    };
    eprintln!("black hole connect: {error} (after {took:?})");
    assert!(is_no_answer(&error), "a timeout, not: {error:?}");
    assert!(took <= BLACK_HOLE_BOUND, "failed after {took:?}: {error}");
    assert!(proxy.counters().swallowed_requests >= 1);
}

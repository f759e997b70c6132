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
    let c = proxy.counters();
    assert!(c.rewritten >= 2, "{c:?}");
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

// ---------------------------------------------------------------------------------------------
// The proxy itself, against a fake broker: exact fault semantics, and the address rewrite at
// every Metadata and FindCoordinator version.

/// The addresses the fake broker advertises.
const FAKE_A: (&str, i32) = ("fake-a.invalid", 9001);
const FAKE_B: (&str, i32) = ("fake-b.invalid", 9002);

fn fake_metadata() -> MetadataResponse {
    let broker = |node_id, (host, port): (&str, i32)| MetadataResponseBroker {
        node_id,
        host: host.to_owned(),
        port,
        rack: Some(format!("rack-{node_id}")),
        ..MetadataResponseBroker::default()
    };
    MetadataResponse {
        brokers: vec![broker(1, FAKE_A), broker(2, FAKE_B)],
        cluster_id: Some("fake".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            partitions: vec![MetadataResponsePartition {
                partition_index: 0,
                leader_id: 2,
                leader_epoch: 7,
                replica_nodes: vec![2, 1],
                isr_nodes: vec![2, 1],
                ..MetadataResponsePartition::default()
            }],
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    }
}

fn fake_coordinator(version: i16) -> FindCoordinatorResponse {
    let (host, port) = FAKE_B;
    if version >= 4 {
        FindCoordinatorResponse {
            coordinators: vec![Coordinator {
                key: "g".into(),
                node_id: 2,
                host: host.into(),
                port,
                ..Coordinator::default()
            }],
            ..FindCoordinatorResponse::default()
        }
    } else {
        FindCoordinatorResponse {
            node_id: 2,
            host: host.into(),
            port,
            ..FindCoordinatorResponse::default()
        }
    }
}

/// The frame of a response: size prefix, header, body.
fn response_frame<R: Request>(correlation_id: i32, version: i16, body: &R::Response) -> Vec<u8> {
    let mut out = BytesMut::new();
    out.extend_from_slice(&[0; 4]);
    ResponseHeader {
        correlation_id,
        ..ResponseHeader::default()
    }
    .encode(&mut out, R::response_header_version(version))
    .unwrap();
    body.encode(&mut out, version).unwrap();
    let len = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&len.to_be_bytes());
    out.to_vec()
}

/// The Fetch "response" of the fake broker: `len` bytes with the correlation id, then filler.
fn fake_fetch(correlation_id: i32, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&((len - 4) as i32).to_be_bytes());
    out.extend_from_slice(&correlation_id.to_be_bytes());
    out.extend((0..len - 8).map(|i| i as u8));
    out
}

/// A fake broker: answers Metadata and FindCoordinator with [`fake_metadata`] and
/// [`fake_coordinator`] at the request's version, and a Fetch request whose correlation id is
/// `n` with a frame of `n` bytes ([`fake_fetch`]). Returns its address.
async fn fake_broker() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                loop {
                    let mut prefix = [0u8; 4];
                    if conn.read_exact(&mut prefix).await.is_err() {
                        return;
                    }
                    let mut frame = vec![0u8; i32::from_be_bytes(prefix) as usize];
                    if conn.read_exact(&mut frame).await.is_err() {
                        return;
                    }
                    let api = i16::from_be_bytes([frame[0], frame[1]]);
                    let version = i16::from_be_bytes([frame[2], frame[3]]);
                    let corr = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
                    let answer = match ApiKey(api) {
                        ApiKey::METADATA => {
                            response_frame::<MetadataRequest>(corr, version, &fake_metadata())
                        }
                        ApiKey::FIND_COORDINATOR => response_frame::<FindCoordinatorRequest>(
                            corr,
                            version,
                            &fake_coordinator(version),
                        ),
                        _ => fake_fetch(corr, corr as usize),
                    };
                    if conn.write_all(&answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    address
}

/// A raw connection to the proxy.
struct Raw(TcpStream);

impl Raw {
    async fn connect(address: &str) -> Raw {
        Raw(TcpStream::connect(address).await.unwrap())
    }

    /// Sends a request frame with this header and an empty body.
    async fn send(&mut self, api: ApiKey, version: i16, correlation_id: i32) {
        let mut frame = Vec::new();
        frame.extend_from_slice(&10i32.to_be_bytes());
        frame.extend_from_slice(&api.0.to_be_bytes());
        frame.extend_from_slice(&version.to_be_bytes());
        frame.extend_from_slice(&correlation_id.to_be_bytes());
        frame.extend_from_slice(&(-1i16).to_be_bytes());
        self.0.write_all(&frame).await.unwrap();
    }

    /// Sends a real request frame.
    async fn send_request<R: Request>(&mut self, version: i16, correlation_id: i32, body: &R) {
        let mut frame = BytesMut::new();
        kseek_protocol::messages::encode_request_frame(
            &mut frame,
            correlation_id,
            Some("netfaults"),
            version,
            body,
        )
        .unwrap();
        self.0.write_all(&frame).await.unwrap();
    }

    /// Every byte until the proxy closes the connection.
    async fn read_to_close(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.0.read_to_end(&mut out))
            .await
            .expect("the proxy closes the connection")
            .unwrap();
        out
    }

    /// One whole response frame (size prefix included).
    async fn frame(&mut self) -> Vec<u8> {
        let mut prefix = [0u8; 4];
        let read = async {
            self.0.read_exact(&mut prefix).await.unwrap();
            let mut rest = vec![0u8; i32::from_be_bytes(prefix) as usize];
            self.0.read_exact(&mut rest).await.unwrap();
            [prefix.to_vec(), rest].concat()
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("a response frame")
    }
}

/// A response body (after size prefix and header).
fn body_of<R: Request>(frame: &[u8], version: i16) -> R::Response {
    let mut buf = Bytes::copy_from_slice(&frame[4..]);
    ResponseHeader::decode(&mut buf, R::response_header_version(version)).unwrap();
    kseek_protocol::decode_exact(buf, version).unwrap()
}

#[tokio::test]
async fn the_proxy_rewrites_broker_addresses_at_every_version() {
    let upstream = fake_broker().await;
    let proxy = FaultProxy::start(&upstream);
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    let local = |proxy: &FaultProxy, (host, port): (&str, i32)| {
        i32::from(proxy.upstreams()[&format!("{host}:{port}")])
    };
    for version in 1..=13 {
        conn.send_request(
            version,
            100 + i32::from(version),
            &MetadataRequest::all_topics(),
        )
        .await;
        let got = body_of::<MetadataRequest>(&conn.frame().await, version);
        // What a client would decode without the proxy, addresses aside.
        let mut expected = body_of::<MetadataRequest>(
            &response_frame::<MetadataRequest>(0, version, &fake_metadata()),
            version,
        );
        expected.brokers[0].host = "127.0.0.1".into();
        expected.brokers[0].port = local(&proxy, FAKE_A);
        expected.brokers[1].host = "127.0.0.1".into();
        expected.brokers[1].port = local(&proxy, FAKE_B);
        assert_eq!(got, expected, "Metadata v{version}");
        assert_ne!(got.brokers[0].port, got.brokers[1].port);
    }
    for version in 0..=6 {
        let request = if version >= 4 {
            FindCoordinatorRequest {
                coordinator_keys: vec!["g".into()],
                ..FindCoordinatorRequest::default()
            }
        } else {
            FindCoordinatorRequest {
                key: "g".into(),
                ..FindCoordinatorRequest::default()
            }
        };
        conn.send_request(version, 200 + i32::from(version), &request)
            .await;
        let got = body_of::<FindCoordinatorRequest>(&conn.frame().await, version);
        let port = local(&proxy, FAKE_B);
        if version >= 4 {
            assert_eq!(got.coordinators.len(), 1);
            assert_eq!(
                (got.coordinators[0].host.as_str(), got.coordinators[0].port),
                ("127.0.0.1", port)
            );
        } else {
            assert_eq!(
                (got.host.as_str(), got.port),
                ("127.0.0.1", port),
                "v{version}"
            );
        }
    }
    let c = proxy.counters();
    assert_eq!((c.rewritten, c.rewrite_failures), (13 + 7, 0), "{c:?}");
    // Each listener forwards to its own upstream.
    assert_eq!(proxy.ports().len(), 3, "{:?}", proxy.upstreams());
}

#[tokio::test]
async fn the_proxy_cuts_a_fetch_response_exactly_at_byte_n() {
    let upstream = fake_broker().await;
    let proxy = FaultProxy::start(&upstream);
    let len = 5000;
    for (at, delivered) in [
        (CutAt::At(2), 2),
        (CutAt::At(7), 7),
        (CutAt::Middle, len / 2),
        (CutAt::BeforeEnd(1), len - 1),
        (CutAt::AfterFrame, len),
    ] {
        proxy.cut_next_fetch(at);
        let mut conn = Raw::connect(proxy.bootstrap()).await;
        // Too small to be cut: it comes whole, and the cut stays armed.
        conn.send(ApiKey::FETCH, 12, 100).await;
        assert_eq!(conn.frame().await, fake_fetch(100, 100));
        assert!(proxy.fetch_cut_pending());
        conn.send(ApiKey::FETCH, 12, len as i32).await;
        let got = conn.read_to_close().await;
        assert_eq!(got, fake_fetch(len as i32, len)[..delivered], "{at:?}");
        assert!(!proxy.fetch_cut_pending());
        assert_eq!(
            proxy.cuts_made().last().copied(),
            Some(CutMade {
                delivered,
                frame_len: len
            })
        );
    }
    // The next connection is not cut.
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    conn.send(ApiKey::FETCH, 12, len as i32).await;
    assert_eq!(conn.frame().await, fake_fetch(len as i32, len));
    assert_eq!(proxy.counters().fetch_cuts, 5);
}

#[tokio::test]
async fn the_proxy_slices_black_holes_and_cuts_at_random() {
    let upstream = fake_broker().await;
    let proxy = FaultProxy::start(&upstream);
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    proxy.set_slices(true);
    conn.send(ApiKey::FETCH, 12, 3000).await;
    assert_eq!(conn.frame().await, fake_fetch(3000, 3000));
    assert_eq!(proxy.counters().sliced_responses, 1);
    proxy.set_slices(false);

    proxy.set_black_hole(true);
    conn.send(ApiKey::FETCH, 12, 2000).await;
    let mut byte = [0u8; 1];
    // Nothing comes: the read is still waiting after a while.
    let waited = tokio::time::timeout(Duration::from_millis(300), conn.0.read(&mut byte)).await;
    assert!(waited.is_err(), "the black hole answered: {waited:?}");
    let mut fresh = Raw::connect(proxy.bootstrap()).await;
    fresh.send(ApiKey::FETCH, 12, 2000).await;
    let waited = tokio::time::timeout(Duration::from_millis(300), fresh.0.read(&mut byte)).await;
    assert!(waited.is_err(), "the black hole answered a new connection");
    // The proxy counts a swallowed request when it has read it: wait for that, boundedly.
    let deadline = Instant::now() + Duration::from_secs(10);
    while proxy.counters().swallowed_requests < 2 {
        assert!(Instant::now() < deadline, "{:?}", proxy.counters());
        tokio::task::yield_now().await;
    }
    assert_eq!(proxy.counters().swallowed_requests, 2);
    proxy.set_black_hole(false);
    conn.send(ApiKey::FETCH, 12, 2500).await;
    assert_eq!(conn.frame().await, fake_fetch(2500, 2500), "answers again");

    // Probability 1, a gap of an hour: exactly one cut, at a byte inside the frame.
    proxy.set_random_cuts(Some(RandomCuts {
        seed: 5,
        probability: 1.0,
        min_gap: Duration::from_secs(3600),
    }));
    conn.send(ApiKey::FETCH, 12, 4000).await;
    let got = conn.read_to_close().await;
    assert!(got.len() < 4000 && got[..] == fake_fetch(4000, 4000)[..got.len()]);
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    for _ in 0..5 {
        conn.send(ApiKey::FETCH, 12, 4000).await;
        assert_eq!(conn.frame().await, fake_fetch(4000, 4000));
    }
    assert_eq!(proxy.counters().random_cuts, 1);
}

// ---------------------------------------------------------------------------------------------
// The soak.

/// FNV-1a over a record's timestamp, key, value and headers: a per-record fingerprint, so a
/// soak of millions of records is compared record by record without keeping the records.
fn fingerprint(
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&[u8], Option<&[u8]>)],
) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&timestamp.to_le_bytes());
    let field = |eat: &mut dyn FnMut(&[u8]), b: Option<&[u8]>| match b {
        None => eat(&[0xff; 8]),
        Some(b) => {
            eat(&(b.len() as u64).to_le_bytes());
            eat(b);
        }
    };
    field(&mut eat, key);
    field(&mut eat, value);
    for (k, v) in headers {
        field(&mut eat, Some(k));
        field(&mut eat, *v);
    }
    h
}

/// What the producer stored, per partition: the first offset and each record's fingerprint.
struct Stored {
    partitions: BTreeMap<i32, (i64, Vec<u64>)>,
}

impl Stored {
    fn records(&self) -> usize {
        self.partitions.values().map(|(_, f)| f.len()).sum()
    }
}

/// Writes `records` records over `partitions` partitions with the Java producer (ktool,
/// streamed: a flush every 10k records keeps its memory flat) and returns what it stored.
fn produce_fingerprinted(broker: &Broker, topic: &str, partitions: i32, records: usize) -> Stored {
    let mut child = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kafka/ktool"))
        .args(["produce", "--topic", topic, "--batch-size", "65536"])
        .args(["--bootstrap", broker.bootstrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running tests/kafka/ktool");
    let mut stdin = std::io::BufWriter::new(child.stdin.take().unwrap());
    let feeder = std::thread::spawn(move || -> std::io::Result<()> {
        for i in 0..records {
            let p = i as i32 % partitions;
            // About 100 bytes of value, different for every record.
            writeln!(
                stdin,
                "{{\"partition\":{p},\"key\":\"k{i}\",\"value\":\"{i:012}-{:088x}\",\"headers\":[[\"n\",\"{i}\"]]}}",
                (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834)
            )?;
            if i % 10_000 == 9_999 {
                writeln!(stdin, "{{\"flush\":true}}")?;
            }
        }
        stdin.flush()
    });
    let mut partitions_out: BTreeMap<i32, (i64, Vec<u64>)> = BTreeMap::new();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        let line = line.unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let p = v["partition"].as_i64().unwrap() as i32;
        let offset = v["offset"].as_i64().unwrap();
        let text = |f: &serde_json::Value| f.as_str().map(|s| s.as_bytes().to_vec());
        let key = text(&v["key"]);
        let value = text(&v["value"]);
        let header_value = text(&v["headers"][0][1]);
        let f = fingerprint(
            v["timestamp"].as_i64().unwrap(),
            key.as_deref(),
            value.as_deref(),
            &[(b"n", header_value.as_deref())],
        );
        let entry = partitions_out.entry(p).or_insert((offset, Vec::new()));
        assert_eq!(
            entry.0 + entry.1.len() as i64,
            offset,
            "partition {p}: the producer's offsets are contiguous"
        );
        entry.1.push(f);
    }
    feeder.join().unwrap().expect("feeding ktool");
    assert!(child.wait().unwrap().success(), "ktool produce failed");
    let stored = Stored {
        partitions: partitions_out,
    };
    assert_eq!(stored.records(), records);
    stored
}

/// VmRSS and VmHWM of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The soak's settings.
struct Soak {
    partitions: i32,
    records: usize,
    /// Cuts go on at least this long; the whole plan is read again until it has passed.
    cut_for: Duration,
    cuts: RandomCuts,
}

/// One RSS sample of the soak.
#[derive(Debug)]
struct Sample {
    at: Duration,
    records_read: u64,
    rss_kib: u64,
    hwm_kib: u64,
}

/// Writes the records, then reads the whole plan through a proxy that cuts responses at
/// random, again and again until `cut_for` has passed, checking every record against its
/// stored fingerprint (offset order, no gap, no duplicate) and sampling RSS once a second.
async fn soak(soak: Soak) {
    let broker = support::broker();
    let topic = broker.new_topic("netfaults-soak", soak.partitions, &[]);
    let produced = Instant::now();
    let stored = produce_fingerprinted(broker, &topic, soak.partitions, soak.records);
    eprintln!(
        "soak: {} records in {} partitions written in {:?}",
        stored.records(),
        soak.partitions,
        produced.elapsed()
    );
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = client_via(&proxy).await;
    let plan = whole_plan(&client, &topic).await;
    for p in &plan.partitions {
        let (first, prints) = &stored.partitions[&p.partition];
        assert_eq!(
            (p.start, p.end),
            (*first, Some(first + prints.len() as i64))
        );
    }
    let options = ReadOptions::default()
        .partition_max_bytes(256 * 1024)
        .fetch_max_bytes(1024 * 1024);
    proxy.set_random_cuts(Some(soak.cuts));
    let started = Instant::now();
    let read_so_far = Arc::new(AtomicU64::new(0));
    let (stop_sampling, mut sampling_stopped) = tokio::sync::oneshot::channel::<()>();
    let sampler = {
        let read_so_far = read_so_far.clone();
        tokio::spawn(async move {
            let mut samples = vec![];
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                let last = tokio::select! {
                    _ = tick.tick() => false,
                    _ = &mut sampling_stopped => true,
                };
                let (rss_kib, hwm_kib) = memory_kib();
                samples.push(Sample {
                    at: started.elapsed(),
                    records_read: read_so_far.load(Ordering::Relaxed),
                    rss_kib,
                    hwm_kib,
                });
                if last {
                    return samples;
                }
            }
        })
    };
    let mut total: u64 = 0;
    let mut passes = 0;
    // The longest wait for a record (reconnects and retry backoff after cuts).
    let mut longest_stall = Duration::ZERO;
    let mut last_record;
    while passes == 0 || started.elapsed() < soak.cut_for {
        passes += 1;
        let mut next: BTreeMap<i32, i64> = stored
            .partitions
            .iter()
            .map(|(p, (first, _))| (*p, *first))
            .collect();
        let mut stream = client.read(plan.clone(), options.clone()).records();
        last_record = Instant::now();
        let pass = async {
            while let Some(r) = stream.next().await {
                let r = r.unwrap_or_else(|e| {
                    panic!("pass {passes}: the read failed after {total} records: {e}")
                });
                let expected_offset = next.get_mut(&r.partition).expect("a planned partition");
                assert_eq!(
                    r.offset, *expected_offset,
                    "partition {}: offset {} where {} was next (a gap, duplicate or reorder)",
                    r.partition, r.offset, expected_offset
                );
                *expected_offset += 1;
                let (first, prints) = &stored.partitions[&r.partition];
                let headers: Vec<(&[u8], Option<&[u8]>)> = r
                    .headers
                    .iter()
                    .map(|h| (&h.key[..], h.value.as_deref()))
                    .collect();
                let got = fingerprint(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers);
                assert_eq!(
                    got,
                    prints[(r.offset - first) as usize],
                    "partition {} offset {}: not the record the producer stored",
                    r.partition,
                    r.offset
                );
                total += 1;
                let stall = last_record.elapsed();
                last_record = Instant::now();
                if stall > Duration::from_secs(1) {
                    eprintln!(
                        "soak: no record for {stall:?} before record {total} ({:?})",
                        proxy.counters()
                    );
                }
                longest_stall = longest_stall.max(stall);
                read_so_far.store(total, Ordering::Relaxed);
            }
        };
        tokio::time::timeout(soak.cut_for + READ_LIMIT, pass)
            .await
            .expect("a pass of the soak ends");
        for (p, (first, prints)) in &stored.partitions {
            assert_eq!(
                next[p],
                first + prints.len() as i64,
                "pass {passes}: partition {p} ended early"
            );
        }
        assert!(stream.positions().iter().all(|p| p.done));
    }
    proxy.set_random_cuts(None);
    let took = started.elapsed();
    let _ = stop_sampling.send(());
    let samples = sampler.await.expect("the RSS sampler");
    let c = proxy.counters();
    eprintln!(
        "soak: {passes} passes, {total} records compared in {took:?}; {} random cuts, {} connections, {} MiB to the client; longest wait for a record {longest_stall:?}",
        c.random_cuts,
        c.connections,
        c.bytes_to_clients >> 20
    );
    for s in &samples {
        eprintln!(
            "soak rss: t={:>6.1}s records={:>9} VmRSS={:>7} KiB VmHWM={:>7} KiB",
            s.at.as_secs_f64(),
            s.records_read,
            s.rss_kib,
            s.hwm_kib
        );
    }
    assert_eq!(total, passes * stored.records() as u64);
    assert!(
        c.random_cuts >= 5,
        "the soak cut too little to mean anything: {c:?}"
    );
    assert_eq!(c.rewrite_failures, 0);
    // Flat memory: the peak at the end is within a margin of the peak a fifth into the soak.
    let early = samples
        .iter()
        .find(|s| s.at >= took / 5)
        .or(samples.first());
    if let (Some(early), Some(last)) = (early, samples.last()) {
        let allowed = early.hwm_kib + early.hwm_kib / 2 + 32 * 1024;
        assert!(
            last.hwm_kib <= allowed,
            "peak RSS grew from {} KiB at {:?} to {} KiB at {:?}",
            early.hwm_kib,
            early.at,
            last.hwm_kib,
            last.at
        );
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_short_random_cuts_give_the_exact_record_set() {
    soak(Soak {
        partitions: 4,
        records: 200_000,
        cut_for: Duration::from_secs(15),
        cuts: RandomCuts {
            seed: 11,
            probability: 0.25,
            min_gap: Duration::from_millis(100),
        },
    })
    .await;
}

/// The long soak, run by `tests/soak`: `KSEEK_SOAK_RECORDS` (default 2 M) records, cuts for
/// `KSEEK_SOAK_SECONDS` (default 150), seed `KSEEK_SOAK_SEED`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "heavy: run through tests/soak"]
async fn soak_long() {
    soak(Soak {
        partitions: 8,
        records: env_or("KSEEK_SOAK_RECORDS", 2_000_000),
        cut_for: Duration::from_secs(env_or("KSEEK_SOAK_SECONDS", 150)),
        cuts: RandomCuts {
            seed: env_or("KSEEK_SOAK_SEED", 20_261_201),
            probability: env_or("KSEEK_SOAK_CUT_PROBABILITY", 0.25),
            min_gap: Duration::from_millis(env_or("KSEEK_SOAK_CUT_GAP_MS", 100)),
        },
    })
    .await;
}

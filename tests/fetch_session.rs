//! Fetch sessions (KIP-227) against the shared Kafka 4.4 broker (one node), through the fault proxy
//! (tests/support/proxy.rs), which records every Fetch with its session fields and can spoil
//! the session id or epoch of one incremental Fetch on its way, so that the broker itself
//! answers FETCH_SESSION_ID_NOT_FOUND (70) or INVALID_FETCH_SESSION_EPOCH (71). Every read
//! is compared record by record with what Kafka's Java producer wrote: nothing lost, nothing
//! repeated. Two more tests meddle with the engine's session from another connection (KIP-227
//! sessions are not bound to a connection): closing it, or using up its next epoch; the
//! engine's next Fetch then gets the broker's own 70 or 71 without any rewriting.
//!
//! `measure_1000_partitions` (ignored: it needs a prepared topic of 1,000 partitions) prints
//! the
//! request sizes and read rates of BENCHMARKS.md:
//! `cargo test --test fetch_session -- --ignored --nocapture measure`.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kseek::read::ReadOptions;
use kseek::{Client, Connection, ConnectionConfig, End, ReadSpec, Start};
use kseek_protocol::messages::fetch::FetchRequest;
use support::proxy::{FaultProxy, FetchSeen, SessionSpoiler};
use support::{Broker, Input, NewRecord, ProduceOptions, Record};

const READ_LIMIT: Duration = Duration::from_secs(120);

/// `per_partition` records of about `value_len` bytes in each of `partitions` partitions.
fn inputs(partitions: i32, per_partition: usize, value_len: usize) -> Vec<Input> {
    let mut out = Vec::new();
    for i in 0..per_partition {
        for p in 0..partitions {
            let value = format!("{p}-{i}-{}", "v".repeat(value_len));
            out.push(
                NewRecord::new()
                    .partition(p)
                    .key(format!("k{i}"))
                    .value(value)
                    .into(),
            );
        }
    }
    out
}

/// A topic of `partitions` partitions holding `per_partition` records each, written in
/// small batches (about 1 KiB), and the records as stored, sorted.
fn topic_with(broker: &Broker, partitions: i32, per_partition: usize) -> (String, Vec<Record>) {
    // The session histories these tests check are of one broker: every partition's leader.
    assert_eq!(
        broker.bootstrap().split(',').count(),
        1,
        "a one-node broker"
    );
    let topic = broker.new_topic("fetch-session", partitions, &[]);
    let options = ProduceOptions {
        batch_size: Some(1024),
        ..ProduceOptions::default()
    };
    let mut written: Vec<Record> = broker
        .produce_with(&topic, &options, &inputs(partitions, per_partition, 100))
        .into_iter()
        .map(|w| w.record)
        .collect();
    written.sort();
    (topic, written)
}

/// Small fetches: a response holds a few batches, so most partitions of a Fetch get nothing
/// and the read takes many Fetches.
fn small_fetches() -> ReadOptions {
    ReadOptions::default()
        .fetch_max_bytes(4 * 1024)
        .partition_max_bytes(4 * 1024)
}

/// Reads `topic` from earliest to latest (see `support::read_plan_exactly`).
async fn read_all(
    client: &Client,
    topic: &str,
    options: ReadOptions,
    after: impl FnMut(usize),
) -> Vec<Record> {
    let spec = ReadSpec::new([topic], Start::Earliest, End::Latest);
    let plan = client.resolve(&spec).await.unwrap();
    support::read_plan_exactly(client, plan, options, READ_LIMIT, after).await
}

/// The Fetch requests in `seen`: (session id, epoch, partitions, forgotten, frame bytes).
fn requests(seen: &[FetchSeen]) -> Vec<(i32, i32, usize, usize, usize)> {
    seen.iter()
        .filter_map(|s| match *s {
            FetchSeen::Request {
                frame_len,
                session_id,
                session_epoch,
                partitions,
                forgotten,
                ..
            } => Some((session_id, session_epoch, partitions, forgotten, frame_len)),
            FetchSeen::Response { .. } => None,
        })
        .collect()
}

/// Checks that `seen` (one reader on one broker) is a well-formed session history: each
/// request follows the answer to the one before; a full fetch (epoch 0) is followed by
/// epoch 1 of the session the broker gave; each incremental epoch follows the last. Returns
/// the top-level error codes answered.
fn check_history(seen: &[FetchSeen]) -> Vec<i16> {
    let mut errors = Vec::new();
    let mut expect: Option<(i32, i32)> = None;
    let mut last_request: Option<(i32, i32)> = None;
    for s in seen {
        match *s {
            FetchSeen::Request {
                session_id,
                session_epoch,
                spoiled,
                ..
            } => {
                if let (Some(expect), false) = (expect, session_epoch == 0) {
                    if !spoiled {
                        assert_eq!((session_id, session_epoch), expect, "{seen:#?}");
                    }
                }
                last_request = Some((session_id, session_epoch));
            }
            FetchSeen::Response {
                error_code,
                session_id,
                ..
            } => {
                let (sent_id, sent_epoch) = last_request.expect("a request before its answer");
                if error_code != 0 {
                    errors.push(error_code);
                    expect = None;
                } else if sent_epoch == 0 {
                    expect = (session_id > 0).then_some((session_id, 1));
                } else {
                    assert_eq!(session_id, sent_id, "{seen:#?}");
                    expect = Some((session_id, sent_epoch + 1));
                }
            }
        }
    }
    errors
}

#[tokio::test]
async fn incremental_fetches_name_only_the_partitions_that_moved() {
    let broker = support::broker();
    let (topic, written) = topic_with(broker, 8, 150);
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = Client::connect([proxy.bootstrap()]).await.unwrap();
    let read = read_all(&client, &topic, small_fetches(), |_| {}).await;
    assert_eq!(read, written);
    let seen = proxy.fetches();
    assert_eq!(check_history(&seen), Vec::<i16>::new());
    let sent = requests(&seen);
    assert!(sent.len() > 10, "{sent:?}");
    assert_eq!(
        (sent[0].0, sent[0].1, sent[0].2),
        (0, 0, 8),
        "a full fetch first"
    );
    let incremental: Vec<_> = sent.iter().filter(|r| r.1 > 0).collect();
    assert_eq!(incremental.len(), sent.len() - 1, "{sent:?}");
    // Most partitions get nothing from a 4 KiB response: they are left out after the first.
    let small = incremental.iter().filter(|r| r.2 <= 4).count();
    assert!(small * 2 > incremental.len(), "{sent:?}");
    // Partitions that reached their end are forgotten, each once (but those done by the
    // last answer: no Fetch follows it).
    let forgotten = incremental.iter().map(|r| r.3).sum::<usize>();
    assert!((1..8).contains(&forgotten), "{sent:?}");
}

/// Reads with `spoiler` armed after 300 records; checks the broker answered `code` to the
/// spoiled Fetch, the engine's next Fetch was full with `next_id(spoiled id)` and epoch 0,
/// and that every record came exactly once.
async fn session_error_recovery(spoiler: SessionSpoiler, code: i16, closes_old: bool) {
    let broker = support::broker();
    let (topic, written) = topic_with(broker, 6, 150);
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = Client::connect([proxy.bootstrap()]).await.unwrap();
    let read = read_all(&client, &topic, small_fetches(), |n| {
        if n == 300 {
            proxy.spoil_next_incremental_fetch(spoiler);
        }
    })
    .await;
    assert!(
        !proxy.spoil_pending(),
        "the read ended before the spoiled Fetch"
    );
    assert_eq!(read.len(), written.len());
    assert_eq!(read, written);
    let seen = proxy.fetches();
    assert_eq!(check_history(&seen), [code], "{seen:#?}");
    let spoiled = seen
        .iter()
        .position(|s| matches!(s, FetchSeen::Request { spoiled: true, .. }))
        .unwrap();
    let FetchSeen::Request {
        session_id: spoiled_id,
        ..
    } = seen[spoiled]
    else {
        unreachable!()
    };
    let (
        FetchSeen::Response { error_code, .. },
        FetchSeen::Request {
            session_id,
            session_epoch,
            ..
        },
    ) = (&seen[spoiled + 1], &seen[spoiled + 2])
    else {
        panic!("{seen:#?}");
    };
    assert_eq!(*error_code, code);
    // The engine's own session id was spoiled_id (UnknownId) or the same (WrongEpoch).
    let own_id = match spoiler {
        SessionSpoiler::UnknownId => spoiled_id ^ 0x2a2a_2a2a,
        SessionSpoiler::WrongEpoch => spoiled_id,
    };
    let expected_id = if closes_old { own_id } else { 0 };
    assert_eq!((*session_id, *session_epoch), (expected_id, 0), "{seen:#?}");
    // And a new session after it.
    assert!(
        matches!(seen.get(spoiled + 3), Some(FetchSeen::Response { error_code: 0, session_id, .. }) if *session_id > 0),
        "{seen:#?}"
    );
}

#[tokio::test]
async fn fetch_session_id_not_found_from_the_broker_opens_a_new_session() {
    session_error_recovery(SessionSpoiler::UnknownId, 70, false).await;
}

#[tokio::test]
async fn invalid_fetch_session_epoch_from_the_broker_closes_and_reopens_the_session() {
    session_error_recovery(SessionSpoiler::WrongEpoch, 71, true).await;
}

/// The engine's fetch session as the proxy saw it last: its id and the epoch the broker
/// expects next; `None` after an error or without a session.
fn current_session(seen: &[FetchSeen]) -> Option<(i32, i32)> {
    let mut session = None;
    let mut sent = (0, -1);
    for s in seen {
        match *s {
            FetchSeen::Request {
                session_id,
                session_epoch,
                ..
            } => sent = (session_id, session_epoch),
            FetchSeen::Response {
                error_code,
                session_id,
                ..
            } => {
                session = match (error_code, sent.1) {
                    (0, 0) => (session_id > 0).then_some((session_id, 1)),
                    (0, epoch) if epoch > 0 => Some((session_id, epoch + 1)),
                    _ => None,
                };
            }
        }
    }
    session
}

/// A Fetch naming no partition in session `id` at `epoch`, sent by another connection than
/// the engine's (sessions are not bound to connections, KIP-227); its top-level error code.
async fn foreign_fetch(conn: &Connection, id: i32, epoch: i32) -> i16 {
    let request = FetchRequest {
        max_wait_ms: 0,
        min_bytes: 0,
        max_bytes: 1024,
        session_id: id,
        session_epoch: epoch,
        ..FetchRequest::default()
    };
    conn.send(&request).await.unwrap().error_code
}

/// Reads with another connection meddling with the engine's session after 300 records:
/// closing it (`steal_epoch` false: a full fetch with the session's id and epoch 0 closes it,
/// so the broker answers the engine's next incremental Fetch with FETCH_SESSION_ID_NOT_FOUND),
/// or using up the epoch the engine was to send next (so the broker answers it with
/// INVALID_FETCH_SESSION_EPOCH). Checks the broker's error reached the engine, the engine's
/// next Fetch was full, and every record came exactly once.
async fn foreign_session_use(steal_epoch: bool) {
    let broker = support::broker();
    let (topic, written) = topic_with(broker, 6, 150);
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = Client::connect([proxy.bootstrap()]).await.unwrap();
    let leader = broker.bootstrap().split(',').next().unwrap();
    let other = Connection::connect(leader, ConnectionConfig::default())
        .await
        .unwrap();
    let spec = ReadSpec::new([topic.as_str()], Start::Earliest, End::Latest);
    let plan = client.resolve(&spec).await.unwrap();
    // At most about two Fetch answers wait for the caller, so that after 300 records of 900
    // the engine still has Fetches to send: the meddling must reach one of them.
    let options = small_fetches().max_buffered_bytes(8 * 1024);
    let mut stream = client.read(plan, options).records();
    let mut read = Vec::new();
    let mut meddled = None;
    tokio::time::timeout(READ_LIMIT, async {
        while let Some(r) = stream.next().await {
            read.push(Record::from(&r.unwrap()));
            if read.len() != 300 {
                continue;
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while meddled.is_none() && Instant::now() < deadline {
                let Some((id, epoch)) = current_session(&proxy.fetches()) else {
                    panic!("no session after 300 records: {:#?}", proxy.fetches());
                };
                let code = if steal_epoch {
                    foreign_fetch(&other, id, epoch).await
                } else {
                    foreign_fetch(&other, id, 0).await
                };
                if code == 0 {
                    meddled = Some(id);
                } else {
                    // The engine's own Fetch took that epoch first: try the next one.
                    assert_eq!(code, 71, "{steal_epoch}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    })
    .await
    .expect("the read ends");
    let id = meddled.expect("the other connection got its Fetch in");
    read.sort();
    assert_eq!(read.len(), written.len());
    assert_eq!(read, written);
    let seen = proxy.fetches();
    let code = if steal_epoch { 71 } else { 70 };
    assert_eq!(check_history(&seen), [code], "{seen:#?}");
    let failed = seen
        .iter()
        .position(|s| matches!(s, FetchSeen::Response { error_code, .. } if *error_code == code))
        .unwrap();
    let next = (if steal_epoch { id } else { 0 }, 0);
    assert!(
        matches!(seen[failed + 1], FetchSeen::Request { session_id, session_epoch, .. }
            if (session_id, session_epoch) == next),
        "{seen:#?}"
    );
}

#[tokio::test]
async fn a_session_closed_by_another_connection_is_not_found_then_reopened() {
    foreign_session_use(false).await;
}

#[tokio::test]
async fn an_epoch_used_up_by_another_connection_is_invalid_then_the_session_reopened() {
    foreign_session_use(true).await;
}

#[tokio::test]
async fn without_sessions_every_fetch_is_full_and_sessionless() {
    let broker = support::broker();
    let (topic, written) = topic_with(broker, 4, 100);
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = Client::connect([proxy.bootstrap()]).await.unwrap();
    let options = small_fetches().fetch_sessions(false);
    let read = read_all(&client, &topic, options, |_| {}).await;
    assert_eq!(read, written);
    let sent = requests(&proxy.fetches());
    assert!(sent.len() > 4);
    assert!(
        sent.iter().all(|r| (r.0, r.1, r.3) == (0, -1, 0)),
        "{sent:?}"
    );
}

/// The figures of BENCHMARKS.md "Fetch sessions": request sizes through the proxy, read
/// rates without it, of topic `KSEEK_MEASURE_TOPIC` (1,000 partitions there) on the broker at
/// `KSEEK_MEASURE_BOOTSTRAP`, prepared as BENCHMARKS.md says. Every read must hand out the
/// same records as the first.
#[tokio::test]
#[ignore = "needs a prepared topic of 1,000 partitions; run by hand for BENCHMARKS.md"]
async fn measure_1000_partitions() {
    let bootstrap = std::env::var("KSEEK_MEASURE_BOOTSTRAP").expect("KSEEK_MEASURE_BOOTSTRAP");
    let topic = std::env::var("KSEEK_MEASURE_TOPIC").expect("KSEEK_MEASURE_TOPIC");
    let direct = Client::connect(bootstrap.split(',')).await.unwrap();
    let expected = read_all(&direct, &topic, ReadOptions::default(), |_| {}).await;
    let partitions: std::collections::BTreeSet<i32> =
        expected.iter().map(|r| r.partition).collect();
    eprintln!(
        "topic {topic}: {} records in {} partitions",
        expected.len(),
        partitions.len()
    );
    let shapes = [
        ("default fetch sizes", ReadOptions::default()),
        (
            "fetch_max_bytes 64 KiB",
            ReadOptions::default().fetch_max_bytes(64 * 1024),
        ),
    ];
    for (shape, options) in &shapes {
        for sessions in [true, false] {
            let proxy = FaultProxy::start(&bootstrap);
            let client = Client::connect([proxy.bootstrap()]).await.unwrap();
            let o = options.clone().fetch_sessions(sessions);
            let read = read_all(&client, &topic, o, |_| {}).await;
            assert_eq!(read, expected);
            let seen = proxy.fetches();
            let sent = requests(&seen);
            let full: Vec<usize> = sent.iter().filter(|r| r.1 <= 0).map(|r| r.4).collect();
            let mut inc: Vec<usize> = sent.iter().filter(|r| r.1 > 0).map(|r| r.4).collect();
            inc.sort_unstable();
            let answers: usize = seen
                .iter()
                .map(|s| match s {
                    FetchSeen::Response { frame_len, .. } => *frame_len,
                    _ => 0,
                })
                .sum();
            eprintln!(
                "{shape}, sessions {sessions}: {} Fetches ({} full, first {} B; {} incremental, \
                 median {} B, max {} B); request bytes {}, response bytes {}",
                sent.len(),
                full.len(),
                full.first().copied().unwrap_or(0),
                inc.len(),
                inc.get(inc.len() / 2).copied().unwrap_or(0),
                inc.last().copied().unwrap_or(0),
                sent.iter().map(|r| r.4).sum::<usize>(),
                answers,
            );
        }
    }
    for (shape, options) in &shapes {
        let mut rates: BTreeMap<bool, Vec<f64>> = BTreeMap::new();
        for _round in 0..5 {
            for sessions in [true, false] {
                let o = options.clone().fetch_sessions(sessions);
                let t = Instant::now();
                let read = read_all(&direct, &topic, o, |_| {}).await;
                let rate = read.len() as f64 / t.elapsed().as_secs_f64();
                assert_eq!(read, expected);
                rates.entry(sessions).or_default().push(rate);
            }
        }
        for (sessions, mut r) in rates {
            r.sort_by(f64::total_cmp);
            eprintln!(
                "{shape}, sessions {sessions}: records/s median {:.0} (min {:.0}, max {:.0}) \
                 over 5 reads",
                r[2], r[0], r[4]
            );
        }
    }
}

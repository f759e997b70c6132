//! Seeded fault schedules through the whole client over simulated brokers.
//!
//! Each scenario builds a cluster and a fault schedule from a seed, runs the real [`Client`]
//! against it on tokio's paused clock, and checks the exact result against the cluster state.
//! `KSEEK_SIM_SCHEDULES` sets the seeds per scenario (default [`DEFAULT_SCHEDULES`], and
//! `SASL_SCHEDULES` for the SASL scenario, which needs the `sasl` feature);
//! `KSEEK_SIM_SEED` runs one seed alone, as the line printed for a failing seed says.

use std::future::Future;
use std::time::Duration;

use kseek_protocol::ErrorCode;

use super::*;
use crate::client::{Client, ClientConfig, METADATA_HEDGE_AFTER};
#[cfg(feature = "group")]
use crate::group::CommitOffset;
use crate::plan::{End, Plan, ReadSpec, Start};
use crate::read::ReadOptions;

/// Seeds per scenario when `KSEEK_SIM_SCHEDULES` is not set.
const DEFAULT_SCHEDULES: u64 = 5_000;
/// Seeds of the SASL scenario (slower: a broken broker makes it retry to the deadline).
const SASL_SCHEDULES: u64 = 2_000;
/// The first timestamp of the simulated logs.
const BASE_TIMESTAMP: i64 = 1_767_261_600_000;
/// A record as read: offset, timestamp, value.
type Record = (i64, i64, Option<Vec<u8>>);
/// No scenario may take longer than this on the paused clock: past it, it hangs.
const HANG: Duration = Duration::from_secs(600);

/// Runs `scenario` for every seed (or the one in `KSEEK_SIM_SEED`), each on a fresh
/// current-thread runtime with a paused clock; panics naming the first failing seed with
/// the command that runs it alone.
fn run_seeds<F, Fut>(name: &str, scenario: F)
where
    F: Fn(u64, Rng) -> Fut,
    Fut: Future<Output = std::result::Result<u64, String>>,
{
    let env = |key: &str| std::env::var(key).ok().and_then(|v| v.parse::<u64>().ok());
    // The SASL scenario exists only with the `sasl` feature (not a default one), and is slower.
    let (features, default_schedules) = if name.starts_with("sasl") {
        (" --features sasl", SASL_SCHEDULES)
    } else {
        ("", DEFAULT_SCHEDULES)
    };
    let seeds: Vec<u64> = match env("KSEEK_SIM_SEED") {
        Some(seed) => vec![seed],
        None => (0..env("KSEEK_SIM_SCHEDULES").unwrap_or(default_schedules)).collect(),
    };
    let started = std::time::Instant::now();
    let mut faults_hit = 0;
    for &seed in &seeds {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime.block_on(async {
                match tokio::time::timeout(HANG, scenario(seed, Rng::new(seed))).await {
                    Ok(result) => result,
                    Err(_) => Err(format!("still running after {HANG:?} of paused clock")),
                }
            })
        }))
        .unwrap_or_else(|_| Err("panicked".to_owned()));
        match outcome {
            Ok(hit) => faults_hit += hit,
            Err(why) => panic!(
                "seed {seed} failed: {why}\nreproduce: KSEEK_SIM_SEED={seed} cargo test -p kseek --lib{features} sim::wire::tests::{name}"
            ),
        }
    }
    eprintln!(
        "{name}: {} seeded schedules, {faults_hit} faults hit, in {:?}",
        seeds.len(),
        started.elapsed()
    );
}

/// A cluster of three brokers and one to four partitions with random leaders, log starts and
/// non-decreasing timestamps.
fn random_cluster(rng: &mut Rng) -> WireCluster {
    let nodes = vec![1, 2, 3];
    let partitions = (0..1 + rng.below(4))
        .map(|p| {
            let leader = *rng.pick(&nodes);
            let mut ts = BASE_TIMESTAMP + rng.below(3) as i64 * 1000;
            let timestamps = (0..rng.below(20))
                .map(|_| {
                    ts += rng.below(3) as i64 * 1000;
                    ts
                })
                .collect();
            Partition {
                leader,
                leader_epoch: 5 + p as i32,
                previous_leader: leader,
                log_start: rng.below(50) as i64,
                timestamps,
            }
        })
        .collect();
    let coordinator = *rng.pick(&nodes);
    WireCluster {
        nodes,
        partitions,
        coordinator,
        ..Default::default()
    }
}

/// A [`random_cluster`] with up to four faults at request indexes after the bootstrap (its
/// ApiVersions and Metadata) and before `2 + within`, drawn from `kinds`, a close before or
/// after a request and, with `move_leaders`, a leader move of each partition.
fn faulty_cluster(rng: &mut Rng, kinds: &[Fault], move_leaders: bool, within: u64) -> WireCluster {
    let mut cluster = random_cluster(rng);
    let moves = (0..cluster.partitions.len() as i32)
        .map(Fault::MoveLeader)
        .filter(|_| move_leaders);
    let closes = [Fault::CloseBefore, Fault::CloseAfter];
    let kinds: Vec<Fault> = kinds.iter().chain(&closes).copied().chain(moves).collect();
    cluster.faults = (0..rng.below(5))
        .map(|_| (2 + rng.below(within), *rng.pick(&kinds)))
        .collect();
    cluster
}

/// A client of `net` with short retry waits.
async fn client(net: &SimNet) -> std::result::Result<Client, String> {
    let config = ClientConfig::new(net.bootstrap())
        .request_timeout(Duration::from_secs(5))
        .retry_backoff(Duration::from_millis(50))
        .retry_deadline(Duration::from_secs(60));
    Client::with_config(config)
        .await
        .map_err(|e| format!("bootstrap: {e}"))
}

/// The plan of a read of the simulated topic from `start` to `end`.
async fn resolve(client: &Client, start: Start, end: End) -> std::result::Result<Plan, String> {
    let what = format!("resolve from {start:?} to {end:?}");
    let spec = ReadSpec::new([WIRE_TOPIC], start, end);
    client
        .resolve(&spec)
        .await
        .map_err(|e| format!("{what}: {e}"))
}

/// The faults `cluster` hit if `got` is `want`, else an error showing both (`what` names them).
fn expect<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: T,
    want: T,
    cluster: &WireCluster,
) -> std::result::Result<u64, String> {
    if got != want {
        return Err(format!(
            "{what}: got {got:?}, want {want:?} ({} faults hit)",
            cluster.faults_hit
        ));
    }
    Ok(cluster.faults_hit)
}

/// A timestamp around the logs' range: before, inside or after it.
fn random_time(rng: &mut Rng) -> i64 {
    BASE_TIMESTAMP - 2000 + rng.below(45) as i64 * 1000
}

/// A bootstrap server that closes the connection before or after it handles the bootstrap's
/// Metadata request (request 1, after ApiVersions): the client goes on to the next server, as
/// it does for one that refuses the connection, and then reads the cluster through it.
#[tokio::test(start_paused = true)]
async fn bootstrap_goes_on_when_a_server_closes_during_metadata() {
    for fault in [Fault::CloseBefore, Fault::CloseAfter] {
        let mut cluster = random_cluster(&mut Rng::new(1));
        cluster.faults = HashMap::from([(1, fault)]);
        let net = SimNet::start(cluster);
        let client = client(&net)
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        let plan = resolve(&client, Start::Earliest, End::Latest)
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        let cluster = net.lock();
        assert_eq!(cluster.faults_hit, 1, "{fault:?}");
        assert_eq!(plan.partitions.len(), cluster.partitions.len(), "{fault:?}");
    }
}

/// What fails while [`resolve_while_leaders_move`] resolves, besides closes and leader moves.
const LEADER_FAULTS: &[Fault] = &[
    Fault::Error(ErrorCode::NOT_LEADER_OR_FOLLOWER),
    Fault::Error(ErrorCode::LEADER_NOT_AVAILABLE),
    Fault::StaleMetadata,
];

/// Resolution of a read by start and end time while partition leaders move (the old leader
/// answers NOT_LEADER_OR_FOLLOWER, a stale epoch FENCED_LEADER_EPOCH), metadata goes stale,
/// ListOffsets answers errors and connections close: the plan must equal the one computed from
/// the cluster state (first offset at or after each time, the high watermark on a miss; the
/// log start and high watermark), with a leader epoch the partition had (a leader may move
/// after its partition's lookups are done).
#[test]
fn resolve_while_leaders_move() {
    run_seeds("resolve_while_leaders_move", |_, mut rng| async move {
        let net = SimNet::start(faulty_cluster(&mut rng, LEADER_FAULTS, true, 18));
        let (t1, t2) = {
            let (a, b) = (random_time(&mut rng), random_time(&mut rng));
            (a.min(b), a.max(b))
        };
        let client = client(&net).await?;
        let plan = resolve(&client, Start::Timestamp(t1), End::Timestamp(t2)).await?;
        let cluster = net.lock();
        let got: Vec<_> = plan
            .partitions
            .iter()
            .map(|p| {
                let epoch_seen =
                    p.leader_epoch <= cluster.partitions[p.partition as usize].leader_epoch;
                let offsets = (p.start, p.end, p.log_start_offset, p.last_fetchable_offset);
                (p.partition, offsets, epoch_seen)
            })
            .collect();
        let want: Vec<_> = cluster
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let at = |t| p.offset_for_time(t).map_or(p.high_watermark(), |(o, _)| o);
                let hwm = p.high_watermark();
                (i as i32, (at(t1), Some(at(t2)), p.log_start, hwm), true)
            })
            .collect();
        expect(&format!("plan from {t1} to {t2}"), got, want, &cluster)
    });
}

/// What fails while [`read_while_fetch_sessions_are_evicted`] reads, besides closes and leader
/// moves (evictions twice as often as errors).
const SESSION_FAULTS: &[Fault] = &[
    Fault::EvictSessions,
    Fault::EvictSessions,
    Fault::Error(ErrorCode::NOT_LEADER_OR_FOLLOWER),
];

/// A bounded read (earliest to latest) through the real read driver while fetch sessions are
/// evicted (the next incremental Fetch gets FETCH_SESSION_ID_NOT_FOUND), leaders move,
/// Fetches answer NOT_LEADER_OR_FOLLOWER and connections close: the records handed out are
/// exactly the partitions' records, each once, in offset order, with their timestamps.
#[test]
fn read_while_fetch_sessions_are_evicted() {
    run_seeds(
        "read_while_fetch_sessions_are_evicted",
        |_, mut rng| async move {
            let net = SimNet::start(faulty_cluster(&mut rng, SESSION_FAULTS, true, 30));
            let client = client(&net).await?;
            let plan = resolve(&client, Start::Earliest, End::Latest).await?;
            let mut records = client.read(plan, ReadOptions::default()).records();
            let mut got: BTreeMap<i32, Vec<Record>> = BTreeMap::new();
            while let Some(r) = records.next().await {
                let r = r.map_err(|e| format!("read: {e}"))?;
                let value = r.value.map(|v| v.to_vec());
                got.entry(r.partition)
                    .or_default()
                    .push((r.offset, r.timestamp, value));
            }
            let cluster = net.lock();
            let want: BTreeMap<i32, Vec<Record>> = cluster
                .partitions
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.timestamps.is_empty())
                .map(|(i, p)| {
                    let records = (p.log_start..p.high_watermark())
                        .zip(&p.timestamps)
                        .map(|(o, &t)| (o, t, Some(o.to_string().into_bytes())))
                        .collect();
                    (i as i32, records)
                })
                .collect();
            expect("records", got, want, &cluster)
        },
    );
}

/// What fails while [`commit_while_the_coordinator_moves`] commits, besides closes.
#[cfg(feature = "group")]
const COORDINATOR_FAULTS: &[Fault] = &[
    Fault::MoveCoordinator,
    Fault::Error(ErrorCode::NOT_COORDINATOR),
    Fault::Error(ErrorCode::COORDINATOR_LOAD_IN_PROGRESS),
    Fault::Error(ErrorCode::COORDINATOR_NOT_AVAILABLE),
    Fault::StaleMetadata,
];

/// Commits (one or two in a row, the second overwriting some partitions of the first) while
/// the coordinator moves (NOT_COORDINATOR from the old one), answers NOT_COORDINATOR,
/// COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE, and connections close before or
/// after the commit is applied: afterwards both the cluster and `Client::committed` hold
/// exactly the last offset, epoch and metadata committed per partition, and nothing for the
/// others.
#[cfg(feature = "group")]
#[test]
fn commit_while_the_coordinator_moves() {
    run_seeds(
        "commit_while_the_coordinator_moves",
        |seed, mut rng| async move {
            let cluster = faulty_cluster(&mut rng, COORDINATOR_FAULTS, false, 18);
            let partition_count = cluster.partitions.len() as i32;
            let net = SimNet::start(cluster);
            let client = client(&net).await?;
            let group = format!("g{seed}");
            let mut want: BTreeMap<i32, Committed> = BTreeMap::new();
            for round in 0..1 + rng.below(2) {
                let mut offsets = Vec::new();
                for partition in 0..partition_count {
                    if rng.below(3) != 0 {
                        offsets.push(CommitOffset {
                            topic: WIRE_TOPIC.to_owned(),
                            partition,
                            offset: rng.below(1000) as i64,
                            leader_epoch: rng.below(10) as i32,
                            metadata: Some(format!("round {round}")),
                        });
                    }
                }
                client
                    .commit(&group, &offsets)
                    .await
                    .map_err(|e| format!("commit round {round}: {e}"))?;
                for o in offsets {
                    want.insert(o.partition, (o.offset, o.leader_epoch, o.metadata));
                }
            }
            let committed = client
                .committed(&group, &[WIRE_TOPIC])
                .await
                .map_err(|e| format!("committed: {e}"))?;
            let got: Vec<_> = committed
                .iter()
                .map(|c| {
                    let row = c.offset.map(|o| (o, c.leader_epoch, c.metadata.clone()));
                    (c.partition, row)
                })
                .collect();
            let expected: Vec<_> = (0..partition_count)
                .map(|p| (p, want.get(&p).cloned()))
                .collect();
            let cluster = net.lock();
            let stored: BTreeMap<i32, Committed> = cluster
                .committed
                .iter()
                .map(|((_, p), c)| (*p, c.clone()))
                .collect();
            expect(
                "committed, stored",
                (got, stored),
                (expected, want),
                &cluster,
            )
        },
    );
}

/// Every connection authenticates with SASL PLAIN while connections close before or after the
/// broker handles a request (SaslHandshake and SaslAuthenticate among them, which a
/// reconnect must redo). One seed in three also has a broker that breaks off every SASL
/// exchange (closing after SaslHandshake, or starting its SaslAuthenticate answer and never
/// finishing it), and that broker leads partition 0. Resolution from earliest to latest must
/// then give the exact plan, or, with the broken broker, fail with
/// [`ErrorKind::RetriesExhausted`](crate::ErrorKind::RetriesExhausted) within the retry
/// deadline and one request timeout on the paused clock: never hang.
#[cfg(feature = "sasl")]
#[test]
fn sasl_connections_closing_mid_handshake() {
    use crate::conn::ConnectionConfig;
    use crate::error::ErrorKind;
    use crate::security::{SaslConfig, Secret, SecurityConfig};

    run_seeds(
        "sasl_connections_closing_mid_handshake",
        |seed, mut rng| async move {
            let mut cluster = random_cluster(&mut rng);
            cluster.sasl = Some(("alice".to_owned(), format!("pw{seed}")));
            // Maybe a close in the first bootstrap connection's SaslHandshake (request 1),
            // SaslAuthenticate (2) or Metadata (3): the client must go on to the next bootstrap
            // server. Then up to two more from request 8 on, past the bootstrap's Metadata
            // either way (3, or at most 7 after a close), in the SASL exchanges of the
            // connections resolution opens and in its requests.
            let mut faults = HashMap::new();
            if rng.below(2) == 0 {
                faults.insert(
                    1 + rng.below(3),
                    *rng.pick(&[Fault::CloseBefore, Fault::CloseAfter]),
                );
            }
            for _ in 0..rng.below(3) {
                let kind = *rng.pick(&[Fault::CloseBefore, Fault::CloseAfter]);
                faults.insert(8 + rng.below(15), kind);
            }
            cluster.faults = faults;
            if rng.below(3) == 0 {
                let how = *rng.pick(&[SaslFault::AfterHandshake, SaslFault::MidAuthenticate]);
                let bad = 3;
                cluster.bad_sasl = Some((bad, how));
                cluster.partitions[0].leader = bad;
                cluster.partitions[0].previous_leader = bad;
                // The bootstrap starts from a broker that works.
                cluster.faults.clear();
            }
            let broken = cluster.bad_sasl.is_some();
            let net = SimNet::start(cluster);
            let mut bootstrap = net.bootstrap();
            bootstrap.sort_by_key(|b| b.starts_with("sim-3"));
            let security = SecurityConfig::sasl_plaintext(SaslConfig::Plain {
                username: "alice".to_owned(),
                password: Secret::new(format!("pw{seed}")),
            });
            let request_timeout = Duration::from_secs(5);
            let retry_deadline = Duration::from_secs(30);
            let config = ClientConfig::new(bootstrap)
                .connection(ConnectionConfig::default().security(security))
                .request_timeout(request_timeout)
                .retry_backoff(Duration::from_millis(50))
                .retry_deadline(retry_deadline);
            let client = Client::with_config(config)
                .await
                .map_err(|e| format!("bootstrap: {e}"))?;
            let started = tokio::time::Instant::now();
            let spec = ReadSpec::new([WIRE_TOPIC], Start::Earliest, End::Latest);
            let result = client.resolve(&spec).await;
            let elapsed = started.elapsed();
            let cluster = net.lock();
            match result {
                Err(e) if broken => {
                    if !matches!(e.kind(), ErrorKind::RetriesExhausted { .. }) {
                        return Err(format!("a broken broker's error: {e}"));
                    }
                    if elapsed > retry_deadline + request_timeout {
                        return Err(format!("gave up only after {elapsed:?}: {e}"));
                    }
                }
                Err(e) => return Err(format!("resolve: {e}")),
                Ok(plan) if broken => {
                    return Err(format!("resolved through a broken broker: {plan:?}"))
                }
                Ok(plan) => {
                    let got: Vec<_> = plan
                        .partitions
                        .iter()
                        .map(|p| (p.partition, p.start, p.end))
                        .collect();
                    let want: Vec<_> = cluster
                        .partitions
                        .iter()
                        .enumerate()
                        .map(|(i, p)| (i as i32, p.log_start, Some(p.high_watermark())))
                        .collect();
                    if got != want {
                        return Err(format!("plan {got:?}, want {want:?}"));
                    }
                }
            }
            Ok(cluster.faults_hit)
        },
    );
}

/// Three brokers and one partition led by `leader` (also the coordinator), holding a record at
/// each of `timestamps`.
fn one_partition_on(leader: i32, timestamps: &[i64]) -> SimNet {
    SimNet::start(WireCluster {
        nodes: vec![1, 2, 3],
        partitions: vec![Partition {
            leader,
            leader_epoch: 5,
            previous_leader: leader,
            log_start: 0,
            timestamps: timestamps.to_vec(),
        }],
        coordinator: leader,
        ..Default::default()
    })
}

/// Reads `plan` to its end: each record's offset and timestamp, and when the first came.
async fn read_to_end(
    client: &Client,
    plan: Plan,
) -> (Vec<(i64, i64)>, Option<tokio::time::Instant>) {
    let mut records = client.read(plan, ReadOptions::default()).records();
    let mut got = Vec::new();
    let mut first_at = None;
    while let Some(r) = tokio::time::timeout(HANG, records.next())
        .await
        .expect("a hang")
    {
        let r = r.expect("the read");
        first_at.get_or_insert_with(tokio::time::Instant::now);
        got.push((r.offset, r.timestamp));
    }
    (got, first_at)
}

/// The server the client bootstrapped from freezes before anything marks it a suspect (it
/// takes requests and answers none), and resolving then needs the topic's metadata: the
/// Metadata request goes to the frozen broker on the one connection open. Unanswered for
/// [`METADATA_HEDGE_AFTER`], the same request also goes to another broker, so the read is
/// resolved a second later, not after the 30 s request timeout, and exactly.
#[tokio::test(start_paused = true)]
async fn a_metadata_request_to_a_frozen_broker_is_asked_again_of_another_after_a_second() {
    let timestamps: Vec<i64> = (0..10).map(|i| BASE_TIMESTAMP + i * 1000).collect();
    let net = one_partition_on(2, &timestamps);
    let client = Client::connect(net.bootstrap()).await.unwrap();
    net.lock().frozen.push(1);
    let started = tokio::time::Instant::now();
    let plan = tokio::time::timeout(HANG, resolve(&client, Start::Earliest, End::Latest))
        .await
        .expect("a hang")
        .expect("resolve");
    let took = started.elapsed();
    assert!(
        took <= METADATA_HEDGE_AFTER + Duration::from_millis(500),
        "resolved in {took:?}"
    );
    let (got, _) = read_to_end(&client, plan).await;
    let want: Vec<(i64, i64)> = (0..).zip(timestamps).collect();
    assert_eq!(got, want);
}

/// The leader of the only partition, also the server the client bootstrapped from, freezes
/// (it takes requests and answers none) as a read starts, and the partition's leader moves to
/// another broker 4 s later (a controller fences a frozen broker after its session timeout).
/// The only connections open are to the frozen broker, so the read's leader checks need a new
/// connection to a broker that answers: the read goes on from the new leader within half a
/// second of the move, not after the 30 s request timeout, and hands out the partition's
/// records exactly.
#[tokio::test(start_paused = true)]
async fn a_frozen_bootstrap_leaders_partition_resumes_soon_after_its_leader_moves() {
    let timestamps: Vec<i64> = (0..10).map(|i| BASE_TIMESTAMP + i * 1000).collect();
    let net = one_partition_on(1, &timestamps);
    let client = Client::connect(net.bootstrap()).await.unwrap();
    let plan = resolve(&client, Start::Earliest, End::Latest)
        .await
        .unwrap();
    net.lock().frozen.push(1);
    let started = tokio::time::Instant::now();
    let moved_at = started + Duration::from_secs(4);
    let state = net.state.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(moved_at).await;
        let mut cluster = state.lock().unwrap();
        let p = &mut cluster.partitions[0];
        (p.previous_leader, p.leader, p.leader_epoch) = (1, 2, p.leader_epoch + 1);
    });
    let (got, first_at) = read_to_end(&client, plan).await;
    let want: Vec<(i64, i64)> = (0..).zip(timestamps).collect();
    assert_eq!(got, want);
    let resumed = first_at.unwrap() - moved_at;
    assert!(
        resumed <= Duration::from_millis(500),
        "resumed {resumed:?} after the leader moved"
    );
}

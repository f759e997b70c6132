//! The simulation's proptest: 10,000 seeded schedules of faults, each read checked.

use kseek_protocol::messages::fetch::FetchPartition;
use kseek_protocol::messages::fetch::FetchTopic;
use kseek_protocol::records::{DecodeOptions, PartitionReader};

use super::check::*;
use super::cluster::*;
use super::harness::*;
use super::schedule::*;
use super::stats::*;
use super::*;

fn spec(batches: &[(u8, u8)]) -> PartitionSpec {
    PartitionSpec {
        log_start: 0,
        batches: batches
            .iter()
            .map(|&(records, value_len)| BatchSpec {
                records,
                value_len,
                gap: false,
                compressed: false,
                aborted: None,
            })
            .collect(),
        leader: 0,
        start: 0,
        len: 1000,
    }
}

fn schedule(partitions: Vec<PartitionSpec>, faults: Vec<(Trigger, Fault)>) -> Schedule {
    Schedule {
        seed: 1,
        brokers: 2,
        partitions,
        faults,
        blackout: None,
        outage: None,
        fetch_version: 13,
        topic_ids: true,
        read_committed: false,
        options: sim_options(1 << 20, 50 << 20, OutOfRange::ResetToLogStart),
        slow_caller: false,
    }
}

fn fetch_request(parts: &[(i32, i64, i32, i32)], max_bytes: i32) -> FetchRequest {
    FetchRequest {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes,
        session_id: 0,
        session_epoch: -1,
        topics: vec![FetchTopic {
            topic: TOPIC.to_owned(),
            topic_id: TOPIC_ID,
            partitions: parts
                .iter()
                .map(
                    |&(partition, fetch_offset, current_leader_epoch, partition_max_bytes)| {
                        FetchPartition {
                            partition,
                            fetch_offset,
                            current_leader_epoch,
                            partition_max_bytes,
                            ..FetchPartition::default()
                        }
                    },
                )
                .collect(),
            ..FetchTopic::default()
        }],
        ..FetchRequest::default()
    }
}

/// Partition 0's leadership moves to broker 1: one stale Metadata answer, one Fetch answered
/// by the old leader as if nothing happened.
fn leader_of_0_moves_to_1() -> Fault {
    Fault::LeaderMove {
        partition: 0,
        to: 1,
        stale_metadata: 1,
        election: false,
        lagging_fetches: 1,
    }
}

/// The kind of the error `d` delivered, if any.
fn error_kind<T>(d: &Delivery<T>) -> Option<&ErrorKind> {
    d.result.as_ref().err().map(Error::kind)
}

fn partitions(response: &FetchResponse) -> Vec<&PartitionData> {
    response
        .responses
        .iter()
        .flat_map(|t| &t.partitions)
        .collect()
}

/// Offsets of the whole batches in `records` read from `from`, and whether a partial one
/// trails.
fn whole(records: &Bytes, from: i64) -> (Vec<i64>, bool) {
    let mut reader = PartitionReader::new(records.clone(), from, DecodeOptions::default());
    let mut offsets = Vec::new();
    for batch in &mut reader {
        for r in batch.unwrap().records() {
            offsets.push(r.unwrap().offset());
        }
    }
    (offsets, reader.partial_batch().is_some())
}

/// The budget of a run of one hand-written schedule.
const SHORT: Budget = Budget {
    steps: 10_000,
    elapsed: Duration::from_secs(60),
};

/// Runs `s` (10,000 steps, 60 s of virtual time at most), which must finish without a
/// failure and read exactly what its plan gives: the run, and the records compared.
fn run_exact(s: &Schedule) -> (Run, u64) {
    let run = run(s, SHORT);
    let expected = Expectation::of(
        s,
        &run.plan,
        &run.cluster,
        run.retry_deadline,
        Duration::ZERO,
    );
    let compared = check(&expected, &run.outcome);
    assert!(
        run.outcome.finished && run.outcome.failed.is_none(),
        "{:?}",
        run.outcome.failed
    );
    (run, compared.unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn fetch_answers_are_cut_by_partition_and_response_max_bytes() {
    let s = schedule(vec![spec(&[(3, 50); 4]), spec(&[(3, 50); 4])], vec![]);
    let mut sim = SimCluster::new(&s);
    let size = sim.parts[0].batches[0].bytes.len() as i32;
    assert!(size > 150, "{size}");
    // Partition max bytes of 1.5 batches: one whole batch, then a partial one.
    let req = fetch_request(&[(0, 0, FIRST_EPOCH, size * 3 / 2)], 50 << 20);
    let d = sim.fetch(Duration::ZERO, 0, &req, 13);
    let (broker, version, response) = d.result.unwrap();
    assert_eq!((&*broker, version), ("sim-0:9092", 13));
    let data = partitions(&response)[0];
    assert_eq!(data.error_code, 0);
    assert_eq!(data.high_watermark, 12);
    let records = data.records.clone().unwrap();
    assert_eq!(records.len() as i32, size * 3 / 2);
    assert_eq!(whole(&records, 0), (vec![0, 1, 2], true));
    assert_eq!(sim.stats.cut, 1);
    // From the middle of a batch: the whole batch holding the offset comes.
    let req = fetch_request(&[(0, 4, FIRST_EPOCH, 1 << 20)], 50 << 20);
    let records = partitions(&sim.fetch(Duration::ZERO, 0, &req, 13).result.unwrap().2)[0]
        .records
        .clone()
        .unwrap();
    assert_eq!(whole(&records, 0).0, (3..12).collect::<Vec<_>>());
    // A limit below one batch: the first partition still gets one whole batch (KIP-74),
    // the second one the bytes left of the response (none).
    let req = fetch_request(
        &[(0, 3, FIRST_EPOCH, 10), (1, 0, FIRST_EPOCH + 1, 10)],
        size + 5,
    );
    let response = sim.fetch(Duration::ZERO, 0, &req, 13).result.unwrap().2;
    let data = partitions(&response);
    assert_eq!(
        whole(data[0].records.as_ref().unwrap(), 0),
        (vec![3, 4, 5], false)
    );
    assert_eq!(data[1].records.as_ref().unwrap().len(), 5);
    assert_eq!(sim.stats.whole_over_limit, 1);
    // At the log end: nothing, after the max wait.
    let req = fetch_request(&[(0, 12, FIRST_EPOCH, 1 << 20)], 50 << 20);
    let d = sim.fetch(Duration::ZERO, 0, &req, 13);
    assert!(d.at >= Duration::from_millis(500), "{:?}", d.at);
    assert!(partitions(&d.result.unwrap().2)[0]
        .records
        .as_ref()
        .unwrap()
        .is_empty());
}

#[test]
fn fetches_check_the_leader_and_its_epoch() {
    let s = schedule(
        vec![spec(&[(2, 1)])],
        vec![(Trigger::Request(1), leader_of_0_moves_to_1())],
    );
    let mut sim = SimCluster::new(&s);
    let code = |sim: &mut SimCluster, broker: i32, epoch: i32, version: i16| {
        let req = fetch_request(&[(0, 0, epoch, 1 << 20)], 50 << 20);
        let response = sim
            .fetch(Duration::ZERO, broker, &req, version)
            .result
            .unwrap()
            .2;
        ErrorCode(partitions(&response)[0].error_code)
    };
    assert_eq!(
        code(&mut sim, 1, FIRST_EPOCH, 13),
        ErrorCode::NOT_LEADER_OR_FOLLOWER
    );
    // The leader moved to broker 1 with epoch 6.
    assert_eq!(
        code(&mut sim, 0, FIRST_EPOCH, 13),
        ErrorCode::FENCED_LEADER_EPOCH
    );
    assert_eq!(code(&mut sim, 0, -1, 8), ErrorCode::NOT_LEADER_OR_FOLLOWER);
    assert_eq!(
        code(&mut sim, 1, FIRST_EPOCH + 2, 13),
        ErrorCode::UNKNOWN_LEADER_EPOCH
    );
    // The new leader's first answer stops at its lagging high watermark: offset 0.
    let req = fetch_request(&[(0, 0, FIRST_EPOCH + 1, 1 << 20)], 50 << 20);
    let response = sim.fetch(Duration::ZERO, 1, &req, 13).result.unwrap().2;
    let data = partitions(&response)[0];
    assert_eq!((data.error_code, data.high_watermark), (0, 0));
    assert!(data.records.as_ref().unwrap().is_empty());
    assert_eq!(sim.stats.lagging_high_watermark, 1);
    let response = sim.fetch(Duration::ZERO, 1, &req, 13).result.unwrap().2;
    let data = partitions(&response)[0];
    assert_eq!((data.error_code, data.high_watermark), (0, 2));
    assert_eq!(whole(data.records.as_ref().unwrap(), 0).0, [0, 1]);
    // The first Metadata answer after the move is stale, the next one is not.
    let topics = [Arc::from(TOPIC)];
    let leader = |sim: &mut SimCluster| {
        let m = sim.metadata(Duration::ZERO, &topics).result.unwrap();
        (
            m[0].partitions[0].leader_id,
            m[0].partitions[0].leader_epoch,
        )
    };
    assert_eq!(leader(&mut sim), (0, FIRST_EPOCH));
    assert_eq!(leader(&mut sim), (1, FIRST_EPOCH + 1));
    assert_eq!(sim.stats.leader_moves, 1);
    // Before v13 topics go by name.
    let mut req = fetch_request(&[(0, 0, -1, 1 << 20)], 50 << 20);
    req.topics[0].topic_id = Uuid::ZERO;
    let response = sim.fetch(Duration::ZERO, 1, &req, 12).result.unwrap().2;
    assert_eq!(partitions(&response)[0].error_code, 0);
    req.topics[0].topic = "other".to_owned();
    let response = sim.fetch(Duration::ZERO, 1, &req, 12).result.unwrap().2;
    assert_eq!(
        ErrorCode(partitions(&response)[0].error_code),
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
    );
}

#[test]
fn retention_makes_old_offsets_out_of_range() {
    let s = schedule(
        vec![spec(&[(4, 1); 3])],
        vec![(
            Trigger::Time(Duration::from_secs(1)),
            Fault::Retention {
                partition: 0,
                advance: 500,
                mid_batch: false,
            },
        )],
    );
    let mut sim = SimCluster::new(&s);
    let req = fetch_request(&[(0, 0, FIRST_EPOCH, 1 << 20)], 50 << 20);
    let response = sim.fetch(Duration::ZERO, 0, &req, 13).result.unwrap().2;
    assert_eq!(partitions(&response)[0].error_code, 0);
    // Half of 12 offsets is 6, inside the second batch: the first batch goes.
    let response = sim
        .fetch(Duration::from_secs(1), 0, &req, 13)
        .result
        .unwrap()
        .2;
    let data = partitions(&response)[0];
    assert_eq!(ErrorCode(data.error_code), ErrorCode::OFFSET_OUT_OF_RANGE);
    assert_eq!(data.log_start_offset, 4);
    let earliest = sim.list_earliest(Duration::from_secs(1), 0, TOPIC, 0);
    assert_eq!(earliest.result.unwrap(), 4);
    let earliest = sim.list_earliest(Duration::from_secs(1), 1, TOPIC, 0);
    assert!(
        matches!(earliest.result.as_ref().map_err(Error::kind), Err(ErrorKind::Partition { code, .. }) if *code == ErrorCode::NOT_LEADER_OR_FOLLOWER)
    );
    assert_eq!(sim.log_starts(), [4]);
    assert_eq!(sim.written(0, IsolationLevel::READ_UNCOMMITTED).len(), 12);
    assert_eq!(
        (
            sim.stats.retention,
            sim.stats.out_of_range,
            sim.stats.not_leader
        ),
        (1, 1, 1)
    );
}

#[test]
fn connection_faults_and_slow_answers() {
    let s = schedule(
        vec![spec(&[(1, 1)])],
        vec![
            (
                Trigger::Request(0),
                Fault::ConnectionLoss(LossPoint::Before),
            ),
            (
                Trigger::Request(1),
                Fault::ConnectionLoss(LossPoint::During),
            ),
            (Trigger::Request(2), Fault::ConnectionLoss(LossPoint::After)),
            (Trigger::Request(3), Fault::Slow { extra_ms: 3_000 }),
            (Trigger::Request(4), Fault::Slow { extra_ms: 300 }),
            (Trigger::Request(5), Fault::Empty { throttled: true }),
            (Trigger::Request(5), Fault::Empty { throttled: false }),
        ],
    );
    let mut sim = SimCluster::new(&s);
    let req = fetch_request(&[(0, 0, FIRST_EPOCH, 1 << 20)], 50 << 20);
    let t = Duration::from_secs(10);
    // Lost before the request is written, while it is read, after the answer: each closes
    // the connection, and only the loss while the broker reads it is an IO error.
    for expected in ["ConnectionClosed", "Io", "ConnectionClosed"] {
        let d = sim.fetch(t, 0, &req, 13);
        let kind = match error_kind(&d) {
            Some(ErrorKind::ConnectionClosed { .. }) => "ConnectionClosed",
            Some(ErrorKind::Io { .. }) => "Io",
            other => panic!("{other:?}"),
        };
        assert_eq!(kind, expected);
        assert!(d.closes_connection);
    }
    let d = sim.fetch(t, 0, &req, 13);
    assert!(
        matches!(error_kind(&d), Some(ErrorKind::Timeout { .. })),
        "{:?}",
        d.result
    );
    assert_eq!(d.at, t + REQUEST_TIMEOUT);
    let d = sim.fetch(t, 0, &req, 13);
    assert!(d.result.is_ok() && d.at > t + Duration::from_millis(300));
    let d = sim.fetch(t, 0, &req, 13);
    let response = d.result.unwrap().2;
    assert!(response.responses.is_empty() && response.throttle_time_ms > 0);
    let d = sim.fetch(t, 0, &req, 13);
    assert!(d.at >= t + Duration::from_millis(500));
    assert!(partitions(&d.result.unwrap().2)[0]
        .records
        .as_ref()
        .unwrap()
        .is_empty());
    let d = sim.fetch(t, 0, &req, 13);
    assert!(!partitions(&d.result.unwrap().2)[0]
        .records
        .as_ref()
        .unwrap()
        .is_empty());
    let s = SimStats {
        loss_before: 1,
        loss_during: 1,
        loss_after: 1,
        timeouts: 1,
        slow: 1,
        throttled: 1,
        empty: 1,
        ..sim.stats
    };
    assert_eq!(sim.stats, s);
}

#[test]
fn logs_hold_gaps_and_compressed_batches() {
    let mut p = spec(&[(3, 10), (2, 0), (0, 0)]);
    p.log_start = 10;
    p.batches[0].gap = true;
    p.batches[1].compressed = true;
    let sim = SimCluster::new(&schedule(vec![p], vec![]));
    let written = sim.written(0, IsolationLevel::READ_UNCOMMITTED);
    let offsets: Vec<i64> = written.iter().map(|w| w.0).collect();
    // 10, 12, 14, and 15 compacted away too; then 16, 17; then 18 and 19, emptied.
    assert_eq!(offsets, [10, 12, 14, 16, 17]);
    assert_eq!(sim.parts[0].log_end, 20);
    let all = sim.parts[0]
        .batches
        .iter()
        .fold(BytesMut::new(), |mut acc, b| {
            acc.extend_from_slice(&b.bytes);
            acc
        })
        .freeze();
    assert_eq!(whole(&all, 10).0, offsets);
    assert_eq!(written[1].1.as_deref(), Some(&b"0:12:xxxxxxxxxx"[..]));
}

fn good() -> (Expectation, Outcome) {
    let written: Vec<Written> = (0..6)
        .map(|o| (o, Some(Bytes::from(vec![o as u8]))))
        .collect();
    let expected = Expectation {
        ranges: vec![(0, 1, 5), (1, 0, 6)],
        written: vec![written.clone(), written.clone()],
        log_starts: vec![0, 3],
        retention: true,
        fail_on_out_of_range: false,
        may_fail: MayFail::NEVER,
        limit: Budget {
            steps: 100,
            elapsed: Duration::from_secs(60),
        },
    };
    let mut records: Vec<(i32, i64, Option<Bytes>)> = Vec::new();
    for o in 1..5 {
        records.push((0, o, written[o as usize].1.clone()));
    }
    // Partition 1 lost 1..3 to retention; they interleave with partition 0.
    records.insert(1, (1, 0, written[0].1.clone()));
    for o in 3..6 {
        records.push((1, o, written[o as usize].1.clone()));
    }
    let outcome = Outcome {
        records,
        losses: vec![(1, 1, 3)],
        positions: vec![
            (0, 3, false),
            (1, 1, false),
            (1, 3, false),
            (0, 5, true),
            (1, 6, true),
        ],
        violations: Vec::new(),
        failed: None,
        finished: true,
        waited_for_room: 0,
        max_buffered: 0,
        spent: Budget {
            steps: 10,
            elapsed: Duration::from_secs(1),
        },
    };
    (expected, outcome)
}

#[test]
fn the_checker_passes_a_good_outcome() {
    let (expected, outcome) = good();
    assert_eq!(check(&expected, &outcome), Ok(8));
}

#[test]
fn the_checker_fails_bad_outcomes() {
    fn fails(change: impl Fn(&mut Expectation, &mut Outcome), what: &str) {
        let (mut expected, mut outcome) = good();
        change(&mut expected, &mut outcome);
        let result = check(&expected, &outcome);
        assert!(result.is_err(), "{what}: {result:?}");
        let message = result.unwrap_err();
        assert!(message.contains(what), "{what}: {message}");
    }
    fails(|_, o| o.finished = false, "did not end");
    fails(|e, o| o.spent.steps = e.limit.steps + 1, "steps");
    fails(|e, o| o.spent.elapsed = e.limit.elapsed * 2, "virtual time");
    fails(|_, o| o.records.swap(0, 2), "out of order");
    fails(
        |_, o| {
            let r = o.records[0].clone();
            o.records.insert(1, r);
        },
        "twice",
    );
    fails(
        |_, o| {
            o.records.retain(|r| r.1 != 3 || r.0 != 0);
        },
        "expected 3",
    );
    fails(|_, o| o.records.retain(|r| r.1 != 5), "missing");
    fails(
        |_, o| o.records[0].2 = Some(Bytes::from_static(b"?")),
        "wrong value",
    );
    fails(|_, o| o.records.push((0, 5, None)), "beyond");
    fails(|_, o| o.records.push((7, 0, None)), "not in the plan");
    fails(|e, _| e.retention = false, "without retention");
    fails(|e, _| e.fail_on_out_of_range = true, "Fail policy");
    fails(|_, o| o.losses = vec![(1, 1, 4)], "not deleted");
    fails(|_, o| o.losses = vec![(1, 1, 7)], "not inside the plan");
    // A loss over records that were handed out: they are not expected.
    fails(
        |e, o| {
            e.log_starts[1] = 6;
            o.losses = vec![(1, 0, 3)];
        },
        "expected 3",
    );
    fails(|_, o| o.losses = vec![(1, 2, 3), (1, 1, 2)], "backwards");
    fails(
        |_, o| o.positions.push((0, 4, true)),
        "position went backwards",
    );
    fails(
        |_, o| o.positions.retain(|p| *p != (1, 6, true)),
        "not done",
    );
    fails(|_, o| o.positions.push((1, 6, false)), "not done");
    fails(
        |_, o| o.violations.push("a second Fetch to leader 0".into()),
        "contract",
    );
    let error = || {
        Error::from(ErrorKind::OffsetOutOfRange {
            broker: "b".into(),
            topic: TOPIC.into(),
            partition: 0,
            offset: 0,
        })
    };
    fails(|_, o| o.failed = Some((error(), Duration::ZERO)), "failed");
    fails(
        |e, o| {
            e.may_fail.give_up_by = Some(Duration::from_secs(5));
            o.failed = Some((error(), Duration::ZERO));
        },
        "failed",
    );
    let give_up = || {
        Error::from(ErrorKind::RetriesExhausted {
            what: "reading".into(),
            attempts: 3,
            elapsed: Duration::from_secs(1),
            source: error(),
        })
    };
    fails(
        |e, o| {
            e.may_fail.give_up_by = Some(Duration::from_secs(5));
            o.failed = Some((give_up(), Duration::from_secs(6)));
        },
        "gave up",
    );
    // Failing as allowed, the records must still be a prefix.
    fails(
        |e, o| {
            e.may_fail.out_of_range = true;
            o.failed = Some((error(), Duration::ZERO));
            o.records.retain(|r| r.1 != 2 || r.0 != 0);
        },
        "expected 2",
    );
}

#[test]
fn the_checker_accepts_a_prefix_when_failing_is_allowed() {
    let (mut expected, mut outcome) = good();
    expected.may_fail.out_of_range = true;
    outcome.failed = Some((
        Error::from(ErrorKind::OffsetOutOfRange {
            broker: "b".into(),
            topic: TOPIC.into(),
            partition: 0,
            offset: 3,
        }),
        Duration::from_secs(1),
    ));
    outcome.finished = false;
    outcome.records.retain(|r| r.0 != 0 || r.1 < 3);
    assert_eq!(check(&expected, &outcome), Ok(6));
}

#[test]
fn the_harness_reads_through_a_leader_move_a_lost_answer_and_retention() {
    let mut s = schedule(vec![spec(&[(3, 40); 6]), spec(&[(2, 10); 6])], vec![]);
    s.options.partition_max_bytes = 300;
    s.faults = vec![
        (Trigger::Request(1), leader_of_0_moves_to_1()),
        (Trigger::Request(2), Fault::ConnectionLoss(LossPoint::After)),
        (
            Trigger::Request(3),
            Fault::Retention {
                partition: 1,
                advance: 500,
                mid_batch: false,
            },
        ),
    ];
    let (
        Run {
            outcome, cluster, ..
        },
        compared,
    ) = run_exact(&s);
    let stats = cluster.stats;
    assert_eq!(
        (stats.leader_moves, stats.loss_after, stats.retention),
        (1, 1, 1)
    );
    assert!(stats.not_leader + stats.fenced >= 1, "{stats:?}");
    // Partition 1 lost the offsets retention deleted before the read got there.
    let lost: i64 = outcome.losses.iter().map(|l| l.2 - l.1).sum();
    assert_eq!(outcome.losses.iter().map(|l| l.0).collect::<Vec<_>>(), [1]);
    assert_eq!(compared as i64 + lost, 18 + 12);
}

#[test]
fn a_slow_caller_and_a_budget_below_one_batch_still_get_the_plan_exactly() {
    // Two partitions on two brokers, a lost answer and a leader move on the way.
    let mut s = schedule(vec![spec(&[(3, 40); 6]), spec(&[(2, 10); 6])], vec![]);
    s.options.partition_max_bytes = 300;
    s.faults = vec![
        (Trigger::Request(3), Fault::ConnectionLoss(LossPoint::After)),
        (
            Trigger::Request(5),
            Fault::LeaderMove {
                partition: 1,
                to: 0,
                stale_metadata: 1,
                election: false,
                lagging_fetches: 0,
            },
        ),
    ];
    let read = |budget: Option<usize>| {
        let mut s = s.clone();
        if let Some(budget) = budget {
            s.options.max_buffered_bytes = budget;
            s.slow_caller = true;
        }
        let (Run { outcome, .. }, compared) = run_exact(&s);
        assert_eq!(compared, 18 + 12, "budget {budget:?}");
        outcome
    };
    // Every batch is larger than one byte: each passes alone, and the machine waits for
    // the caller (starting no Fetch: the harness counts one as a violation) again and
    // again.
    let tight = read(Some(1));
    assert!(tight.waited_for_room >= 6, "{}", tight.waited_for_room);
    // The default budget with a caller that takes everything at once: never a wait.
    let roomy = read(None);
    assert_eq!(roomy.waited_for_room, 0);
    assert!(tight.max_buffered > 1);
}

#[test]
fn the_harness_reads_through_lost_fetch_sessions_exactly() {
    // Six partitions on two brokers, small fetches: many incremental Fetches per broker.
    let mut s = schedule(vec![spec(&[(3, 40); 6]); 6], vec![]);
    s.options.partition_max_bytes = 300;
    s.options.fetch_max_bytes = 600;
    s.faults = vec![
        (Trigger::Request(6), Fault::SessionLoss { epoch: false }),
        (Trigger::Request(14), Fault::SessionLoss { epoch: true }),
    ];
    let (
        Run {
            outcome, cluster, ..
        },
        compared,
    ) = run_exact(&s);
    assert!(outcome.losses.is_empty());
    assert_eq!(compared, 6 * 18);
    let stats = cluster.stats;
    assert!(stats.session_not_found >= 1, "{stats:?}");
    assert!(stats.session_epoch >= 1, "{stats:?}");
    assert!(stats.incremental > stats.fetches / 2, "{stats:?}");
    // Sessions off in the options: no incremental Fetch.
    let mut off = s.clone();
    off.fetch_version = 6;
    off.topic_ids = false;
    let Run {
        outcome, cluster, ..
    } = run(&off, SHORT);
    assert!(outcome.finished && outcome.failed.is_none());
    assert_eq!(cluster.stats.incremental, 0, "no sessions below Fetch v7");
}

#[test]
fn a_read_gives_up_by_its_deadline_when_every_broker_is_gone() {
    let mut s = schedule(vec![spec(&[(3, 40); 4])], vec![]);
    s.blackout = Some(Duration::ZERO);
    let Run {
        outcome, cluster, ..
    } = run(&s, SHORT);
    let Some((error, at)) = &outcome.failed else {
        panic!("{:?}", outcome.failed);
    };
    assert!(
        matches!(error.kind(), ErrorKind::RetriesExhausted { .. }),
        "{error:?}"
    );
    assert!(*at <= BLACKOUT_DEADLINE + RETRY_BACKOFF_MAX, "{at:?}");
    assert!(*at >= BLACKOUT_DEADLINE - RETRY_BACKOFF_MAX, "{at:?}");
    assert!(outcome.records.is_empty());
    assert_eq!(cluster.stats.blackout, cluster.stats.requests);
}

#[test]
fn read_committed_skips_aborted_transactions_and_markers() {
    let mut p = spec(&[(2, 5), (3, 5), (2, 5), (1, 5)]);
    p.batches[1].aborted = Some(true);
    p.batches[2].aborted = Some(false);
    for (read_committed, records) in [(true, 5), (false, 8)] {
        let mut s = schedule(vec![p.clone()], vec![]);
        s.read_committed = read_committed;
        s.options.partition_max_bytes = 100;
        let (Run { outcome, plan, .. }, compared) = run_exact(&s);
        assert_eq!(compared, records);
        // Offsets 0-1, the aborted 2-4 and their marker 5, the committed 6-7 and their
        // marker 8, then 9.
        let offsets: Vec<i64> = outcome.records.iter().map(|r| r.1).collect();
        let want: &[i64] = if read_committed {
            &[0, 1, 6, 7, 9]
        } else {
            &[0, 1, 2, 3, 4, 6, 7, 9]
        };
        assert_eq!(offsets, want);
        assert_eq!(plan.partitions[0].end, Some(10));
    }
}

#[test]
fn a_read_waits_out_an_outage_of_every_broker() {
    let mut s = schedule(vec![spec(&[(3, 40); 4]), spec(&[(1, 0); 3])], vec![]);
    s.outage = Some((Duration::ZERO, Duration::from_secs(20)));
    let (
        Run {
            outcome, cluster, ..
        },
        compared,
    ) = run_exact(&s);
    assert_eq!(compared, 15);
    assert!(
        outcome.spent.elapsed >= Duration::from_secs(20),
        "{:?}",
        outcome.spent.elapsed
    );
    // Backing off: about one request per backoff step, not a busy loop.
    assert!(cluster.stats.outage >= 10, "{:?}", cluster.stats);
    assert!(cluster.stats.outage <= 60, "{:?}", cluster.stats);
}

/// The first case proptest shrank (proptest-regressions/sim.txt holds its seed): retention
/// under the Fail policy in a schedule whose brokers later all go away. Failing on
/// OFFSET_OUT_OF_RANGE is allowed there too, not only giving up.
#[test]
fn the_fail_policy_may_end_a_read_in_a_blackout_schedule() {
    let mut p = spec(&[(2, 0), (6, 0)]);
    p.batches[0].gap = true;
    let mut s = schedule(
        vec![p],
        vec![(
            Trigger::Request(0),
            Fault::Retention {
                partition: 0,
                advance: 100,
                mid_batch: true,
            },
        )],
    );
    s.brokers = 1;
    s.blackout = Some(Duration::from_millis(7));
    s.fetch_version = 4;
    s.topic_ids = false;
    s.options.partition_max_bytes = 64;
    s.options.fetch_max_bytes = 100;
    s.options.out_of_range = OutOfRange::Fail;
    let Run {
        outcome,
        cluster,
        plan,
        retry_deadline,
    } = run(&s, SHORT);
    assert!(
        matches!(
            outcome.failed.as_ref().map(|(e, _)| e.kind()),
            Some(ErrorKind::OffsetOutOfRange { offset: 0, .. })
        ),
        "{:?}",
        outcome.failed
    );
    let expected = Expectation::of(&s, &plan, &cluster, retry_deadline, Duration::ZERO);
    assert_eq!(check(&expected, &outcome), Ok(0));
}

/// Figures summed over the schedules of one proptest run.
#[derive(Debug, Default)]
struct Totals {
    schedules: u64,
    finished: u64,
    gave_up: u64,
    out_of_range: u64,
    with_loss: u64,
    records: u64,
    steps: u64,
    waited_for_room: u64,
    virtual_time: Duration,
    stats: SimStats,
}

/// Runs schedule `s` and checks the read's outcome; adds its figures to `totals`.
fn run_and_check(s: &Schedule, totals: &mut Totals) -> std::result::Result<(), String> {
    let Run {
        outcome,
        cluster,
        plan,
        retry_deadline,
    } = run(
        s,
        Budget {
            steps: 100_000,
            elapsed: Duration::from_secs(3_600),
        },
    );
    let slack = REQUEST_TIMEOUT * 2 + RETRY_BACKOFF_MAX;
    let expected = Expectation::of(s, &plan, &cluster, retry_deadline, slack);
    let compared = check(&expected, &outcome)?;
    totals.schedules += 1;
    totals.records += compared;
    totals.steps += outcome.spent.steps;
    totals.waited_for_room += outcome.waited_for_room;
    totals.virtual_time += outcome.spent.elapsed;
    totals.finished += u64::from(outcome.finished);
    match outcome.failed.as_ref().map(|(e, _)| e.kind()) {
        Some(ErrorKind::OffsetOutOfRange { .. }) => totals.out_of_range += 1,
        Some(_) => totals.gave_up += 1,
        None => {}
    }
    totals.with_loss += u64::from(!outcome.losses.is_empty());
    totals.stats.add(&cluster.stats);
    Ok(())
}

/// The property of RELIABILITY.md: against every generated fault schedule, a bounded read
/// ends, hands out per partition exactly the plan's records in offset order less the loss
/// it reported, and loses nothing without retention; it may only give up (by its
/// deadline) when every broker went away, or fail on OFFSET_OUT_OF_RANGE when that is
/// its policy. `PROPTEST_CASES` sets the number of schedules (default 10,000).
#[test]
fn bounded_reads_hand_out_their_plan_exactly_under_faults() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let config = ProptestConfig {
        cases,
        source_file: Some(file!()),
        ..ProptestConfig::default()
    };
    let started = std::time::Instant::now();
    let totals = std::cell::RefCell::new(Totals::default());
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&schedules(), |s| {
        run_and_check(&s, &mut totals.borrow_mut()).map_err(TestCaseError::fail)
    });
    let totals = totals.into_inner();
    eprintln!(
        "sim: {} schedules in {:.1?} ({} finished, {} gave up in a blackout, {} failed on OFFSET_OUT_OF_RANGE, {} reported loss); {} records compared; {} steps ({} waiting for the caller); {:.0?} of virtual time",
        totals.schedules,
        started.elapsed(),
        totals.finished,
        totals.gave_up,
        totals.out_of_range,
        totals.with_loss,
        totals.records,
        totals.steps,
        totals.waited_for_room,
        totals.virtual_time,
    );
    eprintln!("sim: {:#?}", totals.stats);
    if let Err(e) = result {
        panic!("{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every generated schedule builds a cluster whose plan lies inside its logs.
    #[test]
    fn schedules_build_plans_inside_the_logs(s in schedules()) {
        let sim = SimCluster::new(&s);
        let plan = sim.plan(&s);
        prop_assert_eq!(plan.partitions.len(), s.partitions.len());
        for p in &plan.partitions {
            let end = p.end.unwrap();
            prop_assert!(p.log_start_offset <= p.start && p.start <= end);
            prop_assert!(end <= p.last_fetchable_offset);
        }
    }
}

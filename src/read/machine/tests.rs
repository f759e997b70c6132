//! The read machine against hand-made answers and a virtual clock.

use std::collections::HashMap;

use bytes::Bytes;
use kseek_protocol::messages::fetch::{self, PartitionData};
use kseek_protocol::records::{ControlRecordType, NewRecord, RecordBatchBuilder};

use super::session::next_epoch;
use super::*;
use crate::read::options::TimeFilter;

pub(crate) fn part(topic: &str, position: i64, end: Option<i64>) -> PartState {
    let mut p = PartState::new(Arc::from(topic), Uuid::ZERO, 0, position, end);
    p.done = false;
    p.max_bytes = 1024;
    p
}

pub(crate) fn batch(base: i64, n: i32) -> RecordBatchBuilder {
    let mut b = RecordBatchBuilder::new(base, 1_000 + base).partition_leader_epoch(3);
    for i in 0..n {
        b.push(NewRecord::new(i, i64::from(i)).value(format!("v{}", base + i64::from(i))));
    }
    b
}

pub(crate) fn wire(batches: &[RecordBatchBuilder]) -> Bytes {
    let mut out = Vec::new();
    for b in batches {
        out.extend_from_slice(&b.build().unwrap());
    }
    Bytes::from(out)
}

/// A machine reading `ranges` with a `partition_max_bytes` of 1024, and a batch larger than
/// that (see [`fifty_records_of_100_bytes`]).
fn with_max_bytes_1024(ranges: &[(i32, i64, Option<i64>)], now: Instant) -> (ReadMachine, Bytes) {
    let options = ReadOptions::default().partition_max_bytes(1024);
    (
        machine(&plan(ranges), &options, now),
        fifty_records_of_100_bytes(),
    )
}

/// One batch of 50 records of 100 bytes each: larger than a `partition_max_bytes` of 1024.
fn fifty_records_of_100_bytes() -> Bytes {
    let mut big = RecordBatchBuilder::new(0, 0);
    for i in 0..50 {
        big.push(NewRecord::new(i, 0).value(vec![b'x'; 100]));
    }
    wire(&[big])
}

pub(crate) fn data(records: Bytes) -> PartitionData {
    PartitionData {
        high_watermark: 100,
        records: Some(records),
        ..PartitionData::default()
    }
}

pub(crate) fn offsets_of(event: &Output) -> Vec<i64> {
    let Output::Chunk(Chunk { batches, .. }) = event else {
        panic!("not a chunk: {event:?}");
    };
    batches
        .iter()
        .flat_map(|b| b.records().map(|r| r.unwrap().offset()).collect::<Vec<_>>())
        .collect()
}

fn requested(topic: &str, id: u8, partition: i32) -> Requested {
    Requested {
        idx: 0,
        topic: Arc::from(topic),
        partition,
        sent: Sent {
            topic_id: Uuid([id; 16]),
            position: 10 + i64::from(partition),
            leader_epoch: 4,
            max_bytes: 1000,
        },
        unchanged: false,
    }
}

const PARAMS: FetchParams = FetchParams {
    max_wait_ms: 500,
    min_bytes: 1,
    max_bytes: 50 << 20,
    isolation: IsolationLevel::READ_COMMITTED,
};

#[test]
fn fetch_requests_group_partitions_by_topic_in_order() {
    let parts = [
        requested("b", 2, 1),
        requested("a", 1, 0),
        requested("b", 2, 0),
    ];
    let request = build_fetch(&parts, 13, &PARAMS, &SessionRequest::SESSIONLESS);
    assert_eq!((request.session_id, request.session_epoch), (0, -1));
    assert_eq!(request.isolation_level, IsolationLevel::READ_COMMITTED);
    assert_eq!(request.max_wait_ms, 500);
    assert_eq!(request.max_bytes, 50 << 20);
    let topics: Vec<(Uuid, Vec<i32>)> = request
        .topics
        .iter()
        .map(|t| {
            (
                t.topic_id,
                t.partitions.iter().map(|p| p.partition).collect(),
            )
        })
        .collect();
    assert_eq!(
        topics,
        [(Uuid([2; 16]), vec![1, 0]), (Uuid([1; 16]), vec![0])]
    );
    let p = &request.topics[0].partitions[0];
    assert_eq!(
        (
            p.fetch_offset,
            p.current_leader_epoch,
            p.partition_max_bytes
        ),
        (11, 4, 1000)
    );
    // Encodes at every version the client may pick.
    for version in [4, 8, 9, 12, 13, 17, 18] {
        let request = build_fetch(&parts, version, &PARAMS, &SessionRequest::SESSIONLESS);
        let mut buf = bytes::BytesMut::new();
        kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
        let expected_epoch = if version >= 9 { 4 } else { -1 };
        assert_eq!(
            request.topics[0].partitions[0].current_leader_epoch,
            expected_epoch
        );
    }
    // By name before v13: topics are told apart by name.
    let by_name = build_fetch(&parts, 12, &PARAMS, &SessionRequest::SESSIONLESS);
    assert_eq!(by_name.topics[0].topic, "b");
    assert_eq!(by_name.topics.len(), 2);
}

#[test]
fn unknown_topic_ids_fall_back_to_names() {
    let mut parts = vec![requested("a", 1, 0)];
    assert_eq!(fetch_version(18, &parts), 18);
    assert_eq!(fetch_version(11, &parts), 11);
    parts.push(requested("b", 0, 0));
    assert_eq!(fetch_version(18, &parts), 12);
    assert_eq!(fetch_version(12, &parts), 12);
}

#[test]
fn decoding_drops_records_outside_the_range_and_moves_by_batches() {
    let options = ReadOptions::default();
    let broker: Arc<str> = Arc::from("b:1");
    let mut p = part("t", 2, Some(7));
    let event = decode_partition(
        &mut p,
        0,
        data(wire(&[batch(0, 5), batch(5, 5)])),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event), [2, 3, 4, 5, 6]);
    let Output::Chunk(Chunk {
        batches,
        position,
        done,
        ..
    }) = &event
    else {
        unreachable!()
    };
    // The position moved past the whole second batch; what is handed out stops at the end.
    assert_eq!((*position, *done), (10, true));
    assert_eq!(batches[0].next_offset(), 5);
    assert_eq!(batches[1].next_offset(), 7);
    assert_eq!(batches[1].leader_epoch(), 3);
    assert_eq!(batches[1].high_watermark(), 100);
    assert!(p.done);

    // The time filter applies per record.
    let options = ReadOptions::default().time_filter(TimeFilter::new(Some(1_003), None));
    let mut p = part("t", 0, Some(5));
    let event = decode_partition(
        &mut p,
        0,
        data(wire(&[batch(0, 5)])),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event), [3, 4]);
}

#[test]
fn a_cut_off_batch_is_fetched_again_with_room_for_it() {
    let options = ReadOptions::default().partition_max_bytes(1024);
    let broker: Arc<str> = Arc::from("b:1");
    let full = fifty_records_of_100_bytes();
    let mut p = part("t", 0, Some(50));
    p.max_bytes = 1024;
    let event = decode_partition(
        &mut p,
        0,
        data(full.slice(..1024)),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap();
    assert!(event.is_none());
    assert_eq!(p.position, 0);
    assert!(!p.done);
    assert!(p.first);
    assert_eq!(p.max_bytes as usize, full.len());
    // Once it came whole, back to the default.
    let event = decode_partition(
        &mut p,
        0,
        data(full),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event).len(), 50);
    assert!(p.done && !p.first);
    assert_eq!(p.max_bytes, 1024);
}

#[test]
fn read_committed_uses_the_aborted_transactions_of_the_response() {
    let broker: Arc<str> = Arc::from("b:1");
    let records = wire(&[
        batch(0, 2).producer(7, 0, 0).transactional(true),
        RecordBatchBuilder::control_marker(2, 0, 7, 0, ControlRecordType::ABORT, 0),
        batch(3, 2),
    ]);
    let mut d = data(records);
    d.aborted_transactions = Some(vec![fetch::AbortedTransaction {
        producer_id: 7,
        first_offset: 0,
        ..Default::default()
    }]);
    for (level, expected) in [
        (IsolationLevel::READ_COMMITTED, vec![3, 4]),
        (IsolationLevel::READ_UNCOMMITTED, vec![0, 1, 3, 4]),
    ] {
        let mut p = part("t", 0, Some(5));
        let event = decode_partition(
            &mut p,
            0,
            d.clone(),
            &broker,
            level,
            &ReadOptions::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), expected);
        assert!(p.done);
    }
    // A range of nothing but the aborted transaction and its marker still ends.
    let mut p = part("t", 0, Some(3));
    let event = decode_partition(
        &mut p,
        0,
        d,
        &broker,
        IsolationLevel::READ_COMMITTED,
        &ReadOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event), Vec::<i64>::new());
    assert!(p.done);
    assert_eq!(p.position, 3);
}

#[test]
fn corrupt_records_name_the_partition_and_offset() {
    let broker: Arc<str> = Arc::from("b:1");
    let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let mut p = part("t", 0, None);
    let err = decode_partition(
        &mut p,
        0,
        data(Bytes::from(bytes)),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &ReadOptions::default(),
    )
    .unwrap_err();
    let DecodeFailure { before, error } = *err;
    assert!(
        matches!(error.kind(), ErrorKind::CorruptRecords { topic, offset: 2, .. } if topic == "t"),
        "{error:?}"
    );
    // The good batch before the broken one is still handed out, ending at offset 2.
    let Some(Output::Chunk(Chunk {
        batches,
        position: 2,
        done: false,
        ..
    })) = before
    else {
        panic!("{before:?}");
    };
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].next_offset(), 2);
}

// --- The machine, driven by hand with a virtual clock -----------------------------------

use std::time::Duration;

use kseek_protocol::messages::fetch::FetchableTopicResponse;

use crate::cluster::PartitionMetadata;
use crate::plan::PartitionPlan;
use crate::read::virtual_epoch;

const MS: Duration = Duration::from_millis(1);

fn plan(ranges: &[(i32, i64, Option<i64>)]) -> Plan {
    Plan {
        partitions: ranges
            .iter()
            .map(|&(partition, start, end)| PartitionPlan {
                topic: "t".into(),
                topic_id: Uuid([1; 16]),
                partition,
                start,
                end,
                log_start_offset: 0,
                last_fetchable_offset: end.unwrap_or(0),
                leader_epoch: 0,
                adjusted: None,
            })
            .collect(),
        isolation: IsolationLevel::READ_UNCOMMITTED,
    }
}

/// Topic "t" with these (partition, leader) pairs.
fn metadata(leaders: &[(i32, i32)]) -> Vec<TopicMetadata> {
    vec![TopicMetadata {
        name: "t".into(),
        topic_id: Uuid([1; 16]),
        partitions: leaders
            .iter()
            .map(|&(partition, leader_id)| PartitionMetadata {
                partition,
                leader_id,
                leader_epoch: 5,
                error_code: ErrorCode::NONE,
            })
            .collect(),
    }]
}

/// A Fetch answer (v12, by name) from broker "b:1" for topic "t".
fn answer(partitions: Vec<PartitionData>) -> Result<(Arc<str>, i16, FetchResponse)> {
    Ok((
        Arc::from("b:1"),
        12,
        FetchResponse {
            responses: vec![FetchableTopicResponse {
                topic: "t".into(),
                partitions,
                ..Default::default()
            }],
            ..Default::default()
        },
    ))
}

/// A Fetch that failed: the connection to broker "b:1" closed for `reason`.
fn connection_closed(reason: &str) -> Result<(Arc<str>, i16, FetchResponse)> {
    Err(ErrorKind::ConnectionClosed {
        broker: "b:1".into(),
        reason: reason.into(),
    }
    .into())
}

/// Partition data with one batch each: `(partition, base offset, record count)`.
fn records(batches: &[(i32, i64, i32)]) -> Vec<PartitionData> {
    batches
        .iter()
        .map(|&(partition, base, n)| records_of(partition, wire(&[batch(base, n)])))
        .collect()
}

fn records_of(partition: i32, records: Bytes) -> PartitionData {
    PartitionData {
        partition_index: partition,
        ..data(records)
    }
}

fn error_of(partition: i32, code: ErrorCode) -> PartitionData {
    PartitionData {
        partition_index: partition,
        error_code: code.0,
        ..PartitionData::default()
    }
}

fn machine(plan: &Plan, options: &ReadOptions, now: Instant) -> ReadMachine {
    ReadMachine::new(
        plan,
        options,
        Backoff::new(100 * MS, 1000 * MS, 3000 * MS),
        now,
    )
}

/// A machine reading the `plan` of `ranges` with the default options.
fn read_of(ranges: &[(i32, i64, Option<i64>)], now: Instant) -> ReadMachine {
    machine(&plan(ranges), &ReadOptions::default(), now)
}

fn transmits(m: &mut ReadMachine, now: Instant) -> Vec<Transmit> {
    std::iter::from_fn(|| m.poll_transmit(now)).collect()
}

fn outputs(m: &mut ReadMachine) -> Vec<Output> {
    std::iter::from_fn(|| m.poll_output()).collect()
}

/// The id of the one Metadata request in `t`, for cached (not refreshed) metadata.
fn metadata_id(t: &[Transmit]) -> u64 {
    match t {
        [Transmit::Metadata {
            id, refresh: false, ..
        }] => *id,
        other => panic!("expected one Metadata request, got {other:?}"),
    }
}

/// Answers the one Metadata request `m` sends at `now` with `leaders` (see [`metadata`]), and
/// returns what `m` sends next.
fn after_metadata(m: &mut ReadMachine, now: Instant, leaders: &[(i32, i32)]) -> Vec<Transmit> {
    let id = metadata_id(&transmits(m, now));
    m.handle_metadata(now, id, Ok(metadata(leaders)));
    transmits(m, now)
}

/// A Fetch sent: (id, leader, [(partition, position)]).
type FetchSent = (u64, i32, Vec<(i32, i64)>);

/// The Fetches in `t`.
fn fetches(t: &[Transmit]) -> Vec<FetchSent> {
    t.iter()
        .filter_map(|t| match t {
            Transmit::Fetch(PlannedFetch {
                id,
                leader,
                partitions,
                ..
            }) => Some((
                *id,
                *leader,
                partitions
                    .iter()
                    .map(|p| (p.partition, p.sent.position))
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}

/// The one Fetch in `t` (after the Metadata answer): its id and positions.
fn one_fetch(t: &[Transmit]) -> (u64, Vec<(i32, i64)>) {
    match &fetches(t)[..] {
        [(id, _, positions)] => (*id, positions.clone()),
        other => panic!("expected one Fetch, got {other:?}"),
    }
}

#[test]
fn partitions_of_an_overdue_fetch_whose_leader_moved_are_fetched_from_the_new_leader() {
    let t0 = virtual_epoch();
    let options = ReadOptions::default().max_wait(500 * MS);
    let mut m = machine(&plan(&[(0, 0, Some(10)), (1, 0, Some(10))]), &options, t0);
    let id = metadata_id(&transmits(&mut m, t0));
    m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
    let (old, positions) = one_fetch(&transmits(&mut m, t0));
    assert_eq!(positions, [(0, 0), (1, 0)]);
    // Broker 1 holds the Fetch past its max wait: overdue after 500 + 500 ms.
    let overdue = t0 + 1000 * MS;
    assert_eq!(m.poll_timeout(), Some(overdue));
    assert!(transmits(&mut m, overdue - MS).is_empty());
    m.handle_timeout(overdue);
    let check = match &transmits(&mut m, overdue)[..] {
        [Transmit::LeaderCheck { id, topics, avoid }] => {
            assert_eq!((&topics[..], &avoid[..]), (&[Arc::from("t")][..], &[1][..]));
            *id
        }
        other => panic!("expected a leader check, got {other:?}"),
    };
    // Nothing moved yet: checked again 250 ms later, the Fetch still stands.
    m.handle_metadata(overdue, check, Ok(metadata(&[(0, 1), (1, 1)])));
    assert!(transmits(&mut m, overdue).is_empty());
    let again = overdue + LEADER_CHECK_EVERY;
    assert_eq!(m.poll_timeout(), Some(again));
    m.handle_timeout(again);
    let check = match &transmits(&mut m, again)[..] {
        [Transmit::LeaderCheck { id, .. }] => *id,
        other => panic!("expected a leader check, got {other:?}"),
    };
    // Partition 0 moved to broker 2: fetched from it at once; partition 1 stays with
    // the overdue Fetch.
    m.handle_metadata(again, check, Ok(metadata(&[(0, 2), (1, 1)])));
    let new = fetches(&after_metadata(&mut m, again, &[(0, 2), (1, 1)]));
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!((new[0].1, &new[0].2[..]), (2, &[(0, 0)][..]));
    m.handle_fetch(again, new[0].0, answer(records(&[(0, 0, 4)])));
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Chunk(Chunk {
            idx: 0,
            position: 4,
            ..
        })]
    ));
    // Broker 1 answers late, opening session 7, with partition 0 from offset 0 too:
    // only partition 1's records are taken, partition 0's are not handed out twice.
    let late = answer(records(&[(0, 0, 4), (1, 0, 3)])).map(|(broker, version, response)| {
        let response = FetchResponse {
            session_id: 7,
            ..response
        };
        (broker, version, response)
    });
    m.handle_fetch(again, old, late);
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Chunk(Chunk {
            idx: 1,
            position: 3,
            ..
        })]
    ));
    // Session 7 does not hold partition 0 as we would think: the session with broker 1
    // starts over, its next Fetch is a full one (epoch 0) closing session 7.
    let id = metadata_id(&transmits(&mut m, again));
    m.handle_metadata(again, id, Ok(metadata(&[(0, 2), (1, 1)])));
    let next = transmits(&mut m, again);
    let to_1 = next.iter().find_map(|t| match t {
        Transmit::Fetch(PlannedFetch {
            leader: 1, session, ..
        }) => Some((session.id, session.epoch)),
        _ => None,
    });
    assert_eq!(to_1, Some((7, 0)), "{next:?}");
}

#[test]
fn fetching_ahead_pauses_while_the_budget_is_used_up_and_resumes_when_the_caller_takes() {
    let t0 = virtual_epoch();
    let first = wire(&[batch(0, 2)]);
    let second = wire(&[batch(2, 2)]);
    // Room for the first batch and a byte of the second.
    let budget = first.len() + 1;
    let options = ReadOptions::default().max_buffered_bytes(budget);
    let mut m = machine(&plan(&[(0, 0, Some(6))]), &options, t0);
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(at, [(0, 0)]);
    m.handle_fetch(t0, id, answer(vec![records_of(0, first.clone())]));
    let out = outputs(&mut m);
    assert_eq!(offsets_of(&out[0]), [0, 1]);
    assert_eq!(out[0].buffered_bytes(), first.len() as u64);
    assert_eq!(m.buffered_bytes(), first.len() as u64);
    // The caller has taken nothing, and the next Fetch goes out all the same: ahead.
    assert!(!m.is_waiting_for_room());
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(at, [(0, 2)]);
    m.handle_fetch(t0, id, answer(vec![records_of(0, second.clone())]));
    assert_eq!(offsets_of(&outputs(&mut m)[0]), [2, 3]);
    // Now the budget is used up: no request, no timeout, only the caller moves it on.
    assert!(m.is_waiting_for_room());
    assert_eq!(transmits(&mut m, t0 + 10 * MS), []);
    assert_eq!(m.poll_timeout(), None);
    assert!(!m.is_finished());
    // Taking the first batch is not enough (still budget bytes waiting)...
    m.handle_taken(first.len() as u64 - 1);
    assert!(m.is_waiting_for_room());
    assert_eq!(transmits(&mut m, t0), []);
    // ... taking all of it is: fetching resumes at once.
    m.handle_taken(first.len() as u64);
    assert_eq!(m.buffered_bytes(), second.len() as u64);
    assert!(!m.is_waiting_for_room());
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(at, [(0, 4)]);
    m.handle_fetch(t0, id, answer(records(&[(0, 4, 2)])));
    let out = outputs(&mut m);
    assert!(matches!(
        out[..],
        [Output::Chunk(Chunk {
            position: 6,
            done: true,
            ..
        })]
    ));
    // A bounded read ends when its positions reach their ends, taken or not.
    assert!(m.is_finished());
    assert!(!m.is_waiting_for_room());
}

#[test]
fn a_batch_larger_than_the_whole_budget_still_passes_alone() {
    let t0 = virtual_epoch();
    let big = wire(&[batch(0, 5)]);
    let options = ReadOptions::default().max_buffered_bytes(1);
    let mut m = machine(&plan(&[(0, 0, Some(8)), (1, 0, Some(2))]), &options, t0);
    let (id, _) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1), (1, 1)]));
    // Partition 1 has nothing yet; partition 0 a batch many times the budget.
    m.handle_fetch(
        t0,
        id,
        answer(vec![
            records_of(0, big.clone()),
            records_of(1, Bytes::new()),
        ]),
    );
    let out = outputs(&mut m);
    assert_eq!(out.len(), 1);
    assert_eq!(offsets_of(&out[0]), [0, 1, 2, 3, 4]);
    assert!(m.is_waiting_for_room());
    assert_eq!(transmits(&mut m, t0), []);
    m.handle_taken(big.len() as u64);
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1), (1, 1)]));
    assert_eq!(at, [(0, 5), (1, 0)]);
    m.handle_fetch(t0, id, answer(records(&[(0, 5, 3), (1, 0, 2)])));
    // Both chunks of the one response pass; the read is over.
    let out = outputs(&mut m);
    assert_eq!(out.len(), 2);
    assert!(m.is_finished());
}

#[test]
fn metadata_answered_after_other_fetches_filled_the_budget_starts_no_fetch() {
    let t0 = virtual_epoch();
    let one = wire(&[batch(0, 2)]);
    let options = ReadOptions::default().max_buffered_bytes(one.len() + 1);
    let leaders = [(0, 1), (1, 2)];
    let mut m = machine(&plan(&[(0, 0, Some(4)), (1, 0, Some(4))]), &options, t0);
    let sent = fetches(&after_metadata(&mut m, t0, &leaders));
    assert_eq!(sent.len(), 2);
    // Leader 1 answers: room is left, so Metadata for partition 0's next Fetch goes out.
    m.handle_fetch(t0, sent[0].0, answer(vec![records_of(0, one.clone())]));
    outputs(&mut m);
    let next = metadata_id(&transmits(&mut m, t0));
    // Before it is answered, leader 2's answer uses the budget up.
    m.handle_fetch(t0, sent[1].0, answer(vec![records_of(1, one.clone())]));
    outputs(&mut m);
    m.handle_metadata(t0, next, Ok(metadata(&leaders)));
    assert_eq!(transmits(&mut m, t0), []);
    assert!(m.is_waiting_for_room());
    // Once the caller takes both chunks, both partitions are asked for again.
    m.handle_taken(2 * one.len() as u64);
    let sent = fetches(&after_metadata(&mut m, t0, &leaders));
    let at: Vec<_> = sent.iter().map(|s| s.2.clone()).collect();
    assert_eq!(at, [vec![(0, 2)], vec![(1, 2)]]);
}

#[test]
fn a_plan_of_empty_ranges_is_finished_before_any_request() {
    let now = virtual_epoch();
    let mut m = read_of(&[(0, 5, Some(5)), (1, 7, Some(3))], now);
    assert!(m.is_finished());
    assert_eq!(m.poll_transmit(now), None);
    assert_eq!(m.poll_timeout(), None);
    assert!(m.poll_output().is_none());
}

#[test]
fn one_fetch_per_leader_until_every_partition_reaches_its_end() {
    let t0 = virtual_epoch();
    let p = plan(&[(0, 0, Some(4)), (1, 0, Some(2)), (2, 0, Some(3))]);
    let mut m = machine(&p, &ReadOptions::default(), t0);
    let id = metadata_id(&transmits(&mut m, t0));
    // Nothing more until the metadata is in.
    assert_eq!(transmits(&mut m, t0), []);
    m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 2), (2, 1)])));
    let sent = fetches(&transmits(&mut m, t0));
    assert_eq!(sent.len(), 2);
    assert_eq!((sent[0].1, &sent[0].2[..]), (1, &[(0, 0), (2, 0)][..]));
    assert_eq!((sent[1].1, &sent[1].2[..]), (2, &[(1, 0)][..]));
    // Leader 2 answers with all of partition 1; leader 1 still has its Fetch.
    m.handle_fetch(t0, sent[1].0, answer(records(&[(1, 0, 2)])));
    let out = outputs(&mut m);
    assert_eq!(offsets_of(&out[0]), [0, 1]);
    assert!(matches!(
        out[0],
        Output::Chunk(Chunk {
            idx: 1,
            position: 2,
            done: true,
            ..
        })
    ));
    assert!(!m.is_finished());
    assert_eq!(
        transmits(&mut m, t0),
        [],
        "partitions 0 and 2 are in flight"
    );
    // Leader 1 answers partition 0 in part, partition 2 whole.
    m.handle_fetch(t0, sent[0].0, answer(records(&[(0, 0, 3), (2, 0, 3)])));
    assert_eq!(outputs(&mut m).len(), 2);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1), (1, 2), (2, 1)]));
    assert_eq!(
        sent.iter().map(|f| f.2.clone()).collect::<Vec<_>>(),
        [vec![(0, 3)]]
    );
    m.handle_fetch(t0, sent[0].0, answer(records(&[(0, 3, 5)])));
    let out = outputs(&mut m);
    assert_eq!(offsets_of(&out[0]), [3], "records past the end are dropped");
    assert!(m.is_finished());
    assert_eq!(m.poll_transmit(t0), None);
}

/// (partition index, offsets) of each chunk in `out`.
fn chunks(out: &[Output]) -> Vec<(usize, Vec<i64>)> {
    out.iter()
        .map(|o| match o {
            Output::Chunk(Chunk { idx, .. }) => (*idx, offsets_of(o)),
            other => panic!("not a chunk: {other:?}"),
        })
        .collect()
}

#[test]
fn answers_out_of_request_order_go_to_their_own_partitions() {
    let t0 = virtual_epoch();
    // Partitions 0..4 of "t", all led by broker 1, each 3 records long.
    let p = plan(&[
        (0, 0, Some(3)),
        (1, 0, Some(3)),
        (2, 0, Some(3)),
        (3, 0, Some(3)),
    ]);
    let mut m = machine(&p, &ReadOptions::default(), t0);
    let (id, asked) = one_fetch(&after_metadata(
        &mut m,
        t0,
        &[(0, 1), (1, 1), (2, 1), (3, 1)],
    ));
    assert_eq!(asked, [(0, 0), (1, 0), (2, 0), (3, 0)]);
    // By name (v12): partition 2, then 0, a partition not asked for, 3 and 1, each with
    // a different number of records.
    m.handle_fetch(
        t0,
        id,
        answer(records(&[
            (2, 0, 3),
            (0, 0, 1),
            (7, 0, 3),
            (3, 0, 2),
            (1, 0, 3),
        ])),
    );
    assert_eq!(
        chunks(&outputs(&mut m)),
        [
            (2, vec![0, 1, 2]),
            (0, vec![0]),
            (3, vec![0, 1]),
            (1, vec![0, 1, 2]),
        ]
    );
    // By topic id (v13, the name left empty): 3 first, then 0 in two topic entries.
    let (id, asked) = one_fetch(&after_metadata(
        &mut m,
        t0,
        &[(0, 1), (1, 1), (2, 1), (3, 1)],
    ));
    assert_eq!(asked, [(0, 1), (3, 2)]);
    let by_id = |partitions| FetchableTopicResponse {
        topic_id: Uuid([1; 16]),
        partitions,
        ..Default::default()
    };
    let response = FetchResponse {
        responses: vec![by_id(records(&[(3, 2, 1)])), by_id(records(&[(0, 1, 2)]))],
        ..Default::default()
    };
    m.handle_fetch(t0, id, Ok((Arc::from("b:1"), 13, response)));
    assert_eq!(chunks(&outputs(&mut m)), [(3, vec![2]), (0, vec![1, 2])]);
    assert!(m.is_finished());
}

#[test]
fn retries_double_the_wait_invalidate_and_give_up_at_the_deadline() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let mut now = t0;
    let mut waits = Vec::new();
    let mut checks = 0;
    let mut id = metadata_id(&transmits(&mut m, now));
    let error = loop {
        m.handle_metadata(now, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, now));
        assert_eq!(sent.len(), 1);
        m.handle_fetch(
            now,
            sent[0].0,
            answer(vec![error_of(0, ErrorCode::NOT_LEADER_OR_FOLLOWER)]),
        );
        if let Some(Output::Failed(e)) = m.poll_output() {
            break e;
        }
        assert_eq!(
            transmits(&mut m, now),
            [Transmit::Invalidate {
                topic: Arc::from("t")
            }]
        );
        // Until the backoff ends nothing is fetched; leader checks go out every 250 ms
        // and find broker 1 still leading, so the backoff runs its course.
        let failed = now;
        id = loop {
            now = m.poll_timeout().expect("a backoff to wait for");
            m.handle_timeout(now);
            match &transmits(&mut m, now)[..] {
                [Transmit::LeaderCheck { id, avoid, .. }] => {
                    assert_eq!(avoid[..], [1]);
                    m.handle_metadata(now, *id, Ok(metadata(&[(0, 1)])));
                    checks += 1;
                }
                [Transmit::Metadata {
                    id, refresh: false, ..
                }] => break *id,
                other => panic!("unexpected {other:?}"),
            }
        };
        waits.push(now - failed);
    };
    assert_eq!(
        waits,
        [100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS],
        "the next wait, 1 s at 2.5 s, would end past the 3 s deadline"
    );
    assert!(checks >= 4, "{checks} leader checks");
    match error.kind() {
        ErrorKind::RetriesExhausted {
            attempts, elapsed, ..
        } => assert_eq!((*attempts, *elapsed), (6, 2500 * MS)),
        other => panic!("unexpected {other:?}"),
    }
    assert!(m.is_finished());
    assert_eq!(m.poll_transmit(now), None);
}

#[test]
fn a_partition_backing_off_after_its_leader_failed_is_fetched_once_a_check_finds_another() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let mut now = t0;
    let mut transmitted = transmits(&mut m, now);
    // Broker 1 refuses every Fetch (retries at 0.1, 0.3, 0.7 and 1.5 s, then a 1 s
    // backoff); from 1.6 s on, Metadata names broker 2 the leader.
    let moved_at = t0 + 1600 * MS;
    loop {
        let leader = if now >= moved_at { 2 } else { 1 };
        match &transmitted[..] {
            [] => {}
            [Transmit::Metadata {
                id, refresh: false, ..
            }] => {
                m.handle_metadata(now, *id, Ok(metadata(&[(0, leader)])));
                let sent = fetches(&transmits(&mut m, now));
                if sent[0].1 == 2 {
                    break;
                }
                m.handle_fetch(now, sent[0].0, connection_closed("refused"));
            }
            [Transmit::LeaderCheck { id, avoid, .. }] => {
                assert_eq!(avoid[..], [1]);
                let backoff_ends = m.parts[0].not_before.expect("backing off");
                m.handle_metadata(now, *id, Ok(metadata(&[(0, leader)])));
                if leader == 2 {
                    // Fetched from broker 2 at once, not when the backoff would end.
                    assert!(backoff_ends > now + 100 * MS, "{:?}", backoff_ends - now);
                    let sent = fetches(&after_metadata(&mut m, now, &[(0, 2)]));
                    assert_eq!((sent[0].1, &sent[0].2[..]), (2, &[(0, 0)][..]));
                    assert!(now - moved_at <= LEADER_CHECK_EVERY, "{:?}", now - moved_at);
                    return;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
        now = m.poll_timeout().expect("a backoff or a check to wait for");
        m.handle_timeout(now);
        transmitted = transmits(&mut m, now);
        transmitted.retain(|t| !matches!(t, Transmit::Invalidate { .. }));
    }
    panic!("the partition was fetched from broker 2 by a retry, not by a leader check");
}

#[test]
fn a_success_resets_the_retry_schedule_and_leader_minus_one_is_retried() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let id = metadata_id(&transmits(&mut m, t0));
    m.handle_metadata(t0, id, Ok(metadata(&[(0, -1)])));
    assert!(fetches(&transmits(&mut m, t0)).is_empty());
    let t1 = m.poll_timeout().unwrap();
    assert_eq!(t1 - t0, 100 * MS);
    m.handle_timeout(t1);
    let sent = fetches(&after_metadata(&mut m, t1, &[(0, 1)]));
    m.handle_fetch(t1, sent[0].0, answer(records(&[(0, 0, 2)])));
    assert_eq!(outputs(&mut m).len(), 1);
    // A transport error after the success waits the first backoff again.
    let sent = fetches(&after_metadata(&mut m, t1, &[(0, 1)]));
    m.handle_fetch(t1, sent[0].0, connection_closed("reset"));
    assert_eq!(m.poll_timeout().unwrap() - t1, 100 * MS);
    assert_eq!(
        transmits(&mut m, t1),
        [Transmit::Invalidate {
            topic: Arc::from("t")
        }]
    );
    // A fatal error ends the read at once.
    let t2 = t1 + 100 * MS;
    m.handle_timeout(t2);
    let id = metadata_id(&transmits(&mut m, t2));
    m.handle_metadata(
        t2,
        id,
        Err(ErrorKind::InvalidSpec {
            reason: "fatal".into(),
        }
        .into()),
    );
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Failed(e)] if matches!(e.kind(), ErrorKind::InvalidSpec { .. })
    ));
    assert!(m.is_finished());
}

#[test]
fn out_of_range_resets_to_the_log_start_reporting_the_loss() {
    let t0 = virtual_epoch();
    // Partition 0 from offset 2 to `end`, its first Fetch answered OFFSET_OUT_OF_RANGE.
    let out_of_range = |end: Option<i64>, options: &ReadOptions| {
        let mut m = machine(&plan(&[(0, 2, end)]), options, t0);
        let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
        let error = error_of(0, ErrorCode::OFFSET_OUT_OF_RANGE);
        m.handle_fetch(t0, sent[0].0, answer(vec![error]));
        m
    };
    let mut m = out_of_range(Some(10), &ReadOptions::default());
    let list = match &transmits(&mut m, t0)[..] {
        [Transmit::ListEarliest {
            id,
            topic,
            partition: 0,
            ..
        }] if &**topic == "t" => *id,
        other => panic!("expected a ListEarliest, got {other:?}"),
    };
    assert!(m.poll_output().is_none());
    m.handle_list_offsets(t0, list, Ok(6));
    match &outputs(&mut m)[..] {
        [Output::DataLoss {
            idx: 0,
            loss,
            position: 6,
            done: false,
        }] => assert_eq!((loss.from, loss.to, loss.skipped()), (2, 6, 4)),
        other => panic!("unexpected {other:?}"),
    }
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(sent[0].2, [(0, 6)]);

    // A log start past the end: the loss stops at the end and the partition is done.
    let mut m = out_of_range(Some(4), &ReadOptions::default());
    let Some(Transmit::ListEarliest { id, .. }) = m.poll_transmit(t0) else {
        panic!("expected a ListEarliest");
    };
    m.handle_list_offsets(t0, id, Ok(9));
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::DataLoss {
            loss: DataLoss { from: 2, to: 4, .. },
            position: 9,
            done: true,
            ..
        }]
    ));
    assert!(m.is_finished());

    // OutOfRange::Fail ends the read instead.
    let options = ReadOptions::default().out_of_range(OutOfRange::Fail);
    let mut m = out_of_range(Some(10), &options);
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Failed(e)] if matches!(e.kind(), ErrorKind::OffsetOutOfRange { offset: 2, .. })
    ));
    assert!(m.is_finished());
}

#[test]
fn discovery_adds_new_partitions_of_an_unbounded_read_at_their_log_start() {
    let t0 = virtual_epoch();
    // A max wait of a minute: partition 0's Fetch stays out past the discovery, without
    // going overdue (that would add leader checks, tested on their own).
    let options = ReadOptions::default()
        .partition_discovery(Some(30_000 * MS))
        .max_wait(60_000 * MS);
    let mut m = machine(&plan(&[(0, 0, None)]), &options, t0);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(m.poll_timeout(), Some(t0 + 30_000 * MS));
    // Discovery is due while partition 0's Fetch is still out.
    let t1 = t0 + 30_000 * MS;
    m.handle_timeout(t1);
    let discovery = match &transmits(&mut m, t1)[..] {
        [Transmit::Metadata {
            id,
            topics,
            refresh: true,
        }] if topics == &[Arc::from("t")] => *id,
        other => panic!("expected discovery's Metadata, got {other:?}"),
    };
    m.handle_metadata(t1, discovery, Ok(metadata(&[(0, 1), (1, 2)])));
    let list = match &transmits(&mut m, t1)[..] {
        [Transmit::ListEarliest {
            id, partition: 1, ..
        }] => *id,
        other => panic!("expected a ListEarliest for partition 1, got {other:?}"),
    };
    m.handle_list_offsets(t1, list, Ok(3));
    match &outputs(&mut m)[..] {
        [Output::Added(p)] => {
            assert_eq!(
                (p.partition, p.next_offset, p.end, p.done),
                (1, 3, None, false)
            )
        }
        other => panic!("unexpected {other:?}"),
    }
    // The new partition is fetched from its leader, the old one is still in flight.
    let new = fetches(&after_metadata(&mut m, t1, &[(0, 1), (1, 2)]));
    assert_eq!((new[0].1, &new[0].2[..]), (2, &[(1, 3)][..]));
    assert_eq!(m.poll_timeout(), Some(t1 + 30_000 * MS));
    m.handle_fetch(t1, sent[0].0, answer(vec![]));
    assert!(!m.is_finished(), "an unbounded read never finishes");
}

#[test]
fn a_decode_failure_hands_out_the_good_batches_then_the_error() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
    let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    m.handle_fetch(
        t0,
        sent[0].0,
        answer(vec![records_of(0, Bytes::from(bytes))]),
    );
    let out = outputs(&mut m);
    assert_eq!(out.len(), 2);
    assert_eq!(offsets_of(&out[0]), [0, 1]);
    assert!(matches!(
        &out[1],
        Output::Failed(e) if matches!(e.kind(), ErrorKind::CorruptRecords { offset: 2, .. })
    ));
    assert!(m.is_finished());
}

#[test]
fn a_batch_cut_off_by_max_bytes_is_asked_first_with_room_for_it() {
    let t0 = virtual_epoch();
    let (mut m, full) = with_max_bytes_1024(&[(0, 0, Some(10)), (1, 0, Some(50))], t0);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1), (1, 1)]));
    assert_eq!(sent[0].2, [(0, 0), (1, 0)]);
    m.handle_fetch(
        t0,
        sent[0].0,
        answer(vec![
            records_of(0, wire(&[batch(0, 2)])),
            records_of(1, full.slice(..1024)),
        ]),
    );
    assert_eq!(
        outputs(&mut m).len(),
        1,
        "nothing for the cut-off partition"
    );
    let id = metadata_id(&transmits(&mut m, t0));
    m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
    let Some(Transmit::Fetch(PlannedFetch { partitions, .. })) = m.poll_transmit(t0) else {
        panic!("expected a Fetch");
    };
    let asked: Vec<_> = partitions
        .iter()
        .map(|p| (p.partition, p.sent.position, p.sent.max_bytes))
        .collect();
    assert_eq!(asked, [(1, 0, full.len() as i32), (0, 2, 1024)]);
}

#[test]
fn unknown_and_inconsistent_topic_ids_are_retried_other_partition_errors_fail() {
    for (code, retried) in [
        (ErrorCode(100), true),
        (ErrorCode(103), true),
        (ErrorCode::FENCED_LEADER_EPOCH, true),
        (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, true),
        (ErrorCode::TOPIC_AUTHORIZATION_FAILED, false),
    ] {
        let t0 = virtual_epoch();
        let mut m = read_of(&[(0, 0, Some(10))], t0);
        let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
        m.handle_fetch(t0, sent[0].0, answer(vec![error_of(0, code)]));
        let failed = matches!(
            &outputs(&mut m)[..],
            [Output::Failed(e)] if matches!(e.kind(), ErrorKind::Partition { code: c, .. } if *c == code)
        );
        assert_eq!(
            (failed, m.poll_timeout().is_some()),
            (!retried, retried),
            "{code:?}"
        );
    }
}

// --- Fetch sessions (KIP-227) ------------------------------------------------------------

/// `answer` in fetch session `session` (0: none).
fn in_session(
    session: i32,
    partitions: Vec<PartitionData>,
) -> Result<(Arc<str>, i16, FetchResponse)> {
    let mut a = answer(partitions);
    if let Ok((_, _, response)) = &mut a {
        response.session_id = session;
    }
    a
}

const SESSION_NOT_FOUND: ErrorCode = ErrorCode::FETCH_SESSION_ID_NOT_FOUND;

/// A Fetch answer with the top-level error `code` (v12).
fn top_level_error(code: ErrorCode) -> Result<(Arc<str>, i16, FetchResponse)> {
    Ok((
        Arc::from("b:1"),
        12,
        FetchResponse {
            error_code: code.0,
            ..Default::default()
        },
    ))
}

/// What the next Fetch puts on the wire at v12, after its Metadata: its id, the
/// (partition, position) pairs sent, the partitions forgotten, (session id, epoch), and
/// every partition the machine waits for an answer about.
struct Wire {
    id: u64,
    sent: Vec<(i32, i64)>,
    forgotten: Vec<i32>,
    session: (i32, i32),
    asked: Vec<i32>,
}

fn next_fetch(m: &mut ReadMachine, now: Instant, leaders: &[(i32, i32)]) -> Wire {
    let t = after_metadata(m, now, leaders);
    let [Transmit::Fetch(planned)] = &t[..] else {
        panic!("expected one Fetch, got {t:?}");
    };
    let request = planned.request(12);
    let mut buf = bytes::BytesMut::new();
    kseek_protocol::Message::encode(&request, &mut buf, 12).unwrap();
    Wire {
        id: planned.id,
        sent: request
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| (p.partition, p.fetch_offset)))
            .collect(),
        forgotten: request
            .forgotten_topics_data
            .iter()
            .flat_map(|t| t.partitions.iter().copied())
            .collect(),
        session: (request.session_id, request.session_epoch),
        asked: planned.partitions.iter().map(|p| p.partition).collect(),
    }
}

/// Collects the offsets handed out per partition index.
fn collect(m: &mut ReadMachine, got: &mut HashMap<usize, Vec<i64>>) {
    for out in outputs(m) {
        if let Output::Chunk(Chunk { idx, .. }) = out {
            got.entry(idx).or_default().extend(offsets_of(&out));
        }
    }
}

#[test]
fn incremental_fetches_send_changed_partitions_only_and_forget_finished_ones() {
    let t0 = virtual_epoch();
    let p = plan(&[(0, 0, Some(4)), (1, 0, Some(10)), (2, 0, Some(3))]);
    let mut m = machine(&p, &ReadOptions::default(), t0);
    let leaders = [(0, 1), (1, 1), (2, 1)];
    let mut got = HashMap::new();

    // The first Fetch is full, asking for a session.
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(
        (f.session, &f.sent[..]),
        ((0, 0), &[(0, 0), (1, 0), (2, 0)][..])
    );
    m.handle_fetch(
        t0,
        f.id,
        in_session(
            42,
            vec![
                records_of(0, wire(&[batch(0, 2)])),
                records_of(2, Bytes::new()),
            ],
        ),
    );
    collect(&mut m, &mut got);

    // Only partition 0 moved: the next Fetch sends it alone; the broker keeps 1 and 2.
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (42, 1));
    assert_eq!(f.sent, [(0, 2)]);
    assert_eq!(f.asked, [0, 1, 2]);
    assert!(f.forgotten.is_empty());
    // Partition 1 is absent from the incremental answer: nothing new, same position.
    m.handle_fetch(t0, f.id, in_session(42, records(&[(0, 2, 2), (2, 0, 3)])));
    collect(&mut m, &mut got);

    // Partitions 0 and 2 reached their ends: forgotten. Partition 1 is still unchanged.
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (42, 2));
    assert_eq!((&f.sent[..], &f.forgotten[..]), (&[][..], &[0, 2][..]));
    assert_eq!(f.asked, [1]);
    m.handle_fetch(t0, f.id, in_session(42, vec![]));
    assert!(outputs(&mut m).is_empty());

    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(
        (f.session, &f.sent[..], &f.forgotten[..]),
        ((42, 3), &[][..], &[][..])
    );
    m.handle_fetch(t0, f.id, in_session(42, records(&[(1, 0, 10)])));
    collect(&mut m, &mut got);
    assert!(m.is_finished());
    assert_eq!(got[&0], [0, 1, 2, 3]);
    assert_eq!(got[&1], (0..10).collect::<Vec<_>>());
    assert_eq!(got[&2], [0, 1, 2]);
}

#[test]
fn a_raised_max_bytes_or_a_new_leader_epoch_is_a_change_too() {
    let t0 = virtual_epoch();
    let (mut m, full) = with_max_bytes_1024(&[(0, 0, Some(50)), (1, 0, Some(5))], t0);
    let f = next_fetch(&mut m, t0, &[(0, 1), (1, 1)]);
    m.handle_fetch(
        t0,
        f.id,
        in_session(7, vec![records_of(0, full.slice(..1024))]),
    );
    let f = next_fetch(&mut m, t0, &[(0, 1), (1, 1)]);
    assert_eq!((f.session, &f.sent[..]), ((7, 1), &[(0, 0)][..]));
    m.handle_fetch(t0, f.id, in_session(7, vec![]));
    // The metadata now has a newer leader epoch for partition 1.
    let id = metadata_id(&transmits(&mut m, t0));
    let mut md = metadata(&[(0, 1), (1, 1)]);
    md[0].partitions[1].leader_epoch = 6;
    m.handle_metadata(t0, id, Ok(md));
    let Some(Transmit::Fetch(planned)) = m.poll_transmit(t0) else {
        panic!("expected a Fetch");
    };
    let request = planned.request(12);
    let sent: Vec<_> = request.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition, p.current_leader_epoch))
        .collect();
    assert_eq!(
        (planned.session.id, planned.session.epoch, &sent[..]),
        (7, 2, &[(1, 6)][..])
    );
}

#[test]
fn session_errors_fall_back_to_a_full_fetch_at_once_losing_and_repeating_nothing() {
    for (code, next_session) in [
        (ErrorCode::FETCH_SESSION_ID_NOT_FOUND, (0, 0)),
        (ErrorCode::INVALID_FETCH_SESSION_EPOCH, (42, 0)),
        (ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR, (42, 0)),
    ] {
        let t0 = virtual_epoch();
        let mut m = read_of(&[(0, 0, Some(6)), (1, 0, Some(6))], t0);
        let leaders = [(0, 1), (1, 1)];
        let mut got = HashMap::new();
        let f = next_fetch(&mut m, t0, &leaders);
        m.handle_fetch(t0, f.id, in_session(42, records(&[(0, 0, 2), (1, 0, 2)])));
        collect(&mut m, &mut got);
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!((f.session, &f.sent[..]), ((42, 1), &[(0, 2), (1, 2)][..]));
        m.handle_fetch(t0, f.id, top_level_error(code));
        assert!(outputs(&mut m).is_empty(), "{code:?}");
        // No backoff, no metadata invalidated: a full fetch at once, from the positions.
        assert_eq!(m.poll_timeout(), None, "{code:?}");
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, next_session, "{code:?}");
        assert_eq!(f.sent, [(0, 2), (1, 2)], "{code:?}");
        m.handle_fetch(t0, f.id, in_session(43, records(&[(0, 2, 4), (1, 2, 4)])));
        collect(&mut m, &mut got);
        assert!(m.is_finished(), "{code:?}");
        assert_eq!(got[&0], (0..6).collect::<Vec<_>>(), "{code:?}");
        assert_eq!(got[&1], (0..6).collect::<Vec<_>>(), "{code:?}");
    }
}

#[test]
fn a_session_lost_again_before_an_incremental_answer_backs_off() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(6))], t0);
    let leaders = [(0, 1)];
    let f = next_fetch(&mut m, t0, &leaders);
    m.handle_fetch(t0, f.id, in_session(42, vec![]));
    let f = next_fetch(&mut m, t0, &leaders);
    m.handle_fetch(t0, f.id, top_level_error(SESSION_NOT_FOUND));
    assert_eq!(
        m.poll_timeout(),
        None,
        "the first loss: a full fetch at once"
    );
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (0, 0));
    m.handle_fetch(t0, f.id, in_session(43, vec![]));
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (43, 1));
    m.handle_fetch(t0, f.id, top_level_error(SESSION_NOT_FOUND));
    assert_eq!(
        m.poll_timeout(),
        Some(t0 + 100 * MS),
        "lost again: backs off"
    );
    assert!(matches!(
        &transmits(&mut m, t0)[..],
        [Transmit::Invalidate { .. }]
    ));
    let t1 = t0 + 100 * MS;
    m.handle_timeout(t1);
    let f = next_fetch(&mut m, t1, &leaders);
    assert_eq!((f.session, &f.sent[..]), ((0, 0), &[(0, 0)][..]));
    m.handle_fetch(t1, f.id, in_session(44, vec![]));
    let f = next_fetch(&mut m, t1, &leaders);
    m.handle_fetch(t1, f.id, in_session(44, records(&[(0, 0, 2)])));
    assert_eq!(outputs(&mut m).len(), 1);
    // An incremental answer came in between: the next loss is cured at once again.
    let f = next_fetch(&mut m, t1, &leaders);
    assert_eq!(f.session, (44, 2));
    m.handle_fetch(
        t1,
        f.id,
        top_level_error(ErrorCode::INVALID_FETCH_SESSION_EPOCH),
    );
    assert_eq!(m.poll_timeout(), None);
}

#[test]
fn a_session_error_on_a_full_fetch_or_a_lost_answer_backs_off() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(6))], t0);
    let f = next_fetch(&mut m, t0, &[(0, 1)]);
    assert_eq!(f.session, (0, 0));
    // A session error to a full fetch can't be cured by another full fetch: retried.
    m.handle_fetch(t0, f.id, top_level_error(SESSION_NOT_FOUND));
    assert_eq!(m.poll_timeout(), Some(t0 + 100 * MS));
    assert!(matches!(
        &transmits(&mut m, t0)[..],
        [Transmit::Invalidate { .. }]
    ));
    let t1 = t0 + 100 * MS;
    m.handle_timeout(t1);
    let f = next_fetch(&mut m, t1, &[(0, 1)]);
    m.handle_fetch(t1, f.id, in_session(9, records(&[(0, 0, 2)])));
    assert_eq!(outputs(&mut m).len(), 1);
    let f = next_fetch(&mut m, t1, &[(0, 1)]);
    assert_eq!(f.session, (9, 1));
    // The connection broke: the epoch the broker has is unknown. Close and start over.
    m.handle_fetch(t1, f.id, connection_closed("reset"));
    assert!(matches!(
        &transmits(&mut m, t1)[..],
        [Transmit::Invalidate { .. }]
    ));
    let t2 = m.poll_timeout().unwrap();
    m.handle_timeout(t2);
    let f = next_fetch(&mut m, t2, &[(0, 1)]);
    assert_eq!((f.session, &f.sent[..]), ((9, 0), &[(0, 2)][..]));
}

#[test]
fn without_a_session_every_fetch_is_full() {
    // The broker gives no session (id 0: sessions off, or its cache is full).
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(4)), (1, 0, Some(4))], t0);
    let leaders = [(0, 1), (1, 1)];
    let mut got = HashMap::new();
    for (round, from) in [(0, 0), (1, 2)] {
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, (0, 0), "round {round}");
        assert_eq!(f.sent, [(0, from), (1, 0)], "round {round}");
        m.handle_fetch(t0, f.id, in_session(0, records(&[(0, from, 2)])));
        collect(&mut m, &mut got);
    }
    assert_eq!(got[&0], [0, 1, 2, 3]);
    // Sessions off in the options: sessionless fetches (epoch -1), always full.
    let options = ReadOptions::default().fetch_sessions(false);
    let mut m = machine(&plan(&[(0, 0, Some(4)), (1, 0, Some(4))]), &options, t0);
    for from in [0, 2] {
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(
            (f.session, &f.sent[..]),
            ((0, -1), &[(0, from), (1, 0)][..])
        );
        m.handle_fetch(t0, f.id, in_session(5, records(&[(0, from, 2)])));
        let _ = outputs(&mut m);
    }
}

#[test]
fn session_fields_on_the_wire_and_epochs_wrap_to_one() {
    assert_eq!(next_epoch(1), 2);
    assert_eq!(next_epoch(i32::MAX), 1);
    let mut parts = vec![
        requested("a", 1, 0),
        requested("b", 2, 1),
        requested("a", 1, 1),
    ];
    parts[0].unchanged = true;
    let session = SessionRequest {
        id: 3,
        epoch: 8,
        forgotten: vec![
            requested("b", 2, 4),
            requested("c", 3, 0),
            requested("b", 2, 5),
        ],
    };
    for version in [7, 12, 13, 17] {
        let request = build_fetch(&parts, version, &PARAMS, &session);
        assert_eq!((request.session_id, request.session_epoch), (3, 8));
        let sent: Vec<(String, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                (
                    t.topic.clone(),
                    t.partitions.iter().map(|p| p.partition).collect(),
                )
            })
            .collect();
        assert_eq!(sent, [("b".to_owned(), vec![1]), ("a".to_owned(), vec![1])]);
        let forgotten: Vec<(Uuid, Vec<i32>)> = request
            .forgotten_topics_data
            .iter()
            .map(|t| (t.topic_id, t.partitions.clone()))
            .collect();
        assert_eq!(
            forgotten,
            [(Uuid([2; 16]), vec![4, 5]), (Uuid([3; 16]), vec![0])]
        );
        let mut buf = bytes::BytesMut::new();
        kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
        let back: FetchRequest = kseek_protocol::decode_exact(buf.freeze(), version).unwrap();
        assert_eq!(back.forgotten_topics_data.len(), 2, "v{version}");
        assert_eq!((back.session_id, back.session_epoch), (3, 8), "v{version}");
    }
    // Below v7 there are no sessions: every partition, no session fields.
    let request = build_fetch(&parts, 6, &PARAMS, &session);
    assert_eq!((request.session_id, request.session_epoch), (0, -1));
    assert!(request.forgotten_topics_data.is_empty());
    assert_eq!(
        request
            .topics
            .iter()
            .map(|t| t.partitions.len())
            .sum::<usize>(),
        3
    );
}

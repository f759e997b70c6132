//! The read machine against hand-made answers and a virtual clock: the fixtures here, the
//! tests by concern in `decoding` (building Fetch requests, decoding a partition's answer),
//! `driven` (the machine driven by hand: budgets, leaders, retries, resets, discovery) and
//! `sessions` (fetch sessions, KIP-227).

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

mod decoding;
mod driven;
mod sessions;

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

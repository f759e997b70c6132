//! Fetch on the simulated brokers, with fetch sessions (KIP-227).
//!
//! A partition's log is made on demand: a Fetch at offset `o` gets one record batch of up to
//! [`BATCH_RECORDS`] records from `o` (the offset as its value, the partition's
//! timestamp for that offset), with the leader epoch checks of KIP-320. Sessions are kept
//! per broker; [`Fault::EvictSessions`] forgets them all, so the next incremental Fetch gets
//! FETCH_SESSION_ID_NOT_FOUND, as when a broker's session cache evicts a session. A Fetch
//! with nothing to send is answered after its max wait (on the paused clock).

use std::collections::BTreeMap;
use std::time::Duration;

use kseek_protocol::messages::fetch::{
    FetchPartition, FetchRequest, FetchResponse, FetchableTopicResponse, PartitionData,
};
use kseek_protocol::records::{NewRecord, RecordBatchBuilder};
use kseek_protocol::ErrorCode;

use super::{Fault, Partition, WireCluster};

/// The most records one Fetch answer carries per partition.
const BATCH_RECORDS: i64 = 4;

/// A fetch session: its next epoch and the partitions it holds (with their last request).
#[derive(Debug, Clone)]
pub(crate) struct Session {
    epoch: i32,
    held: BTreeMap<(String, i32), FetchPartition>,
}

/// One partition a Fetch asks for (listed, or held by its session), by (topic, partition).
type Asked = ((String, i32), FetchPartition);

/// Sessions by (broker, session id).
pub(crate) type Sessions = BTreeMap<(i32, i32), Session>;

/// The answer of broker `node` to `request` at `version`.
pub(super) fn fetch(
    cluster: &mut WireCluster,
    node: i32,
    request: FetchRequest,
    version: i16,
    fault: Option<Fault>,
) -> FetchResponse {
    let (parts, session_id) = match session(cluster, node, &request, version) {
        Ok(s) => s,
        Err(code) => {
            return FetchResponse {
                error_code: code.0,
                ..Default::default()
            }
        }
    };
    let mut responses: Vec<FetchableTopicResponse> = Vec::new();
    for ((topic, _), p) in parts {
        let data = answer_partition(cluster, node, &topic, &p, fault);
        match responses.iter_mut().find(|t| t.topic == topic) {
            Some(t) => t.partitions.push(data),
            None => responses.push(FetchableTopicResponse {
                topic,
                partitions: vec![data],
                ..Default::default()
            }),
        }
    }
    // Nothing to send: a broker holds the answer for the max wait.
    let empty = responses
        .iter()
        .flat_map(|t| &t.partitions)
        .all(|p| p.error_code == 0 && p.records.is_none());
    if empty {
        cluster.hold = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0));
    }
    FetchResponse {
        session_id,
        responses,
        ..Default::default()
    }
}

/// The partitions to answer for and the session id to answer with, or the session error.
fn session(
    cluster: &mut WireCluster,
    node: i32,
    request: &FetchRequest,
    version: i16,
) -> Result<(Vec<Asked>, i32), ErrorCode> {
    let listed = request.topics.iter().flat_map(|t| {
        t.partitions
            .iter()
            .map(|p| ((t.topic.clone(), p.partition), p.clone()))
    });
    let (id, epoch) = (request.session_id, request.session_epoch);
    if version < 7 || epoch <= 0 {
        if id != 0 {
            cluster.sessions.remove(&(node, id));
        }
        if version < 7 || epoch == -1 {
            return Ok((listed.collect(), 0));
        }
        if epoch < -1 {
            return Err(ErrorCode::INVALID_FETCH_SESSION_EPOCH);
        }
        cluster.last_session_id += 1;
        let id = cluster.last_session_id;
        let held: BTreeMap<_, _> = listed.collect();
        let parts = held.clone().into_iter().collect();
        cluster
            .sessions
            .insert((node, id), Session { epoch: 1, held });
        return Ok((parts, id));
    }
    let Some(session) = cluster.sessions.get_mut(&(node, id)) else {
        return Err(ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
    };
    if session.epoch != epoch {
        return Err(ErrorCode::INVALID_FETCH_SESSION_EPOCH);
    }
    session.epoch += 1;
    session.held.extend(listed);
    for f in &request.forgotten_topics_data {
        for p in &f.partitions {
            session.held.remove(&(f.topic.clone(), *p));
        }
    }
    Ok((session.held.clone().into_iter().collect(), id))
}

fn answer_partition(
    cluster: &WireCluster,
    node: i32,
    topic: &str,
    p: &FetchPartition,
    fault: Option<Fault>,
) -> PartitionData {
    let mut data = PartitionData {
        partition_index: p.partition,
        ..Default::default()
    };
    let Some(part) = cluster.partition(topic, p.partition) else {
        data.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
        return data;
    };
    let code = match part.leader_check(node, p.current_leader_epoch, fault) {
        ErrorCode::NONE
            if p.fetch_offset < part.log_start || p.fetch_offset > part.high_watermark() =>
        {
            ErrorCode::OFFSET_OUT_OF_RANGE
        }
        code => code,
    };
    data.error_code = code.0;
    data.high_watermark = part.high_watermark();
    data.last_stable_offset = part.high_watermark();
    data.log_start_offset = part.log_start;
    if code.is_ok() {
        data.records = batch(part, p.fetch_offset);
    }
    data
}

/// One batch of the records from `offset` on, if there are any.
fn batch(part: &Partition, offset: i64) -> Option<bytes::Bytes> {
    let end = part.high_watermark().min(offset + BATCH_RECORDS);
    if offset >= end {
        return None;
    }
    let timestamp = |o: i64| part.timestamps[(o - part.log_start) as usize];
    let base_timestamp = timestamp(offset);
    let mut builder = RecordBatchBuilder::new(offset, base_timestamp);
    for o in offset..end {
        let value = format!("{o}");
        builder.push(
            NewRecord::new((o - offset) as i32, timestamp(o) - base_timestamp)
                .value(value.as_bytes()),
        );
    }
    Some(builder.build().expect("a simulated batch encodes"))
}

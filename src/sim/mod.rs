//! A simulated Kafka cluster for deterministic tests of the read state machine.
//!
//! [`SimCluster`] holds one topic's partition logs in memory as real record batches (built with
//! [`RecordBatchBuilder`], several batch sizes, some compressed, some with compaction gaps or
//! emptied by compaction, some in committed or aborted transactions with their markers), each
//! partition with a leader, a leader epoch and a log start offset that retention moves. It
//! answers at the protocol level and in virtual time: Metadata (as [`TopicMetadata`]), Fetch
//! ([`FetchRequest`] in, [`FetchResponse`] out, both through the wire encoding of the version
//! asked for) and ListOffsets for the earliest offset. A Fetch is answered as a broker answers
//! it: from the batch holding the fetch offset up to the high watermark, cut at the
//! partition's max bytes and at what is left of the response's max bytes (mid-batch, as a
//! broker slices its log files), with at least one whole batch for the first partition that
//! has data (KIP-74), with the aborted transactions under read_committed; the leader epoch of
//! the request is checked (KIP-320) and an offset below the log start is OFFSET_OUT_OF_RANGE.
//!
//! A [`Schedule`] (proptest generates them with [`schedules`]) gives the logs, the plan and the
//! faults, each at a request index or a virtual time: leader moves with epoch bumps (then
//! stale metadata, an election window, a new leader whose high watermark lags);
//! NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH storms; transient
//! UNKNOWN_TOPIC_OR_PARTITION; connection loss before, during or after a request (failing
//! every other request on that connection); retention moving the log start; empty and
//! throttled answers; slow answers that run past the request timeout; every broker down for a
//! while, or for good. One schedule in four reads with a small budget of waiting bytes
//! ([`ReadOptions::max_buffered_bytes`], 1 to 3,000 bytes) and a slow caller that takes one
//! batch per step: the machine must then pause and resume its Fetches.
//!
//! [`run`] drives the [`ReadMachine`] against such a cluster with a virtual clock: no runtime,
//! no sockets, no sleeps. [`check`] asserts what a bounded read must have done: end within
//! bounds, hand out per partition exactly the plan's records in offset order less the loss it
//! reported, lose nothing when no retention happened, and never break the machine's request
//! contract (nor start a Fetch while the budget of waiting bytes is used up). The proptest
//! `bounded_reads_hand_out_their_plan_exactly_under_faults` runs 10,000 schedules
//! (`PROPTEST_CASES` sets another number) and prints its figures:
//! `cargo test --lib sim -- --nocapture`.
//!
//! [`wire`] goes one level down: the real [`Client`](crate::Client) over in-memory connections
//! to simulated brokers that speak Kafka's wire protocol, with seeded fault schedules for
//! resolution and commits.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::fetch::{
    AbortedTransaction as FetchAbortedTransaction, FetchPartition, FetchRequest, FetchResponse,
    FetchTopic, FetchableTopicResponse, LeaderIdAndEpoch, PartitionData,
};
use kseek_protocol::records::{Compression, ControlRecordType, NewRecord, RecordBatchBuilder};
use kseek_protocol::{decode_exact, ApiKey, ErrorCode, Message, Uuid};
use proptest::prelude::*;

use crate::backoff::Backoff;
use crate::cluster::{PartitionMetadata, TopicMetadata};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{IsolationLevel, PartitionPlan, Plan};
use crate::read::machine::{Output, ReadMachine, Transmit, OVERDUE_AFTER};
use crate::read::{OutOfRange, ReadOptions};

/// The topic every simulated read reads.
pub(crate) const TOPIC: &str = "sim";
/// Its topic id.
pub(crate) const TOPIC_ID: Uuid = Uuid([7; 16]);
/// How long the simulated connections wait for an answer.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The max wait of the simulated reads.
const SIM_MAX_WAIT: Duration = Duration::from_millis(500);
/// The first leader epoch of partition 0 (partition `p` starts at `FIRST_EPOCH + p`).
const FIRST_EPOCH: i32 = 5;
/// The base timestamp of the logs.
const BASE_TIMESTAMP: i64 = 1_767_261_600_000;

mod check;
mod cluster;
mod harness;
mod schedule;
mod stats;
#[cfg(test)]
mod tests;
mod wire;

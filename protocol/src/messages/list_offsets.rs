//! ListOffsets (API key 2), versions 1–11: the offset of a partition at a timestamp, or at one
//! of the special positions (latest, earliest, max timestamp, earliest local, latest tiered,
//! earliest pending upload).
//!
//! The special timestamps are sent only to brokers that know them: [`min_version_for_timestamp`]
//! and [`ListOffsetsRequest::min_version`] give the lowest version that can carry a request, so
//! a client can refuse to ask an older broker instead of getting a wrong answer.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_ListOffsets>, `ListOffsetsRequest.json` and
//! `ListOffsetsResponse.json` (Kafka 4.2.1), KIP-734 (max timestamp), KIP-405 (earliest local),
//! KIP-1005 (latest tiered), KIP-1075 (timeout), KIP-1023 (earliest pending upload).

use crate::messages::codec::{wire_message, wire_struct};
use crate::messages::IsolationLevel;

/// The offset of the next record to be written (the high watermark, or the last stable offset
/// under read-committed). Any version.
pub const LATEST: i64 = -1;
/// The log start offset. Any version.
pub const EARLIEST: i64 = -2;
/// The offset of the record with the largest timestamp (KIP-734). ListOffsets v7+.
pub const MAX_TIMESTAMP: i64 = -3;
/// The start offset of the broker's local log, after tiered segments (KIP-405). ListOffsets v8+.
pub const EARLIEST_LOCAL: i64 = -4;
/// The highest offset copied to tiered storage (KIP-1005). ListOffsets v9+.
pub const LATEST_TIERED: i64 = -5;
/// The first offset not yet copied to tiered storage (KIP-1023). ListOffsets v11+.
pub const EARLIEST_PENDING_UPLOAD: i64 = -6;

/// The `ReplicaId` a consumer (not a follower broker) sends.
pub const CONSUMER_REPLICA_ID: i32 = -1;

/// The lowest ListOffsets version that can carry `timestamp` in a partition's `Timestamp`.
///
/// A real timestamp (zero or more milliseconds since the epoch), [`LATEST`] and [`EARLIEST`]
/// need v1; [`MAX_TIMESTAMP`] v7, [`EARLIEST_LOCAL`] v8, [`LATEST_TIERED`] v9 and
/// [`EARLIEST_PENDING_UPLOAD`] v11. `None` for a negative value that no version defines.
///
/// # References
/// docs/reading-by-time.md point 8; Kafka's `ListOffsetsRequest.Builder.forConsumer`.
pub const fn min_version_for_timestamp(timestamp: i64) -> Option<i16> {
    match timestamp {
        0.. | LATEST | EARLIEST => Some(1),
        MAX_TIMESTAMP => Some(7),
        EARLIEST_LOCAL => Some(8),
        LATEST_TIERED => Some(9),
        EARLIEST_PENDING_UPLOAD => Some(11),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// A ListOffsets request: for each partition, the offset at a timestamp.
    pub struct ListOffsetsRequest in "ListOffsetsRequest" {
        /// The broker ID of the requester, or [`CONSUMER_REPLICA_ID`] (-1) for a normal
        /// consumer. The schema default is 0, which a consumer must not send.
        pub replica_id: i32,
        /// The visibility of transactional records (v2+; not ignorable, so read-committed
        /// cannot be sent in v1).
        pub isolation_level: IsolationLevel => since(2),
        /// Each topic in the request.
        pub topics: Vec<ListOffsetsTopic>,
        /// How long the broker may wait for remote (tiered) storage, in milliseconds (v10+,
        /// ignorable).
        pub timeout_ms: i32 => since(10).ignorable(),
    }

    /// One topic of a [`ListOffsetsRequest`].
    pub struct ListOffsetsTopic in "ListOffsetsRequest.topics" {
        /// The topic name.
        pub name: String,
        /// Each partition in the request.
        pub partitions: Vec<ListOffsetsPartition>,
    }

    /// One partition of a [`ListOffsetsTopic`].
    pub struct ListOffsetsPartition in "ListOffsetsRequest.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The leader epoch the client knows, for fencing (v4+, ignorable); -1 for none.
        pub current_leader_epoch: i32 = -1 => since(4).ignorable(),
        /// The target: a millisecond timestamp or one of the special values ([`LATEST`],
        /// [`EARLIEST`], ...; see [`min_version_for_timestamp`]).
        pub timestamp: i64,
    }
}

impl ListOffsetsRequest {
    /// The lowest version that can carry this request: the highest
    /// [`min_version_for_timestamp`] over its partitions, and v2 for read-committed.
    /// `None` if a partition's timestamp is a negative value no version defines.
    pub fn min_version(&self) -> Option<i16> {
        let mut min = if self.isolation_level == IsolationLevel::default() {
            1
        } else {
            2
        };
        for partition in self.topics.iter().flat_map(|t| &t.partitions) {
            min = min.max(min_version_for_timestamp(partition.timestamp)?);
        }
        Some(min)
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// A ListOffsets response: for each partition, the offset found and its timestamp.
    pub struct ListOffsetsResponse in "ListOffsetsResponse" {
        /// How long the request was throttled for a quota, in milliseconds (v2+, ignorable).
        pub throttle_time_ms: i32 => since(2).ignorable(),
        /// Each topic in the response.
        pub topics: Vec<ListOffsetsTopicResponse>,
    }

    /// One topic of a [`ListOffsetsResponse`].
    pub struct ListOffsetsTopicResponse in "ListOffsetsResponse.topics" {
        /// The topic name.
        pub name: String,
        /// Each partition in the response.
        pub partitions: Vec<ListOffsetsPartitionResponse>,
    }

    /// One partition of a [`ListOffsetsTopicResponse`].
    pub struct ListOffsetsPartitionResponse in "ListOffsetsResponse.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The partition's error code (see [`crate::ErrorCode`]), or 0.
        pub error_code: i16,
        /// The timestamp of the record at the returned offset, or -1.
        pub timestamp: i64 = -1,
        /// The returned offset, or -1 when there is none (e.g. no record at or after the
        /// timestamp).
        pub offset: i64 = -1,
        /// The leader epoch of the returned offset (v4+, not ignorable), or -1.
        pub leader_epoch: i32 = -1 => since(4),
    }
}

wire_message!(
    ListOffsetsRequest => ListOffsetsResponse: LIST_OFFSETS,
    versions 1..=11, first flexible 6
);

#[cfg(test)]
mod tests;

//! Fetch (API key 1), versions 4–18: read records from partitions.
//!
//! The request names partitions (by topic name up to v12, by topic id from v13) and an offset
//! in each; the response carries, per partition, the watermarks, the aborted transactions a
//! read_committed reader needs, and the raw `Records` bytes. Those bytes are the hot path: the
//! decoder splits them off the input [`Bytes`] without copying, and the encoder writes them
//! straight from the `Bytes` it holds.
//!
//! Versions 12 and up are flexible (compact encodings, tagged fields).
//!
//! # References
//! Kafka's `FetchRequest.json` / `FetchResponse.json` (4.2.1); KIP-74 (max bytes), KIP-227
//! (fetch sessions), KIP-392 (rack, preferred read replica), KIP-516 (topic ids), KIP-595,
//! KIP-903 (replica state), KIP-951 (leader discovery, node endpoints).

use bytes::Bytes;

use crate::messages::codec::{wire_message, wire_struct, wire_topic};
use crate::messages::IsolationLevel;
use crate::primitives::Uuid;

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// A Fetch request: which partitions to read from, from which offsets, and how long and how
    /// much to wait for.
    ///
    /// # References
    /// <https://kafka.apache.org/protocol#The_Messages_Fetch>, `FetchRequest.json`.
    pub struct FetchRequest in "FetchRequest" {
        /// The cluster id if known (tagged, v12+). Default null.
        pub cluster_id: Option<String> => since(12).tagged(0).ignorable(),
        /// The broker id of the follower, or -1 for a consumer (v4–14). Default -1.
        pub replica_id: i32 = -1 => until(14),
        /// The state of the replica in the follower (tagged, v15+).
        pub replica_state: ReplicaState => since(15).tagged(1),
        /// The maximum time in milliseconds to wait for the response.
        pub max_wait_ms: i32,
        /// The minimum bytes to accumulate in the response.
        pub min_bytes: i32,
        /// The maximum bytes to fetch (KIP-74). Default `0x7fffffff`.
        pub max_bytes: i32 = 0x7fff_ffff,
        /// Read uncommitted (the default) or read committed (v4+; KIP-98).
        pub isolation_level: IsolationLevel = IsolationLevel::READ_UNCOMMITTED,
        /// The fetch session id (v7+). Default 0.
        pub session_id: i32 => since(7).ignorable(),
        /// The fetch session epoch (v7+). Default -1.
        pub session_epoch: i32 = -1 => since(7).ignorable(),
        /// The topics to fetch.
        pub topics: Vec<FetchTopic>,
        /// In an incremental fetch request, the partitions to remove (v7+).
        pub forgotten_topics_data: Vec<ForgottenTopic> => since(7),
        /// The rack of the consumer making this request (v11+). Default empty.
        pub rack_id: String => since(11).ignorable(),
    }
}

wire_struct! {
    /// The state of a follower replica (request v15+, tagged).
    pub struct ReplicaState in "FetchRequest.replica_state" {
        /// The replica id of the follower, or -1 for a consumer. Default -1.
        pub replica_id: i32 = -1,
        /// The epoch of this follower, or -1 if not available. Default -1.
        pub replica_epoch: i64 = -1,
    }
}

wire_topic! {
    /// A topic to fetch.
    pub struct FetchTopic in "FetchRequest.topics" {
        topic until 12, partitions: Vec<FetchPartition> = "The partitions to fetch."
    }
}

wire_struct! {
    /// A partition to fetch.
    pub struct FetchPartition in "FetchRequest.topics.partitions" {
        /// The partition index.
        pub partition: i32,
        /// The current leader epoch of the partition (v9+). Default -1.
        pub current_leader_epoch: i32 = -1 => since(9).ignorable(),
        /// The offset to fetch from.
        pub fetch_offset: i64,
        /// The epoch of the last fetched record, or -1 if there is none (v12+). Default -1.
        pub last_fetched_epoch: i32 = -1 => since(12),
        /// The earliest available offset of the follower replica (v5+). Default -1.
        pub log_start_offset: i64 = -1 => since(5).ignorable(),
        /// The maximum bytes to fetch from this partition (KIP-74).
        pub partition_max_bytes: i32,
        /// The directory id of the follower fetching (tagged, v17+).
        pub replica_directory_id: Uuid => since(17).tagged(0).ignorable(),
        /// The high watermark known by the replica (tagged, v18+). Default `i64::MAX` ("not
        /// supported").
        pub high_watermark: i64 = i64::MAX => since(18).tagged(1).ignorable(),
    }
}

wire_topic! {
    /// Partitions to remove from an incremental fetch session (v7+).
    pub struct ForgottenTopic in "FetchRequest.forgotten_topics_data" {
        topic until 12, partitions: Vec<i32> = "The partition indexes to forget."
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// A Fetch response: per partition, the watermarks, aborted transactions and record bytes.
    ///
    /// # References
    /// <https://kafka.apache.org/protocol#The_Messages_Fetch>, `FetchResponse.json`.
    pub struct FetchResponse in "FetchResponse" {
        /// How long the request was throttled for a quota violation, in milliseconds.
        pub throttle_time_ms: i32,
        /// The top-level error code (v7+).
        pub error_code: i16 => since(7).ignorable(),
        /// The fetch session id, or 0 outside a fetch session (v7+).
        pub session_id: i32 => since(7),
        /// The response topics.
        pub responses: Vec<FetchableTopicResponse>,
        /// Endpoints of the current leaders named in partitions that failed with
        /// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH (tagged, v16+).
        pub node_endpoints: Vec<NodeEndpoint> => since(16).tagged(0),
    }
}

wire_message!(FetchRequest => FetchResponse: FETCH, versions 4..=18, first flexible 12);

wire_topic! {
    /// One topic of a Fetch response.
    pub struct FetchableTopicResponse in "FetchResponse.responses" {
        topic until 12, partitions: Vec<PartitionData> = "The topic's partitions."
    }
}

wire_struct! {
    /// One partition of a Fetch response.
    pub struct PartitionData in "FetchResponse.responses.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The error code, or 0 if there was no fetch error.
        pub error_code: i16,
        /// The current high watermark.
        pub high_watermark: i64,
        /// The last stable offset: every transactional record below it is decided. Default -1.
        pub last_stable_offset: i64 = -1,
        /// The current log start offset (v5+). Default -1.
        pub log_start_offset: i64 = -1 => since(5).ignorable(),
        /// Where the follower's log diverges from the leader's (tagged, v12+).
        pub diverging_epoch: EpochEndOffset => since(12).tagged(0),
        /// The current leader of the partition (tagged, v12+).
        pub current_leader: LeaderIdAndEpoch => since(12).tagged(1),
        /// The snapshot to fetch instead, when the offset is below the log start (tagged, v12+).
        pub snapshot_id: SnapshotId => since(12).tagged(2),
        /// The aborted transactions in the returned range, or null. Default empty.
        pub aborted_transactions: Option<Vec<AbortedTransaction>> = Some(Vec::new()),
        /// The replica the consumer should fetch from next, or -1 (v11+). Default -1.
        pub preferred_read_replica: i32 = -1 => since(11),
        /// The record data, a view into the response buffer (never copied on decode). It may end
        /// with a partial batch.
        pub records: Option<Bytes>,
    }

    /// The largest epoch and its end offset past which a follower's records diverge (v12+).
    pub struct EpochEndOffset in "FetchResponse.responses.partitions.diverging_epoch" {
        /// The largest epoch. Default -1.
        pub epoch: i32 = -1,
        /// The end offset of the epoch. Default -1.
        pub end_offset: i64 = -1,
    }

    /// The current leader of a partition (v12+, KIP-951).
    pub struct LeaderIdAndEpoch in "FetchResponse.responses.partitions.current_leader" {
        /// The id of the current leader, or -1 if unknown. Default -1.
        pub leader_id: i32 = -1,
        /// The latest known leader epoch. Default -1.
        pub leader_epoch: i32 = -1,
    }

    /// The end offset and epoch of the snapshot to fetch (v12+, KIP-630).
    pub struct SnapshotId in "FetchResponse.responses.partitions.snapshot_id" {
        /// The end offset of the epoch. Default -1.
        pub end_offset: i64 = -1,
        /// The largest epoch. Default -1.
        pub epoch: i32 = -1,
    }

    /// An aborted transaction: records of `producer_id` from `first_offset` on are to be dropped
    /// by a read_committed reader up to the transaction's ABORT marker.
    pub struct AbortedTransaction in "FetchResponse.responses.partitions.aborted_transactions" {
        /// The producer id of the aborted transaction.
        pub producer_id: i64,
        /// The first offset in the aborted transaction.
        pub first_offset: i64,
    }

    /// The endpoint of a broker named as a partition's current leader (v16+).
    pub struct NodeEndpoint in "FetchResponse.node_endpoints" {
        /// The node id.
        pub node_id: i32,
        /// The node's host name.
        pub host: String,
        /// The node's port.
        pub port: i32,
        /// The node's rack, or null. Default null.
        pub rack: Option<String>,
    }
}

#[cfg(test)]
mod tests;

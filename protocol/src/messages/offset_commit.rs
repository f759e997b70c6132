//! OffsetCommit (API key 8), versions 2–10: a consumer group member stores its positions.
//!
//! The group is identified by its id plus, for a member of the group, the generation (classic
//! protocol) or member epoch (KIP-848 consumer protocol) and the member id; a static member
//! adds its group instance id (v7+). Retention time is sent only in v2–4 (later the broker's
//! configuration decides), the committed leader epoch from v6, and v10 names topics by id.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_OffsetCommit>, `OffsetCommitRequest.json` and
//! `OffsetCommitResponse.json` (Kafka 4.2.1), KIP-320 (leader epoch), KIP-345 (static
//! membership), KIP-848.

use crate::messages::codec::{wire_message, wire_struct, wire_topic};

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// An OffsetCommit request: the offsets a group member commits.
    pub struct OffsetCommitRequest in "OffsetCommitRequest" {
        /// The group id.
        pub group_id: String,
        /// The generation of the group (classic protocol) or the member epoch (consumer
        /// protocol), or -1 for a commit from outside the group.
        pub generation_id_or_member_epoch: i32 = -1,
        /// The member id assigned by the coordinator, or empty for a commit from outside the
        /// group.
        pub member_id: String,
        /// The static member's instance id (v7+; not ignorable), or `None`.
        pub group_instance_id: Option<String> => since(7),
        /// How long the broker keeps the offsets, in milliseconds, or -1 for its default
        /// (v2–4, ignorable).
        pub retention_time_ms: i64 = -1 => until(4).ignorable(),
        /// The topics to commit offsets for.
        pub topics: Vec<OffsetCommitRequestTopic>,
    }
}

wire_topic! {
    /// One topic of an [`OffsetCommitRequest`].
    pub struct OffsetCommitRequestTopic in "OffsetCommitRequest.topics" {
        name until 9,
        partitions: Vec<OffsetCommitRequestPartition> = "The partitions to commit offsets for."
    }
}

wire_struct! {
    /// One partition of an [`OffsetCommitRequestTopic`].
    pub struct OffsetCommitRequestPartition in "OffsetCommitRequest.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The offset to commit: the next record the group should read.
        pub committed_offset: i64,
        /// The leader epoch of the record before the committed offset (v6+, ignorable), or
        /// -1.
        pub committed_leader_epoch: i32 = -1 => since(6).ignorable(),
        /// Metadata the client wants to keep with the offset.
        pub committed_metadata: Option<String> = Some(String::new()),
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// An OffsetCommit response: an error code per partition.
    pub struct OffsetCommitResponse in "OffsetCommitResponse" {
        /// How long the request was throttled for a quota, in milliseconds (v3+, ignorable).
        pub throttle_time_ms: i32 => since(3).ignorable(),
        /// The responses for each topic.
        pub topics: Vec<OffsetCommitResponseTopic>,
    }
}

wire_message!(
    OffsetCommitRequest => OffsetCommitResponse: OFFSET_COMMIT,
    versions 2..=10, first flexible 8
);

wire_topic! {
    /// One topic of an [`OffsetCommitResponse`].
    pub struct OffsetCommitResponseTopic in "OffsetCommitResponse.topics" {
        name until 9,
        partitions: Vec<OffsetCommitResponsePartition> = "The responses for each partition."
    }
}

wire_struct! {
    /// One partition of an [`OffsetCommitResponseTopic`].
    pub struct OffsetCommitResponsePartition in "OffsetCommitResponse.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The error code (see [`crate::ErrorCode`]), or 0.
        pub error_code: i16,
    }
}

#[cfg(test)]
mod tests;

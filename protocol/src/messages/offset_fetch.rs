//! OffsetFetch (API key 9), versions 1–10: the offsets a consumer group has committed.
//!
//! Versions 1–7 ask about one group (`group_id` + `topics`, where null topics means "all",
//! from v2); versions 8+ ask about several groups at once (`groups`), v9 adds the member id and
//! epoch of the new consumer protocol (KIP-848), and v10 names topics by id instead of by name.
//! The response follows the same split: `topics` + a top-level `error_code` up to v7, `groups`
//! from v8.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_OffsetFetch>, `OffsetFetchRequest.json` and
//! `OffsetFetchResponse.json` (Kafka 4.2.1), KIP-447 (require stable), KIP-709 (multiple
//! groups), KIP-848.

use crate::messages::codec::{wire_message, wire_struct, wire_topic};

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// An OffsetFetch request: the committed offsets of one group (v1–7) or of several (v8+).
    pub struct OffsetFetchRequest in "OffsetFetchRequest" {
        /// The group to fetch offsets for (v1–7; not ignorable).
        pub group_id: String => until(7),
        /// The topics to fetch offsets for (v1–7; not ignorable), or `None` for all topics (v2+).
        /// Defaults to an empty list.
        pub topics: Option<Vec<OffsetFetchRequestTopic>> = Some(Vec::new())
            => until(7).nullable_from(2),
        /// The groups to fetch offsets for (v8+; not ignorable).
        pub groups: Vec<OffsetFetchRequestGroup> => since(8),
        /// Whether the broker should answer UNSTABLE_OFFSET_COMMIT for partitions with pending
        /// transactional commits instead of returning them (v7+; not ignorable).
        pub require_stable: bool => since(7),
    }

    /// One topic of a single-group [`OffsetFetchRequest`] (v1–7).
    pub struct OffsetFetchRequestTopic in "OffsetFetchRequest.topics" {
        /// The topic name.
        pub name: String,
        /// The partitions to fetch offsets for.
        pub partition_indexes: Vec<i32>,
    }

    /// One group of a multi-group [`OffsetFetchRequest`] (v8+).
    pub struct OffsetFetchRequestGroup in "OffsetFetchRequest.groups" {
        /// The group id.
        pub group_id: String,
        /// The member id, with the consumer protocol of KIP-848 (v9+, ignorable); `None` otherwise.
        pub member_id: Option<String> => since(9).ignorable(),
        /// The member epoch with the KIP-848 consumer protocol (v9+, ignorable), or -1.
        pub member_epoch: i32 = -1 => since(9).ignorable(),
        /// The topics to fetch offsets for, or `None` for all topics.
        pub topics: Option<Vec<OffsetFetchRequestTopics>> = Some(Vec::new()),
    }
}

wire_topic! {
    /// One topic of an [`OffsetFetchRequestGroup`] (v8+).
    pub struct OffsetFetchRequestTopics in "OffsetFetchRequest.groups.topics" {
        name until 9, partition_indexes: Vec<i32> = "The partitions to fetch offsets for."
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// An OffsetFetch response: committed offsets per topic (v1–7) or per group (v8+).
    pub struct OffsetFetchResponse in "OffsetFetchResponse" {
        /// How long the request was throttled for a quota, in milliseconds (v3+, ignorable).
        pub throttle_time_ms: i32 => since(3).ignorable(),
        /// The committed offsets per topic (v1–7; not ignorable).
        pub topics: Vec<OffsetFetchResponseTopic> => until(7),
        /// The group-level error code, or 0 (v2–7, ignorable).
        pub error_code: i16 => between(2, 7).ignorable(),
        /// The committed offsets per group (v8+; not ignorable).
        pub groups: Vec<OffsetFetchResponseGroup> => since(8),
    }

    /// One topic of a single-group [`OffsetFetchResponse`] (v1–7).
    pub struct OffsetFetchResponseTopic in "OffsetFetchResponse.topics" {
        /// The topic name.
        pub name: String,
        /// The committed offsets per partition.
        pub partitions: Vec<OffsetFetchResponsePartition>,
    }

    /// One partition of an [`OffsetFetchResponseTopic`] (v1–7).
    pub struct OffsetFetchResponsePartition in "OffsetFetchResponse.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The committed offset, or -1 if the group has none for this partition.
        pub committed_offset: i64,
        /// The leader epoch of the committed offset (v5+, ignorable), or -1.
        pub committed_leader_epoch: i32 = -1 => since(5).ignorable(),
        /// The metadata committed with the offset.
        pub metadata: Option<String> = Some(String::new()),
        /// The partition's error code (see [`crate::ErrorCode`]), or 0.
        pub error_code: i16,
    }

    /// One group of a multi-group [`OffsetFetchResponse`] (v8+).
    pub struct OffsetFetchResponseGroup in "OffsetFetchResponse.groups" {
        /// The group id.
        pub group_id: String,
        /// The committed offsets per topic.
        pub topics: Vec<OffsetFetchResponseTopics>,
        /// The group-level error code, or 0.
        pub error_code: i16,
    }
}

wire_topic! {
    /// One topic of an [`OffsetFetchResponseGroup`] (v8+).
    pub struct OffsetFetchResponseTopics in "OffsetFetchResponse.groups.topics" {
        name until 9,
        partitions: Vec<OffsetFetchResponsePartitions> = "The committed offsets per partition."
    }
}

wire_struct! {
    /// One partition of an [`OffsetFetchResponseTopics`] (v8+).
    pub struct OffsetFetchResponsePartitions in "OffsetFetchResponse.groups.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The committed offset, or -1 if the group has none for this partition.
        pub committed_offset: i64,
        /// The leader epoch of the committed offset, or -1.
        pub committed_leader_epoch: i32 = -1,
        /// The metadata committed with the offset.
        pub metadata: Option<String> = Some(String::new()),
        /// The partition's error code (see [`crate::ErrorCode`]), or 0.
        pub error_code: i16,
    }
}

wire_message!(
    OffsetFetchRequest => OffsetFetchResponse: OFFSET_FETCH,
    versions 1..=10, first flexible 6
);

#[cfg(test)]
mod tests;

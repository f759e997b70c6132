//! Metadata (API key 3), versions 1–13: brokers, topics, partitions and their leaders.
//!
//! Version 9 is the first flexible version. Version 10 adds topic ids (and lets a request name
//! a topic by id with a null name, which brokers honour from version 12); version 13 adds a
//! top-level error code to the response. Version 0 (where an empty topic list meant "all
//! topics") is not implemented: from version 1 a null list means all topics.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_Metadata>, KIP-516 (topic ids),
//! `MetadataRequest.json` / `MetadataResponse.json` (Kafka 4.2.1).

use crate::messages::codec::{wire_message, wire_struct};
use crate::primitives::Uuid;
#[cfg(doc)]
use crate::Error;

/// The default of the `*AuthorizedOperations` bitfields: "not requested".
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// Metadata request body.
    ///
    /// `topics: None` asks for every topic; `Some(vec![])` (the schema's default) asks for none,
    /// which still returns the brokers and the controller.
    ///
    /// # References
    /// `MetadataRequest.json`.
    pub struct MetadataRequest in "MetadataRequest" {
        /// The topics to fetch metadata for, or `None` for all topics.
        pub topics: Option<Vec<MetadataRequestTopic>> = Some(Vec::new()),
        /// Whether the broker may auto-create requested topics that don't exist (versions 4+,
        /// default true; before version 4 brokers always may, so `false` can't be encoded there).
        pub allow_auto_topic_creation: bool = true => since(4),
        /// Whether to include cluster authorized operations (versions 8–10).
        pub include_cluster_authorized_operations: bool => between(8, 10),
        /// Whether to include topic authorized operations (versions 8+).
        pub include_topic_authorized_operations: bool => since(8),
    }

    /// A topic in a Metadata request.
    pub struct MetadataRequestTopic in "MetadataRequest.topics" {
        /// The topic id (versions 10+; ignorable). Brokers look topics up by id from version 12.
        pub topic_id: Uuid => since(10).ignorable(),
        /// The topic name; null (versions 10+) when asking by id. Defaults to `""`, as in the
        /// schema.
        pub name: Option<String> = Some(String::new()) => since(0).nullable_from(10),
    }
}

impl MetadataRequest {
    /// A request for every topic. (Auto-creation is left at its default: a request for all
    /// topics names none that could be created, and the default encodes at every version.)
    pub fn all_topics() -> Self {
        MetadataRequest {
            topics: None,
            ..Self::default()
        }
    }

    /// A request for the named topics, without auto-creation.
    ///
    /// Versions before 4 can't say "don't auto-create" (brokers always may), so encoding this
    /// below version 4 fails with [`Error::FieldNotInVersion`], as in Kafka's Java client.
    pub fn for_topics<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        MetadataRequest {
            topics: Some(
                names
                    .into_iter()
                    .map(|n| MetadataRequestTopic {
                        name: Some(n.into()),
                        ..MetadataRequestTopic::default()
                    })
                    .collect(),
            ),
            allow_auto_topic_creation: false,
            ..Self::default()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// Metadata response body.
    ///
    /// # References
    /// `MetadataResponse.json`.
    pub struct MetadataResponse in "MetadataResponse" {
        /// Throttle time in milliseconds because of a quota violation (versions 3+; ignorable).
        pub throttle_time_ms: i32 => since(3).ignorable(),
        /// The brokers in the cluster.
        pub brokers: Vec<MetadataResponseBroker>,
        /// The cluster id, or null (versions 2+; ignorable).
        pub cluster_id: Option<String> => since(2).ignorable(),
        /// The controller's broker id, or -1 (versions 1+; ignorable).
        pub controller_id: i32 = -1,
        /// The topics.
        pub topics: Vec<MetadataResponseTopic>,
        /// Bitfield of the cluster's authorized operations (versions 8–10; default
        /// [`AUTHORIZED_OPERATIONS_OMITTED`]).
        pub cluster_authorized_operations: i32 = AUTHORIZED_OPERATIONS_OMITTED => between(8, 10),
        /// The top-level error code, or 0 (versions 13+; ignorable).
        pub error_code: i16 => since(13).ignorable(),
    }

    /// A broker in a Metadata response.
    pub struct MetadataResponseBroker in "MetadataResponse.brokers" {
        /// The broker id.
        pub node_id: i32,
        /// The broker's host name.
        pub host: String,
        /// The broker's port.
        pub port: i32,
        /// The broker's rack, or null (versions 1+; ignorable).
        pub rack: Option<String>,
    }

    /// A topic in a Metadata response.
    pub struct MetadataResponseTopic in "MetadataResponse.topics" {
        /// The topic's error code, or 0.
        pub error_code: i16,
        /// The topic name; null (versions 12+) for a topic asked for by an unknown id. Defaults
        /// to `""`, as in the schema.
        pub name: Option<String> = Some(String::new()) => since(0).nullable_from(12),
        /// The topic id, zero for a topic asked for by an unknown name (versions 10+; ignorable).
        pub topic_id: Uuid => since(10).ignorable(),
        /// Whether the topic is internal (versions 1+; ignorable).
        pub is_internal: bool,
        /// The partitions.
        pub partitions: Vec<MetadataResponsePartition>,
        /// Bitfield of the topic's authorized operations (versions 8+; default
        /// [`AUTHORIZED_OPERATIONS_OMITTED`]).
        pub topic_authorized_operations: i32 = AUTHORIZED_OPERATIONS_OMITTED => since(8),
    }

    /// A partition in a Metadata response.
    pub struct MetadataResponsePartition in "MetadataResponse.topics.partitions" {
        /// The partition's error code, or 0.
        pub error_code: i16,
        /// The partition index.
        pub partition_index: i32,
        /// The leader's broker id.
        pub leader_id: i32,
        /// The leader epoch, or -1 (versions 7+; ignorable).
        pub leader_epoch: i32 = -1 => since(7).ignorable(),
        /// All replicas of the partition.
        pub replica_nodes: Vec<i32>,
        /// The in-sync replicas.
        pub isr_nodes: Vec<i32>,
        /// The offline replicas (versions 5+; ignorable).
        pub offline_replicas: Vec<i32> => since(5).ignorable(),
    }
}

wire_message!(MetadataRequest => MetadataResponse: METADATA, versions 1..=13, first flexible 9);

#[cfg(test)]
mod tests;

//! What the cluster metadata says: topics, partitions with their leaders, brokers.
//!
//! These are plain values, as a Metadata answer describes the cluster; the
//! [`Client`](crate::Client) keeps them cached per topic (see `client.rs`).
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_Metadata>

use kseek_protocol::messages::metadata::{MetadataResponse, MetadataResponsePartition};
use kseek_protocol::{ErrorCode, Uuid};

use crate::few;

/// One topic as the cluster metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopicMetadata {
    /// The topic's name.
    pub name: String,
    /// The topic's id ([`Uuid::ZERO`] from brokers before Metadata v10).
    pub topic_id: Uuid,
    /// The partitions, ordered by partition id.
    pub partitions: Vec<PartitionMetadata>,
}

impl TopicMetadata {
    /// The partition with id `partition`, if the topic has it.
    pub fn partition(&self, partition: i32) -> Option<&PartitionMetadata> {
        self.partitions.iter().find(|p| p.partition == partition)
    }
}

/// One partition as the cluster metadata describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartitionMetadata {
    /// The partition id.
    pub partition: i32,
    /// The leader's node id, or -1 while there is none.
    pub leader_id: i32,
    /// The leader epoch, or -1 from brokers before Metadata v7.
    pub leader_epoch: i32,
    /// The partition's error in the metadata (LEADER_NOT_AVAILABLE while there is no leader;
    /// REPLICA_NOT_AVAILABLE when a follower is down, which doesn't stop reads).
    pub error_code: ErrorCode,
}

/// One broker as the cluster metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrokerMetadata {
    /// The broker's node id.
    pub node_id: i32,
    /// The host it advertises.
    pub host: String,
    /// The port it advertises.
    pub port: i32,
    /// Its rack, where configured.
    pub rack: Option<String>,
}

/// The whole cluster as one Metadata answer for every topic describes it
/// ([`Client::cluster_metadata`](crate::Client::cluster_metadata)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterMetadata {
    /// The cluster id (Metadata v2+), where the broker gave one.
    pub cluster_id: Option<String>,
    /// The controller's node id (Metadata v1+), `None` when the broker didn't say.
    pub controller_id: Option<i32>,
    /// The brokers, ordered by node id.
    pub brokers: Vec<BrokerMetadata>,
    /// Every topic the broker listed without a topic-level error (internal topics included),
    /// ordered by name, partitions by id.
    pub topics: Vec<TopicMetadata>,
}

impl From<MetadataResponse> for ClusterMetadata {
    /// The cluster as a Metadata response describes it, as
    /// [`Client::cluster_metadata`](crate::Client::cluster_metadata) gives it: brokers ordered by
    /// node id, topics in error or without partitions left out, topics ordered by name.
    fn from(response: MetadataResponse) -> Self {
        cluster_from_response(response)
    }
}

/// A topic's partitions from a Metadata response, ordered by partition.
pub(crate) fn partitions_of(partitions: &[MetadataResponsePartition]) -> Vec<PartitionMetadata> {
    let mut partitions: Vec<PartitionMetadata> = partitions
        .iter()
        .map(|p| PartitionMetadata {
            partition: p.partition_index,
            leader_id: p.leader_id,
            leader_epoch: p.leader_epoch,
            error_code: ErrorCode(p.error_code),
        })
        .collect();
    few::sort_by_key(&mut partitions, |p| p.partition);
    partitions
}

/// The [`ClusterMetadata`] of a Metadata answer for every topic: topics with a topic-level
/// error (or no partitions) are left out, since there is nothing to read from them.
pub(crate) fn cluster_from_response(response: MetadataResponse) -> ClusterMetadata {
    let mut brokers: Vec<BrokerMetadata> = response
        .brokers
        .into_iter()
        .map(|b| BrokerMetadata {
            node_id: b.node_id,
            host: b.host,
            port: b.port,
            rack: b.rack,
        })
        .collect();
    few::sort_by_key(&mut brokers, |b| b.node_id);
    let mut topics: Vec<TopicMetadata> = response
        .topics
        .into_iter()
        .filter(|t| ErrorCode(t.error_code).is_ok() && !t.partitions.is_empty())
        .filter_map(|t| {
            let partitions = partitions_of(&t.partitions);
            let name = t.name?;
            Some(TopicMetadata {
                name,
                topic_id: t.topic_id,
                partitions,
            })
        })
        .collect();
    few::sort_by(&mut topics, |a, b| a.name < b.name);
    ClusterMetadata {
        cluster_id: response.cluster_id,
        controller_id: (response.controller_id >= 0).then_some(response.controller_id),
        brokers,
        topics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_metadata_sorts_and_leaves_out_topics_in_error() {
        use kseek_protocol::messages::metadata::{
            MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
        };
        let partition = |index: i32, leader: i32| MetadataResponsePartition {
            partition_index: index,
            leader_id: leader,
            leader_epoch: 7,
            ..Default::default()
        };
        let broker = |id: i32, host: &str| MetadataResponseBroker {
            node_id: id,
            host: host.into(),
            port: 9092,
            ..Default::default()
        };
        let response = MetadataResponse {
            brokers: vec![broker(2, "b"), broker(1, "a")],
            cluster_id: Some("c".into()),
            controller_id: 2,
            topics: vec![
                MetadataResponseTopic {
                    name: Some("z".into()),
                    partitions: vec![partition(1, 2), partition(0, 1)],
                    ..Default::default()
                },
                MetadataResponseTopic {
                    name: Some("broken".into()),
                    error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED.0,
                    ..Default::default()
                },
                MetadataResponseTopic {
                    name: Some("a".into()),
                    partitions: vec![partition(0, 2)],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let cluster = cluster_from_response(response);
        assert_eq!(cluster.cluster_id.as_deref(), Some("c"));
        assert_eq!(cluster.controller_id, Some(2));
        let brokers: Vec<_> = cluster
            .brokers
            .iter()
            .map(|b| (b.node_id, b.host.as_str()))
            .collect();
        assert_eq!(brokers, [(1, "a"), (2, "b")]);
        let topics: Vec<_> = cluster.topics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(topics, ["a", "z"]);
        let z: Vec<_> = cluster.topics[1]
            .partitions
            .iter()
            .map(|p| (p.partition, p.leader_id, p.leader_epoch))
            .collect();
        assert_eq!(z, [(0, 1, 7), (1, 2, 7)]);
        let no_controller = cluster_from_response(MetadataResponse {
            controller_id: -1,
            ..Default::default()
        });
        assert_eq!(no_controller.controller_id, None);
    }
}

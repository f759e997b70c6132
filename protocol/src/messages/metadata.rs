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

use bytes::{BufMut, Bytes, BytesMut};

use crate::api_key::ApiKey;
use crate::error::{Error, Result};
use crate::messages::{Message, Request, VersionRange};
use crate::primitives::{
    get_array, get_bool, get_i16, get_i32, get_int32s, get_nullable_array, get_nullable_string,
    get_string, get_tags_if, get_uuid, put_array, put_bool, put_int32s, put_nullable_array,
    put_nullable_string, put_string, put_tags_if, put_uuid, require_default, UnknownTaggedFields,
    Uuid,
};

/// The default of the `*AuthorizedOperations` bitfields: "not requested".
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// Metadata request body.
///
/// `topics: None` asks for every topic; `Some(vec![])` (the schema's default) asks for none,
/// which still returns the brokers and the controller.
///
/// # References
/// `MetadataRequest.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataRequest {
    /// The topics to fetch metadata for, or `None` for all topics.
    pub topics: Option<Vec<MetadataRequestTopic>>,
    /// Whether the broker may auto-create requested topics that don't exist (versions 4+,
    /// default true; before version 4 brokers always may, so `false` can't be encoded there).
    pub allow_auto_topic_creation: bool,
    /// Whether to include cluster authorized operations (versions 8–10).
    pub include_cluster_authorized_operations: bool,
    /// Whether to include topic authorized operations (versions 8+).
    pub include_topic_authorized_operations: bool,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for MetadataRequest {
    fn default() -> Self {
        MetadataRequest {
            topics: Some(Vec::new()),
            allow_auto_topic_creation: true,
            include_cluster_authorized_operations: false,
            include_topic_authorized_operations: false,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
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

/// A topic in a Metadata request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataRequestTopic {
    /// The topic id (versions 10+; ignorable). Brokers look topics up by id from version 12.
    pub topic_id: Uuid,
    /// The topic name; null (versions 10+) when asking by id. Defaults to `""`, as in the
    /// schema.
    pub name: Option<String>,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for MetadataRequestTopic {
    fn default() -> Self {
        MetadataRequestTopic {
            topic_id: Uuid::ZERO,
            name: Some(String::new()),
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

impl MetadataRequestTopic {
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = MetadataRequest::is_flexible(version);
        if version >= 10 {
            put_uuid(buf, &self.topic_id);
        }
        if self.name.is_none() && version < 10 {
            return Err(Error::UnexpectedNull {
                what: "MetadataRequest.topics.name",
                version,
            });
        }
        put_nullable_string(
            buf,
            self.name.as_deref(),
            flexible,
            "MetadataRequest.topics.name",
        )?;
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = MetadataRequest::is_flexible(version);
        let mut out = Self::default();
        if version >= 10 {
            out.topic_id = get_uuid(buf, "MetadataRequest.topics.topic_id")?;
        }
        out.name = get_nullable_string(buf, flexible, "MetadataRequest.topics.name")?;
        if out.name.is_none() && version < 10 {
            return Err(Error::UnexpectedNull {
                what: "MetadataRequest.topics.name",
                version,
            });
        }
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "MetadataRequest.topics")?;
        Ok(out)
    }

    /// The smallest encoding of one topic at `version`.
    fn min_size(version: i16) -> usize {
        let id = if version >= 10 { 16 } else { 0 };
        // Flexible: name (1) and tagged section (1); classic: name (2).
        id + 2
    }
}

impl Message for MetadataRequest {
    const API_KEY: ApiKey = ApiKey::METADATA;
    const VERSIONS: VersionRange = VersionRange { min: 1, max: 13 };
    const FIRST_FLEXIBLE_VERSION: i16 = 9;
    const NAME: &'static str = "MetadataRequest";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        put_nullable_array(
            buf,
            self.topics.as_deref(),
            flexible,
            "MetadataRequest.topics",
            |b, t| t.encode(b, version),
        )?;
        if version >= 4 {
            put_bool(buf, self.allow_auto_topic_creation);
        } else {
            require_default(
                self.allow_auto_topic_creation,
                "MetadataRequest.allow_auto_topic_creation",
                version,
            )?;
        }
        if (8..=10).contains(&version) {
            put_bool(buf, self.include_cluster_authorized_operations);
        } else {
            require_default(
                !self.include_cluster_authorized_operations,
                "MetadataRequest.include_cluster_authorized_operations",
                version,
            )?;
        }
        if version >= 8 {
            put_bool(buf, self.include_topic_authorized_operations);
        } else {
            require_default(
                !self.include_topic_authorized_operations,
                "MetadataRequest.include_topic_authorized_operations",
                version,
            )?;
        }
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut out = Self {
            topics: get_nullable_array(
                buf,
                flexible,
                MetadataRequestTopic::min_size(version),
                "MetadataRequest.topics",
                |b| MetadataRequestTopic::decode(b, version),
            )?,
            ..Self::default()
        };
        if version >= 4 {
            out.allow_auto_topic_creation =
                get_bool(buf, "MetadataRequest.allow_auto_topic_creation")?;
        }
        if (8..=10).contains(&version) {
            out.include_cluster_authorized_operations =
                get_bool(buf, "MetadataRequest.include_cluster_authorized_operations")?;
        }
        if version >= 8 {
            out.include_topic_authorized_operations =
                get_bool(buf, "MetadataRequest.include_topic_authorized_operations")?;
        }
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "MetadataRequest")?;
        Ok(out)
    }
}

impl Request for MetadataRequest {
    type Response = MetadataResponse;
}

/// Metadata response body.
///
/// # References
/// `MetadataResponse.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponse {
    /// Throttle time in milliseconds because of a quota violation (versions 3+; ignorable).
    pub throttle_time_ms: i32,
    /// The brokers in the cluster.
    pub brokers: Vec<MetadataResponseBroker>,
    /// The cluster id, or null (versions 2+; ignorable).
    pub cluster_id: Option<String>,
    /// The controller's broker id, or -1 (versions 1+; ignorable).
    pub controller_id: i32,
    /// The topics.
    pub topics: Vec<MetadataResponseTopic>,
    /// Bitfield of the cluster's authorized operations (versions 8–10; default
    /// [`AUTHORIZED_OPERATIONS_OMITTED`]).
    pub cluster_authorized_operations: i32,
    /// The top-level error code, or 0 (versions 13+; ignorable).
    pub error_code: i16,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for MetadataResponse {
    fn default() -> Self {
        MetadataResponse {
            throttle_time_ms: 0,
            brokers: Vec::new(),
            cluster_id: None,
            controller_id: -1,
            topics: Vec::new(),
            cluster_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            error_code: 0,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// A broker in a Metadata response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetadataResponseBroker {
    /// The broker id.
    pub node_id: i32,
    /// The broker's host name.
    pub host: String,
    /// The broker's port.
    pub port: i32,
    /// The broker's rack, or null (versions 1+; ignorable).
    pub rack: Option<String>,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A topic in a Metadata response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponseTopic {
    /// The topic's error code, or 0.
    pub error_code: i16,
    /// The topic name; null (versions 12+) for a topic asked for by an unknown id. Defaults
    /// to `""`, as in the schema.
    pub name: Option<String>,
    /// The topic id, zero for a topic asked for by an unknown name (versions 10+; ignorable).
    pub topic_id: Uuid,
    /// Whether the topic is internal (versions 1+; ignorable).
    pub is_internal: bool,
    /// The partitions.
    pub partitions: Vec<MetadataResponsePartition>,
    /// Bitfield of the topic's authorized operations (versions 8+; default
    /// [`AUTHORIZED_OPERATIONS_OMITTED`]).
    pub topic_authorized_operations: i32,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for MetadataResponseTopic {
    fn default() -> Self {
        MetadataResponseTopic {
            error_code: 0,
            name: Some(String::new()),
            topic_id: Uuid::ZERO,
            is_internal: false,
            partitions: Vec::new(),
            topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// A partition in a Metadata response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponsePartition {
    /// The partition's error code, or 0.
    pub error_code: i16,
    /// The partition index.
    pub partition_index: i32,
    /// The leader's broker id.
    pub leader_id: i32,
    /// The leader epoch, or -1 (versions 7+; ignorable).
    pub leader_epoch: i32,
    /// All replicas of the partition.
    pub replica_nodes: Vec<i32>,
    /// The in-sync replicas.
    pub isr_nodes: Vec<i32>,
    /// The offline replicas (versions 5+; ignorable).
    pub offline_replicas: Vec<i32>,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for MetadataResponsePartition {
    fn default() -> Self {
        MetadataResponsePartition {
            error_code: 0,
            partition_index: 0,
            leader_id: 0,
            leader_epoch: -1,
            replica_nodes: Vec::new(),
            isr_nodes: Vec::new(),
            offline_replicas: Vec::new(),
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

impl MetadataResponseBroker {
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = MetadataResponse::is_flexible(version);
        buf.put_i32(self.node_id);
        put_string(buf, &self.host, flexible, "MetadataResponse.brokers.host")?;
        buf.put_i32(self.port);
        put_nullable_string(
            buf,
            self.rack.as_deref(),
            flexible,
            "MetadataResponse.brokers.rack",
        )?;
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let mut out = MetadataResponseBroker {
            node_id: get_i32(buf, "MetadataResponse.brokers.node_id")?,
            host: get_string(buf, flexible, "MetadataResponse.brokers.host")?,
            port: get_i32(buf, "MetadataResponse.brokers.port")?,
            rack: get_nullable_string(buf, flexible, "MetadataResponse.brokers.rack")?,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        };
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "MetadataResponse.brokers")?;
        Ok(out)
    }

    /// The smallest encoding of one broker at `version` (which is always 1 or more):
    /// node id, port, host and rack lengths, tagged section.
    fn min_size(version: i16) -> usize {
        if MetadataResponse::is_flexible(version) {
            4 + 4 + 1 + 1 + 1
        } else {
            4 + 4 + 2 + 2
        }
    }
}

impl MetadataResponsePartition {
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = MetadataResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        buf.put_i32(self.partition_index);
        buf.put_i32(self.leader_id);
        // LeaderEpoch and OfflineReplicas are ignorable: dropped in older versions.
        if version >= 7 {
            buf.put_i32(self.leader_epoch);
        }
        put_int32s(
            buf,
            &self.replica_nodes,
            flexible,
            "MetadataResponse.topics.partitions.replica_nodes",
        )?;
        put_int32s(
            buf,
            &self.isr_nodes,
            flexible,
            "MetadataResponse.topics.partitions.isr_nodes",
        )?;
        if version >= 5 {
            put_int32s(
                buf,
                &self.offline_replicas,
                flexible,
                "MetadataResponse.topics.partitions.offline_replicas",
            )?;
        }
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let mut out = MetadataResponsePartition {
            error_code: get_i16(buf, "MetadataResponse.topics.partitions.error_code")?,
            partition_index: get_i32(buf, "MetadataResponse.topics.partitions.partition_index")?,
            leader_id: get_i32(buf, "MetadataResponse.topics.partitions.leader_id")?,
            ..Self::default()
        };
        if version >= 7 {
            out.leader_epoch = get_i32(buf, "MetadataResponse.topics.partitions.leader_epoch")?;
        }
        out.replica_nodes = get_int32s(
            buf,
            flexible,
            "MetadataResponse.topics.partitions.replica_nodes",
        )?;
        out.isr_nodes = get_int32s(
            buf,
            flexible,
            "MetadataResponse.topics.partitions.isr_nodes",
        )?;
        if version >= 5 {
            out.offline_replicas = get_int32s(
                buf,
                flexible,
                "MetadataResponse.topics.partitions.offline_replicas",
            )?;
        }
        out.unknown_tagged_fields =
            get_tags_if(buf, flexible, "MetadataResponse.topics.partitions")?;
        Ok(out)
    }

    /// The smallest encoding of one partition at `version`.
    fn min_size(version: i16) -> usize {
        let flexible = MetadataResponse::is_flexible(version);
        let array = if flexible { 1 } else { 4 };
        let mut n = 2 + 4 + 4 + 2 * array;
        if version >= 7 {
            n += 4;
        }
        if version >= 5 {
            n += array;
        }
        if flexible {
            n += 1;
        }
        n
    }
}

impl MetadataResponseTopic {
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = MetadataResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        if self.name.is_none() && version < 12 {
            return Err(Error::UnexpectedNull {
                what: "MetadataResponse.topics.name",
                version,
            });
        }
        put_nullable_string(
            buf,
            self.name.as_deref(),
            flexible,
            "MetadataResponse.topics.name",
        )?;
        // TopicId and IsInternal are ignorable: dropped in older versions.
        if version >= 10 {
            put_uuid(buf, &self.topic_id);
        }
        put_bool(buf, self.is_internal);
        put_array(
            buf,
            &self.partitions,
            flexible,
            "MetadataResponse.topics.partitions",
            |b, p| p.encode(b, version),
        )?;
        if version >= 8 {
            buf.put_i32(self.topic_authorized_operations);
        } else {
            require_default(
                self.topic_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED,
                "MetadataResponse.topics.topic_authorized_operations",
                version,
            )?;
        }
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let mut out = MetadataResponseTopic {
            error_code: get_i16(buf, "MetadataResponse.topics.error_code")?,
            name: get_nullable_string(buf, flexible, "MetadataResponse.topics.name")?,
            ..Self::default()
        };
        if out.name.is_none() && version < 12 {
            return Err(Error::UnexpectedNull {
                what: "MetadataResponse.topics.name",
                version,
            });
        }
        if version >= 10 {
            out.topic_id = get_uuid(buf, "MetadataResponse.topics.topic_id")?;
        }
        out.is_internal = get_bool(buf, "MetadataResponse.topics.is_internal")?;
        out.partitions = get_array(
            buf,
            flexible,
            MetadataResponsePartition::min_size(version),
            "MetadataResponse.topics.partitions",
            |b| MetadataResponsePartition::decode(b, version),
        )?;
        if version >= 8 {
            out.topic_authorized_operations =
                get_i32(buf, "MetadataResponse.topics.topic_authorized_operations")?;
        }
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "MetadataResponse.topics")?;
        Ok(out)
    }

    /// The smallest encoding of one topic at `version` (which is always 1 or more).
    fn min_size(version: i16) -> usize {
        let flexible = MetadataResponse::is_flexible(version);
        // error code, is_internal; name and partitions lengths; topic id; authorized
        // operations; tagged section.
        let mut n = 2 + 1 + if flexible { 1 + 1 + 1 } else { 2 + 4 };
        if version >= 10 {
            n += 16;
        }
        if version >= 8 {
            n += 4;
        }
        n
    }
}

impl Message for MetadataResponse {
    const API_KEY: ApiKey = ApiKey::METADATA;
    const VERSIONS: VersionRange = VersionRange { min: 1, max: 13 };
    const FIRST_FLEXIBLE_VERSION: i16 = 9;
    const NAME: &'static str = "MetadataResponse";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        // ThrottleTimeMs, ClusterId, ControllerId and ErrorCode are ignorable: dropped in
        // older versions.
        if version >= 3 {
            buf.put_i32(self.throttle_time_ms);
        }
        put_array(
            buf,
            &self.brokers,
            flexible,
            "MetadataResponse.brokers",
            |b, br| br.encode(b, version),
        )?;
        if version >= 2 {
            put_nullable_string(
                buf,
                self.cluster_id.as_deref(),
                flexible,
                "MetadataResponse.cluster_id",
            )?;
        }
        buf.put_i32(self.controller_id);
        put_array(
            buf,
            &self.topics,
            flexible,
            "MetadataResponse.topics",
            |b, t| t.encode(b, version),
        )?;
        if (8..=10).contains(&version) {
            buf.put_i32(self.cluster_authorized_operations);
        } else {
            require_default(
                self.cluster_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED,
                "MetadataResponse.cluster_authorized_operations",
                version,
            )?;
        }
        if version >= 13 {
            buf.put_i16(self.error_code);
        }
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut out = Self::default();
        if version >= 3 {
            out.throttle_time_ms = get_i32(buf, "MetadataResponse.throttle_time_ms")?;
        }
        out.brokers = get_array(
            buf,
            flexible,
            MetadataResponseBroker::min_size(version),
            "MetadataResponse.brokers",
            |b| MetadataResponseBroker::decode(b, version),
        )?;
        if version >= 2 {
            out.cluster_id = get_nullable_string(buf, flexible, "MetadataResponse.cluster_id")?;
        }
        out.controller_id = get_i32(buf, "MetadataResponse.controller_id")?;
        out.topics = get_array(
            buf,
            flexible,
            MetadataResponseTopic::min_size(version),
            "MetadataResponse.topics",
            |b| MetadataResponseTopic::decode(b, version),
        )?;
        if (8..=10).contains(&version) {
            out.cluster_authorized_operations =
                get_i32(buf, "MetadataResponse.cluster_authorized_operations")?;
        }
        if version >= 13 {
            out.error_code = get_i16(buf, "MetadataResponse.error_code")?;
        }
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "MetadataResponse")?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::decode_exact;
    use crate::messages::testing::property_tests;
    use crate::messages::testing::{assert_prefixes_fail, assert_wire, encode as enc};
    use crate::primitives::RawTaggedField;
    use proptest::collection::vec;
    use proptest::option;
    use proptest::prelude::*;

    fn unknown_tags(flexible: bool) -> impl Strategy<Value = UnknownTaggedFields> {
        vec((0u32..3, vec(any::<u8>(), 0..4)), 0..3).prop_map(move |fields| {
            if !flexible {
                return UnknownTaggedFields::default();
            }
            let mut tag = 0;
            UnknownTaggedFields(
                fields
                    .into_iter()
                    .map(|(gap, data)| {
                        tag += gap + 1;
                        RawTaggedField {
                            tag,
                            data: Bytes::from(data),
                        }
                    })
                    .collect(),
            )
        })
    }

    fn uuid() -> impl Strategy<Value = Uuid> {
        any::<[u8; 16]>().prop_map(Uuid)
    }

    fn name(nullable: bool) -> BoxedStrategy<Option<String>> {
        if nullable {
            option::of("[a-zA-Z0-9._-]{0,12}").boxed()
        } else {
            "[a-zA-Z0-9._-]{0,12}".prop_map(Some).boxed()
        }
    }

    fn request(v: i16) -> impl Strategy<Value = MetadataRequest> {
        let flexible = v >= 9;
        let topic = (uuid(), name(v >= 10), unknown_tags(flexible)).prop_map(
            move |(topic_id, name, tags)| MetadataRequestTopic {
                topic_id: if v >= 10 { topic_id } else { Uuid::ZERO },
                name,
                unknown_tagged_fields: tags,
            },
        );
        (
            option::of(vec(topic, 0..4)),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            unknown_tags(flexible),
        )
            .prop_map(move |(topics, auto, cluster_ops, topic_ops, tags)| {
                MetadataRequest {
                    topics,
                    allow_auto_topic_creation: v < 4 || auto,
                    include_cluster_authorized_operations: (8..=10).contains(&v) && cluster_ops,
                    include_topic_authorized_operations: v >= 8 && topic_ops,
                    unknown_tagged_fields: tags,
                }
            })
    }

    fn partition(v: i16) -> impl Strategy<Value = MetadataResponsePartition> {
        (
            (any::<i16>(), any::<i32>(), any::<i32>(), any::<i32>()),
            vec(any::<i32>(), 0..4),
            vec(any::<i32>(), 0..4),
            vec(any::<i32>(), 0..3),
            unknown_tags(v >= 9),
        )
            .prop_map(
                move |((error_code, index, leader, epoch), replicas, isr, offline, tags)| {
                    MetadataResponsePartition {
                        error_code,
                        partition_index: index,
                        leader_id: leader,
                        leader_epoch: if v >= 7 { epoch } else { -1 },
                        replica_nodes: replicas,
                        isr_nodes: isr,
                        offline_replicas: if v >= 5 { offline } else { Vec::new() },
                        unknown_tagged_fields: tags,
                    }
                },
            )
    }

    fn topic(v: i16) -> impl Strategy<Value = MetadataResponseTopic> {
        (
            any::<i16>(),
            name(v >= 12),
            uuid(),
            any::<bool>(),
            vec(partition(v), 0..3),
            any::<i32>(),
            unknown_tags(v >= 9),
        )
            .prop_map(
                move |(error_code, name, id, internal, partitions, ops, tags)| {
                    MetadataResponseTopic {
                        error_code,
                        name,
                        topic_id: if v >= 10 { id } else { Uuid::ZERO },
                        is_internal: internal,
                        partitions,
                        topic_authorized_operations: if v >= 8 {
                            ops
                        } else {
                            AUTHORIZED_OPERATIONS_OMITTED
                        },
                        unknown_tagged_fields: tags,
                    }
                },
            )
    }

    fn response(v: i16) -> impl Strategy<Value = MetadataResponse> {
        let broker = (
            any::<i32>(),
            "[a-z0-9.-]{0,12}",
            any::<i32>(),
            option::of("[a-z0-9-]{0,6}"),
            unknown_tags(v >= 9),
        )
            .prop_map(|(node_id, host, port, rack, tags)| MetadataResponseBroker {
                node_id,
                host,
                port,
                rack,
                unknown_tagged_fields: tags,
            });
        (
            (
                any::<i32>(),
                option::of("[a-zA-Z0-9_-]{0,22}"),
                any::<i32>(),
            ),
            vec(broker, 0..3),
            vec(topic(v), 0..3),
            any::<i32>(),
            any::<i16>(),
            unknown_tags(v >= 9),
        )
            .prop_map(
                move |((throttle, cluster_id, controller), brokers, topics, ops, error, tags)| {
                    MetadataResponse {
                        throttle_time_ms: if v >= 3 { throttle } else { 0 },
                        brokers,
                        cluster_id: if v >= 2 { cluster_id } else { None },
                        controller_id: controller,
                        topics,
                        cluster_authorized_operations: if (8..=10).contains(&v) {
                            ops
                        } else {
                            AUTHORIZED_OPERATIONS_OMITTED
                        },
                        error_code: if v >= 13 { error } else { 0 },
                        unknown_tagged_fields: tags,
                    }
                },
            )
    }

    property_tests!(MetadataRequest, MetadataResponse, 1..=13, 128);

    #[test]
    fn request_v1_and_v4_bytes() {
        // v1: a null array asks for all topics.
        assert_wire(
            &MetadataRequest {
                topics: None,
                ..Default::default()
            },
            1,
            &[0xff, 0xff, 0xff, 0xff],
        );
        let m = MetadataRequest::for_topics(["t"]);
        assert_wire(
            &m,
            4,
            &[
                0x00, 0x00, 0x00, 0x01, // one topic
                0x00, 0x01, b't', // name
                0x00, // allow_auto_topic_creation false
            ],
        );
    }

    #[test]
    fn request_v10_and_v12_bytes() {
        let mut id = [0u8; 16];
        id[15] = 7;
        let m = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                topic_id: Uuid(id),
                name: None,
                ..Default::default()
            }]),
            allow_auto_topic_creation: false,
            include_cluster_authorized_operations: true,
            include_topic_authorized_operations: true,
            ..Default::default()
        };
        let mut v10 = vec![0x02]; // one topic (compact)
        v10.extend_from_slice(&id);
        v10.extend_from_slice(&[
            0x00, // null name
            0x00, // topic tagged section
            0x00, // allow_auto_topic_creation
            0x01, // include_cluster_authorized_operations (8-10)
            0x01, // include_topic_authorized_operations
            0x00, // tagged section
        ]);
        assert_wire(&m, 10, &v10);
        let m12 = MetadataRequest {
            include_cluster_authorized_operations: false,
            ..m
        };
        let mut v12 = vec![0x02];
        v12.extend_from_slice(&id);
        v12.extend_from_slice(&[0x00, 0x00, 0x00, 0x01, 0x00]);
        assert_wire(&m12, 12, &v12);
    }

    #[test]
    fn response_v1_bytes() {
        let m = MetadataResponse {
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "h".into(),
                port: 9092,
                rack: None,
                ..Default::default()
            }],
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some("t".into()),
                partitions: vec![MetadataResponsePartition {
                    leader_id: 1,
                    replica_nodes: vec![1],
                    isr_nodes: vec![1],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_wire(
            &m,
            1,
            &[
                0x00, 0x00, 0x00, 0x01, // one broker
                0x00, 0x00, 0x00, 0x01, // node_id
                0x00, 0x01, b'h', // host
                0x00, 0x00, 0x23, 0x84, // port
                0xff, 0xff, // null rack
                0x00, 0x00, 0x00, 0x01, // controller_id
                0x00, 0x00, 0x00, 0x01, // one topic
                0x00, 0x00, // error_code
                0x00, 0x01, b't', // name
                0x00, // is_internal
                0x00, 0x00, 0x00, 0x01, // one partition
                0x00, 0x00, // error_code
                0x00, 0x00, 0x00, 0x00, // partition_index
                0x00, 0x00, 0x00, 0x01, // leader_id
                0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // replicas [1]
                0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // isr [1]
            ],
        );
    }

    #[test]
    fn response_v13_bytes() {
        let mut id = [0u8; 16];
        id[0] = 0xab;
        let m = MetadataResponse {
            throttle_time_ms: 2,
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "h".into(),
                port: 9092,
                rack: Some("r".into()),
                ..Default::default()
            }],
            cluster_id: Some("c".into()),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                error_code: 0,
                name: Some("t".into()),
                topic_id: Uuid(id),
                is_internal: true,
                partitions: vec![MetadataResponsePartition {
                    error_code: 0,
                    partition_index: 2,
                    leader_id: 1,
                    leader_epoch: 5,
                    replica_nodes: vec![1],
                    isr_nodes: vec![],
                    offline_replicas: vec![1],
                    ..Default::default()
                }],
                topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
                ..Default::default()
            }],
            error_code: 0,
            ..Default::default()
        };
        let mut b = vec![
            0x00, 0x00, 0x00, 0x02, // throttle
            0x02, // one broker
            0x00, 0x00, 0x00, 0x01, // node_id
            0x02, b'h', // host
            0x00, 0x00, 0x23, 0x84, // port
            0x02, b'r', // rack
            0x00, // broker tagged section
            0x02, b'c', // cluster_id
            0x00, 0x00, 0x00, 0x01, // controller_id
            0x02, // one topic
            0x00, 0x00, // error_code
            0x02, b't', // name
        ];
        b.extend_from_slice(&id);
        b.extend_from_slice(&[
            0x01, // is_internal
            0x02, // one partition
            0x00, 0x00, // error_code
            0x00, 0x00, 0x00, 0x02, // partition_index
            0x00, 0x00, 0x00, 0x01, // leader_id
            0x00, 0x00, 0x00, 0x05, // leader_epoch
            0x02, 0x00, 0x00, 0x00, 0x01, // replicas [1]
            0x01, // isr []
            0x02, 0x00, 0x00, 0x00, 0x01, // offline [1]
            0x00, // partition tagged section
            0x80, 0x00, 0x00, 0x00, // topic_authorized_operations i32::MIN
            0x00, // topic tagged section
            // no cluster_authorized_operations after v10
            0x00, 0x00, // error_code (13+)
            0x00, // tagged section
        ]);
        assert_wire(&m, 13, &b);
    }

    fn sample_response() -> MetadataResponse {
        MetadataResponse {
            throttle_time_ms: 1,
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "b1".into(),
                port: 9092,
                rack: Some("r".into()),
                ..Default::default()
            }],
            cluster_id: Some("cid".into()),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some("t".into()),
                partitions: vec![MetadataResponsePartition {
                    leader_id: 1,
                    replica_nodes: vec![1, 2],
                    isr_nodes: vec![1],
                    offline_replicas: vec![2],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn prefixes_fail_and_trailing_bytes_are_refused() {
        let req = MetadataRequest::for_topics(["a", "bc"]);
        let resp = sample_response();
        for v in 1..=13 {
            // allow_auto_topic_creation false can't be sent before v4.
            let req = if v < 4 {
                MetadataRequest {
                    allow_auto_topic_creation: true,
                    ..req.clone()
                }
            } else {
                req.clone()
            };
            assert_prefixes_fail::<MetadataRequest>(&enc(&req, v), v);
            assert_prefixes_fail::<MetadataResponse>(&enc(&resp, v), v);
        }
    }

    #[test]
    fn length_bombs_fail_at_once() {
        // Request v1: topics count 0x7fffffff.
        let b = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]);
        assert!(matches!(
            decode_exact::<MetadataRequest>(b, 1),
            Err(Error::InvalidLength { .. })
        ));
        // Request v9: compact topics counts 0x7fffffff and 0xffffffff.
        for count in [
            &[0xff, 0xff, 0xff, 0xff, 0x07][..],
            &[0xff, 0xff, 0xff, 0xff, 0x0f][..],
        ] {
            let mut b = count.to_vec();
            b.extend_from_slice(&[0; 5]);
            assert!(decode_exact::<MetadataRequest>(Bytes::from(b), 9).is_err());
        }
        // Response v1: brokers count 0x7fffffff.
        let b = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]);
        assert!(decode_exact::<MetadataResponse>(b, 1).is_err());
        // Response v1: one broker whose host claims 0x7fff bytes.
        let b = Bytes::from_static(&[0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 0, 0, 0]);
        assert!(decode_exact::<MetadataResponse>(b, 1).is_err());
        // Response v9: no brokers, null cluster id, controller, topics count 0x7ffffffe.
        let b = Bytes::from_static(&[
            0, 0, 0, 0, 0x01, 0x00, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x07, 0,
        ]);
        assert!(matches!(
            decode_exact::<MetadataResponse>(b, 9),
            Err(Error::InvalidLength { .. })
        ));
        // Response v1: replica_nodes count 0x7fffffff inside a partition.
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]; // no brokers, controller, 1 topic
        b.extend_from_slice(&[0, 0, 0, 1, b't', 0, 0, 0, 0, 1]); // topic "t", one partition
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // error, index, leader
        b.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        assert!(decode_exact::<MetadataResponse>(Bytes::from(b), 1).is_err());
    }

    #[test]
    fn non_ignorable_fields_absent_in_version_error() {
        let mut b = BytesMut::new();
        let no_auto = MetadataRequest::for_topics(["t"]);
        assert!(matches!(
            no_auto.encode(&mut b, 3),
            Err(Error::FieldNotInVersion { version: 3, .. })
        ));
        let cluster_ops = MetadataRequest {
            include_cluster_authorized_operations: true,
            ..Default::default()
        };
        assert!(matches!(
            cluster_ops.encode(&mut b, 11),
            Err(Error::FieldNotInVersion { version: 11, .. })
        ));
        assert!(cluster_ops.encode(&mut b, 7).is_err());
        let topic_ops = MetadataRequest {
            include_topic_authorized_operations: true,
            ..Default::default()
        };
        assert!(topic_ops.encode(&mut b, 7).is_err());
        let resp = MetadataResponse {
            cluster_authorized_operations: 0,
            ..Default::default()
        };
        assert!(matches!(
            resp.encode(&mut b, 11),
            Err(Error::FieldNotInVersion { .. })
        ));
        let resp = MetadataResponse {
            topics: vec![MetadataResponseTopic {
                topic_authorized_operations: 0,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(resp.encode(&mut b, 7).is_err());
        // Ignorable fields are dropped instead: v1 has no throttle, cluster id or error code.
        let ignorable = MetadataResponse {
            throttle_time_ms: 5,
            cluster_id: Some("c".into()),
            error_code: 3,
            ..Default::default()
        };
        assert_eq!(
            enc(&ignorable, 1),
            vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]
        );
    }

    #[test]
    fn null_names_only_where_the_version_allows() {
        let mut b = BytesMut::new();
        let by_id = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                topic_id: Uuid([1; 16]),
                name: None,
                ..Default::default()
            }]),
            ..Default::default()
        };
        assert!(matches!(
            by_id.encode(&mut b, 9),
            Err(Error::UnexpectedNull { version: 9, .. })
        ));
        assert!(by_id.encode(&mut b, 10).is_ok());
        // A request for all topics encodes at every version.
        for v in 1..=13 {
            assert!(MetadataRequest::all_topics().encode(&mut b, v).is_ok());
        }
        // A null name on the wire at v1: refused.
        let wire = Bytes::from_static(&[0, 0, 0, 1, 0xff, 0xff]);
        assert!(matches!(
            decode_exact::<MetadataRequest>(wire, 1),
            Err(Error::UnexpectedNull { .. })
        ));
        let resp = MetadataResponse {
            topics: vec![MetadataResponseTopic {
                name: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(resp.encode(&mut b, 11).is_err());
        assert!(resp.encode(&mut b, 12).is_ok());
    }
}

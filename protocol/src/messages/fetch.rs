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

use bytes::{BufMut, Bytes, BytesMut};

use crate::api_key::ApiKey;
use crate::error::Result;
use crate::messages::{IsolationLevel, Message, Request, VersionRange};
use crate::primitives::{
    get_array, get_i16, get_i32, get_i64, get_i8, get_nullable_array, get_nullable_bytes,
    get_nullable_string, get_string, get_tagged_fields, get_tags_if, get_unknown_tagged_fields,
    get_uuid, min_array, min_string, min_tags, put_array, put_nullable_array, put_nullable_bytes,
    put_nullable_string, put_string, put_tagged_fields, put_tags_if, put_unknown_tagged_fields,
    put_uuid, require_default, UnknownTaggedFields, Uuid,
};

/// The first flexible version of both Fetch messages.
const FIRST_FLEXIBLE: i16 = 12;

/// Encodes one known tagged field's payload with `f` and adds it to `tagged`.
fn push_tagged(
    tagged: &mut Vec<(u32, BytesMut)>,
    tag: u32,
    f: impl FnOnce(&mut BytesMut) -> Result<()>,
) -> Result<()> {
    let mut payload = BytesMut::new();
    f(&mut payload)?;
    tagged.push((tag, payload));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/// A Fetch request: which partitions to read from, from which offsets, and how long and how
/// much to wait for.
///
/// # References
/// <https://kafka.apache.org/protocol#The_Messages_Fetch>, `FetchRequest.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRequest {
    /// The cluster id if known (tagged, v12+). Default null.
    pub cluster_id: Option<String>,
    /// The broker id of the follower, or -1 for a consumer (v4–14). Default -1.
    pub replica_id: i32,
    /// The state of the replica in the follower (tagged, v15+).
    pub replica_state: ReplicaState,
    /// The maximum time in milliseconds to wait for the response.
    pub max_wait_ms: i32,
    /// The minimum bytes to accumulate in the response.
    pub min_bytes: i32,
    /// The maximum bytes to fetch (KIP-74). Default `0x7fffffff`.
    pub max_bytes: i32,
    /// Read uncommitted (the default) or read committed (v4+; KIP-98).
    pub isolation_level: IsolationLevel,
    /// The fetch session id (v7+). Default 0.
    pub session_id: i32,
    /// The fetch session epoch (v7+). Default -1.
    pub session_epoch: i32,
    /// The topics to fetch.
    pub topics: Vec<FetchTopic>,
    /// In an incremental fetch request, the partitions to remove (v7+).
    pub forgotten_topics_data: Vec<ForgottenTopic>,
    /// The rack of the consumer making this request (v11+). Default empty.
    pub rack_id: String,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for FetchRequest {
    fn default() -> Self {
        FetchRequest {
            cluster_id: None,
            replica_id: -1,
            replica_state: ReplicaState::default(),
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: 0x7fff_ffff,
            isolation_level: IsolationLevel::READ_UNCOMMITTED,
            session_id: 0,
            session_epoch: -1,
            topics: Vec::new(),
            forgotten_topics_data: Vec::new(),
            rack_id: String::new(),
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// The state of a follower replica (request v15+, tagged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaState {
    /// The replica id of the follower, or -1 for a consumer. Default -1.
    pub replica_id: i32,
    /// The epoch of this follower, or -1 if not available. Default -1.
    pub replica_epoch: i64,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for ReplicaState {
    fn default() -> Self {
        ReplicaState {
            replica_id: -1,
            replica_epoch: -1,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// A topic to fetch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FetchTopic {
    /// The topic name (v4–12).
    pub topic: String,
    /// The topic id (v13+).
    pub topic_id: Uuid,
    /// The partitions to fetch.
    pub partitions: Vec<FetchPartition>,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A partition to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartition {
    /// The partition index.
    pub partition: i32,
    /// The current leader epoch of the partition (v9+). Default -1.
    pub current_leader_epoch: i32,
    /// The offset to fetch from.
    pub fetch_offset: i64,
    /// The epoch of the last fetched record, or -1 if there is none (v12+). Default -1.
    pub last_fetched_epoch: i32,
    /// The earliest available offset of the follower replica (v5+). Default -1.
    pub log_start_offset: i64,
    /// The maximum bytes to fetch from this partition (KIP-74).
    pub partition_max_bytes: i32,
    /// The directory id of the follower fetching (tagged, v17+).
    pub replica_directory_id: Uuid,
    /// The high watermark known by the replica (tagged, v18+). Default `i64::MAX` ("not
    /// supported").
    pub high_watermark: i64,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for FetchPartition {
    fn default() -> Self {
        FetchPartition {
            partition: 0,
            current_leader_epoch: -1,
            fetch_offset: 0,
            last_fetched_epoch: -1,
            log_start_offset: -1,
            partition_max_bytes: 0,
            replica_directory_id: Uuid::ZERO,
            high_watermark: i64::MAX,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// Partitions to remove from an incremental fetch session (v7+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ForgottenTopic {
    /// The topic name (v7–12).
    pub topic: String,
    /// The topic id (v13+).
    pub topic_id: Uuid,
    /// The partition indexes to forget.
    pub partitions: Vec<i32>,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Message for FetchRequest {
    const API_KEY: ApiKey = ApiKey::FETCH;
    const VERSIONS: VersionRange = VersionRange { min: 4, max: 18 };
    const FIRST_FLEXIBLE_VERSION: i16 = FIRST_FLEXIBLE;
    const NAME: &'static str = "FetchRequest";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        // Non-ignorable fields the version lacks are refused before anything is written.
        if version >= 15 {
            require_default(self.replica_id == -1, "FetchRequest.replica_id", version)?;
        } else {
            require_default(
                self.replica_state == ReplicaState::default(),
                "FetchRequest.replica_state",
                version,
            )?;
        }
        if version < 7 {
            require_default(
                self.forgotten_topics_data.is_empty(),
                "FetchRequest.forgotten_topics_data",
                version,
            )?;
        }

        if version <= 14 {
            buf.put_i32(self.replica_id);
        }
        buf.put_i32(self.max_wait_ms);
        buf.put_i32(self.min_bytes);
        buf.put_i32(self.max_bytes);
        buf.put_i8(self.isolation_level.0);
        if version >= 7 {
            buf.put_i32(self.session_id);
            buf.put_i32(self.session_epoch);
        }
        put_array(
            buf,
            &self.topics,
            flexible,
            "FetchRequest.topics",
            |b, t| t.encode(b, version),
        )?;
        if version >= 7 {
            put_array(
                buf,
                &self.forgotten_topics_data,
                flexible,
                "FetchRequest.forgotten_topics_data",
                |b, t| t.encode(b, version),
            )?;
        }
        if version >= 11 {
            put_string(buf, &self.rack_id, flexible, "FetchRequest.rack_id")?;
        }
        if flexible {
            let mut tagged = Vec::new();
            if let Some(cluster_id) = &self.cluster_id {
                push_tagged(&mut tagged, 0, |b| {
                    put_nullable_string(b, Some(cluster_id), true, "FetchRequest.cluster_id")
                })?;
            }
            if version >= 15 && self.replica_state != ReplicaState::default() {
                push_tagged(&mut tagged, 1, |b| {
                    self.replica_state.encode(b);
                    Ok(())
                })?;
            }
            put_tagged_fields(buf, tagged, &self.unknown_tagged_fields, "FetchRequest")?;
        }
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut msg = FetchRequest::default();
        if version <= 14 {
            msg.replica_id = get_i32(buf, "FetchRequest.replica_id")?;
        }
        msg.max_wait_ms = get_i32(buf, "FetchRequest.max_wait_ms")?;
        msg.min_bytes = get_i32(buf, "FetchRequest.min_bytes")?;
        msg.max_bytes = get_i32(buf, "FetchRequest.max_bytes")?;
        msg.isolation_level = IsolationLevel(get_i8(buf, "FetchRequest.isolation_level")?);
        if version >= 7 {
            msg.session_id = get_i32(buf, "FetchRequest.session_id")?;
            msg.session_epoch = get_i32(buf, "FetchRequest.session_epoch")?;
        }
        msg.topics = get_array(
            buf,
            flexible,
            FetchTopic::min_size(version),
            "FetchRequest.topics",
            |b| FetchTopic::decode(b, version),
        )?;
        if version >= 7 {
            msg.forgotten_topics_data = get_array(
                buf,
                flexible,
                ForgottenTopic::min_size(version),
                "FetchRequest.forgotten_topics_data",
                |b| ForgottenTopic::decode(b, version),
            )?;
        }
        if version >= 11 {
            msg.rack_id = get_string(buf, flexible, "FetchRequest.rack_id")?;
        }
        if flexible {
            msg.unknown_tagged_fields = get_tagged_fields(buf, "FetchRequest", |tag, data| {
                match tag {
                    0 => {
                        msg.cluster_id =
                            get_nullable_string(data, true, "FetchRequest.cluster_id")?;
                    }
                    1 if version >= 15 => msg.replica_state = ReplicaState::decode(data)?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(msg)
    }
}

impl Request for FetchRequest {
    type Response = FetchResponse;
}

impl ReplicaState {
    /// Encodes the struct (it only exists in flexible versions).
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_i32(self.replica_id);
        buf.put_i64(self.replica_epoch);
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        Ok(ReplicaState {
            replica_id: get_i32(buf, "FetchRequest.replica_state.replica_id")?,
            replica_epoch: get_i64(buf, "FetchRequest.replica_state.replica_epoch")?,
            unknown_tagged_fields: get_unknown_tagged_fields(buf, "FetchRequest.replica_state")?,
        })
    }
}

impl FetchTopic {
    /// The smallest encoding of one topic at `version`.
    const fn min_size(version: i16) -> usize {
        let flexible = version >= FIRST_FLEXIBLE;
        let name = if version >= 13 {
            16
        } else {
            min_string(flexible)
        };
        name + min_array(flexible) + min_tags(flexible)
    }

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = version >= FIRST_FLEXIBLE;
        if version <= 12 {
            put_string(buf, &self.topic, flexible, "FetchRequest.topics.topic")?;
        } else {
            put_uuid(buf, &self.topic_id);
        }
        put_array(
            buf,
            &self.partitions,
            flexible,
            "FetchRequest.topics.partitions",
            |b, p| p.encode(b, version),
        )?;
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = version >= FIRST_FLEXIBLE;
        let mut topic = FetchTopic::default();
        if version <= 12 {
            topic.topic = get_string(buf, flexible, "FetchRequest.topics.topic")?;
        } else {
            topic.topic_id = get_uuid(buf, "FetchRequest.topics.topic_id")?;
        }
        topic.partitions = get_array(
            buf,
            flexible,
            FetchPartition::min_size(version),
            "FetchRequest.topics.partitions",
            |b| FetchPartition::decode(b, version),
        )?;
        topic.unknown_tagged_fields = get_tags_if(buf, flexible, "FetchRequest.topics")?;
        Ok(topic)
    }
}

impl FetchPartition {
    /// The smallest encoding of one partition at `version`.
    const fn min_size(version: i16) -> usize {
        let flexible = version >= FIRST_FLEXIBLE;
        let mut size = 4 + 8 + 4; // partition, fetch_offset, partition_max_bytes
        if version >= 9 {
            size += 4; // current_leader_epoch
        }
        if version >= 12 {
            size += 4; // last_fetched_epoch
        }
        if version >= 5 {
            size += 8; // log_start_offset
        }
        size + min_tags(flexible)
    }

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = version >= FIRST_FLEXIBLE;
        if version < 12 {
            require_default(
                self.last_fetched_epoch == -1,
                "FetchRequest.topics.partitions.last_fetched_epoch",
                version,
            )?;
        }
        buf.put_i32(self.partition);
        if version >= 9 {
            buf.put_i32(self.current_leader_epoch);
        }
        buf.put_i64(self.fetch_offset);
        if version >= 12 {
            buf.put_i32(self.last_fetched_epoch);
        }
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        }
        buf.put_i32(self.partition_max_bytes);
        if flexible {
            let mut tagged = Vec::new();
            if version >= 17 && !self.replica_directory_id.is_zero() {
                push_tagged(&mut tagged, 0, |b| {
                    put_uuid(b, &self.replica_directory_id);
                    Ok(())
                })?;
            }
            if version >= 18 && self.high_watermark != i64::MAX {
                push_tagged(&mut tagged, 1, |b| {
                    b.put_i64(self.high_watermark);
                    Ok(())
                })?;
            }
            put_tagged_fields(
                buf,
                tagged,
                &self.unknown_tagged_fields,
                "FetchRequest.topics.partitions",
            )?;
        }
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = version >= FIRST_FLEXIBLE;
        let mut p = FetchPartition {
            partition: get_i32(buf, "FetchRequest.topics.partitions.partition")?,
            ..FetchPartition::default()
        };
        if version >= 9 {
            p.current_leader_epoch =
                get_i32(buf, "FetchRequest.topics.partitions.current_leader_epoch")?;
        }
        p.fetch_offset = get_i64(buf, "FetchRequest.topics.partitions.fetch_offset")?;
        if version >= 12 {
            p.last_fetched_epoch =
                get_i32(buf, "FetchRequest.topics.partitions.last_fetched_epoch")?;
        }
        if version >= 5 {
            p.log_start_offset = get_i64(buf, "FetchRequest.topics.partitions.log_start_offset")?;
        }
        p.partition_max_bytes = get_i32(buf, "FetchRequest.topics.partitions.partition_max_bytes")?;
        if flexible {
            p.unknown_tagged_fields =
                get_tagged_fields(buf, "FetchRequest.topics.partitions", |tag, data| {
                    match tag {
                        0 if version >= 17 => {
                            p.replica_directory_id = get_uuid(
                                data,
                                "FetchRequest.topics.partitions.replica_directory_id",
                            )?;
                        }
                        1 if version >= 18 => {
                            p.high_watermark =
                                get_i64(data, "FetchRequest.topics.partitions.high_watermark")?;
                        }
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
        }
        Ok(p)
    }
}

impl ForgottenTopic {
    /// The smallest encoding of one forgotten topic at `version`.
    const fn min_size(version: i16) -> usize {
        let flexible = version >= FIRST_FLEXIBLE;
        let name = if version >= 13 {
            16
        } else {
            min_string(flexible)
        };
        name + min_array(flexible) + min_tags(flexible)
    }

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = version >= FIRST_FLEXIBLE;
        if version <= 12 {
            put_string(
                buf,
                &self.topic,
                flexible,
                "FetchRequest.forgotten_topics_data.topic",
            )?;
        } else {
            put_uuid(buf, &self.topic_id);
        }
        put_array(
            buf,
            &self.partitions,
            flexible,
            "FetchRequest.forgotten_topics_data.partitions",
            |b, p| {
                b.put_i32(*p);
                Ok(())
            },
        )?;
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = version >= FIRST_FLEXIBLE;
        let mut topic = ForgottenTopic::default();
        if version <= 12 {
            topic.topic = get_string(buf, flexible, "FetchRequest.forgotten_topics_data.topic")?;
        } else {
            topic.topic_id = get_uuid(buf, "FetchRequest.forgotten_topics_data.topic_id")?;
        }
        topic.partitions = get_array(
            buf,
            flexible,
            4,
            "FetchRequest.forgotten_topics_data.partitions",
            |b| get_i32(b, "FetchRequest.forgotten_topics_data.partitions"),
        )?;
        topic.unknown_tagged_fields =
            get_tags_if(buf, flexible, "FetchRequest.forgotten_topics_data")?;
        Ok(topic)
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/// A Fetch response: per partition, the watermarks, aborted transactions and record bytes.
///
/// # References
/// <https://kafka.apache.org/protocol#The_Messages_Fetch>, `FetchResponse.json`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FetchResponse {
    /// How long the request was throttled for a quota violation, in milliseconds.
    pub throttle_time_ms: i32,
    /// The top-level error code (v7+).
    pub error_code: i16,
    /// The fetch session id, or 0 outside a fetch session (v7+).
    pub session_id: i32,
    /// The response topics.
    pub responses: Vec<FetchableTopicResponse>,
    /// Endpoints of the current leaders named in partitions that failed with
    /// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH (tagged, v16+).
    pub node_endpoints: Vec<NodeEndpoint>,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One topic of a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FetchableTopicResponse {
    /// The topic name (v4–12).
    pub topic: String,
    /// The topic id (v13+).
    pub topic_id: Uuid,
    /// The topic's partitions.
    pub partitions: Vec<PartitionData>,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One partition of a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionData {
    /// The partition index.
    pub partition_index: i32,
    /// The error code, or 0 if there was no fetch error.
    pub error_code: i16,
    /// The current high watermark.
    pub high_watermark: i64,
    /// The last stable offset: every transactional record below it is decided. Default -1.
    pub last_stable_offset: i64,
    /// The current log start offset (v5+). Default -1.
    pub log_start_offset: i64,
    /// Where the follower's log diverges from the leader's (tagged, v12+).
    pub diverging_epoch: EpochEndOffset,
    /// The current leader of the partition (tagged, v12+).
    pub current_leader: LeaderIdAndEpoch,
    /// The snapshot to fetch instead, when the offset is below the log start (tagged, v12+).
    pub snapshot_id: SnapshotId,
    /// The aborted transactions in the returned range, or null. Default empty.
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
    /// The replica the consumer should fetch from next, or -1 (v11+). Default -1.
    pub preferred_read_replica: i32,
    /// The record data, a view into the response buffer (never copied on decode). It may end
    /// with a partial batch.
    pub records: Option<Bytes>,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for PartitionData {
    fn default() -> Self {
        PartitionData {
            partition_index: 0,
            error_code: 0,
            high_watermark: 0,
            last_stable_offset: -1,
            log_start_offset: -1,
            diverging_epoch: EpochEndOffset::default(),
            current_leader: LeaderIdAndEpoch::default(),
            snapshot_id: SnapshotId::default(),
            aborted_transactions: Some(Vec::new()),
            preferred_read_replica: -1,
            records: None,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// The largest epoch and its end offset past which a follower's records diverge (v12+).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochEndOffset {
    /// The largest epoch. Default -1.
    pub epoch: i32,
    /// The end offset of the epoch. Default -1.
    pub end_offset: i64,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for EpochEndOffset {
    fn default() -> Self {
        EpochEndOffset {
            epoch: -1,
            end_offset: -1,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// The current leader of a partition (v12+, KIP-951).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderIdAndEpoch {
    /// The id of the current leader, or -1 if unknown. Default -1.
    pub leader_id: i32,
    /// The latest known leader epoch. Default -1.
    pub leader_epoch: i32,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for LeaderIdAndEpoch {
    fn default() -> Self {
        LeaderIdAndEpoch {
            leader_id: -1,
            leader_epoch: -1,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// The end offset and epoch of the snapshot to fetch (v12+, KIP-630).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotId {
    /// The end offset of the epoch. Default -1.
    pub end_offset: i64,
    /// The largest epoch. Default -1.
    pub epoch: i32,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for SnapshotId {
    fn default() -> Self {
        SnapshotId {
            end_offset: -1,
            epoch: -1,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

/// An aborted transaction: records of `producer_id` from `first_offset` on are to be dropped
/// by a read_committed reader up to the transaction's ABORT marker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AbortedTransaction {
    /// The producer id of the aborted transaction.
    pub producer_id: i64,
    /// The first offset in the aborted transaction.
    pub first_offset: i64,
    /// Tagged fields this crate doesn't know (v12+).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// The endpoint of a broker named as a partition's current leader (v16+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeEndpoint {
    /// The node id.
    pub node_id: i32,
    /// The node's host name.
    pub host: String,
    /// The node's port.
    pub port: i32,
    /// The node's rack, or null. Default null.
    pub rack: Option<String>,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Message for FetchResponse {
    const API_KEY: ApiKey = ApiKey::FETCH;
    const VERSIONS: VersionRange = VersionRange { min: 4, max: 18 };
    const FIRST_FLEXIBLE_VERSION: i16 = FIRST_FLEXIBLE;
    const NAME: &'static str = "FetchResponse";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        if version < 7 {
            require_default(self.session_id == 0, "FetchResponse.session_id", version)?;
        }
        if version < 16 {
            require_default(
                self.node_endpoints.is_empty(),
                "FetchResponse.node_endpoints",
                version,
            )?;
        }
        buf.put_i32(self.throttle_time_ms);
        if version >= 7 {
            buf.put_i16(self.error_code);
            buf.put_i32(self.session_id);
        }
        put_array(
            buf,
            &self.responses,
            flexible,
            "FetchResponse.responses",
            |b, t| t.encode(b, version),
        )?;
        if flexible {
            let mut tagged = Vec::new();
            if version >= 16 && !self.node_endpoints.is_empty() {
                push_tagged(&mut tagged, 0, |b| {
                    put_array(
                        b,
                        &self.node_endpoints,
                        true,
                        "FetchResponse.node_endpoints",
                        |b, n| n.encode(b),
                    )
                })?;
            }
            put_tagged_fields(buf, tagged, &self.unknown_tagged_fields, "FetchResponse")?;
        }
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut msg = FetchResponse {
            throttle_time_ms: get_i32(buf, "FetchResponse.throttle_time_ms")?,
            ..FetchResponse::default()
        };
        if version >= 7 {
            msg.error_code = get_i16(buf, "FetchResponse.error_code")?;
            msg.session_id = get_i32(buf, "FetchResponse.session_id")?;
        }
        msg.responses = get_array(
            buf,
            flexible,
            FetchableTopicResponse::min_size(version),
            "FetchResponse.responses",
            |b| FetchableTopicResponse::decode(b, version),
        )?;
        if flexible {
            msg.unknown_tagged_fields = get_tagged_fields(buf, "FetchResponse", |tag, data| {
                match tag {
                    0 if version >= 16 => {
                        msg.node_endpoints = get_array(
                            data,
                            true,
                            NodeEndpoint::MIN_SIZE,
                            "FetchResponse.node_endpoints",
                            NodeEndpoint::decode,
                        )?;
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(msg)
    }
}

impl FetchableTopicResponse {
    /// The smallest encoding of one topic at `version`.
    const fn min_size(version: i16) -> usize {
        let flexible = version >= FIRST_FLEXIBLE;
        let name = if version >= 13 {
            16
        } else {
            min_string(flexible)
        };
        name + min_array(flexible) + min_tags(flexible)
    }

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = version >= FIRST_FLEXIBLE;
        if version <= 12 {
            put_string(buf, &self.topic, flexible, "FetchResponse.responses.topic")?;
        } else {
            put_uuid(buf, &self.topic_id);
        }
        put_array(
            buf,
            &self.partitions,
            flexible,
            "FetchResponse.responses.partitions",
            |b, p| p.encode(b, version),
        )?;
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = version >= FIRST_FLEXIBLE;
        let mut topic = FetchableTopicResponse::default();
        if version <= 12 {
            topic.topic = get_string(buf, flexible, "FetchResponse.responses.topic")?;
        } else {
            topic.topic_id = get_uuid(buf, "FetchResponse.responses.topic_id")?;
        }
        topic.partitions = get_array(
            buf,
            flexible,
            PartitionData::min_size(version),
            "FetchResponse.responses.partitions",
            |b| PartitionData::decode(b, version),
        )?;
        topic.unknown_tagged_fields = get_tags_if(buf, flexible, "FetchResponse.responses")?;
        Ok(topic)
    }
}

impl PartitionData {
    /// The smallest encoding of one partition at `version`.
    const fn min_size(version: i16) -> usize {
        let flexible = version >= FIRST_FLEXIBLE;
        // partition_index, error_code, high_watermark, last_stable_offset
        let mut size = 4 + 2 + 8 + 8;
        if version >= 5 {
            size += 8; // log_start_offset
        }
        if version >= 11 {
            size += 4; // preferred_read_replica
        }
        // aborted_transactions and records length prefixes
        size + 2 * min_array(flexible) + min_tags(flexible)
    }

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        let flexible = version >= FIRST_FLEXIBLE;
        if version < 11 {
            require_default(
                self.preferred_read_replica == -1,
                "FetchResponse.responses.partitions.preferred_read_replica",
                version,
            )?;
        }
        if version < 12 {
            require_default(
                self.diverging_epoch == EpochEndOffset::default(),
                "FetchResponse.responses.partitions.diverging_epoch",
                version,
            )?;
            require_default(
                self.current_leader == LeaderIdAndEpoch::default(),
                "FetchResponse.responses.partitions.current_leader",
                version,
            )?;
            require_default(
                self.snapshot_id == SnapshotId::default(),
                "FetchResponse.responses.partitions.snapshot_id",
                version,
            )?;
        }
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        buf.put_i64(self.high_watermark);
        buf.put_i64(self.last_stable_offset);
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        }
        put_nullable_array(
            buf,
            self.aborted_transactions.as_deref(),
            flexible,
            "FetchResponse.responses.partitions.aborted_transactions",
            |b, t| {
                t.encode(b, flexible);
                Ok(())
            },
        )?;
        if version >= 11 {
            buf.put_i32(self.preferred_read_replica);
        }
        // Straight from the `Bytes` into the output: one copy, no intermediate buffer.
        put_nullable_bytes(
            buf,
            self.records.as_deref(),
            flexible,
            "FetchResponse.responses.partitions.records",
        )?;
        if flexible {
            let mut tagged = Vec::new();
            if self.diverging_epoch != EpochEndOffset::default() {
                push_tagged(&mut tagged, 0, |b| {
                    self.diverging_epoch.encode(b);
                    Ok(())
                })?;
            }
            if self.current_leader != LeaderIdAndEpoch::default() {
                push_tagged(&mut tagged, 1, |b| {
                    self.current_leader.encode(b);
                    Ok(())
                })?;
            }
            if self.snapshot_id != SnapshotId::default() {
                push_tagged(&mut tagged, 2, |b| {
                    self.snapshot_id.encode(b);
                    Ok(())
                })?;
            }
            put_tagged_fields(
                buf,
                tagged,
                &self.unknown_tagged_fields,
                "FetchResponse.responses.partitions",
            )?;
        }
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        let flexible = version >= FIRST_FLEXIBLE;
        let mut p = PartitionData {
            partition_index: get_i32(buf, "FetchResponse.responses.partitions.partition_index")?,
            error_code: get_i16(buf, "FetchResponse.responses.partitions.error_code")?,
            high_watermark: get_i64(buf, "FetchResponse.responses.partitions.high_watermark")?,
            last_stable_offset: get_i64(
                buf,
                "FetchResponse.responses.partitions.last_stable_offset",
            )?,
            ..PartitionData::default()
        };
        if version >= 5 {
            p.log_start_offset =
                get_i64(buf, "FetchResponse.responses.partitions.log_start_offset")?;
        }
        p.aborted_transactions = get_nullable_array(
            buf,
            flexible,
            AbortedTransaction::min_size(flexible),
            "FetchResponse.responses.partitions.aborted_transactions",
            |b| AbortedTransaction::decode(b, flexible),
        )?;
        if version >= 11 {
            p.preferred_read_replica = get_i32(
                buf,
                "FetchResponse.responses.partitions.preferred_read_replica",
            )?;
        }
        // Zero-copy: `split_to` on the input, sharing its allocation.
        p.records =
            get_nullable_bytes(buf, flexible, "FetchResponse.responses.partitions.records")?;
        if flexible {
            p.unknown_tagged_fields =
                get_tagged_fields(buf, "FetchResponse.responses.partitions", |tag, data| {
                    match tag {
                        0 => p.diverging_epoch = EpochEndOffset::decode(data)?,
                        1 => p.current_leader = LeaderIdAndEpoch::decode(data)?,
                        2 => p.snapshot_id = SnapshotId::decode(data)?,
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
        }
        Ok(p)
    }
}

impl EpochEndOffset {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_i32(self.epoch);
        buf.put_i64(self.end_offset);
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        const WHAT: &str = "FetchResponse.responses.partitions.diverging_epoch";
        Ok(EpochEndOffset {
            epoch: get_i32(buf, WHAT)?,
            end_offset: get_i64(buf, WHAT)?,
            unknown_tagged_fields: get_unknown_tagged_fields(buf, WHAT)?,
        })
    }
}

impl LeaderIdAndEpoch {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_i32(self.leader_id);
        buf.put_i32(self.leader_epoch);
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        const WHAT: &str = "FetchResponse.responses.partitions.current_leader";
        Ok(LeaderIdAndEpoch {
            leader_id: get_i32(buf, WHAT)?,
            leader_epoch: get_i32(buf, WHAT)?,
            unknown_tagged_fields: get_unknown_tagged_fields(buf, WHAT)?,
        })
    }
}

impl SnapshotId {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_i64(self.end_offset);
        buf.put_i32(self.epoch);
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        const WHAT: &str = "FetchResponse.responses.partitions.snapshot_id";
        Ok(SnapshotId {
            end_offset: get_i64(buf, WHAT)?,
            epoch: get_i32(buf, WHAT)?,
            unknown_tagged_fields: get_unknown_tagged_fields(buf, WHAT)?,
        })
    }
}

impl AbortedTransaction {
    /// The smallest encoding of one aborted transaction.
    const fn min_size(flexible: bool) -> usize {
        8 + 8 + min_tags(flexible)
    }

    fn encode(&self, buf: &mut BytesMut, flexible: bool) {
        buf.put_i64(self.producer_id);
        buf.put_i64(self.first_offset);
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
    }

    fn decode(buf: &mut Bytes, flexible: bool) -> Result<Self> {
        let mut t = AbortedTransaction {
            producer_id: get_i64(
                buf,
                "FetchResponse.responses.partitions.aborted_transactions.producer_id",
            )?,
            first_offset: get_i64(
                buf,
                "FetchResponse.responses.partitions.aborted_transactions.first_offset",
            )?,
            ..AbortedTransaction::default()
        };
        if flexible {
            t.unknown_tagged_fields = get_unknown_tagged_fields(
                buf,
                "FetchResponse.responses.partitions.aborted_transactions",
            )?;
        }
        Ok(t)
    }
}

impl NodeEndpoint {
    /// The smallest encoding of one endpoint: node_id, empty host, port, null rack, tags.
    const MIN_SIZE: usize = 4 + 1 + 4 + 1 + 1;

    /// Encodes the endpoint (it only exists in flexible versions).
    fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        buf.put_i32(self.node_id);
        put_string(buf, &self.host, true, "FetchResponse.node_endpoints.host")?;
        buf.put_i32(self.port);
        put_nullable_string(
            buf,
            self.rack.as_deref(),
            true,
            "FetchResponse.node_endpoints.rack",
        )?;
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        Ok(NodeEndpoint {
            node_id: get_i32(buf, "FetchResponse.node_endpoints.node_id")?,
            host: get_string(buf, true, "FetchResponse.node_endpoints.host")?,
            port: get_i32(buf, "FetchResponse.node_endpoints.port")?,
            rack: get_nullable_string(buf, true, "FetchResponse.node_endpoints.rack")?,
            unknown_tagged_fields: get_unknown_tagged_fields(buf, "FetchResponse.node_endpoints")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::error::Error;
    use proptest::test_runner::Config;

    use super::*;
    use crate::messages::decode_exact;
    use crate::messages::testing::{
        arb_unknown_tags_in, arb_uuid, assert_prefixes_fail, encode, round_trip_every_version_with,
    };
    use crate::primitives::RawTaggedField;

    const ALL_VERSIONS: core::ops::RangeInclusive<i16> = 4..=18;

    // ---- helpers ----------------------------------------------------------------------------

    /// Runs `strategy(version)` through `check_round_trip` at every version, 64 cases each
    /// (Fetch messages are large).
    fn round_trip_every_version<M, S>(strategy: impl Fn(i16) -> S)
    where
        M: Message + PartialEq + core::fmt::Debug,
        S: Strategy<Value = M>,
    {
        let config = Config {
            cases: 64,
            failure_persistence: None,
            ..Config::default()
        };
        round_trip_every_version_with(config, ALL_VERSIONS, strategy);
    }

    fn name() -> impl Strategy<Value = String> {
        "\\PC{0,8}"
    }

    // ---- request strategies -----------------------------------------------------------------

    fn replica_state(v: i16) -> BoxedStrategy<ReplicaState> {
        if v < 15 {
            return Just(ReplicaState::default()).boxed();
        }
        prop_oneof![
            Just(ReplicaState::default()),
            (any::<i32>(), any::<i64>(), arb_unknown_tags_in(true, 0..40)).prop_map(
                |(id, epoch, u)| {
                    ReplicaState {
                        replica_id: id,
                        replica_epoch: epoch,
                        unknown_tagged_fields: u,
                    }
                }
            ),
        ]
        .boxed()
    }

    fn fetch_partition(v: i16) -> impl Strategy<Value = FetchPartition> {
        (
            (any::<i32>(), any::<i32>(), any::<i64>(), any::<i32>()),
            (any::<i64>(), any::<i32>()),
            (
                prop::option::of(arb_uuid()),
                prop::option::of(any::<i64>()),
                arb_unknown_tags_in(v >= 12, 2..42),
            ),
        )
            .prop_map(
                move |((partition, cle, fo, lfe), (lso, pmb), (dir, hw, u))| FetchPartition {
                    partition,
                    current_leader_epoch: if v >= 9 { cle } else { -1 },
                    fetch_offset: fo,
                    last_fetched_epoch: if v >= 12 { lfe } else { -1 },
                    log_start_offset: if v >= 5 { lso } else { -1 },
                    partition_max_bytes: pmb,
                    replica_directory_id: dir.filter(|_| v >= 17).unwrap_or(Uuid::ZERO),
                    high_watermark: hw.filter(|_| v >= 18).unwrap_or(i64::MAX),
                    unknown_tagged_fields: u,
                },
            )
    }

    fn fetch_topic(v: i16) -> impl Strategy<Value = FetchTopic> {
        (
            name(),
            arb_uuid(),
            prop::collection::vec(fetch_partition(v), 0..3),
            arb_unknown_tags_in(v >= 12, 0..40),
        )
            .prop_map(move |(topic, id, partitions, u)| FetchTopic {
                topic: if v <= 12 { topic } else { String::new() },
                topic_id: if v >= 13 { id } else { Uuid::ZERO },
                partitions,
                unknown_tagged_fields: u,
            })
    }

    fn forgotten_topic(v: i16) -> impl Strategy<Value = ForgottenTopic> {
        (
            name(),
            arb_uuid(),
            prop::collection::vec(any::<i32>(), 0..4),
            arb_unknown_tags_in(v >= 12, 0..40),
        )
            .prop_map(move |(topic, id, partitions, u)| ForgottenTopic {
                topic: if v <= 12 { topic } else { String::new() },
                topic_id: if v >= 13 { id } else { Uuid::ZERO },
                partitions,
                unknown_tagged_fields: u,
            })
    }

    fn fetch_request(v: i16) -> impl Strategy<Value = FetchRequest> {
        (
            (
                prop::option::of(name()),
                any::<i32>(),
                replica_state(v),
                any::<i32>(),
                any::<i32>(),
                any::<i32>(),
                any::<i8>(),
            ),
            (
                any::<i32>(),
                any::<i32>(),
                name(),
                arb_unknown_tags_in(v >= 12, 2..42),
            ),
            (
                prop::collection::vec(fetch_topic(v), 0..3),
                prop::collection::vec(forgotten_topic(v), 0..3),
            ),
        )
            .prop_map(
                move |(
                    (cluster_id, replica_id, replica_state, max_wait_ms, min_bytes, max_bytes, iso),
                    (session_id, session_epoch, rack_id, u),
                    (topics, forgotten),
                )| FetchRequest {
                    cluster_id: cluster_id.filter(|_| v >= 12),
                    replica_id: if v <= 14 { replica_id } else { -1 },
                    replica_state,
                    max_wait_ms,
                    min_bytes,
                    max_bytes,
                    isolation_level: IsolationLevel(iso),
                    session_id: if v >= 7 { session_id } else { 0 },
                    session_epoch: if v >= 7 { session_epoch } else { -1 },
                    topics,
                    forgotten_topics_data: if v >= 7 { forgotten } else { Vec::new() },
                    rack_id: if v >= 11 { rack_id } else { String::new() },
                    unknown_tagged_fields: u,
                },
            )
    }

    // ---- request tests ----------------------------------------------------------------------

    #[test]
    fn request_round_trips_at_every_version() {
        round_trip_every_version(fetch_request);
    }

    /// v11 (classic), written out by hand from `FetchRequest.json`.
    const REQUEST_V11: &[u8] = &[
        0xff, 0xff, 0xff, 0xff, // replica_id -1
        0x00, 0x00, 0x01, 0xf4, // max_wait_ms 500
        0x00, 0x00, 0x00, 0x01, // min_bytes 1
        0x03, 0x20, 0x00, 0x00, // max_bytes 50 MiB
        0x01, // isolation_level read_committed
        0x00, 0x00, 0x00, 0x00, // session_id 0
        0xff, 0xff, 0xff, 0xff, // session_epoch -1
        0x00, 0x00, 0x00, 0x01, // topics: 1
        0x00, 0x02, b't', b'1', //   topic "t1"
        0x00, 0x00, 0x00, 0x01, //   partitions: 1
        0x00, 0x00, 0x00, 0x02, //     partition 2
        0x00, 0x00, 0x00, 0x05, //     current_leader_epoch 5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // fetch_offset 100
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
        0x00, 0x10, 0x00, 0x00, //     partition_max_bytes 1 MiB
        0x00, 0x00, 0x00, 0x01, // forgotten_topics_data: 1
        0x00, 0x02, b't', b'2', //   topic "t2"
        0x00, 0x00, 0x00, 0x02, //   partitions: 2
        0x00, 0x00, 0x00, 0x00, //     0
        0x00, 0x00, 0x00, 0x03, //     3
        0x00, 0x03, b'r', b'1', b'a', // rack_id "r1a"
    ];

    fn request_v11() -> FetchRequest {
        FetchRequest {
            max_wait_ms: 500,
            min_bytes: 1,
            max_bytes: 50 << 20,
            isolation_level: IsolationLevel::READ_COMMITTED,
            topics: vec![FetchTopic {
                topic: "t1".into(),
                partitions: vec![FetchPartition {
                    partition: 2,
                    current_leader_epoch: 5,
                    fetch_offset: 100,
                    partition_max_bytes: 1 << 20,
                    ..FetchPartition::default()
                }],
                ..FetchTopic::default()
            }],
            forgotten_topics_data: vec![ForgottenTopic {
                topic: "t2".into(),
                partitions: vec![0, 3],
                ..ForgottenTopic::default()
            }],
            rack_id: "r1a".into(),
            ..FetchRequest::default()
        }
    }

    const TOPIC_ID: [u8; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

    /// v17 (flexible, topic ids, replica state, directory id, cluster id), by hand.
    const REQUEST_V17: &[u8] = &[
        // no replica_id from v15
        0x00, 0x00, 0x01, 0xf4, // max_wait_ms 500
        0x00, 0x00, 0x00, 0x01, // min_bytes 1
        0x7f, 0xff, 0xff, 0xff, // max_bytes
        0x00, // isolation_level
        0x00, 0x00, 0x00, 0x07, // session_id 7
        0x00, 0x00, 0x00, 0x02, // session_epoch 2
        0x02, // topics: compact 1
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,   // topic_id
        0x02, //   partitions: compact 1
        0x00, 0x00, 0x00, 0x00, //     partition 0
        0xff, 0xff, 0xff, 0xff, //     current_leader_epoch -1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, // fetch_offset 42
        0x00, 0x00, 0x00, 0x04, //     last_fetched_epoch 4
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
        0x00, 0x10, 0x00, 0x00, //     partition_max_bytes 1 MiB
        0x01, 0x00, 0x10, //     tagged: 1 field, tag 0 (replica_directory_id), 16 bytes
        0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
        0xaa, //
        0x00, //   topic tagged: none
        0x01, // forgotten_topics_data: compact 0
        0x01, // rack_id ""
        0x02, // tagged: 2 fields
        0x00, 0x04, 0x04, b'a', b'b', b'c', // tag 0 cluster_id "abc"
        0x01, 0x0d, // tag 1 replica_state, 13 bytes
        0x00, 0x00, 0x00, 0x03, //   replica_id 3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // replica_epoch 9
        0x00, //   tagged: none
    ];

    fn request_v17() -> FetchRequest {
        FetchRequest {
            cluster_id: Some("abc".into()),
            replica_state: ReplicaState {
                replica_id: 3,
                replica_epoch: 9,
                ..ReplicaState::default()
            },
            max_wait_ms: 500,
            min_bytes: 1,
            session_id: 7,
            session_epoch: 2,
            topics: vec![FetchTopic {
                topic_id: Uuid(TOPIC_ID),
                partitions: vec![FetchPartition {
                    fetch_offset: 42,
                    last_fetched_epoch: 4,
                    partition_max_bytes: 1 << 20,
                    replica_directory_id: Uuid([0xaa; 16]),
                    ..FetchPartition::default()
                }],
                ..FetchTopic::default()
            }],
            ..FetchRequest::default()
        }
    }

    #[test]
    fn request_hand_written_bytes() {
        for (bytes, value, version) in [
            (REQUEST_V11, request_v11(), 11),
            (REQUEST_V17, request_v17(), 17),
        ] {
            let decoded: FetchRequest = decode_exact(Bytes::from_static(bytes), version).unwrap();
            assert_eq!(decoded, value, "v{version}");
            assert_eq!(&encode(&value, version)[..], bytes, "v{version}");
        }
    }

    #[test]
    fn request_v18_high_watermark_by_hand() {
        #[rustfmt::skip]
        let frame: &[u8] = &[
            0, 0, 0, 0, // max_wait_ms 0
            0, 0, 0, 0, // min_bytes 0
            0x7f, 0xff, 0xff, 0xff, // max_bytes
            0x00, // isolation_level
            0, 0, 0, 0, // session_id 0
            0xff, 0xff, 0xff, 0xff, // session_epoch -1
            0x02, // topics: 1
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            0x02, // partitions: 1
            0, 0, 0, 1, // partition 1
            0xff, 0xff, 0xff, 0xff, // current_leader_epoch -1
            0, 0, 0, 0, 0, 0, 0, 0x10, // fetch_offset 16
            0xff, 0xff, 0xff, 0xff, // last_fetched_epoch -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
            0, 0, 0x10, 0, // partition_max_bytes 4096
            0x01, 0x01, 0x08, // tagged: tag 1 (high_watermark), 8 bytes
            0, 0, 0, 0, 0, 0, 0, 0x20, // high_watermark 32
            0x00, // topic tagged
            0x01, // forgotten_topics_data: 0
            0x01, // rack_id ""
            0x00, // tagged
        ];
        let value = FetchRequest {
            topics: vec![FetchTopic {
                topic_id: Uuid(TOPIC_ID),
                partitions: vec![FetchPartition {
                    partition: 1,
                    fetch_offset: 16,
                    partition_max_bytes: 4096,
                    high_watermark: 32,
                    ..FetchPartition::default()
                }],
                ..FetchTopic::default()
            }],
            ..FetchRequest::default()
        };
        let decoded: FetchRequest = decode_exact(Bytes::from_static(frame), 18).unwrap();
        assert_eq!(decoded, value);
        assert_eq!(&encode(&value, 18)[..], frame);
        assert_prefixes_fail::<FetchRequest>(frame, 18);
        // At v17 the same tag is unknown and kept raw; the ignorable field is dropped on encode.
        let at17: FetchRequest = decode_exact(Bytes::from_static(frame), 17).unwrap();
        let p = &at17.topics[0].partitions[0];
        assert_eq!(p.high_watermark, i64::MAX);
        assert_eq!(p.unknown_tagged_fields.0[0].tag, 1);
        assert_eq!(&encode(&at17, 17)[..], frame);
    }

    #[test]
    fn request_prefixes_and_trailing_bytes_fail() {
        assert_prefixes_fail::<FetchRequest>(REQUEST_V11, 11);
        assert_prefixes_fail::<FetchRequest>(REQUEST_V17, 17);
        for version in ALL_VERSIONS {
            let bytes = encode(&request_v17_at(version), version);
            assert_prefixes_fail::<FetchRequest>(&bytes, version);
        }
    }

    /// [`request_v17`] with what `version` lacks put back to defaults.
    fn request_v17_at(version: i16) -> FetchRequest {
        let mut r = request_v17();
        if version < 15 {
            r.replica_state = ReplicaState::default();
        }
        if version < 7 {
            r.forgotten_topics_data.clear();
        }
        if version < 12 {
            r.topics[0].partitions[0].last_fetched_epoch = -1;
        }
        r
    }

    #[test]
    fn request_length_bombs_fail_at_once() {
        // v4: replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level, then topics.
        let head = [0u8; 17];
        for bomb in [&[0x7f, 0xff, 0xff, 0xff][..], &[0xff; 4][..]] {
            let mut b = head.to_vec();
            b.extend_from_slice(bomb);
            b.extend_from_slice(&[0; 6]);
            assert!(FetchRequest::decode(&mut Bytes::from(b), 4).is_err());
        }
        // v4 topic name with a 32 KiB length, then a partitions count of 2^31-1.
        let mut b = head.to_vec();
        b.extend_from_slice(&[0, 0, 0, 1, 0x7f, 0xff, 0, 0]);
        assert!(FetchRequest::decode(&mut Bytes::from(b), 4).is_err());
        let mut b = head.to_vec();
        b.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]);
        assert!(FetchRequest::decode(&mut Bytes::from(b), 4).is_err());
        // v17 (no replica_id): compact topics count 0xffffffff.
        let mut b = [0u8; 21].to_vec();
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0]);
        assert!(matches!(
            FetchRequest::decode(&mut Bytes::from(b), 17),
            Err(Error::InvalidLength { .. })
        ));
        // v17 compact topics count 2^31-1.
        let mut b = [0u8; 21].to_vec();
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0]);
        assert!(matches!(
            FetchRequest::decode(&mut Bytes::from(b), 17),
            Err(Error::InvalidLength { .. })
        ));
    }

    #[test]
    fn request_non_ignorable_fields_refused_where_absent() {
        let mut buf = BytesMut::new();
        let r = FetchRequest {
            replica_id: 1,
            ..FetchRequest::default()
        };
        assert!(matches!(
            r.encode(&mut buf, 15),
            Err(Error::FieldNotInVersion { version: 15, .. })
        ));
        r.encode(&mut buf, 14).unwrap();

        let r = FetchRequest {
            replica_state: ReplicaState {
                replica_id: 1,
                ..ReplicaState::default()
            },
            ..FetchRequest::default()
        };
        assert!(r.encode(&mut buf, 14).is_err());
        r.encode(&mut buf, 15).unwrap();

        let r = FetchRequest {
            forgotten_topics_data: vec![ForgottenTopic::default()],
            ..FetchRequest::default()
        };
        assert!(r.encode(&mut buf, 6).is_err());
        r.encode(&mut buf, 7).unwrap();

        let r = FetchRequest {
            topics: vec![FetchTopic {
                partitions: vec![FetchPartition {
                    last_fetched_epoch: 3,
                    ..FetchPartition::default()
                }],
                ..FetchTopic::default()
            }],
            ..FetchRequest::default()
        };
        assert!(matches!(
            r.encode(&mut buf, 11),
            Err(Error::FieldNotInVersion { version: 11, .. })
        ));
        r.encode(&mut buf, 12).unwrap();

        // Ignorable fields are dropped silently instead.
        let r = FetchRequest {
            cluster_id: Some("c".into()),
            session_id: 5,
            rack_id: "r".into(),
            ..FetchRequest::default()
        };
        let decoded: FetchRequest = decode_exact(encode(&r, 4), 4).unwrap();
        assert_eq!(decoded, FetchRequest::default());
    }

    #[test]
    fn request_unknown_tagged_fields_survive() {
        // v12 request carrying tag 1 (replica_state, only known from v15) and tag 9.
        let mut r = request_v17_at(12);
        r.topics[0].topic = "t".into();
        r.topics[0].topic_id = Uuid::ZERO;
        r.topics[0].partitions[0].replica_directory_id = Uuid::ZERO;
        r.unknown_tagged_fields = UnknownTaggedFields(vec![
            RawTaggedField {
                tag: 1,
                data: Bytes::from_static(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9, 0]),
            },
            RawTaggedField {
                tag: 9,
                data: Bytes::from_static(b"x"),
            },
        ]);
        let bytes = encode(&r, 12);
        let decoded: FetchRequest = decode_exact(bytes.clone(), 12).unwrap();
        assert_eq!(decoded, r);
        assert_eq!(encode(&decoded, 12), bytes);
    }

    proptest! {
        #[test]
        fn request_decode_never_panics(data in prop::collection::vec(any::<u8>(), 0..128)) {
            for version in ALL_VERSIONS {
                let _ = FetchRequest::decode(&mut Bytes::from(data.clone()), version);
            }
        }
    }

    #[test]
    fn out_of_range_versions_refused() {
        let mut buf = BytesMut::new();
        for v in [3, 19] {
            assert!(matches!(
                FetchRequest::default().encode(&mut buf, v),
                Err(Error::UnsupportedVersion { .. })
            ));
            assert!(FetchRequest::decode(&mut Bytes::new(), v).is_err());
        }
    }

    // ---- response strategies ----------------------------------------------------------------

    fn epoch_end_offset() -> impl Strategy<Value = EpochEndOffset> {
        (any::<i32>(), any::<i64>(), arb_unknown_tags_in(true, 0..40)).prop_map(
            |(epoch, end_offset, u)| EpochEndOffset {
                epoch,
                end_offset,
                unknown_tagged_fields: u,
            },
        )
    }

    fn leader_id_and_epoch() -> impl Strategy<Value = LeaderIdAndEpoch> {
        (any::<i32>(), any::<i32>(), arb_unknown_tags_in(true, 0..40)).prop_map(
            |(leader_id, leader_epoch, u)| LeaderIdAndEpoch {
                leader_id,
                leader_epoch,
                unknown_tagged_fields: u,
            },
        )
    }

    fn snapshot_id() -> impl Strategy<Value = SnapshotId> {
        (any::<i64>(), any::<i32>(), arb_unknown_tags_in(true, 0..40)).prop_map(
            |(end_offset, epoch, u)| SnapshotId {
                end_offset,
                epoch,
                unknown_tagged_fields: u,
            },
        )
    }

    fn aborted_transaction(v: i16) -> impl Strategy<Value = AbortedTransaction> {
        (
            any::<i64>(),
            any::<i64>(),
            arb_unknown_tags_in(v >= 12, 0..40),
        )
            .prop_map(|(producer_id, first_offset, u)| AbortedTransaction {
                producer_id,
                first_offset,
                unknown_tagged_fields: u,
            })
    }

    fn node_endpoint() -> impl Strategy<Value = NodeEndpoint> {
        (
            any::<i32>(),
            name(),
            any::<i32>(),
            prop::option::of(name()),
            arb_unknown_tags_in(true, 0..40),
        )
            .prop_map(|(node_id, host, port, rack, u)| NodeEndpoint {
                node_id,
                host,
                port,
                rack,
                unknown_tagged_fields: u,
            })
    }

    fn partition_data(v: i16) -> impl Strategy<Value = PartitionData> {
        (
            (
                any::<i32>(),
                any::<i16>(),
                any::<i64>(),
                any::<i64>(),
                any::<i64>(),
                any::<i32>(),
            ),
            (
                prop::option::of(epoch_end_offset()),
                prop::option::of(leader_id_and_epoch()),
                prop::option::of(snapshot_id()),
            ),
            (
                prop::option::of(prop::collection::vec(aborted_transaction(v), 0..3)),
                prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
                arb_unknown_tags_in(v >= 12, 3..43),
            ),
        )
            .prop_map(
                move |(
                    (index, error_code, hw, lso, log_start, preferred),
                    (de, cl, snap),
                    (aborted, records, u),
                )| {
                    PartitionData {
                        partition_index: index,
                        error_code,
                        high_watermark: hw,
                        last_stable_offset: lso,
                        log_start_offset: if v >= 5 { log_start } else { -1 },
                        diverging_epoch: de.filter(|_| v >= 12).unwrap_or_default(),
                        current_leader: cl.filter(|_| v >= 12).unwrap_or_default(),
                        snapshot_id: snap.filter(|_| v >= 12).unwrap_or_default(),
                        aborted_transactions: aborted,
                        preferred_read_replica: if v >= 11 { preferred } else { -1 },
                        records: records.map(Bytes::from),
                        unknown_tagged_fields: u,
                    }
                },
            )
    }

    fn fetchable_topic_response(v: i16) -> impl Strategy<Value = FetchableTopicResponse> {
        (
            name(),
            arb_uuid(),
            prop::collection::vec(partition_data(v), 0..3),
            arb_unknown_tags_in(v >= 12, 0..40),
        )
            .prop_map(move |(topic, id, partitions, u)| FetchableTopicResponse {
                topic: if v <= 12 { topic } else { String::new() },
                topic_id: if v >= 13 { id } else { Uuid::ZERO },
                partitions,
                unknown_tagged_fields: u,
            })
    }

    fn fetch_response(v: i16) -> impl Strategy<Value = FetchResponse> {
        (
            any::<i32>(),
            any::<i16>(),
            any::<i32>(),
            prop::collection::vec(fetchable_topic_response(v), 0..3),
            prop::collection::vec(node_endpoint(), 0..3),
            arb_unknown_tags_in(v >= 12, 1..41),
        )
            .prop_map(
                move |(throttle, error_code, session_id, responses, nodes, u)| FetchResponse {
                    throttle_time_ms: throttle,
                    error_code: if v >= 7 { error_code } else { 0 },
                    session_id: if v >= 7 { session_id } else { 0 },
                    responses,
                    node_endpoints: if v >= 16 { nodes } else { Vec::new() },
                    unknown_tagged_fields: u,
                },
            )
    }

    // ---- response tests ---------------------------------------------------------------------

    #[test]
    fn response_round_trips_at_every_version() {
        round_trip_every_version(fetch_response);
    }

    /// v4 (classic), written out by hand from `FetchResponse.json`.
    const RESPONSE_V4: &[u8] = &[
        0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
        0x00, 0x00, 0x00, 0x01, // responses: 1
        0x00, 0x02, b't', b'1', //   topic "t1"
        0x00, 0x00, 0x00, 0x01, //   partitions: 1
        0x00, 0x00, 0x00, 0x00, //     partition_index 0
        0x00, 0x00, //     error_code 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, // high_watermark 10
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // last_stable_offset 9
        // no log_start_offset before v5
        0x00, 0x00, 0x00, 0x01, //     aborted_transactions: 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, // producer_id 8
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, // first_offset 3
        // no preferred_read_replica before v11
        0x00, 0x00, 0x00, 0x03, b'a', b'b', b'c', //     records: 3 bytes
    ];

    fn response_v4() -> FetchResponse {
        FetchResponse {
            responses: vec![FetchableTopicResponse {
                topic: "t1".into(),
                partitions: vec![PartitionData {
                    high_watermark: 10,
                    last_stable_offset: 9,
                    aborted_transactions: Some(vec![AbortedTransaction {
                        producer_id: 8,
                        first_offset: 3,
                        ..AbortedTransaction::default()
                    }]),
                    records: Some(Bytes::from_static(b"abc")),
                    ..PartitionData::default()
                }],
                ..FetchableTopicResponse::default()
            }],
            ..FetchResponse::default()
        }
    }

    /// v16 (flexible, topic ids, current leader, node endpoints), by hand.
    const RESPONSE_V16: &[u8] = &[
        0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
        0x00, 0x06, // error_code 6 (NOT_LEADER_OR_FOLLOWER)
        0x00, 0x00, 0x00, 0x09, // session_id 9
        0x02, // responses: compact 1
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,   // topic_id
        0x02, //   partitions: compact 1
        0x00, 0x00, 0x00, 0x01, //     partition_index 1
        0x00, 0x06, //     error_code 6
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // high_watermark 100
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // last_stable_offset 100
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // log_start_offset 0
        0x00, //     aborted_transactions: null
        0xff, 0xff, 0xff, 0xff, //     preferred_read_replica -1
        0x03, 0xde, 0xad, //     records: compact 2 bytes
        0x03, //     tagged: 3 fields
        0x00, 0x0d, //     tag 0 (diverging_epoch), 13 bytes
        0x00, 0x00, 0x00, 0x04, //       epoch 4
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, // end_offset 80
        0x00, //       tagged: none
        0x01, 0x09, //     tag 1 (current_leader), 9 bytes
        0x00, 0x00, 0x00, 0x02, //       leader_id 2
        0x00, 0x00, 0x00, 0x05, //       leader_epoch 5
        0x00, //       tagged: none
        0x02, 0x0d, //     tag 2 (snapshot_id), 13 bytes
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, // end_offset 60
        0x00, 0x00, 0x00, 0x03, //       epoch 3
        0x00, //       tagged: none
        0x00, //   topic tagged: none
        0x01, 0x00, 0x0d, // tagged: 1 field, tag 0 (node_endpoints), 13 bytes
        0x02, //   compact 1
        0x00, 0x00, 0x00, 0x02, //   node_id 2
        0x02, b'h', //   host "h"
        0x00, 0x00, 0x23, 0x84, //   port 9092
        0x00, //   rack null
        0x00, //   tagged: none
    ];

    fn response_v16() -> FetchResponse {
        FetchResponse {
            error_code: 6,
            session_id: 9,
            responses: vec![FetchableTopicResponse {
                topic_id: Uuid(TOPIC_ID),
                partitions: vec![PartitionData {
                    partition_index: 1,
                    error_code: 6,
                    high_watermark: 100,
                    last_stable_offset: 100,
                    log_start_offset: 0,
                    diverging_epoch: EpochEndOffset {
                        epoch: 4,
                        end_offset: 80,
                        ..EpochEndOffset::default()
                    },
                    current_leader: LeaderIdAndEpoch {
                        leader_id: 2,
                        leader_epoch: 5,
                        ..LeaderIdAndEpoch::default()
                    },
                    snapshot_id: SnapshotId {
                        end_offset: 60,
                        epoch: 3,
                        ..SnapshotId::default()
                    },
                    aborted_transactions: None,
                    records: Some(Bytes::from_static(&[0xde, 0xad])),
                    ..PartitionData::default()
                }],
                ..FetchableTopicResponse::default()
            }],
            node_endpoints: vec![NodeEndpoint {
                node_id: 2,
                host: "h".into(),
                port: 9092,
                rack: None,
                ..NodeEndpoint::default()
            }],
            ..FetchResponse::default()
        }
    }

    #[test]
    fn response_hand_written_bytes() {
        for (bytes, value, version) in [
            (RESPONSE_V4, response_v4(), 4),
            (RESPONSE_V16, response_v16(), 16),
        ] {
            let decoded: FetchResponse = decode_exact(Bytes::from_static(bytes), version).unwrap();
            assert_eq!(decoded, value, "v{version}");
            assert_eq!(&encode(&value, version)[..], bytes, "v{version}");
        }
    }

    /// [`response_v16`] with what `version` lacks put back to defaults.
    fn response_v16_at(version: i16) -> FetchResponse {
        let mut r = response_v16();
        if version < 16 {
            r.node_endpoints.clear();
        }
        if version < 12 {
            let p = &mut r.responses[0].partitions[0];
            p.diverging_epoch = EpochEndOffset::default();
            p.current_leader = LeaderIdAndEpoch::default();
            p.snapshot_id = SnapshotId::default();
        }
        if version < 7 {
            r.session_id = 0;
        }
        r
    }

    #[test]
    fn response_prefixes_and_trailing_bytes_fail() {
        assert_prefixes_fail::<FetchResponse>(RESPONSE_V4, 4);
        assert_prefixes_fail::<FetchResponse>(RESPONSE_V16, 16);
        for version in ALL_VERSIONS {
            let bytes = encode(&response_v16_at(version), version);
            assert_prefixes_fail::<FetchResponse>(&bytes, version);
        }
    }

    #[test]
    fn response_length_bombs_fail_at_once() {
        // v4: throttle_time_ms, then the responses count.
        for bomb in [[0x7f, 0xff, 0xff, 0xff], [0xff, 0xff, 0xff, 0xfe]] {
            let mut b = vec![0, 0, 0, 0];
            b.extend_from_slice(&bomb);
            b.extend_from_slice(&[0; 4]);
            assert!(FetchResponse::decode(&mut Bytes::from(b), 4).is_err());
        }
        // v16: throttle, error_code, session_id, then compact counts 0xffffffff and 2^31-1.
        for bomb in [
            [0xff, 0xff, 0xff, 0xff, 0x0f],
            [0xff, 0xff, 0xff, 0xff, 0x07],
        ] {
            let mut b = vec![0; 10];
            b.extend_from_slice(&bomb);
            b.extend_from_slice(&[0; 4]);
            assert!(FetchResponse::decode(&mut Bytes::from(b), 16).is_err());
        }
        // v4 records length of 2^31-1 in a partition: take the hand-written frame up to the
        // records length and put the bomb there.
        let cut = RESPONSE_V4.len() - 7;
        let mut b = RESPONSE_V4[..cut].to_vec();
        b.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]);
        assert!(matches!(
            FetchResponse::decode(&mut Bytes::from(b), 4),
            Err(Error::InvalidLength { .. })
        ));
        // v4 aborted_transactions count of 2^31-1.
        let cut = 4 + 4 + 4 + 4 + 4 + 2 + 8 + 8;
        let mut b = RESPONSE_V4[..cut].to_vec();
        b.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]);
        assert!(matches!(
            FetchResponse::decode(&mut Bytes::from(b), 4),
            Err(Error::InvalidLength { .. })
        ));
        // v4 topic name of length 0x7fff.
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0, 0];
        b.extend_from_slice(&[0; 4]);
        assert!(FetchResponse::decode(&mut Bytes::from(b), 4).is_err());
    }

    #[test]
    fn response_non_ignorable_fields_refused_where_absent() {
        let mut buf = BytesMut::new();
        let r = FetchResponse {
            session_id: 1,
            ..FetchResponse::default()
        };
        assert!(matches!(
            r.encode(&mut buf, 6),
            Err(Error::FieldNotInVersion { version: 6, .. })
        ));
        r.encode(&mut buf, 7).unwrap();

        let r = FetchResponse {
            node_endpoints: vec![NodeEndpoint::default()],
            ..FetchResponse::default()
        };
        assert!(r.encode(&mut buf, 15).is_err());
        r.encode(&mut buf, 16).unwrap();

        let with_partition = |p: PartitionData| FetchResponse {
            responses: vec![FetchableTopicResponse {
                partitions: vec![p],
                ..FetchableTopicResponse::default()
            }],
            ..FetchResponse::default()
        };
        let r = with_partition(PartitionData {
            preferred_read_replica: 2,
            ..PartitionData::default()
        });
        assert!(r.encode(&mut buf, 10).is_err());
        r.encode(&mut buf, 11).unwrap();
        for p in [
            PartitionData {
                diverging_epoch: EpochEndOffset {
                    epoch: 1,
                    ..EpochEndOffset::default()
                },
                ..PartitionData::default()
            },
            PartitionData {
                current_leader: LeaderIdAndEpoch {
                    leader_id: 1,
                    ..LeaderIdAndEpoch::default()
                },
                ..PartitionData::default()
            },
            PartitionData {
                snapshot_id: SnapshotId {
                    epoch: 1,
                    ..SnapshotId::default()
                },
                ..PartitionData::default()
            },
        ] {
            let r = with_partition(p);
            assert!(matches!(
                r.encode(&mut buf, 11),
                Err(Error::FieldNotInVersion { version: 11, .. })
            ));
            r.encode(&mut buf, 12).unwrap();
        }

        // Ignorable: error_code and log_start_offset are dropped in versions without them.
        let r = FetchResponse {
            error_code: 3,
            ..with_partition(PartitionData {
                log_start_offset: 5,
                ..PartitionData::default()
            })
        };
        let decoded: FetchResponse = decode_exact(encode(&r, 4), 4).unwrap();
        assert_eq!(decoded, with_partition(PartitionData::default()));
    }

    #[test]
    fn two_partitions_null_and_present_records() {
        // v12 by hand: one topic "t", partition 0 with null records, partition 1 with 5 bytes.
        #[rustfmt::skip]
        let frame: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, 0, 0, 0, // session_id
            0x02, // responses: 1
            0x02, b't', // topic "t"
            0x03, // partitions: 2
            // partition 0: nothing fetched
            0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 7, // high_watermark 7
            0, 0, 0, 0, 0, 0, 0, 7, // last_stable_offset 7
            0, 0, 0, 0, 0, 0, 0, 0, // log_start_offset 0
            0x01, // aborted_transactions: empty
            0xff, 0xff, 0xff, 0xff, // preferred_read_replica -1
            0x00, // records: null
            0x00, // tagged
            // partition 1: five bytes of records
            0, 0, 0, 1, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 9,
            0, 0, 0, 0, 0, 0, 0, 9,
            0, 0, 0, 0, 0, 0, 0, 0,
            0x01,
            0xff, 0xff, 0xff, 0xff,
            0x06, 1, 2, 3, 4, 5, // records: 5 bytes
            0x00,
            0x00, // topic tagged
            0x00, // response tagged
        ];
        let input = Bytes::copy_from_slice(frame);
        let resp: FetchResponse = decode_exact(input.clone(), 12).unwrap();
        let parts = &resp.responses[0].partitions;
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].records, None);
        assert_eq!(parts[0].high_watermark, 7);
        assert_eq!(parts[1].partition_index, 1);
        assert_eq!(parts[1].records.as_deref(), Some(&[1u8, 2, 3, 4, 5][..]));
        assert_eq!(parts[1].high_watermark, 9);
        assert_eq!(parts[1].aborted_transactions, Some(Vec::new()));
        assert_eq!(&encode(&resp, 12)[..], frame);
    }

    #[test]
    fn records_are_not_copied() {
        let input = encode(&response_v16(), 16);
        let in_range = input.as_ptr_range();
        let resp: FetchResponse = decode_exact(input.clone(), 16).unwrap();
        let records = resp.responses[0].partitions[0].records.clone().unwrap();
        let r = records.as_ptr_range();
        assert!(in_range.start <= r.start && r.end <= in_range.end);
        // And it is exactly the two record bytes in the frame, not a copy of equal content.
        let offset = r.start as usize - in_range.start as usize;
        assert_eq!(&input[offset..offset + 2], &[0xde, 0xad]);

        // Same for a large classic payload.
        let big = Bytes::from(vec![7u8; 1 << 16]);
        let mut value = response_v4();
        value.responses[0].partitions[0].records = Some(big);
        let input = encode(&value, 4);
        let resp: FetchResponse = decode_exact(input.clone(), 4).unwrap();
        let records = resp.responses[0].partitions[0].records.clone().unwrap();
        assert_eq!(records.len(), 1 << 16);
        let (a, r) = (input.as_ptr_range(), records.as_ptr_range());
        assert!(a.start <= r.start && r.end <= a.end);
    }

    #[test]
    fn response_unknown_tagged_fields_survive() {
        // v12: tag 0 at the top level is node_endpoints only from v16, so here it is unknown.
        let mut r = response_v16_at(12);
        r.responses[0].topic = "t".into();
        r.responses[0].topic_id = Uuid::ZERO;
        r.unknown_tagged_fields = UnknownTaggedFields(vec![RawTaggedField {
            tag: 0,
            data: Bytes::from_static(&[0x01]),
        }]);
        r.responses[0].partitions[0].unknown_tagged_fields =
            UnknownTaggedFields(vec![RawTaggedField {
                tag: 5,
                data: Bytes::from_static(b"zz"),
            }]);
        let bytes = encode(&r, 12);
        let decoded: FetchResponse = decode_exact(bytes.clone(), 12).unwrap();
        assert_eq!(decoded, r);
        assert_eq!(encode(&decoded, 12), bytes);
    }

    proptest! {
        #[test]
        fn response_decode_never_panics(data in prop::collection::vec(any::<u8>(), 0..160)) {
            for version in ALL_VERSIONS {
                let _ = FetchResponse::decode(&mut Bytes::from(data.clone()), version);
            }
        }

        #[test]
        fn response_decode_of_mutated_frames_never_panics(
            index in 0usize..RESPONSE_V16.len(),
            byte: u8,
        ) {
            let mut frame = RESPONSE_V16.to_vec();
            frame[index] = byte;
            for version in ALL_VERSIONS {
                let _ = FetchResponse::decode(&mut Bytes::from(frame.clone()), version);
            }
        }
    }
}

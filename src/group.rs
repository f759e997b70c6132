//! Consumer group offsets without group membership: reading and committing them.
//!
//! Requests go to the group's coordinator, found with FindCoordinator (the batched form on v4+,
//! the single-key form before) and cached; NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and
//! COORDINATOR_LOAD_IN_PROGRESS forget it and retry with backoff.
//!
//! Commits are what Kafka calls a simple (standalone) consumer's commits: generation -1, an
//! empty member id and no group instance id. The coordinator accepts them only while the
//! group has no active members; otherwise the error is [`ErrorKind::GroupHasActiveMembers`].
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_OffsetCommit>, `OffsetFetch`,
//! `FindCoordinator` (KIP-699), KIP-320 (committed leader epoch),
//! docs/reading-by-time.md "Commits".

use std::sync::Arc;

use kseek_protocol::messages::find_coordinator::{FindCoordinatorRequest, KEY_TYPE_GROUP};
use kseek_protocol::messages::offset_commit::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kseek_protocol::messages::offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kseek_protocol::{ApiKey, ErrorCode, Request, Uuid};

use crate::client::Client;
use crate::cluster::TopicMetadata;
use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::few::{self, find_from};

/// An offset to commit for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitOffset {
    /// The topic's name.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The next offset to read: the last processed offset + 1.
    pub offset: i64,
    /// The leader epoch of the last processed record, or -1 (sent on OffsetCommit v6+).
    pub leader_epoch: i32,
    /// Free-form metadata kept with the offset.
    pub metadata: Option<String>,
}

impl From<crate::read::PartitionPosition> for CommitOffset {
    /// What to commit once everything a read handed out is processed: its next offset and the
    /// leader epoch of its last record, without metadata.
    fn from(p: crate::read::PartitionPosition) -> Self {
        CommitOffset {
            topic: p.topic,
            partition: p.partition,
            offset: p.next_offset,
            leader_epoch: p.leader_epoch,
            metadata: None,
        }
    }
}

/// A group's committed offset for one partition, as OffsetFetch reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommittedOffset {
    /// The topic's name.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset (the next offset to read), or `None` when the group has none.
    pub offset: Option<i64>,
    /// The leader epoch committed with it, or -1 (OffsetFetch before v5, or none committed).
    pub leader_epoch: i32,
    /// The metadata committed with it; `None` when nothing is committed.
    pub metadata: Option<String>,
}

/// Error codes a coordinator answers a standalone commit with when the group has members.
/// Kafka 4.4 and 3.9 both answer UNKNOWN_MEMBER_ID for a classic group with a member
/// (tests/commit.rs); ILLEGAL_GENERATION (a known member id with another generation),
/// REBALANCE_IN_PROGRESS (a classic group mid-rebalance) and STALE_MEMBER_EPOCH /
/// FENCED_MEMBER_EPOCH (KIP-848 consumer groups) are the other ways a coordinator says so.
const ACTIVE_MEMBER_CODES: [ErrorCode; 5] = [
    ErrorCode::UNKNOWN_MEMBER_ID,
    ErrorCode::ILLEGAL_GENERATION,
    ErrorCode::REBALANCE_IN_PROGRESS,
    ErrorCode::STALE_MEMBER_EPOCH,
    ErrorCode::FENCED_MEMBER_EPOCH,
];

/// Codes after which the coordinator must be looked up again.
fn is_coordinator_error(code: ErrorCode) -> bool {
    code == ErrorCode::NOT_COORDINATOR
        || code == ErrorCode::COORDINATOR_NOT_AVAILABLE
        || code == ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
}

impl Client {
    /// The committed offsets of `group` for every partition of `topics`, ordered by topic (as
    /// given) and partition. Retriable errors (coordinator moving or loading, pending
    /// transactional commits) are retried until the retry deadline.
    ///
    /// ```no_run
    /// # async fn example(client: kseek::Client) -> kseek::Result<()> {
    /// for c in client.committed("my-group", &["events"]).await? {
    ///     println!("{}[{}] at {:?}", c.topic, c.partition, c.offset);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn committed(
        &self,
        group: &str,
        topics: &[impl AsRef<str>],
    ) -> Result<Vec<CommittedOffset>> {
        let topics: Vec<String> = topics.iter().map(|t| t.as_ref().to_owned()).collect();
        self.retry(
            &format!("fetching committed offsets of group {group:?} for topics {topics:?}"),
            || async {
                let metadata = self.metadata_once(&topics).await?;
                self.committed_once(group, &metadata).await
            },
        )
        .await
    }

    /// Commits `offsets` for `group` without joining it (generation -1, empty member id).
    ///
    /// # Errors
    /// [`ErrorKind::GroupHasActiveMembers`] while the group has members;
    /// [`ErrorKind::Partition`] naming the first partition the coordinator refused;
    /// [`ErrorKind::UnknownPartition`] for a partition the topic doesn't have.
    pub async fn commit(&self, group: &str, offsets: &[CommitOffset]) -> Result<()> {
        if offsets.is_empty() {
            return Ok(());
        }
        self.retry(&format!("committing offsets of group {group:?}"), || {
            self.commit_once(group, offsets)
        })
        .await
    }

    /// One OffsetFetch for every partition of `topics`.
    pub(crate) async fn committed_once(
        &self,
        group: &str,
        topics: &[TopicMetadata],
    ) -> Result<Vec<CommittedOffset>> {
        let conn = self.coordinator(group).await?;
        let version = api_version::<OffsetFetchRequest>(&conn)?;
        let request = offset_fetch_request(group, topics, version);
        let response = match conn.send_version(&request, version).await {
            Ok(r) => r,
            Err(e) => return Err(self.coordinator_failed(group, e)),
        };
        let broker = conn.broker();
        // (topic name, partition, offset, epoch, metadata, error code) from either layout.
        let mut rows = Vec::new();
        let mut group_code = ErrorCode(response.error_code);
        if version >= 8 {
            let Some(g) = response.groups.into_iter().find(|g| g.group_id == group) else {
                return Err(ErrorKind::Broker {
                    broker: broker.to_owned(),
                    api: ApiKey::OFFSET_FETCH,
                    code: ErrorCode::UNKNOWN_SERVER_ERROR,
                    message: Some(format!("the answer has no entry for group {group:?}")),
                }
                .into());
            };
            group_code = ErrorCode(g.error_code);
            for t in g.topics {
                let name = topic_name(topics, &t.name, t.topic_id);
                for p in t.partitions {
                    rows.push((
                        name.clone(),
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                        p.metadata,
                        ErrorCode(p.error_code),
                    ));
                }
            }
        } else {
            for t in response.topics {
                for p in t.partitions {
                    rows.push((
                        t.name.clone(),
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                        p.metadata,
                        ErrorCode(p.error_code),
                    ));
                }
            }
        }
        if !group_code.is_ok() {
            return Err(self.group_error(group, broker, ApiKey::OFFSET_FETCH, group_code));
        }
        let mut found = Vec::with_capacity(rows.len());
        for (topic, partition, offset, epoch, metadata, code) in rows {
            if !code.is_ok() {
                if is_coordinator_error(code) {
                    self.forget_coordinator(group);
                }
                return Err(ErrorKind::Partition {
                    broker: broker.to_owned(),
                    api: ApiKey::OFFSET_FETCH,
                    topic,
                    partition,
                    code,
                }
                .into());
            }
            found.push(Some(CommittedOffset {
                topic,
                partition,
                offset: (offset >= 0).then_some(offset),
                leader_epoch: if offset >= 0 { epoch } else { -1 },
                // The broker answers "" for a partition without a commit.
                metadata: if offset >= 0 { metadata } else { None },
            }));
        }
        Ok(in_order_asked(topics, found))
    }

    async fn commit_once(&self, group: &str, offsets: &[CommitOffset]) -> Result<()> {
        let mut names: Vec<String> = offsets.iter().map(|o| o.topic.clone()).collect();
        few::sort(&mut names);
        names.dedup();
        let metadata = self.metadata_once(&names).await?;
        for o in offsets {
            let t = metadata.iter().find(|t| t.name == o.topic);
            if let Some(t) = t.filter(|t| t.partition(o.partition).is_none()) {
                return Err(ErrorKind::UnknownPartition {
                    topic: o.topic.clone(),
                    partition: o.partition,
                    partitions: t.partitions.len(),
                }
                .into());
            }
        }
        let conn = self.coordinator(group).await?;
        let version = api_version::<OffsetCommitRequest>(&conn)?;
        let request = offset_commit_request(group, offsets, &metadata, version);
        let response = match conn.send_version(&request, version).await {
            Ok(r) => r,
            Err(e) => return Err(self.coordinator_failed(group, e)),
        };
        let mut acknowledged = Vec::new();
        for t in response.topics {
            let name = topic_name(&metadata, &t.name, t.topic_id);
            for p in t.partitions {
                let code = ErrorCode(p.error_code);
                if code.is_ok() {
                    acknowledged.push((name.clone(), p.partition_index));
                    continue;
                }
                return Err(self
                    .group_error(group, conn.broker(), ApiKey::OFFSET_COMMIT, code)
                    .with_partition(name, p.partition_index));
            }
        }
        // An offset the answer leaves out is not known to be committed: say so, rather than
        // report success for it.
        if let Some(o) = unacknowledged(offsets, &acknowledged) {
            return Err(ErrorKind::Broker {
                broker: conn.broker().to_owned(),
                api: ApiKey::OFFSET_COMMIT,
                code: ErrorCode::UNKNOWN_SERVER_ERROR,
                message: Some(format!(
                    "the answer has no entry for partition {} of topic {:?} (group {group:?}), so its offset is not known to be committed",
                    o.partition, o.topic
                )),
            }.into());
        }
        Ok(())
    }

    /// The connection to `group`'s coordinator: cached, else found with FindCoordinator.
    async fn coordinator(&self, group: &str) -> Result<Arc<Connection>> {
        if let Some(id) = self.cached_coordinator(group) {
            return self.connection(id).await;
        }
        let conn = self.any_connection(&[], None).await?;
        let version = api_version::<FindCoordinatorRequest>(&conn)?;
        let broker = conn.broker().to_owned();
        // One request and one send for every version: v4 asks by a list of keys, earlier
        // versions by one key.
        let mut request = FindCoordinatorRequest {
            key_type: KEY_TYPE_GROUP,
            ..FindCoordinatorRequest::default()
        };
        if version >= 4 {
            request.coordinator_keys = vec![group.to_owned()];
        } else {
            request.key = group.to_owned();
        }
        let r = conn.send_version(&request, version).await?;
        let (code, message, node_id, host, port) = if version >= 4 {
            let Some(c) = r.coordinators.into_iter().find(|c| c.key == group) else {
                return Err(ErrorKind::Broker {
                    broker,
                    api: ApiKey::FIND_COORDINATOR,
                    code: ErrorCode::UNKNOWN_SERVER_ERROR,
                    message: Some(format!("the answer has no entry for group {group:?}")),
                }
                .into());
            };
            (c.error_code, c.error_message, c.node_id, c.host, c.port)
        } else {
            (r.error_code, r.error_message, r.node_id, r.host, r.port)
        };
        let code = ErrorCode(code);
        if !code.is_ok() {
            return Err(ErrorKind::Broker {
                broker,
                api: ApiKey::FIND_COORDINATOR,
                code,
                message: Some(match message.filter(|m| !m.is_empty()) {
                    Some(m) => format!("for group {group:?}: {m}"),
                    None => format!("for group {group:?}"),
                }),
            }
            .into());
        }
        self.learn_broker(node_id, format!("{host}:{port}"));
        self.set_coordinator(group, node_id);
        self.connection(node_id).await
    }

    /// A failed request to the coordinator: forget it, so the next try looks it up again.
    fn coordinator_failed(&self, group: &str, error: Error) -> Error {
        if error.is_retriable() {
            self.forget_coordinator(group);
        }
        error
    }

    /// The error for a group-level `code`.
    fn group_error(&self, group: &str, broker: &str, api: ApiKey, code: ErrorCode) -> Error {
        if is_coordinator_error(code) {
            self.forget_coordinator(group);
        }
        if api == ApiKey::OFFSET_COMMIT && ACTIVE_MEMBER_CODES.contains(&code) {
            return ErrorKind::GroupHasActiveMembers {
                group: group.to_owned(),
                broker: broker.to_owned(),
                code,
            }
            .into();
        }
        ErrorKind::Broker {
            broker: broker.to_owned(),
            api,
            code,
            message: Some(format!("for group {group:?}")),
        }
        .into()
    }
}

impl Error {
    /// A broker error turned into the per-partition form; other errors unchanged.
    fn with_partition(self, topic: String, partition: i32) -> Error {
        match self.into_kind() {
            ErrorKind::Broker {
                broker, api, code, ..
            } => ErrorKind::Partition {
                broker,
                api,
                topic,
                partition,
                code,
            }
            .into(),
            other => other.into(),
        }
    }
}

/// The first of `offsets` whose (topic, partition) is not in `acknowledged`.
fn unacknowledged<'a>(
    offsets: &'a [CommitOffset],
    acknowledged: &[(String, i32)],
) -> Option<&'a CommitOffset> {
    offsets.iter().find(|o| {
        !acknowledged
            .iter()
            .any(|(topic, partition)| *topic == o.topic && *partition == o.partition)
    })
}

/// The version of `R` to use with `conn`'s broker.
fn api_version<R: Request>(conn: &Connection) -> Result<i16> {
    conn.versions().version_for::<R>().map_err(|source| {
        ErrorKind::Protocol {
            broker: conn.broker().to_owned(),
            source,
        }
        .into()
    })
}

/// A topic's name from a response: by id on v10 (where the name is empty), else as given.
fn topic_name(topics: &[TopicMetadata], name: &str, id: Uuid) -> String {
    if name.is_empty() && !id.is_zero() {
        if let Some(t) = topics.iter().find(|t| t.topic_id == id) {
            return t.name.clone();
        }
        return format!("<topic id {}>", id.to_base64());
    }
    name.to_owned()
}

/// OffsetFetch for every partition of `topics`: the multi-group form with one group on v8+,
/// the single-group form before; topic ids on v10+; require_stable on v7+.
fn offset_fetch_request(group: &str, topics: &[TopicMetadata], version: i16) -> OffsetFetchRequest {
    let partitions = |t: &TopicMetadata| t.partitions.iter().map(|p| p.partition).collect();
    if version >= 8 {
        OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: group.to_owned(),
                topics: Some(
                    topics
                        .iter()
                        .map(|t| OffsetFetchRequestTopics {
                            name: t.name.clone(),
                            topic_id: if version >= 10 {
                                t.topic_id
                            } else {
                                Uuid::ZERO
                            },
                            partition_indexes: partitions(t),
                            ..OffsetFetchRequestTopics::default()
                        })
                        .collect(),
                ),
                ..OffsetFetchRequestGroup::default()
            }],
            require_stable: true,
            ..OffsetFetchRequest::default()
        }
    } else {
        OffsetFetchRequest {
            group_id: group.to_owned(),
            topics: Some(
                topics
                    .iter()
                    .map(|t| OffsetFetchRequestTopic {
                        name: t.name.clone(),
                        partition_indexes: partitions(t),
                        ..OffsetFetchRequestTopic::default()
                    })
                    .collect(),
            ),
            require_stable: version >= 7,
            ..OffsetFetchRequest::default()
        }
    }
}

/// The commit of every partition of `topics`, in order, from the answer's `found`; one the
/// broker left out has no commit. The answer lists them in the order asked: a scan from after
/// the previous match takes one step each. (Inlined into its one caller: 500 B smaller in the
/// probe than a call.)
#[inline(always)]
fn in_order_asked(
    topics: &[TopicMetadata],
    mut found: Vec<Option<CommittedOffset>>,
) -> Vec<CommittedOffset> {
    let mut committed = Vec::with_capacity(found.len());
    let mut next = 0;
    for t in topics {
        for p in &t.partitions {
            let at = find_from(&found, next, |c| {
                c.as_ref()
                    .is_some_and(|c| c.partition == p.partition && c.topic == t.name)
            });
            let c = at.and_then(|at| {
                next = at + 1;
                found[at].take()
            });
            committed.push(c.unwrap_or(CommittedOffset {
                topic: t.name.clone(),
                partition: p.partition,
                offset: None,
                leader_epoch: -1,
                metadata: None,
            }));
        }
    }
    committed
}

/// OffsetCommit of `offsets` from outside the group: generation -1, empty member id, no
/// instance id; leader epochs on v6+, topic ids on v10+.
fn offset_commit_request(
    group: &str,
    offsets: &[CommitOffset],
    topics: &[TopicMetadata],
    version: i16,
) -> OffsetCommitRequest {
    // Offsets come grouped by topic as a rule: a scan from the previous topic finds its
    // entry in one step.
    let mut by_topic: Vec<OffsetCommitRequestTopic> = Vec::new();
    let mut last = 0;
    for o in offsets {
        let partition = OffsetCommitRequestPartition {
            partition_index: o.partition,
            committed_offset: o.offset,
            committed_leader_epoch: if version >= 6 { o.leader_epoch } else { -1 },
            committed_metadata: o.metadata.clone(),
            ..OffsetCommitRequestPartition::default()
        };
        last = match find_from(&by_topic, last, |t| t.name == o.topic) {
            Some(at) => at,
            None => {
                by_topic.push(OffsetCommitRequestTopic {
                    name: o.topic.clone(),
                    topic_id: if version >= 10 {
                        topics
                            .iter()
                            .find(|t| t.name == o.topic)
                            .map_or(Uuid::ZERO, |t| t.topic_id)
                    } else {
                        Uuid::ZERO
                    },
                    ..OffsetCommitRequestTopic::default()
                });
                by_topic.len() - 1
            }
        };
        by_topic[last].partitions.push(partition);
    }
    OffsetCommitRequest {
        group_id: group.to_owned(),
        generation_id_or_member_epoch: -1,
        member_id: String::new(),
        group_instance_id: None,
        retention_time_ms: -1,
        topics: by_topic,
        ..OffsetCommitRequest::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::PartitionMetadata;
    use bytes::BytesMut;
    use kseek_protocol::Message;

    fn topic(name: &str, id: u8, partitions: i32) -> TopicMetadata {
        TopicMetadata {
            name: name.to_owned(),
            topic_id: Uuid([id; 16]),
            partitions: (0..partitions)
                .map(|p| PartitionMetadata {
                    partition: p,
                    leader_id: 1,
                    leader_epoch: 0,
                    error_code: ErrorCode::NONE,
                })
                .collect(),
        }
    }

    #[test]
    fn offset_fetch_request_encodes_at_every_version() {
        let topics = [topic("a", 1, 2), topic("b", 2, 1)];
        for version in OffsetFetchRequest::VERSIONS.min..=OffsetFetchRequest::VERSIONS.max {
            let request = offset_fetch_request("g", &topics, version);
            let mut buf = BytesMut::new();
            request
                .encode(&mut buf, version)
                .unwrap_or_else(|e| panic!("v{version}: {e}"));
            let decoded = OffsetFetchRequest::decode(&mut buf.freeze(), version).unwrap();
            if version >= 8 {
                let g = &decoded.groups[0];
                assert_eq!(g.group_id, "g");
                let ts = g.topics.as_ref().unwrap();
                assert_eq!(ts[0].partition_indexes, vec![0, 1]);
                assert_eq!(
                    ts[1].topic_id,
                    if version >= 10 {
                        Uuid([2; 16])
                    } else {
                        Uuid::ZERO
                    }
                );
                assert!(decoded.require_stable);
            } else {
                assert_eq!(decoded.group_id, "g");
                assert_eq!(decoded.topics.as_ref().unwrap()[1].name, "b");
                assert_eq!(decoded.require_stable, version >= 7);
            }
        }
    }

    #[test]
    fn offset_commit_request_is_standalone_at_every_version() {
        let topics = [topic("a", 1, 2)];
        let offsets = [CommitOffset {
            topic: "a".into(),
            partition: 1,
            offset: 42,
            leader_epoch: 3,
            metadata: Some("m".into()),
        }];
        for version in OffsetCommitRequest::VERSIONS.min..=OffsetCommitRequest::VERSIONS.max {
            let request = offset_commit_request("g", &offsets, &topics, version);
            let mut buf = BytesMut::new();
            request
                .encode(&mut buf, version)
                .unwrap_or_else(|e| panic!("v{version}: {e}"));
            let decoded = OffsetCommitRequest::decode(&mut buf.freeze(), version).unwrap();
            assert_eq!(decoded.generation_id_or_member_epoch, -1);
            assert_eq!(decoded.member_id, "");
            assert_eq!(decoded.group_instance_id, None);
            let p = &decoded.topics[0].partitions[0];
            assert_eq!((p.partition_index, p.committed_offset), (1, 42));
            assert_eq!(p.committed_leader_epoch, if version >= 6 { 3 } else { -1 });
            assert_eq!(p.committed_metadata.as_deref(), Some("m"));
            if version >= 10 {
                assert_eq!(decoded.topics[0].topic_id, Uuid([1; 16]));
            } else {
                assert_eq!(decoded.topics[0].name, "a");
            }
        }
    }

    #[test]
    fn offset_commit_requests_group_offsets_by_topic_in_order_of_appearance() {
        let offset = |topic: &str, partition| CommitOffset {
            topic: topic.into(),
            partition,
            offset: 7,
            leader_epoch: -1,
            metadata: None,
        };
        let topics = [topic("a", 1, 2), topic("b", 2, 3)];
        let offsets = [
            offset("b", 2),
            offset("a", 1),
            offset("b", 0),
            offset("a", 0),
        ];
        let request = offset_commit_request("g", &offsets, &topics, 10);
        let got: Vec<(&str, Uuid, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                let partitions = t.partitions.iter().map(|p| p.partition_index).collect();
                (t.name.as_str(), t.topic_id, partitions)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("b", Uuid([2; 16]), vec![2, 0]),
                ("a", Uuid([1; 16]), vec![1, 0])
            ]
        );
    }

    #[test]
    fn an_offset_the_answer_leaves_out_is_unacknowledged() {
        let offset = |topic: &str, partition| CommitOffset {
            topic: topic.into(),
            partition,
            offset: 1,
            leader_epoch: -1,
            metadata: None,
        };
        let offsets = [offset("a", 0), offset("a", 1), offset("b", 0)];
        let all = [("a".into(), 0), ("b".into(), 0), ("a".into(), 1)];
        assert_eq!(unacknowledged(&offsets, &all), None);
        let missing = [("a".into(), 0), ("b".into(), 0), ("b".into(), 1)];
        assert_eq!(unacknowledged(&offsets, &missing), Some(&offsets[1]));
        assert_eq!(unacknowledged(&offsets, &[]), Some(&offsets[0]));
    }

    #[test]
    fn commits_come_back_in_the_order_asked_whatever_the_order_answered() {
        let commit = |topic: &str, partition, offset| {
            Some(CommittedOffset {
                topic: topic.into(),
                partition,
                offset: Some(offset),
                leader_epoch: 2,
                metadata: None,
            })
        };
        let topics = [topic("a", 1, 2), topic("b", 2, 2)];
        // b[1], a[0] and a[1] answered, in that order; b[0] left out.
        let found = vec![commit("b", 1, 30), commit("a", 0, 10), commit("a", 1, 20)];
        let got: Vec<(String, i32, Option<i64>)> = in_order_asked(&topics, found)
            .into_iter()
            .map(|c| (c.topic, c.partition, c.offset))
            .collect();
        assert_eq!(
            got,
            [
                ("a".into(), 0, Some(10)),
                ("a".into(), 1, Some(20)),
                ("b".into(), 0, None),
                ("b".into(), 1, Some(30)),
            ]
        );
        // A topic asked about twice gets its commits once, then none.
        let twice = [topic("a", 1, 1), topic("a", 1, 1)];
        let got = in_order_asked(&twice, vec![commit("a", 0, 10)]);
        assert_eq!(
            got.iter().map(|c| c.offset).collect::<Vec<_>>(),
            [Some(10), None]
        );
    }

    #[test]
    fn topic_names_come_back_from_ids() {
        let topics = [topic("a", 1, 1)];
        assert_eq!(topic_name(&topics, "", Uuid([1; 16])), "a");
        assert_eq!(topic_name(&topics, "x", Uuid::ZERO), "x");
    }
}

//! How many bytes each partition of a plan holds: DescribeLogDirs to each leader.
//!
//! A plan knows offsets, not bytes. To cut a plan into splits of about so many bytes
//! ([`Plan::splits_by_bytes`]), kseek asks each partition's leader for the size of the
//! partition's log on its disk, the figure `kafka-log-dirs.sh --describe` prints. The size
//! covers the whole log, from its start to its end, so it gives the average bytes per offset
//! of the partition, not the size of one range: an estimate, which is all a split's size
//! needs.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_DescribeLogDirs>, KIP-113.

use kseek_protocol::messages::describe_log_dirs::{
    DescribableLogDirTopic, DescribeLogDirsRequest, DescribeLogDirsResponse,
};
use kseek_protocol::{ApiKey, ErrorCode};

use crate::client::Client;
use crate::error::{ErrorKind, Result};
use crate::few::FewMap;
use crate::plan::Plan;

impl Client {
    /// The bytes each partition of `plan` takes on its leader's disk, in the order of
    /// `plan.partitions`: one DescribeLogDirs request per leader (the log's segments, in every
    /// log directory but a move's future one). Retried as metadata lookups are, after a leader
    /// moved. For [`Plan::splits_by_bytes`].
    ///
    /// The cluster must allow the principal to describe it (Kafka's `DESCRIBE` on the
    /// `Cluster` resource): without it the answer is `CLUSTER_AUTHORIZATION_FAILED`.
    ///
    /// ```no_run
    /// # async fn example(client: kseek::Client, plan: kseek::Plan) -> kseek::Result<()> {
    /// let sizes = client.log_sizes(&plan).await?;
    /// // Splits of about 64 MiB each.
    /// let splits = plan.splits_by_bytes(64 << 20, &sizes);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Broker`] for an error of the whole request (`CLUSTER_AUTHORIZATION_FAILED`,
    /// say); [`ErrorKind::Partition`] with `NOT_LEADER_OR_FOLLOWER` when a leader holds no
    /// log of a partition at the retry deadline; others as [`Client::metadata`].
    pub async fn log_sizes(&self, plan: &Plan) -> Result<Vec<u64>> {
        self.retry("describing the partitions' log sizes", || {
            self.log_sizes_once(plan)
        })
        .await
    }

    async fn log_sizes_once(&self, plan: &Plan) -> Result<Vec<u64>> {
        let mut topics: Vec<String> = Vec::new();
        for p in &plan.partitions {
            if !topics.contains(&p.topic) {
                topics.push(p.topic.clone());
            }
        }
        // Once: `log_sizes` retries the whole of this.
        let metadata = self.metadata_once(&topics).await?;
        // Per leader, the partitions asked about by index in the plan.
        let mut by_leader: FewMap<i32, Vec<usize>> = FewMap::new();
        for (at, p) in plan.partitions.iter().enumerate() {
            let leader = metadata
                .iter()
                .find(|t| t.name == p.topic)
                .and_then(|t| t.partition(p.partition))
                .map(|m| m.leader_id)
                .filter(|&id| id >= 0)
                .ok_or_else(|| ErrorKind::LeaderNotAvailable {
                    topic: p.topic.clone(),
                    partition: p.partition,
                })?;
            by_leader.get_or_insert_with(leader, Vec::new).push(at);
        }
        let mut sizes = vec![0u64; plan.partitions.len()];
        for (leader, asked) in by_leader {
            let conn = self.connection(leader).await?;
            let response = conn.send(&request(plan, &asked)).await?;
            let broker = conn.broker();
            if !ErrorCode(response.error_code).is_ok() {
                return Err(ErrorKind::Broker {
                    broker: broker.to_owned(),
                    api: ApiKey::DESCRIBE_LOG_DIRS,
                    code: ErrorCode(response.error_code),
                    message: None,
                }
                .into());
            }
            for at in asked {
                let p = &plan.partitions[at];
                sizes[at] = size_of(&response, &p.topic, p.partition).ok_or_else(|| {
                    // The broker holds no replica of the partition: it is no longer its
                    // leader (nor a follower).
                    self.invalidate(&p.topic);
                    ErrorKind::Partition {
                        broker: broker.to_owned(),
                        api: ApiKey::DESCRIBE_LOG_DIRS,
                        topic: p.topic.clone(),
                        partition: p.partition,
                        code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                    }
                })?;
            }
        }
        Ok(sizes)
    }
}

/// A DescribeLogDirs request for the partitions of `plan` at the indexes `asked`.
fn request(plan: &Plan, asked: &[usize]) -> DescribeLogDirsRequest {
    let mut topics: Vec<DescribableLogDirTopic> = Vec::new();
    for &at in asked {
        let p = &plan.partitions[at];
        match topics.iter_mut().find(|t| t.topic == p.topic) {
            Some(t) => t.partitions.push(p.partition),
            None => topics.push(DescribableLogDirTopic {
                topic: p.topic.clone(),
                partitions: vec![p.partition],
                ..Default::default()
            }),
        }
    }
    DescribeLogDirsRequest {
        topics: Some(topics),
        ..Default::default()
    }
}

/// The size of `topic`/`partition`'s current log in `response`: the sum over the log
/// directories that answered without an error, leaving out a move's future log; `None` when
/// no directory holds it.
fn size_of(response: &DescribeLogDirsResponse, topic: &str, partition: i32) -> Option<u64> {
    let mut found = None;
    for dir in response.results.iter().filter(|d| d.error_code == 0) {
        for t in dir.topics.iter().filter(|t| t.name == topic) {
            for p in &t.partitions {
                if p.partition_index == partition && !p.is_future_key {
                    let size = u64::try_from(p.partition_size).unwrap_or(0);
                    found = Some(found.unwrap_or(0u64).saturating_add(size));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use kseek_protocol::messages::describe_log_dirs::{LogDirPartition, LogDirResult, LogDirTopic};

    fn dir(error_code: i16, parts: &[(&str, i32, i64, bool)]) -> LogDirResult {
        LogDirResult {
            error_code,
            log_dir: "/d".into(),
            topics: parts
                .iter()
                .map(|&(name, partition, size, future)| LogDirTopic {
                    name: name.into(),
                    partitions: vec![LogDirPartition {
                        partition_index: partition,
                        partition_size: size,
                        is_future_key: future,
                        ..Default::default()
                    }],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_size_leaves_out_future_logs_and_failed_directories() {
        let response = DescribeLogDirsResponse {
            results: vec![
                dir(0, &[("t", 0, 1000, false), ("t", 1, 5, false)]),
                // A move under way: the future copy doesn't count.
                dir(0, &[("t", 0, 400, true)]),
                // An offline directory (KAFKA_STORAGE_ERROR) lists nothing usable.
                dir(56, &[("u", 0, 77, false)]),
            ],
            ..Default::default()
        };
        assert_eq!(size_of(&response, "t", 0), Some(1000));
        assert_eq!(size_of(&response, "t", 1), Some(5));
        assert_eq!(size_of(&response, "t", 2), None);
        assert_eq!(size_of(&response, "u", 0), None);
        // A negative size (no correct broker sends one) counts as 0.
        let odd = DescribeLogDirsResponse {
            results: vec![dir(0, &[("t", 0, -1, false)])],
            ..Default::default()
        };
        assert_eq!(size_of(&odd, "t", 0), Some(0));
    }
}

//! DescribeLogDirs (API key 35), versions 1–3: how many bytes each partition's log takes on the
//! broker that answers.
//!
//! A broker answers for the replicas it holds, one [`LogDirResult`] per log directory. A
//! partition being moved between directories (`AlterReplicaLogDirs`) shows twice: its current
//! log, and the future one with [`LogDirPartition::is_future_key`] set. Version 1 is version 0
//! (which Kafka 4 no longer serves) with throttling after the answer; version 2 is the first
//! flexible version; version 3 adds a top-level error code (an unauthorized request gets
//! `CLUSTER_AUTHORIZATION_FAILED` there, not an empty list of results).
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_DescribeLogDirs>, KIP-113 (log
//! directories), `DescribeLogDirsRequest.json` / `DescribeLogDirsResponse.json`.

use crate::messages::codec::{wire_message, wire_struct};

wire_struct! {
    /// DescribeLogDirs request body.
    ///
    /// `topics: None` asks about every partition the broker holds; `Some(vec![])` (the
    /// default) about none.
    ///
    /// # References
    /// `DescribeLogDirsRequest.json`.
    pub struct DescribeLogDirsRequest in "DescribeLogDirsRequest" {
        /// The topics and partitions to describe, or `None` for all.
        pub topics: Option<Vec<DescribableLogDirTopic>> = Some(Vec::new()),
    }

    /// A topic's partitions in a DescribeLogDirs request.
    pub struct DescribableLogDirTopic in "DescribeLogDirsRequest.topics" {
        /// The topic name.
        pub topic: String,
        /// The partition indexes.
        pub partitions: Vec<i32>,
    }

    /// DescribeLogDirs response body.
    ///
    /// # References
    /// `DescribeLogDirsResponse.json`.
    pub struct DescribeLogDirsResponse in "DescribeLogDirsResponse" {
        /// Throttle time in milliseconds because of a quota violation.
        pub throttle_time_ms: i32,
        /// The error code for the whole request, or 0 (versions 3+).
        pub error_code: i16 => since(3),
        /// One result per log directory.
        pub results: Vec<LogDirResult>,
    }

    /// One log directory in a DescribeLogDirs response.
    pub struct LogDirResult in "DescribeLogDirsResponse.results" {
        /// The error code for this directory (`KAFKA_STORAGE_ERROR` for an offline one), or 0.
        pub error_code: i16,
        /// The directory's absolute path.
        pub log_dir: String,
        /// The topics with a replica in this directory.
        pub topics: Vec<LogDirTopic>,
    }

    /// A topic in one log directory.
    pub struct LogDirTopic in "DescribeLogDirsResponse.results.topics" {
        /// The topic name.
        pub name: String,
        /// Its partitions in this directory.
        pub partitions: Vec<LogDirPartition>,
    }

    /// One partition's log in one directory.
    pub struct LogDirPartition in "DescribeLogDirsResponse.results.topics.partitions" {
        /// The partition index.
        pub partition_index: i32,
        /// The size of the partition's log segments, in bytes.
        pub partition_size: i64,
        /// How far the log's end is behind the high watermark (current log) or the current
        /// replica's end (future log).
        pub offset_lag: i64,
        /// Whether this is the future log of a move between directories.
        pub is_future_key: bool,
    }
}

wire_message!(
    DescribeLogDirsRequest => DescribeLogDirsResponse: DESCRIBE_LOG_DIRS,
    versions 1..=3, first flexible 2
);

#[cfg(test)]
mod tests;

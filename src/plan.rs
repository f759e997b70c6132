//! What to read: a start and an end for the topics of a read, and the per-partition plan they
//! resolve to before any record is fetched.
//!
//! Resolution happens once, up front ([`crate::Client::resolve`]); the [`Plan`] can be
//! inspected (a dry run) and then handed to [`crate::Client::read`]. Ends are exclusive
//! offsets. See `docs/reading-by-time.md` for the contract every type here implements.

use std::collections::BTreeMap;

pub use kseek_protocol::messages::list_offsets::IsolationLevel;
use kseek_protocol::Uuid;

/// Milliseconds since the Unix epoch, as Kafka timestamps are.
pub type TimestampMs = i64;

/// Where a read starts, for every partition it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Start {
    /// The log start offset (ListOffsets timestamp -2).
    Earliest,
    /// The last fetchable offset at resolution: nothing already written is read.
    Latest,
    /// The first offset whose record timestamp is at or after this time. A time after the
    /// newest record resolves to the end of the range (nothing to read), never to -1.
    Timestamp(TimestampMs),
    /// The offset ListOffsets answers for one of its special timestamps:
    /// [`MAX_TIMESTAMP`](kseek_protocol::messages::list_offsets::MAX_TIMESTAMP) (-3, the
    /// record with the largest timestamp; ListOffsets v7+),
    /// [`EARLIEST_LOCAL`](kseek_protocol::messages::list_offsets::EARLIEST_LOCAL) (-4, v8+),
    /// [`LATEST_TIERED`](kseek_protocol::messages::list_offsets::LATEST_TIERED) (-5, v9+).
    /// Sent only to leaders whose ListOffsets version carries it, else
    /// [`crate::Error::UnsupportedTimestamp`]. No answer (-1) is handled like a timestamp miss.
    Special(i64),
    /// Given offsets per partition. Partitions not listed use `default`.
    Offsets {
        /// Offsets per (topic, partition).
        offsets: BTreeMap<(String, i32), i64>,
        /// What an unlisted partition starts at; `None` makes an unlisted partition an error.
        default: Option<Box<Start>>,
    },
    /// The group's committed offsets, with a fallback for partitions without a commit.
    Committed {
        /// The consumer group.
        group: String,
        /// Where a partition without a committed offset starts; `None` makes it an error
        /// (the default, as the contract says).
        fallback: Option<Box<Start>>,
    },
}

/// Where a read ends (exclusive), for every partition it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum End {
    /// Never: follow the log.
    Unbounded,
    /// The last fetchable offset, read once at resolution (high watermark, or last stable
    /// offset under read_committed).
    Latest,
    /// The first offset whose record timestamp is at or after this time; records at or after
    /// it are not returned. No such record: the last fetchable offset.
    Timestamp(TimestampMs),
    /// The offset ListOffsets answers for a special timestamp, exclusive; see
    /// [`Start::Special`]. No answer: the last fetchable offset.
    Special(i64),
    /// Given offsets per partition, exclusive. Unlisted partitions end at latest.
    Offsets(BTreeMap<(String, i32), i64>),
    /// The group's committed offsets; a partition without one is an error.
    Committed {
        /// The consumer group.
        group: String,
    },
}

/// What to read: topics (optionally some partitions), a start, an end, an isolation level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSpec {
    /// The topics to read.
    pub topics: Vec<String>,
    /// Only these partitions (of every topic listed); `None` reads all.
    pub partitions: Option<Vec<i32>>,
    /// Where to start.
    pub start: Start,
    /// Where to stop.
    pub end: End,
    /// read_uncommitted (the default) or read_committed, used for every lookup and fetch.
    pub isolation: IsolationLevel,
    /// Fail instead of falling back where the broker has no answer (a timestamp after the
    /// last record, a partition without a commit).
    pub strict: bool,
}

impl ReadSpec {
    /// A read of `topics` from `start` to `end`, read_uncommitted, not strict.
    pub fn new(
        topics: impl IntoIterator<Item = impl Into<String>>,
        start: Start,
        end: End,
    ) -> Self {
        ReadSpec {
            topics: topics.into_iter().map(Into::into).collect(),
            partitions: None,
            start,
            end,
            isolation: IsolationLevel::READ_UNCOMMITTED,
            strict: false,
        }
    }
}

/// The resolved range of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionPlan {
    /// The topic's name.
    pub topic: String,
    /// The topic's id (zero where the broker doesn't have ids).
    pub topic_id: Uuid,
    /// The partition.
    pub partition: i32,
    /// The first offset to read.
    pub start: i64,
    /// The exclusive end offset; `None` for an unbounded read.
    pub end: Option<i64>,
    /// The log start offset at resolution.
    pub log_start_offset: i64,
    /// The last fetchable offset at resolution (high watermark, or last stable offset under
    /// read_committed): the snapshot that misses resolve to.
    pub last_fetchable_offset: i64,
    /// The leader epoch seen at resolution, or -1.
    pub leader_epoch: i32,
}

impl PartitionPlan {
    /// An upper bound on the records this range holds (`end - start`): transaction markers,
    /// aborted records and compaction gaps make the real count lower. `None` when unbounded.
    pub fn max_records(&self) -> Option<u64> {
        self.end
            .map(|end| end.saturating_sub(self.start).max(0) as u64)
    }

    /// Whether the range is empty: nothing will be fetched for this partition.
    pub fn is_empty(&self) -> bool {
        self.end.is_some_and(|end| self.start >= end)
    }
}

/// A resolved read: one range per partition, ready to inspect or to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The ranges, ordered by topic and partition.
    pub partitions: Vec<PartitionPlan>,
    /// The isolation level every fetch of this plan uses.
    pub isolation: IsolationLevel,
}

impl Plan {
    /// An upper bound on the records of the whole read; `None` when unbounded.
    pub fn max_records(&self) -> Option<u64> {
        self.partitions.iter().map(PartitionPlan::max_records).sum()
    }

    /// Whether every partition's range is empty, so a read returns at once.
    pub fn is_empty(&self) -> bool {
        self.partitions.iter().all(PartitionPlan::is_empty)
    }
}

//! What to read: a start and an end for the topics of a read, and the per-partition plan they
//! resolve to before any record is fetched.
//!
//! Resolution happens once, up front ([`crate::Client::resolve`]); the [`Plan`] can be
//! inspected (a dry run) and then handed to [`crate::Client::read`]. Ends are exclusive
//! offsets. See `docs/reading-by-time.md` for the contract every type here implements.

use std::collections::BTreeMap;

pub use kseek_protocol::IsolationLevel;
use kseek_protocol::Uuid;

/// Milliseconds since the Unix epoch, as Kafka timestamps are.
pub type TimestampMs = i64;

/// Where a read starts, for every partition it covers.
///
/// Every position of the contract (docs/reading-by-time.md, "Positions" and point 8) has a
/// variant; none takes a ListOffsets sentinel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Start {
    /// The log start offset: the oldest record still kept.
    Earliest,
    /// The last fetchable offset at resolution: nothing already written is read.
    Latest,
    /// The first offset whose record timestamp is at or after this time. A time after the
    /// newest record resolves to the end of the range (nothing to read), never to -1.
    Timestamp(TimestampMs),
    /// The offset of the record with the largest timestamp (KIP-734; ListOffsets v7+).
    /// An empty partition has none, which is handled like a timestamp that finds nothing.
    MaxTimestamp,
    /// The first offset of the leader's local log, after the segments moved to tiered storage
    /// (KIP-405; ListOffsets v8+). Without tiered storage, the log start offset.
    EarliestLocal,
    /// The highest offset copied to tiered storage (KIP-1005; ListOffsets v9+).
    /// Nothing tiered yet is handled like a timestamp that finds nothing.
    LatestTiered,
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
///
/// Like [`Start`], every position of the contract has a variant. A broker too old for
/// [`End::MaxTimestamp`], [`End::EarliestLocal`] or [`End::LatestTiered`] makes resolution
/// fail with [`crate::ErrorKind::UnsupportedTimestamp`], never a wrong answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum End {
    /// Never: follow the log.
    Unbounded,
    /// The log start offset at resolution. A start at the log start gives an empty range, and
    /// so does a start time that finds no record; any other later start is
    /// [`crate::ErrorKind::StartAfterEnd`].
    Earliest,
    /// The last fetchable offset, read once at resolution (high watermark, or last stable
    /// offset under read_committed).
    Latest,
    /// The first offset whose record timestamp is at or after this time; records at or after
    /// it are not returned. No such record: the last fetchable offset.
    Timestamp(TimestampMs),
    /// The offset of the record with the largest timestamp, exclusive (see
    /// [`Start::MaxTimestamp`]). None: the last fetchable offset.
    MaxTimestamp,
    /// The first offset of the leader's local log, exclusive (see [`Start::EarliestLocal`]).
    EarliestLocal,
    /// The highest offset copied to tiered storage, exclusive (see [`Start::LatestTiered`]).
    /// None: the last fetchable offset.
    LatestTiered,
    /// Given offsets per partition, exclusive. Unlisted partitions end at latest.
    Offsets(BTreeMap<(String, i32), i64>),
    /// The group's committed offsets; a partition without one is an error.
    Committed {
        /// The consumer group.
        group: String,
    },
}

/// What to read: topics (optionally some partitions), a start, an end, an isolation level.
///
/// Made with [`ReadSpec::new`] and adjusted with the builder-style setters (or by assigning
/// the public fields); new fields may be added, so it can't be built as a struct literal.
///
/// ```
/// use kseek::{End, IsolationLevel, ReadSpec, Start};
///
/// let spec = ReadSpec::new(["events"], Start::Earliest, End::Latest)
///     .partitions([0, 2])
///     .isolation(IsolationLevel::READ_COMMITTED)
///     .strict(true);
/// assert_eq!(spec.partitions, Some(vec![0, 2]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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

    /// Sets [`ReadSpec::topics`].
    pub fn topics(mut self, topics: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.topics = topics.into_iter().map(Into::into).collect();
        self
    }

    /// Sets [`ReadSpec::partitions`]: only these partitions of every topic are read.
    pub fn partitions(mut self, partitions: impl IntoIterator<Item = i32>) -> Self {
        self.partitions = Some(partitions.into_iter().collect());
        self
    }

    /// Sets [`ReadSpec::start`].
    pub fn start(mut self, start: Start) -> Self {
        self.start = start;
        self
    }

    /// Sets [`ReadSpec::end`].
    pub fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }

    /// Sets [`ReadSpec::isolation`].
    pub fn isolation(mut self, isolation: IsolationLevel) -> Self {
        self.isolation = isolation;
        self
    }

    /// Sets [`ReadSpec::strict`].
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
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
    /// Why [`PartitionPlan::start`] is not the offset the spec named, if it isn't: a range
    /// that began below the log start, or a start past the end of a short partition.
    pub adjusted: Option<Adjusted>,
}

/// How resolution moved an explicit start offset ([`Start::Offsets`]) to keep a partition's
/// range inside its log. Both are worth telling the user once, before the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Adjusted {
    /// The start lay below the log start offset: offsets `requested` to the log start
    /// (exclusive) were deleted (by retention, DeleteRecords or compaction of the head: the
    /// broker doesn't say which). The range starts at the log start, and an end below it
    /// moved up to it too.
    BelowLogStart {
        /// The start offset the spec named.
        requested: i64,
    },
    /// The start lay past the partition's end (the last fetchable offset, when the end is
    /// [`End::Latest`] or an end time that found nothing): the range is empty and starts at
    /// that end, as a Java consumer seeking past the end finds nothing there. A start past an
    /// end the spec named explicitly stays [`crate::ErrorKind::StartAfterEnd`].
    PastEnd {
        /// The start offset the spec named.
        requested: i64,
    },
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

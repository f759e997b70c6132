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

    /// Cuts the plan into splits: plans of one partition each, whose ranges hold at most
    /// `max_offsets` offsets (at least 1), in plan order. Reading every split, in any order, on
    /// any client, gives exactly the records of reading the whole plan: a range's records are
    /// those whose offsets lie in it, whatever batches, transaction markers, aborted records or
    /// compaction gaps surround its ends (a read_committed split that starts inside an aborted
    /// transaction still drops that transaction's records: the broker lists it with the first
    /// fetch), and each split keeps the plan's isolation level; a read's `ReadOptions` (an
    /// exact-time filter, say) apply to each split as to the whole. Empty ranges give no split;
    /// an unbounded range gives one unbounded split from its start. So one hot partition can
    /// be read by many workers (Spark's `minPartitions`, Trino's messages per split).
    pub fn splits(&self, max_offsets: u64) -> Vec<Plan> {
        let step = i64::try_from(max_offsets.max(1)).unwrap_or(i64::MAX);
        let mut splits = Vec::new();
        for p in &self.partitions {
            self.split(p, step, &mut splits);
        }
        splits
    }

    /// Cuts the plan into splits of about `max_bytes` bytes each, as [`Plan::splits`] does by
    /// offsets: each partition's range is cut into pieces of as many offsets as `max_bytes`
    /// holds at the partition's average bytes per offset, `log_sizes[i]` (the bytes of
    /// partition `i`'s log, [`Client::log_sizes`](crate::Client::log_sizes)) over the offsets
    /// from its log start to its last fetchable offset. The sizes are of the whole log, so a
    /// split's bytes are an estimate (a range whose records are larger than the log's average
    /// makes larger splits); the records are exact, as for [`Plan::splits`]. A partition
    /// without a size (`log_sizes` shorter than the plan) or with an empty log is one split.
    /// Both kinds of cut combine: each split is a plan, and can be cut again by offsets.
    ///
    /// ```
    /// use kseek::{IsolationLevel, PartitionPlan, Plan};
    ///
    /// let partition = PartitionPlan {
    ///     topic: "events".into(),
    ///     topic_id: kseek::protocol::Uuid::ZERO,
    ///     partition: 0,
    ///     start: 500,
    ///     end: Some(1500),
    ///     log_start_offset: 0,
    ///     last_fetchable_offset: 2000,
    ///     leader_epoch: 0,
    ///     adjusted: None,
    /// };
    /// let plan = Plan { partitions: vec![partition], isolation: IsolationLevel::READ_COMMITTED };
    /// // 2000 offsets in 2 MB of log: 1000 bytes each, so 250 offsets in 250 kB.
    /// let splits = plan.splits_by_bytes(250_000, &[2_000_000]);
    /// assert_eq!(splits.len(), 4);
    /// assert_eq!(splits[1].partitions[0].start, 750);
    /// ```
    pub fn splits_by_bytes(&self, max_bytes: u64, log_sizes: &[u64]) -> Vec<Plan> {
        let mut splits = Vec::new();
        for (at, p) in self.partitions.iter().enumerate() {
            let offsets = u128::try_from(p.last_fetchable_offset - p.log_start_offset).unwrap_or(0);
            let step = match log_sizes.get(at) {
                Some(&size) if size > 0 && offsets > 0 => {
                    // max_bytes / (size / offsets), in integers.
                    let step = u128::from(max_bytes.max(1)) * offsets / u128::from(size);
                    i64::try_from(step).unwrap_or(i64::MAX).max(1)
                }
                _ => i64::MAX,
            };
            self.split(p, step, &mut splits);
        }
        splits
    }

    /// `p`'s range cut into one-partition plans of at most `step` offsets, onto `splits`.
    fn split(&self, p: &PartitionPlan, step: i64, splits: &mut Vec<Plan>) {
        let one = |start: i64, end: Option<i64>, adjusted: Option<Adjusted>| Plan {
            partitions: vec![PartitionPlan {
                start,
                end,
                adjusted,
                ..p.clone()
            }],
            isolation: self.isolation,
        };
        let Some(end) = p.end else {
            splits.push(one(p.start, None, p.adjusted));
            return;
        };
        let mut start = p.start;
        while start < end {
            let stop = start.saturating_add(step).min(end);
            // A notice about the range's start belongs to its first split only.
            let adjusted = if start == p.start { p.adjusted } else { None };
            splits.push(one(start, Some(stop), adjusted));
            start = stop;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition(partition: i32, start: i64, end: Option<i64>) -> PartitionPlan {
        PartitionPlan {
            topic: "t".into(),
            topic_id: Uuid::ZERO,
            partition,
            start,
            end,
            log_start_offset: 0,
            last_fetchable_offset: 100,
            leader_epoch: 3,
            adjusted: None,
        }
    }

    fn ranges(splits: &[Plan]) -> Vec<(i32, i64, Option<i64>)> {
        splits
            .iter()
            .map(|s| {
                assert_eq!(s.partitions.len(), 1);
                assert_eq!(s.isolation, IsolationLevel::READ_COMMITTED);
                let p = &s.partitions[0];
                (p.partition, p.start, p.end)
            })
            .collect()
    }

    #[test]
    fn splits_cover_each_range_exactly_once_in_pieces_of_at_most_n_offsets() {
        let mut first = partition(0, 10, Some(35));
        first.adjusted = Some(Adjusted::BelowLogStart { requested: 4 });
        let plan = Plan {
            partitions: vec![
                first,
                partition(1, 7, Some(7)),
                partition(2, 0, Some(10)),
                partition(3, 50, None),
            ],
            isolation: IsolationLevel::READ_COMMITTED,
        };
        let splits = plan.splits(10);
        assert_eq!(
            ranges(&splits),
            [
                (0, 10, Some(20)),
                (0, 20, Some(30)),
                (0, 30, Some(35)),
                (2, 0, Some(10)),
                (3, 50, None),
            ]
        );
        // The notice stays with the first split of its range; the rest of the plan is kept.
        assert_eq!(
            splits[0].partitions[0].adjusted,
            plan.partitions[0].adjusted
        );
        assert_eq!(splits[1].partitions[0].adjusted, None);
        assert!(splits.iter().all(|s| s.partitions[0].leader_epoch == 3));
        // The offsets add up to the plan's.
        let total: u64 = splits.iter().filter_map(Plan::max_records).sum();
        assert_eq!(
            Some(total),
            plan.partitions[..3]
                .iter()
                .map(PartitionPlan::max_records)
                .sum()
        );
        // One offset a split, or one split a range.
        assert_eq!(plan.splits(0).len(), 25 + 10 + 1);
        assert_eq!(ranges(&plan.splits(u64::MAX))[0], (0, 10, Some(35)));
    }

    #[test]
    fn splits_by_bytes_take_as_many_offsets_as_the_bytes_hold_at_each_logs_average() {
        let mut small = partition(0, 0, Some(100));
        small.last_fetchable_offset = 100;
        let mut large = partition(1, 10, Some(60));
        large.log_start_offset = 10;
        large.last_fetchable_offset = 110;
        let plan = Plan {
            partitions: vec![
                small,
                large,
                partition(2, 0, Some(10)),
                partition(3, 5, None),
            ],
            isolation: IsolationLevel::READ_COMMITTED,
        };
        // Partition 0: 100 offsets in 10,000 bytes (100 B each): 40 offsets per 4,000 bytes.
        // Partition 1: 100 offsets in 100,000 bytes (1 KB each): 4 offsets per 4,000 bytes.
        // Partition 2: an empty log, one split; partition 3: no size given, one split.
        let splits = plan.splits_by_bytes(4_000, &[10_000, 100_000, 0]);
        let got = ranges(&splits);
        assert_eq!(
            got[..3],
            [(0, 0, Some(40)), (0, 40, Some(80)), (0, 80, Some(100))]
        );
        assert_eq!(got.iter().filter(|r| r.0 == 1).count(), 13);
        assert_eq!(got[3..16].first(), Some(&(1, 10, Some(14))));
        assert_eq!(got[3..16].last(), Some(&(1, 58, Some(60))));
        assert_eq!(got[16..], [(2, 0, Some(10)), (3, 5, None)]);
        // A record larger than the limit still makes a split of one offset.
        assert_eq!(plan.splits_by_bytes(1, &[10_000]).len(), 100 + 1 + 1 + 1);
    }
}

//! What a read hands out, as plain data the sans-IO read machine produces and the streams
//! pass on: [`FetchedBatch`]es and their [`ReadRecord`]s, and where the read is in each
//! partition ([`PartitionPosition`], [`DataLoss`]).

use std::sync::Arc;

use bytes::Bytes;
use kseek_protocol::records::{
    Batch, FilteredBatch, FilteredRecords, OwnedHeader, Record, TimestampType,
};

use crate::error::{ErrorKind, Result};
use crate::read::options::TimeFilter;

/// Offsets a read skipped because they were deleted before it could read them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DataLoss {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The fetch position that was out of range: the first offset lost.
    pub from: i64,
    /// The log start offset the read continued at: the first offset not lost.
    pub to: i64,
}

impl DataLoss {
    /// How many offsets were skipped (transaction markers and compaction gaps among them
    /// count too: an upper bound on the records lost).
    pub fn skipped(&self) -> i64 {
        self.to.saturating_sub(self.from)
    }
}

/// Where a read is in one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartitionPosition {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The next offset to read: what to commit once everything handed out so far is
    /// processed. Never beyond the end of a bounded range.
    pub next_offset: i64,
    /// The leader epoch of the batch of the last record handed out, or -1 before any (for
    /// OffsetCommit's `CommittedLeaderEpoch`).
    pub leader_epoch: i32,
    /// The exclusive end of the range, `None` for an unbounded read.
    pub end: Option<i64>,
    /// Whether the partition is finished: its position has reached its end.
    pub done: bool,
}

/// One batch of one partition, as fetched: the records in the read's range, zero-copy.
#[derive(Debug, Clone)]
pub struct FetchedBatch {
    /// The partition's index in the read (plan order, then partitions discovered later).
    pub(crate) idx: usize,
    pub(crate) topic: Arc<str>,
    pub(crate) partition: i32,
    pub(crate) broker: Arc<str>,
    pub(crate) inner: FilteredBatch,
    pub(crate) next_offset: i64,
    pub(crate) high_watermark: i64,
    pub(crate) time_filter: Option<TimeFilter>,
}

impl FetchedBatch {
    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The topic's name, shared (cheap to clone).
    pub fn topic_arc(&self) -> &Arc<str> {
        &self.topic
    }

    /// The partition.
    pub fn partition(&self) -> i32 {
        self.partition
    }

    /// The address of the broker it was fetched from.
    pub fn broker(&self) -> &str {
        &self.broker
    }

    /// The batch header: offsets, timestamps, codec, producer.
    pub fn batch(&self) -> &Batch {
        self.inner.batch()
    }

    /// The leader epoch that appended the batch (-1 for legacy formats).
    pub fn leader_epoch(&self) -> i32 {
        self.inner.batch().partition_leader_epoch()
    }

    /// How the batch's timestamps were assigned (CreateTime or LogAppendTime).
    pub fn timestamp_type(&self) -> TimestampType {
        self.inner.batch().timestamp_type()
    }

    /// The partition's position after this batch: its last offset + 1, or the range's end if
    /// that is lower.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// The partition's high watermark in the response that carried the batch.
    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// The bytes it counts for against
    /// [`ReadOptions::max_buffered_bytes`](crate::read::ReadOptions::max_buffered_bytes) while it waits
    /// for the caller: its size on the wire.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        self.inner.batch().size_in_bytes() as u64
    }

    /// The records of the read's range (and time filter), as views into the batch's buffer.
    #[inline]
    pub fn records(&self) -> BatchRecords<'_> {
        BatchRecords {
            inner: self.inner.records(),
            time_filter: self.time_filter,
            broker: &self.broker,
        }
    }

    /// The records as [`ReadRecord`]s whose byte fields share the batch's buffer.
    pub fn to_records(&self) -> Result<Vec<ReadRecord>> {
        let timestamp_type = self.timestamp_type();
        let leader_epoch = self.leader_epoch();
        self.records()
            .map(|r| {
                r.map(|r| {
                    let owned = r.to_owned();
                    ReadRecord {
                        topic: self.topic.clone(),
                        partition: self.partition,
                        offset: owned.offset,
                        timestamp: owned.timestamp,
                        timestamp_type,
                        leader_epoch,
                        key: owned.key,
                        value: owned.value,
                        headers: owned.headers,
                    }
                })
            })
            .collect()
    }
}

/// The records of a [`FetchedBatch`] in the read's range.
#[derive(Debug, Clone)]
pub struct BatchRecords<'a> {
    inner: FilteredRecords<'a>,
    time_filter: Option<TimeFilter>,
    broker: &'a str,
}

impl<'a> Iterator for BatchRecords<'a> {
    type Item = Result<Record<'a>>;

    // Always: the record decoder below it is inlined (always) too, and a caller's loop that
    // does more than count (kseek-cli's `write_batch`) otherwise calls it once a record
    // (BENCHMARKS.md, "The command line's record loop").
    #[inline(always)]
    fn next(&mut self) -> Option<Result<Record<'a>>> {
        loop {
            match self.inner.next()? {
                Ok(r) if self.time_filter.is_some_and(|f| !f.contains(r.timestamp())) => {}
                Ok(r) => return Some(Ok(r)),
                Err(source) => {
                    return Some(Err(ErrorKind::Protocol {
                        broker: self.broker.to_owned(),
                        source,
                    }
                    .into()))
                }
            }
        }
    }
}

/// A record with its topic and partition; key, value and header bytes share the fetched
/// buffer (no copy).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadRecord {
    /// The topic.
    pub topic: Arc<str>,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// The timestamp (ms since the epoch; -1 for magic-0 data).
    pub timestamp: i64,
    /// Whether the producer or the broker chose the timestamp.
    pub timestamp_type: TimestampType,
    /// The leader epoch of the record's batch (-1 for legacy formats).
    pub leader_epoch: i32,
    /// The key, `None` when null.
    pub key: Option<Bytes>,
    /// The value, `None` when null.
    pub value: Option<Bytes>,
    /// The headers, in order.
    pub headers: Vec<OwnedHeader>,
}

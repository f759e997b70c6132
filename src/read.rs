//! Reading a resolved [`Plan`]: Fetch from every partition's leader until each partition's
//! position reaches its end, handing out the record batches as they arrive.
//!
//! [`Client::read`] starts a background task that keeps one Fetch in flight per leader broker,
//! covering every partition of that leader with something left to read. Batches come out of a
//! [`BatchStream`] without any per-record copy (the records are views into the Fetch response,
//! or into one decompressed buffer per batch); [`BatchStream::records`] turns it into a
//! [`RecordStream`] of owned [`ReadRecord`]s for convenience.
//!
//! How a read ends, what it skips and what it retries (READING-BY-TIME.md points 3–7 and
//! 9–12):
//!
//! - A bounded partition is done when its fetch position reaches its end. The position moves
//!   past whole batches by their last offset, so transaction markers, aborted records and
//!   compaction gaps never keep a read waiting for a record that will not come. Records at or
//!   beyond the end, and records below the start in the first batch, are dropped.
//! - A partition whose start is at or after its end is done before any fetch; a read whose
//!   every partition is so ends at once with no records.
//! - A trailing partial batch (cut off by max bytes) is ignored and fetched again from the
//!   position; a partition stuck behind a batch larger than its max bytes is asked first, with
//!   room for the whole batch, in the next fetch.
//! - Under read_committed, aborted records are skipped using the Fetch response's list of
//!   aborted transactions; transaction markers are never handed out.
//! - NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH, LEADER_NOT_AVAILABLE,
//!   UNKNOWN_TOPIC_OR_PARTITION, other retriable codes and connection failures mark the
//!   topic's metadata stale and retry the partition with exponential backoff until
//!   [`ClientConfig::retry_deadline`](crate::ClientConfig::retry_deadline).
//! - OFFSET_OUT_OF_RANGE (retention deleted data under the read) moves to the new log start and
//!   reports the offsets skipped as [`DataLoss`] ([`OutOfRange::ResetToLogStart`], the default),
//!   or ends the read with [`Error::OffsetOutOfRange`] ([`OutOfRange::Fail`]).
//! - An unbounded read (end `None`) follows the log forever, long-polling with the max wait,
//!   and starts partitions added to its topics later at their beginning.
//!
//! Offsets between two timestamps are not exactly the records between them when producers
//! chose out-of-order CreateTime timestamps; [`ReadOptions::time_filter`] drops, per record,
//! those outside the time range.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_Fetch>, KIP-74 (fetch max bytes), KIP-98
//! (transactions), KIP-320 (leader epoch fencing), KIP-516 (topic ids in Fetch v13+);
//! READING-BY-TIME.md.

use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use kseek_protocol::messages::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use kseek_protocol::messages::list_offsets::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic, CONSUMER_REPLICA_ID, EARLIEST,
};
use kseek_protocol::records::{
    AbortedTransaction, Batch, DecodeOptions, FilteredBatch, FilteredRecords, OwnedHeader,
    PartitionReader, Record, TimestampType,
};
use kseek_protocol::{ApiKey, ErrorCode, Uuid};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::backoff::{Backoff, Failing};
use crate::client::Client;
use crate::cluster::TopicMetadata;
use crate::error::{Error, Result};
use crate::plan::{End, IsolationLevel, Plan, ReadSpec, Start, TimestampMs};

/// How a read fetches, filters and reacts to data loss. `ReadOptions::default()` suits most
/// reads; the fields are public, and the builder-style methods set them one at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// The most bytes one Fetch response may carry (Fetch `MaxBytes`); default 50 MiB.
    pub fetch_max_bytes: i32,
    /// The most bytes one partition may contribute to a response (`PartitionMaxBytes`);
    /// default 1 MiB. A larger batch is still read whole (KIP-74).
    pub partition_max_bytes: i32,
    /// How long the broker may wait for `min_bytes` before answering (`MaxWaitMs`); default
    /// 500 ms. An unbounded read that has caught up long-polls with it. Capped below the
    /// connection's request timeout.
    pub max_wait: Duration,
    /// The bytes the broker waits for before answering (`MinBytes`); default 1.
    pub min_bytes: i32,
    /// Only hand out records whose timestamp lies in this range; default `None` (every record
    /// of the offset range).
    pub time_filter: Option<TimeFilter>,
    /// What to do when a position falls outside the partition's log; default
    /// [`OutOfRange::ResetToLogStart`].
    pub out_of_range: OutOfRange,
    /// How record batches are decoded (CRC checks, decompression limits).
    pub decode: DecodeOptions,
    /// How often an unbounded read looks for partitions added to its topics; default 30 s.
    /// `None` never looks. Bounded reads keep the partitions they were resolved with.
    pub partition_discovery: Option<Duration>,
    /// How many fetched partition responses may wait, decoded, for the caller to take them
    /// before fetching pauses; default 16.
    pub buffer: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            fetch_max_bytes: 50 * 1024 * 1024,
            partition_max_bytes: 1024 * 1024,
            max_wait: Duration::from_millis(500),
            min_bytes: 1,
            time_filter: None,
            out_of_range: OutOfRange::ResetToLogStart,
            decode: DecodeOptions::default(),
            partition_discovery: Some(Duration::from_secs(30)),
            buffer: 16,
        }
    }
}

impl ReadOptions {
    /// Sets [`ReadOptions::fetch_max_bytes`].
    pub fn fetch_max_bytes(mut self, bytes: i32) -> Self {
        self.fetch_max_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::partition_max_bytes`].
    pub fn partition_max_bytes(mut self, bytes: i32) -> Self {
        self.partition_max_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::max_wait`].
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// Sets [`ReadOptions::min_bytes`].
    pub fn min_bytes(mut self, bytes: i32) -> Self {
        self.min_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::time_filter`].
    pub fn time_filter(mut self, filter: TimeFilter) -> Self {
        self.time_filter = Some(filter);
        self
    }

    /// Sets [`ReadOptions::out_of_range`].
    pub fn out_of_range(mut self, policy: OutOfRange) -> Self {
        self.out_of_range = policy;
        self
    }

    /// Sets [`ReadOptions::partition_discovery`].
    pub fn partition_discovery(mut self, every: Option<Duration>) -> Self {
        self.partition_discovery = every;
        self
    }
}

/// A per-record timestamp filter: `start <= timestamp < end`, either bound optional.
///
/// With CreateTime timestamps chosen by producers, a partition's timestamps can be out of
/// order, so the offsets between two timestamps (what resolution gives) can hold records from
/// outside that time range, and miss some inside it. The filter drops the former; the latter
/// lie outside the offset range and need a wider read (say, an earlier start) to be found.
///
/// ```
/// use kseek::read::TimeFilter;
///
/// let f = TimeFilter::new(Some(1_000), Some(2_000));
/// assert!(f.contains(1_000) && f.contains(1_999));
/// assert!(!f.contains(999) && !f.contains(2_000));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeFilter {
    /// The lowest timestamp kept (inclusive); `None` for no lower bound.
    pub start: Option<TimestampMs>,
    /// The first timestamp dropped (exclusive); `None` for no upper bound.
    pub end: Option<TimestampMs>,
}

impl TimeFilter {
    /// A filter keeping `start <= timestamp < end`.
    pub fn new(start: Option<TimestampMs>, end: Option<TimestampMs>) -> Self {
        TimeFilter { start, end }
    }

    /// The time bounds of `spec`: its start and end where they are timestamps. `None` when
    /// neither is.
    pub fn from_spec(spec: &ReadSpec) -> Option<Self> {
        let start = match spec.start {
            Start::Timestamp(ts) => Some(ts),
            _ => None,
        };
        let end = match spec.end {
            End::Timestamp(ts) => Some(ts),
            _ => None,
        };
        (start.is_some() || end.is_some()).then_some(TimeFilter { start, end })
    }

    /// Whether a record with `timestamp` passes.
    #[inline]
    pub fn contains(&self, timestamp: TimestampMs) -> bool {
        self.start.is_none_or(|s| timestamp >= s) && self.end.is_none_or(|e| timestamp < e)
    }
}

/// What a read does when a partition's fetch position is outside its log
/// (OFFSET_OUT_OF_RANGE): retention or DeleteRecords removed the data it was about to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutOfRange {
    /// Look up the log start offset (ListOffsets -2), continue there, and report the offsets
    /// skipped as [`DataLoss`] ([`BatchStream::data_loss`]). The default.
    #[default]
    ResetToLogStart,
    /// End the read with [`Error::OffsetOutOfRange`].
    Fail,
}

/// Offsets a read skipped because they were deleted before it could read them.
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl Client {
    /// Reads `plan`: every partition from its start to its end (exclusive), or forever for
    /// an unbounded partition. The read runs in a background task on the current tokio
    /// runtime (so this must be called from within one) and stops when the returned stream
    /// is dropped.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use kseek::{read::ReadOptions, End, ReadSpec, Start};
    ///
    /// # async fn example() -> kseek::Result<()> {
    /// let client = kseek::Client::connect(["localhost:9092"]).await?;
    /// let spec = ReadSpec::new(["events"], Start::Timestamp(1_700_000_000_000), End::Latest);
    /// let plan = client.resolve(&spec).await?;
    /// let mut batches = client.read(plan, ReadOptions::default());
    /// while let Some(batch) = batches.next().await {
    ///     let batch = batch?;
    ///     for record in batch.records() {
    ///         let record = record?;
    ///         println!("{}[{}]@{}: {:?}", batch.topic(), batch.partition(), record.offset(),
    ///                  record.value());
    ///     }
    /// }
    /// println!("commit: {:?}", batches.positions());
    /// # Ok(())
    /// # }
    /// ```
    pub fn read(&self, plan: Plan, options: ReadOptions) -> BatchStream {
        let positions: Vec<PartitionPosition> = plan
            .partitions
            .iter()
            .map(|p| PartitionPosition {
                topic: p.topic.clone(),
                partition: p.partition,
                next_offset: p.start,
                leader_epoch: -1,
                end: p.end,
                done: p.is_empty(),
            })
            .collect();
        let (tx, rx) = mpsc::channel(options.buffer.max(1));
        let driver = if positions.iter().all(|p| p.done) {
            // Nothing to fetch: the stream ends at once (dropping `tx` closes it).
            None
        } else {
            let driver = Driver::new(self.clone(), &plan, options, tx);
            Some(tokio::spawn(driver.run()))
        };
        BatchStream {
            rx,
            driver,
            queue: VecDeque::new(),
            positions,
            data_loss: Vec::new(),
            finished: false,
            epoch_before_last: -1,
            offset_before_last: -1,
        }
    }
}

/// One batch of one partition, as fetched: the records in the read's range, zero-copy.
#[derive(Debug, Clone)]
pub struct FetchedBatch {
    idx: usize,
    topic: Arc<str>,
    partition: i32,
    broker: Arc<str>,
    inner: FilteredBatch,
    next_offset: i64,
    high_watermark: i64,
    time_filter: Option<TimeFilter>,
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

    #[inline]
    fn next(&mut self) -> Option<Result<Record<'a>>> {
        loop {
            match self.inner.next()? {
                Ok(r) if self.time_filter.is_some_and(|f| !f.contains(r.timestamp())) => {}
                Ok(r) => return Some(Ok(r)),
                Err(source) => {
                    return Some(Err(Error::Protocol {
                        broker: self.broker.to_owned(),
                        source,
                    }))
                }
            }
        }
    }
}

/// A record with its topic and partition; key, value and header bytes share the fetched
/// buffer (no copy).
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// What the background task tells the stream.
enum Event {
    /// A partition's batches from one response, then its position after them.
    Chunk {
        idx: usize,
        batches: Vec<FetchedBatch>,
        position: i64,
        done: bool,
    },
    /// A partition jumped over deleted offsets.
    DataLoss {
        idx: usize,
        loss: DataLoss,
        position: i64,
        done: bool,
    },
    /// A partition found by discovery joined the read (its index is the next one).
    Added(PartitionPosition),
    /// The read failed; nothing follows.
    Failed(Error),
}

/// What the stream hands out next, in order.
// Boxing the batch would cost an allocation per batch; the queue is short.
#[allow(clippy::large_enum_variant)]
enum Queued {
    Batch(FetchedBatch),
    Position {
        idx: usize,
        position: i64,
        done: bool,
    },
}

/// The batches of a read, as a [`Stream`] of `Result<FetchedBatch>`.
///
/// Batches of one partition come in offset order; partitions interleave. The stream ends
/// when every partition is done (never for an unbounded read) or after the first error.
/// Dropping it stops the read.
#[derive(Debug)]
pub struct BatchStream {
    rx: mpsc::Receiver<Event>,
    driver: Option<JoinHandle<()>>,
    queue: VecDeque<Queued>,
    positions: Vec<PartitionPosition>,
    data_loss: Vec<DataLoss>,
    finished: bool,
    /// The leader epoch of the last batch's partition before that batch.
    epoch_before_last: i32,
    /// The position of the last batch's partition before that batch.
    offset_before_last: i64,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        if let Some(driver) = &self.driver {
            driver.abort();
        }
    }
}

impl BatchStream {
    /// The next batch, or `None` at the end of the read (a convenience for
    /// `StreamExt::next`).
    pub async fn next(&mut self) -> Option<Result<FetchedBatch>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// Per partition: the next offset to read (what to commit after processing everything
    /// handed out so far), the leader epoch of the last batch handed out, and whether the
    /// partition is done. In plan order, then partitions discovered later.
    pub fn positions(&self) -> &[PartitionPosition] {
        &self.positions
    }

    /// Every jump over deleted offsets so far ([`OutOfRange::ResetToLogStart`]).
    pub fn data_loss(&self) -> &[DataLoss] {
        &self.data_loss
    }

    /// The records one at a time, with their topic and partition.
    pub fn records(self) -> RecordStream {
        RecordStream {
            batches: self,
            current: VecDeque::new(),
            current_idx: 0,
            epoch_before: -1,
            taken_from_current: false,
            failed_at: None,
        }
    }

    fn set_position(&mut self, idx: usize, position: i64, done: bool, epoch: Option<i32>) {
        if let Some(p) = self.positions.get_mut(idx) {
            let position = p.end.map_or(position, |end| position.min(end));
            p.next_offset = p.next_offset.max(position);
            p.done |= done;
            if let Some(epoch) = epoch.filter(|e| *e >= 0) {
                p.leader_epoch = epoch;
            }
        }
    }

    fn take_event(&mut self, event: Event) -> Option<Error> {
        match event {
            Event::Chunk {
                idx,
                batches,
                position,
                done,
            } => {
                self.queue.extend(batches.into_iter().map(Queued::Batch));
                self.queue.push_back(Queued::Position {
                    idx,
                    position,
                    done,
                });
            }
            Event::DataLoss {
                idx,
                loss,
                position,
                done,
            } => {
                self.data_loss.push(loss);
                self.queue.push_back(Queued::Position {
                    idx,
                    position,
                    done,
                });
            }
            Event::Added(p) => self.positions.push(p),
            Event::Failed(e) => return Some(e),
        }
        None
    }
}

impl Stream for BatchStream {
    type Item = Result<FetchedBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match this.queue.pop_front() {
                Some(Queued::Batch(b)) => {
                    let before = this.positions.get(b.idx);
                    this.epoch_before_last = before.map_or(-1, |p| p.leader_epoch);
                    this.offset_before_last = before.map_or(-1, |p| p.next_offset);
                    this.set_position(b.idx, b.next_offset, false, Some(b.leader_epoch()));
                    return Poll::Ready(Some(Ok(b)));
                }
                Some(Queued::Position {
                    idx,
                    position,
                    done,
                }) => {
                    this.set_position(idx, position, done, None);
                    continue;
                }
                None => {}
            }
            if this.finished {
                return Poll::Ready(None);
            }
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(event)) => {
                    if let Some(error) = this.take_event(event) {
                        this.finished = true;
                        this.rx.close();
                        return Poll::Ready(Some(Err(error)));
                    }
                }
                Poll::Ready(None) => {
                    this.finished = true;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// The records of a read one at a time, as a [`Stream`] of `Result<ReadRecord>`.
///
/// The stream ends after the first error. When a batch's records fail to decode, none of
/// them is handed out and [`RecordStream::positions`] stays before that batch, so committing
/// the positions never skips the records that could not be read.
#[derive(Debug)]
pub struct RecordStream {
    batches: BatchStream,
    /// The records of the current batch not handed out yet.
    current: VecDeque<ReadRecord>,
    /// The current batch's partition index.
    current_idx: usize,
    /// The partition's leader epoch before the current batch.
    epoch_before: i32,
    /// Whether a record of the current batch was handed out.
    taken_from_current: bool,
    /// After a batch failed to decode: its partition index, and the position and leader
    /// epoch before it. The stream has ended.
    failed_at: Option<(usize, i64, i32)>,
}

impl RecordStream {
    /// The next record, or `None` at the end of the read.
    pub async fn next(&mut self) -> Option<Result<ReadRecord>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// Per partition: the next offset to read after the records handed out so far (see
    /// [`BatchStream::positions`]).
    pub fn positions(&self) -> Vec<PartitionPosition> {
        let mut positions = self.batches.positions().to_vec();
        if let Some((idx, offset, epoch)) = self.failed_at {
            if let Some(p) = positions.get_mut(idx) {
                p.next_offset = offset;
                p.leader_epoch = epoch;
                p.done = false;
            }
        }
        if let Some(next) = self.current.front() {
            if let Some(p) = positions.get_mut(self.current_idx) {
                p.next_offset = next.offset;
                p.done = false;
                if !self.taken_from_current {
                    p.leader_epoch = self.epoch_before;
                }
            }
        }
        positions
    }

    /// Every jump over deleted offsets so far.
    pub fn data_loss(&self) -> &[DataLoss] {
        self.batches.data_loss()
    }
}

impl Stream for RecordStream {
    type Item = Result<ReadRecord>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.failed_at.is_some() {
            return Poll::Ready(None);
        }
        loop {
            if let Some(record) = this.current.pop_front() {
                this.taken_from_current = true;
                return Poll::Ready(Some(Ok(record)));
            }
            match Pin::new(&mut this.batches).poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => {
                    this.current_idx = batch.idx;
                    this.epoch_before = this.batches.epoch_before_last;
                    match batch.to_records() {
                        Ok(records) => {
                            this.current = records.into();
                            this.taken_from_current = false;
                        }
                        Err(e) => {
                            this.failed_at = Some((
                                batch.idx,
                                this.batches.offset_before_last,
                                this.epoch_before,
                            ));
                            return Poll::Ready(Some(Err(e)));
                        }
                    }
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The background task
// ---------------------------------------------------------------------------------------------

/// One partition of the read, as the background task tracks it.
#[derive(Debug)]
struct PartState {
    topic: Arc<str>,
    topic_id: Uuid,
    partition: i32,
    /// The next offset to fetch.
    position: i64,
    end: Option<i64>,
    done: bool,
    in_flight: bool,
    /// Not fetched again before this (backoff after a failure).
    not_before: Option<Instant>,
    /// The failures in a row since the last success.
    failing: Option<Failing>,
    /// The partition max bytes to ask for: raised when a batch larger than the default was
    /// cut off.
    max_bytes: i32,
    /// Put first in the next Fetch (the broker returns at least one whole batch there).
    first: bool,
}

/// A partition in one Fetch request.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requested {
    idx: usize,
    topic: Arc<str>,
    topic_id: Uuid,
    partition: i32,
    position: i64,
    leader_epoch: i32,
    max_bytes: i32,
}

/// The request-wide Fetch fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FetchParams {
    max_wait_ms: i32,
    min_bytes: i32,
    max_bytes: i32,
    isolation: IsolationLevel,
}

/// A Fetch that came back (or failed).
struct FetchOutcome {
    leader: i32,
    requested: Vec<Requested>,
    result: Result<(Arc<str>, i16, FetchResponse)>,
}

/// The read's background task: keeps one Fetch in flight per leader and feeds the stream.
struct Driver {
    client: Client,
    options: ReadOptions,
    params: FetchParams,
    parts: Vec<PartState>,
    tx: mpsc::Sender<Event>,
    fetches: JoinSet<FetchOutcome>,
    busy_leaders: Vec<i32>,
    /// Topics of an unbounded read, watched for new partitions.
    discover: Vec<String>,
    next_discovery: Option<Instant>,
}

/// The receiver is gone: the caller dropped the stream.
struct Closed;

impl Driver {
    fn new(client: Client, plan: &Plan, options: ReadOptions, tx: mpsc::Sender<Event>) -> Driver {
        // The broker may hold a Fetch for max wait: stay well inside the request timeout.
        let request_timeout = client.config().connection.request_timeout;
        let max_wait = options.max_wait.min(request_timeout / 2);
        let params = FetchParams {
            max_wait_ms: i32::try_from(max_wait.as_millis()).unwrap_or(i32::MAX),
            min_bytes: options.min_bytes,
            max_bytes: options.fetch_max_bytes,
            isolation: plan.isolation,
        };
        let parts: Vec<PartState> = plan
            .partitions
            .iter()
            .map(|p| PartState {
                topic: Arc::from(p.topic.as_str()),
                topic_id: p.topic_id,
                partition: p.partition,
                position: p.start,
                end: p.end,
                done: p.is_empty(),
                in_flight: false,
                not_before: None,
                failing: None,
                max_bytes: options.partition_max_bytes,
                first: false,
            })
            .collect();
        let mut discover: Vec<String> = Vec::new();
        if options.partition_discovery.is_some() {
            for p in &plan.partitions {
                let unbounded = plan
                    .partitions
                    .iter()
                    .filter(|q| q.topic == p.topic)
                    .all(|q| q.end.is_none());
                if unbounded && !discover.contains(&p.topic) {
                    discover.push(p.topic.clone());
                }
            }
        }
        let next_discovery = options
            .partition_discovery
            .filter(|_| !discover.is_empty())
            .map(|every| Instant::now() + every);
        Driver {
            client,
            options,
            params,
            parts,
            tx,
            fetches: JoinSet::new(),
            busy_leaders: Vec::new(),
            discover,
            next_discovery,
        }
    }

    async fn run(mut self) {
        match self.drive().await {
            Ok(Ok(())) | Ok(Err(Closed)) => {}
            Err(e) => {
                let _ = self.tx.send(Event::Failed(e)).await;
            }
        }
    }

    async fn drive(&mut self) -> Result<Result<(), Closed>> {
        loop {
            if self.parts.iter().all(|p| p.done) && self.discover.is_empty() {
                return Ok(Ok(()));
            }
            if self.next_discovery.is_some_and(|t| t <= Instant::now()) {
                if let Err(Closed) = self.discover_partitions().await? {
                    return Ok(Err(Closed));
                }
            }
            self.issue_fetches().await?;
            let wake = self.next_wake();
            if self.fetches.is_empty() {
                match wake {
                    Some(t) => tokio::time::sleep_until(t).await,
                    // Nothing in flight, nothing waiting: every partition is done.
                    None => return Ok(Ok(())),
                }
                continue;
            }
            let joined = match wake {
                Some(t) => match tokio::time::timeout_at(t, self.fetches.join_next()).await {
                    Ok(joined) => joined,
                    Err(_) => continue,
                },
                None => self.fetches.join_next().await,
            };
            match joined {
                Some(Ok(outcome)) => {
                    if let Err(Closed) = self.handle(outcome).await? {
                        return Ok(Err(Closed));
                    }
                }
                Some(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Some(Err(_)) | None => {}
            }
        }
    }

    /// The earliest time something not in flight becomes due: a backoff ending, or the next
    /// partition discovery.
    fn next_wake(&self) -> Option<Instant> {
        let now = Instant::now();
        self.parts
            .iter()
            .filter(|p| !p.done && !p.in_flight)
            .filter_map(|p| p.not_before)
            .filter(|t| *t > now)
            .chain(self.next_discovery)
            .min()
    }

    /// Starts a Fetch for every leader without one in flight, covering its partitions that
    /// are due.
    async fn issue_fetches(&mut self) -> Result<()> {
        let now = Instant::now();
        let ready: Vec<usize> = (0..self.parts.len())
            .filter(|&i| {
                let p = &self.parts[i];
                !p.done && !p.in_flight && p.not_before.is_none_or(|t| t <= now)
            })
            .collect();
        if ready.is_empty() {
            return Ok(());
        }
        let mut topics: Vec<String> = Vec::new();
        for &i in &ready {
            if !topics.iter().any(|t| **t == *self.parts[i].topic) {
                topics.push(self.parts[i].topic.to_string());
            }
        }
        let metadata = match self.client.metadata_once(&topics).await {
            Ok(metadata) => metadata,
            Err(e) if e.is_retriable() => return self.retry_all(&ready, e),
            Err(e) => return Err(e),
        };
        let mut groups: Vec<(i32, Vec<Requested>)> = Vec::new();
        for idx in ready {
            let p = &self.parts[idx];
            let topic = metadata.iter().find(|t| *t.name == *p.topic);
            let Some((topic, pm)) = topic.and_then(|t| t.partition(p.partition).map(|pm| (t, pm)))
            else {
                let e = Error::UnknownPartition {
                    topic: p.topic.to_string(),
                    partition: p.partition,
                    partitions: topic.map_or(0, |t| t.partitions.len()),
                };
                // Metadata can lag behind a partition the plan saw: retry until the deadline.
                self.retry_all(&[idx], e)?;
                continue;
            };
            if pm.leader_id < 0 {
                let e = Error::LeaderNotAvailable {
                    topic: p.topic.to_string(),
                    partition: p.partition,
                };
                self.retry_all(&[idx], e)?;
                continue;
            }
            if self.busy_leaders.contains(&pm.leader_id) {
                continue;
            }
            let requested = Requested {
                idx,
                topic: p.topic.clone(),
                topic_id: topic_id_of(p, topic),
                partition: p.partition,
                position: p.position,
                leader_epoch: pm.leader_epoch,
                max_bytes: p.max_bytes,
            };
            match groups
                .iter_mut()
                .find(|(leader, _)| *leader == pm.leader_id)
            {
                Some((_, group)) => group.push(requested),
                None => groups.push((pm.leader_id, vec![requested])),
            }
        }
        for (leader, requested) in groups {
            // A partition stuck behind a large batch goes first: the broker returns at least
            // one whole batch for the first partition (KIP-74). A stable partition, not a
            // sort: the order is otherwise kept, without a stable sort's code.
            let (mut requested, rest): (Vec<_>, Vec<_>) =
                requested.into_iter().partition(|r| self.parts[r.idx].first);
            requested.extend(rest);
            for r in &requested {
                self.parts[r.idx].in_flight = true;
            }
            self.busy_leaders.push(leader);
            self.fetches
                .spawn(fetch(self.client.clone(), leader, requested, self.params));
        }
        Ok(())
    }

    /// Handles a Fetch that came back. `Err(Closed)` inside when the stream is gone.
    async fn handle(&mut self, outcome: FetchOutcome) -> Result<Result<(), Closed>> {
        let FetchOutcome {
            leader,
            requested,
            result,
        } = outcome;
        self.busy_leaders.retain(|l| *l != leader);
        for r in &requested {
            self.parts[r.idx].in_flight = false;
        }
        let idxs: Vec<usize> = requested.iter().map(|r| r.idx).collect();
        let (broker, version, response) = match result {
            Ok(ok) => ok,
            Err(e) if e.is_retriable() => {
                crate::log::debug!(leader, error = %e, "fetch failed; retrying");
                self.retry_all(&idxs, e)?;
                return Ok(Ok(()));
            }
            Err(e) => return Err(e),
        };
        if response.error_code != 0 {
            let e = Error::Broker {
                broker: broker.to_string(),
                api: ApiKey::FETCH,
                code: ErrorCode(response.error_code),
                message: None,
            };
            if !e.is_retriable() {
                return Err(e);
            }
            self.retry_all(&idxs, e)?;
            return Ok(Ok(()));
        }
        // Match answers to requested partitions: by topic id from v13, by name before.
        let mut by_id: HashMap<(Uuid, i32), usize> = HashMap::new();
        let mut by_name: HashMap<(&str, i32), usize> = HashMap::new();
        for (i, r) in requested.iter().enumerate() {
            by_id.insert((r.topic_id, r.partition), i);
            by_name.insert((&*r.topic, r.partition), i);
        }
        for topic in response.responses {
            for data in topic.partitions {
                let found = if version >= 13 {
                    by_id.get(&(topic.topic_id, data.partition_index))
                } else {
                    by_name.get(&(topic.topic.as_str(), data.partition_index))
                };
                let Some(&i) = found else { continue };
                if let Err(Closed) = self
                    .partition_response(&requested[i], data, &broker)
                    .await?
                {
                    return Ok(Err(Closed));
                }
            }
        }
        Ok(Ok(()))
    }

    /// Handles one partition of a Fetch response.
    async fn partition_response(
        &mut self,
        r: &Requested,
        data: kseek_protocol::messages::fetch::PartitionData,
        broker: &Arc<str>,
    ) -> Result<Result<(), Closed>> {
        let idx = r.idx;
        if self.parts[idx].done || self.parts[idx].position != r.position {
            return Ok(Ok(()));
        }
        let code = ErrorCode(data.error_code);
        if code == ErrorCode::OFFSET_OUT_OF_RANGE {
            return self.out_of_range(idx, broker).await;
        }
        if !code.is_ok() {
            let p = &self.parts[idx];
            let e = Error::Partition {
                broker: broker.to_string(),
                api: ApiKey::FETCH,
                topic: p.topic.to_string(),
                partition: p.partition,
                code,
            };
            // UNKNOWN_TOPIC_ID (100) and INCONSISTENT_TOPIC_ID (103) are metadata errors too.
            if code.is_retriable() || code == ErrorCode(100) || code == ErrorCode(103) {
                crate::log::debug!(topic = %p.topic, partition = p.partition, %code, "fetch error; retrying");
                self.retry_all(&[idx], e)?;
                return Ok(Ok(()));
            }
            return Err(e);
        }
        let decoded = match decode_partition(
            &mut self.parts[idx],
            idx,
            data,
            broker,
            self.params.isolation,
            &self.options,
        ) {
            Ok(decoded) => decoded,
            Err(failure) => {
                let DecodeFailure { before, error } = *failure;
                // The good batches before the failing one are handed out, then the error.
                if let Some(event) = before {
                    if self.tx.send(event).await.is_err() {
                        return Ok(Err(Closed));
                    }
                }
                return Err(error);
            }
        };
        let p = &mut self.parts[idx];
        p.failing = None;
        p.not_before = None;
        let Some(event) = decoded else {
            return Ok(Ok(()));
        };
        Ok(self.tx.send(event).await.map_err(|_| Closed))
    }

    /// OFFSET_OUT_OF_RANGE: jump to the log start and report the loss, or fail.
    async fn out_of_range(&mut self, idx: usize, broker: &Arc<str>) -> Result<Result<(), Closed>> {
        let p = &self.parts[idx];
        let error = Error::OffsetOutOfRange {
            broker: broker.to_string(),
            topic: p.topic.to_string(),
            partition: p.partition,
            offset: p.position,
        };
        if self.options.out_of_range == OutOfRange::Fail {
            return Err(error);
        }
        let (topic, partition) = (p.topic.clone(), p.partition);
        let log_start =
            match list_earliest(&self.client, &topic, partition, self.params.isolation).await {
                Ok(offset) => offset,
                Err(e) if e.is_retriable() => {
                    self.retry_all(&[idx], e)?;
                    return Ok(Ok(()));
                }
                Err(e) => return Err(e),
            };
        let p = &mut self.parts[idx];
        if log_start <= p.position {
            // Past the log's end (truncation), or a leader that is behind: retry until the
            // deadline, then fail.
            self.retry_all(&[idx], error)?;
            return Ok(Ok(()));
        }
        let to = p.end.map_or(log_start, |end| log_start.min(end));
        let loss = DataLoss {
            topic: p.topic.to_string(),
            partition: p.partition,
            from: p.position,
            to,
        };
        crate::log::warning!(
            topic = %p.topic,
            partition = p.partition,
            from = loss.from,
            to = loss.to,
            "offset out of range: data lost to retention; continuing at the log start"
        );
        p.position = log_start;
        p.done = p.end.is_some_and(|end| log_start >= end);
        p.failing = None;
        p.not_before = None;
        let event = Event::DataLoss {
            idx,
            loss,
            position: p.position,
            done: p.done,
        };
        Ok(self.tx.send(event).await.map_err(|_| Closed))
    }

    /// Looks for partitions added to the topics of an unbounded read; new ones start at
    /// their log start.
    // The errors it skips are only logged, so without `tracing` they go unused.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    async fn discover_partitions(&mut self) -> Result<Result<(), Closed>> {
        self.next_discovery = self
            .options
            .partition_discovery
            .map(|every| Instant::now() + every);
        let metadata = match self.client.refresh(&self.discover).await {
            Ok(metadata) => metadata,
            Err(e) => {
                crate::log::debug!(error = %e, "partition discovery failed; trying later");
                return Ok(Ok(()));
            }
        };
        for topic in metadata {
            for pm in &topic.partitions {
                let known = self
                    .parts
                    .iter()
                    .any(|p| *p.topic == *topic.name && p.partition == pm.partition);
                if known {
                    continue;
                }
                let start = match list_earliest(
                    &self.client,
                    &topic.name,
                    pm.partition,
                    self.params.isolation,
                )
                .await
                {
                    Ok(start) => start,
                    Err(e) => {
                        crate::log::debug!(topic = %topic.name, partition = pm.partition, error = %e,
                            "new partition's log start unknown; trying later");
                        continue;
                    }
                };
                crate::log::info!(topic = %topic.name, partition = pm.partition, start, "new partition joins the read");
                self.parts.push(PartState {
                    topic: Arc::from(topic.name.as_str()),
                    topic_id: topic.topic_id,
                    partition: pm.partition,
                    position: start,
                    end: None,
                    done: false,
                    in_flight: false,
                    not_before: None,
                    failing: None,
                    max_bytes: self.options.partition_max_bytes,
                    first: false,
                });
                let added = PartitionPosition {
                    topic: topic.name.clone(),
                    partition: pm.partition,
                    next_offset: start,
                    leader_epoch: -1,
                    end: None,
                    done: false,
                };
                if self.tx.send(Event::Added(added)).await.is_err() {
                    return Ok(Err(Closed));
                }
            }
        }
        Ok(Ok(()))
    }

    /// Schedules a retry of partitions `idxs` after `error`, marking their metadata stale;
    /// fails with [`Error::RetriesExhausted`] once a partition has kept failing for the
    /// client's retry deadline.
    fn retry_all(&mut self, idxs: &[usize], error: Error) -> Result<()> {
        let backoff = Backoff::from_config(self.client.config());
        let now = Instant::now();
        for &idx in idxs {
            let p = &mut self.parts[idx];
            let wait = match backoff.fail(&mut p.failing, now.into_std()) {
                Ok(wait) => wait,
                Err(Failing { since, failures }) => {
                    return Err(Error::RetriesExhausted {
                        what: format!(
                            "reading partition {} of topic {:?} at offset {}",
                            p.partition, p.topic, p.position
                        ),
                        attempts: failures,
                        elapsed: now.into_std().saturating_duration_since(since),
                        source: Box::new(error),
                    });
                }
            };
            p.not_before = Some(now + wait);
            let topic = p.topic.clone();
            self.client.invalidate(&topic);
        }
        Ok(())
    }
}

/// The topic id to fetch `p` by: the plan's, else the metadata's.
fn topic_id_of(p: &PartState, topic: &TopicMetadata) -> Uuid {
    if p.topic_id.is_zero() {
        topic.topic_id
    } else {
        p.topic_id
    }
}

/// Sends one Fetch to `leader` (on the client's connection to it).
async fn fetch(
    client: Client,
    leader: i32,
    requested: Vec<Requested>,
    params: FetchParams,
) -> FetchOutcome {
    let result = async {
        let conn = client.connection(leader).await?;
        let broker: Arc<str> = Arc::from(conn.broker());
        let negotiated = conn
            .versions()
            .version_for::<FetchRequest>()
            .map_err(|source| Error::Protocol {
                broker: broker.to_string(),
                source,
            })?;
        let version = fetch_version(negotiated, &requested);
        let request = build_fetch(&requested, version, &params);
        let response = conn.send_version(&request, version).await?;
        Ok((broker, version, response))
    }
    .await;
    FetchOutcome {
        leader,
        requested,
        result,
    }
}

/// The Fetch version to use: the negotiated one, but names (v12) when a topic id is unknown.
fn fetch_version(negotiated: i16, requested: &[Requested]) -> i16 {
    if negotiated >= 13 && requested.iter().any(|r| r.topic_id.is_zero()) {
        12
    } else {
        negotiated
    }
}

/// A sessionless Fetch (session id 0, epoch -1) for `requested`, topics in order of first
/// appearance.
fn build_fetch(requested: &[Requested], version: i16, params: &FetchParams) -> FetchRequest {
    let mut topics: Vec<FetchTopic> = Vec::new();
    for r in requested {
        let partition = FetchPartition {
            partition: r.partition,
            current_leader_epoch: if version >= 9 { r.leader_epoch } else { -1 },
            fetch_offset: r.position,
            partition_max_bytes: r.max_bytes,
            ..FetchPartition::default()
        };
        let same_topic = |t: &FetchTopic| {
            if version >= 13 {
                t.topic_id == r.topic_id
            } else {
                *t.topic == *r.topic
            }
        };
        match topics.iter_mut().find(|t| same_topic(t)) {
            Some(t) => t.partitions.push(partition),
            None => topics.push(FetchTopic {
                topic: r.topic.to_string(),
                topic_id: r.topic_id,
                partitions: vec![partition],
                ..FetchTopic::default()
            }),
        }
    }
    FetchRequest {
        max_wait_ms: params.max_wait_ms,
        min_bytes: params.min_bytes,
        max_bytes: params.max_bytes,
        isolation_level: params.isolation.0,
        session_id: 0,
        session_epoch: -1,
        topics,
        ..FetchRequest::default()
    }
}

/// Decodes one partition's records from a Fetch response, moving `p`'s position. Returns
/// the event for the stream, or `None` when nothing changed.
/// Record batches of a partition that failed to decode.
#[derive(Debug)]
struct DecodeFailure {
    /// The batches before the failing one, as a chunk ending where the failing one starts.
    before: Option<Event>,
    /// What failed, at which offset.
    error: Error,
}

fn decode_partition(
    p: &mut PartState,
    idx: usize,
    data: kseek_protocol::messages::fetch::PartitionData,
    broker: &Arc<str>,
    isolation: IsolationLevel,
    options: &ReadOptions,
) -> std::result::Result<Option<Event>, Box<DecodeFailure>> {
    let start = p.position;
    let mut reader = PartitionReader::new(data.records.unwrap_or_default(), start, options.decode);
    if let Some(end) = p.end {
        reader = reader.with_end_offset(end);
    }
    if isolation == IsolationLevel::READ_COMMITTED {
        let aborted = data.aborted_transactions.unwrap_or_default();
        reader = reader.read_committed(aborted.into_iter().map(|t| AbortedTransaction {
            producer_id: t.producer_id,
            first_offset: t.first_offset,
        }));
    }
    let mut batches = Vec::new();
    for batch in &mut reader {
        let batch = match batch {
            Ok(batch) => batch,
            Err(source) => {
                let position = reader_position_hint(start, &batches);
                let error = Error::CorruptRecords {
                    broker: broker.to_string(),
                    topic: p.topic.to_string(),
                    partition: p.partition,
                    offset: position,
                    source,
                };
                let before = (!batches.is_empty()).then(|| {
                    p.position = position;
                    Event::Chunk {
                        idx,
                        batches,
                        position,
                        done: false,
                    }
                });
                return Err(Box::new(DecodeFailure { before, error }));
            }
        };
        let last = batch.batch().next_offset();
        batches.push(FetchedBatch {
            idx,
            topic: p.topic.clone(),
            partition: p.partition,
            broker: broker.clone(),
            next_offset: p.end.map_or(last, |end| last.min(end)),
            inner: batch,
            high_watermark: data.high_watermark,
            time_filter: options.time_filter,
        });
    }
    let position = reader.next_offset();
    let done = reader.end_reached() || p.end.is_some_and(|end| position >= end);
    if position == start && !done {
        // No whole batch: a batch larger than the partition's max bytes was cut off. Ask
        // for all of it, first in the next request.
        if let Some(size) = reader.partial_batch().and_then(|b| b.declared_size) {
            let size = i32::try_from(size).unwrap_or(i32::MAX);
            if size > p.max_bytes {
                p.max_bytes = size;
                p.first = true;
            }
        }
    } else {
        p.max_bytes = options.partition_max_bytes;
        p.first = false;
    }
    p.position = position;
    p.done = done;
    if batches.is_empty() && position == start && !done {
        return Ok(None);
    }
    Ok(Some(Event::Chunk {
        idx,
        batches,
        position,
        done,
    }))
}

/// The position of the batch that failed to decode: after the last good one.
fn reader_position_hint(start: i64, batches: &[FetchedBatch]) -> i64 {
    batches
        .last()
        .map_or(start, |b| b.inner.batch().next_offset().max(start))
}

/// The log start offset of `topic`/`partition` (ListOffsets -2) from its leader.
async fn list_earliest(
    client: &Client,
    topic: &str,
    partition: i32,
    isolation: IsolationLevel,
) -> Result<i64> {
    let (conn, leader_epoch) = client.leader_connection(topic, partition).await?;
    let request = ListOffsetsRequest {
        replica_id: CONSUMER_REPLICA_ID,
        isolation_level: isolation,
        topics: vec![ListOffsetsTopic {
            name: topic.to_owned(),
            partitions: vec![ListOffsetsPartition {
                partition_index: partition,
                current_leader_epoch: leader_epoch,
                timestamp: EARLIEST,
                ..ListOffsetsPartition::default()
            }],
            ..ListOffsetsTopic::default()
        }],
        ..ListOffsetsRequest::default()
    };
    let response = conn.send(&request).await?;
    let answer = response
        .topics
        .iter()
        .filter(|t| t.name == topic)
        .flat_map(|t| &t.partitions)
        .find(|p| p.partition_index == partition);
    let partition_error = |code| Error::Partition {
        broker: conn.broker().to_owned(),
        api: ApiKey::LIST_OFFSETS,
        topic: topic.to_owned(),
        partition,
        code,
    };
    match answer {
        None => Err(partition_error(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)),
        Some(a) if a.error_code != 0 => Err(partition_error(ErrorCode(a.error_code))),
        Some(a) => Ok(a.offset),
    }
}

#[cfg(test)]
mod tests {
    use kseek_protocol::messages::fetch::{self, PartitionData};
    use kseek_protocol::records::{ControlRecordType, NewRecord, RecordBatchBuilder};

    use super::*;

    fn part(topic: &str, position: i64, end: Option<i64>) -> PartState {
        PartState {
            topic: Arc::from(topic),
            topic_id: Uuid::ZERO,
            partition: 0,
            position,
            end,
            done: false,
            in_flight: false,
            not_before: None,
            failing: None,
            max_bytes: 1024,
            first: false,
        }
    }

    fn batch(base: i64, n: i32) -> RecordBatchBuilder {
        let mut b = RecordBatchBuilder::new(base, 1_000 + base).partition_leader_epoch(3);
        for i in 0..n {
            b.push(NewRecord::new(i, i64::from(i)).value(format!("v{}", base + i64::from(i))));
        }
        b
    }

    fn wire(batches: &[RecordBatchBuilder]) -> Bytes {
        let mut out = Vec::new();
        for b in batches {
            out.extend_from_slice(&b.build().unwrap());
        }
        Bytes::from(out)
    }

    fn data(records: Bytes) -> PartitionData {
        PartitionData {
            high_watermark: 100,
            records: Some(records),
            ..PartitionData::default()
        }
    }

    fn offsets_of(event: &Event) -> Vec<i64> {
        let Event::Chunk { batches, .. } = event else {
            panic!("not a chunk: {event:?}");
        };
        batches
            .iter()
            .flat_map(|b| b.records().map(|r| r.unwrap().offset()).collect::<Vec<_>>())
            .collect()
    }

    fn requested(topic: &str, id: u8, partition: i32) -> Requested {
        Requested {
            idx: 0,
            topic: Arc::from(topic),
            topic_id: Uuid([id; 16]),
            partition,
            position: 10 + i64::from(partition),
            leader_epoch: 4,
            max_bytes: 1000,
        }
    }

    const PARAMS: FetchParams = FetchParams {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 50 << 20,
        isolation: IsolationLevel::READ_COMMITTED,
    };

    #[test]
    fn fetch_requests_group_partitions_by_topic_in_order() {
        let parts = [
            requested("b", 2, 1),
            requested("a", 1, 0),
            requested("b", 2, 0),
        ];
        let request = build_fetch(&parts, 13, &PARAMS);
        assert_eq!((request.session_id, request.session_epoch), (0, -1));
        assert_eq!(request.isolation_level, 1);
        assert_eq!(request.max_wait_ms, 500);
        assert_eq!(request.max_bytes, 50 << 20);
        let topics: Vec<(Uuid, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                (
                    t.topic_id,
                    t.partitions.iter().map(|p| p.partition).collect(),
                )
            })
            .collect();
        assert_eq!(
            topics,
            [(Uuid([2; 16]), vec![1, 0]), (Uuid([1; 16]), vec![0])]
        );
        let p = &request.topics[0].partitions[0];
        assert_eq!(
            (
                p.fetch_offset,
                p.current_leader_epoch,
                p.partition_max_bytes
            ),
            (11, 4, 1000)
        );
        // Encodes at every version the client may pick.
        for version in [4, 8, 9, 12, 13, 17, 18] {
            let request = build_fetch(&parts, version, &PARAMS);
            let mut buf = bytes::BytesMut::new();
            kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
            let expected_epoch = if version >= 9 { 4 } else { -1 };
            assert_eq!(
                request.topics[0].partitions[0].current_leader_epoch,
                expected_epoch
            );
        }
        // By name before v13: topics are told apart by name.
        let by_name = build_fetch(&parts, 12, &PARAMS);
        assert_eq!(by_name.topics[0].topic, "b");
        assert_eq!(by_name.topics.len(), 2);
    }

    #[test]
    fn unknown_topic_ids_fall_back_to_names() {
        let mut parts = vec![requested("a", 1, 0)];
        assert_eq!(fetch_version(18, &parts), 18);
        assert_eq!(fetch_version(11, &parts), 11);
        parts.push(requested("b", 0, 0));
        assert_eq!(fetch_version(18, &parts), 12);
        assert_eq!(fetch_version(12, &parts), 12);
    }

    #[test]
    fn time_filter_bounds() {
        let f = TimeFilter::new(Some(10), Some(20));
        assert!(!f.contains(9) && f.contains(10) && f.contains(19) && !f.contains(20));
        assert!(TimeFilter::default().contains(i64::MIN));
        let spec = ReadSpec::new(["t"], Start::Earliest, End::Timestamp(5));
        assert_eq!(
            TimeFilter::from_spec(&spec),
            Some(TimeFilter::new(None, Some(5)))
        );
        let spec = ReadSpec::new(["t"], Start::Earliest, End::Latest);
        assert_eq!(TimeFilter::from_spec(&spec), None);
    }

    #[test]
    fn decoding_drops_records_outside_the_range_and_moves_by_batches() {
        let options = ReadOptions::default();
        let broker: Arc<str> = Arc::from("b:1");
        let mut p = part("t", 2, Some(7));
        let event = decode_partition(
            &mut p,
            0,
            data(wire(&[batch(0, 5), batch(5, 5)])),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), [2, 3, 4, 5, 6]);
        let Event::Chunk {
            batches,
            position,
            done,
            ..
        } = &event
        else {
            unreachable!()
        };
        // The position moved past the whole second batch; what is handed out stops at the end.
        assert_eq!((*position, *done), (10, true));
        assert_eq!(batches[0].next_offset(), 5);
        assert_eq!(batches[1].next_offset(), 7);
        assert_eq!(batches[1].leader_epoch(), 3);
        assert_eq!(batches[1].high_watermark(), 100);
        assert!(p.done);

        // The time filter applies per record.
        let options = ReadOptions::default().time_filter(TimeFilter::new(Some(1_003), None));
        let mut p = part("t", 0, Some(5));
        let event = decode_partition(
            &mut p,
            0,
            data(wire(&[batch(0, 5)])),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), [3, 4]);
    }

    #[test]
    fn a_cut_off_batch_is_fetched_again_with_room_for_it() {
        let options = ReadOptions::default().partition_max_bytes(1024);
        let broker: Arc<str> = Arc::from("b:1");
        let mut big = RecordBatchBuilder::new(0, 0);
        for i in 0..50 {
            big.push(NewRecord::new(i, 0).value(vec![b'x'; 100]));
        }
        let full = wire(&[big]);
        let mut p = part("t", 0, Some(50));
        p.max_bytes = 1024;
        let event = decode_partition(
            &mut p,
            0,
            data(full.slice(..1024)),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap();
        assert!(event.is_none());
        assert_eq!(p.position, 0);
        assert!(!p.done);
        assert!(p.first);
        assert_eq!(p.max_bytes as usize, full.len());
        // Once it came whole, back to the default.
        let event = decode_partition(
            &mut p,
            0,
            data(full),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event).len(), 50);
        assert!(p.done && !p.first);
        assert_eq!(p.max_bytes, 1024);
    }

    #[test]
    fn read_committed_uses_the_aborted_transactions_of_the_response() {
        let broker: Arc<str> = Arc::from("b:1");
        let records = wire(&[
            batch(0, 2).producer(7, 0, 0).transactional(true),
            RecordBatchBuilder::control_marker(2, 0, 7, 0, ControlRecordType::ABORT, 0),
            batch(3, 2),
        ]);
        let mut d = data(records);
        d.aborted_transactions = Some(vec![fetch::AbortedTransaction {
            producer_id: 7,
            first_offset: 0,
            ..Default::default()
        }]);
        for (level, expected) in [
            (IsolationLevel::READ_COMMITTED, vec![3, 4]),
            (IsolationLevel::READ_UNCOMMITTED, vec![0, 1, 3, 4]),
        ] {
            let mut p = part("t", 0, Some(5));
            let event = decode_partition(
                &mut p,
                0,
                d.clone(),
                &broker,
                level,
                &ReadOptions::default(),
            )
            .unwrap()
            .unwrap();
            assert_eq!(offsets_of(&event), expected);
            assert!(p.done);
        }
        // A range of nothing but the aborted transaction and its marker still ends.
        let mut p = part("t", 0, Some(3));
        let event = decode_partition(
            &mut p,
            0,
            d,
            &broker,
            IsolationLevel::READ_COMMITTED,
            &ReadOptions::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), Vec::<i64>::new());
        assert!(p.done);
        assert_eq!(p.position, 3);
    }

    #[test]
    fn corrupt_records_name_the_partition_and_offset() {
        let broker: Arc<str> = Arc::from("b:1");
        let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let mut p = part("t", 0, None);
        let err = decode_partition(
            &mut p,
            0,
            data(Bytes::from(bytes)),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &ReadOptions::default(),
        )
        .unwrap_err();
        let DecodeFailure { before, error } = *err;
        assert!(
            matches!(&error, Error::CorruptRecords { topic, offset: 2, .. } if topic == "t"),
            "{error:?}"
        );
        // The good batch before the broken one is still handed out, ending at offset 2.
        let Some(Event::Chunk {
            batches,
            position: 2,
            done: false,
            ..
        }) = before
        else {
            panic!("{before:?}");
        };
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].next_offset(), 2);
    }

    /// A stream fed by hand, as the background task would.
    fn stream(ends: &[Option<i64>]) -> (BatchStream, mpsc::Sender<Event>) {
        let (tx, rx) = mpsc::channel(8);
        let positions = ends
            .iter()
            .enumerate()
            .map(|(i, end)| PartitionPosition {
                topic: "t".into(),
                partition: i as i32,
                next_offset: 0,
                leader_epoch: -1,
                end: *end,
                done: false,
            })
            .collect();
        let stream = BatchStream {
            rx,
            driver: None,
            queue: VecDeque::new(),
            positions,
            data_loss: Vec::new(),
            finished: false,
            epoch_before_last: -1,
            offset_before_last: -1,
        };
        (stream, tx)
    }

    fn chunk(idx: usize, bytes: Bytes, start: i64, end: Option<i64>) -> Event {
        let mut p = part("t", start, end);
        p.partition = idx as i32;
        decode_partition(
            &mut p,
            idx,
            data(bytes),
            &Arc::from("b:1"),
            IsolationLevel::READ_UNCOMMITTED,
            &ReadOptions::default(),
        )
        .unwrap()
        .unwrap()
    }

    #[tokio::test]
    async fn positions_follow_what_was_handed_out() {
        let (mut s, tx) = stream(&[Some(4), None]);
        // Partition 0: one batch 0..=2, then a marker-only tail moves it to its end.
        tx.send(chunk(0, wire(&[batch(0, 3)]), 0, Some(4)))
            .await
            .unwrap();
        tx.send(Event::Chunk {
            idx: 0,
            batches: vec![],
            position: 4,
            done: true,
        })
        .await
        .unwrap();
        tx.send(Event::DataLoss {
            idx: 1,
            loss: DataLoss {
                topic: "t".into(),
                partition: 1,
                from: 0,
                to: 5,
            },
            position: 5,
            done: false,
        })
        .await
        .unwrap();
        tx.send(Event::Added(PartitionPosition {
            topic: "t".into(),
            partition: 2,
            next_offset: 0,
            leader_epoch: -1,
            end: None,
            done: false,
        }))
        .await
        .unwrap();
        tx.send(chunk(1, wire(&[batch(5, 2)]), 5, None))
            .await
            .unwrap();
        tx.send(Event::Failed(Error::InvalidSpec {
            reason: "boom".into(),
        }))
        .await
        .unwrap();
        drop(tx);

        let b = s.next().await.unwrap().unwrap();
        assert_eq!((b.partition(), b.next_offset()), (0, 3));
        assert_eq!(s.positions()[0].next_offset, 3);
        assert_eq!(s.positions()[0].leader_epoch, 3);
        assert!(!s.positions()[0].done);

        let b = s.next().await.unwrap().unwrap();
        assert_eq!(b.partition(), 1);
        assert_eq!(s.positions()[0].next_offset, 4);
        assert!(s.positions()[0].done);
        assert_eq!(s.data_loss().len(), 1);
        assert_eq!(s.data_loss()[0].skipped(), 5);
        assert_eq!(s.positions()[1].next_offset, 7);
        assert_eq!(s.positions().len(), 3);

        assert!(matches!(
            s.next().await,
            Some(Err(Error::InvalidSpec { .. }))
        ));
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn records_end_at_a_batch_that_fails_and_positions_stay_before_it() {
        // Partition 0: a good batch 0..=1, then 2..=3 with its first record's length broken
        // (CRC checks off, so the batch itself decodes), then a good batch 4..=5.
        let mut bytes = wire(&[batch(0, 2)]).to_vec();
        let mut broken = wire(&[batch(2, 2)]).to_vec();
        broken[61] = 0x7f; // the first record's length: zigzag -64
        bytes.extend_from_slice(&broken);
        bytes.extend_from_slice(&wire(&[batch(4, 2)]));
        let mut options = ReadOptions::default();
        options.decode.verify_crc = false;
        let mut p = part("t", 0, Some(6));
        let event = decode_partition(
            &mut p,
            0,
            data(Bytes::from(bytes)),
            &Arc::from("b:1"),
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        let (s, tx) = stream(&[Some(6)]);
        tx.send(event).await.unwrap();
        drop(tx);
        let mut records = s.records();
        for offset in [0, 1] {
            assert_eq!(records.next().await.unwrap().unwrap().offset, offset);
        }
        assert!(records.next().await.unwrap().is_err());
        assert_eq!(records.positions()[0].next_offset, 2);
        assert_eq!(records.positions()[0].leader_epoch, 3);
        assert!(!records.positions()[0].done);
        // The stream has ended: batch 4..=5 is not handed out past the hole.
        assert!(records.next().await.is_none());
        assert_eq!(records.positions()[0].next_offset, 2);
    }

    #[tokio::test]
    async fn record_positions_point_at_the_next_record() {
        let (s, tx) = stream(&[Some(10)]);
        let mut records = s.records();
        tx.send(chunk(0, wire(&[batch(0, 5)]), 2, Some(10)))
            .await
            .unwrap();
        drop(tx);
        let r = records.next().await.unwrap().unwrap();
        assert_eq!((r.offset, r.value.as_deref()), (2, Some(&b"v2"[..])));
        assert_eq!(&*r.topic, "t");
        assert_eq!(r.leader_epoch, 3);
        assert_eq!(records.positions()[0].next_offset, 3);
        assert_eq!(records.positions()[0].leader_epoch, 3);
        records.next().await.unwrap().unwrap();
        records.next().await.unwrap().unwrap();
        assert_eq!(records.positions()[0].next_offset, 5);
        assert!(records.next().await.is_none());
        assert_eq!(records.positions()[0].next_offset, 5);
    }
}

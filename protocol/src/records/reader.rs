//! Reading one partition of a Fetch response: positions, end offsets and transactions.
//!
//! # References
//! KIP-98 (transactions, aborted-transaction index, read_committed); Kafka's
//! `CompletedFetch.nextFetchedRecord` (Java consumer) for the behaviour reproduced here;
//! READING-BY-TIME.md items 3, 5, 7 and 12.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use bytes::Bytes;

use crate::error::Result;
use crate::records::batch::{Batch, Batches, PartialBatch};
use crate::records::control::{ControlRecord, ControlRecordType};
use crate::records::record::{OwnedRecord, Record, Records, RecordsIter};
use crate::records::DecodeOptions;

/// An aborted transaction from a Fetch response partition's `AbortedTransactions` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AbortedTransaction {
    /// The producer id of the aborted transaction.
    pub producer_id: i64,
    /// The first offset of the aborted transaction.
    pub first_offset: i64,
}

/// Reads the records of one partition from one Fetch response, the way a consumer must.
///
/// Given the partition's `Records` bytes and the fetch position (the offset the fetch asked
/// for), it yields the batches that hold records to hand out, as [`FilteredBatch`]es whose
/// [`FilteredBatch::records`] skip what the application must not see:
///
/// - records below the fetch position (a batch can begin before it);
/// - records at or beyond the optional end offset ([`PartitionReader::with_end_offset`],
///   exclusive); once the end is reached the reader stops and [`PartitionReader::end_reached`]
///   says so;
/// - control batches (transaction markers), which still advance the position;
/// - under read_committed ([`PartitionReader::read_committed`]), batches of aborted
///   transactions;
/// - a trailing partial batch, cut off by the fetch's max bytes: not an error, the iteration
///   just ends there ([`PartitionReader::partial_batch`] describes it).
///
/// [`PartitionReader::next_offset`] is the position to fetch from next: after each batch it
/// moves to that batch's last offset + 1 (for magic 2, from the header's last offset delta,
/// which survives compaction; never from a record count, because compaction leaves gaps and
/// empty batches). For a legacy message it is the message's offset + 1 (a compressed
/// wrapper's offset is its last inner offset). It never moves backwards.
///
/// # Aborted transactions
///
/// The algorithm is the one of Kafka's Java consumer (`CompletedFetch`):
///
/// 1. The response's aborted transactions are kept in a min-heap ordered by first offset.
/// 2. For each batch that has a producer id (in order, including batches that lie wholly
///    below the fetch position), every aborted transaction whose first offset is at or
///    below the batch's *last* offset is popped from the heap and its producer id is added
///    to the set of aborted producers.
/// 3. A control batch whose first record is an ABORT marker removes its producer id from
///    the set: that transaction has ended, and later batches of the same producer belong
///    to a new one.
/// 4. Any other batch that is transactional and whose producer id is in the set is skipped
///    whole (the position still moves past it).
///
/// Control batches are never handed out under either isolation level.
///
/// # Example
///
/// ```
/// use bytes::Bytes;
/// use kseek_protocol::records::{
///     AbortedTransaction, ControlRecordType, DecodeOptions, NewRecord, PartitionReader,
///     RecordBatchBuilder,
/// };
///
/// let mut wire = Vec::new();
/// // A transaction of producer 7 at offsets 0..=1, then its ABORT marker at offset 2.
/// wire.extend_from_slice(&RecordBatchBuilder::new(0, 0).producer(7, 0, 0).transactional(true)
///     .record(NewRecord::new(0, 0).value("a")).record(NewRecord::new(1, 0).value("b"))
///     .build()?);
/// wire.extend_from_slice(&RecordBatchBuilder::control_marker(2, 0, 7, 0, ControlRecordType::ABORT, 0)
///     .build()?);
/// let aborted = [AbortedTransaction { producer_id: 7, first_offset: 0 }];
/// let mut reader = PartitionReader::new(Bytes::from(wire), 0, DecodeOptions::default())
///     .read_committed(aborted);
/// assert!(reader.next().is_none());
/// assert_eq!(reader.next_offset(), 3);
/// # Ok::<(), kseek_protocol::Error>(())
/// ```
#[derive(Debug)]
pub struct PartitionReader {
    batches: Batches,
    position: i64,
    end_offset: Option<i64>,
    end_reached: bool,
    done: bool,
    read_committed: bool,
    aborted: BinaryHeap<Reverse<(i64, i64)>>,
    aborted_producers: HashSet<i64>,
}

impl PartitionReader {
    /// Reads `records` (a Fetch response partition's `Records` bytes) from `fetch_offset`,
    /// as read_uncommitted, with no end offset.
    pub fn new(records: Bytes, fetch_offset: i64, options: DecodeOptions) -> PartitionReader {
        PartitionReader {
            batches: Batches::new(records, options),
            position: fetch_offset,
            end_offset: None,
            end_reached: false,
            done: false,
            read_committed: false,
            aborted: BinaryHeap::new(),
            aborted_producers: HashSet::new(),
        }
    }

    /// Reads as read_committed, skipping the records of `aborted` transactions (the
    /// partition's `AbortedTransactions` from the same Fetch response).
    pub fn read_committed(
        mut self,
        aborted: impl IntoIterator<Item = AbortedTransaction>,
    ) -> PartitionReader {
        self.read_committed = true;
        self.aborted = aborted
            .into_iter()
            .map(|t| Reverse((t.first_offset, t.producer_id)))
            .collect();
        self
    }

    /// Stops at `end` (exclusive): records at or beyond it are dropped, and the reader ends
    /// once its position has reached it or it sees a batch that begins at or beyond it.
    pub fn with_end_offset(mut self, end: i64) -> PartitionReader {
        self.end_offset = Some(end);
        self
    }

    /// The offset to fetch from next: the fetch offset, moved past every batch consumed so
    /// far (handed out, filtered or skipped).
    pub fn next_offset(&self) -> i64 {
        self.position
    }

    /// Whether the end offset was reached: the position is at or past it, or a batch
    /// beginning at or beyond it was seen (the offsets in between are compacted away).
    /// Always false without an end offset.
    pub fn end_reached(&self) -> bool {
        self.end_reached
    }

    /// The trailing partial batch that was dropped, once the iteration has ended.
    pub fn partial_batch(&self) -> Option<PartialBatch> {
        self.batches.partial_batch()
    }

    /// Moves the position past a batch that ends at `last_offset`, noting the end.
    fn advance_past(&mut self, last_offset: i64) {
        let next = last_offset.wrapping_add(1);
        if next > self.position {
            self.position = next;
        }
        if let Some(end) = self.end_offset {
            if self.position >= end {
                self.end_reached = true;
            }
        }
    }

    /// Java's `consumeAbortedTransactionsUpTo`: every aborted transaction that begins at or
    /// before `last_offset` marks its producer as aborted.
    fn consume_aborted_up_to(&mut self, last_offset: i64) {
        while let Some(Reverse((first, producer_id))) = self.aborted.peek().copied() {
            if first > last_offset {
                break;
            }
            self.aborted.pop();
            self.aborted_producers.insert(producer_id);
        }
    }

    /// Decides whether a batch's records are handed out (`Ok(true)`), updating the
    /// transaction state as Java's `nextFetchedRecord` does.
    fn transaction_filter(&mut self, batch: &Batch) -> Result<bool> {
        let producer_id = batch.producer_id();
        if !self.read_committed || producer_id < 0 {
            return Ok(!batch.is_control());
        }
        self.consume_aborted_up_to(batch.last_offset());
        if batch.is_control() {
            let records = batch.records()?;
            if let Some(first) = records.iter().next() {
                if ControlRecord::parse(&first?)?.kind == ControlRecordType::ABORT {
                    self.aborted_producers.remove(&producer_id);
                }
            }
            return Ok(false);
        }
        Ok(!(batch.is_transactional() && self.aborted_producers.contains(&producer_id)))
    }

    fn next_batch(&mut self) -> Result<Option<FilteredBatch>> {
        loop {
            if self.end_offset.is_some_and(|end| self.position >= end) {
                self.end_reached = true;
                return Ok(None);
            }
            let Some(batch) = self.batches.next().transpose()? else {
                return Ok(None);
            };
            if let (Some(end), Some(base)) = (self.end_offset, batch.base_offset()) {
                if base >= end {
                    self.end_reached = true;
                    return Ok(None);
                }
            }
            let hand_out = self.transaction_filter(&batch)?;
            let min_offset = self.position;
            let last_offset = batch.last_offset();
            if !hand_out || last_offset < min_offset {
                self.advance_past(last_offset);
                continue;
            }
            let records = batch.records()?;
            self.advance_past(last_offset);
            if records.declared_count() == Some(0) {
                // Compaction can leave a batch with no records; it still moves the position.
                continue;
            }
            return Ok(Some(FilteredBatch {
                batch,
                records,
                min_offset,
                end_offset: self.end_offset.unwrap_or(i64::MAX),
            }));
        }
    }
}

impl Iterator for PartitionReader {
    type Item = Result<FilteredBatch>;

    /// The next batch with records to hand out. After an error the reader ends; its
    /// position stays after the last good batch.
    fn next(&mut self) -> Option<Result<FilteredBatch>> {
        if self.done {
            return None;
        }
        match self.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl core::iter::FusedIterator for PartitionReader {}

/// A batch handed out by a [`PartitionReader`], with its records decoded (decompressed if
/// needed) and the reader's offset range applied.
#[derive(Clone, Debug)]
pub struct FilteredBatch {
    batch: Batch,
    records: Records,
    min_offset: i64,
    end_offset: i64,
}

impl FilteredBatch {
    /// The batch header (leader epoch, timestamps, producer, ...).
    pub fn batch(&self) -> &Batch {
        &self.batch
    }

    /// The records in the reader's range: offset at or above the fetch position and below
    /// the end offset.
    #[inline]
    pub fn records(&self) -> FilteredRecords<'_> {
        FilteredRecords {
            inner: self.records.iter(),
            min_offset: self.min_offset,
            end_offset: self.end_offset,
        }
    }

    /// All of the batch's records, without the offset range applied.
    pub fn unfiltered_records(&self) -> &Records {
        &self.records
    }

    /// The records in range as owned values sharing the batch's buffer.
    pub fn to_owned_records(&self) -> Result<Vec<OwnedRecord>> {
        self.records().map(|r| r.map(|r| r.to_owned())).collect()
    }
}

impl<'a> IntoIterator for &'a FilteredBatch {
    type Item = Result<Record<'a>>;
    type IntoIter = FilteredRecords<'a>;

    fn into_iter(self) -> FilteredRecords<'a> {
        self.records()
    }
}

/// The records of a [`FilteredBatch`] in the reader's offset range.
#[derive(Clone, Debug)]
pub struct FilteredRecords<'a> {
    inner: RecordsIter<'a>,
    min_offset: i64,
    end_offset: i64,
}

impl<'a> Iterator for FilteredRecords<'a> {
    type Item = Result<Record<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Result<Record<'a>>> {
        loop {
            match self.inner.next()? {
                Ok(r) if r.offset() < self.min_offset || r.offset() >= self.end_offset => {}
                other => return Some(other),
            }
        }
    }
}

impl core::iter::FusedIterator for FilteredRecords<'_> {}

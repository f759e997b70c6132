//! Reading one partition of a Fetch response: positions, end offsets and transactions.
//!
//! # References
//! KIP-98 (transactions, aborted-transaction index, read_committed); Kafka's
//! `CompletedFetch.nextFetchedRecord` (Java consumer) for the behaviour reproduced here;
//! docs/reading-by-time.md points 3, 5, 7 and 12.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;

use crate::error::Result;
use crate::records::batch::{Batch, Batches, PartialBatch};
use crate::records::compression::ANY_CODEC;
use crate::records::control::{ControlRecord, ControlRecordType};
use crate::records::record::{OwnedRecord, Record, Records, RecordsIter};
use crate::records::DecodeOptions;

mod ahead;

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
    /// The producers of the aborted transactions open at the position, sorted: a handful at
    /// a time (one per producer whose aborted transaction has begun and not yet ended), so a
    /// sorted `Vec` searched by halves, not a hash set (which would bring its hasher, random
    /// keys and table code into every program that reads).
    aborted_producers: Vec<i64>,
    /// The most threads that decompress batches at once ([`PartitionReader::decode_threads`]).
    threads: usize,
    /// The batches decoded ahead, when `threads` is above 1, in order (the last may be the
    /// error that ended them). In a build without codecs there is nothing to decompress, and
    /// this is never used.
    ahead: Option<std::vec::IntoIter<Result<FilteredBatch>>>,
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
            aborted_producers: Vec::new(),
            threads: 1,
            ahead: None,
        }
    }

    /// Decompresses batches on up to `threads` threads at once (this one among them): the
    /// first [`next`](Iterator::next) then decodes every batch left (CRC checks on this
    /// thread, decompression spread over the threads) and the batches are handed out in
    /// order, exactly as one at a time; after a batch that fails, nothing more. Threads are
    /// started only for a response with at least two zstd or gzip batches of 256 KiB or more
    /// in all (lz4 and snappy decompress at GB/s: threads cost them more than they save);
    /// otherwise, with 1 (the default), or in a build without codecs, each batch is decoded
    /// on this thread.
    pub fn decode_threads(mut self, threads: usize) -> PartitionReader {
        self.threads = threads.max(1);
        self
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
            if let Err(at) = self.aborted_producers.binary_search(&producer_id) {
                self.aborted_producers.insert(at, producer_id);
            }
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
                    if let Ok(at) = self.aborted_producers.binary_search(&producer_id) {
                        self.aborted_producers.remove(at);
                    }
                }
            }
            return Ok(false);
        }
        Ok(!(batch.is_transactional()
            && self.aborted_producers.binary_search(&producer_id).is_ok()))
    }

    /// The next batch with records to hand out, and the position before it, without its
    /// records decoded and without moving past it; batches passed over move the position.
    fn next_selected(&mut self) -> Result<Option<(Batch, i64)>> {
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
            return Ok(Some((batch, min_offset)));
        }
    }

    /// `batch` with its `records`, to hand out from `min_offset`; `None` when compaction
    /// left it no records (it still moved the position).
    fn filtered(&self, batch: Batch, records: Records, min_offset: i64) -> Option<FilteredBatch> {
        (records.declared_count() != Some(0)).then(|| FilteredBatch {
            batch,
            records,
            min_offset,
            end_offset: self.end_offset.unwrap_or(i64::MAX),
        })
    }

    fn next_batch(&mut self) -> Result<Option<FilteredBatch>> {
        while let Some((batch, min_offset)) = self.next_selected()? {
            let records = batch.records()?;
            self.advance_past(batch.last_offset());
            if let Some(filtered) = self.filtered(batch, records, min_offset) {
                return Ok(Some(filtered));
            }
        }
        Ok(None)
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
        if ANY_CODEC && self.threads > 1 {
            let next = self.next_ahead();
            self.done = !matches!(next, Some(Ok(_)));
            return next;
        }
        let next = self.next_batch().transpose();
        self.done = !matches!(next, Some(Ok(_)));
        next
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

    // Always: the record decoder below it is inlined (always) too, and a caller's loop that
    // does more than count (kseek-cli's `write_batch`) otherwise calls it once a record
    // (BENCHMARKS.md, "The command line's record loop").
    #[inline(always)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::records::{encode_legacy_message_set, Compression, NewRecord, RecordBatchBuilder};

    fn data(base: i64, n: i32) -> RecordBatchBuilder {
        let mut b = RecordBatchBuilder::new(base, 1_000 + base);
        for i in 0..n {
            b.push(NewRecord::new(i, i64::from(i)).value(format!("v{}", base + i64::from(i))));
        }
        b
    }

    fn txn(base: i64, n: i32, producer_id: i64) -> RecordBatchBuilder {
        data(base, n)
            .producer(producer_id, 0, 0)
            .transactional(true)
    }

    fn marker(offset: i64, producer_id: i64, kind: ControlRecordType) -> RecordBatchBuilder {
        RecordBatchBuilder::control_marker(offset, 5_000, producer_id, 0, kind, 3)
    }

    fn wire(batches: &[RecordBatchBuilder]) -> Bytes {
        let mut out = Vec::new();
        for b in batches {
            out.extend_from_slice(&b.build().unwrap());
        }
        Bytes::from(out)
    }

    /// Reads everything and returns the offsets handed out.
    fn offsets(reader: &mut PartitionReader) -> Vec<i64> {
        let mut out = Vec::new();
        for batch in reader {
            for r in &batch.unwrap() {
                out.push(r.unwrap().offset());
            }
        }
        out
    }

    fn transactions() -> Bytes {
        wire(&[
            txn(0, 2, 1),                            // 0-1: producer 1, aborted below
            txn(2, 1, 2),                            // 2: producer 2, committed below
            marker(3, 1, ControlRecordType::ABORT),  // 3
            txn(4, 2, 1),                            // 4-5: producer 1, new txn, committed
            marker(6, 2, ControlRecordType::COMMIT), // 6
            marker(7, 1, ControlRecordType::COMMIT), // 7
            data(8, 2),                              // 8-9: not transactional
        ])
    }

    const ABORTED: [AbortedTransaction; 1] = [AbortedTransaction {
        producer_id: 1,
        first_offset: 0,
    }];

    #[test]
    fn read_uncommitted_hides_only_control_batches() {
        let mut r = PartitionReader::new(transactions(), 0, DecodeOptions::default());
        assert_eq!(offsets(&mut r), [0, 1, 2, 4, 5, 8, 9]);
        assert_eq!(r.next_offset(), 10);
    }

    #[test]
    fn read_committed_skips_aborted_transactions() {
        let mut r = PartitionReader::new(transactions(), 0, DecodeOptions::default())
            .read_committed(ABORTED);
        assert_eq!(offsets(&mut r), [2, 4, 5, 8, 9]);
        assert_eq!(r.next_offset(), 10);
        // Starting later (the aborted batch still lies in the response) gives the same tail.
        let mut r = PartitionReader::new(transactions(), 5, DecodeOptions::default())
            .read_committed(ABORTED);
        assert_eq!(offsets(&mut r), [5, 8, 9]);
        // Without the aborted list, read_committed filters nothing but markers.
        let mut r =
            PartitionReader::new(transactions(), 0, DecodeOptions::default()).read_committed([]);
        assert_eq!(offsets(&mut r), [0, 1, 2, 4, 5, 8, 9]);
    }

    #[test]
    fn repeated_aborts_of_one_producer() {
        let bytes = wire(&[
            txn(0, 2, 1),
            marker(2, 1, ControlRecordType::ABORT),
            txn(3, 2, 1),
            marker(5, 1, ControlRecordType::ABORT),
            txn(6, 1, 1),
            marker(7, 1, ControlRecordType::COMMIT),
        ]);
        // The order of the list must not matter (it is a heap).
        let aborted = [
            AbortedTransaction {
                producer_id: 1,
                first_offset: 3,
            },
            AbortedTransaction {
                producer_id: 1,
                first_offset: 0,
            },
        ];
        let mut r =
            PartitionReader::new(bytes, 0, DecodeOptions::default()).read_committed(aborted);
        assert_eq!(offsets(&mut r), [6]);
        assert_eq!(r.next_offset(), 8);
    }

    #[test]
    fn several_producers_aborted_at_once_end_one_by_one() {
        // Producers 9, 3 and 7 have aborted transactions open together (they join the set out
        // of order), and producer 5's is committed; each abort marker ends only its own.
        let bytes = wire(&[
            txn(0, 1, 9),                           // 0: aborted
            txn(1, 1, 3),                           // 1: aborted
            txn(2, 1, 5),                           // 2: committed
            txn(3, 1, 7),                           // 3: aborted
            marker(4, 3, ControlRecordType::ABORT), // 4: ends 3's
            txn(5, 1, 3),                           // 5: 3's next transaction, committed
            txn(6, 1, 9),                           // 6: still 9's aborted one
            marker(7, 9, ControlRecordType::ABORT), // 7: ends 9's
            txn(8, 1, 7),                           // 8: still 7's aborted one
            marker(9, 7, ControlRecordType::ABORT), // 9: ends 7's
            marker(10, 5, ControlRecordType::COMMIT),
            marker(11, 3, ControlRecordType::COMMIT),
            txn(12, 1, 9), // 12: 9's next transaction
            marker(13, 9, ControlRecordType::COMMIT),
        ]);
        let aborted =
            [(7, 3), (9, 0), (3, 1)].map(|(producer_id, first_offset)| AbortedTransaction {
                producer_id,
                first_offset,
            });
        let mut r =
            PartitionReader::new(bytes, 0, DecodeOptions::default()).read_committed(aborted);
        assert_eq!(offsets(&mut r), [2, 5, 12]);
        assert_eq!(r.next_offset(), 14);
    }

    #[test]
    fn start_in_the_middle_of_a_batch() {
        let mut r = PartitionReader::new(wire(&[data(100, 5)]), 102, DecodeOptions::default());
        assert_eq!(offsets(&mut r), [102, 103, 104]);
        assert_eq!(r.next_offset(), 105);
        // A start beyond every batch: nothing, and the position never moves backwards.
        let mut r = PartitionReader::new(wire(&[data(100, 5)]), 200, DecodeOptions::default());
        assert_eq!(offsets(&mut r), Vec::<i64>::new());
        assert_eq!(r.next_offset(), 200);
    }

    #[test]
    fn trailing_partial_batch_is_dropped() {
        let full = wire(&[data(0, 3), data(3, 3), data(6, 3)]);
        let cut = full.slice(..full.len() - 10);
        let mut r = PartitionReader::new(cut, 0, DecodeOptions::default());
        assert_eq!(offsets(&mut r), [0, 1, 2, 3, 4, 5]);
        assert_eq!(r.next_offset(), 6);
        let p = r.partial_batch().unwrap();
        assert_eq!(p.base_offset, Some(6));
        assert!(!r.end_reached());
    }

    #[test]
    fn compaction_gaps_and_empty_batches_move_the_position() {
        let gappy = RecordBatchBuilder::new(10, 0)
            .record(NewRecord::new(0, 0).value("a"))
            .record(NewRecord::new(3, 0).value("b"))
            .record(NewRecord::new(7, 0).value("c"))
            .last_offset_delta(9);
        let empty = RecordBatchBuilder::new(20, 0).last_offset_delta(4);
        let mut r = PartitionReader::new(wire(&[gappy, empty]), 0, DecodeOptions::default());
        assert_eq!(offsets(&mut r), [10, 13, 17]);
        assert_eq!(r.next_offset(), 25);
    }

    #[test]
    fn end_offset_is_exclusive() {
        let bytes = wire(&[data(0, 5), data(5, 5)]);
        let mut r =
            PartitionReader::new(bytes.clone(), 0, DecodeOptions::default()).with_end_offset(7);
        assert_eq!(offsets(&mut r), [0, 1, 2, 3, 4, 5, 6]);
        assert!(r.end_reached());
        assert_eq!(r.next_offset(), 10);

        let mut r =
            PartitionReader::new(bytes.clone(), 0, DecodeOptions::default()).with_end_offset(5);
        assert_eq!(offsets(&mut r), [0, 1, 2, 3, 4]);
        assert!(r.end_reached());
        assert_eq!(r.next_offset(), 5);

        let mut r =
            PartitionReader::new(bytes.clone(), 0, DecodeOptions::default()).with_end_offset(50);
        assert_eq!(offsets(&mut r).len(), 10);
        assert!(!r.end_reached());

        // start >= end: nothing to read.
        let mut r = PartitionReader::new(bytes, 3, DecodeOptions::default()).with_end_offset(3);
        assert_eq!(offsets(&mut r), Vec::<i64>::new());
        assert!(r.end_reached());
        assert_eq!(r.next_offset(), 3);
    }

    #[test]
    fn end_inside_a_compaction_gap_is_reached() {
        let bytes = wire(&[data(0, 5), data(12, 3)]);
        let mut r = PartitionReader::new(bytes, 0, DecodeOptions::default()).with_end_offset(8);
        assert_eq!(offsets(&mut r), [0, 1, 2, 3, 4]);
        assert!(r.end_reached());
        assert_eq!(r.next_offset(), 5);
    }

    #[test]
    fn end_reached_on_control_batches() {
        // The end falls on a transaction marker: it is reached although no record is at it.
        let bytes = wire(&[txn(0, 2, 1), marker(2, 1, ControlRecordType::COMMIT)]);
        let mut r = PartitionReader::new(bytes, 0, DecodeOptions::default()).with_end_offset(3);
        assert_eq!(offsets(&mut r), [0, 1]);
        assert!(r.end_reached());
        assert_eq!(r.next_offset(), 3);
    }

    #[test]
    fn legacy_positions() {
        let msgs: Vec<_> = (0..4)
            .map(|i| OwnedRecord {
                offset: 50 + i,
                timestamp: i,
                key: None,
                value: Some(Bytes::from(vec![b'x'; 3])),
                headers: Vec::new(),
            })
            .collect();
        let bytes = encode_legacy_message_set(1, Compression::None, None, &msgs).unwrap();
        let mut r = PartitionReader::new(bytes, 51, DecodeOptions::default());
        assert_eq!(offsets(&mut r), [51, 52, 53]);
        assert_eq!(r.next_offset(), 54);
        #[cfg(feature = "gzip")]
        {
            let bytes = encode_legacy_message_set(1, Compression::Gzip, None, &msgs).unwrap();
            let mut r = PartitionReader::new(bytes.clone(), 51, DecodeOptions::default());
            assert_eq!(offsets(&mut r), [51, 52, 53]);
            assert_eq!(r.next_offset(), 54);
            let mut r =
                PartitionReader::new(bytes, 0, DecodeOptions::default()).with_end_offset(52);
            assert_eq!(offsets(&mut r), [50, 51]);
            assert!(r.end_reached());
        }
    }

    #[test]
    fn error_stops_the_reader_after_good_batches() {
        let good = data(0, 2).build().unwrap();
        let mut bad = data(2, 2).build().unwrap().to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let mut all = good.to_vec();
        all.extend_from_slice(&bad);
        let mut r = PartitionReader::new(Bytes::from(all), 0, DecodeOptions::default());
        assert!(r.next().unwrap().is_ok());
        assert!(matches!(
            r.next().unwrap().unwrap_err(),
            Error::CrcMismatch { base_offset: 2, .. }
        ));
        assert!(r.next().is_none());
        assert_eq!(r.next_offset(), 2);
    }

    #[test]
    fn owned_records_and_batch_header() {
        let bytes = wire(&[data(0, 3).partition_leader_epoch(4)]);
        let mut r = PartitionReader::new(bytes.clone(), 1, DecodeOptions::default());
        let batch = r.next().unwrap().unwrap();
        assert_eq!(batch.batch().partition_leader_epoch(), 4);
        assert_eq!(batch.unfiltered_records().declared_count(), Some(3));
        let owned = batch.to_owned_records().unwrap();
        assert_eq!(owned.len(), 2);
        assert_eq!(owned[0].offset, 1);
        assert_eq!(owned[0].value.as_deref(), Some(&b"v1"[..]));
        assert_eq!(owned[1].timestamp, 1_002);
    }
}

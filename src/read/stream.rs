//! The tokio side of what a read hands out: [`BatchStream`] of [`FetchedBatch`]es,
//! [`RecordStream`] of [`ReadRecord`]s, and where the read is in each partition, kept by one
//! [`Positions`] both streams share (the types themselves are in `read::batch`).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::futures::Notified;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::read::batch::{DataLoss, FetchedBatch, PartitionPosition, ReadRecord};
use crate::read::machine::{Chunk, Output};
#[cfg(doc)]
use crate::read::options::{OutOfRange, ReadOptions};

/// Per partition, where a read is after what was handed out, and the data it lost: the one
/// owner of the position bookkeeping of [`BatchStream`] and [`RecordStream`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Positions {
    positions: Vec<PartitionPosition>,
    data_loss: Vec<DataLoss>,
    /// The partition of the last batch handed out, as it was before that batch.
    before_last: Option<Before>,
}

/// A partition's position and leader epoch before a batch (what to commit when that batch
/// could not be processed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Before {
    pub(crate) idx: usize,
    pub(crate) next_offset: i64,
    pub(crate) leader_epoch: i32,
}

impl Positions {
    /// Positions starting at `positions` (plan order), with no loss.
    pub(crate) fn new(positions: Vec<PartitionPosition>) -> Self {
        Positions {
            positions,
            ..Positions::default()
        }
    }

    /// Every partition's position, in plan order, then partitions discovered later.
    pub(crate) fn all(&self) -> &[PartitionPosition] {
        &self.positions
    }

    /// Every jump over deleted offsets so far.
    pub(crate) fn data_loss(&self) -> &[DataLoss] {
        &self.data_loss
    }

    /// The partition of the last batch handed out, before that batch.
    pub(crate) fn before_last(&self) -> Option<Before> {
        self.before_last
    }

    /// A partition found by discovery joins, at the next index.
    pub(crate) fn add(&mut self, position: PartitionPosition) {
        self.positions.push(position);
    }

    /// Offsets were lost to retention.
    pub(crate) fn lose(&mut self, loss: DataLoss) {
        self.data_loss.push(loss);
    }

    /// `batch` is handed out: its partition moves past it, and what it was before is kept.
    pub(crate) fn hand_out(&mut self, batch: &FetchedBatch) {
        let before = self.positions.get(batch.idx);
        self.before_last = Some(Before {
            idx: batch.idx,
            next_offset: before.map_or(-1, |p| p.next_offset),
            leader_epoch: before.map_or(-1, |p| p.leader_epoch),
        });
        self.advance(
            batch.idx,
            batch.next_offset,
            false,
            Some(batch.leader_epoch()),
        );
    }

    /// Partition `idx` moves to `position` (never back, never past its end), is `done` if so
    /// told, and takes `epoch` if it is one.
    pub(crate) fn advance(&mut self, idx: usize, position: i64, done: bool, epoch: Option<i32>) {
        if let Some(p) = self.positions.get_mut(idx) {
            let position = p.end.map_or(position, |end| position.min(end));
            p.next_offset = p.next_offset.max(position);
            p.done |= done;
            if let Some(epoch) = epoch.filter(|e| *e >= 0) {
                p.leader_epoch = epoch;
            }
        }
    }

    /// A copy in which each partition of `rewinds` is back at an offset not handed out yet
    /// (so not done), with that leader epoch where one is given.
    pub(crate) fn rewound(
        &self,
        rewinds: impl IntoIterator<Item = (usize, i64, Option<i32>)>,
    ) -> Vec<PartitionPosition> {
        let mut positions = self.positions.clone();
        for (idx, next_offset, epoch) in rewinds {
            if let Some(p) = positions.get_mut(idx) {
                p.next_offset = next_offset;
                p.done = false;
                if let Some(epoch) = epoch {
                    p.leader_epoch = epoch;
                }
            }
        }
        positions
    }
}

/// What a [`BatchStream`] has handed out, shared with the read's driver: the record bytes of
/// every batch taken so far ([`FetchedBatch::buffered_bytes`]), and a wake-up for a driver
/// waiting for the caller to make room under [`ReadOptions::max_buffered_bytes`].
#[derive(Debug, Default)]
pub(crate) struct Budget {
    taken: AtomicU64,
    notify: Notify,
}

impl Budget {
    /// The record bytes handed out so far (a running total).
    pub(crate) fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }

    /// Completes once a batch is handed out after the last completion (or has been since).
    pub(crate) fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }

    /// `bytes` more are handed out: a waiting driver may fetch again.
    fn take(&self, bytes: u64) {
        self.taken.fetch_add(bytes, Ordering::Release);
        // With no driver waiting this leaves one permit, so a wait that starts just after
        // the driver read `taken` ends at once.
        self.notify.notify_one();
    }
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

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

/// The batches of a read, as a [`Stream`] of `Result<FetchedBatch>`.
///
/// Batches of one partition come in offset order; partitions interleave. The stream ends
/// when every partition is done (never for an unbounded read) or after the first error.
/// Dropping it stops the read.
#[derive(Debug)]
pub struct BatchStream {
    rx: mpsc::Receiver<Output>,
    driver: Option<JoinHandle<()>>,
    budget: Arc<Budget>,
    queue: VecDeque<Queued>,
    positions: Positions,
    finished: bool,
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        if let Some(driver) = &self.driver {
            driver.abort();
        }
    }
}

impl BatchStream {
    /// A stream of what the read's driver sends on `rx`, starting at `positions`, counting
    /// the bytes it hands out in `budget`; `driver` is aborted when the stream is dropped.
    pub(crate) fn new(
        rx: mpsc::Receiver<Output>,
        driver: Option<JoinHandle<()>>,
        budget: Arc<Budget>,
        positions: Vec<PartitionPosition>,
    ) -> Self {
        BatchStream {
            rx,
            driver,
            budget,
            queue: VecDeque::new(),
            positions: Positions::new(positions),
            finished: false,
        }
    }

    /// The next batch, or `None` at the end of the read (a convenience for
    /// `StreamExt::next`).
    pub async fn next(&mut self) -> Option<Result<FetchedBatch>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// Per partition: the next offset to read (what to commit after processing everything
    /// handed out so far), the leader epoch of the last batch handed out, and whether the
    /// partition is done. In plan order, then partitions discovered later.
    pub fn positions(&self) -> &[PartitionPosition] {
        self.positions.all()
    }

    /// [`positions`](Self::positions) for a caller that stopped inside the last batch handed
    /// out: that batch's partition is at `next_offset`, the first of its records not
    /// processed, or back where it was before the batch when `next_offset` is `None` (none of
    /// its records was processed, say because one failed to decode). What to commit then.
    pub fn positions_within_last(&self, next_offset: Option<i64>) -> Vec<PartitionPosition> {
        let rewind = self.positions.before_last().map(|b| match next_offset {
            Some(next) => (b.idx, next, None),
            None => (b.idx, b.next_offset, Some(b.leader_epoch)),
        });
        self.positions.rewound(rewind)
    }

    /// Every jump over deleted offsets so far ([`OutOfRange::ResetToLogStart`]).
    pub fn data_loss(&self) -> &[DataLoss] {
        self.positions.data_loss()
    }

    /// The records one at a time, with their topic and partition.
    pub fn records(self) -> RecordStream {
        RecordStream {
            batches: self,
            current: VecDeque::new(),
            current_before: None,
            taken_from_current: false,
            failed_at: None,
        }
    }

    fn take_output(&mut self, output: Output) -> Option<Error> {
        match output {
            Output::Chunk(chunk) => {
                let Chunk {
                    idx,
                    position,
                    done,
                    ..
                } = chunk;
                self.queue
                    .extend(chunk.batches.into_iter().map(Queued::Batch));
                self.queue.push_back(Queued::Position {
                    idx,
                    position,
                    done,
                });
            }
            Output::DataLoss {
                idx,
                loss,
                position,
                done,
            } => {
                self.positions.lose(loss);
                self.queue.push_back(Queued::Position {
                    idx,
                    position,
                    done,
                });
            }
            Output::Added(p) => self.positions.add(p),
            Output::Failed(e) => return Some(e),
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
                    this.positions.hand_out(&b);
                    this.budget.take(b.buffered_bytes());
                    return Poll::Ready(Some(Ok(b)));
                }
                Some(Queued::Position {
                    idx,
                    position,
                    done,
                }) => {
                    this.positions.advance(idx, position, done, None);
                    continue;
                }
                None => {}
            }
            if this.finished {
                return Poll::Ready(None);
            }
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(output)) => {
                    if let Some(error) = this.take_output(output) {
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
    /// The current batch's partition as it was before that batch.
    current_before: Option<Before>,
    /// Whether a record of the current batch was handed out.
    taken_from_current: bool,
    /// After a batch failed to decode: its partition as it was before it. The stream has
    /// ended.
    failed_at: Option<Before>,
}

impl RecordStream {
    /// The next record, or `None` at the end of the read.
    pub async fn next(&mut self) -> Option<Result<ReadRecord>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// Per partition: the next offset to read after the records handed out so far (see
    /// [`BatchStream::positions`]).
    pub fn positions(&self) -> Vec<PartitionPosition> {
        let failed = self
            .failed_at
            .map(|b| (b.idx, b.next_offset, Some(b.leader_epoch)));
        // The current batch's records not handed out yet: the partition is at the first.
        let current = self
            .current
            .front()
            .zip(self.current_before)
            .map(|(next, b)| {
                let epoch = (!self.taken_from_current).then_some(b.leader_epoch);
                (b.idx, next.offset, epoch)
            });
        self.batches
            .positions
            .rewound(failed.into_iter().chain(current))
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
                    this.current_before = this.batches.positions.before_last();
                    match batch.to_records() {
                        Ok(records) => {
                            this.current = records.into();
                            this.taken_from_current = false;
                        }
                        Err(e) => {
                            this.failed_at = this.current_before;
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

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use crate::error::ErrorKind;
    use crate::plan::IsolationLevel;
    use crate::read::machine::decode_partition;
    use crate::read::machine::tests::{batch, data, part, wire};
    use crate::read::options::ReadOptions;

    use super::*;

    /// A stream fed by hand, as the background task would.
    fn stream(ends: &[Option<i64>]) -> (BatchStream, mpsc::Sender<Output>) {
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
        (BatchStream::new(rx, None, Arc::default(), positions), tx)
    }

    fn chunk(idx: usize, bytes: Bytes, start: i64, end: Option<i64>) -> Output {
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
        tx.send(Output::Chunk(Chunk {
            idx: 0,
            batches: vec![],
            position: 4,
            done: true,
        }))
        .await
        .unwrap();
        tx.send(Output::DataLoss {
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
        tx.send(Output::Added(PartitionPosition {
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
        tx.send(Output::Failed(
            ErrorKind::InvalidSpec {
                reason: "boom".into(),
            }
            .into(),
        ))
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
            s.next().await.map(|r| r.map_err(Error::into_kind)),
            Some(Err(ErrorKind::InvalidSpec { .. }))
        ));
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn handing_out_a_batch_counts_its_bytes_and_wakes_a_waiting_driver() {
        let (tx, rx) = mpsc::channel(8);
        let budget = Arc::new(Budget::default());
        let (mut s, _) = stream(&[Some(10)]);
        s = BatchStream::new(rx, None, budget.clone(), s.positions().to_vec());
        tx.send(chunk(0, wire(&[batch(0, 2), batch(2, 3)]), 0, Some(10)))
            .await
            .unwrap();
        // A driver waiting for room: not woken while nothing is taken.
        let mut woken = std::pin::pin!(budget.notified());
        async fn poll_once(mut n: Pin<&mut Notified<'_>>) -> bool {
            use std::future::Future;
            poll_fn(|cx| Poll::Ready(n.as_mut().poll(cx).is_ready())).await
        }
        assert!(!poll_once(woken.as_mut()).await);
        assert_eq!(budget.taken(), 0);
        let first = s.next().await.unwrap().unwrap();
        assert_eq!(budget.taken(), first.buffered_bytes());
        assert_eq!(first.buffered_bytes(), wire(&[batch(0, 2)]).len() as u64);
        assert!(poll_once(woken.as_mut()).await);
        // A batch taken while no driver waits leaves a permit: the next wait ends at once.
        let second = s.next().await.unwrap().unwrap();
        assert_eq!(
            budget.taken(),
            first.buffered_bytes() + second.buffered_bytes()
        );
        assert!(poll_once(std::pin::pin!(budget.notified())).await);
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
    async fn positions_within_the_last_batch_point_at_its_first_record_not_processed() {
        let (mut s, tx) = stream(&[Some(10), Some(10)]);
        tx.send(chunk(0, wire(&[batch(0, 5)]), 2, Some(10)))
            .await
            .unwrap();
        tx.send(chunk(1, wire(&[batch(0, 4)]), 0, Some(10)))
            .await
            .unwrap();
        drop(tx);
        s.next().await.unwrap().unwrap();
        // Stopped after offset 3 of partition 0's batch 2..=4.
        let within = s.positions_within_last(Some(4));
        assert_eq!((within[0].next_offset, within[0].leader_epoch), (4, 3));
        assert!(!within[0].done);
        assert_eq!(s.positions()[0].next_offset, 5);
        s.next().await.unwrap().unwrap();
        // Partition 1's batch not processed at all: back before it, before any epoch.
        let within = s.positions_within_last(None);
        assert_eq!((within[1].next_offset, within[1].leader_epoch), (0, -1));
        assert_eq!(within[0], s.positions()[0]);
        assert_eq!(s.positions()[1].next_offset, 4);
        assert!(s.next().await.is_none());
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

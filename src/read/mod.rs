//! Reading a resolved [`Plan`]: Fetch from every partition's leader until each partition's
//! position reaches its end, handing out the record batches as they arrive.
//!
//! [`Client::read`] starts a background task that keeps one Fetch in flight per leader broker,
//! covering every partition of that leader with something left to read. It fetches ahead of
//! the caller: the next Fetch to a broker goes out as soon as the previous response is decoded
//! (its partitions' next positions are known), while the caller is still working through its
//! batches, so fetch round trips overlap with the caller's processing. What it may fetch
//! ahead is bounded by [`ReadOptions::max_buffered_bytes`] (default 64 MiB) of record bytes
//! decoded and waiting for the caller: while that many wait, no new Fetch starts, and the
//! first batch the caller takes ([`BatchStream::next`]) that brings them below the bound
//! starts fetching again. The responses of Fetches already in flight (one per leader) come on
//! top, and a batch larger than the whole bound still passes, alone.
//! [`ReadOptions::buffer`] bounds the number of partition responses waiting as well (default
//! 1024). The task is a thin
//! async driver (`driver.rs`) around a pure state machine (`machine/`) that decides every
//! request, retry and output from the answers and the time it is given. Batches come out of a
//! [`BatchStream`] without any per-record copy (the records are views into the Fetch response,
//! or into one decompressed buffer per batch); [`BatchStream::records`] turns it into a
//! [`RecordStream`] of owned [`ReadRecord`]s for convenience.
//!
//! How a read ends, what it skips and what it retries (docs/reading-by-time.md points 3–7 and
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
//!   or ends the read with [`ErrorKind::OffsetOutOfRange`] ([`OutOfRange::Fail`]).
//! - Fetches go in fetch sessions (KIP-227, Fetch v7+; [`ReadOptions::fetch_sessions`],
//!   default on): per leader, the first Fetch is full and asks for a session; later ones
//!   name only the partitions whose position (or max bytes, or leader epoch) changed, and
//!   forget the partitions that left the read (done, backing off, moved away). A partition
//!   the incremental answer leaves out had nothing new. FETCH_SESSION_ID_NOT_FOUND and
//!   INVALID_FETCH_SESSION_EPOCH (and FETCH_SESSION_TOPIC_ID_ERROR) drop the session and
//!   fetch in full at once, from the same positions; a failed Fetch (say, a broken
//!   connection) starts a new session too. A broker that gives no session (id 0) gets full
//!   fetches.
//! - An unbounded read (end `None`) follows the log forever, long-polling with the max wait,
//!   and starts partitions added to its topics later at their beginning.
//!
//! Offsets between two timestamps are not exactly the records between them when producers
//! chose out-of-order CreateTime timestamps; [`ReadOptions::time_filter`] drops, per record,
//! those outside the time range.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_Fetch>, KIP-74 (fetch max bytes), KIP-227
//! (fetch sessions), KIP-98
//! (transactions), KIP-320 (leader epoch fencing), KIP-516 (topic ids in Fetch v13+);
//! docs/reading-by-time.md.

mod batch;
mod driver;
pub(crate) mod machine;
mod options;
mod stream;

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::client::Client;
#[cfg(doc)]
use crate::error::{Error, ErrorKind};
use crate::plan::Plan;
use driver::Driver;
use stream::Budget;

pub use batch::{BatchRecords, DataLoss, FetchedBatch, PartitionPosition, ReadRecord};
pub use options::{OutOfRange, ReadOptions, TimeFilter};
pub use stream::{BatchStream, RecordStream};

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
        let budget = Arc::new(Budget::default());
        let driver = if positions.iter().all(|p| p.done) {
            // Nothing to fetch: the stream ends at once (dropping `tx` closes it).
            None
        } else {
            let driver = Driver::new(self.clone(), &plan, options, tx, budget.clone());
            Some(crate::task::spawn(Box::pin(driver.run())))
        };
        BatchStream::new(rx, driver, budget, positions)
    }
}

/// The start of a virtual clock for tests that drive the [`machine`] by hand: any instant
/// works, since the machine only ever compares the times it is given.
#[cfg(test)]
pub(crate) fn virtual_epoch() -> tokio::time::Instant {
    tokio::time::Instant::now()
}

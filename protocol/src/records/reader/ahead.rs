//! Decoding a partition's batches ahead, their decompression spread over several threads
//! ([`PartitionReader::decode_threads`]).
//!
//! The batches are independent: each is checksummed and compressed on its own. So the reader
//! first walks the response on its own thread as it always does (headers, CRC checks,
//! positions, end offsets, transactions), keeping the batches it would hand out; their
//! records are then decoded (decompressed) by up to `threads` threads, each taking the next
//! batch not yet taken; last, the batches are handed out in order, and a batch that failed
//! ends them as it would one at a time: the position stays before it. What is held at once
//! is what the response decodes to, as when the caller collects the batches one by one.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{FilteredBatch, PartitionReader};
use crate::error::Result;
use crate::records::batch::Batch;
use crate::records::compression::Compression;
use crate::records::record::Records;

#[cfg(test)]
mod tests;

/// The fewest compressed bytes in one response worth starting threads for: below it the
/// thread starts (tens of microseconds each) cost about what they save.
const MIN_PARALLEL_BYTES: usize = 256 << 10;

/// Whether batches of `codec` are worth decompressing on other threads: zstd and gzip (a few
/// hundred MB/s on one core in pure Rust), not lz4 and snappy (GB/s), whose batches are then
/// read by the caller from another core's cache. Measured with `benches/e2e` (BENCHMARKS.md,
/// "Decompression on several threads"): on D5 (zstd) 2.85 s against 4.22 s on one thread;
/// on D4 (lz4) 0.885 s against 0.845 s, at 1.6 times the CPU.
fn worth_threads(codec: Compression) -> bool {
    matches!(codec, Compression::Zstd | Compression::Gzip)
}

impl PartitionReader {
    /// The next batch decoded ahead, decoding them all on the first call.
    pub(super) fn next_ahead(&mut self) -> Option<Result<FilteredBatch>> {
        if self.ahead.is_none() {
            let decoded = self.decode_ahead();
            self.ahead = Some(decoded.into_iter());
        }
        self.ahead.as_mut()?.next()
    }

    fn decode_ahead(&mut self) -> Vec<Result<FilteredBatch>> {
        let mut selected = Vec::new();
        let mut ended = None;
        loop {
            match self.next_selected() {
                Ok(Some((batch, min_offset))) => {
                    self.advance_past(batch.last_offset());
                    selected.push((batch, min_offset));
                }
                Ok(None) => break,
                Err(e) => {
                    ended = Some(e);
                    break;
                }
            }
        }
        let records = records_of(&selected, self.threads);
        let mut out = Vec::with_capacity(selected.len() + 1);
        for ((batch, min_offset), records) in selected.into_iter().zip(records) {
            match records {
                Ok(records) => out.extend(self.filtered(batch, records, min_offset).map(Ok)),
                Err(e) => {
                    // As one at a time: the position stays before the batch that failed
                    // (no batch before it could have reached the end offset).
                    self.position = min_offset;
                    self.end_reached = false;
                    out.push(Err(e));
                    return out;
                }
            }
        }
        out.extend(ended.map(Err));
        out
    }
}

/// The records of each of `batches`, in order: decompressed by up to `threads` threads when
/// enough of them are compressed with a codec [`worth_threads`], else on this thread.
fn records_of(batches: &[(Batch, i64)], threads: usize) -> Vec<Result<Records>> {
    let compressed = batches
        .iter()
        .filter(|(b, _)| worth_threads(b.compression()));
    let (count, bytes) = compressed.fold((0, 0), |(n, bytes), (b, _)| {
        (n + 1, bytes + b.size_in_bytes())
    });
    let threads = threads.min(count);
    if threads < 2 || bytes < MIN_PARALLEL_BYTES {
        return batches.iter().map(|(b, _)| b.records()).collect();
    }
    let taken = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = taken.fetch_add(1, Ordering::Relaxed);
            let Some((batch, _)) = batches.get(i) else {
                return done;
            };
            done.push((i, batch.records()));
        }
    };
    let mut slots: Vec<Option<Result<Records>>> = (0..batches.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        // A thread the system refuses to start leaves its share to the others.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mine = work();
        let theirs = helpers.into_iter().flat_map(|h| match h.join() {
            Ok(done) => done,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        for (i, records) in mine.into_iter().chain(theirs) {
            slots[i] = Some(records);
        }
    });
    // Every index was taken by exactly one thread.
    slots.into_iter().flatten().collect()
}

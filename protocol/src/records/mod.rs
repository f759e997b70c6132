//! Record batches: zero-copy decoding of a Fetch partition's `Records` bytes, transaction
//! filtering, fetch positions, and an encoder for tests and benchmarks.
//!
//! The layers, from the bottom:
//! - [`Batches`] splits the bytes into [`Batch`]es (magic-2 [`RecordBatch`]es or legacy
//!   [`LegacyBatch`]es) without copying; headers are parsed and the CRC checked, records are
//!   not touched. A trailing partial batch ends the iteration quietly.
//! - [`Batch::records`] gives [`Records`], which owns the record bytes (a slice of the input,
//!   or one decompressed buffer) and iterates [`Record`]s whose key, value and headers are
//!   `&[u8]` views into it. The uncompressed path allocates nothing per record.
//! - [`PartitionReader`] does what a consumer needs on top: drops records below the fetch
//!   position and at or beyond an end offset, hides control batches, filters aborted
//!   transactions under read_committed, and reports the next fetch position.
//! - [`RecordBatchBuilder`] and [`encode_legacy_message_set`] write batches (all codecs).
//!
//! # Example
//!
//! ```
//! use bytes::Bytes;
//! use kseek_protocol::records::{
//!     Compression, DecodeOptions, NewRecord, PartitionReader, RecordBatchBuilder,
//! };
//!
//! // Two batches as a broker would return them: offsets 100..=101, then 102.
//! let mut wire = Vec::new();
//! wire.extend_from_slice(
//!     &RecordBatchBuilder::new(100, 1_700_000_000_000)
//!         .record(NewRecord::new(0, 0).key("k1").value("v1"))
//!         .record(NewRecord::new(1, 5).value("v2").header("h", "x"))
//!         .build()?,
//! );
//! wire.extend_from_slice(
//!     &RecordBatchBuilder::new(102, 1_700_000_000_010)
//!         .compression(Compression::None) // or Gzip, Snappy, Lz4, Zstd (cargo features)
//!         .record(NewRecord::new(0, 0).value("v3"))
//!         .build()?,
//! );
//!
//! // Read from offset 101 (the fetch position), as read_uncommitted.
//! let mut reader = PartitionReader::new(Bytes::from(wire), 101, DecodeOptions::default());
//! let mut seen = Vec::new();
//! for batch in &mut reader {
//!     let batch = batch?;
//!     for record in batch.records() {
//!         let record = record?;
//!         seen.push((record.offset(), record.value().unwrap_or_default().to_vec()));
//!     }
//! }
//! assert_eq!(seen, [(101, b"v2".to_vec()), (102, b"v3".to_vec())]);
//! assert_eq!(reader.next_offset(), 103);
//! # Ok::<(), kseek_protocol::Error>(())
//! ```
//!
//! # References
//! <https://kafka.apache.org/documentation/#recordbatch>, KIP-98 (transactions, control
//! batches), KIP-32/KIP-31 (magic 1 timestamps and relative offsets), KIP-110 (zstd).

mod batch;
pub mod compression;
mod control;
mod crc32;
mod encode;
mod reader;
mod record;

pub use batch::{
    Batch, Batches, LegacyBatch, PartialBatch, RecordBatch, TimestampType, LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
};
pub use compression::Compression;
pub use control::{ControlRecord, ControlRecordType};
pub use crc32::crc32c;
pub use encode::{encode_legacy_message_set, NewRecord, RecordBatchBuilder};
pub use reader::{AbortedTransaction, FilteredBatch, FilteredRecords, PartitionReader};
pub use record::{Header, Headers, OwnedHeader, OwnedRecord, Record, Records, RecordsIter};

/// How record batches are decoded.
///
/// ```
/// use kseek_protocol::records::DecodeOptions;
///
/// let trusting = DecodeOptions { verify_crc: false, ..DecodeOptions::default() };
/// assert_eq!(trusting.max_decompressed_size, 64 << 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Check each batch's CRC (CRC-32C for magic 2, CRC-32 for legacy messages) before
    /// handing it out. On by default, as Java's `check.crcs`.
    pub verify_crc: bool,
    /// The most bytes one batch may decompress to; more is
    /// [`Error::DecompressedTooLarge`](crate::Error::DecompressedTooLarge), so a
    /// decompression bomb is an error, not an allocation. Default 64 MiB.
    pub max_decompressed_size: usize,
    /// The largest batch size (length field + 12) accepted; a larger declared length is an
    /// error rather than a partial batch. Default 1 GiB: a broker never sends a batch that
    /// large, so such a length is corruption.
    pub max_batch_size: usize,
}

impl Default for DecodeOptions {
    fn default() -> DecodeOptions {
        DecodeOptions {
            verify_crc: true,
            max_decompressed_size: 64 << 20,
            max_batch_size: 1 << 30,
        }
    }
}

//! Splitting a partition's `Records` bytes into batches, and reading batch headers.
//!
//! [`Batches`] walks the bytes one batch at a time without copying: each [`Batch`] keeps a
//! [`Bytes`] slice of the input. A magic-2 [`RecordBatch`] has its whole header parsed up
//! front (offsets, timestamps, producer fields, attributes) so a reader can skip batches by
//! offset or time without touching or decompressing the records. The CRC is checked (by
//! default) before a batch is handed out, because the header fields it covers drive those
//! decisions. Legacy magic 0/1 message sets come out as [`LegacyBatch`]es, one per shallow
//! message.
//!
//! # References
//! <https://kafka.apache.org/documentation/#recordbatch>,
//! <https://kafka.apache.org/documentation/#messageset> (3.9 docs, for magic 0 and 1);
//! Kafka's `ByteBufferLogInputStream.nextBatch` (partial trailing batches are dropped).

use bytes::{Buf, Bytes};

use crate::error::{Error, Result};
use crate::records::compression::{decompress, decompress_legacy_lz4, Compression};
use crate::records::crc32::crc32c_front_last;
use crate::records::record::{
    parse_legacy_message, split_legacy_entry, LegacyKind, Records, LEGACY_V0_OVERHEAD,
    MIN_V2_RECORD_SIZE,
};
use crate::records::DecodeOptions;

/// Bytes before a batch's (or legacy entry's) length field ends: base offset + length.
pub const LOG_OVERHEAD: usize = 12;

/// The size of a magic-2 batch header, up to and including the records count.
pub const RECORD_BATCH_OVERHEAD: usize = 61;

/// Where the CRC-covered part of a magic-2 batch begins (the attributes).
const CRC_START: usize = 21;

/// Attribute bit 3: timestamp type (0 create time, 1 log-append time).
const TIMESTAMP_TYPE_BIT: i16 = 0x08;
/// Attribute bit 4: the batch belongs to a transaction.
const TRANSACTIONAL_BIT: i16 = 0x10;
/// Attribute bit 5: the batch holds a control record (commit or abort marker).
const CONTROL_BIT: i16 = 0x20;
/// Attribute bit 6: the base timestamp holds the compaction delete horizon (KIP-534).
const DELETE_HORIZON_BIT: i16 = 0x40;

/// How a batch's timestamps were assigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimestampType {
    /// Magic 0: messages carry no timestamp (every record's timestamp is -1).
    NoTimestamp,
    /// The producer chose the timestamps (`CreateTime`).
    CreateTime,
    /// The broker stamped the batch when appending it (`LogAppendTime`); every record's
    /// timestamp is the batch's max timestamp.
    LogAppendTime,
}

/// One batch of a partition's records: a magic-2 record batch or a legacy (magic 0 or 1)
/// shallow message, behind one interface so a reader handles both.
#[derive(Clone, Debug)]
pub enum Batch {
    /// A magic-2 record batch.
    V2(RecordBatch),
    /// A magic 0 or 1 message: a plain message, or a compressed wrapper of a message set.
    Legacy(LegacyBatch),
}

impl Batch {
    /// The magic byte: 0, 1 or 2.
    pub fn magic(&self) -> i8 {
        match self {
            Batch::V2(_) => 2,
            Batch::Legacy(b) => b.magic(),
        }
    }

    /// The offset of the first record, when known without decompressing: always for magic 2,
    /// for a plain legacy message; `None` for a compressed legacy wrapper (whose own offset is
    /// that of its *last* inner message).
    pub fn base_offset(&self) -> Option<i64> {
        match self {
            Batch::V2(b) => Some(b.base_offset()),
            Batch::Legacy(b) if b.compression() == Compression::None => Some(b.offset()),
            Batch::Legacy(_) => None,
        }
    }

    /// The offset of the last record (for magic 2, even when compaction removed it).
    pub fn last_offset(&self) -> i64 {
        match self {
            Batch::V2(b) => b.last_offset(),
            Batch::Legacy(b) => b.offset(),
        }
    }

    /// The offset after this batch: where the next fetch continues (`last_offset + 1`).
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// The codec the records are compressed with.
    pub fn compression(&self) -> Compression {
        match self {
            Batch::V2(b) => b.compression(),
            Batch::Legacy(b) => b.compression(),
        }
    }

    /// How the batch's timestamps were assigned.
    pub fn timestamp_type(&self) -> TimestampType {
        match self {
            Batch::V2(b) => b.timestamp_type(),
            Batch::Legacy(b) => b.timestamp_type(),
        }
    }

    /// The largest timestamp in the batch (for a legacy message, its own timestamp; -1 for
    /// magic 0).
    pub fn max_timestamp(&self) -> i64 {
        match self {
            Batch::V2(b) => b.max_timestamp(),
            Batch::Legacy(b) => b.timestamp(),
        }
    }

    /// The partition leader epoch that appended the batch; -1 when unknown (always for
    /// legacy formats).
    pub fn partition_leader_epoch(&self) -> i32 {
        match self {
            Batch::V2(b) => b.partition_leader_epoch(),
            Batch::Legacy(_) => -1,
        }
    }

    /// The producer id, -1 when none (always for legacy formats).
    pub fn producer_id(&self) -> i64 {
        match self {
            Batch::V2(b) => b.producer_id(),
            Batch::Legacy(_) => -1,
        }
    }

    /// Whether the batch is part of a transaction.
    pub fn is_transactional(&self) -> bool {
        matches!(self, Batch::V2(b) if b.is_transactional())
    }

    /// Whether the batch is a control batch (a transaction marker, never application data).
    pub fn is_control(&self) -> bool {
        matches!(self, Batch::V2(b) if b.is_control())
    }

    /// The batch's size on the wire, including the offset and length fields.
    pub fn size_in_bytes(&self) -> usize {
        match self {
            Batch::V2(b) => b.as_bytes().len(),
            Batch::Legacy(b) => b.as_bytes().len(),
        }
    }

    /// The batch's records, decompressing them if needed (once per call: keep the result).
    ///
    /// This is every record, including the transaction marker of a control batch (check
    /// [`Batch::is_control`]) and records below a fetch position;
    /// [`PartitionReader`](crate::records::PartitionReader) does that filtering.
    pub fn records(&self) -> Result<Records> {
        match self {
            Batch::V2(b) => b.records(),
            Batch::Legacy(b) => b.records(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The batch iterator
// ---------------------------------------------------------------------------------------------

/// An iterator over the batches in a partition's `Records` bytes from a Fetch response.
///
/// Each item is a complete batch, or an error after which the iterator ends. A trailing
/// partial batch (the broker cuts the response at the fetch's max bytes) is not an error: the
/// iterator just ends, and [`Batches::partial_batch`] describes what was dropped.
///
/// ```
/// use bytes::Bytes;
/// use kseek_protocol::records::{Batches, DecodeOptions};
///
/// // Four bytes are not even a batch header: the iterator ends without an error.
/// let mut batches = Batches::new(Bytes::from_static(&[0, 0, 0, 0]), DecodeOptions::default());
/// assert!(batches.next().is_none());
/// assert_eq!(batches.partial_batch().unwrap().available, 4);
/// ```
#[derive(Clone, Debug)]
pub struct Batches {
    buf: Bytes,
    options: DecodeOptions,
    partial: Option<PartialBatch>,
    failed: bool,
}

/// A batch cut off at the end of a Fetch response's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartialBatch {
    /// The batch's base offset, if its first 8 bytes arrived.
    pub base_offset: Option<i64>,
    /// The batch's total size (length field + 12), if the length field arrived.
    pub declared_size: Option<usize>,
    /// How many of its bytes arrived.
    pub available: usize,
}

impl Batches {
    /// Starts iterating the batches of `records` (a partition's `Records` field).
    pub fn new(records: Bytes, options: DecodeOptions) -> Batches {
        Batches {
            buf: records,
            options,
            partial: None,
            failed: false,
        }
    }

    /// The bytes not yet consumed (after the iterator ended: the partial batch, if any).
    pub fn remaining(&self) -> &Bytes {
        &self.buf
    }

    /// After the iterator has ended: the trailing partial batch that was dropped, if any.
    /// A fetch that returns only a partial batch made no progress; the caller decides whether
    /// that means "fetch with a larger max bytes" (old brokers) or corrupt data.
    pub fn partial_batch(&self) -> Option<PartialBatch> {
        self.partial
    }

    /// The options batches are decoded with.
    pub fn options(&self) -> &DecodeOptions {
        &self.options
    }

    fn next_batch(&mut self) -> Result<Option<Batch>> {
        let available = self.buf.len();
        if available == 0 {
            return Ok(None);
        }
        let Some(head) = self.buf.first_chunk::<LOG_OVERHEAD>() else {
            let base_offset = self.buf.first_chunk::<8>().map(|b| i64::from_be_bytes(*b));
            self.partial = Some(PartialBatch {
                base_offset,
                declared_size: None,
                available,
            });
            return Ok(None);
        };
        let mut head = &head[..];
        let base_offset = head.get_i64();
        let length = head.get_i32();
        if length < LEGACY_V0_OVERHEAD as i32 {
            return Err(Error::InvalidLength {
                what: "record batch length",
                len: i64::from(length),
            });
        }
        let size = LOG_OVERHEAD + length as usize;
        if size > self.options.max_batch_size {
            return Err(Error::InvalidLength {
                what: "record batch length (above DecodeOptions::max_batch_size)",
                len: i64::from(length),
            });
        }
        if size > available {
            self.partial = Some(PartialBatch {
                base_offset: Some(base_offset),
                declared_size: Some(size),
                available,
            });
            return Ok(None);
        }
        let bytes = self.buf.split_to(size);
        // Magic sits at byte 16 in every format; `length >= 14` guarantees it is present.
        let magic = bytes.get(16).map_or(-1, |&m| m as i8);
        match magic {
            2 => RecordBatch::parse(bytes, &self.options).map(|b| Some(Batch::V2(b))),
            0 | 1 => LegacyBatch::parse(bytes, &self.options).map(|b| Some(Batch::Legacy(b))),
            _ => Err(Error::UnknownMagic {
                magic,
                offset: base_offset,
            }),
        }
    }
}

impl Iterator for Batches {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        if self.failed {
            return None;
        }
        let next = self.next_batch().transpose();
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

impl core::iter::FusedIterator for Batches {}

// ---------------------------------------------------------------------------------------------
// Magic 2
// ---------------------------------------------------------------------------------------------

/// A magic-2 record batch: its parsed header and the bytes it came from.
///
/// # References
/// <https://kafka.apache.org/documentation/#recordbatch>
#[derive(Clone, Debug)]
pub struct RecordBatch {
    bytes: Bytes,
    base_offset: i64,
    partition_leader_epoch: i32,
    crc: u32,
    attributes: i16,
    last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    records_count: i32,
    max_decompressed_size: usize,
}

impl RecordBatch {
    /// Parses the header of a complete magic-2 batch (`bytes` starts at the base offset and
    /// holds exactly the batch) and checks its CRC-32C unless `options.verify_crc` is off.
    pub fn parse(bytes: Bytes, options: &DecodeOptions) -> Result<RecordBatch> {
        let Some(header) = bytes.first_chunk::<RECORD_BATCH_OVERHEAD>() else {
            return Err(Error::Truncated {
                what: "record batch header",
                needed: RECORD_BATCH_OVERHEAD,
                remaining: bytes.len(),
            });
        };
        let mut h = &header[..];
        let base_offset = h.get_i64();
        let length = h.get_i32();
        if usize::try_from(length).ok().map(|l| l + LOG_OVERHEAD) != Some(bytes.len()) {
            return Err(Error::InvalidLength {
                what: "record batch length",
                len: i64::from(length),
            });
        }
        let partition_leader_epoch = h.get_i32();
        let magic = h.get_i8();
        if magic != 2 {
            return Err(Error::UnknownMagic {
                magic,
                offset: base_offset,
            });
        }
        let crc = h.get_u32();
        let attributes = h.get_i16();
        let last_offset_delta = h.get_i32();
        let base_timestamp = h.get_i64();
        let max_timestamp = h.get_i64();
        let producer_id = h.get_i64();
        let producer_epoch = h.get_i16();
        let base_sequence = h.get_i32();
        let records_count = h.get_i32();
        let batch = RecordBatch {
            bytes,
            base_offset,
            partition_leader_epoch,
            crc,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            records_count,
            max_decompressed_size: options.max_decompressed_size,
        };
        if records_count < 0 {
            return Err(Error::InvalidLength {
                what: "record batch records count",
                len: i64::from(records_count),
            });
        }
        if options.verify_crc {
            batch.verify_crc()?;
        }
        Ok(batch)
    }

    /// Recomputes the CRC-32C over attributes..end and compares it with the stored one.
    pub fn verify_crc(&self) -> Result<()> {
        let computed = crc32c_front_last(self.bytes.get(CRC_START..).unwrap_or_default());
        if computed == self.crc {
            Ok(())
        } else {
            Err(Error::CrcMismatch {
                base_offset: self.base_offset,
                stored: self.crc,
                computed,
            })
        }
    }

    /// The whole batch as it was on the wire, from the base offset to the end.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The offset of the first record (as assigned; compaction may have removed it).
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The length field: the batch's size minus the 12 bytes of base offset and length.
    pub fn batch_length(&self) -> i32 {
        (self.bytes.len() - LOG_OVERHEAD) as i32
    }

    /// The epoch of the partition leader that appended the batch (-1 if unknown).
    pub fn partition_leader_epoch(&self) -> i32 {
        self.partition_leader_epoch
    }

    /// The magic byte (always 2).
    pub fn magic(&self) -> i8 {
        2
    }

    /// The CRC-32C stored in the batch.
    pub fn crc(&self) -> u32 {
        self.crc
    }

    /// The raw attributes field.
    pub fn attributes(&self) -> i16 {
        self.attributes
    }

    /// The compression codec (attributes bits 0-2). The unassigned values 5-7 read as
    /// [`Compression::None`] here and fail in [`RecordBatch::records`]; see
    /// [`RecordBatch::try_compression`] for the checked form.
    pub fn compression(&self) -> Compression {
        self.try_compression().unwrap_or(Compression::None)
    }

    /// The compression codec, or [`Error::UnsupportedCompression`] for the unassigned
    /// values 5, 6 and 7.
    pub fn try_compression(&self) -> Result<Compression> {
        Compression::from_attributes(self.attributes)
    }

    /// How the timestamps were assigned (attributes bit 3).
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Whether the batch belongs to a transaction (attributes bit 4).
    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_BIT != 0
    }

    /// Whether this is a control batch holding a transaction marker (attributes bit 5).
    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_BIT != 0
    }

    /// The compaction delete horizon (KIP-534), when attributes bit 6 says the base
    /// timestamp holds it.
    pub fn delete_horizon(&self) -> Option<i64> {
        (self.attributes & DELETE_HORIZON_BIT != 0).then_some(self.base_timestamp)
    }

    /// The last offset minus the base offset.
    pub fn last_offset_delta(&self) -> i32 {
        self.last_offset_delta
    }

    /// The offset of the last record, which stays in the header even when compaction has
    /// removed the record itself.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The offset after the batch: where the next fetch continues.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// The base timestamp: the first record's timestamp under create time (or the delete
    /// horizon, see [`RecordBatch::delete_horizon`]). Record timestamps are deltas from it.
    pub fn base_timestamp(&self) -> i64 {
        self.base_timestamp
    }

    /// The largest record timestamp (under log-append time: the append time).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }

    /// The producer id, -1 when the producer is not idempotent.
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }

    /// The producer epoch, -1 when none.
    pub fn producer_epoch(&self) -> i16 {
        self.producer_epoch
    }

    /// The sequence number of the first record, -1 when none.
    pub fn base_sequence(&self) -> i32 {
        self.base_sequence
    }

    /// The number of records the batch declares (it may lie; nothing is allocated from it).
    pub fn records_count(&self) -> i32 {
        self.records_count
    }

    /// The records area exactly as on the wire (compressed if the batch is).
    pub fn raw_records(&self) -> Bytes {
        self.bytes.slice(RECORD_BATCH_OVERHEAD..)
    }

    /// The batch's records. An uncompressed batch shares the input buffer; a compressed one
    /// is decompressed here, once per call, into a buffer of at most
    /// [`DecodeOptions::max_decompressed_size`] bytes.
    pub fn records(&self) -> Result<Records> {
        let codec = self.try_compression()?;
        let raw = self.raw_records();
        let buf = match codec {
            Compression::None => raw,
            _ => decompress(codec, &raw, self.max_decompressed_size)?,
        };
        // The count is hostile: it must not exceed what the bytes could hold.
        let count = self.records_count as u32;
        if count as usize > buf.len() / MIN_V2_RECORD_SIZE {
            return Err(Error::InvalidLength {
                what: "record batch records count",
                len: i64::from(self.records_count),
            });
        }
        let log_append_time =
            (self.timestamp_type() == TimestampType::LogAppendTime).then_some(self.max_timestamp);
        Ok(Records::v2(
            buf,
            count,
            self.base_offset,
            self.base_timestamp,
            log_append_time,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Legacy (magic 0 and 1)
// ---------------------------------------------------------------------------------------------

/// A legacy (magic 0 or 1) shallow message: a plain message, or a compressed wrapper whose
/// value is a compressed message set.
///
/// # References
/// <https://kafka.apache.org/39/documentation/#messageset>; Kafka's `AbstractLegacyRecordBatch`.
#[derive(Clone, Debug)]
pub struct LegacyBatch {
    bytes: Bytes,
    offset: i64,
    crc: u32,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    verify_crc: bool,
    max_decompressed_size: usize,
}

impl LegacyBatch {
    /// Parses a complete legacy entry (`offset, size, message`), checking the CRC-32 of the
    /// message unless `options.verify_crc` is off.
    pub fn parse(bytes: Bytes, options: &DecodeOptions) -> Result<LegacyBatch> {
        let mut data: &[u8] = &bytes;
        let (offset, msg) = match split_legacy_entry(&mut data) {
            Some(r) => r?,
            None => {
                return Err(Error::Truncated {
                    what: "legacy message set entry",
                    needed: LOG_OVERHEAD,
                    remaining: 0,
                })
            }
        };
        if !data.is_empty() {
            return Err(Error::TrailingBytes {
                what: "legacy message",
                count: data.len(),
            });
        }
        let m = parse_legacy_message(msg, offset, options.verify_crc)?;
        // Zstd (4) never existed for legacy formats (KIP-110 requires magic 2).
        if m.attributes & 0x07 > 3 {
            return Err(Error::UnsupportedCompression {
                codec: (m.attributes & 0x07) as u8,
            });
        }
        if m.attributes & 0x07 != 0 && m.value.is_none() {
            return Err(Error::InvalidValue {
                what: "compressed legacy wrapper with a null value",
                value: -1,
            });
        }
        Ok(LegacyBatch {
            offset,
            crc: m.crc,
            magic: m.magic,
            attributes: m.attributes,
            timestamp: m.timestamp,
            verify_crc: options.verify_crc,
            max_decompressed_size: options.max_decompressed_size,
            bytes,
        })
    }

    /// The whole entry as on the wire (offset, size, message).
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The message's offset: for a compressed wrapper, the offset of its last inner message.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The CRC-32 (IEEE) stored in the message.
    pub fn crc(&self) -> u32 {
        self.crc
    }

    /// The magic byte: 0 or 1.
    pub fn magic(&self) -> i8 {
        self.magic
    }

    /// The raw attributes byte.
    pub fn attributes(&self) -> i8 {
        self.attributes
    }

    /// The codec of a wrapper's inner message set; [`Compression::None`] for a plain message.
    pub fn compression(&self) -> Compression {
        Compression::from_attributes(i16::from(self.attributes)).unwrap_or(Compression::None)
    }

    /// The timestamp type: none for magic 0, attributes bit 3 for magic 1.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic == 0 {
            TimestampType::NoTimestamp
        } else if i16::from(self.attributes) & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// The message's timestamp (-1 for magic 0). For a magic-1 wrapper, the max timestamp
    /// of its inner messages, or the log-append time.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }

    /// The message body as parsed again from the bytes (cheap; they were validated).
    fn value(&self) -> Result<Option<&[u8]>> {
        let mut data: &[u8] = &self.bytes;
        match split_legacy_entry(&mut data) {
            Some(Ok((offset, msg))) => Ok(parse_legacy_message(msg, offset, false)?.value),
            Some(Err(e)) => Err(e),
            None => Ok(None),
        }
    }

    /// The message, or for a compressed wrapper its decompressed inner messages, with
    /// absolute offsets (magic-1 inner offsets are relative: absolute = wrapper offset -
    /// last relative offset + relative offset).
    pub fn records(&self) -> Result<Records> {
        let codec = Compression::from_attributes(i16::from(self.attributes))?;
        let log_append_time =
            (self.timestamp_type() == TimestampType::LogAppendTime).then_some(self.timestamp);
        if codec == Compression::None {
            return Ok(Records::legacy(
                self.bytes.clone(),
                LegacyKind {
                    magic: self.magic,
                    offset_adjust: 0,
                    log_append_time: None,
                    verify_crc: false,
                    inner: false,
                },
            ));
        }
        let value = self.value()?.unwrap_or_default();
        let inner = if codec == Compression::Lz4 && self.magic == 0 {
            decompress_legacy_lz4(value, self.max_decompressed_size)?
        } else {
            decompress(codec, value, self.max_decompressed_size)?
        };
        let offset_adjust = if self.magic == 0 {
            0
        } else {
            // One pass over the entry headers to find the last relative offset; nothing is
            // allocated (Java materialises the inner messages in a deque for the same answer).
            let mut data: &[u8] = &inner;
            let mut last = None;
            while let Some(entry) = split_legacy_entry(&mut data) {
                last = Some(entry?.0);
            }
            let Some(last) = last else {
                return Err(Error::InvalidValue {
                    what: "compressed legacy wrapper with no inner messages",
                    value: 0,
                });
            };
            self.offset.wrapping_sub(last)
        };
        Ok(Records::legacy(
            inner,
            LegacyKind {
                magic: self.magic,
                offset_adjust,
                log_append_time,
                verify_crc: self.verify_crc,
                inner: true,
            },
        ))
    }
}

#[cfg(test)]
mod tests;

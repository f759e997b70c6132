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
mod tests {
    use super::*;
    use crate::records::{encode_legacy_message_set, NewRecord, OwnedRecord, RecordBatchBuilder};

    fn opts() -> DecodeOptions {
        DecodeOptions::default()
    }

    fn one(bytes: impl Into<Bytes>) -> Result<Batch> {
        Batches::new(bytes.into(), opts())
            .next()
            .expect("one batch")
    }

    /// Recomputes a magic-2 batch's CRC after a test corrupted a covered field.
    fn fix_crc(b: &mut [u8]) {
        let crc = crate::records::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
    }

    /// One batch written out field by field from the spec: base offset 5, two records.
    fn hand_built_v2() -> Vec<u8> {
        let mut records = vec![
            // record 0: length 16 (zigzag 32 = 0x20)
            0x20, //
            0x00, // attributes
            0x00, // timestamp delta 0
            0x00, // offset delta 0
            0x02, b'k', // key length 1, "k"
            0x04, b'v', b'0', // value length 2, "v0"
            0x02, // one header
            0x04, b'h', b'1', // header key "h1"
            0x01, // header value null
        ];
        records[0] = ((records.len() - 1) * 2) as u8;
        let r1: Vec<u8> = vec![
            0x00, 0x00, // length placeholder, attributes
            0x14, // timestamp delta +10
            0x04, // offset delta 2 (offset 1 compacted away)
            0x01, // null key
            0x02, b'x', // value "x"
            0x00, // no headers
        ];
        let mut r1 = r1;
        r1[0] = ((r1.len() - 1) * 2) as u8;
        records.extend_from_slice(&r1);

        let mut b = Vec::new();
        b.extend_from_slice(&5i64.to_be_bytes()); // base offset
        b.extend_from_slice(&0i32.to_be_bytes()); // length, set below
        b.extend_from_slice(&7i32.to_be_bytes()); // partition leader epoch
        b.push(2); // magic
        b.extend_from_slice(&0u32.to_be_bytes()); // crc, set below
        b.extend_from_slice(&0i16.to_be_bytes()); // attributes: none, create time
        b.extend_from_slice(&2i32.to_be_bytes()); // last offset delta
        b.extend_from_slice(&1_000i64.to_be_bytes()); // base timestamp
        b.extend_from_slice(&1_010i64.to_be_bytes()); // max timestamp
        b.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
        b.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
        b.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
        b.extend_from_slice(&2i32.to_be_bytes()); // records count
        assert_eq!(b.len(), RECORD_BATCH_OVERHEAD);
        b.extend_from_slice(&records);
        let len = (b.len() - 12) as i32;
        b[8..12].copy_from_slice(&len.to_be_bytes());
        fix_crc(&mut b);
        b
    }

    /// Asserts a record's offset, timestamp, key and value.
    #[track_caller]
    fn assert_record(
        r: &crate::records::Record<'_>,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        assert_eq!(r.offset(), offset);
        assert_eq!(r.timestamp(), timestamp);
        assert_eq!(r.key(), key);
        assert_eq!(r.value(), value);
    }

    #[test]
    fn hand_built_v2_batch_decodes() {
        let bytes = Bytes::from(hand_built_v2());
        let Batch::V2(batch) = one(bytes.clone()).unwrap() else {
            panic!("not v2")
        };
        assert_eq!(batch.base_offset(), 5);
        assert_eq!(batch.partition_leader_epoch(), 7);
        assert_eq!(batch.last_offset(), 7);
        assert_eq!(batch.next_offset(), 8);
        assert_eq!(batch.compression(), Compression::None);
        assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
        assert!(!batch.is_transactional() && !batch.is_control());
        assert_eq!(batch.max_timestamp(), 1_010);
        assert_eq!(batch.records_count(), 2);
        assert_eq!(batch.batch_length() as usize, bytes.len() - 12);
        let records = batch.records().unwrap();
        let recs: Vec<_> = records.iter().collect::<Result<_>>().unwrap();
        assert_eq!(recs.len(), 2);
        assert_record(&recs[0], 5, 1_000, Some(b"k"), Some(b"v0"));
        let h: Vec<_> = recs[0].headers().collect();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].key(), b"h1");
        assert_eq!(h[0].key_str(), Some("h1"));
        assert_eq!(h[0].value(), None);
        assert_record(&recs[1], 7, 1_010, None, Some(b"x"));
        assert!(recs[1].headers().is_empty());
        // Owned views share the input buffer.
        let v = recs[0].value_bytes().unwrap();
        let range = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
        assert!(range.contains(&(v.as_ptr() as usize)));
        // The builder writes the same bytes for the same batch.
        let built = RecordBatchBuilder::new(5, 1_000)
            .partition_leader_epoch(7)
            .record(NewRecord::new(0, 0).key("k").value("v0").null_header("h1"))
            .record(NewRecord::new(2, 10).value("x"))
            .build()
            .unwrap();
        assert_eq!(built, bytes);
    }

    #[test]
    fn corrupt_crc_is_an_error_unless_disabled() {
        let mut b = hand_built_v2();
        let last = b.len() - 1;
        b[last] ^= 0x01;
        let err = one(b.clone()).unwrap_err();
        assert!(
            matches!(err, Error::CrcMismatch { base_offset: 5, .. }),
            "{err:?}"
        );
        let trusting = DecodeOptions {
            verify_crc: false,
            ..DecodeOptions::default()
        };
        assert!(Batches::new(Bytes::from(b), trusting)
            .next()
            .unwrap()
            .is_ok());
    }

    #[test]
    fn truncated_batch_ends_iteration_quietly() {
        let full = hand_built_v2();
        let mut two = full.clone();
        two.extend_from_slice(&full[..full.len() - 3]);
        let mut it = Batches::new(Bytes::from(two), opts());
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().is_none());
        let p = it.partial_batch().unwrap();
        assert_eq!(p.base_offset, Some(5));
        assert_eq!(p.declared_size, Some(full.len()));
        assert_eq!(p.available, full.len() - 3);
        // Fewer than 12 bytes: also partial.
        let mut it = Batches::new(Bytes::copy_from_slice(&full[..10]), opts());
        assert!(it.next().is_none());
        assert_eq!(it.partial_batch().unwrap().declared_size, None);
        // Empty input: nothing, no partial batch.
        let mut it = Batches::new(Bytes::new(), opts());
        assert!(it.next().is_none());
        assert!(it.partial_batch().is_none());
    }

    #[test]
    fn bad_varint_is_an_error() {
        let mut b = hand_built_v2();
        // The second record's timestamp delta becomes an 11-byte varlong: replace the
        // second record with one whose body is all continuation bytes.
        let start = b.len() - 8;
        b.truncate(start);
        b.extend_from_slice(&[0x18, 0x00]);
        b.extend_from_slice(&[0xff; 11]);
        let len = (b.len() - 12) as i32;
        b[8..12].copy_from_slice(&len.to_be_bytes());
        fix_crc(&mut b);
        let batch = one(b).unwrap();
        let records = batch.records().unwrap();
        let mut it = records.iter();
        assert!(it.next().unwrap().is_ok());
        let err = it.next().unwrap().unwrap_err();
        assert!(matches!(err, Error::VarintOverflow { .. }), "{err:?}");
        assert!(it.next().is_none());
    }

    #[test]
    fn wrong_magic_is_an_error() {
        let mut b = hand_built_v2();
        b[16] = 3;
        let err = one(b).unwrap_err();
        assert_eq!(
            err,
            Error::UnknownMagic {
                magic: 3,
                offset: 5
            }
        );
    }

    #[test]
    fn bad_batch_lengths_are_errors() {
        let mut b = hand_built_v2();
        b[8..12].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(matches!(
            one(b.clone()).unwrap_err(),
            Error::InvalidLength { .. }
        ));
        b[8..12].copy_from_slice(&3i32.to_be_bytes());
        assert!(matches!(
            one(b.clone()).unwrap_err(),
            Error::InvalidLength { .. }
        ));
        b[8..12].copy_from_slice(&0x7fff_fff0i32.to_be_bytes());
        let err = one(b.clone()).unwrap_err();
        assert!(matches!(err, Error::InvalidLength { .. }), "{err:?}");
        // With a limit above the declared size, it is a partial batch instead.
        let lax = DecodeOptions {
            max_batch_size: usize::MAX,
            ..DecodeOptions::default()
        };
        let mut it = Batches::new(Bytes::from(b), lax);
        assert!(it.next().is_none());
        assert!(it.partial_batch().is_some());
        // A v2 batch too short for its header.
        let mut short = hand_built_v2();
        short.truncate(40);
        short[8..12].copy_from_slice(&28i32.to_be_bytes());
        assert!(matches!(one(short).unwrap_err(), Error::Truncated { .. }));
    }

    #[test]
    fn record_length_beyond_batch_is_an_error() {
        let mut b = hand_built_v2();
        b[RECORD_BATCH_OVERHEAD] = 0x7e; // record length 63, far more than present
        fix_crc(&mut b);
        let batch = one(b).unwrap();
        let records = batch.records().unwrap();
        let err = records.iter().next().unwrap().unwrap_err();
        assert!(
            matches!(err, Error::Truncated { what: "record", .. }),
            "{err:?}"
        );
    }

    #[test]
    fn negative_record_length_and_trailing_bytes_are_errors() {
        let mut b = hand_built_v2();
        b[RECORD_BATCH_OVERHEAD] = 0x03; // -2
        fix_crc(&mut b);
        let records = one(b).unwrap().records().unwrap();
        assert!(matches!(
            records.iter().next().unwrap(),
            Err(Error::InvalidLength { .. })
        ));
        // Declared count 1 with two records present: trailing bytes.
        let mut b = hand_built_v2();
        b[57..61].copy_from_slice(&1i32.to_be_bytes());
        fix_crc(&mut b);
        let records = one(b).unwrap().records().unwrap();
        let all: Vec<_> = records.iter().collect();
        assert_eq!(all.len(), 2);
        assert!(matches!(all[1], Err(Error::TrailingBytes { .. })));
    }

    #[test]
    fn records_count_bomb_is_refused() {
        let mut b = hand_built_v2();
        b[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
        fix_crc(&mut b);
        let batch = one(b.clone()).unwrap();
        assert!(matches!(
            batch.records().unwrap_err(),
            Error::InvalidLength { .. }
        ));
        b[57..61].copy_from_slice(&(-1i32).to_be_bytes());
        fix_crc(&mut b);
        assert!(matches!(one(b).unwrap_err(), Error::InvalidLength { .. }));
    }

    #[test]
    fn header_count_bomb_is_an_error() {
        let mut b = hand_built_v2();
        // Record 0's header count (offset 61 + 9) becomes 2^27 (zigzag, 4 bytes would
        // shift the record; use a one-byte 63 instead, with only 3 header bytes present).
        b[RECORD_BATCH_OVERHEAD + 9] = 0x7e;
        fix_crc(&mut b);
        let records = one(b).unwrap().records().unwrap();
        let err = records.iter().next().unwrap().unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidLength {
                    what: "record header count",
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn unknown_codec_is_an_error() {
        let mut b = hand_built_v2();
        b[21..23].copy_from_slice(&7i16.to_be_bytes());
        fix_crc(&mut b);
        let batch = one(b).unwrap();
        assert_eq!(
            batch.records().unwrap_err(),
            Error::UnsupportedCompression { codec: 7 }
        );
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn decompression_bomb_hits_the_cap() {
        // 4 MiB of zeros in one value compresses to a few KiB.
        let batch = RecordBatchBuilder::new(0, 0)
            .compression(Compression::Gzip)
            .record(NewRecord::new(0, 0).value(vec![0u8; 4 << 20]))
            .build()
            .unwrap();
        assert!(batch.len() < 64 << 10);
        let small_cap = DecodeOptions {
            max_decompressed_size: 1 << 20,
            ..DecodeOptions::default()
        };
        let b = Batches::new(batch.clone(), small_cap)
            .next()
            .unwrap()
            .unwrap();
        let err = b.records().unwrap_err();
        assert!(
            matches!(err, Error::DecompressedTooLarge { limit, .. } if limit == 1 << 20),
            "{err:?}"
        );
        // The default cap (64 MiB) lets it through.
        let b = one(batch).unwrap();
        let records = b.records().unwrap();
        let r = records.iter().next().unwrap().unwrap();
        assert_eq!(r.value().unwrap().len(), 4 << 20);
    }

    #[test]
    fn log_append_time_applies_to_every_record() {
        let bytes = RecordBatchBuilder::new(0, 100)
            .log_append_time(5_000)
            .record(NewRecord::new(0, 0))
            .record(NewRecord::new(1, 7))
            .build()
            .unwrap();
        let b = one(bytes).unwrap();
        assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
        let recs = b.records().unwrap();
        for r in &recs {
            assert_eq!(r.unwrap().timestamp(), 5_000);
        }
    }

    // ---- legacy ----

    /// A magic-1 message written out by hand: offset 9, timestamp 1234, key "k", value "val".
    fn hand_built_legacy_v1() -> Vec<u8> {
        let mut msg = vec![
            0x01, // magic
            0x00, // attributes
        ];
        msg.extend_from_slice(&1234i64.to_be_bytes());
        msg.extend_from_slice(&1i32.to_be_bytes());
        msg.push(b'k');
        msg.extend_from_slice(&3i32.to_be_bytes());
        msg.extend_from_slice(b"val");
        legacy_entry(9, &msg)
    }

    /// A legacy log entry: `offset`, the message's size and CRC-32, then the message.
    fn legacy_entry(offset: i64, msg: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend_from_slice(&offset.to_be_bytes());
        e.extend_from_slice(&((msg.len() + 4) as i32).to_be_bytes());
        e.extend_from_slice(&crate::records::crc32::crc32_ieee(msg).to_be_bytes());
        e.extend_from_slice(msg);
        e
    }

    #[test]
    fn hand_built_legacy_message_decodes() {
        let bytes = hand_built_legacy_v1();
        assert_eq!(bytes[16], 1, "magic at byte 16");
        let batch = one(bytes.clone()).unwrap();
        assert_eq!(batch.magic(), 1);
        assert_eq!(batch.base_offset(), Some(9));
        assert_eq!(batch.next_offset(), 10);
        assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
        assert_eq!(batch.max_timestamp(), 1234);
        let records = batch.records().unwrap();
        let recs: Vec<_> = records.iter().collect::<Result<_>>().unwrap();
        assert_eq!(recs.len(), 1);
        assert_record(&recs[0], 9, 1234, Some(b"k"), Some(b"val"));
        // The encoder agrees byte for byte.
        let built = encode_legacy_message_set(
            1,
            Compression::None,
            None,
            &[OwnedRecord {
                offset: 9,
                timestamp: 1234,
                key: Some(Bytes::from_static(b"k")),
                value: Some(Bytes::from_static(b"val")),
                headers: Vec::new(),
            }],
        )
        .unwrap();
        assert_eq!(built, Bytes::from(bytes.clone()));
        // Corrupting the value breaks the CRC-32.
        let mut bad = bytes;
        let last = bad.len() - 1;
        bad[last] ^= 0x20;
        assert!(matches!(
            one(bad).unwrap_err(),
            Error::CrcMismatch { base_offset: 9, .. }
        ));
    }

    fn msgs(first: i64, n: i64) -> Vec<OwnedRecord> {
        (0..n)
            .map(|i| OwnedRecord {
                offset: first + i,
                timestamp: 100 + i,
                key: (i % 2 == 0).then(|| Bytes::from(format!("k{i}"))),
                value: Some(Bytes::from(format!("value-{i}"))),
                headers: Vec::new(),
            })
            .collect()
    }

    /// Offset, timestamp, key and value of each record.
    type Flat = Vec<(i64, i64, Option<Vec<u8>>, Option<Vec<u8>>)>;

    fn read_all(bytes: Bytes) -> Flat {
        let mut out = Vec::new();
        for b in Batches::new(bytes, opts()) {
            let records = b.unwrap().records().unwrap();
            for r in &records {
                let r = r.unwrap();
                out.push((
                    r.offset(),
                    r.timestamp(),
                    r.key().map(<[u8]>::to_vec),
                    r.value().map(<[u8]>::to_vec),
                ));
            }
        }
        out
    }

    fn expected(m: &[OwnedRecord], magic: i8) -> Flat {
        m.iter()
            .map(|m| {
                (
                    m.offset,
                    if magic == 0 { -1 } else { m.timestamp },
                    m.key.as_ref().map(|k| k.to_vec()),
                    m.value.as_ref().map(|v| v.to_vec()),
                )
            })
            .collect()
    }

    /// Writes `msgs(first, n)` as a legacy set with `codec`, for both magics, and reads it back.
    fn assert_legacy_round_trip(codec: Compression, first: i64, n: i64) {
        for magic in [0, 1] {
            let m = msgs(first, n);
            let bytes = encode_legacy_message_set(magic, codec, None, &m).unwrap();
            assert_eq!(
                read_all(bytes),
                expected(&m, magic),
                "{codec:?} magic {magic}"
            );
        }
    }

    #[test]
    fn legacy_uncompressed_sets_round_trip() {
        assert_legacy_round_trip(Compression::None, 40, 5);
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn legacy_gzip_wrappers_have_absolute_inner_offsets() {
        for magic in [0, 1] {
            let m = msgs(1_000, 4);
            let bytes = encode_legacy_message_set(magic, Compression::Gzip, None, &m).unwrap();
            let batch = one(bytes.clone()).unwrap();
            assert_eq!(batch.base_offset(), None);
            assert_eq!(
                batch.last_offset(),
                1_003,
                "wrapper offset = last inner offset"
            );
            assert_eq!(batch.compression(), Compression::Gzip);
            assert_eq!(read_all(bytes), expected(&m, magic), "magic {magic}");
        }
        // Magic 1 with log-append time: every inner timestamp is the wrapper's.
        let m = msgs(7, 3);
        let bytes = encode_legacy_message_set(1, Compression::Gzip, Some(99_999), &m).unwrap();
        assert!(read_all(bytes).iter().all(|r| r.1 == 99_999));
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn legacy_lz4_wrappers_decode_for_both_magics() {
        assert_legacy_round_trip(Compression::Lz4, 3, 3);
    }

    /// A magic-1 gzip wrapper message at offset 1 around `inner` (a message set), written by
    /// hand so that `inner` may be anything.
    #[cfg(feature = "gzip")]
    fn gzip_wrapper(inner: &[u8]) -> Vec<u8> {
        let compressed = crate::records::compression::compress(Compression::Gzip, inner).unwrap();
        let mut msg = vec![1u8, 1];
        msg.extend_from_slice(&0i64.to_be_bytes());
        msg.extend_from_slice(&(-1i32).to_be_bytes());
        msg.extend_from_slice(&(compressed.len() as i32).to_be_bytes());
        msg.extend_from_slice(&compressed);
        legacy_entry(1, &msg)
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn legacy_nested_compression_and_bad_inner_crc_are_errors() {
        // A wrapper whose inner message is itself a gzip wrapper.
        let inner = encode_legacy_message_set(1, Compression::Gzip, None, &msgs(0, 2)).unwrap();
        let records = one(gzip_wrapper(&inner)).unwrap().records().unwrap();
        let err = records.iter().next().unwrap().unwrap_err();
        assert!(matches!(err, Error::InvalidValue { .. }), "{err:?}");

        // An inner message with a broken CRC.
        let mut plain = encode_legacy_message_set(1, Compression::None, None, &msgs(0, 2))
            .unwrap()
            .to_vec();
        let last = plain.len() - 1;
        plain[last] ^= 1;
        let records = one(gzip_wrapper(&plain)).unwrap().records().unwrap();
        let all: Vec<_> = records.iter().collect();
        assert!(all[0].is_ok());
        assert!(matches!(all[1], Err(Error::CrcMismatch { .. })));
    }

    #[test]
    fn garbage_never_panics() {
        // A cheap deterministic sweep over mutations of valid inputs; the fuzz targets do
        // the thorough version.
        #[allow(unused_mut)] // only pushed to with the gzip feature
        let mut seeds = vec![hand_built_v2(), hand_built_legacy_v1()];
        #[cfg(feature = "gzip")]
        seeds.push(
            encode_legacy_message_set(1, Compression::Gzip, None, &msgs(0, 3))
                .unwrap()
                .to_vec(),
        );
        for seed in seeds {
            for i in 0..seed.len() {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = seed.clone();
                    b[i] ^= x;
                    for verify_crc in [true, false] {
                        let o = DecodeOptions {
                            verify_crc,
                            ..DecodeOptions::default()
                        };
                        for batch in Batches::new(Bytes::from(b.clone()), o).flatten() {
                            if let Ok(records) = batch.records() {
                                for r in records.iter().flatten() {
                                    let _ = r.headers().count();
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

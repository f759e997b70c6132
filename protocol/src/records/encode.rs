//! Writing record batches: magic 2 with every codec, and minimal legacy message sets.
//!
//! A consumer never needs these; they exist so tests, fuzz seeds and benchmarks can build
//! realistic inputs (every codec, transactions, compaction gaps) without a broker.
//!
//! # References
//! <https://kafka.apache.org/documentation/#recordbatch>; Kafka's `MemoryRecordsBuilder`,
//! `DefaultRecord.writeTo` and `LegacyRecord.write`.

use bytes::{BufMut, Bytes};

use crate::error::{Error, Result};
use crate::primitives::{put_varint, put_varlong};
use crate::records::batch::{TimestampType, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
use crate::records::compression::{compress, Compression};
use crate::records::control::ControlRecordType;
use crate::records::crc32::crc32_ieee;
use crate::records::record::OwnedRecord;

/// A record to write into a batch with [`RecordBatchBuilder`].
///
/// Offsets and timestamps are deltas from the batch's base offset and base timestamp, so a
/// test can leave gaps as compaction does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewRecord {
    /// Added to the batch's base offset.
    pub offset_delta: i32,
    /// Added to the batch's base timestamp.
    pub timestamp_delta: i64,
    /// The key, `None` for null.
    pub key: Option<Bytes>,
    /// The value, `None` for null.
    pub value: Option<Bytes>,
    /// Headers in order: key and optional value.
    pub headers: Vec<(Bytes, Option<Bytes>)>,
}

impl NewRecord {
    /// A record with a null key, a null value and no headers.
    pub fn new(offset_delta: i32, timestamp_delta: i64) -> NewRecord {
        NewRecord {
            offset_delta,
            timestamp_delta,
            ..NewRecord::default()
        }
    }

    /// Sets the key.
    pub fn key(mut self, key: impl AsRef<[u8]>) -> NewRecord {
        self.key = Some(Bytes::copy_from_slice(key.as_ref()));
        self
    }

    /// Sets the value.
    pub fn value(mut self, value: impl AsRef<[u8]>) -> NewRecord {
        self.value = Some(Bytes::copy_from_slice(value.as_ref()));
        self
    }

    /// Adds a header with a value.
    pub fn header(mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> NewRecord {
        self.headers.push((
            Bytes::copy_from_slice(key.as_ref()),
            Some(Bytes::copy_from_slice(value.as_ref())),
        ));
        self
    }

    /// Adds a header with a null value.
    pub fn null_header(mut self, key: impl AsRef<[u8]>) -> NewRecord {
        self.headers
            .push((Bytes::copy_from_slice(key.as_ref()), None));
        self
    }

    fn write(&self, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> Result<()> {
        scratch.clear();
        scratch.put_i8(0);
        put_varlong(scratch, self.timestamp_delta);
        put_varint(scratch, self.offset_delta);
        put_varbytes(scratch, self.key.as_deref(), "record key")?;
        put_varbytes(scratch, self.value.as_deref(), "record value")?;
        put_varint(scratch, varint_count(self.headers.len(), "record headers")?);
        for (k, v) in &self.headers {
            put_varbytes(scratch, Some(k), "record header key")?;
            put_varbytes(scratch, v.as_deref(), "record header value")?;
        }
        put_varint(out, varint_count(scratch.len(), "record")?);
        out.extend_from_slice(scratch);
        Ok(())
    }
}

fn varint_count(n: usize, what: &'static str) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::TooLong { what, len: n })
}

fn put_varbytes(out: &mut Vec<u8>, b: Option<&[u8]>, what: &'static str) -> Result<()> {
    match b {
        None => put_varint(out, -1),
        Some(b) => {
            put_varint(out, varint_count(b.len(), what)?);
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

/// Builds one magic-2 record batch.
///
/// Defaults: no compression, create time, no producer (id -1, epoch -1, sequence -1),
/// partition leader epoch -1, not transactional, not control. The last offset delta is the
/// largest record offset delta (or set it with [`RecordBatchBuilder::last_offset_delta`], e.g.
/// for an empty batch left by compaction); the max timestamp is the base timestamp plus the
/// largest timestamp delta (or the log-append time).
///
/// ```
/// use kseek_protocol::records::{Batches, Compression, DecodeOptions, NewRecord, RecordBatchBuilder};
///
/// let bytes = RecordBatchBuilder::new(42, 1_000)
///     .compression(Compression::None)
///     .record(NewRecord::new(0, 0).key("k").value("v"))
///     .build()?;
/// let batch = Batches::new(bytes, DecodeOptions::default()).next().unwrap()?;
/// assert_eq!(batch.last_offset(), 42);
/// # Ok::<(), kseek_protocol::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RecordBatchBuilder {
    base_offset: i64,
    partition_leader_epoch: i32,
    compression: Compression,
    log_append_time: Option<i64>,
    transactional: bool,
    control: bool,
    delete_horizon: bool,
    last_offset_delta: Option<i32>,
    base_timestamp: i64,
    max_timestamp: Option<i64>,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    records: Vec<NewRecord>,
}

/// Builder methods that set one field each: `name: Type;` becomes `fn name(self, name: Type)
/// -> Self`, with the doc comment given.
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        pub fn $field(mut self, $field: $ty) -> Self {
            self.$field = $field;
            self
        }
    )*};
}

impl RecordBatchBuilder {
    /// A batch at `base_offset` whose record timestamps are deltas from `base_timestamp`.
    pub fn new(base_offset: i64, base_timestamp: i64) -> RecordBatchBuilder {
        RecordBatchBuilder {
            base_offset,
            partition_leader_epoch: -1,
            compression: Compression::None,
            log_append_time: None,
            transactional: false,
            control: false,
            delete_horizon: false,
            last_offset_delta: None,
            base_timestamp,
            max_timestamp: None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: Vec::new(),
        }
    }

    /// A control batch holding one transaction marker (ABORT or COMMIT) for a producer, as
    /// a transaction coordinator writes it: transactional, control, one record whose key is
    /// `version 0, type` and whose value is `version 0, coordinator epoch`.
    pub fn control_marker(
        base_offset: i64,
        timestamp: i64,
        producer_id: i64,
        producer_epoch: i16,
        kind: ControlRecordType,
        coordinator_epoch: i32,
    ) -> RecordBatchBuilder {
        let mut key = Vec::with_capacity(4);
        key.put_i16(0);
        key.put_i16(kind.0);
        let mut value = Vec::with_capacity(6);
        value.put_i16(0);
        value.put_i32(coordinator_epoch);
        RecordBatchBuilder::new(base_offset, timestamp)
            .producer(producer_id, producer_epoch, -1)
            .transactional(true)
            .control(true)
            .record(NewRecord::new(0, 0).key(key).value(value))
    }

    setters! {
        /// Sets the codec the records are compressed with.
        compression: Compression;
        /// Sets the partition leader epoch.
        partition_leader_epoch: i32;
        /// Sets the transactional attribute.
        transactional: bool;
        /// Sets the control attribute.
        control: bool;
        /// Sets the delete-horizon attribute (the base timestamp is then the delete horizon).
        delete_horizon: bool;
    }

    /// Marks the batch as stamped with log-append time `timestamp` (which becomes the max
    /// timestamp and every record's timestamp).
    pub fn log_append_time(mut self, timestamp: i64) -> RecordBatchBuilder {
        self.log_append_time = Some(timestamp);
        self
    }

    /// Sets the producer id, epoch and base sequence.
    pub fn producer(mut self, id: i64, epoch: i16, base_sequence: i32) -> RecordBatchBuilder {
        self.producer_id = id;
        self.producer_epoch = epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// Overrides the last offset delta (by default the largest record offset delta, or 0).
    pub fn last_offset_delta(mut self, delta: i32) -> RecordBatchBuilder {
        self.last_offset_delta = Some(delta);
        self
    }

    /// Overrides the max timestamp.
    pub fn max_timestamp(mut self, timestamp: i64) -> RecordBatchBuilder {
        self.max_timestamp = Some(timestamp);
        self
    }

    /// Adds a record.
    pub fn record(mut self, record: NewRecord) -> RecordBatchBuilder {
        self.records.push(record);
        self
    }

    /// Adds a record (by reference, for loops).
    pub fn push(&mut self, record: NewRecord) -> &mut RecordBatchBuilder {
        self.records.push(record);
        self
    }

    /// The number of records added so far.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Writes the batch, compressing the records and computing the CRC-32C.
    pub fn build(&self) -> Result<Bytes> {
        let mut raw = Vec::new();
        let mut scratch = Vec::new();
        for r in &self.records {
            r.write(&mut raw, &mut scratch)?;
        }
        let body = match self.compression {
            Compression::None => raw,
            codec => compress(codec, &raw)?,
        };
        let mut attributes = self.compression.as_attribute_bits();
        if self.log_append_time.is_some() {
            attributes |= 0x08;
        }
        if self.transactional {
            attributes |= 0x10;
        }
        if self.control {
            attributes |= 0x20;
        }
        if self.delete_horizon {
            attributes |= 0x40;
        }
        let last_offset_delta = self.last_offset_delta.unwrap_or_else(|| {
            self.records
                .iter()
                .map(|r| r.offset_delta)
                .max()
                .unwrap_or(0)
        });
        let max_timestamp = self
            .max_timestamp
            .or(self.log_append_time)
            .unwrap_or_else(|| {
                self.records
                    .iter()
                    .map(|r| self.base_timestamp.wrapping_add(r.timestamp_delta))
                    .max()
                    .unwrap_or(self.base_timestamp)
            });
        let size = RECORD_BATCH_OVERHEAD + body.len();
        let length = i32::try_from(size - LOG_OVERHEAD).map_err(|_| Error::TooLong {
            what: "record batch",
            len: size,
        })?;
        let count = varint_count(self.records.len(), "record batch records")?;
        let mut out = Vec::with_capacity(size);
        out.put_i64(self.base_offset);
        out.put_i32(length);
        out.put_i32(self.partition_leader_epoch);
        out.put_i8(2);
        out.put_u32(0); // CRC, filled in below
        out.put_i16(attributes);
        out.put_i32(last_offset_delta);
        out.put_i64(self.base_timestamp);
        out.put_i64(max_timestamp);
        out.put_i64(self.producer_id);
        out.put_i16(self.producer_epoch);
        out.put_i32(self.base_sequence);
        out.put_i32(count);
        out.extend_from_slice(&body);
        let crc = crate::records::crc32c(out.get(21..).unwrap_or_default());
        if let Some(slot) = out.get_mut(17..21) {
            slot.copy_from_slice(&crc.to_be_bytes());
        }
        Ok(Bytes::from(out))
    }
}

/// Writes a legacy (magic 0 or 1) message set, for tests.
///
/// With [`Compression::None`] the messages are written one after another. Otherwise they
/// become the compressed value of one wrapper message whose offset is the last message's
/// offset; magic-1 inner offsets are written relative to the first message (as Java writes
/// 0..n-1 for consecutive offsets) and the wrapper's timestamp is the largest inner one, or
/// `log_append_time` (magic 1 only). Magic-0 lz4 is written with a correct frame header
/// checksum, not the broken one old Kafka wrote (the reader accepts both).
///
/// The messages are the [`OwnedRecord`]s a reader gives back: absolute offsets, the timestamp
/// (ignored for magic 0), key and value. Legacy messages have no headers, so a record with
/// headers is refused.
pub fn encode_legacy_message_set(
    magic: i8,
    compression: Compression,
    log_append_time: Option<i64>,
    messages: &[OwnedRecord],
) -> Result<Bytes> {
    if !(0..=1).contains(&magic) {
        return Err(Error::InvalidValue {
            what: "legacy magic",
            value: i64::from(magic),
        });
    }
    if compression == Compression::Zstd {
        return Err(Error::UnsupportedCompression { codec: 4 });
    }
    if let Some(m) = messages.iter().find(|m| !m.headers.is_empty()) {
        return Err(Error::InvalidValue {
            what: "headers in a legacy message (at offset)",
            value: m.offset,
        });
    }
    let ts_bit: i8 = if log_append_time.is_some() && magic == 1 {
        0x08
    } else {
        0
    };
    let mut out = Vec::new();
    if compression == Compression::None {
        for m in messages {
            let ts = log_append_time.unwrap_or(m.timestamp);
            put_legacy_message(
                &mut out,
                magic,
                ts_bit,
                m.offset,
                ts,
                m.key.as_deref(),
                m.value.as_deref(),
            )?;
        }
        return Ok(Bytes::from(out));
    }
    let (Some(first), Some(last)) = (messages.first(), messages.last()) else {
        return Err(Error::InvalidValue {
            what: "empty compressed legacy message set",
            value: 0,
        });
    };
    let mut inner = Vec::new();
    for m in messages {
        let offset = if magic == 1 {
            m.offset.wrapping_sub(first.offset)
        } else {
            m.offset
        };
        put_legacy_message(
            &mut inner,
            magic,
            0,
            offset,
            m.timestamp,
            m.key.as_deref(),
            m.value.as_deref(),
        )?;
    }
    let compressed = compress(compression, &inner)?;
    let wrapper_ts =
        log_append_time.unwrap_or_else(|| messages.iter().map(|m| m.timestamp).max().unwrap_or(-1));
    let attributes = ts_bit | compression.as_attribute_bits() as i8;
    put_legacy_message(
        &mut out,
        magic,
        attributes,
        last.offset,
        wrapper_ts,
        None,
        Some(&compressed),
    )?;
    Ok(Bytes::from(out))
}

fn put_legacy_message(
    out: &mut Vec<u8>,
    magic: i8,
    attributes: i8,
    offset: i64,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<()> {
    let mut msg = Vec::new();
    msg.put_i8(magic);
    msg.put_i8(attributes);
    if magic == 1 {
        msg.put_i64(timestamp);
    }
    for b in [key, value] {
        match b {
            None => msg.put_i32(-1),
            Some(b) => {
                msg.put_i32(i32::try_from(b.len()).map_err(|_| Error::TooLong {
                    what: "legacy message field",
                    len: b.len(),
                })?);
                msg.extend_from_slice(b);
            }
        }
    }
    out.put_i64(offset);
    out.put_i32(i32::try_from(msg.len() + 4).map_err(|_| Error::TooLong {
        what: "legacy message",
        len: msg.len(),
    })?);
    out.put_u32(crc32_ieee(&msg));
    out.extend_from_slice(&msg);
    Ok(())
}

/// The timestamp type a builder writes (exposed for symmetry with the decoder).
impl RecordBatchBuilder {
    /// The timestamp type the batch will declare.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.log_append_time.is_some() {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::records::{Batch, Batches, DecodeOptions, OwnedHeader, OwnedRecord};

    fn codecs() -> Vec<Compression> {
        [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ]
        .into_iter()
        .filter(|c| c.is_available())
        .collect()
    }

    fn bytes_strategy() -> impl Strategy<Value = Option<Bytes>> {
        prop::option::of(prop::collection::vec(any::<u8>(), 0..300).prop_map(Bytes::from))
    }

    fn record_strategy() -> impl Strategy<Value = NewRecord> {
        (
            0i32..1_000,
            any::<i64>(),
            bytes_strategy(),
            bytes_strategy(),
            prop::collection::vec(
                (
                    prop::collection::vec(any::<u8>(), 0..20).prop_map(Bytes::from),
                    bytes_strategy(),
                ),
                0..4,
            ),
        )
            .prop_map(
                |(offset_delta, timestamp_delta, key, value, headers)| NewRecord {
                    offset_delta,
                    timestamp_delta: timestamp_delta >> 2,
                    key,
                    value,
                    headers,
                },
            )
    }

    fn decode_all(bytes: Bytes) -> Vec<(Batch, Vec<OwnedRecord>)> {
        Batches::new(bytes, DecodeOptions::default())
            .map(|b| {
                let b = b.unwrap();
                let records = b.records().unwrap();
                let owned = records.iter().map(|r| r.unwrap().to_owned()).collect();
                (b, owned)
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn v2_batches_round_trip_with_every_codec(
            base_offset in 0i64..(1 << 50),
            base_timestamp in -1i64..(1 << 45),
            producer in prop::option::of((0i64..1 << 40, 0i16..100, 0i32..1 << 20)),
            transactional in any::<bool>(),
            leader_epoch in -1i32..50,
            log_append_time in prop::option::of(0i64..1 << 45),
            records in prop::collection::vec(record_strategy(), 0..12),
        ) {
            for codec in codecs() {
                let mut b = RecordBatchBuilder::new(base_offset, base_timestamp)
                    .compression(codec)
                    .partition_leader_epoch(leader_epoch)
                    .transactional(transactional);
                if let Some((id, epoch, seq)) = producer {
                    b = b.producer(id, epoch, seq);
                }
                if let Some(t) = log_append_time {
                    b = b.log_append_time(t);
                }
                for r in &records {
                    b.push(r.clone());
                }
                let bytes = b.build().unwrap();
                let decoded = decode_all(bytes.clone());
                prop_assert_eq!(decoded.len(), 1);
                let (batch, got) = &decoded[0];
                let Batch::V2(v2) = batch else { panic!("not v2") };
                prop_assert_eq!(v2.base_offset(), base_offset);
                prop_assert_eq!(v2.compression(), codec);
                prop_assert_eq!(v2.partition_leader_epoch(), leader_epoch);
                prop_assert_eq!(v2.is_transactional(), transactional);
                prop_assert_eq!(v2.producer_id(), producer.map_or(-1, |p| p.0));
                prop_assert_eq!(v2.records_count() as usize, records.len());
                prop_assert_eq!(
                    v2.last_offset_delta(),
                    records.iter().map(|r| r.offset_delta).max().unwrap_or(0)
                );
                prop_assert_eq!(v2.as_bytes(), &bytes);
                let want: Vec<OwnedRecord> = records
                    .iter()
                    .map(|r| OwnedRecord {
                        offset: base_offset + i64::from(r.offset_delta),
                        timestamp: log_append_time
                            .unwrap_or(base_timestamp.wrapping_add(r.timestamp_delta)),
                        key: r.key.clone(),
                        value: r.value.clone(),
                        headers: r
                            .headers
                            .iter()
                            .map(|(k, v)| OwnedHeader { key: k.clone(), value: v.clone() })
                            .collect(),
                    })
                    .collect();
                prop_assert_eq!(got, &want);
            }
        }

        #[test]
        fn legacy_sets_round_trip(
            magic in 0i8..=1,
            first in 0i64..(1 << 40),
            values in prop::collection::vec((bytes_strategy(), bytes_strategy(), 0i64..1 << 40), 1..8),
        ) {
            let messages: Vec<OwnedRecord> = values
                .iter()
                .enumerate()
                .map(|(i, (k, v, ts))| OwnedRecord {
                    offset: first + i as i64,
                    timestamp: *ts,
                    key: k.clone(),
                    value: v.clone(),
                    headers: Vec::new(),
                })
                .collect();
            for codec in codecs().into_iter().filter(|c| *c != Compression::Zstd) {
                let bytes = encode_legacy_message_set(magic, codec, None, &messages).unwrap();
                let got: Vec<OwnedRecord> =
                    decode_all(bytes).into_iter().flat_map(|(_, r)| r).collect();
                let want: Vec<OwnedRecord> = messages
                    .iter()
                    .map(|m| OwnedRecord {
                        timestamp: if magic == 0 { -1 } else { m.timestamp },
                        ..m.clone()
                    })
                    .collect();
                prop_assert_eq!(got, want, "codec {:?}", codec);
            }
        }
    }

    #[test]
    fn legacy_sets_refuse_headers() {
        let with_header = OwnedRecord {
            offset: 7,
            headers: vec![OwnedHeader {
                key: Bytes::from_static(b"h"),
                value: None,
            }],
            ..OwnedRecord::default()
        };
        let err = encode_legacy_message_set(1, Compression::None, None, &[with_header]);
        assert!(matches!(
            err,
            Err(Error::InvalidValue { value: 7, what }) if what.contains("headers")
        ));
    }

    #[test]
    fn control_markers_parse() {
        use crate::records::{ControlRecord, ControlRecordType};
        for kind in [ControlRecordType::ABORT, ControlRecordType::COMMIT] {
            let bytes = RecordBatchBuilder::control_marker(9, 0, 5, 1, kind, 77)
                .build()
                .unwrap();
            let (batch, _) = decode_all(bytes.clone()).pop().unwrap();
            assert!(batch.is_control() && batch.is_transactional());
            assert_eq!(batch.producer_id(), 5);
            let records = batch.records().unwrap();
            let r = records.iter().next().unwrap().unwrap();
            let c = ControlRecord::parse(&r).unwrap();
            assert_eq!(c.kind, kind);
            assert_eq!(c.version, 0);
            assert_eq!(c.coordinator_epoch, Some(77));
        }
    }
}

//! Records and their lazy, zero-copy iteration (the hot path).
//!
//! A [`Records`] value owns the bytes of one batch's record area: a slice of the Fetch
//! response for an uncompressed batch, or the output of one decompression for a compressed
//! one. Iterating it decodes one [`Record`] at a time; keys, values and headers are `&[u8]`
//! views into that buffer, so the uncompressed path allocates nothing per record.
//!
//! # References
//! <https://kafka.apache.org/documentation/#record> (magic 2 record and header layout);
//! Kafka's `DefaultRecord.readFrom` and `LegacyRecord` (Java) for the validation rules.

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::primitives::{
    fast_uvarint, fast_uvarlong, read_uvarint, read_uvarlong, zigzag32, zigzag64,
};
use crate::records::crc32::crc32_ieee;

/// The smallest possible magic-2 record: a one-byte length, attributes, timestamp delta,
/// offset delta, key length, value length and header count, one byte each.
pub(crate) const MIN_V2_RECORD_SIZE: usize = 7;

/// The smallest possible magic-0 entry in a message set: offset, size, crc, magic,
/// attributes, key length and value length.
pub(crate) const MIN_LEGACY_ENTRY_SIZE: usize = 8 + 4 + LEGACY_V0_OVERHEAD;

/// Message bytes after the size field for magic 0 with a null key and null value.
pub(crate) const LEGACY_V0_OVERHEAD: usize = 4 + 1 + 1 + 4 + 4;

/// The records of one batch, decoded lazily.
///
/// Obtained from [`RecordBatch::records`](crate::records::RecordBatch::records) or
/// [`Batch::records`](crate::records::Batch::records). Iterate `&records` (or call
/// [`Records::iter`]) to get [`Record`]s that borrow from it. Keep this value around while
/// you use the records: for a compressed batch it holds the one decompressed copy.
#[derive(Clone, Debug)]
pub struct Records {
    buf: Bytes,
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    V2 {
        count: u32,
        base_offset: i64,
        base_timestamp: i64,
        /// With log-append time every record's timestamp is the batch's max timestamp.
        log_append_time: Option<i64>,
    },
    Legacy(LegacyKind),
}

/// How to read a legacy message set held by [`Records`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct LegacyKind {
    /// The highest magic a message may have (the wrapper's, for a compressed wrapper).
    pub(crate) magic: i8,
    /// Added to each inner offset: for magic-1 wrappers, `wrapper offset - last relative
    /// offset`; zero where inner offsets are absolute.
    pub(crate) offset_adjust: i64,
    /// With log-append time on the wrapper, every inner timestamp is the wrapper's.
    pub(crate) log_append_time: Option<i64>,
    /// Whether to check each message's CRC-32 (already done for a lone shallow message).
    pub(crate) verify_crc: bool,
    /// Whether `buf` holds a decompressed inner set (nested compression is refused).
    pub(crate) inner: bool,
}

impl Records {
    /// Records of a magic-2 batch. `count` was checked to be non-negative.
    pub(crate) fn v2(
        buf: Bytes,
        count: u32,
        base_offset: i64,
        base_timestamp: i64,
        log_append_time: Option<i64>,
    ) -> Records {
        Records {
            buf,
            kind: Kind::V2 {
                count,
                base_offset,
                base_timestamp,
                log_append_time,
            },
        }
    }

    /// Records of a legacy message set (one shallow message, or a decompressed inner set).
    pub(crate) fn legacy(buf: Bytes, kind: LegacyKind) -> Records {
        Records {
            buf,
            kind: Kind::Legacy(kind),
        }
    }

    /// Iterates the records, decoding each on demand.
    #[inline]
    pub fn iter(&self) -> RecordsIter<'_> {
        let (remaining, base_offset, base_timestamp, log_append_time, legacy) = match self.kind {
            Kind::V2 {
                count,
                base_offset,
                base_timestamp,
                log_append_time,
            } => (count, base_offset, base_timestamp, log_append_time, None),
            Kind::Legacy(kind) => (0, 0, 0, None, Some(kind)),
        };
        let (timestamp_base, delta_mask) = match log_append_time {
            None => (base_timestamp, -1),
            Some(t) => (t, 0),
        };
        RecordsIter {
            v2: V2Iter {
                data: &self.buf,
                buf: &self.buf,
                remaining,
                base_offset,
                timestamp_base,
                delta_mask,
            },
            legacy,
        }
    }

    /// The buffer the records are read from: the batch's record area, decompressed if the
    /// batch was compressed (for legacy formats, a message set).
    pub fn bytes(&self) -> &Bytes {
        &self.buf
    }

    /// The record count the batch declares (magic 2), or `None` for a legacy message set,
    /// which has no count. A hostile batch can declare any count; iteration stops with an
    /// error when the bytes run out, and nothing is allocated from this number.
    pub fn declared_count(&self) -> Option<u32> {
        match self.kind {
            Kind::V2 { count, .. } => Some(count),
            Kind::Legacy(_) => None,
        }
    }
}

impl<'a> IntoIterator for &'a Records {
    type Item = Result<Record<'a>>;
    type IntoIter = RecordsIter<'a>;

    #[inline]
    fn into_iter(self) -> RecordsIter<'a> {
        self.iter()
    }
}

/// An iterator over the [`Record`]s of a [`Records`] value.
///
/// Each item is a `Result`: a malformed record is an error, after which the iterator ends.
/// For magic 2 it is also an error when bytes remain after the declared number of records.
#[derive(Clone, Debug)]
pub struct RecordsIter<'a> {
    // A struct rather than an enum of the two formats, and no `&mut` of it ever leaves the
    // hot path, so the optimiser keeps the cursor in registers (an enum's variants share
    // memory, which kept the whole iterator on the stack).
    /// The cursor; for a legacy set only `data` and `buf` are used.
    v2: V2Iter<'a>,
    /// `Some` for a legacy message set.
    legacy: Option<LegacyKind>,
}

impl<'a> Iterator for RecordsIter<'a> {
    type Item = Result<Record<'a>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Result<Record<'a>>> {
        match self.legacy {
            None => self.v2.next(),
            Some(kind) => {
                let (item, rest) = legacy_next(self.v2.data, self.v2.buf, kind);
                self.v2.data = rest;
                item
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let it = &self.v2;
        match self.legacy {
            None => (0, Some((it.remaining as usize).min(it.data.len() + 1))),
            Some(_) => (0, Some(it.data.len() / MIN_LEGACY_ENTRY_SIZE + 1)),
        }
    }
}

impl core::iter::FusedIterator for RecordsIter<'_> {}

/// One record, borrowing its key, value and headers from the buffer it was decoded from.
///
/// Use [`Record::key_bytes`] / [`Record::value_bytes`] (or [`Record::to_owned`]) for owned
/// [`Bytes`] that share the buffer instead of copying it.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    offset: i64,
    timestamp: i64,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    headers: Headers<'a>,
}

impl<'a> Record<'a> {
    /// The record's absolute offset in the partition.
    #[inline]
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The record's timestamp in milliseconds since the epoch: the batch's max timestamp
    /// under log-append time, base timestamp + delta under create time, and -1 for magic 0.
    #[inline]
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }

    /// The key, or `None` for a null key.
    #[inline]
    pub fn key(&self) -> Option<&'a [u8]> {
        self.key
    }

    /// The value, or `None` for a null value (a tombstone on a compacted topic).
    #[inline]
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }

    /// The headers, in wire order (always empty for legacy formats).
    #[inline]
    pub fn headers(&self) -> Headers<'a> {
        self.headers
    }

    /// The key as [`Bytes`] sharing the batch's buffer (no copy).
    pub fn key_bytes(&self) -> Option<Bytes> {
        self.key.map(|k| self.headers.buf.slice_ref(k))
    }

    /// The value as [`Bytes`] sharing the batch's buffer (no copy).
    pub fn value_bytes(&self) -> Option<Bytes> {
        self.value.map(|v| self.headers.buf.slice_ref(v))
    }

    /// The buffer the record's slices point into (see [`Records::bytes`]).
    pub fn buffer(&self) -> &'a Bytes {
        self.headers.buf
    }

    /// An owned copy of the record whose byte fields share the batch's buffer.
    pub fn to_owned(&self) -> OwnedRecord {
        OwnedRecord {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key_bytes(),
            value: self.value_bytes(),
            headers: self
                .headers
                .map(|h| OwnedHeader {
                    key: h.key_bytes(),
                    value: h.value_bytes(),
                })
                .collect(),
        }
    }
}

/// A record that owns its fields (sharing, not copying, the batch's buffer).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedRecord {
    /// The absolute offset.
    pub offset: i64,
    /// The timestamp in milliseconds (see [`Record::timestamp`]).
    pub timestamp: i64,
    /// The key, `None` for null.
    pub key: Option<Bytes>,
    /// The value, `None` for null.
    pub value: Option<Bytes>,
    /// The headers in wire order.
    pub headers: Vec<OwnedHeader>,
}

/// A record header that owns its fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedHeader {
    /// The header key (UTF-8 by convention; not checked).
    pub key: Bytes,
    /// The header value, `None` for null.
    pub value: Option<Bytes>,
}

/// The headers of one record, iterated lazily.
///
/// The header bytes were validated when the record was decoded, so iteration cannot fail.
#[derive(Clone, Copy, Debug)]
pub struct Headers<'a> {
    data: &'a [u8],
    remaining: u32,
    buf: &'a Bytes,
}

impl<'a> Headers<'a> {
    /// The number of headers not yet iterated.
    pub fn len(&self) -> usize {
        self.remaining as usize
    }

    /// Whether there are no (more) headers.
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;

    #[inline]
    fn next(&mut self) -> Option<Header<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // Validated when the record was decoded, so this reads with the error-free helpers;
        // an inconsistency here would be a bug, and ends the iteration rather than panicking.
        let parsed = fast_bytes(self.data).and_then(|(key, rest)| {
            let (value, rest) = fast_bytes(rest)?;
            Some((key.unwrap_or_default(), value, rest))
        });
        match parsed {
            Some((key, value, rest)) => {
                self.data = rest;
                Some(Header {
                    key,
                    value,
                    buf: self.buf,
                })
            }
            None => {
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

impl ExactSizeIterator for Headers<'_> {}

/// One record header: a key (never null) and an optional value.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    key: &'a [u8],
    value: Option<&'a [u8]>,
    buf: &'a Bytes,
}

impl<'a> Header<'a> {
    /// The key bytes (Kafka's clients write UTF-8).
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// The key as UTF-8, or `None` if it is not valid UTF-8.
    pub fn key_str(&self) -> Option<&'a str> {
        core::str::from_utf8(self.key).ok()
    }

    /// The value, `None` for null.
    #[inline]
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }

    /// The key as [`Bytes`] sharing the batch's buffer.
    pub fn key_bytes(&self) -> Bytes {
        self.buf.slice_ref(self.key)
    }

    /// The value as [`Bytes`] sharing the batch's buffer.
    pub fn value_bytes(&self) -> Option<Bytes> {
        self.value.map(|v| self.buf.slice_ref(v))
    }
}

// ---------------------------------------------------------------------------------------------
// Magic 2
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct V2Iter<'a> {
    data: &'a [u8],
    buf: &'a Bytes,
    remaining: u32,
    base_offset: i64,
    /// A record's timestamp is `timestamp_base + (delta & delta_mask)`: the base timestamp
    /// and all ones under create time, the batch's max timestamp and zero under log-append
    /// time. One add and one and, no branch, and a register less than an `Option`.
    timestamp_base: i64,
    delta_mask: i64,
}

impl<'a> V2Iter<'a> {
    #[inline(always)]
    fn next(&mut self) -> Option<Result<Record<'a>>> {
        if self.remaining == 0 {
            if self.data.is_empty() {
                return None;
            }
            let count = self.data.len();
            self.data = &[];
            return Some(Err(Error::TrailingBytes {
                what: "record batch records",
                count,
            }));
        }
        self.remaining -= 1;
        match self.decode_fast() {
            Some(r) => Some(Ok(r)),
            None => {
                let e = decode_error(self.clone());
                self.remaining = 0;
                self.data = &[];
                Some(Err(e))
            }
        }
    }

    /// The hot path: decodes a well-formed record with no error reporting at all (`None`
    /// on anything unusual, leaving `self.data` untouched), so the common case carries no
    /// error construction. [`V2Iter::decode`] then redoes the work with precise errors.
    ///
    /// Every helper takes and returns slices by value: nothing here takes the address of a
    /// local, so the cursor stays in registers.
    #[inline(always)]
    fn decode_fast(&mut self) -> Option<Record<'a>> {
        let (len, data) = fast_uvarint(self.data)?;
        if len & 1 != 0 {
            return None;
        }
        let (rec, rest) = data.split_at_checked((len >> 1) as usize)?;
        // Attributes: unused in every version so far.
        let (_attributes, rec) = rec.split_first()?;
        let (timestamp_delta, rec) = fast_varlong(rec)?;
        let (offset_delta, rec) = fast_varint(rec)?;
        let (key, rec) = fast_bytes(rec)?;
        let (value, rec) = fast_bytes(rec)?;
        let (header_count, rec) = fast_uvarint(rec)?;
        let headers = if header_count == 0 && rec.is_empty() {
            0
        } else {
            fast_check_headers(rec, header_count)?
        };
        self.data = rest;
        Some(self.record(timestamp_delta, offset_delta, key, value, rec, headers))
    }

    /// The record whose fields were just read (both paths).
    #[inline(always)]
    fn record(
        &self,
        timestamp_delta: i64,
        offset_delta: i32,
        key: Option<&'a [u8]>,
        value: Option<&'a [u8]>,
        headers: &'a [u8],
        header_count: u32,
    ) -> Record<'a> {
        Record {
            offset: self.base_offset.wrapping_add(i64::from(offset_delta)),
            timestamp: self
                .timestamp_base
                .wrapping_add(timestamp_delta & self.delta_mask),
            key,
            value,
            headers: Headers {
                data: headers,
                remaining: header_count,
                buf: self.buf,
            },
        }
    }

    /// The checked path, with precise errors (also correct for well-formed records).
    #[inline(never)]
    fn decode(&mut self) -> Result<Record<'a>> {
        let len = read_varint(&mut self.data, "record length")?;
        let Some((mut rec, rest)) = usize::try_from(len)
            .ok()
            .and_then(|n| self.data.split_at_checked(n))
        else {
            return Err(if len < 0 {
                Error::InvalidLength {
                    what: "record length",
                    len: i64::from(len),
                }
            } else {
                Error::Truncated {
                    what: "record",
                    needed: len as usize,
                    remaining: self.data.len(),
                }
            });
        };
        self.data = rest;
        // Attributes: unused in every version so far.
        let Some((_, r)) = rec.split_first() else {
            return Err(Error::Truncated {
                what: "record attributes",
                needed: 1,
                remaining: 0,
            });
        };
        rec = r;
        let timestamp_delta = read_varlong(&mut rec, "record timestamp delta")?;
        let offset_delta = read_varint(&mut rec, "record offset delta")?;
        let key = read_bytes(&mut rec, "record key")?;
        let value = read_bytes(&mut rec, "record value")?;
        let header_count = read_varint(&mut rec, "record header count")?;
        let headers = if header_count == 0 {
            if !rec.is_empty() {
                return Err(Error::TrailingBytes {
                    what: "record",
                    count: rec.len(),
                });
            }
            0
        } else {
            check_headers(rec, header_count)?
        };
        Ok(self.record(timestamp_delta, offset_delta, key, value, rec, headers))
    }
}

/// Why [`V2Iter::decode_fast`] declined the next record, which ends the iteration.
///
/// The fast path declines only malformed records (every varint length goes through it), so
/// the checked path always finds the error; should the two paths ever disagree, the record is
/// refused rather than returned. Takes a copy of the iterator, and returns just the error,
/// so that no address of the hot path's cursor or record is ever taken.
#[cold]
#[inline(never)]
fn decode_error(mut it: V2Iter<'_>) -> Error {
    match it.decode() {
        Err(e) => e,
        Ok(_) => Error::InvalidValue {
            what: "record (the fast and checked decoders disagree)",
            value: 0,
        },
    }
}

/// Reads a zigzag varint, with the one- to three-byte cases inline; `None` on any error.
#[inline(always)]
fn fast_varint(data: &[u8]) -> Option<(i32, &[u8])> {
    let (n, rest) = fast_uvarint(data)?;
    Some((zigzag32(n), rest))
}

/// Reads a zigzag varlong, with the one- to three-byte cases inline; `None` on any error.
#[inline(always)]
fn fast_varlong(data: &[u8]) -> Option<(i64, &[u8])> {
    let (n, rest) = fast_uvarlong(data)?;
    Some((zigzag64(n), rest))
}

/// Reads a varint-length-prefixed byte field (`-1` = null); `None` on any error.
#[inline(always)]
fn fast_bytes(data: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    let (n, data) = fast_uvarint(data)?;
    fast_bytes_of(n, data)
}

/// A byte field whose zigzag length `n` has been read (`-1` = null); `None` on any error.
#[inline(always)]
fn fast_bytes_of(n: u32, data: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    // Work on the zigzag form: odd means negative, and 1 (= -1) means null.
    if n & 1 != 0 {
        return (n == 1).then_some((None, data));
    }
    let (b, rest) = data.split_at_checked((n >> 1) as usize)?;
    Some((Some(b), rest))
}

/// The fast path's [`check_headers`]: `zigzag_count` is the raw (zigzag) count; `None` on
/// anything wrong.
#[inline(always)]
fn fast_check_headers(mut data: &[u8], zigzag_count: u32) -> Option<u32> {
    if zigzag_count & 1 != 0 {
        return None;
    }
    let n = zigzag_count >> 1;
    // No up-front check of the count against the bytes (the checked path has one): each
    // header takes at least two bytes, so a lying count runs out of bytes, and is declined,
    // after at most `data.len() / 2` rounds.
    for _ in 0..n {
        // Key: never null, so the zigzag form must be even.
        let (k, rest) = fast_uvarint(data)?;
        if k & 1 != 0 {
            return None;
        }
        data = rest.get((k >> 1) as usize..)?;
        // Value: -1 (zigzag 1) is null; other negatives are wrong.
        let (v, rest) = fast_uvarint(data)?;
        data = if v & 1 != 0 {
            if v != 1 {
                return None;
            }
            rest
        } else {
            rest.get((v >> 1) as usize..)?
        };
    }
    data.is_empty().then_some(n)
}

/// Checks that `data` holds exactly `count` well-formed headers; returns the count.
fn check_headers(mut data: &[u8], count: i32) -> Result<u32> {
    // Each header takes at least two bytes (key length, value length), so a count larger
    // than that is a lie we can refuse before walking anything.
    let Ok(n) = u32::try_from(count) else {
        return Err(Error::InvalidLength {
            what: "record header count",
            len: i64::from(count),
        });
    };
    if n as usize > data.len() / 2 {
        return Err(Error::InvalidLength {
            what: "record header count",
            len: i64::from(count),
        });
    }
    for _ in 0..n {
        if read_bytes(&mut data, "record header key")?.is_none() {
            return Err(Error::InvalidLength {
                what: "record header key",
                len: -1,
            });
        }
        read_bytes(&mut data, "record header value")?;
    }
    if !data.is_empty() {
        return Err(Error::TrailingBytes {
            what: "record headers",
            count: data.len(),
        });
    }
    Ok(n)
}

/// Reads a zigzag varint length and then that many bytes (`-1` = null).
#[inline(always)]
fn read_bytes<'a>(data: &mut &'a [u8], what: &'static str) -> Result<Option<&'a [u8]>> {
    let len = read_varint(data, what)?;
    take_bytes(data, len, what)
}

/// Splits a field of `len` bytes (`-1` = null), whose length was just read, off `data`.
#[inline(always)]
fn take_bytes<'a>(data: &mut &'a [u8], len: i32, what: &'static str) -> Result<Option<&'a [u8]>> {
    if len < 0 {
        if len == -1 {
            return Ok(None);
        }
        return Err(Error::InvalidLength {
            what,
            len: i64::from(len),
        });
    }
    match data.split_at_checked(len as usize) {
        Some((b, rest)) => {
            *data = rest;
            Ok(Some(b))
        }
        None => Err(Error::Truncated {
            what,
            needed: len as usize,
            remaining: data.len(),
        }),
    }
}

/// Reads a zigzag varint (at most 5 bytes), with the one-byte case first.
#[inline(always)]
pub(crate) fn read_varint(data: &mut &[u8], what: &'static str) -> Result<i32> {
    read_uvarint(data, what).map(zigzag32)
}

/// Reads a zigzag varlong (at most 10 bytes), with the one-byte case first.
#[inline(always)]
pub(crate) fn read_varlong(data: &mut &[u8], what: &'static str) -> Result<i64> {
    read_uvarlong(data, what).map(zigzag64)
}

// ---------------------------------------------------------------------------------------------
// Legacy message sets (magic 0 and 1)
// ---------------------------------------------------------------------------------------------

/// A parsed legacy message (the part after offset and size).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LegacyMessage<'a> {
    pub(crate) crc: u32,
    pub(crate) magic: i8,
    pub(crate) attributes: i8,
    pub(crate) timestamp: i64,
    pub(crate) key: Option<&'a [u8]>,
    pub(crate) value: Option<&'a [u8]>,
}

/// Parses one legacy message body (`crc .. value`), which must fill `msg` exactly.
/// Checks the CRC-32 over `magic .. end` when `verify_crc`.
pub(crate) fn parse_legacy_message<'a>(
    msg: &'a [u8],
    offset: i64,
    verify_crc: bool,
) -> Result<LegacyMessage<'a>> {
    let Some((crc, mut rest)) = msg.split_first_chunk::<4>() else {
        return Err(Error::Truncated {
            what: "legacy message crc",
            needed: 4,
            remaining: msg.len(),
        });
    };
    let crc = u32::from_be_bytes(*crc);
    let covered = rest;
    let Some((&[magic, attributes], r)) = rest.split_first_chunk::<2>() else {
        return Err(Error::Truncated {
            what: "legacy message magic and attributes",
            needed: 2,
            remaining: rest.len(),
        });
    };
    rest = r;
    let magic = magic as i8;
    let attributes = attributes as i8;
    let timestamp = match magic {
        0 => -1,
        1 => {
            let Some((ts, r)) = rest.split_first_chunk::<8>() else {
                return Err(Error::Truncated {
                    what: "legacy message timestamp",
                    needed: 8,
                    remaining: rest.len(),
                });
            };
            rest = r;
            i64::from_be_bytes(*ts)
        }
        _ => return Err(Error::UnknownMagic { magic, offset }),
    };
    let key = read_i32_bytes(&mut rest, "legacy message key")?;
    let value = read_i32_bytes(&mut rest, "legacy message value")?;
    if !rest.is_empty() {
        return Err(Error::TrailingBytes {
            what: "legacy message",
            count: rest.len(),
        });
    }
    if verify_crc {
        let computed = crc32_ieee(covered);
        if computed != crc {
            return Err(Error::CrcMismatch {
                base_offset: offset,
                stored: crc,
                computed,
            });
        }
    }
    Ok(LegacyMessage {
        crc,
        magic,
        attributes,
        timestamp,
        key,
        value,
    })
}

fn read_i32_bytes<'a>(data: &mut &'a [u8], what: &'static str) -> Result<Option<&'a [u8]>> {
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return Err(Error::Truncated {
            what,
            needed: 4,
            remaining: data.len(),
        });
    };
    let len = i32::from_be_bytes(*len);
    *data = rest;
    take_bytes(data, len, what)
}

/// Splits the next `offset, size, message` entry off a legacy message set.
/// Returns `None` when `data` is empty.
pub(crate) fn split_legacy_entry<'a>(data: &mut &'a [u8]) -> Option<Result<(i64, &'a [u8])>> {
    if data.is_empty() {
        return None;
    }
    let Some((head, rest)) = data.split_first_chunk::<12>() else {
        return Some(Err(Error::Truncated {
            what: "legacy message set entry",
            needed: 12,
            remaining: data.len(),
        }));
    };
    let (offset, size) = head.split_at(8);
    let offset = i64::from_be_bytes(offset.try_into().unwrap_or_default());
    let size = i32::from_be_bytes(size.try_into().unwrap_or_default());
    let Some((msg, rest)) = usize::try_from(size)
        .ok()
        .filter(|&n| n >= LEGACY_V0_OVERHEAD)
        .and_then(|n| rest.split_at_checked(n))
    else {
        return Some(Err(if size < LEGACY_V0_OVERHEAD as i32 {
            Error::InvalidLength {
                what: "legacy message size",
                len: i64::from(size),
            }
        } else {
            Error::Truncated {
                what: "legacy message",
                needed: size as usize,
                remaining: rest.len(),
            }
        }));
    };
    *data = rest;
    Some(Ok((offset, msg)))
}

/// The next record of a legacy message set held in `data` (a slice of `buf`), and the bytes
/// after it (none after an error, which ends the iteration). Takes and returns the cursor by
/// value so that the magic-2 hot path it shares an iterator with keeps its cursor in registers.
#[inline(never)]
fn legacy_next<'a>(
    data: &'a [u8],
    buf: &'a Bytes,
    kind: LegacyKind,
) -> (Option<Result<Record<'a>>>, &'a [u8]) {
    let mut rest = data;
    let item = legacy_decode(&mut rest, buf, kind);
    if matches!(item, Some(Err(_))) {
        rest = &[];
    }
    (item, rest)
}

fn legacy_decode<'a>(
    data: &mut &'a [u8],
    buf: &'a Bytes,
    k: LegacyKind,
) -> Option<Result<Record<'a>>> {
    let (offset, msg) = match split_legacy_entry(data)? {
        Ok(e) => e,
        Err(e) => return Some(Err(e)),
    };
    let offset = offset.wrapping_add(k.offset_adjust);
    let m = match parse_legacy_message(msg, offset, k.verify_crc) {
        Ok(m) => m,
        Err(e) => return Some(Err(e)),
    };
    // Java's consumer does not insist that inner and wrapper magic match (only the
    // broker's validation does); a newer inner magic than the wrapper's is nonsense.
    if m.magic > k.magic {
        return Some(Err(Error::InvalidValue {
            what: "inner legacy message magic (newer than the wrapper's)",
            value: i64::from(m.magic),
        }));
    }
    if k.inner && m.attributes & 0x07 != 0 {
        return Some(Err(Error::InvalidValue {
            what: "nested compression in a legacy message set",
            value: i64::from(m.attributes & 0x07),
        }));
    }
    Some(Ok(Record {
        offset,
        timestamp: k.log_append_time.unwrap_or(m.timestamp),
        key: m.key,
        value: m.value,
        headers: Headers {
            data: &[],
            remaining: 0,
            buf,
        },
    }))
}

#[cfg(test)]
mod tests;

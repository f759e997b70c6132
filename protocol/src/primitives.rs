//! Primitive wire types: fixed-width integers, varints, strings, bytes, arrays, UUIDs and
//! tagged-field sections, in both the classic and the compact ("flexible") encodings.
//!
//! Readers take `&mut Bytes` and advance it; byte fields are split off without copying.
//! Every length is checked against the bytes present before anything is allocated, so a
//! hostile length prefix costs an error, never memory.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_types>, KIP-482 (tagged fields).

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::error::{Error, Result};

/// A 16-byte UUID as Kafka sends it (topic IDs). The all-zero UUID means "none".
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero UUID, Kafka's "no topic id".
    pub const ZERO: Uuid = Uuid([0; 16]);

    /// Whether this is the all-zero UUID.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 16]
    }
}

impl core::fmt::Debug for Uuid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(self, f)
    }
}

impl core::fmt::Display for Uuid {
    /// Prints the id as Kafka's tools do: URL-safe base64 without padding, 22 characters
    /// ([`Uuid::to_base64`]), so it can be compared with `kafka-topics --describe` by eye.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.to_base64())
    }
}

impl Uuid {
    /// The URL-safe, unpadded base64 form that Kafka's tools print (`kafka-topics --describe`).
    pub fn to_base64(&self) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::with_capacity(22);
        for chunk in self.0.chunks(3) {
            let b = [
                chunk[0],
                chunk.get(1).copied().unwrap_or(0),
                chunk.get(2).copied().unwrap_or(0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            let chars = chunk.len() + 1;
            for i in 0..chars {
                let idx = (n >> (18 - 6 * i)) & 0x3f;
                out.push(char::from(ALPHABET[idx as usize]));
            }
        }
        out
    }
}

fn need(buf: &Bytes, n: usize, what: &'static str) -> Result<()> {
    if buf.remaining() < n {
        Err(Error::Truncated {
            what,
            needed: n,
            remaining: buf.remaining(),
        })
    } else {
        Ok(())
    }
}

macro_rules! fixed_readers {
    ($($(#[$doc:meta])* $name:ident -> $ty:ty = $get:ident;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name(buf: &mut Bytes, what: &'static str) -> Result<$ty> {
            need(buf, core::mem::size_of::<$ty>(), what)?;
            Ok(buf.$get())
        }
    )*};
}

fixed_readers! {
    /// Reads an `int8`.
    get_i8 -> i8 = get_i8;
    /// Reads a big-endian `int16`.
    get_i16 -> i16 = get_i16;
    /// Reads a big-endian `int32`.
    get_i32 -> i32 = get_i32;
    /// Reads a big-endian `int64`.
    get_i64 -> i64 = get_i64;
    /// Reads a big-endian `uint16`.
    get_u16 -> u16 = get_u16;
    /// Reads a big-endian `uint32`.
    get_u32 -> u32 = get_u32;
    /// Reads a big-endian IEEE 754 `float64`.
    get_f64 -> f64 = get_f64;
}

/// Reads a `bool`: one byte, zero is false and anything else is true (as Kafka's Java reader).
#[inline]
pub fn get_bool(buf: &mut Bytes, what: &'static str) -> Result<bool> {
    Ok(get_i8(buf, what)? != 0)
}

/// Reads a 16-byte `uuid`.
#[inline]
pub fn get_uuid(buf: &mut Bytes, what: &'static str) -> Result<Uuid> {
    need(buf, 16, what)?;
    let mut b = [0u8; 16];
    buf.copy_to_slice(&mut b);
    Ok(Uuid(b))
}

/// Runs the slice reader `read` on `buf` and advances `buf` past what it read.
#[inline(always)]
fn on_slice<T>(
    buf: &mut Bytes,
    what: &'static str,
    read: impl FnOnce(&mut &[u8], &'static str) -> Result<T>,
) -> Result<T> {
    let mut rest: &[u8] = buf;
    let value = read(&mut rest, what)?;
    let used = buf.len() - rest.len();
    buf.advance(used);
    Ok(value)
}

/// Reads an unsigned varint of at most 5 bytes (32 bits).
#[inline]
pub fn get_uvarint(buf: &mut Bytes, what: &'static str) -> Result<u32> {
    on_slice(buf, what, read_uvarint)
}

/// Reads an unsigned varlong of at most 10 bytes (64 bits).
#[inline]
pub fn get_uvarlong(buf: &mut Bytes, what: &'static str) -> Result<u64> {
    on_slice(buf, what, read_uvarlong)
}

/// Reads a zigzag-encoded signed varint (32 bits).
#[inline]
pub fn get_varint(buf: &mut Bytes, what: &'static str) -> Result<i32> {
    get_uvarint(buf, what).map(zigzag32)
}

/// Reads a zigzag-encoded signed varlong (64 bits).
#[inline]
pub fn get_varlong(buf: &mut Bytes, what: &'static str) -> Result<i64> {
    get_uvarlong(buf, what).map(zigzag64)
}

// ---------------------------------------------------------------------------------------------
// The varint decoder, on slices: messages (through `get_uvarint` and the like) and records
// (directly, on the record pass's hot path) share it.
// ---------------------------------------------------------------------------------------------

/// Decodes a zigzag-encoded 32-bit value.
#[inline(always)]
pub(crate) fn zigzag32(n: u32) -> i32 {
    ((n >> 1) as i32) ^ -((n & 1) as i32)
}

/// Decodes a zigzag-encoded 64-bit value.
#[inline(always)]
pub(crate) fn zigzag64(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// The checked varint decoders [`read_uvarint`] and [`read_uvarlong`]: `$bytes` bytes at most,
/// the last of which may only hold the value's top bits (at most `$last`). The one-byte case
/// is inline, the loop (`$slow`) out of line. On error `data` is left as it was.
macro_rules! checked_uvarint {
    ($(#[$doc:meta])* $name:ident, $slow:ident -> $ty:ty, $bytes:literal, $last:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(data: &mut &[u8], what: &'static str) -> Result<$ty> {
            if let Some((&b, rest)) = data.split_first() {
                if b < 0x80 {
                    *data = rest;
                    return Ok(<$ty>::from(b));
                }
            }
            $slow(data, what)
        }

        /// The loop of the decoder of the same type, past the one-byte case.
        #[inline(never)]
        fn $slow(data: &mut &[u8], what: &'static str) -> Result<$ty> {
            let mut value: $ty = 0;
            let mut rest = *data;
            for i in 0..$bytes {
                let Some((&b, r)) = rest.split_first() else {
                    return Err(Error::Truncated {
                        what,
                        needed: i + 1,
                        remaining: i,
                    });
                };
                rest = r;
                if i == $bytes - 1 && b > $last {
                    return Err(Error::VarintOverflow { what });
                }
                value |= <$ty>::from(b & 0x7f) << (7 * i);
                if b & 0x80 == 0 {
                    *data = rest;
                    return Ok(value);
                }
            }
            Err(Error::VarintOverflow { what })
        }
    };
}

checked_uvarint!(
    /// Reads an unsigned varint (at most 5 bytes, 32 bits) off the front of `data`.
    read_uvarint, read_uvarint_slow -> u32, 5, 0x0f
);
checked_uvarint!(
    /// Reads an unsigned varlong (at most 10 bytes, 64 bits) off the front of `data`.
    read_uvarlong, read_uvarlong_slow -> u64, 10, 0x01
);

/// The record pass's varint decoders: the one- to three-byte cases inline, by value (so that
/// no caller's cursor needs an address), and `None` on any error, which the checked path
/// ([`read_uvarint`]) then names. Timestamp deltas in a batch of a few thousand records take
/// three bytes (up to about 17 minutes), hence three bytes inline.
macro_rules! fast_uvarint {
    ($(#[$doc:meta])* $name:ident -> $ty:ty, fallback $slow:ident = $checked:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(data: &[u8]) -> Option<($ty, &[u8])> {
            match data {
                [b0, rest @ ..] if *b0 < 0x80 => Some((<$ty>::from(*b0), rest)),
                [b0, b1, rest @ ..] if *b1 < 0x80 => {
                    Some((<$ty>::from(*b0 & 0x7f) | (<$ty>::from(*b1) << 7), rest))
                }
                [b0, b1, b2, rest @ ..] if *b2 < 0x80 => Some((
                    <$ty>::from(*b0 & 0x7f)
                        | (<$ty>::from(*b1 & 0x7f) << 7)
                        | (<$ty>::from(*b2) << 14),
                    rest,
                )),
                _ => $slow(data),
            }
        }

        /// The fast path's fallback for four bytes or more (kept out of line, and by value,
        /// so the callers' cursors never need an address).
        #[inline(never)]
        fn $slow(mut data: &[u8]) -> Option<($ty, &[u8])> {
            let n = $checked(&mut data, "").ok()?;
            Some((n, data))
        }
    };
}

fast_uvarint!(
    /// Reads an unsigned varint (32 bits) on the record pass's fast path.
    fast_uvarint -> u32, fallback fast_uvarint_slow = read_uvarint_slow
);
fast_uvarint!(
    /// Reads an unsigned varlong (64 bits) on the record pass's fast path.
    fast_uvarlong -> u64, fallback fast_uvarlong_slow = read_uvarlong_slow
);

/// Reads a length prefix: `int16` (classic strings), `int32` (classic bytes and arrays) or a
/// compact unsigned varint holding N+1. Returns `None` for the null marker.
#[inline]
fn get_len(
    buf: &mut Bytes,
    compact: bool,
    wide: bool,
    what: &'static str,
) -> Result<Option<usize>> {
    let len: i64 = if compact {
        i64::from(get_uvarint(buf, what)?) - 1
    } else if wide {
        i64::from(get_i32(buf, what)?)
    } else {
        i64::from(get_i16(buf, what)?)
    };
    match len {
        -1 => Ok(None),
        n if n < -1 => Err(Error::InvalidLength { what, len: n }),
        n => Ok(Some(n as usize)),
    }
}

fn take(buf: &mut Bytes, n: usize, what: &'static str) -> Result<Bytes> {
    if n > buf.remaining() {
        return Err(Error::InvalidLength {
            what,
            len: n as i64,
        });
    }
    Ok(buf.split_to(n))
}

/// Reads a length prefix (see [`get_len`]) and that many bytes, without copying; `None` for
/// the null marker.
#[inline]
fn get_nullable_raw(
    buf: &mut Bytes,
    compact: bool,
    wide: bool,
    what: &'static str,
) -> Result<Option<Bytes>> {
    match get_len(buf, compact, wide, what)? {
        None => Ok(None),
        Some(n) => take(buf, n, what).map(Some),
    }
}

/// Reads a nullable string, classic (`int16` length) or compact.
pub fn get_nullable_string(
    buf: &mut Bytes,
    compact: bool,
    what: &'static str,
) -> Result<Option<String>> {
    let Some(raw) = get_nullable_raw(buf, compact, false, what)? else {
        return Ok(None);
    };
    match core::str::from_utf8(&raw) {
        Ok(s) => Ok(Some(s.to_owned())),
        Err(_) => Err(Error::InvalidUtf8 { what }),
    }
}

/// Reads a non-nullable string; a null on the wire is an error.
pub fn get_string(buf: &mut Bytes, compact: bool, what: &'static str) -> Result<String> {
    get_nullable_string(buf, compact, what)?.ok_or(Error::InvalidValue { what, value: -1 })
}

/// Reads nullable bytes (`int32` length, or compact), without copying.
pub fn get_nullable_bytes(
    buf: &mut Bytes,
    compact: bool,
    what: &'static str,
) -> Result<Option<Bytes>> {
    get_nullable_raw(buf, compact, true, what)
}

/// Reads non-nullable bytes, without copying.
pub fn get_bytes(buf: &mut Bytes, compact: bool, what: &'static str) -> Result<Bytes> {
    get_nullable_bytes(buf, compact, what)?.ok_or(Error::InvalidValue { what, value: -1 })
}

/// Reads an array length and checks that `count * min_elem_size` bytes are present, so a
/// hostile count cannot make the caller reserve memory the input doesn't justify.
///
/// `min_elem_size` is the smallest encoding of one element (at least 1 is enforced).
pub fn get_array_len(
    buf: &mut Bytes,
    compact: bool,
    min_elem_size: usize,
    what: &'static str,
) -> Result<Option<usize>> {
    let len = get_len(buf, compact, true, what)?;
    match len {
        Some(n) if n.saturating_mul(min_elem_size.max(1)) > buf.remaining() => {
            Err(Error::InvalidLength {
                what,
                len: n as i64,
            })
        }
        _ => Ok(len),
    }
}

/// Reads a nullable array whose elements are decoded by `f`.
pub fn get_nullable_array<T>(
    buf: &mut Bytes,
    compact: bool,
    min_elem_size: usize,
    what: &'static str,
    mut f: impl FnMut(&mut Bytes) -> Result<T>,
) -> Result<Option<Vec<T>>> {
    match get_array_len(buf, compact, min_elem_size, what)? {
        None => Ok(None),
        Some(n) => {
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(f(buf)?);
            }
            Ok(Some(out))
        }
    }
}

/// Reads a non-nullable array; a null on the wire is an error.
pub fn get_array<T>(
    buf: &mut Bytes,
    compact: bool,
    min_elem_size: usize,
    what: &'static str,
    f: impl FnMut(&mut Bytes) -> Result<T>,
) -> Result<Vec<T>> {
    get_nullable_array(buf, compact, min_elem_size, what, f)?
        .ok_or(Error::InvalidValue { what, value: -1 })
}

/// One tagged field that the decoder did not know, kept as raw bytes so that re-encoding
/// reproduces it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawTaggedField {
    /// The tag.
    pub tag: u32,
    /// The field's payload, without the size prefix.
    pub data: Bytes,
}

/// The unknown tagged fields of one struct, in ascending tag order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnknownTaggedFields(pub Vec<RawTaggedField>);

impl UnknownTaggedFields {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Reads a tagged-field section. `known` is called with each tag and its payload and returns
/// `Ok(true)` when it consumed the field; unknown fields are kept in the result.
///
/// A `known` handler must consume its payload completely; leftover bytes are an error.
pub fn get_tagged_fields(
    buf: &mut Bytes,
    what: &'static str,
    mut known: impl FnMut(u32, &mut Bytes) -> Result<bool>,
) -> Result<UnknownTaggedFields> {
    let count = get_uvarint(buf, what)? as usize;
    // Each tagged field takes at least two bytes (tag and size).
    if count.saturating_mul(2) > buf.remaining() {
        return Err(Error::InvalidLength {
            what,
            len: count as i64,
        });
    }
    let mut unknown = Vec::new();
    let mut last: Option<u32> = None;
    for _ in 0..count {
        let tag = get_uvarint(buf, what)?;
        if last.is_some_and(|l| tag <= l) {
            return Err(Error::TagOrder { what });
        }
        last = Some(tag);
        let size = get_uvarint(buf, what)? as usize;
        let mut data = take(buf, size, what)?;
        if known(tag, &mut data)? {
            if !data.is_empty() {
                return Err(Error::TrailingBytes {
                    what,
                    count: data.len(),
                });
            }
        } else {
            unknown.push(RawTaggedField { tag, data });
        }
    }
    Ok(UnknownTaggedFields(unknown))
}

/// Skips a tagged-field section whose fields are all unknown, keeping them.
pub fn get_unknown_tagged_fields(
    buf: &mut Bytes,
    what: &'static str,
) -> Result<UnknownTaggedFields> {
    get_tagged_fields(buf, what, |_, _| Ok(false))
}

// ---------------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------------

/// Writes an unsigned varint.
#[inline]
pub fn put_uvarint(buf: &mut impl BufMut, n: u32) {
    put_uvarlong(buf, u64::from(n));
}

/// Writes an unsigned varlong.
#[inline]
pub fn put_uvarlong(buf: &mut impl BufMut, mut n: u64) {
    while n >= 0x80 {
        buf.put_u8((n as u8) | 0x80);
        n >>= 7;
    }
    buf.put_u8(n as u8);
}

/// Writes a zigzag signed varint.
#[inline]
pub fn put_varint(buf: &mut impl BufMut, n: i32) {
    put_uvarint(buf, ((n << 1) ^ (n >> 31)) as u32);
}

/// Writes a zigzag signed varlong.
#[inline]
pub fn put_varlong(buf: &mut impl BufMut, n: i64) {
    put_uvarlong(buf, ((n << 1) ^ (n >> 63)) as u64);
}

/// The number of bytes [`put_uvarint`] writes for `n`.
#[inline]
pub fn uvarint_len(n: u32) -> usize {
    match n {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// The number of bytes [`put_varint`] writes for `n`.
#[inline]
pub fn varint_len(n: i32) -> usize {
    uvarint_len(((n << 1) ^ (n >> 31)) as u32)
}

/// The number of bytes [`put_varlong`] writes for `n`.
#[inline]
pub fn varlong_len(n: i64) -> usize {
    let mut v = ((n << 1) ^ (n >> 63)) as u64;
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

/// Writes a length prefix (`None` for null) in the classic or compact form.
fn put_len(
    buf: &mut BytesMut,
    len: Option<usize>,
    compact: bool,
    wide: bool,
    what: &'static str,
) -> Result<()> {
    match (len, compact) {
        (None, true) => put_uvarint(buf, 0),
        (None, false) if wide => buf.put_i32(-1),
        (None, false) => buf.put_i16(-1),
        (Some(n), true) => {
            let v = u32::try_from(n)
                .ok()
                .and_then(|n| n.checked_add(1))
                .filter(|&v| v <= i32::MAX as u32)
                .ok_or(Error::TooLong { what, len: n })?;
            put_uvarint(buf, v);
        }
        (Some(n), false) if wide => {
            buf.put_i32(i32::try_from(n).map_err(|_| Error::TooLong { what, len: n })?)
        }
        (Some(n), false) => {
            buf.put_i16(i16::try_from(n).map_err(|_| Error::TooLong { what, len: n })?)
        }
    }
    Ok(())
}

/// Writes a nullable string.
pub fn put_nullable_string(
    buf: &mut BytesMut,
    s: Option<&str>,
    compact: bool,
    what: &'static str,
) -> Result<()> {
    put_len(buf, s.map(str::len), compact, false, what)?;
    if let Some(s) = s {
        buf.put_slice(s.as_bytes());
    }
    Ok(())
}

/// Writes a string.
pub fn put_string(buf: &mut BytesMut, s: &str, compact: bool, what: &'static str) -> Result<()> {
    put_nullable_string(buf, Some(s), compact, what)
}

/// Writes nullable bytes.
pub fn put_nullable_bytes(
    buf: &mut BytesMut,
    b: Option<&[u8]>,
    compact: bool,
    what: &'static str,
) -> Result<()> {
    put_len(buf, b.map(<[u8]>::len), compact, true, what)?;
    if let Some(b) = b {
        buf.put_slice(b);
    }
    Ok(())
}

/// Writes bytes.
pub fn put_bytes(buf: &mut BytesMut, b: &[u8], compact: bool, what: &'static str) -> Result<()> {
    put_nullable_bytes(buf, Some(b), compact, what)
}

/// Writes an array length (`None` for a null array).
pub fn put_array_len(
    buf: &mut BytesMut,
    len: Option<usize>,
    compact: bool,
    what: &'static str,
) -> Result<()> {
    put_len(buf, len, compact, true, what)
}

/// Writes an array whose elements are encoded by `f`.
pub fn put_array<T>(
    buf: &mut BytesMut,
    items: &[T],
    compact: bool,
    what: &'static str,
    mut f: impl FnMut(&mut BytesMut, &T) -> Result<()>,
) -> Result<()> {
    put_array_len(buf, Some(items.len()), compact, what)?;
    for item in items {
        f(buf, item)?;
    }
    Ok(())
}

/// Writes a nullable array.
pub fn put_nullable_array<T>(
    buf: &mut BytesMut,
    items: Option<&[T]>,
    compact: bool,
    what: &'static str,
    mut f: impl FnMut(&mut BytesMut, &T) -> Result<()>,
) -> Result<()> {
    put_array_len(buf, items.map(<[T]>::len), compact, what)?;
    for item in items.unwrap_or_default() {
        f(buf, item)?;
    }
    Ok(())
}

/// Writes a UUID.
#[inline]
pub fn put_uuid(buf: &mut BytesMut, id: &Uuid) {
    buf.put_slice(&id.0);
}

/// Writes a bool as one byte.
#[inline]
pub fn put_bool(buf: &mut BytesMut, b: bool) {
    buf.put_i8(i8::from(b));
}

/// Writes a tagged-field section: `known` holds the encoded payloads of the known tagged
/// fields that differ from their defaults (in any order), `unknown` those kept from decoding.
/// Both are merged in ascending tag order.
pub fn put_tagged_fields(
    buf: &mut BytesMut,
    mut known: Vec<(u32, BytesMut)>,
    unknown: &UnknownTaggedFields,
    what: &'static str,
) -> Result<()> {
    if known.is_empty() {
        put_uvarint(buf, unknown.0.len() as u32);
        for f in &unknown.0 {
            put_uvarint(buf, f.tag);
            put_uvarint(buf, f.data.len() as u32);
            buf.put_slice(&f.data);
        }
        return Ok(());
    }
    let mut all: Vec<(u32, &[u8])> = known.iter_mut().map(|(t, b)| (*t, &b[..])).collect();
    all.extend(unknown.0.iter().map(|f| (f.tag, &f.data[..])));
    // An insertion sort, not std's: a section holds a few fields, and `sort_unstable_by_key`
    // compiles a whole quicksort for this one element type (3.5 KB in a client binary). The
    // unknown fields come decoded in ascending order, so each moves past known ones only.
    for i in 1..all.len() {
        let mut j = i;
        while j > 0 && all[j - 1].0 > all[j].0 {
            all.swap(j - 1, j);
            j -= 1;
        }
    }
    if all.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(Error::TagOrder { what });
    }
    put_uvarint(buf, all.len() as u32);
    for (tag, data) in all {
        put_uvarint(buf, tag);
        put_uvarint(buf, data.len() as u32);
        buf.put_slice(data);
    }
    Ok(())
}

/// Writes an empty tagged-field section plus any unknown fields kept from decoding.
#[inline]
pub fn put_unknown_tagged_fields(buf: &mut BytesMut, unknown: &UnknownTaggedFields) {
    // Cannot fail: no known fields to collide with, and decoding guaranteed the order.
    put_uvarint(buf, unknown.0.len() as u32);
    for f in &unknown.0 {
        put_uvarint(buf, f.tag);
        put_uvarint(buf, f.data.len() as u32);
        buf.put_slice(&f.data);
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers of the message codecs
// ---------------------------------------------------------------------------------------------

/// Fails with [`Error::FieldNotInVersion`] unless a non-ignorable field that `version` lacks
/// holds its default (`is_default`).
pub(crate) fn require_default(is_default: bool, what: &'static str, version: i16) -> Result<()> {
    if is_default {
        Ok(())
    } else {
        Err(Error::FieldNotInVersion { what, version })
    }
}

/// The smallest encoding of a string: its length prefix, `int16` classic, one byte compact.
pub(crate) const fn min_string(flexible: bool) -> usize {
    if flexible {
        1
    } else {
        2
    }
}

/// The smallest encoding of an array or of bytes: its length prefix, `int32` classic, one
/// byte compact.
pub(crate) const fn min_array(flexible: bool) -> usize {
    if flexible {
        1
    } else {
        4
    }
}

/// The size of an empty tagged section: one byte in flexible versions, nothing otherwise.
pub(crate) const fn min_tags(flexible: bool) -> usize {
    if flexible {
        1
    } else {
        0
    }
}

/// Reads a tagged-field section when `flexible`; in other versions there is none.
#[inline]
pub(crate) fn get_tags_if(
    buf: &mut Bytes,
    flexible: bool,
    what: &'static str,
) -> Result<UnknownTaggedFields> {
    if flexible {
        get_unknown_tagged_fields(buf, what)
    } else {
        Ok(UnknownTaggedFields::default())
    }
}

/// Writes a tagged-field section of the unknown fields kept from decoding when `flexible`;
/// in other versions there is none.
#[inline]
pub(crate) fn put_tags_if(buf: &mut BytesMut, flexible: bool, unknown: &UnknownTaggedFields) {
    if flexible {
        put_unknown_tagged_fields(buf, unknown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_examples_from_the_spec() {
        let mut b = BytesMut::new();
        put_varint(&mut b, 0);
        put_varint(&mut b, -1);
        put_varint(&mut b, 1);
        put_varint(&mut b, 300);
        assert_eq!(&b[..], &[0x00, 0x01, 0x02, 0xd8, 0x04]);
        let mut r = b.freeze();
        assert_eq!(get_varint(&mut r, "x").unwrap(), 0);
        assert_eq!(get_varint(&mut r, "x").unwrap(), -1);
        assert_eq!(get_varint(&mut r, "x").unwrap(), 1);
        assert_eq!(get_varint(&mut r, "x").unwrap(), 300);
    }

    #[test]
    fn overlong_varints_are_errors() {
        let mut r = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert_eq!(
            get_uvarint(&mut r, "x"),
            Err(Error::VarintOverflow { what: "x" })
        );
        let mut r = Bytes::from_static(&[0xff; 11]);
        assert_eq!(
            get_uvarlong(&mut r, "x"),
            Err(Error::VarintOverflow { what: "x" })
        );
        let mut r = Bytes::from_static(&[0x80, 0x80]);
        assert!(matches!(
            get_uvarint(&mut r, "x"),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn length_bombs_fail_without_allocating() {
        // 2 GiB declared in a 10-byte buffer, for every length-prefixed type.
        let classic = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]);
        let compact = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0]);
        for (buf, compact_form) in [(classic, false), (compact, true)] {
            let mut b = buf.clone();
            assert!(get_nullable_bytes(&mut b, compact_form, "bytes").is_err());
            let mut b = buf.clone();
            assert!(get_array_len(&mut b, compact_form, 1, "array").is_err());
            let mut b = buf.clone();
            let r: Result<Vec<u8>> = get_array(&mut b, compact_form, 1, "array", |b| {
                get_i8(b, "e").map(|v| v as u8)
            });
            assert!(r.is_err());
            let mut b = buf.clone();
            assert!(get_nullable_string(&mut b, compact_form, "string").is_err());
        }
        // int16 string lengths top out at 32 KiB; still more than 10 bytes.
        let mut b = Bytes::from_static(&[0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(get_string(&mut b, false, "string").is_err());
        // A tagged section claiming 2^31 fields.
        let mut b = compact_bomb();
        assert!(get_unknown_tagged_fields(&mut b, "tags").is_err());
    }

    fn compact_bomb() -> Bytes {
        Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0])
    }

    #[test]
    fn nulls_and_negative_lengths() {
        let mut b = Bytes::from_static(&[0xff, 0xff]);
        assert_eq!(get_nullable_string(&mut b, false, "s").unwrap(), None);
        let mut b = Bytes::from_static(&[0xff, 0xfe]);
        assert!(matches!(
            get_nullable_string(&mut b, false, "s"),
            Err(Error::InvalidLength { len: -2, .. })
        ));
        let mut b = Bytes::from_static(&[0x00]);
        assert_eq!(get_nullable_bytes(&mut b, true, "b").unwrap(), None);
        let mut b = Bytes::from_static(&[0xff, 0xff]);
        assert!(get_string(&mut b, false, "s").is_err());
    }

    #[test]
    fn tagged_fields_are_written_in_ascending_tag_order() {
        let field = |v: u8| BytesMut::from(&[v][..]);
        let unknown = UnknownTaggedFields(
            [0u32, 4, 6]
                .map(|tag| RawTaggedField {
                    tag,
                    data: Bytes::from(vec![tag as u8]),
                })
                .to_vec(),
        );
        let known = [5u32, 1, 9, 3, 2].map(|t| (t, field(t as u8))).to_vec();
        let mut b = BytesMut::new();
        put_tagged_fields(&mut b, known, &unknown, "t").unwrap();
        // Count 8, then (tag, length 1, the tag as the byte) for each tag in order.
        let mut want = vec![8u8];
        for tag in [0u8, 1, 2, 3, 4, 5, 6, 9] {
            want.extend([tag, 1, tag]);
        }
        assert_eq!(&b[..], &want[..]);
        // A known field with an unknown one's tag is refused.
        let mut b = BytesMut::new();
        assert_eq!(
            put_tagged_fields(&mut b, vec![(4, field(0))], &unknown, "t"),
            Err(Error::TagOrder { what: "t" })
        );
    }

    #[test]
    fn tagged_fields_keep_unknown_and_reject_disorder() {
        let mut b = BytesMut::new();
        let unknown = UnknownTaggedFields(vec![
            RawTaggedField {
                tag: 1,
                data: Bytes::from_static(b"ab"),
            },
            RawTaggedField {
                tag: 7,
                data: Bytes::new(),
            },
        ]);
        let mut known = BytesMut::new();
        known.put_i32(5);
        put_tagged_fields(&mut b, vec![(3, known)], &unknown, "t").unwrap();
        let mut r = b.freeze();
        let mut seen = None;
        let kept = get_tagged_fields(&mut r, "t", |tag, data| {
            if tag == 3 {
                seen = Some(get_i32(data, "k")?);
                Ok(true)
            } else {
                Ok(false)
            }
        })
        .unwrap();
        assert_eq!(seen, Some(5));
        assert_eq!(kept, unknown);
        assert!(r.is_empty());

        let mut bad = Bytes::from_static(&[2, 5, 0, 3, 0]);
        assert_eq!(
            get_unknown_tagged_fields(&mut bad, "t"),
            Err(Error::TagOrder { what: "t" })
        );
    }

    #[test]
    fn uuid_base64_matches_kafka() {
        // Kafka's Uuid.toString() of the UUID with only the last bit set.
        let mut id = [0u8; 16];
        id[15] = 1;
        assert_eq!(Uuid(id).to_base64(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(Uuid(id).to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(format!("{:?}", Uuid(id)), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(Uuid::ZERO.to_base64().len(), 22);
    }

    proptest! {
        #[test]
        fn varints_round_trip(a: i32, b: i64, c: u32, d: u64) {
            let mut buf = BytesMut::new();
            put_varint(&mut buf, a);
            prop_assert_eq!(buf.len(), varint_len(a));
            put_varlong(&mut buf, b);
            put_uvarint(&mut buf, c);
            prop_assert_eq!(uvarint_len(c), { let mut t = BytesMut::new(); put_uvarint(&mut t, c); t.len() });
            put_uvarlong(&mut buf, d);
            let mut r = buf.freeze();
            prop_assert_eq!(get_varint(&mut r, "a")?, a);
            prop_assert_eq!(get_varlong(&mut r, "b")?, b);
            prop_assert_eq!(get_uvarint(&mut r, "c")?, c);
            prop_assert_eq!(get_uvarlong(&mut r, "d")?, d);
            prop_assert!(r.is_empty());
        }

        #[test]
        fn strings_and_bytes_round_trip(s in proptest::option::of(".{0,40}"), b in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..64)), compact: bool) {
            let mut buf = BytesMut::new();
            put_nullable_string(&mut buf, s.as_deref(), compact, "s")?;
            put_nullable_bytes(&mut buf, b.as_deref(), compact, "b")?;
            let mut r = buf.freeze();
            prop_assert_eq!(get_nullable_string(&mut r, compact, "s")?, s);
            prop_assert_eq!(get_nullable_bytes(&mut r, compact, "b")?.map(|b| b.to_vec()), b);
            prop_assert!(r.is_empty());
        }

        #[test]
        fn readers_never_panic(data in proptest::collection::vec(any::<u8>(), 0..32), compact: bool) {
            let b = Bytes::from(data);
            let _ = get_nullable_string(&mut b.clone(), compact, "s");
            let _ = get_nullable_bytes(&mut b.clone(), compact, "b");
            let _ = get_unknown_tagged_fields(&mut b.clone(), "t");
            let _ = get_varlong(&mut b.clone(), "v");
            let _ = get_uuid(&mut b.clone(), "u");
        }
    }
}

//! Record batch compression: the codecs named by bits 0-2 of a batch's attributes.
//!
//! Every codec is pure Rust and sits behind its own cargo feature (`gzip`, `snappy`, `lz4`,
//! `zstd`, all on by default). With a feature off, [`decompress`] and [`compress`] return
//! [`Error::UnsupportedCompression`] for that codec, so a client built without it still reads
//! the batch headers and can skip such batches. The opt-in feature `zstd-c` swaps ruzstd for
//! the C libzstd, which decompresses about three times faster (see BENCHMARKS.md).
//!
//! Decompression is capped: output is produced block by block into one buffer and the call
//! stops with [`Error::DecompressedTooLarge`] as soon as the output would pass the cap. A length
//! that the input claims (a snappy block's uncompressed length, a zstd window) is checked
//! against the cap before anything is allocated for it, so a small hostile input cannot make
//! the decoder allocate more than the cap plus one codec block.
//!
//! The framings are the ones Kafka's Java client writes:
//! - gzip: one (or more, concatenated) RFC 1952 members, as `GZIPOutputStream` writes them.
//! - snappy: the xerial snappy-java stream (`"\x82SNAPPY\0"`, version, compatible version, then
//!   chunks of `[i32 BE length][raw snappy block]`), or a single raw snappy block, as written by
//!   some non-Java clients and accepted by snappy-java's reader too.
//! - lz4: the LZ4 frame format, as written by Kafka's `Lz4BlockOutputStream` (independent 64 KiB
//!   blocks, no content checksum). Linked blocks, block checksums and content checksums from
//!   other producers are handled and verified. Message format v0 used a broken header checksum
//!   (KAFKA-3160): see [`decompress_legacy_lz4`].
//! - zstd: one or more zstd frames (skippable frames are skipped), as zstd-jni writes them.
//!
//! # References
//! <https://kafka.apache.org/documentation/#recordbatch>,
//! <https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md>,
//! <https://github.com/xerial/snappy-java> (stream format), RFC 1952, RFC 8878.

use bytes::Bytes;

use crate::error::{Error, Result};

/// Whether this build has a codec at all. Without one, code that only serves compressed
/// batches (decompression on several threads) is left out: a constant, so the branch to
/// it folds away.
pub(crate) const ANY_CODEC: bool = cfg!(any(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd",
    feature = "zstd-c"
));

/// The compression codec of a record batch (attributes bits 0-2).
///
/// # References
/// <https://kafka.apache.org/documentation/#recordbatch>
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// No compression (0).
    None,
    /// gzip (1).
    Gzip,
    /// Snappy (2), in the xerial snappy-java framing or as a raw block.
    Snappy,
    /// LZ4 frame format (3).
    Lz4,
    /// Zstandard (4), since Kafka 2.1 (KIP-110).
    Zstd,
}

/// The mask of the compression codec in a batch's attributes.
const CODEC_MASK: i16 = 0x07;

impl Compression {
    /// The codec named by the low three bits of a batch's (or legacy message's) attributes.
    ///
    /// Fails with [`Error::UnsupportedCompression`] for the unassigned values 5, 6 and 7. A codec
    /// whose cargo feature is off is still recognised here; it fails in [`decompress`].
    pub fn from_attributes(attributes: i16) -> Result<Compression> {
        match attributes & CODEC_MASK {
            0 => Ok(Compression::None),
            1 => Ok(Compression::Gzip),
            2 => Ok(Compression::Snappy),
            3 => Ok(Compression::Lz4),
            4 => Ok(Compression::Zstd),
            other => Err(Error::UnsupportedCompression { codec: other as u8 }),
        }
    }

    /// The codec's value in the attributes' low three bits.
    pub fn as_attribute_bits(self) -> i16 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// The codec's name as Kafka's `compression.type` setting spells it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// Whether this build can decompress (and compress) the codec: its cargo feature is on.
    pub fn is_available(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Gzip => cfg!(feature = "gzip"),
            Compression::Snappy => cfg!(feature = "snappy"),
            Compression::Lz4 => cfg!(feature = "lz4"),
            Compression::Zstd => cfg!(any(feature = "zstd", feature = "zstd-c")),
        }
    }

    fn unsupported(self) -> Error {
        Error::UnsupportedCompression {
            codec: self.as_attribute_bits() as u8,
        }
    }
}

/// Decompresses a batch's records section, producing at most `cap` bytes.
///
/// For [`Compression::None`] the input is copied (it must itself fit the cap). For lz4 this is
/// the modern framing of message formats v1 and v2; use [`decompress_legacy_lz4`] for v0.
///
/// # Errors
/// [`Error::Decompression`] for corrupt input, [`Error::DecompressedTooLarge`] as soon as the
/// output would exceed `cap`, [`Error::UnsupportedCompression`] if the codec's feature is off.
pub fn decompress(codec: Compression, input: &[u8], cap: usize) -> Result<Bytes> {
    if input.is_empty() && codec != Compression::None {
        // Every codec's framing has a header, even for empty content.
        return Err(corrupt(codec.name(), "empty input"));
    }
    let out = match codec {
        Compression::None => {
            if input.len() > cap {
                return Err(too_large("none", cap));
            }
            input.to_vec()
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::decompress(input, cap)?,
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::decompress(input, cap)?,
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::decompress(input, cap, false)?,
        #[cfg(any(feature = "zstd", feature = "zstd-c"))]
        Compression::Zstd => zstd::decompress(input, cap)?,
        // The codecs whose feature is off.
        #[allow(unreachable_patterns)]
        _ => return Err(codec.unsupported()),
    };
    Ok(Bytes::from(out))
}

/// Decompresses an lz4 payload of a message format v0 (magic 0) message, producing at most
/// `cap` bytes.
///
/// Kafka before 0.10 computed the frame descriptor's header checksum over the magic number too
/// (KAFKA-3160); Kafka's Java client ignores that byte for magic 0, and so does this function.
/// Everything else is as in [`decompress`].
///
/// # References
/// <https://issues.apache.org/jira/browse/KAFKA-3160>
#[cfg_attr(not(feature = "lz4"), allow(unused_variables))]
pub fn decompress_legacy_lz4(input: &[u8], cap: usize) -> Result<Bytes> {
    if input.is_empty() {
        return Err(corrupt("lz4", "empty input"));
    }
    #[cfg(feature = "lz4")]
    return lz4::decompress(input, cap, true).map(Bytes::from);
    #[cfg(not(feature = "lz4"))]
    Err(Compression::Lz4.unsupported())
}

/// Compresses `input` with `codec` in the framing Kafka's Java client writes.
///
/// Used by the batch encoder, tests and benches. zstd uses ruzstd's fastest level (about zstd
/// level 1), the only level ruzstd implements; with the `zstd-c` feature, libzstd's level 3,
/// Kafka's default.
///
/// # Errors
/// [`Error::UnsupportedCompression`] if the codec's feature is off; [`Error::TooLong`] if a
/// snappy chunk or the input is too long for its framing.
pub fn compress(codec: Compression, input: &[u8]) -> Result<Vec<u8>> {
    match codec {
        Compression::None => Ok(input.to_vec()),
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::compress(input),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::compress(input),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::compress(input),
        #[cfg(any(feature = "zstd", feature = "zstd-c"))]
        Compression::Zstd => zstd::compress(input),
        // The codecs whose feature is off.
        #[allow(unreachable_patterns)]
        _ => Err(codec.unsupported()),
    }
}

fn too_large(codec: &'static str, limit: usize) -> Error {
    Error::DecompressedTooLarge { codec, limit }
}

fn corrupt(codec: &'static str, reason: &'static str) -> Error {
    Error::Decompression { codec, reason }
}

/// A compressor refused `input` (one of `what`): the only way compressing into a `Vec` fails.
#[cfg(any(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd-c"
))]
fn too_long(what: &'static str, input: &[u8]) -> Error {
    Error::TooLong {
        what,
        len: input.len(),
    }
}

/// Reads `reader` to its end into a new buffer of at most `cap` bytes.
///
/// At most `cap + 1` bytes are ever read, so the buffer stays below twice the cap.
#[cfg(any(feature = "gzip", feature = "zstd-c"))]
fn read_capped(
    reader: impl std::io::Read,
    codec: &'static str,
    cap: usize,
    first_guess: usize,
) -> Result<Vec<u8>> {
    use std::io::Read;

    let mut out = Vec::with_capacity(first_guess.min(cap));
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|_| corrupt(codec, "corrupt stream"))?;
    if out.len() > cap {
        return Err(too_large(codec, cap));
    }
    Ok(out)
}

#[cfg(feature = "gzip")]
mod gzip;

#[cfg(feature = "snappy")]
mod snappy;

#[cfg(feature = "lz4")]
mod lz4;

#[cfg(feature = "zstd-c")]
mod libzstd;
#[cfg(feature = "zstd-c")]
use libzstd as zstd;

#[cfg(all(feature = "zstd", not(feature = "zstd-c")))]
mod zstd;

#[cfg(test)]
mod tests;

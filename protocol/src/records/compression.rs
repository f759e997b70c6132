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
mod gzip {
    use std::io::Write;

    use flate2::{bufread::MultiGzDecoder, write::GzEncoder};

    use super::{read_capped, too_long, Result};

    const NAME: &str = "gzip";

    /// Deflate cannot expand more than about 1032 to 1.
    const MAX_RATIO: usize = 1032;

    pub(super) fn decompress(input: &[u8], cap: usize) -> Result<Vec<u8>> {
        // The last member's trailer holds its uncompressed size (mod 2^32): for Kafka's single
        // member, the size of the output. It is only a hint for the first allocation, bounded
        // by the cap and by what the input could produce; the buffer still grows if it lies.
        let hint = input
            .last_chunk::<4>()
            .map_or(0, |isize| u32::from_le_bytes(*isize) as usize)
            .min(input.len().saturating_mul(MAX_RATIO));
        read_capped(MultiGzDecoder::new(input), NAME, cap, hint)
    }

    pub(super) fn compress(input: &[u8]) -> Result<Vec<u8>> {
        let mut encoder = GzEncoder::new(
            Vec::with_capacity(input.len() / 2 + 64),
            flate2::Compression::default(),
        );
        // Writing to a Vec cannot fail.
        encoder
            .write_all(input)
            .and_then(|()| encoder.try_finish())
            .map_err(|_| too_long("gzip input", input))?;
        encoder.finish().map_err(|_| too_long("gzip input", input))
    }
}

#[cfg(feature = "snappy")]
mod snappy {
    use super::{corrupt, too_large, too_long, Result};

    const NAME: &str = "snappy";

    /// The xerial snappy-java stream magic.
    const XERIAL_MAGIC: &[u8; 8] = b"\x82SNAPPY\x00";
    /// Magic, then the writer's version and the oldest compatible version (both i32 BE, 1).
    const XERIAL_HEADER_LEN: usize = 16;
    /// snappy-java's default block size, used by Kafka's producer.
    const XERIAL_CHUNK_LEN: usize = 32 * 1024;
    /// The most a snappy block can expand: a 3-byte copy op emits at most 64 bytes.
    const MAX_EXPANSION: usize = 22;

    pub(super) fn decompress(input: &[u8], cap: usize) -> Result<Vec<u8>> {
        let xerial = input.len() >= XERIAL_HEADER_LEN && input.starts_with(XERIAL_MAGIC);
        // Two passes: add up the blocks' declared lengths (each checked against what its
        // block can produce) and check the total against the cap, then allocate once and
        // decompress every block into its place.
        let mut total = 0usize;
        let mut blocks = Blocks::new(input, xerial);
        while let Some(block) = blocks.next_block()? {
            total = total
                .checked_add(declared_len(block)?)
                .filter(|&total| total <= cap)
                .ok_or_else(|| too_large(NAME, cap))?;
        }
        let mut out = vec![0u8; total];
        let mut target = &mut out[..];
        let mut decoder = snap::raw::Decoder::new();
        let mut blocks = Blocks::new(input, xerial);
        while let Some(block) = blocks.next_block()? {
            let (head, tail) = core::mem::take(&mut target)
                .split_at_mut_checked(declared_len(block)?)
                .ok_or_else(|| corrupt(NAME, "internal length error"))?;
            decoder
                .decompress(block, head)
                .map_err(|_| corrupt(NAME, "corrupt block"))?;
            target = tail;
        }
        Ok(out)
    }

    /// The raw snappy blocks of a payload: the chunks of a xerial stream, or the whole input.
    struct Blocks<'a> {
        rest: &'a [u8],
        xerial: bool,
    }

    impl<'a> Blocks<'a> {
        fn new(input: &'a [u8], xerial: bool) -> Blocks<'a> {
            Blocks {
                rest: input,
                xerial,
            }
        }

        fn next_block(&mut self) -> Result<Option<&'a [u8]>> {
            if !self.xerial {
                let block = core::mem::take(&mut self.rest);
                return Ok((!block.is_empty()).then_some(block));
            }
            // snappy-java's reader accepts concatenated streams: a header between chunks.
            while self.rest.starts_with(XERIAL_MAGIC) {
                self.rest = self
                    .rest
                    .get(XERIAL_HEADER_LEN..)
                    .ok_or_else(|| corrupt(NAME, "truncated xerial header"))?;
            }
            if self.rest.is_empty() {
                return Ok(None);
            }
            let (len, after) = self
                .rest
                .split_first_chunk::<4>()
                .ok_or_else(|| corrupt(NAME, "truncated xerial chunk length"))?;
            let len = usize::try_from(i32::from_be_bytes(*len))
                .map_err(|_| corrupt(NAME, "negative xerial chunk length"))?;
            if len > after.len() {
                return Err(corrupt(NAME, "xerial chunk longer than the input"));
            }
            let (block, after) = after.split_at(len);
            self.rest = after;
            Ok(Some(block))
        }
    }

    /// The uncompressed length a raw block declares, refused if the block cannot produce it.
    fn declared_len(block: &[u8]) -> Result<usize> {
        let len =
            snap::raw::decompress_len(block).map_err(|_| corrupt(NAME, "bad length header"))?;
        if len > block.len().saturating_mul(MAX_EXPANSION) {
            return Err(corrupt(
                NAME,
                "length header larger than the block can produce",
            ));
        }
        Ok(len)
    }

    /// The xerial snappy-java stream, as Kafka's Java producer writes it.
    pub(super) fn compress(input: &[u8]) -> Result<Vec<u8>> {
        let mut encoder = snap::raw::Encoder::new();
        let mut out = Vec::with_capacity(XERIAL_HEADER_LEN + input.len() / 2 + 64);
        out.extend_from_slice(XERIAL_MAGIC);
        out.extend_from_slice(&1i32.to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes());
        for chunk in input.chunks(XERIAL_CHUNK_LEN) {
            let block = encoder
                .compress_vec(chunk)
                .map_err(|_| too_long("snappy chunk", chunk))?;
            let len = i32::try_from(block.len()).map_err(|_| too_long("snappy chunk", &block))?;
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&block);
        }
        Ok(out)
    }
}

#[cfg(feature = "lz4")]
mod lz4 {
    use core::hash::Hasher as _;

    use twox_hash::XxHash32;

    use super::{corrupt, too_large, too_long, Result};

    const NAME: &str = "lz4";

    const FRAME_MAGIC: u32 = 0x184D_2204;
    /// Skippable frames: magic 0x184D2A50 to 0x184D2A5F.
    const SKIPPABLE_MAGIC_MASK: u32 = 0xFFFF_FFF0;
    const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;

    const FLG_VERSION_MASK: u8 = 0b1100_0000;
    const FLG_VERSION_01: u8 = 0b0100_0000;
    const FLG_BLOCK_INDEPENDENT: u8 = 0b0010_0000;
    const FLG_BLOCK_CHECKSUM: u8 = 0b0001_0000;
    const FLG_CONTENT_SIZE: u8 = 0b0000_1000;
    const FLG_CONTENT_CHECKSUM: u8 = 0b0000_0100;
    const FLG_RESERVED: u8 = 0b0000_0010;
    const FLG_DICT_ID: u8 = 0b0000_0001;
    const BD_BLOCK_SIZE_MASK: u8 = 0b0111_0000;

    /// A block with this bit set in its size is stored uncompressed.
    const BLOCK_UNCOMPRESSED: u32 = 0x8000_0000;
    /// A linked block may refer back this far into earlier blocks' output.
    const WINDOW: usize = 64 * 1024;

    /// Kafka's producer writes 64 KiB blocks (BD 4).
    const KAFKA_BLOCK_SIZE_CODE: u8 = 4;

    pub(super) fn decompress(input: &[u8], cap: usize, legacy: bool) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        // `out` is grown in steps and zero-filled once; `written` is the decompressed length.
        let mut written = 0;
        let mut rest = input;
        loop {
            rest = decompress_frame(rest, cap, legacy, &mut out, &mut written)?;
            if rest.is_empty() {
                break;
            }
        }
        out.truncate(written);
        // Blocks are decompressed into room for a whole block (64 KiB as Kafka writes them), so
        // a small batch would otherwise keep 16x its size alive for as long as any of its
        // records is referenced. Shrinking a heap block is done in place by the allocator.
        if out.capacity() - written > written / 8 {
            out.shrink_to_fit();
        }
        Ok(out)
    }

    fn take<'a>(input: &mut &'a [u8], n: usize, what: &'static str) -> Result<&'a [u8]> {
        if input.len() < n {
            return Err(corrupt(NAME, what));
        }
        let (head, tail) = input.split_at(n);
        *input = tail;
        Ok(head)
    }

    fn take_u32_le(input: &mut &[u8], what: &'static str) -> Result<u32> {
        let (bytes, tail) = input
            .split_first_chunk::<4>()
            .ok_or_else(|| corrupt(NAME, what))?;
        *input = tail;
        Ok(u32::from_le_bytes(*bytes))
    }

    /// Decompresses one frame at the start of `input`, returning the bytes after it.
    fn decompress_frame<'a>(
        mut input: &'a [u8],
        cap: usize,
        legacy: bool,
        out: &mut Vec<u8>,
        written: &mut usize,
    ) -> Result<&'a [u8]> {
        let magic = take_u32_le(&mut input, "truncated frame magic")?;
        if magic & SKIPPABLE_MAGIC_MASK == SKIPPABLE_MAGIC {
            let len = take_u32_le(&mut input, "truncated skippable frame")?;
            let len =
                usize::try_from(len).map_err(|_| corrupt(NAME, "skippable frame too long"))?;
            take(&mut input, len, "truncated skippable frame")?;
            return Ok(input);
        }
        if magic != FRAME_MAGIC {
            return Err(corrupt(NAME, "bad frame magic"));
        }

        let descriptor_start = input;
        let header = take(&mut input, 2, "truncated frame descriptor")?;
        let (flg, bd) = match *header {
            [flg, bd] => (flg, bd),
            _ => return Err(corrupt(NAME, "truncated frame descriptor")),
        };
        if flg & FLG_VERSION_MASK != FLG_VERSION_01 || flg & FLG_RESERVED != 0 {
            return Err(corrupt(NAME, "unknown frame version or reserved flag set"));
        }
        if bd & !BD_BLOCK_SIZE_MASK != 0 {
            return Err(corrupt(NAME, "reserved block descriptor bits set"));
        }
        let block_max = match (bd & BD_BLOCK_SIZE_MASK) >> 4 {
            4 => 64 * 1024,
            5 => 256 * 1024,
            6 => 1024 * 1024,
            7 => 4 * 1024 * 1024,
            _ => return Err(corrupt(NAME, "invalid block maximum size")),
        };
        if flg & FLG_CONTENT_SIZE != 0 {
            let size = take(&mut input, 8, "truncated content size")?;
            let size = size
                .try_into()
                .map(u64::from_le_bytes)
                .map_err(|_| corrupt(NAME, "truncated content size"))?;
            if size > u64::try_from(cap.saturating_sub(*written)).unwrap_or(u64::MAX) {
                return Err(too_large(NAME, cap));
            }
        }
        if flg & FLG_DICT_ID != 0 {
            return Err(corrupt(NAME, "frames with a dictionary are not supported"));
        }
        let descriptor_len = descriptor_start.len() - input.len();
        let stored_hc = *take(&mut input, 1, "truncated header checksum")?
            .first()
            .ok_or_else(|| corrupt(NAME, "truncated header checksum"))?;
        if !legacy {
            let descriptor = descriptor_start
                .get(..descriptor_len)
                .ok_or_else(|| corrupt(NAME, "truncated frame descriptor"))?;
            let hc = (XxHash32::oneshot(0, descriptor) >> 8) as u8;
            if hc != stored_hc {
                return Err(corrupt(NAME, "frame descriptor checksum mismatch"));
            }
        }

        let independent = flg & FLG_BLOCK_INDEPENDENT != 0;
        let block_checksum = flg & FLG_BLOCK_CHECKSUM != 0;
        let content_checksum = flg & FLG_CONTENT_CHECKSUM != 0;
        let frame_output_start = *written;

        // Size the output once for the whole frame (bounded by the cap), instead of growing
        // it block by block.
        let bound = output_bound(input, block_max, block_checksum);
        ensure_len(out, *written + bound.min(cap - *written));

        loop {
            let size = take_u32_le(&mut input, "truncated block size")?;
            if size == 0 {
                break;
            }
            let uncompressed = size & BLOCK_UNCOMPRESSED != 0;
            let len = usize::try_from(size & !BLOCK_UNCOMPRESSED)
                .map_err(|_| corrupt(NAME, "block too long"))?;
            if len > block_max {
                return Err(corrupt(NAME, "block larger than the frame's maximum"));
            }
            let block = take(&mut input, len, "truncated block")?;
            if block_checksum {
                let stored = take_u32_le(&mut input, "truncated block checksum")?;
                if XxHash32::oneshot(0, block) != stored {
                    return Err(corrupt(NAME, "block checksum mismatch"));
                }
            }

            let room = cap - *written;
            if uncompressed {
                if len > room {
                    return Err(too_large(NAME, cap));
                }
                ensure_len(out, *written + len);
                out.get_mut(*written..*written + len)
                    .ok_or_else(|| corrupt(NAME, "internal length error"))?
                    .copy_from_slice(block);
                *written += len;
                continue;
            }

            let limit = block_max.min(room);
            ensure_len(out, *written + limit);
            let (before, after) = out.split_at_mut(*written);
            let target = after
                .get_mut(..limit)
                .ok_or_else(|| corrupt(NAME, "internal length error"))?;
            let result = if independent {
                lz4_flex::block::decompress_into(block, target)
            } else {
                // A linked block may copy from the previous 64 KiB of this frame's output.
                let dict_start = before.len().saturating_sub(WINDOW).max(frame_output_start);
                let dict = before.get(dict_start..).unwrap_or_default();
                lz4_flex::block::decompress_into_with_dict(block, target, dict)
            };
            match result {
                Ok(n) => *written += n,
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                    if limit < block_max =>
                {
                    return Err(too_large(NAME, cap));
                }
                Err(_) => return Err(corrupt(NAME, "corrupt block")),
            }
        }

        if content_checksum {
            let stored = take_u32_le(&mut input, "truncated content checksum")?;
            let content = out
                .get(frame_output_start..*written)
                .ok_or_else(|| corrupt(NAME, "internal length error"))?;
            let mut hasher = XxHash32::with_seed(0);
            hasher.write(content);
            if hasher.finish_32() != stored {
                return Err(corrupt(NAME, "content checksum mismatch"));
            }
        }
        Ok(input)
    }

    /// The most output the blocks at the start of `input` can produce, from their headers: a
    /// compressed block gives at most the frame's block size (and at most 255 bytes per input
    /// byte), a stored block its own length. Stops quietly at the end mark or at a truncation,
    /// which the decoding loop then reports.
    fn output_bound(mut input: &[u8], block_max: usize, block_checksum: bool) -> usize {
        const MAX_RATIO: usize = 255;
        let mut bound = 0usize;
        while let Some((size, rest)) = input.split_first_chunk::<4>() {
            let size = u32::from_le_bytes(*size);
            if size == 0 {
                break;
            }
            let len = (size & !BLOCK_UNCOMPRESSED) as usize;
            bound = bound.saturating_add(if size & BLOCK_UNCOMPRESSED != 0 {
                len
            } else {
                block_max.min(len.saturating_mul(MAX_RATIO))
            });
            let skip = len.saturating_add(if block_checksum { 4 } else { 0 });
            input = rest.get(skip..).unwrap_or_default();
        }
        bound
    }

    /// Grows `out` (zero-filled) to at least `len`, doubling so the fill is paid about once.
    fn ensure_len(out: &mut Vec<u8>, len: usize) {
        if out.len() < len {
            let target = len.max(out.len().saturating_mul(2));
            out.resize(target, 0);
        }
    }

    /// An lz4 frame as Kafka's `Lz4BlockOutputStream` writes it: independent 64 KiB blocks,
    /// no checksums, a correct header checksum.
    pub(super) fn compress(input: &[u8]) -> Result<Vec<u8>> {
        const BLOCK_MAX: usize = 64 * 1024;
        let mut out = Vec::with_capacity(input.len() / 2 + 64);
        out.extend_from_slice(&FRAME_MAGIC.to_le_bytes());
        let descriptor = [
            FLG_VERSION_01 | FLG_BLOCK_INDEPENDENT,
            KAFKA_BLOCK_SIZE_CODE << 4,
        ];
        out.extend_from_slice(&descriptor);
        out.push((XxHash32::oneshot(0, &descriptor) >> 8) as u8);

        let mut scratch = vec![0u8; lz4_flex::block::get_maximum_output_size(BLOCK_MAX)];
        for chunk in input.chunks(BLOCK_MAX) {
            let n = lz4_flex::block::compress_into(chunk, &mut scratch)
                .map_err(|_| too_long("lz4 block", chunk))?;
            let compressed = scratch.get(..n).unwrap_or_default();
            // Kafka stores a block uncompressed when compression does not shrink it.
            let (size, data) = if n >= chunk.len() {
                (chunk.len() as u32 | BLOCK_UNCOMPRESSED, chunk)
            } else {
                (n as u32, compressed)
            };
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(data);
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        Ok(out)
    }
}

#[cfg(feature = "zstd-c")]
mod zstd {
    use super::{corrupt, read_capped, too_long, Result};

    const NAME: &str = "zstd";

    /// The window every zstd decoder must support (2^23); larger windows up to the cap.
    const MIN_WINDOW_LOG: u32 = 23;
    /// libzstd's default limit (2^27 = 128 MiB).
    const MAX_WINDOW_LOG: u32 = 27;

    pub(super) fn decompress(input: &[u8], cap: usize) -> Result<Vec<u8>> {
        let mut decoder = zstd_c::stream::read::Decoder::with_buffer(input)
            .map_err(|_| corrupt(NAME, "cannot create a decoder"))?;
        // The decoder allocates the frame's window: bound it by the cap, as with ruzstd.
        let window_log = (usize::BITS - cap.saturating_sub(1).leading_zeros())
            .clamp(MIN_WINDOW_LOG, MAX_WINDOW_LOG);
        decoder
            .window_log_max(window_log)
            .map_err(|_| corrupt(NAME, "cannot set the window limit"))?;
        read_capped(decoder, NAME, cap, input.len().saturating_mul(4))
    }

    /// A zstd frame at level 3, the level Kafka's producer uses by default.
    pub(super) fn compress(input: &[u8]) -> Result<Vec<u8>> {
        zstd_c::bulk::compress(input, 3).map_err(|_| too_long("zstd input", input))
    }
}

#[cfg(all(feature = "zstd", not(feature = "zstd-c")))]
mod zstd {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

    use super::{corrupt, too_large, Result};

    const NAME: &str = "zstd";

    /// Output decoded between two checks against the cap (plus at most one 128 KiB block).
    const STEP: usize = 256 * 1024;
    /// The window every zstd decoder must support; larger windows are allowed up to the cap.
    const MIN_WINDOW: usize = 8 * 1024 * 1024;
    /// ruzstd's own default limit on the window, which it reserves up front.
    const MAX_WINDOW: usize = 128 * 1024 * 1024;

    pub(super) fn decompress(input: &[u8], cap: usize) -> Result<Vec<u8>> {
        let mut decoder = FrameDecoder::new();
        // The window is reserved when a frame starts: bound it by the cap, but never below
        // the 8 MiB every encoder may assume.
        let window = cap.clamp(MIN_WINDOW, MAX_WINDOW);
        decoder.set_max_window_size(u64::try_from(window).unwrap_or(u64::MAX));

        let mut out = Vec::with_capacity(input.len().saturating_mul(4).min(cap));
        let mut rest = input;
        while !rest.is_empty() {
            match decoder.reset(&mut rest) {
                Ok(()) => {}
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let length = usize::try_from(length)
                        .map_err(|_| corrupt(NAME, "bad skippable frame"))?;
                    rest = rest
                        .get(length..)
                        .ok_or_else(|| corrupt(NAME, "truncated skippable frame"))?;
                    continue;
                }
                Err(FrameDecoderError::WindowSizeTooBig { .. }) => {
                    return Err(corrupt(NAME, "window size above the limit"));
                }
                Err(_) => return Err(corrupt(NAME, "bad frame header")),
            }
            if decoder.content_size() > u64::try_from(cap - out.len()).unwrap_or(u64::MAX) {
                return Err(too_large(NAME, cap));
            }
            // A declared content size (checked against the cap just above) sizes the output.
            out.reserve(usize::try_from(decoder.content_size()).unwrap_or(0));
            loop {
                decoder
                    .decode_blocks(&mut rest, BlockDecodingStrategy::UptoBytes(STEP))
                    .map_err(|_| corrupt(NAME, "corrupt block"))?;
                if decoder.can_collect() > cap - out.len() {
                    return Err(too_large(NAME, cap));
                }
                decoder
                    .collect_to_writer(&mut out)
                    .map_err(|_| corrupt(NAME, "corrupt block"))?;
                if decoder.is_finished() {
                    break;
                }
            }
            if let Some(stored) = decoder.get_checksum_from_data() {
                if decoder.get_calculated_checksum() != Some(stored) {
                    return Err(corrupt(NAME, "content checksum mismatch"));
                }
            }
        }
        Ok(out)
    }

    /// A zstd frame at ruzstd's fastest level (about zstd level 1), with a content checksum.
    pub(super) fn compress(input: &[u8]) -> Result<Vec<u8>> {
        Ok(ruzstd::encoding::compress_to_vec(
            input,
            ruzstd::encoding::CompressionLevel::Fastest,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODECS: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codecs this build has.
    fn available() -> Vec<Compression> {
        CODECS.into_iter().filter(|c| c.is_available()).collect()
    }

    /// Something like a batch of JSON records: compressible but not trivially so.
    fn payload(len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut state: u32 = 0x9E37_79B9;
        let mut i = 0u64;
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let record = format!(
                "{{\"user\":\"u-{:08x}\",\"seq\":{i},\"event\":\"page_view\",\"path\":\"/p/{}\"}}",
                state,
                state % 977
            );
            out.extend_from_slice(record.as_bytes());
            i += 1;
        }
        out.truncate(len);
        out
    }

    #[test]
    fn attributes_round_trip() {
        for codec in CODECS {
            let bits = codec.as_attribute_bits();
            assert_eq!(Compression::from_attributes(bits).unwrap(), codec);
            // Other attribute bits (timestamp type, transactional, control) are ignored.
            assert_eq!(Compression::from_attributes(bits | 0x38).unwrap(), codec);
        }
        for bits in 5..8 {
            assert_eq!(
                Compression::from_attributes(bits),
                Err(Error::UnsupportedCompression { codec: bits as u8 })
            );
        }
        assert_eq!(Compression::Zstd.name(), "zstd");
    }

    #[test]
    fn round_trip_every_codec() {
        for len in [0, 1, 100, 64 * 1024, 64 * 1024 + 1, 300_000] {
            let input = payload(len);
            for codec in available() {
                let compressed = compress(codec, &input).unwrap();
                let output = decompress(codec, &compressed, len).unwrap();
                assert_eq!(output.as_ref(), input.as_slice(), "{codec:?} len {len}");
            }
        }
    }

    #[test]
    fn output_exactly_at_the_cap_is_allowed_one_byte_more_is_not() {
        let input = payload(100_000);
        for codec in available() {
            let compressed = compress(codec, &input).unwrap();
            assert!(decompress(codec, &compressed, input.len()).is_ok());
            let err = decompress(codec, &compressed, input.len() - 1).unwrap_err();
            assert!(
                matches!(err, Error::DecompressedTooLarge { .. }),
                "{codec:?}: {err:?}"
            );
        }
    }

    /// A small input that inflates far beyond the cap fails without allocating the output.
    #[test]
    fn bombs_hit_the_cap() {
        let zeros = vec![0u8; 16 * 1024 * 1024];
        for codec in available().into_iter().skip(1) {
            let bomb = compress(codec, &zeros).unwrap();
            assert!(bomb.len() < 4 * 1024 * 1024, "{codec:?}: {}", bomb.len());
            let err = decompress(codec, &bomb, 1024 * 1024).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::DecompressedTooLarge {
                        limit: 1_048_576,
                        ..
                    }
                ),
                "{codec:?}: {err:?}"
            );
        }
    }

    #[cfg(feature = "snappy")]
    #[test]
    fn snappy_claimed_length_is_checked_before_allocating() {
        // A raw block whose varint header claims 2^32-1 bytes.
        let block = [0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00];
        let err = decompress(Compression::Snappy, &block, usize::MAX).unwrap_err();
        assert!(matches!(err, Error::Decompression { .. }), "{err:?}");
        // A plausible claim above the cap.
        let raw = snap::raw::Encoder::new()
            .compress_vec(&[7u8; 4096])
            .unwrap();
        let err = decompress(Compression::Snappy, &raw, 4095).unwrap_err();
        assert!(matches!(err, Error::DecompressedTooLarge { .. }), "{err:?}");
        assert_eq!(
            decompress(Compression::Snappy, &raw, 4096)
                .unwrap()
                .as_ref(),
            &[7u8; 4096][..]
        );
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn lz4_output_holds_no_more_than_it_needs() {
        // One 64 KiB block's room for 4,000 bytes: the result must not keep the rest.
        let input: Vec<u8> = (0..4_000u32).map(|i| (i % 251) as u8).collect();
        let frame = compress(Compression::Lz4, &input).unwrap();
        let out: Vec<u8> = decompress(Compression::Lz4, &frame, 1 << 20)
            .unwrap()
            .into();
        assert_eq!(out, input);
        assert!(out.capacity() <= 4_500, "capacity {}", out.capacity());
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn lz4_content_size_above_the_cap_is_refused_up_front() {
        let mut frame = FRAME_MAGIC_LE.to_vec();
        let descriptor_start = frame.len();
        frame.extend_from_slice(&[0x68, 0x40]); // v01, independent, content size; 64 KiB
        frame.extend_from_slice(&(1u64 << 40).to_le_bytes());
        let hc = (twox_hash::XxHash32::oneshot(0, &frame[descriptor_start..]) >> 8) as u8;
        frame.push(hc);
        frame.extend_from_slice(&0u32.to_le_bytes());
        let err = decompress(Compression::Lz4, &frame, 1 << 20).unwrap_err();
        assert!(matches!(err, Error::DecompressedTooLarge { .. }), "{err:?}");
    }

    #[cfg(feature = "lz4")]
    const FRAME_MAGIC_LE: [u8; 4] = 0x184D_2204u32.to_le_bytes();

    /// Rewrites an lz4 frame's header checksum the way Kafka before 0.10 computed it: over the
    /// magic number too.
    #[cfg(feature = "lz4")]
    fn break_lz4_header_checksum(frame: &mut [u8]) {
        let hc = (twox_hash::XxHash32::oneshot(0, &frame[..6]) >> 8) as u8;
        frame[6] = hc;
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn legacy_lz4_accepts_the_broken_header_checksum() {
        let input = payload(10_000);
        let mut frame = compress(Compression::Lz4, &input).unwrap();
        // Both readers accept the correct checksum...
        assert_eq!(decompress_legacy_lz4(&frame, 10_000).unwrap(), input);
        break_lz4_header_checksum(&mut frame);
        // ...only the legacy one accepts the broken one.
        assert_eq!(decompress_legacy_lz4(&frame, 10_000).unwrap(), input);
        let err = decompress(Compression::Lz4, &frame, 10_000).unwrap_err();
        assert_eq!(
            err,
            Error::Decompression {
                codec: "lz4",
                reason: "frame descriptor checksum mismatch"
            }
        );
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn lz4_linked_blocks_and_checksums() {
        // Build a frame by hand: linked 64 KiB blocks, block checksums, content checksum.
        let input = payload(200_000);
        let mut frame = FRAME_MAGIC_LE.to_vec();
        let descriptor = [0x40 | 0x10 | 0x04, 0x40];
        frame.extend_from_slice(&descriptor);
        frame.push((twox_hash::XxHash32::oneshot(0, &descriptor) >> 8) as u8);
        let mut start = 0;
        while start < input.len() {
            let end = (start + 64 * 1024).min(input.len());
            let dict = &input[start.saturating_sub(64 * 1024)..start];
            let block = lz4_flex::block::compress_with_dict(&input[start..end], dict);
            frame.extend_from_slice(&(block.len() as u32).to_le_bytes());
            frame.extend_from_slice(&block);
            frame.extend_from_slice(&twox_hash::XxHash32::oneshot(0, &block).to_le_bytes());
            start = end;
        }
        frame.extend_from_slice(&0u32.to_le_bytes());
        let content_checksum = twox_hash::XxHash32::oneshot(0, &input);
        frame.extend_from_slice(&content_checksum.to_le_bytes());
        assert_eq!(
            decompress(Compression::Lz4, &frame, input.len()).unwrap(),
            input
        );

        // A flipped bit in the content checksum is caught.
        let last = frame.len() - 1;
        frame[last] ^= 1;
        assert!(matches!(
            decompress(Compression::Lz4, &frame, input.len()),
            Err(Error::Decompression { .. })
        ));
        frame[last] ^= 1;
        // So is one in a block (the block checksum fails first).
        frame[20] ^= 1;
        assert!(matches!(
            decompress(Compression::Lz4, &frame, input.len()),
            Err(Error::Decompression { .. })
        ));
    }

    #[cfg(feature = "snappy")]
    #[test]
    fn snappy_reads_raw_blocks_and_concatenated_xerial_streams() {
        let input = payload(100_000);
        let raw = snap::raw::Encoder::new().compress_vec(&input).unwrap();
        assert_eq!(
            decompress(Compression::Snappy, &raw, input.len()).unwrap(),
            input
        );

        let mut stream = compress(Compression::Snappy, &input[..50_000]).unwrap();
        stream.extend(compress(Compression::Snappy, &input[50_000..]).unwrap());
        assert_eq!(
            decompress(Compression::Snappy, &stream, input.len()).unwrap(),
            input
        );
    }

    #[cfg(any(feature = "zstd", feature = "zstd-c"))]
    #[test]
    fn zstd_reads_concatenated_and_skippable_frames() {
        let input = payload(100_000);
        let mut stream = compress(Compression::Zstd, &input[..30_000]).unwrap();
        // A skippable frame: magic 0x184D2A5?, length, payload.
        stream.extend_from_slice(&0x184D_2A53u32.to_le_bytes());
        stream.extend_from_slice(&3u32.to_le_bytes());
        stream.extend_from_slice(b"abc");
        stream.extend(compress(Compression::Zstd, &input[30_000..]).unwrap());
        assert_eq!(
            decompress(Compression::Zstd, &stream, input.len()).unwrap(),
            input
        );
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn gzip_reads_concatenated_members() {
        let input = payload(100_000);
        let mut stream = compress(Compression::Gzip, &input[..30_000]).unwrap();
        stream.extend(compress(Compression::Gzip, &input[30_000..]).unwrap());
        assert_eq!(
            decompress(Compression::Gzip, &stream, input.len()).unwrap(),
            input
        );
    }

    #[test]
    fn codecs_with_their_feature_off_are_unsupported() {
        for codec in CODECS.into_iter().filter(|c| !c.is_available()) {
            let expected = Error::UnsupportedCompression {
                codec: codec.as_attribute_bits() as u8,
            };
            assert_eq!(decompress(codec, b"abc", 100), Err(expected.clone()));
            assert_eq!(compress(codec, b"abc"), Err(expected));
        }
        assert!(Compression::None.is_available());
    }

    /// Truncations, bit flips and plain garbage give errors, never panics.
    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let input = payload(20_000);
        for codec in available().into_iter().skip(1) {
            let good = compress(codec, &input).unwrap();
            for cut in [0, 1, 3, 7, 15, 16, 17, 20, good.len() / 2, good.len() - 1] {
                let result = decompress(codec, &good[..cut], 1 << 20);
                if let Ok(out) = result {
                    // A cut at a frame boundary may decode a prefix; it must not invent bytes.
                    assert!(input.starts_with(&out), "{codec:?} cut {cut}");
                }
            }
            let mut state = 0x1234_5678u32;
            for i in 0..200 {
                let mut bad = good.clone();
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let at = state as usize % bad.len();
                bad[at] ^= 1 << (i % 8);
                let _ = decompress(codec, &bad, 1 << 20);
            }
            for len in [1, 2, 16, 100, 1000] {
                let noise: Vec<u8> = (0..len)
                    .map(|i| (i as u32).wrapping_mul(2_654_435_761) as u8)
                    .collect();
                let result = decompress(codec, &noise, 1 << 20);
                // Raw snappy has no magic: a few noise bytes can be a valid block.
                if codec != Compression::Snappy {
                    assert!(result.is_err(), "{codec:?}");
                }
            }
        }
    }

    /// Bytes written by Kafka's Java client and its codec jars; see
    /// `protocol/tests/data/codecs/README.md`.
    #[cfg(any(
        feature = "gzip",
        feature = "snappy",
        feature = "lz4",
        feature = "zstd",
        feature = "zstd-c"
    ))]
    mod java {
        use super::*;

        const PAYLOAD: &[u8] = include_bytes!("../../tests/data/codecs/payload.bin");

        fn check(codec: Compression, file: &[u8]) {
            let out = decompress(codec, file, PAYLOAD.len()).unwrap();
            assert_eq!(out.as_ref(), PAYLOAD, "{codec:?}");
            let err = decompress(codec, file, PAYLOAD.len() - 1).unwrap_err();
            assert!(matches!(err, Error::DecompressedTooLarge { .. }), "{err:?}");
        }

        #[test]
        #[cfg(feature = "gzip")]
        fn gzip() {
            check(
                Compression::Gzip,
                include_bytes!("../../tests/data/codecs/java-gzip.bin"),
            );
        }

        #[test]
        #[cfg(feature = "snappy")]
        fn snappy_xerial_and_raw() {
            let xerial = include_bytes!("../../tests/data/codecs/java-snappy.bin");
            assert!(xerial.starts_with(b"\x82SNAPPY\x00"));
            check(Compression::Snappy, xerial);
            check(
                Compression::Snappy,
                include_bytes!("../../tests/data/codecs/snappy-raw.bin"),
            );
        }

        #[test]
        #[cfg(feature = "lz4")]
        fn lz4_kafka_and_standard_frames() {
            let kafka = include_bytes!("../../tests/data/codecs/java-lz4.bin");
            check(Compression::Lz4, kafka);
            assert_eq!(
                decompress_legacy_lz4(kafka, PAYLOAD.len()).unwrap(),
                PAYLOAD
            );
            check(
                Compression::Lz4,
                include_bytes!("../../tests/data/codecs/lz4-frame-checksums.bin"),
            );
        }

        #[test]
        #[cfg(feature = "lz4")]
        fn lz4_magic0_broken_header_checksum() {
            let legacy = include_bytes!("../../tests/data/codecs/java-lz4-magic0.bin");
            assert_eq!(
                decompress_legacy_lz4(legacy, PAYLOAD.len()).unwrap(),
                PAYLOAD
            );
            assert_eq!(
                decompress(Compression::Lz4, legacy, PAYLOAD.len()),
                Err(Error::Decompression {
                    codec: "lz4",
                    reason: "frame descriptor checksum mismatch"
                })
            );
        }

        #[test]
        #[cfg(any(feature = "zstd", feature = "zstd-c"))]
        fn zstd() {
            check(
                Compression::Zstd,
                include_bytes!("../../tests/data/codecs/java-zstd.bin"),
            );
            let with_checksum = include_bytes!("../../tests/data/codecs/zstd-checksum.bin");
            check(Compression::Zstd, with_checksum);
            // The content checksum is verified: flip a bit in it.
            let mut bad = with_checksum.to_vec();
            let last = bad.len() - 1;
            bad[last] ^= 0x40;
            let err = decompress(Compression::Zstd, &bad, PAYLOAD.len()).unwrap_err();
            assert!(
                matches!(err, Error::Decompression { codec: "zstd", .. }),
                "{err:?}"
            );
        }
    }

    mod never_panics {
        use proptest::prelude::*;

        use super::*;

        fn codec() -> impl Strategy<Value = Compression> {
            prop::sample::select(CODECS.to_vec())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

            /// Arbitrary bytes under any codec and cap: an error or output within the cap.
            #[test]
            fn on_arbitrary_bytes(
                codec in codec(),
                input in prop::collection::vec(any::<u8>(), 0..512),
                cap in 0usize..100_000,
            ) {
                if let Ok(out) = decompress(codec, &input, cap) {
                    prop_assert!(out.len() <= cap);
                }
                if let Ok(out) = decompress_legacy_lz4(&input, cap) {
                    prop_assert!(out.len() <= cap);
                }
            }

            /// A valid payload with a few bytes overwritten: an error, or output within the cap.
            #[test]
            fn on_mutated_payloads(
                codec in prop::sample::select(available()),
                len in 0usize..5_000,
                edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
                cap in 0usize..10_000,
            ) {
                let mut bytes = compress(codec, &payload(len)).unwrap();
                prop_assume!(!bytes.is_empty());
                for (at, value) in edits {
                    let i = at.index(bytes.len());
                    bytes[i] = value;
                }
                if let Ok(out) = decompress(codec, &bytes, cap) {
                    prop_assert!(out.len() <= cap);
                }
            }
        }
    }
}

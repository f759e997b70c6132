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
mod tests;

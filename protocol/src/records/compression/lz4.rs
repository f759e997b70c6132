//! lz4: the LZ4 frame format, its blocks decoded through lz4_flex, checksums through twox-hash.

use core::hash::Hasher as _;

use twox_hash::XxHash32;

use super::{corrupt, too_large, too_long, Result};

const NAME: &str = "lz4";

const FRAME_MAGIC: u32 = 0x184D_2204;
/// Skippable frames: magic 0x184D2A50 to 0x184D2A5F.
const SKIPPABLE_MAGIC_MASK: u32 = 0xFFFF_FFF0;
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;

/// The bits of a frame descriptor's FLG byte (the LZ4 frame format, "Frame Descriptor").
mod flg {
    /// Bits 7-6: the format version, which must be 01.
    pub(super) const VERSION_MASK: u8 = 0b1100_0000;
    pub(super) const VERSION_01: u8 = 0b0100_0000;
    /// Bit 5: no block refers back into an earlier one.
    pub(super) const BLOCK_INDEPENDENT: u8 = 0b0010_0000;
    /// Bit 4: each block is followed by its xxHash32.
    pub(super) const BLOCK_CHECKSUM: u8 = 0b0001_0000;
    /// Bit 3: the descriptor holds the content's size (8 bytes).
    pub(super) const CONTENT_SIZE: u8 = 0b0000_1000;
    /// Bit 2: the frame ends with the xxHash32 of its content.
    pub(super) const CONTENT_CHECKSUM: u8 = 0b0000_0100;
    /// Bit 1: reserved, must be 0.
    pub(super) const RESERVED: u8 = 0b0000_0010;
    /// Bit 0: the descriptor holds a dictionary id (4 bytes).
    pub(super) const DICT_ID: u8 = 0b0000_0001;
}

/// The BD byte's bits 6-4: the block maximum size (4 to 7); the others are reserved.
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
        let len = usize::try_from(len).map_err(|_| corrupt(NAME, "skippable frame too long"))?;
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
    if flg & flg::VERSION_MASK != flg::VERSION_01 || flg & flg::RESERVED != 0 {
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
    if flg & flg::CONTENT_SIZE != 0 {
        let size = take(&mut input, 8, "truncated content size")?;
        let size = size
            .try_into()
            .map(u64::from_le_bytes)
            .map_err(|_| corrupt(NAME, "truncated content size"))?;
        if size > u64::try_from(cap.saturating_sub(*written)).unwrap_or(u64::MAX) {
            return Err(too_large(NAME, cap));
        }
    }
    if flg & flg::DICT_ID != 0 {
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

    let independent = flg & flg::BLOCK_INDEPENDENT != 0;
    let block_checksum = flg & flg::BLOCK_CHECKSUM != 0;
    let content_checksum = flg & flg::CONTENT_CHECKSUM != 0;
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
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if limit < block_max => {
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
        flg::VERSION_01 | flg::BLOCK_INDEPENDENT,
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

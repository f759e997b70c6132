//! zstd through ruzstd, the pure-Rust decoder and encoder (the default).

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
                let length =
                    usize::try_from(length).map_err(|_| corrupt(NAME, "bad skippable frame"))?;
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

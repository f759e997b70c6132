//! zstd through the C libzstd (the opt-in `zstd-c` feature).

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
    let window_log =
        (usize::BITS - cap.saturating_sub(1).leading_zeros()).clamp(MIN_WINDOW_LOG, MAX_WINDOW_LOG);
    decoder
        .window_log_max(window_log)
        .map_err(|_| corrupt(NAME, "cannot set the window limit"))?;
    read_capped(decoder, NAME, cap, input.len().saturating_mul(4))
}

/// A zstd frame at level 3, the level Kafka's producer uses by default.
pub(super) fn compress(input: &[u8]) -> Result<Vec<u8>> {
    zstd_c::bulk::compress(input, 3).map_err(|_| too_long("zstd input", input))
}

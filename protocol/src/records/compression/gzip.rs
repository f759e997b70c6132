//! gzip: RFC 1952 members through flate2 (its zlib-rs backend, pure Rust).

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

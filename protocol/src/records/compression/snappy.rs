//! snappy: the xerial snappy-java stream or a single raw block, through snap.

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
    let len = snap::raw::decompress_len(block).map_err(|_| corrupt(NAME, "bad length header"))?;
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

//! Checksums: CRC-32 (IEEE 802.3, the zlib polynomial) for legacy message sets, and CRC-32C
//! (Castagnoli) for magic-2 batches: [`crc32c`], and the order in which a batch's is computed.
//!
//! Magic 0 and 1 messages are checksummed with the IEEE CRC, not the Castagnoli one that
//! magic 2 uses. Legacy data is rare and never the hot path, so a small table-driven
//! implementation (slicing by 4) is enough and keeps the crate free of another dependency.
//!
//! # References
//! Kafka's `LegacyRecord.computeChecksum` (`java.util.zip.CRC32`) and `DefaultRecordBatch`
//! (CRC-32C); the combination of two CRCs is the GF(2) polynomial arithmetic of zlib's
//! `crc32_combine` (Mark Adler), written here for the Castagnoli polynomial; the SSE 4.2 path
//! runs three streams and joins them by carry-less multiplication, as in Intel's "Fast CRC
//! Computation for iSCSI Polynomial Using CRC32 Instruction" (2011).

/// The reflected IEEE polynomial.
const POLY: u32 = 0xEDB8_8320;

const TABLES: [[u32; 256]; 4] = make_tables();

const fn make_tables() -> [[u32; 256]; 4] {
    let mut t = [[0u32; 256]; 4];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut j = 1;
        while j < 4 {
            let prev = t[j - 1][i];
            t[j][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            j += 1;
        }
        i += 1;
    }
    t
}

/// The CRC-32 (IEEE) of `data`, as `java.util.zip.CRC32` and zlib compute it.
pub(crate) fn crc32_ieee(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let [a, b, d, e] = [c[0], c[1], c[2], c[3]];
        crc ^= u32::from_le_bytes([a, b, d, e]);
        crc = TABLES[3][(crc & 0xff) as usize]
            ^ TABLES[2][((crc >> 8) & 0xff) as usize]
            ^ TABLES[1][((crc >> 16) & 0xff) as usize]
            ^ TABLES[0][(crc >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ TABLES[0][((crc ^ u32::from(b)) & 0xff) as usize];
    }
    !crc
}

/// Batches above this size are checksummed back half first (see [`crc32c_front_last`]).
const SPLIT_ABOVE: usize = 256 * 1024;

/// The CRC-32C of `data`, as [`crc32c`] computes it, but for a large batch read back
/// half first and front half last, so that when the check is done the front of the batch,
/// where the record iteration starts, is what the cache holds. Read front to back, a batch
/// larger than the L2 cache leaves only its end there, and the records pass then fetches all
/// of it again from the last-level cache or memory.
pub(crate) fn crc32c_front_last(data: &[u8]) -> u32 {
    if data.len() <= SPLIT_ABOVE {
        return crc32c(data);
    }
    let (front, back) = data.split_at(data.len() / 2);
    let back_crc = crc32c(back);
    let front_crc = crc32c(front);
    crc32c_combine(front_crc, back_crc, back.len())
}

/// The CRC-32C (Castagnoli) of `data`: the checksum of a magic-2 record batch, from its
/// attributes to its end.
///
/// On x86-64 it runs on the SSE 4.2 `crc32` instruction, three independent streams at a
/// time, joined by one carry-less multiply each (PCLMULQDQ): as fast as the `crc32c` crate,
/// without its 16 KiB of lookup tables (BENCHMARKS.md, Footprint). A CPU without those
/// instructions (none made since 2011) gets a bitwise loop. Other targets use the `crc32c`
/// crate.
pub fn crc32c(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        x86::crc32c(data)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        crc32c::crc32c(data)
    }
}

/// The CRC-32C of `data`, one bit at a time: the fallback for an x86-64 CPU without SSE 4.2,
/// and the reference the fast paths are tested against.
#[cfg_attr(not(any(test, target_arch = "x86_64")), allow(dead_code))]
fn crc32c_bitwise(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY_C
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// x^n modulo the Castagnoli polynomial (reflected), from the powers x^(2^k).
const fn x_pow_mod_c(mut n: u64) -> u32 {
    let mut result = 1u32 << 31; // x^0
    let mut k = 0;
    while n != 0 {
        if n & 1 != 0 {
            result = mul_mod_c(X2N[k & 63], result);
        }
        n >>= 1;
        k += 1;
    }
    result
}

/// The SSE 4.2 paths of [`crc32c`]. The only `unsafe` of this crate: calling functions that
/// need CPU features, after [`crc32c`] has detected them. The intrinsics themselves are safe
/// inside these functions, and every load is a safe slice read.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtsi128_si64, _mm_cvtsi64_si128,
    };

    use super::{crc32c_bitwise, x_pow_mod_c};

    /// [`super::crc32c`] on x86-64: the fastest path this CPU has.
    pub(super) fn crc32c(data: &[u8]) -> u32 {
        if std::is_x86_feature_detected!("sse4.2") {
            if std::is_x86_feature_detected!("pclmulqdq") {
                // SAFETY: the CPU has SSE 4.2 and PCLMULQDQ, just detected.
                return unsafe { crc32c_3way(data) };
            }
            // SAFETY: the CPU has SSE 4.2, just detected.
            return unsafe { crc32c_1way(data) };
        }
        crc32c_bitwise(data)
    }

    /// Bytes per stream in a round, longest first: a round checksums three such blocks at
    /// once, then joins them, which costs two multiplies in a row. Rounds of 8 KiB blocks run
    /// while the data lasts; each shorter size then runs at most once, so a 16 KiB batch takes
    /// three rounds rather than the 21 it took with 256-byte blocks alone (BENCHMARKS.md).
    const BLOCKS: [usize; 8] = [8192, 4096, 2048, 1024, 512, 256, 128, 64];

    /// The constant that moves a CRC past `n` zero bytes in [`shift`]: x^(8 n - 33), since
    /// the carry-less product and the `crc32` reduction that follows add x^33.
    const fn shift_constant(n: usize) -> u64 {
        x_pow_mod_c(8 * n as u64 - 33) as u64
    }
    /// The [`shift_constant`] of each of [`BLOCKS`].
    const SHIFTS: [u64; 8] = {
        let mut k = [0; 8];
        let mut i = 0;
        while i < 8 {
            k[i] = shift_constant(BLOCKS[i]);
            i += 1;
        }
        k
    };

    /// `crc` (a raw register, as the `crc32` instruction keeps it) times x^(8 n) modulo the
    /// polynomial, with `k` = [`shift_constant`]`(n)`: what the register would hold after `n`
    /// more zero bytes.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    fn shift(crc: u32, k: u64) -> u32 {
        let product = _mm_clmulepi64_si128(
            _mm_cvtsi64_si128(i64::from(crc)),
            _mm_cvtsi64_si128(k as i64),
            0x00,
        );
        _mm_crc32_u64(0, _mm_cvtsi128_si64(product) as u64) as u32
    }

    fn word(bytes: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(bytes);
        u64::from_le_bytes(w)
    }

    /// Three blocks at a time for each size of [`BLOCKS`] while they last (the instruction's
    /// latency is three cycles, its throughput one), each round's three registers joined by
    /// [`shift`]; then eight bytes at a time, then one.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    pub(super) fn crc32c_3way(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        let mut rest = data;
        for (block, k) in BLOCKS.into_iter().zip(SHIFTS) {
            while rest.len() >= 3 * block {
                let (a, tail) = rest.split_at(block);
                let (b, tail) = tail.split_at(block);
                let (c, tail) = tail.split_at(block);
                let (mut ca, mut cb, mut cc) = (u64::from(crc), 0u64, 0u64);
                for ((x, y), z) in a
                    .chunks_exact(8)
                    .zip(b.chunks_exact(8))
                    .zip(c.chunks_exact(8))
                {
                    ca = _mm_crc32_u64(ca, word(x));
                    cb = _mm_crc32_u64(cb, word(y));
                    cc = _mm_crc32_u64(cc, word(z));
                }
                // The register after a, b and c: a's moved past b and c, b's past c.
                crc = shift(shift(ca as u32, k) ^ cb as u32, k) ^ cc as u32;
                rest = tail;
            }
        }
        !tail_crc(crc, rest)
    }

    /// One stream: for a CPU with SSE 4.2 but without PCLMULQDQ.
    #[target_feature(enable = "sse4.2")]
    pub(super) fn crc32c_1way(data: &[u8]) -> u32 {
        !tail_crc(!0, data)
    }

    /// The register after `data`, from `crc`: eight bytes at a time, then one.
    #[target_feature(enable = "sse4.2")]
    fn tail_crc(crc: u32, data: &[u8]) -> u32 {
        let mut words = data.chunks_exact(8);
        let mut c = u64::from(crc);
        for w in &mut words {
            c = _mm_crc32_u64(c, word(w));
        }
        let mut c = c as u32;
        for &b in words.remainder() {
            c = _mm_crc32_u8(c, b);
        }
        c
    }
}

/// The reflected Castagnoli polynomial.
const POLY_C: u32 = 0x82F6_3B78;

/// `X2N[k]` is x^(2^k) modulo the Castagnoli polynomial (reflected: bit 31 is x^0).
const X2N: [u32; 64] = {
    let mut t = [0u32; 64];
    t[0] = 1 << 30; // x^1
    let mut k = 1;
    while k < 64 {
        t[k] = mul_mod_c(t[k - 1], t[k - 1]);
        k += 1;
    }
    t
};

/// a(x) * b(x) modulo the Castagnoli polynomial, both reflected.
const fn mul_mod_c(a: u32, mut b: u32) -> u32 {
    let mut product = 0;
    let mut m = 1u32 << 31;
    while m != 0 {
        if a & m != 0 {
            product ^= b;
        }
        b = if b & 1 != 0 {
            (b >> 1) ^ POLY_C
        } else {
            b >> 1
        };
        m >>= 1;
    }
    product
}

/// The CRC-32C of `a ++ b` from the CRC-32C of `a`, that of `b`, and `b`'s length: `crc_a`
/// shifted by `len_b` zero bytes (multiplied by x^(8 len_b)), plus `crc_b`. About 20
/// polynomial products for a 1 MiB batch, a microsecond or two.
fn crc32c_combine(crc_a: u32, crc_b: u32, len_b: usize) -> u32 {
    mul_mod_c(x_pow_mod_c(8 * len_b as u64), crc_a) ^ crc_b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_reference_at_every_length_around_the_blocks() {
        // Lengths around each size of round (3 x 64 to 3 x 8192 bytes) and their multiples,
        // each from several starting offsets (unaligned loads).
        let data: Vec<u8> = (0..80_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut lengths: Vec<usize> = (0..800).collect();
        for round in [192, 384, 768, 1536, 3 * 1024, 3 * 2048, 3 * 4096, 3 * 8192] {
            for m in 1..4 {
                lengths.extend((m * round - 20)..(m * round + 20));
            }
        }
        lengths.push(data.len() - 8);
        for start in [0, 1, 3, 7] {
            for &len in &lengths {
                let slice = &data[start..start + len];
                let expected = crc32c::crc32c(slice);
                assert_eq!(crc32c(slice), expected, "{start} + {len}");
                assert_eq!(crc32c_bitwise(slice), expected, "bitwise {start} + {len}");
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("sse4.2") {
                    // SAFETY: SSE 4.2 just detected.
                    #[allow(unsafe_code)]
                    let one = unsafe { x86::crc32c_1way(slice) };
                    assert_eq!(one, expected, "one stream {start} + {len}");
                }
            }
        }
        // The standard check value.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn crc32c_combined_equals_the_whole() {
        let data: Vec<u8> = (0..700_000u32).map(|i| (i * 31 + i / 7) as u8).collect();
        assert_eq!(crc32c_front_last(&data), crc32c::crc32c(&data));
        let just_above = &data[..SPLIT_ABOVE + 1];
        assert_eq!(crc32c_front_last(just_above), crc32c::crc32c(just_above));
        for (a, b) in [(0, 0), (0, 5), (5, 0), (1, 1), (3, 1000), (4096, 12_345)] {
            let (x, y) = data[..a + b].split_at(a);
            assert_eq!(
                crc32c_combine(crc32c::crc32c(x), crc32c::crc32c(y), y.len()),
                crc32c::crc32c(&data[..a + b]),
                "{a} + {b}"
            );
        }
    }

    #[test]
    fn known_values() {
        // The standard check value for "123456789".
        assert_eq!(crc32_ieee(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32_ieee(b""), 0);
        assert_eq!(crc32_ieee(b"a"), 0xE8B7_BE43);
        assert_eq!(
            crc32_ieee(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }
}

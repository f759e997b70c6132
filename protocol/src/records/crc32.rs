//! Checksums: CRC-32 (IEEE 802.3, the zlib polynomial) for legacy message sets, and the
//! order in which a magic-2 batch's CRC-32C is computed.
//!
//! Magic 0 and 1 messages are checksummed with the IEEE CRC, not the Castagnoli one that
//! magic 2 uses. Legacy data is rare and never the hot path, so a small table-driven
//! implementation (slicing by 4) is enough and keeps the crate free of another dependency.
//!
//! # References
//! Kafka's `LegacyRecord.computeChecksum` (`java.util.zip.CRC32`) and `DefaultRecordBatch`
//! (CRC-32C); the combination of two CRCs is the GF(2) polynomial arithmetic of zlib's
//! `crc32_combine` (Mark Adler), written here for the Castagnoli polynomial.

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

/// The CRC-32C of `data`, as `crc32c::crc32c` computes it, but for a large batch read back
/// half first and front half last, so that when the check is done the front of the batch,
/// where the record iteration starts, is what the cache holds. Read front to back, a batch
/// larger than the L2 cache leaves only its end there, and the records pass then fetches all
/// of it again from the last-level cache or memory.
pub(crate) fn crc32c_front_last(data: &[u8]) -> u32 {
    if data.len() <= SPLIT_ABOVE {
        return crc32c::crc32c(data);
    }
    let (front, back) = data.split_at(data.len() / 2);
    let back_crc = crc32c::crc32c(back);
    let front_crc = crc32c::crc32c(front);
    crc32c_combine(front_crc, back_crc, back.len())
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
    let mut shift = 1u32 << 31; // x^0
    let mut n = len_b as u64;
    let mut k = 3; // x^(8 n) = x^(n 2^3)
    while n != 0 {
        if n & 1 != 0 {
            shift = mul_mod_c(X2N[k & 63], shift);
        }
        n >>= 1;
        k += 1;
    }
    mul_mod_c(shift, crc_a) ^ crc_b
}

#[cfg(test)]
mod tests {
    use super::*;

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

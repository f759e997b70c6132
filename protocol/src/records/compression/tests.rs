//! Tests of `compression`.

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

    const PAYLOAD: &[u8] = include_bytes!("../../../tests/data/codecs/payload.bin");

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
            include_bytes!("../../../tests/data/codecs/java-gzip.bin"),
        );
    }

    #[test]
    #[cfg(feature = "snappy")]
    fn snappy_xerial_and_raw() {
        let xerial = include_bytes!("../../../tests/data/codecs/java-snappy.bin");
        assert!(xerial.starts_with(b"\x82SNAPPY\x00"));
        check(Compression::Snappy, xerial);
        check(
            Compression::Snappy,
            include_bytes!("../../../tests/data/codecs/snappy-raw.bin"),
        );
    }

    #[test]
    #[cfg(feature = "lz4")]
    fn lz4_kafka_and_standard_frames() {
        let kafka = include_bytes!("../../../tests/data/codecs/java-lz4.bin");
        check(Compression::Lz4, kafka);
        assert_eq!(
            decompress_legacy_lz4(kafka, PAYLOAD.len()).unwrap(),
            PAYLOAD
        );
        check(
            Compression::Lz4,
            include_bytes!("../../../tests/data/codecs/lz4-frame-checksums.bin"),
        );
    }

    #[test]
    #[cfg(feature = "lz4")]
    fn lz4_magic0_broken_header_checksum() {
        let legacy = include_bytes!("../../../tests/data/codecs/java-lz4-magic0.bin");
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
            include_bytes!("../../../tests/data/codecs/java-zstd.bin"),
        );
        let with_checksum = include_bytes!("../../../tests/data/codecs/zstd-checksum.bin");
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

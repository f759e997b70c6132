//! Tests of `batch`.

use super::*;
use crate::records::{encode_legacy_message_set, NewRecord, OwnedRecord, RecordBatchBuilder};

fn opts() -> DecodeOptions {
    DecodeOptions::default()
}

fn one(bytes: impl Into<Bytes>) -> Result<Batch> {
    Batches::new(bytes.into(), opts())
        .next()
        .expect("one batch")
}

/// Recomputes a magic-2 batch's CRC after a test corrupted a covered field.
fn fix_crc(b: &mut [u8]) {
    let crc = crate::records::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// One batch written out field by field from the spec: base offset 5, two records.
fn hand_built_v2() -> Vec<u8> {
    let mut records = vec![
        // record 0: length 16 (zigzag 32 = 0x20)
        0x20, //
        0x00, // attributes
        0x00, // timestamp delta 0
        0x00, // offset delta 0
        0x02, b'k', // key length 1, "k"
        0x04, b'v', b'0', // value length 2, "v0"
        0x02, // one header
        0x04, b'h', b'1', // header key "h1"
        0x01, // header value null
    ];
    records[0] = ((records.len() - 1) * 2) as u8;
    let r1: Vec<u8> = vec![
        0x00, 0x00, // length placeholder, attributes
        0x14, // timestamp delta +10
        0x04, // offset delta 2 (offset 1 compacted away)
        0x01, // null key
        0x02, b'x', // value "x"
        0x00, // no headers
    ];
    let mut r1 = r1;
    r1[0] = ((r1.len() - 1) * 2) as u8;
    records.extend_from_slice(&r1);

    let mut b = Vec::new();
    b.extend_from_slice(&5i64.to_be_bytes()); // base offset
    b.extend_from_slice(&0i32.to_be_bytes()); // length, set below
    b.extend_from_slice(&7i32.to_be_bytes()); // partition leader epoch
    b.push(2); // magic
    b.extend_from_slice(&0u32.to_be_bytes()); // crc, set below
    b.extend_from_slice(&0i16.to_be_bytes()); // attributes: none, create time
    b.extend_from_slice(&2i32.to_be_bytes()); // last offset delta
    b.extend_from_slice(&1_000i64.to_be_bytes()); // base timestamp
    b.extend_from_slice(&1_010i64.to_be_bytes()); // max timestamp
    b.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
    b.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
    b.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
    b.extend_from_slice(&2i32.to_be_bytes()); // records count
    assert_eq!(b.len(), RECORD_BATCH_OVERHEAD);
    b.extend_from_slice(&records);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut b);
    b
}

/// Asserts a record's offset, timestamp, key and value.
#[track_caller]
fn assert_record(
    r: &crate::records::Record<'_>,
    offset: i64,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) {
    assert_eq!(r.offset(), offset);
    assert_eq!(r.timestamp(), timestamp);
    assert_eq!(r.key(), key);
    assert_eq!(r.value(), value);
}

#[test]
fn hand_built_v2_batch_decodes() {
    let bytes = Bytes::from(hand_built_v2());
    let Batch::V2(batch) = one(bytes.clone()).unwrap() else {
        panic!("not v2")
    };
    assert_eq!(batch.base_offset(), 5);
    assert_eq!(batch.partition_leader_epoch(), 7);
    assert_eq!(batch.last_offset(), 7);
    assert_eq!(batch.next_offset(), 8);
    assert_eq!(batch.compression(), Compression::None);
    assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
    assert!(!batch.is_transactional() && !batch.is_control());
    assert_eq!(batch.max_timestamp(), 1_010);
    assert_eq!(batch.records_count(), 2);
    assert_eq!(batch.batch_length() as usize, bytes.len() - 12);
    let records = batch.records().unwrap();
    let recs: Vec<_> = records.iter().collect::<Result<_>>().unwrap();
    assert_eq!(recs.len(), 2);
    assert_record(&recs[0], 5, 1_000, Some(b"k"), Some(b"v0"));
    let h: Vec<_> = recs[0].headers().collect();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].key(), b"h1");
    assert_eq!(h[0].key_str(), Some("h1"));
    assert_eq!(h[0].value(), None);
    assert_record(&recs[1], 7, 1_010, None, Some(b"x"));
    assert!(recs[1].headers().is_empty());
    // Owned views share the input buffer.
    let v = recs[0].value_bytes().unwrap();
    let range = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
    assert!(range.contains(&(v.as_ptr() as usize)));
    // The builder writes the same bytes for the same batch.
    let built = RecordBatchBuilder::new(5, 1_000)
        .partition_leader_epoch(7)
        .record(NewRecord::new(0, 0).key("k").value("v0").null_header("h1"))
        .record(NewRecord::new(2, 10).value("x"))
        .build()
        .unwrap();
    assert_eq!(built, bytes);
}

#[test]
fn corrupt_crc_is_an_error_unless_disabled() {
    let mut b = hand_built_v2();
    let last = b.len() - 1;
    b[last] ^= 0x01;
    let err = one(b.clone()).unwrap_err();
    assert!(
        matches!(err, Error::CrcMismatch { base_offset: 5, .. }),
        "{err:?}"
    );
    let trusting = DecodeOptions {
        verify_crc: false,
        ..DecodeOptions::default()
    };
    assert!(Batches::new(Bytes::from(b), trusting)
        .next()
        .unwrap()
        .is_ok());
}

#[test]
fn truncated_batch_ends_iteration_quietly() {
    let full = hand_built_v2();
    let mut two = full.clone();
    two.extend_from_slice(&full[..full.len() - 3]);
    let mut it = Batches::new(Bytes::from(two), opts());
    assert!(it.next().unwrap().is_ok());
    assert!(it.next().is_none());
    let p = it.partial_batch().unwrap();
    assert_eq!(p.base_offset, Some(5));
    assert_eq!(p.declared_size, Some(full.len()));
    assert_eq!(p.available, full.len() - 3);
    // Fewer than 12 bytes: also partial.
    let mut it = Batches::new(Bytes::copy_from_slice(&full[..10]), opts());
    assert!(it.next().is_none());
    assert_eq!(it.partial_batch().unwrap().declared_size, None);
    // Empty input: nothing, no partial batch.
    let mut it = Batches::new(Bytes::new(), opts());
    assert!(it.next().is_none());
    assert!(it.partial_batch().is_none());
}

#[test]
fn bad_varint_is_an_error() {
    let mut b = hand_built_v2();
    // The second record's timestamp delta becomes an 11-byte varlong: replace the
    // second record with one whose body is all continuation bytes.
    let start = b.len() - 8;
    b.truncate(start);
    b.extend_from_slice(&[0x18, 0x00]);
    b.extend_from_slice(&[0xff; 11]);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut b);
    let batch = one(b).unwrap();
    let records = batch.records().unwrap();
    let mut it = records.iter();
    assert!(it.next().unwrap().is_ok());
    let err = it.next().unwrap().unwrap_err();
    assert!(matches!(err, Error::VarintOverflow { .. }), "{err:?}");
    assert!(it.next().is_none());
}

#[test]
fn wrong_magic_is_an_error() {
    let mut b = hand_built_v2();
    b[16] = 3;
    let err = one(b).unwrap_err();
    assert_eq!(
        err,
        Error::UnknownMagic {
            magic: 3,
            offset: 5
        }
    );
}

#[test]
fn bad_batch_lengths_are_errors() {
    let mut b = hand_built_v2();
    b[8..12].copy_from_slice(&(-5i32).to_be_bytes());
    assert!(matches!(
        one(b.clone()).unwrap_err(),
        Error::InvalidLength { .. }
    ));
    b[8..12].copy_from_slice(&3i32.to_be_bytes());
    assert!(matches!(
        one(b.clone()).unwrap_err(),
        Error::InvalidLength { .. }
    ));
    b[8..12].copy_from_slice(&0x7fff_fff0i32.to_be_bytes());
    let err = one(b.clone()).unwrap_err();
    assert!(matches!(err, Error::InvalidLength { .. }), "{err:?}");
    // With a limit above the declared size, it is a partial batch instead.
    let lax = DecodeOptions {
        max_batch_size: usize::MAX,
        ..DecodeOptions::default()
    };
    let mut it = Batches::new(Bytes::from(b), lax);
    assert!(it.next().is_none());
    assert!(it.partial_batch().is_some());
    // A v2 batch too short for its header.
    let mut short = hand_built_v2();
    short.truncate(40);
    short[8..12].copy_from_slice(&28i32.to_be_bytes());
    assert!(matches!(one(short).unwrap_err(), Error::Truncated { .. }));
}

#[test]
fn record_length_beyond_batch_is_an_error() {
    let mut b = hand_built_v2();
    b[RECORD_BATCH_OVERHEAD] = 0x7e; // record length 63, far more than present
    fix_crc(&mut b);
    let batch = one(b).unwrap();
    let records = batch.records().unwrap();
    let err = records.iter().next().unwrap().unwrap_err();
    assert!(
        matches!(err, Error::Truncated { what: "record", .. }),
        "{err:?}"
    );
}

#[test]
fn negative_record_length_and_trailing_bytes_are_errors() {
    let mut b = hand_built_v2();
    b[RECORD_BATCH_OVERHEAD] = 0x03; // -2
    fix_crc(&mut b);
    let records = one(b).unwrap().records().unwrap();
    assert!(matches!(
        records.iter().next().unwrap(),
        Err(Error::InvalidLength { .. })
    ));
    // Declared count 1 with two records present: trailing bytes.
    let mut b = hand_built_v2();
    b[57..61].copy_from_slice(&1i32.to_be_bytes());
    fix_crc(&mut b);
    let records = one(b).unwrap().records().unwrap();
    let all: Vec<_> = records.iter().collect();
    assert_eq!(all.len(), 2);
    assert!(matches!(all[1], Err(Error::TrailingBytes { .. })));
}

#[test]
fn records_count_bomb_is_refused() {
    let mut b = hand_built_v2();
    b[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    fix_crc(&mut b);
    let batch = one(b.clone()).unwrap();
    assert!(matches!(
        batch.records().unwrap_err(),
        Error::InvalidLength { .. }
    ));
    b[57..61].copy_from_slice(&(-1i32).to_be_bytes());
    fix_crc(&mut b);
    assert!(matches!(one(b).unwrap_err(), Error::InvalidLength { .. }));
}

#[test]
fn header_count_bomb_is_an_error() {
    let mut b = hand_built_v2();
    // Record 0's header count (offset 61 + 9) becomes 2^27 (zigzag, 4 bytes would
    // shift the record; use a one-byte 63 instead, with only 3 header bytes present).
    b[RECORD_BATCH_OVERHEAD + 9] = 0x7e;
    fix_crc(&mut b);
    let records = one(b).unwrap().records().unwrap();
    let err = records.iter().next().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidLength {
                what: "record header count",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn unknown_codec_is_an_error() {
    let mut b = hand_built_v2();
    b[21..23].copy_from_slice(&7i16.to_be_bytes());
    fix_crc(&mut b);
    let batch = one(b).unwrap();
    assert_eq!(
        batch.records().unwrap_err(),
        Error::UnsupportedCompression { codec: 7 }
    );
}

#[cfg(feature = "gzip")]
#[test]
fn decompression_bomb_hits_the_cap() {
    // 4 MiB of zeros in one value compresses to a few KiB.
    let batch = RecordBatchBuilder::new(0, 0)
        .compression(Compression::Gzip)
        .record(NewRecord::new(0, 0).value(vec![0u8; 4 << 20]))
        .build()
        .unwrap();
    assert!(batch.len() < 64 << 10);
    let small_cap = DecodeOptions {
        max_decompressed_size: 1 << 20,
        ..DecodeOptions::default()
    };
    let b = Batches::new(batch.clone(), small_cap)
        .next()
        .unwrap()
        .unwrap();
    let err = b.records().unwrap_err();
    assert!(
        matches!(err, Error::DecompressedTooLarge { limit, .. } if limit == 1 << 20),
        "{err:?}"
    );
    // The default cap (64 MiB) lets it through.
    let b = one(batch).unwrap();
    let records = b.records().unwrap();
    let r = records.iter().next().unwrap().unwrap();
    assert_eq!(r.value().unwrap().len(), 4 << 20);
}

#[test]
fn log_append_time_applies_to_every_record() {
    let bytes = RecordBatchBuilder::new(0, 100)
        .log_append_time(5_000)
        .record(NewRecord::new(0, 0))
        .record(NewRecord::new(1, 7))
        .build()
        .unwrap();
    let b = one(bytes).unwrap();
    assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
    let recs = b.records().unwrap();
    for r in &recs {
        assert_eq!(r.unwrap().timestamp(), 5_000);
    }
}

// ---- legacy ----

/// A magic-1 message written out by hand: offset 9, timestamp 1234, key "k", value "val".
fn hand_built_legacy_v1() -> Vec<u8> {
    let mut msg = vec![
        0x01, // magic
        0x00, // attributes
    ];
    msg.extend_from_slice(&1234i64.to_be_bytes());
    msg.extend_from_slice(&1i32.to_be_bytes());
    msg.push(b'k');
    msg.extend_from_slice(&3i32.to_be_bytes());
    msg.extend_from_slice(b"val");
    legacy_entry(9, &msg)
}

/// A legacy log entry: `offset`, the message's size and CRC-32, then the message.
fn legacy_entry(offset: i64, msg: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    e.extend_from_slice(&offset.to_be_bytes());
    e.extend_from_slice(&((msg.len() + 4) as i32).to_be_bytes());
    e.extend_from_slice(&crate::records::crc32::crc32_ieee(msg).to_be_bytes());
    e.extend_from_slice(msg);
    e
}

#[test]
fn hand_built_legacy_message_decodes() {
    let bytes = hand_built_legacy_v1();
    assert_eq!(bytes[16], 1, "magic at byte 16");
    let batch = one(bytes.clone()).unwrap();
    assert_eq!(batch.magic(), 1);
    assert_eq!(batch.base_offset(), Some(9));
    assert_eq!(batch.next_offset(), 10);
    assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
    assert_eq!(batch.max_timestamp(), 1234);
    let records = batch.records().unwrap();
    let recs: Vec<_> = records.iter().collect::<Result<_>>().unwrap();
    assert_eq!(recs.len(), 1);
    assert_record(&recs[0], 9, 1234, Some(b"k"), Some(b"val"));
    // The encoder agrees byte for byte.
    let built = encode_legacy_message_set(
        1,
        Compression::None,
        None,
        &[OwnedRecord {
            offset: 9,
            timestamp: 1234,
            key: Some(Bytes::from_static(b"k")),
            value: Some(Bytes::from_static(b"val")),
            headers: Vec::new(),
        }],
    )
    .unwrap();
    assert_eq!(built, Bytes::from(bytes.clone()));
    // Corrupting the value breaks the CRC-32.
    let mut bad = bytes;
    let last = bad.len() - 1;
    bad[last] ^= 0x20;
    assert!(matches!(
        one(bad).unwrap_err(),
        Error::CrcMismatch { base_offset: 9, .. }
    ));
}

fn msgs(first: i64, n: i64) -> Vec<OwnedRecord> {
    (0..n)
        .map(|i| OwnedRecord {
            offset: first + i,
            timestamp: 100 + i,
            key: (i % 2 == 0).then(|| Bytes::from(format!("k{i}"))),
            value: Some(Bytes::from(format!("value-{i}"))),
            headers: Vec::new(),
        })
        .collect()
}

/// Offset, timestamp, key and value of each record.
type Flat = Vec<(i64, i64, Option<Vec<u8>>, Option<Vec<u8>>)>;

fn read_all(bytes: Bytes) -> Flat {
    let mut out = Vec::new();
    for b in Batches::new(bytes, opts()) {
        let records = b.unwrap().records().unwrap();
        for r in &records {
            let r = r.unwrap();
            out.push((
                r.offset(),
                r.timestamp(),
                r.key().map(<[u8]>::to_vec),
                r.value().map(<[u8]>::to_vec),
            ));
        }
    }
    out
}

fn expected(m: &[OwnedRecord], magic: i8) -> Flat {
    m.iter()
        .map(|m| {
            (
                m.offset,
                if magic == 0 { -1 } else { m.timestamp },
                m.key.as_ref().map(|k| k.to_vec()),
                m.value.as_ref().map(|v| v.to_vec()),
            )
        })
        .collect()
}

/// Writes `msgs(first, n)` as a legacy set with `codec`, for both magics, and reads it back.
fn assert_legacy_round_trip(codec: Compression, first: i64, n: i64) {
    for magic in [0, 1] {
        let m = msgs(first, n);
        let bytes = encode_legacy_message_set(magic, codec, None, &m).unwrap();
        assert_eq!(
            read_all(bytes),
            expected(&m, magic),
            "{codec:?} magic {magic}"
        );
    }
}

#[test]
fn legacy_uncompressed_sets_round_trip() {
    assert_legacy_round_trip(Compression::None, 40, 5);
}

#[cfg(feature = "gzip")]
#[test]
fn legacy_gzip_wrappers_have_absolute_inner_offsets() {
    for magic in [0, 1] {
        let m = msgs(1_000, 4);
        let bytes = encode_legacy_message_set(magic, Compression::Gzip, None, &m).unwrap();
        let batch = one(bytes.clone()).unwrap();
        assert_eq!(batch.base_offset(), None);
        assert_eq!(
            batch.last_offset(),
            1_003,
            "wrapper offset = last inner offset"
        );
        assert_eq!(batch.compression(), Compression::Gzip);
        assert_eq!(read_all(bytes), expected(&m, magic), "magic {magic}");
    }
    // Magic 1 with log-append time: every inner timestamp is the wrapper's.
    let m = msgs(7, 3);
    let bytes = encode_legacy_message_set(1, Compression::Gzip, Some(99_999), &m).unwrap();
    assert!(read_all(bytes).iter().all(|r| r.1 == 99_999));
}

#[cfg(feature = "lz4")]
#[test]
fn legacy_lz4_wrappers_decode_for_both_magics() {
    assert_legacy_round_trip(Compression::Lz4, 3, 3);
}

/// A magic-1 gzip wrapper message at offset 1 around `inner` (a message set), written by
/// hand so that `inner` may be anything.
#[cfg(feature = "gzip")]
fn gzip_wrapper(inner: &[u8]) -> Vec<u8> {
    let compressed = crate::records::compression::compress(Compression::Gzip, inner).unwrap();
    let mut msg = vec![1u8, 1];
    msg.extend_from_slice(&0i64.to_be_bytes());
    msg.extend_from_slice(&(-1i32).to_be_bytes());
    msg.extend_from_slice(&(compressed.len() as i32).to_be_bytes());
    msg.extend_from_slice(&compressed);
    legacy_entry(1, &msg)
}

#[cfg(feature = "gzip")]
#[test]
fn legacy_nested_compression_and_bad_inner_crc_are_errors() {
    // A wrapper whose inner message is itself a gzip wrapper.
    let inner = encode_legacy_message_set(1, Compression::Gzip, None, &msgs(0, 2)).unwrap();
    let records = one(gzip_wrapper(&inner)).unwrap().records().unwrap();
    let err = records.iter().next().unwrap().unwrap_err();
    assert!(matches!(err, Error::InvalidValue { .. }), "{err:?}");

    // An inner message with a broken CRC.
    let mut plain = encode_legacy_message_set(1, Compression::None, None, &msgs(0, 2))
        .unwrap()
        .to_vec();
    let last = plain.len() - 1;
    plain[last] ^= 1;
    let records = one(gzip_wrapper(&plain)).unwrap().records().unwrap();
    let all: Vec<_> = records.iter().collect();
    assert!(all[0].is_ok());
    assert!(matches!(all[1], Err(Error::CrcMismatch { .. })));
}

#[test]
fn garbage_never_panics() {
    // A cheap deterministic sweep over mutations of valid inputs; the fuzz targets do
    // the thorough version.
    #[allow(unused_mut)] // only pushed to with the gzip feature
    let mut seeds = vec![hand_built_v2(), hand_built_legacy_v1()];
    #[cfg(feature = "gzip")]
    seeds.push(
        encode_legacy_message_set(1, Compression::Gzip, None, &msgs(0, 3))
            .unwrap()
            .to_vec(),
    );
    for seed in seeds {
        for i in 0..seed.len() {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = seed.clone();
                b[i] ^= x;
                for verify_crc in [true, false] {
                    let o = DecodeOptions {
                        verify_crc,
                        ..DecodeOptions::default()
                    };
                    for batch in Batches::new(Bytes::from(b.clone()), o).flatten() {
                        if let Ok(records) = batch.records() {
                            for r in records.iter().flatten() {
                                let _ = r.headers().count();
                            }
                        }
                    }
                }
            }
        }
    }
}

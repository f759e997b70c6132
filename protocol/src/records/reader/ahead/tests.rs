//! Batches decoded ahead on several threads are exactly those decoded one at a time: the same
//! batches, records, positions, end and errors, whatever the codecs, transactions, offsets
//! and failures.

use bytes::Bytes;
use proptest::prelude::*;

use super::MIN_PARALLEL_BYTES;
use crate::records::{
    AbortedTransaction, Compression, ControlRecordType, DecodeOptions, NewRecord, PartitionReader,
    RecordBatchBuilder,
};

/// The codecs of this build, and none.
fn codecs() -> Vec<Compression> {
    let all = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    all.into_iter().filter(|c| c.is_available()).collect()
}

/// Values that compress poorly (xorshift bytes), so a few batches pass the threshold.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed * 2 + 1; // odd, and one per seed
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// One batch of a drawn log: its codec's index, record count, value size, and whether it is
/// a transaction of producer 1 (then followed by its marker: abort or commit).
type Drawn = (usize, i32, usize, Option<bool>);

/// The log `drawn` describes, its aborted transactions, and its next offset.
fn log(drawn: &[Drawn]) -> (Bytes, Vec<AbortedTransaction>, i64) {
    let codecs = codecs();
    let mut wire = Vec::new();
    let mut aborted = Vec::new();
    let mut offset = 0;
    for (i, &(codec, count, size, txn)) in drawn.iter().enumerate() {
        let mut b = RecordBatchBuilder::new(offset, 1_000 + offset)
            .compression(codecs[codec % codecs.len()]);
        for r in 0..count {
            let value = noise((i as u64) << 20 | r as u64, size);
            b.push(NewRecord::new(r, i64::from(r)).value(value));
        }
        if txn.is_some() {
            b = b.producer(1, 0, 0).transactional(true);
        }
        wire.extend_from_slice(&b.build().unwrap());
        let first = offset;
        offset += i64::from(count);
        if let Some(abort) = txn {
            let kind = if abort {
                aborted.push(AbortedTransaction {
                    producer_id: 1,
                    first_offset: first,
                });
                ControlRecordType::ABORT
            } else {
                ControlRecordType::COMMIT
            };
            let marker = RecordBatchBuilder::control_marker(offset, 9_000, 1, 0, kind, 0);
            wire.extend_from_slice(&marker.build().unwrap());
            offset += 1;
        }
    }
    (Bytes::from(wire), aborted, offset)
}

/// What a reader hands out: per batch its offsets and values (or the error's text), then
/// its next offset and whether the end was reached.
type Read = (Vec<Result<Vec<(i64, Bytes)>, String>>, i64, bool);

fn read(mut reader: PartitionReader) -> Read {
    let mut out = Vec::new();
    for batch in &mut reader {
        out.push(batch.map_err(|e| e.to_string()).and_then(|b| {
            b.records()
                .map(|r| {
                    let r = r.map_err(|e| e.to_string())?;
                    Ok((r.offset(), Bytes::copy_from_slice(r.value().unwrap_or(&[]))))
                })
                .collect()
        }));
    }
    (out, reader.next_offset(), reader.end_reached())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Up to 12 batches of up to 40 records of up to 9 KiB, some in transactions (aborted or
    /// committed), read from a drawn offset to a drawn end, uncommitted or committed, with
    /// a decompression cap that some batches may pass (an error there ends the read).
    #[test]
    fn decoded_ahead_on_threads_is_decoded_one_at_a_time(
        drawn in prop::collection::vec(
            (0usize..5, 1i32..40, 0usize..9_000, prop::option::of(any::<bool>())),
            1..12,
        ),
        start in 0i64..400,
        end in prop::option::of(0i64..500),
        committed in any::<bool>(),
        cap in prop::option::of(20_000usize..400_000),
        threads in 2usize..5,
    ) {
        let (records, aborted, _) = log(&drawn);
        let options = DecodeOptions {
            max_decompressed_size: cap.unwrap_or(64 << 20),
            ..DecodeOptions::default()
        };
        let reader = || {
            let mut r = PartitionReader::new(records.clone(), start, options);
            if let Some(end) = end {
                r = r.with_end_offset(end);
            }
            if committed {
                r = r.read_committed(aborted.iter().copied());
            }
            r
        };
        prop_assert_eq!(read(reader().decode_threads(threads)), read(reader()));
    }
}

/// Enough compressed bytes for the threads to start: every batch decoded, in order, as one
/// at a time; and a batch past the decompression cap in the middle ends the read before it,
/// the batches before it handed out.
#[test]
fn a_large_response_on_threads_is_exact_and_stops_before_a_batch_that_fails() {
    let heavy = |c: &Compression| matches!(c, Compression::Zstd | Compression::Gzip);
    let Some(codec) = codecs().iter().position(heavy) else {
        return; // Neither zstd nor gzip in this build: nothing is decoded on threads.
    };
    // 16 batches of 20 records of 2-4 KiB: about 1 MiB, compressed or not.
    let drawn: Vec<Drawn> = (0..16)
        .map(|i| (codec, 20, 2_000 + (i % 3) * 1_000, None))
        .collect();
    let (records, _, next) = log(&drawn);
    assert!(records.len() >= 2 * MIN_PARALLEL_BYTES, "{}", records.len());
    let reader = |options| PartitionReader::new(records.clone(), 0, options);
    let ahead = read(reader(DecodeOptions::default()).decode_threads(4));
    assert_eq!(ahead, read(reader(DecodeOptions::default())));
    assert_eq!((ahead.0.len(), ahead.1), (16, next));
    assert!(ahead.0.iter().all(Result::is_ok));

    // Batch 2 (4 KB values: 80 KB of records) is the first past a 70 KB cap.
    let capped = DecodeOptions {
        max_decompressed_size: 70_000,
        ..DecodeOptions::default()
    };
    let ahead = read(reader(capped).decode_threads(4));
    assert_eq!(ahead, read(reader(capped)));
    let (batches, position, end_reached) = ahead;
    assert_eq!(batches.len(), 3, "two good batches, then the error");
    assert!(batches[..2].iter().all(Result::is_ok));
    assert!(batches[2].as_ref().is_err_and(|e| e.contains("decompress")));
    assert_eq!((position, end_reached), (40, false));
}

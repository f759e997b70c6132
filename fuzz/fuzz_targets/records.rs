#![no_main]
//! Record batch decoding: magic 2 with every codec, legacy magic 0/1 message sets, control
//! batches and aborted-transaction filtering, through the same `PartitionReader` a client uses.
//!
//! Input: `[flags, fetch_offset, aborted_first_offset, records...]`. Flag bit 0 turns CRC
//! checking off (so the fuzzer gets past the checksum into the record and codec decoders),
//! bit 1 reads as read_committed with one aborted transaction, bit 2 sets an end offset.

use bytes::Bytes;
use kseek_protocol::records::{AbortedTransaction, DecodeOptions, PartitionReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [flags, fetch_offset, aborted_first, rest @ ..] = data else {
        return;
    };
    let options = DecodeOptions {
        verify_crc: flags & 1 == 0,
        // Small enough that a bomb is found fast, large enough for real batches.
        max_decompressed_size: 4 << 20,
        ..DecodeOptions::default()
    };
    let mut reader = PartitionReader::new(
        Bytes::copy_from_slice(rest),
        i64::from(*fetch_offset) - 8,
        options,
    );
    if flags & 2 != 0 {
        reader = reader.read_committed([AbortedTransaction {
            producer_id: i64::from(flags >> 4),
            first_offset: i64::from(*aborted_first),
        }]);
    }
    if flags & 4 != 0 {
        reader = reader.with_end_offset(i64::from(*fetch_offset) + i64::from(*aborted_first));
    }
    let mut touched = 0usize;
    let mut last = i64::MIN;
    for batch in &mut reader {
        let Ok(batch) = batch else { break };
        for record in batch.records() {
            let Ok(record) = record else { break };
            touched += record.key().map_or(0, <[u8]>::len) + record.value().map_or(0, <[u8]>::len);
            for h in record.headers() {
                touched += h.key().len() + h.value().map_or(0, <[u8]>::len);
            }
            last = record.offset();
        }
    }
    // The position only moves forward.
    assert!(reader.next_offset() >= i64::from(*fetch_offset) - 8);
    std::hint::black_box((touched, last));
});

#![no_main]
//! kseek-protocol's own CRC-32C (on x86-64 its SSE 4.2 code: three streams joined by a
//! carry-less multiply, the crate's only `unsafe`) against the `crc32c` crate, on every input
//! and on the input from every starting offset up to 16 (unaligned loads, and lengths either
//! side of each block boundary as the fuzzer grows inputs past 768 and 24,576 bytes).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for start in 0..data.len().min(16) {
        let slice = &data[start..];
        assert_eq!(
            kseek_protocol::records::crc32c(slice),
            crc32c::crc32c(slice),
            "{} bytes from {start}",
            slice.len()
        );
    }
});

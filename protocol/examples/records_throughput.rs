//! A quick sanity measurement of record decoding throughput (not the official benchmark).
//!
//! Builds 16 KiB batches of records with 100-byte (or, with `1k`, 1 KiB) values, then decodes
//! them repeatedly with CRC checks on, touching every key and value, and prints records/s and
//! bytes/s. Run with `cargo run --release -p kseek-protocol --example records_throughput [1k]`.
//!
//! Times are this thread's CPU time (Linux), so a busy machine skews them less than wall time
//! would. Environment: `NOCRC=1` turns CRC checks off, `ONLY_NONE=1` skips the lz4 run,
//! `ROUNDS=n` sets how many times the 2 MiB input is decoded (default 200), `HEADERS=1` also
//! iterates each record's headers in the first loop.
//!
//! Under valgrind, `ROUNDS=1` and `ROUNDS=3` with `ONLY_NONE=1` give stable instruction
//! counts; their difference divided by 2 × 2 × the records per round is the decoding cost
//! per record (the building of the input cancels out).

use std::hint::black_box;

#[path = "support/clock.rs"]
mod clock;
use clock::Clock;

use bytes::Bytes;
use kseek_protocol::records::{
    Batches, Compression, DecodeOptions, NewRecord, PartitionReader, RecordBatchBuilder,
};

fn build(value_size: usize, total: usize, compression: Compression) -> Bytes {
    let mut wire = Vec::new();
    let mut offset = 0i64;
    let value = vec![b'x'; value_size];
    while wire.len() < total {
        let mut b = RecordBatchBuilder::new(offset, 1_700_000_000_000).compression(compression);
        let mut size = 61;
        let mut i = 0;
        while size + value_size + 24 <= 16 * 1024 || i == 0 {
            b.push(
                NewRecord::new(i, i64::from(i))
                    .key(format!("key-{:06}", offset + i64::from(i)))
                    .value(&value)
                    .header("trace-id", "0123456789abcdef"),
            );
            size += value_size + 24;
            i += 1;
        }
        offset += i64::from(i);
        wire.extend_from_slice(&b.build().expect("build"));
    }
    Bytes::from(wire)
}

fn main() {
    let big = std::env::args().any(|a| a == "1k");
    let value_size = if big { 1024 } else { 100 };
    let codecs = if std::env::var_os("ONLY_NONE").is_some() {
        &[Compression::None][..]
    } else {
        &[Compression::None, Compression::Lz4][..]
    };
    let walk_headers = std::env::var_os("HEADERS").is_some();
    for &compression in codecs {
        let wire = build(value_size, 2 << 20, compression);
        let options = DecodeOptions {
            verify_crc: std::env::var_os("NOCRC").is_none(),
            ..DecodeOptions::default()
        };
        let rounds: usize = std::env::var("ROUNDS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(200);
        let start = Clock::start();
        let mut records = 0u64;
        let mut touched = 0u64;
        for _ in 0..rounds {
            for batch in Batches::new(wire.clone(), options) {
                let batch = batch.expect("batch");
                let recs = batch.records().expect("records");
                for r in &recs {
                    let r = r.expect("record");
                    touched += r.key().map_or(0, |k| u64::from(k[k.len() - 1]));
                    touched += r.value().map_or(0, |v| u64::from(v[v.len() - 1]));
                    if walk_headers {
                        for h in r.headers() {
                            touched += h.value().map_or(0, |v| v.len() as u64);
                        }
                    }
                    records += 1;
                }
            }
        }
        black_box(touched);
        let t = start.elapsed();
        println!(
            "Batches  {:>6} {value_size:>5}-byte values: {:>7.1} M records/s, {:>6.2} GB/s ({} records, {} KiB per round)",
            compression.name(),
            records as f64 / t / 1e6,
            (wire.len() * rounds) as f64 / t / 1e9,
            records / rounds as u64,
            wire.len() >> 10
        );
        let start = Clock::start();
        let mut n = 0u64;
        for _ in 0..rounds {
            let mut reader = PartitionReader::new(wire.clone(), 0, options);
            for batch in &mut reader {
                for r in &batch.expect("batch") {
                    black_box(r.expect("record").value());
                    n += 1;
                }
            }
        }
        let t = start.elapsed();
        println!(
            "Reader   {:>6} {value_size:>5}-byte values: {:>7.1} M records/s, {:>6.2} GB/s",
            compression.name(),
            n as f64 / t / 1e6,
            (wire.len() * rounds) as f64 / t / 1e9
        );
    }
}

//! Record views to Arrow, against decoding alone, on the same bytes.
//!
//! Inputs: uncompressed record batches of 16 KiB (Java's default `batch.size`) with 100 B or
//! 1 KiB values, 16-byte keys and one header, built with `kseek-protocol`'s encoder; 8 MiB of
//! batches per input. Two lines per input, both checking every batch's CRC:
//! - `decode`: every record decoded, its key and value touched (length, first and last byte);
//! - `to-arrow`: every record decoded and appended to a `RecordBatchBuilder` (one for the whole
//!   run, as a stream keeps one), finished at the default limits (8192 rows or 1 MiB) and at
//!   the end of the input, so the time includes building the Arrow arrays and dropping them.
//!
//! The goal (issue #29): building Arrow costs at most as much as decoding, i.e. `to-arrow`
//! runs at ≥ 50% of `decode`'s records/s. Run: `cargo bench -p kseek-arrow --bench to_arrow`
//! (BENCHMARKS.md has the figures).

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kseek::protocol::records::{Batches, DecodeOptions, NewRecord, RecordBatchBuilder as Encoder};
use kseek_arrow::{BatchLimits, RecordBatchBuilder};

const MIB: usize = 1024 * 1024;

/// 8 MiB of 16 KiB batches of records with `value_size`-byte values.
fn input(value_size: usize) -> (Bytes, u64) {
    let mut wire = BytesMut::new();
    let (mut offset, mut records) = (0i64, 0u64);
    while wire.len() < 8 * MIB {
        let mut batch = Encoder::new(offset, 1_767_261_600_000);
        let mut size = 0;
        while size < 16 * 1024 {
            let i = offset + batch.len() as i64;
            let key = format!("user-{:011}", i % 100_000);
            let mut value = format!("{{\"seq\":{i},\"event\":\"page_view\",\"data\":\"");
            value.extend(std::iter::repeat_n(
                'x',
                value_size.saturating_sub(value.len() + 2),
            ));
            value.push_str("\"}");
            size += key.len() + value.len() + 20;
            batch.push(
                NewRecord::new(batch.len() as i32, i % 1000)
                    .key(key)
                    .value(value)
                    .header("source", "web"),
            );
        }
        offset += batch.len() as i64;
        records += batch.len() as u64;
        wire.extend_from_slice(&batch.build().expect("encode"));
    }
    (wire.freeze(), records)
}

fn touch(sum: u64, bytes: Option<&[u8]>) -> u64 {
    bytes.map_or(sum.wrapping_add(1), |b| {
        let ends = u64::from(b.first().copied().unwrap_or(0)) << 8
            | u64::from(b.last().copied().unwrap_or(0)) << 16;
        sum.wrapping_add(b.len() as u64).wrapping_add(ends)
    })
}

fn decode(wire: &Bytes) -> u64 {
    let mut sum = 0u64;
    for batch in Batches::new(wire.clone(), DecodeOptions::default()) {
        let records = batch.expect("batch").records().expect("records");
        for record in &records {
            let record = record.expect("record");
            sum = touch(sum, record.key());
            sum = touch(sum, record.value());
        }
    }
    sum
}

/// Every record of `wire` into `builder` (kept across iterations, as a stream keeps it),
/// finishing a record batch at each limit and at the end; returns the rows.
fn to_arrow(builder: &mut RecordBatchBuilder, wire: &Bytes) -> usize {
    let mut rows = 0;
    for batch in Batches::new(wire.clone(), DecodeOptions::default()) {
        let batch = batch.expect("batch");
        let records = batch.records().expect("records");
        let mut skip = 0;
        while let Some(next) = builder
            .append_records("events", 0, batch.timestamp_type(), records.iter(), skip)
            .expect("record")
        {
            rows += black_box(builder.finish()).num_rows();
            skip = next;
        }
    }
    rows + builder.finish().num_rows()
}

fn benches(c: &mut Criterion) {
    for value_size in [100, 1024] {
        let (wire, records) = input(value_size);
        let mut builder = RecordBatchBuilder::new(BatchLimits::default());
        assert_eq!(
            to_arrow(&mut builder, &wire) as u64,
            records,
            "every record becomes a row"
        );
        let mut group = c.benchmark_group(format!("to-arrow/{value_size}B"));
        group.throughput(Throughput::Elements(records));
        group.sample_size(20);
        group.bench_function("decode", |b| b.iter(|| decode(black_box(&wire))));
        group.bench_function("to-arrow", |b| {
            b.iter(|| to_arrow(&mut builder, black_box(&wire)))
        });
        group.finish();
    }
}

criterion_group!(group, benches);
criterion_main!(group);

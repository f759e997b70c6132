//! kseek-registry's side of the Schema Registry decoding benchmark (`benches/registry/run`):
//! every value of a file of `<4-byte big-endian length><Confluent-framed Avro value>` records
//! decoded to JSON text and to an Arrow struct column, `RUNS` times each.
//!
//! ```text
//! cargo run --release -p kseek-registry --example decode_bench -- REGISTRY_URL FILE RUNS
//! ```
//!
//! Prints one line per run: `json <records> <seconds>` and `arrow <records> <seconds>` (CPU
//! time of this thread); for a file of Protobuf values, `protobuf-json <records> <seconds>`.
//! The schemas are fetched before timing starts.

use std::time::Duration;

use arrow_array::BinaryArray;
use kseek_registry::arrow::AvroColumns;
use kseek_registry::avro::AvroSchema;
use kseek_registry::protobuf::ProtoSchema;
use kseek_registry::wire::Framed;
use kseek_registry::{Registry, RegistryConfig, ResolvedSchema, SchemaKind};

/// Rows per Arrow record batch, as kseek read's Parquet output hands them over.
const BATCH: usize = 8192;

/// This thread's CPU time.
fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the time into the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, path, runs] = &args[..] else {
        return Err("usage: decode_bench REGISTRY_URL FILE RUNS".into());
    };
    let runs: usize = runs.parse()?;
    let data = std::fs::read(path)?;
    let mut values: Vec<&[u8]> = Vec::new();
    let mut at = 0;
    while at + 4 <= data.len() {
        let n = u32::from_be_bytes(data[at..at + 4].try_into()?) as usize;
        values.push(&data[at + 4..at + 4 + n]);
        at += 4 + n;
    }
    let id = Framed::parse(values[0])?.schema_id;
    let registry = Registry::new(&RegistryConfig::new(url)?)?;
    let resolved = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(registry.schema_by_id(id))?;
    if resolved.schema.kind == SchemaKind::Protobuf {
        return protobuf(&resolved, &values, runs);
    }
    let schema = AvroSchema::parse(&resolved)?;
    let mut columns = AvroColumns::new(&resolved, "value")?;
    columns.add_writer(id, &resolved)?;
    let batches: Vec<BinaryArray> = values
        .chunks(BATCH)
        .map(|c| BinaryArray::from_iter_values(c.iter()))
        .collect();

    let mut out = String::with_capacity(1 << 20);
    for _ in 0..runs {
        let start = cpu_time();
        for v in &values {
            out.clear();
            let framed = Framed::parse(v)?;
            schema.to_json(framed.rest, &mut out)?;
        }
        println!(
            "json {} {:.6}",
            values.len(),
            (cpu_time() - start).as_secs_f64()
        );
    }
    for _ in 0..runs {
        let start = cpu_time();
        let mut rows = 0;
        for b in &batches {
            let decoded = columns.decode(b)?;
            assert!(decoded.errors.is_empty());
            rows += decoded.column.len();
        }
        println!("arrow {rows} {:.6}", (cpu_time() - start).as_secs_f64());
    }
    Ok(())
}

/// Protobuf values to JSON text: `protobuf-json <records> <seconds>` per run.
fn protobuf(
    resolved: &ResolvedSchema,
    values: &[&[u8]],
    runs: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let schema = ProtoSchema::parse(resolved)?;
    let mut out = Vec::with_capacity(1 << 20);
    for _ in 0..runs {
        let start = cpu_time();
        for v in values {
            out.clear();
            let framed = Framed::parse(v)?;
            let (indexes, payload) = framed.protobuf_indexes()?;
            schema.to_json(&indexes, payload, &mut out)?;
        }
        println!(
            "protobuf-json {} {:.6}",
            values.len(),
            (cpu_time() - start).as_secs_f64()
        );
    }
    Ok(())
}

//! The library's fast path, as `benches/e2e` measures it: a [`kseek::BatchStream`] read from
//! the earliest offset to the end of one topic, every record viewed in place and nothing
//! printed.
//!
//! ```text
//! cargo run --release --example e2e_batches -- <bootstrap> <topic>
//! ```
//!
//! For each record it touches the key and value lengths (so the decoder can't be skipped) and
//! prints one line at the end: records, key+value bytes, batches, wall seconds. Same runtime as
//! `kseek read` (tokio's current-thread runtime), default [`ReadOptions`].

use std::process::ExitCode;
use std::time::Instant;

use kseek::{End, ReadOptions, ReadSpec, Start};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(bootstrap), Some(topic)) = (args.next(), args.next()) else {
        eprintln!("usage: e2e_batches <bootstrap> <topic>");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("e2e_batches: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(read(bootstrap, topic)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("e2e_batches: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads `topic` from the earliest offset to the latest through the batch stream.
async fn read(bootstrap: String, topic: String) -> kseek::Result<()> {
    let started = Instant::now();
    let client = kseek::Client::connect([bootstrap]).await?;
    let spec = ReadSpec::new([topic], Start::Earliest, End::Latest);
    let plan = client.resolve(&spec).await?;
    let mut batches = client.read(plan, ReadOptions::default());
    let (mut records, mut bytes, mut count) = (0u64, 0u64, 0u64);
    while let Some(batch) = batches.next().await {
        let batch = batch?;
        count += 1;
        for record in batch.records() {
            let record = record?;
            let key = record.key().map_or(0, <[u8]>::len);
            let value = record.value().map_or(0, <[u8]>::len);
            bytes += (key + value) as u64;
            records += 1;
        }
    }
    println!(
        "records {records} bytes {bytes} batches {count} seconds {:.3}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

//! Seek to a timestamp, read a bounded range, commit: the smallest useful kseek program.
//!
//! ```text
//! cargo run --example seek_read_commit -- <bootstrap> <topic> <from-ms> <to-ms> <group>
//! ```
//!
//! Each argument falls back to an environment variable when absent: `KSEEK_BOOTSTRAP`,
//! `KSEEK_TOPIC`, `KSEEK_FROM`, `KSEEK_TO` and `KSEEK_GROUP`. The window is `[from, to)` in
//! milliseconds since the epoch. The program resolves the window to one offset range per
//! partition, prints every record of those ranges (`topic[partition]@offset timestamp value`)
//! and a count, then commits the position where the read ended in each partition to the
//! group, so a consumer of that group carries on after the window.
//!
//! It is also the footprint probe: `benches/footprint` builds it with `--profile footprint`
//! beside `examples/tcp_baseline.rs` and reports the difference in `BENCHMARKS.md`. Built
//! without kseek's `group` feature (the "no group" row there), it seeks and reads but does not
//! commit: what a program that never touches a consumer group costs.

use std::process::ExitCode;

#[cfg(feature = "group")]
use kseek::CommitOffset;
use kseek::{End, ReadOptions, ReadSpec, Start};

/// The arguments, in order, and the environment variable each falls back to.
const ARGS: [(&str, &str); 5] = [
    ("bootstrap", "KSEEK_BOOTSTRAP"),
    ("topic", "KSEEK_TOPIC"),
    ("from-ms", "KSEEK_FROM"),
    ("to-ms", "KSEEK_TO"),
    ("group", "KSEEK_GROUP"),
];

fn main() -> ExitCode {
    let [bootstrap, topic, from, to, group] = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("seek_read_commit: {e}");
            eprintln!("usage: seek_read_commit <bootstrap> <topic> <from-ms> <to-ms> <group>");
            return ExitCode::from(2);
        }
    };
    let (from, to) = match (millis("from-ms", &from), millis("to-ms", &to)) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("seek_read_commit: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("seek_read_commit: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(seek_read_commit(&bootstrap, &topic, from, to, &group)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("seek_read_commit: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads `[from, to)` of `topic` and commits where the read ended to `group`.
async fn seek_read_commit(
    bootstrap: &str,
    topic: &str,
    from: i64,
    to: i64,
    group: &str,
) -> kseek::Result<()> {
    let client = kseek::Client::connect([bootstrap]).await?;
    let spec = ReadSpec::new([topic], Start::Timestamp(from), End::Timestamp(to));
    let plan = client.resolve(&spec).await?;
    for p in &plan.partitions {
        println!(
            "plan {}[{}] {}..{}",
            p.topic,
            p.partition,
            p.start,
            p.end.unwrap_or(p.start)
        );
    }
    let mut records = client.read(plan, ReadOptions::default()).records();
    let mut count = 0u64;
    while let Some(record) = records.next().await {
        let record = record?;
        let value = record.value.as_deref().unwrap_or_default();
        println!(
            "{}[{}]@{} {} {}",
            record.topic,
            record.partition,
            record.offset,
            record.timestamp,
            String::from_utf8_lossy(value)
        );
        count += 1;
    }
    println!("read {count} records");
    #[cfg(feature = "group")]
    {
        let commits: Vec<CommitOffset> = records.positions().into_iter().map(Into::into).collect();
        client.commit(group, &commits).await?;
        for c in &commits {
            println!(
                "committed {}[{}] {} to {group}",
                c.topic, c.partition, c.offset
            );
        }
    }
    #[cfg(not(feature = "group"))]
    println!("not committed to {group}: kseek was built without its group feature");
    Ok(())
}

/// The five arguments, each from the command line or else its environment variable.
fn args() -> Result<[String; 5], String> {
    let mut given = std::env::args().skip(1);
    let mut out: [String; 5] = Default::default();
    for (slot, (name, var)) in out.iter_mut().zip(ARGS) {
        *slot = match given.next().or_else(|| std::env::var(var).ok()) {
            Some(value) if !value.is_empty() => value,
            _ => return Err(format!("missing <{name}> (argument or {var})")),
        };
    }
    match given.next() {
        Some(extra) => Err(format!("unexpected argument {extra:?}")),
        None => Ok(out),
    }
}

/// Parses a timestamp in milliseconds since the epoch.
fn millis(name: &str, value: &str) -> Result<i64, String> {
    value
        .parse()
        .map_err(|_| format!("<{name}> must be milliseconds since the epoch, not {value:?}"))
}

//! Read a time window with the settings of a Kafka client properties file: bootstrap servers,
//! TLS and SASL as Kafka's own tools (`--command-config client.properties`), Confluent Cloud
//! or Amazon MSK write them (`examples/config/` has such files).
//!
//! ```text
//! cargo run --example read_window --features tls,sasl -- <client.properties> <topic> <from-ms> <to-ms>
//! ```
//!
//! The window is `[from, to)` in milliseconds since the epoch: per partition the offsets from
//! the first record at or after `from` to the first at or after `to`, as Kafka's
//! `offsetsForTimes` finds them, and of those the records whose own timestamp lies in the
//! window (`TimeFilter`: out-of-order timestamps never leak in). Each
//! record is printed as `partition offset timestamp key value` (key and value as UTF-8, `-`
//! for none), then the count on stderr. `${env:NAME}` in the file reads an environment
//! variable, so secrets need not be written in it. Without the `tls` and `sasl` features a
//! file that asks for them is refused with a message saying so.

use std::process::ExitCode;

use kseek::properties::Properties;
use kseek::read::TimeFilter;
use kseek::{Client, ClientConfig, End, ReadOptions, ReadSpec, Start};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, topic, from, to] = args.as_slice() else {
        eprintln!("usage: read_window <client.properties> <topic> <from-ms> <to-ms>");
        return ExitCode::from(2);
    };
    let (Ok(from), Ok(to)) = (from.parse::<i64>(), to.parse::<i64>()) else {
        eprintln!("read_window: <from-ms> and <to-ms> are milliseconds since the epoch");
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(read_window(file, topic, from, to)) {
        Ok(count) => {
            eprintln!("{count} records");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("read_window: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints the records of `topic` in `[from, to)`, connecting as `file` says; returns how many.
async fn read_window(file: &str, topic: &str, from: i64, to: i64) -> kseek::Result<u64> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        kseek::Error::from(kseek::ErrorKind::Config {
            message: format!("cannot read {file}: {e}"),
        })
    })?;
    let mut properties = Properties::new();
    properties.add_text(&text, file)?;
    // The servers come from the file's bootstrap.servers, like everything else.
    let mut config = ClientConfig::new(Vec::<String>::new());
    properties.apply(&mut config)?;
    let client = Client::with_config(config).await?;

    let spec = ReadSpec::new([topic], Start::Timestamp(from), End::Timestamp(to));
    let plan = client.resolve(&spec).await?;
    let exact = TimeFilter::from_spec(&spec).expect("a window of two timestamps");
    let mut records = client
        .read(plan, ReadOptions::default().time_filter(exact))
        .records();
    let mut count = 0;
    while let Some(record) = records.next().await {
        let record = record?;
        let text = |b: Option<&[u8]>| {
            b.map_or_else(
                || "-".to_owned(),
                |b| String::from_utf8_lossy(b).into_owned(),
            )
        };
        println!(
            "{} {} {} {} {}",
            record.partition,
            record.offset,
            record.timestamp,
            text(record.key.as_deref()),
            text(record.value.as_deref())
        );
        count += 1;
    }
    Ok(count)
}

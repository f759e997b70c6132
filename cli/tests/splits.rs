//! `kseek splits` and `kseek read-split` against a real Kafka 4.4 broker: the plan cut into
//! splits (JSON lines), each read by a kseek process of its own, last split first, gives
//! exactly the records Kafka's Java consumer reads, under read_committed and
//! read_uncommitted, with split boundaries inside an aborted transaction and on its markers,
//! cut by offsets, by bytes (`--max-bytes`) and by both, and with an exact-time window over
//! out-of-order timestamps.
//!
//! Run with `cargo test -p kseek-cli --test splits`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};

use serde_json::Value;
use support::{ConsumeOptions, Isolation, OffsetQuery, Record, TEN};

/// A record as compared: partition, offset, timestamp, key, value.
type Row = (i64, i64, i64, Option<String>, Option<String>);

/// `kseek <args> --bootstrap <broker>`, which must succeed: its stdout.
fn kseek(args: &[&str]) -> String {
    let (code, out, err) = support::run_kseek(env!("CARGO_BIN_EXE_kseek"), args);
    assert_eq!(code, Some(0), "kseek {args:?}: {err}");
    String::from_utf8(out).expect("UTF-8")
}

/// The splits `kseek splits <args>` prints, one JSON line each.
fn splits(topic: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["splits", "--topic", topic];
    all.extend(args);
    kseek(&all).lines().map(str::to_owned).collect()
}

/// Every split read by its own `kseek read-split` process, last first; sorted.
fn read_apart(splits: &[String]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for split in splits.iter().rev() {
        // A split names its own servers: no --bootstrap.
        let out = Command::new(env!("CARGO_BIN_EXE_kseek"))
            .args(["read-split", split, "-q"])
            .env_remove("KSEEK_BOOTSTRAP")
            .stdin(Stdio::null())
            .output()
            .expect("running kseek read-split");
        assert!(
            out.status.success(),
            "kseek read-split {split}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let j: Value = serde_json::from_str(line).unwrap();
            rows.push((
                j["partition"].as_i64().unwrap(),
                j["offset"].as_i64().unwrap(),
                j["timestamp"].as_i64().unwrap(),
                j["key"].as_str().map(str::to_owned),
                j["value"].as_str().map(str::to_owned),
            ));
        }
    }
    rows.sort();
    rows
}

fn row(r: &Record) -> Row {
    let text = |b: &Option<Vec<u8>>| b.as_ref().map(|b| String::from_utf8(b.clone()).unwrap());
    (
        i64::from(r.partition),
        r.offset,
        r.timestamp,
        text(&r.key),
        text(&r.value),
    )
}

#[test]
fn every_split_read_by_its_own_process_gives_exactly_the_java_consumers_records() {
    let broker = support::broker();
    let topic = support::topic_with_an_aborted_transaction(broker, "cli-splits");
    for (flag, isolation) in [
        ("read_committed", Isolation::ReadCommitted),
        ("read_uncommitted", Isolation::ReadUncommitted),
    ] {
        let java = broker.consume_with(
            &topic,
            &ConsumeOptions {
                isolation,
                ..Default::default()
            },
        );
        let mut expected: Vec<Row> = java.iter().map(row).collect();
        expected.sort();
        let cut = splits(&topic, &["--isolation", flag, "--max-offsets", "3"]);
        assert!(cut.len() > 4, "{flag}: {} splits", cut.len());
        assert_eq!(read_apart(&cut), expected, "{flag}, splits of 3 offsets");

        // By bytes: about a quarter of the topic's bytes (Kafka's LogDirsCommand) each, alone
        // and with a limit of offsets too.
        let quarter = (broker.log_sizes(&topic).values().sum::<u64>() / 4).to_string();
        let cut = splits(&topic, &["--isolation", flag, "--max-bytes", &quarter]);
        assert!((4..=8).contains(&cut.len()), "{flag}: {} splits", cut.len());
        assert_eq!(
            read_apart(&cut),
            expected,
            "{flag}, splits of {quarter} bytes"
        );
        let both = splits(
            &topic,
            &[
                "--isolation",
                flag,
                "--max-bytes",
                &quarter,
                "--max-offsets",
                "2",
            ],
        );
        assert!(both.len() > cut.len(), "{flag}: {} splits", both.len());
        assert_eq!(read_apart(&both), expected, "{flag}, bytes and offsets");
    }

    // An exact-time window, 10:00:02 to 10:00:31, over out-of-order timestamps: per
    // partition the offsets from Kafka's offsetsForTimes of 10:00:02 to that of 10:00:31 (the
    // Java Admin client's ListOffsets; a transaction marker's timestamp counts), and of their
    // records those whose own timestamp is in the window.
    let (from, to) = (TEN + 2_000, TEN + 31_000);
    let offsets_for =
        |ms: i64| broker.list_offsets(&topic, OffsetQuery::Timestamp(ms), Isolation::ReadCommitted);
    let (starts, ends) = (offsets_for(from), offsets_for(to));
    let java = broker.consume_with(
        &topic,
        &ConsumeOptions {
            isolation: Isolation::ReadCommitted,
            ..Default::default()
        },
    );
    let in_range = |r: &Record| {
        let of = |list: &[support::PartitionOffset]| {
            list.iter()
                .find(|o| o.partition == r.partition)
                .map(|o| o.offset)
                .filter(|o| *o >= 0)
        };
        let start = of(&starts).unwrap_or(i64::MAX);
        let end = of(&ends).unwrap_or(i64::MAX);
        (start..end).contains(&r.offset) && (from..to).contains(&r.timestamp)
    };
    let mut expected: Vec<Row> = java.iter().filter(|r| in_range(r)).map(row).collect();
    expected.sort();
    assert!(expected.len() >= 5, "{expected:?}");
    let cut = splits(
        &topic,
        &[
            "--isolation",
            "read_committed",
            "--from",
            &from.to_string(),
            "--to",
            &to.to_string(),
            "--exact-time",
            "--max-offsets",
            "2",
        ],
    );
    assert!(cut.len() > 2, "{} splits", cut.len());
    assert_eq!(
        read_apart(&cut),
        expected,
        "exact time, splits of 2 offsets"
    );
}

#[test]
fn a_split_that_is_not_one_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_kseek"))
        .args(["read-split", "{\"topic\":\"t\"}"])
        .env_remove("KSEEK_BOOTSTRAP")
        .output()
        .expect("running kseek");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("kseek: not a kseek split (JSON): missing field"),
        "{stderr}"
    );
}

//! `examples/seek_read_commit.rs`, the library example and footprint probe, run as a program
//! against Kafka 4.4: it prints the plan, exactly the records the Java producer wrote inside
//! the window and their count, and the group's commit is where the window ends.
//!
//! The example is run through `cargo run --example` with this test's own features and
//! profile, so after `cargo test` (which builds examples) it only links, if anything.

mod support;

use std::process::Command;

use support::NewRecord;

#[test]
fn the_example_reads_the_window_and_commits() {
    const TEN: i64 = 1_767_261_600_000; // 2026-01-01T10:00:00Z
    const MINUTE: i64 = 60_000;
    let broker = support::broker();
    let topic = broker.new_topic("example", 2, &[]);
    let group = support::unique_name("example-group");
    // One record a minute from 09:57 to 10:06 in each partition: offsets 3..8 are 10:00-10:04.
    let input: Vec<_> = (0..10)
        .flat_map(|i| {
            (0..2).map(move |p| {
                NewRecord::new()
                    .partition(p)
                    .timestamp(TEN - 3 * MINUTE + i * MINUTE)
                    .value(format!("v{i}-p{p}"))
                    .into()
            })
        })
        .collect();
    broker.produce(&topic, &input);

    let out = example(&[
        broker.bootstrap(),
        &topic,
        &TEN.to_string(),
        &(TEN + 5 * MINUTE).to_string(),
        &group,
    ]);

    let mut expected = vec![
        format!("plan {topic}[0] 3..8"),
        format!("plan {topic}[1] 3..8"),
    ];
    for p in 0..2 {
        for i in 3..8 {
            let ts = TEN + (i - 3) * MINUTE;
            expected.push(format!("{topic}[{p}]@{i} {ts} v{i}-p{p}"));
        }
    }
    expected.push("read 10 records".to_owned());
    for p in 0..2 {
        expected.push(format!("committed {topic}[{p}] 8 to {group}"));
    }
    // The two partitions are fetched concurrently: their records may interleave, each in order.
    let mut got: Vec<&str> = out.lines().collect();
    let mut want: Vec<&str> = expected.iter().map(String::as_str).collect();
    for p in 0..2 {
        let prefix = format!("{topic}[{p}]@");
        let of = |lines: &[&str]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| l.starts_with(&prefix))
                .map(|l| l.to_string())
                .collect()
        };
        assert_eq!(of(&got), of(&want), "partition {p}, in offset order");
    }
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "all of stdout:\n{out}");

    let mut committed = broker.describe_group(&group);
    committed.sort_by_key(|c| c.partition);
    let committed: Vec<(i32, Option<i64>)> =
        committed.iter().map(|c| (c.partition, c.offset)).collect();
    assert_eq!(committed, vec![(0, Some(8)), (1, Some(8))]);
}

/// What `examples/read_window.rs` must print for the window `[from, to)` of `topic`, sorted:
/// per partition the records from the offset Kafka's own offsetsForTimes gives for `from` (the
/// Java Admin client's ListOffsets) to the one it gives for `to` (the end of the log where
/// none), those of them whose own timestamp is in the window (docs/reading-by-time.md).
fn window_lines(
    broker: &support::Broker,
    topic: &str,
    records: &[support::Record],
    from: i64,
    to: i64,
) -> Vec<String> {
    use support::{Isolation, OffsetQuery};
    let offsets = |ms: i64| {
        broker.list_offsets(
            topic,
            OffsetQuery::Timestamp(ms),
            Isolation::ReadUncommitted,
        )
    };
    let (starts, ends) = (offsets(from), offsets(to));
    let of = |list: &[support::PartitionOffset], p: i32| {
        list.iter()
            .find(|o| o.partition == p)
            .map(|o| o.offset)
            .filter(|&o| o >= 0)
            .unwrap_or(i64::MAX)
    };
    let text = |b: &Option<Vec<u8>>| {
        b.as_ref()
            .map_or("-".to_owned(), |b| String::from_utf8(b.clone()).unwrap())
    };
    let mut lines: Vec<String> = records
        .iter()
        .filter(|r| (of(&starts, r.partition)..of(&ends, r.partition)).contains(&r.offset))
        .filter(|r| (from..to).contains(&r.timestamp))
        .map(|r| {
            let (key, value) = (text(&r.key), text(&r.value));
            format!("{} {} {} {key} {value}", r.partition, r.offset, r.timestamp)
        })
        .collect();
    lines.sort();
    lines
}

/// `examples/read_window.rs` with the properties `file` over `[from, to)` of `topic`: its stdout.
fn read_window(file: &std::path::Path, topic: &str, from: i64, to: i64) -> String {
    let (from, to) = (from.to_string(), to.to_string());
    example_named("read_window", &[file.to_str().unwrap(), topic, &from, &to])
}

/// The sorted lines of `out`.
fn sorted(out: &str) -> Vec<String> {
    let mut lines: Vec<String> = out.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[test]
fn read_window_reads_exactly_the_window_with_a_properties_file_s_settings() {
    const TEN: i64 = 1_767_261_600_000;
    const MINUTE: i64 = 60_000;
    // Plaintext, the file giving only the servers and a client id; timestamps out of order
    // within the partition, so the window's offsets hold a record outside it, which the time
    // filter drops.
    let broker = support::broker();
    let topic = broker.new_topic("read-window", 1, &[]);
    let input: Vec<_> = [-2, 1, -1, 3, 7, 2, 4, 6, 5, 0]
        .iter()
        .map(|m| {
            NewRecord::new()
                .partition(0)
                .timestamp(TEN + m * MINUTE)
                .key(format!("k{m}"))
                .value(format!("at {m} min"))
                .into()
        })
        .collect();
    let written = broker.produce(&topic, &input);
    let file = std::env::temp_dir().join(support::unique_name("read-window.properties"));
    std::fs::write(
        &file,
        format!(
            "bootstrap.servers={}\nclient.id=read-window-example\n",
            broker.bootstrap()
        ),
    )
    .unwrap();
    let (from, to) = (TEN, TEN + 5 * MINUTE);
    let out = read_window(&file, &topic, from, to);
    // Offsets 1 to 3 (10:01, 09:59, 10:03; offset 4 is 10:07, the first at or after 10:05),
    // of which 09:59 is outside the window.
    let expected = window_lines(broker, &topic, &written, from, to);
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert_eq!(sorted(&out), expected);
    let _ = std::fs::remove_file(&file);

    // SASL_SSL with SCRAM-SHA-512, as Kafka's Java client's client.properties says it
    // (bootstrap.servers, security.protocol, sasl.mechanism, sasl.jaas.config, a PEM
    // truststore), on the secured broker.
    if cfg!(all(feature = "tls", feature = "sasl")) {
        use support::secure::{secure_broker, window_topic, Listener};
        let secure = secure_broker();
        let (topic, written) = window_topic(secure);
        let file = secure.client(Listener::SaslSsl).write_java_properties();
        let out = read_window(&file, &topic, from, to);
        let expected = window_lines(secure.plaintext(), &topic, &written, from, to);
        assert_eq!(expected.len(), 10, "{expected:?}");
        assert_eq!(sorted(&out), expected, "over SASL_SSL");
        let _ = std::fs::remove_file(&file);
    }
}

#[test]
fn the_example_refuses_a_bad_timestamp_with_exit_code_2() {
    let out = run(&["127.0.0.1:1", "t", "ten o'clock", "1", "g"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "seek_read_commit: <from-ms> must be milliseconds since the epoch, not \"ten o'clock\"\n"
    );
}

/// Runs the example with `args`; returns its stdout, after checking it succeeded.
fn example(args: &[&str]) -> String {
    example_named("seek_read_commit", args)
}

/// Runs example `name` with `args`; returns its stdout, after checking it succeeded.
fn example_named(name: &str, args: &[&str]) -> String {
    let out = run_named(name, args);
    assert!(
        out.status.success(),
        "the example failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the example prints UTF-8")
}

/// `cargo run --example seek_read_commit` with this test's features and profile, and no
/// `KSEEK_*` variables (every argument is given).
fn run(args: &[&str]) -> std::process::Output {
    run_named("seek_read_commit", args)
}

/// `cargo run --example <name>` with this test's features and profile, and no `KSEEK_*`
/// variables.
fn run_named(name: &str, args: &[&str]) -> std::process::Output {
    let features: Vec<&str> = [
        ("gzip", cfg!(feature = "gzip")),
        ("snappy", cfg!(feature = "snappy")),
        ("lz4", cfg!(feature = "lz4")),
        ("zstd", cfg!(feature = "zstd")),
        ("zstd-c", cfg!(feature = "zstd-c")),
        ("tracing", cfg!(feature = "tracing")),
        ("group", cfg!(feature = "group")),
        ("tls", cfg!(feature = "tls")),
        ("sasl", cfg!(feature = "sasl")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--quiet", "--example", name, "--no-default-features"])
        .arg(format!("--features={}", features.join(",")));
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    for var in [
        "KSEEK_BOOTSTRAP",
        "KSEEK_TOPIC",
        "KSEEK_FROM",
        "KSEEK_TO",
        "KSEEK_GROUP",
    ] {
        cmd.env_remove(var);
    }
    cmd.arg("--").args(args).output().expect("cannot run cargo")
}

//! `kseek sql` against a real Kafka 4.4 broker. Data comes from Kafka's Java producer; the
//! expected answer of every query comes from DuckDB (from PyPI, `tests/python/duckdb_sql.py`)
//! running the same SQL over the records Kafka's Java consumer read, never from kseek.
//!
//! The queries filter on each pushed column alone and combined, group, join two topics, and
//! read a LogAppendTime topic, a CreateTime topic with out-of-order timestamps, a topic with an
//! aborted transaction (read_committed and read_uncommitted), an empty window and a window past
//! the end. Push-down is checked by the ranges `EXPLAIN` prints and by the bytes the provider
//! counts as fetched.
//!
//! Run with `cargo test -p kseek-cli --test sql`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use support::{ConsumeOptions, Input, Isolation, NewRecord, Record};

/// 2026-01-01T10:00:00Z in ms.
const TEN: i64 = 1_767_261_600_000;
const MINUTE: i64 = 60_000;

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("a time in range")
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// `kseek sql <args> --bootstrap <broker>`: (exit code, stdout, stderr).
fn kseek_sql(args: &[&str]) -> (Option<i32>, String, String) {
    let all = [&["sql"][..], args].concat();
    let (code, out, err) = support::run_kseek(env!("CARGO_BIN_EXE_kseek"), &all);
    (code, String::from_utf8_lossy(&out).into_owned(), err)
}

/// The rows `kseek sql` prints as JSON lines for `query` (null columns left out, as
/// DuckDB's rows are compared).
fn kseek_rows(query: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--output-format", "json", "-q", query];
    all.extend_from_slice(args);
    let (code, out, err) = kseek_sql(&all);
    assert_eq!(code, Some(0), "{query}: {err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn hex(bytes: &Option<Vec<u8>>) -> Value {
    match bytes {
        None => Value::Null,
        Some(b) => Value::String(b.iter().map(|x| format!("{x:02x}")).collect()),
    }
}

/// What DuckDB answers to `queries` over `tables` (name, the records a Java consumer read).
fn duckdb(tables: &[(&str, &[Record])], queries: &[String]) -> Vec<Vec<Value>> {
    let env = support::repo_root().join("tests/python/env");
    let python = Command::new(&env).output().expect("tests/python/env");
    assert!(python.status.success(), "tests/python/env failed");
    let python = String::from_utf8(python.stdout).expect("a path");
    let mut spec_tables = serde_json::Map::new();
    for (name, records) in tables {
        let rows: Vec<Value> = records
            .iter()
            .map(|r| {
                json!({
                    "topic": name,
                    "partition": r.partition,
                    "offset": r.offset,
                    "timestamp": r.timestamp,
                    "key_hex": hex(&r.key),
                    "value_hex": hex(&r.value),
                })
            })
            .collect();
        spec_tables.insert((*name).to_owned(), Value::Array(rows));
    }
    let spec = json!({"tables": spec_tables, "queries": queries});
    let mut child = Command::new(python.trim())
        .arg(support::repo_root().join("tests/python/duckdb_sql.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running duckdb_sql.py");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(spec.to_string().as_bytes())
        .expect("writing the spec");
    let out = child.wait_with_output().expect("duckdb_sql.py");
    assert!(
        out.status.success(),
        "duckdb_sql.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Vec<Value>> = serde_json::from_slice(&out.stdout).expect("JSON");
    // Null columns left out, as kseek's JSON lines do.
    answers
        .into_iter()
        .map(|rows| {
            rows.into_iter()
                .map(|row| match row {
                    Value::Object(m) => {
                        Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).collect())
                    }
                    other => other,
                })
                .collect()
        })
        .collect()
}

/// Runs each query through kseek and DuckDB and compares the rows.
fn same_answers(tables: &[(&str, &[Record])], queries: &[String], args: &[&str]) {
    let expected = duckdb(tables, queries);
    for (query, want) in queries.iter().zip(expected) {
        let got = kseek_rows(query, args);
        assert_eq!(got, want, "{query} {args:?}");
    }
}

/// A CreateTime topic of three partitions, a record a minute from 09:30 to 10:29 in each,
/// every fifth one seven minutes late (its timestamp before the records before it), keys
/// `k0` to `k3` (every ninth null), values `{"n":i}`.
fn orders(broker: &support::Broker) -> (String, Vec<Record>) {
    let topic = broker.new_topic("sql-orders", 3, &[]);
    let input: Vec<Input> = (0..60i64)
        .flat_map(|i| {
            (0..3).map(move |p| {
                let late = if i % 5 == 2 { 7 * MINUTE } else { 0 };
                let mut r = NewRecord::new()
                    .partition(p)
                    .timestamp(TEN - 30 * MINUTE + i * MINUTE - late + i64::from(p))
                    .value(format!("{{\"n\":{i}}}"));
                if i % 9 != 0 {
                    r = r.key(format!("k{}", i % 4));
                }
                r.into()
            })
        })
        .collect();
    let stored = broker.produce(&topic, &input);
    assert_eq!(stored.len(), 180);
    let read = broker.consume(&topic);
    (topic, read)
}

#[test]
fn queries_answer_what_duckdb_answers_over_the_java_consumers_records() {
    let broker = support::broker();
    let (orders, orders_read) = orders(broker);
    let customers = broker.new_topic("sql-customers", 1, &[]);
    let input: Vec<Input> = (0..4)
        .map(|i| {
            NewRecord::new()
                .key(format!("k{i}"))
                .value(format!("customer {i}"))
                .timestamp(TEN)
                .into()
        })
        .collect();
    broker.produce(&customers, &input);
    let customers_read = broker.consume(&customers);
    let t = |h: i64, m: i64| iso(TEN + (h - 10) * 60 * MINUTE + m * MINUTE);
    let o = &orders;
    let queries: Vec<String> = vec![
        format!(
            r#"SELECT partition, count(*) AS n FROM "{o}" GROUP BY partition ORDER BY partition"#
        ),
        // A time window: lower bound by ListOffsets, the upper read to the end (CreateTime).
        format!(
            r#"SELECT partition, "offset" FROM "{o}" WHERE "timestamp" >= '{}' AND "timestamp" < '{}' ORDER BY partition, "offset""#,
            t(10, 0),
            t(10, 5)
        ),
        // Partitions and offsets.
        format!(
            r#"SELECT partition, "offset" FROM "{o}" WHERE partition IN (0, 2) AND "offset" BETWEEN 3 AND 7 ORDER BY partition, "offset""#
        ),
        format!(
            r#"SELECT partition, "offset" FROM "{o}" WHERE "offset" > 55 OR partition = 1 AND "offset" < 2 ORDER BY partition, "offset""#
        ),
        // Two windows OR'ed, on one partition.
        format!(
            r#"SELECT "offset" FROM "{o}" WHERE ("timestamp" < '{}' OR "timestamp" >= '{}') AND partition = 1 ORDER BY "offset""#,
            t(9, 33),
            t(10, 27)
        ),
        // Group by key in a window.
        format!(
            r#"SELECT CAST(key AS VARCHAR) AS k, count(*) AS n, min("offset") AS first FROM "{o}" WHERE "timestamp" BETWEEN '{}' AND '{}' GROUP BY CAST(key AS VARCHAR) ORDER BY k NULLS FIRST"#,
            t(9, 50),
            t(10, 10)
        ),
        // A join of two topics.
        format!(
            r#"SELECT CAST(c.value AS VARCHAR) AS customer, count(*) AS n FROM "{o}" o JOIN "{customers}" c ON o.key = c.key WHERE o."timestamp" >= '{}' GROUP BY CAST(c.value AS VARCHAR) ORDER BY customer"#,
            t(10, 0)
        ),
        // An empty window, and one past the end.
        format!(
            r#"SELECT count(*) AS n FROM "{o}" WHERE "timestamp" >= '2020-01-01T00:00:00Z' AND "timestamp" < '2020-01-02T00:00:00Z'"#
        ),
        format!(
            r#"SELECT partition, "offset" FROM "{o}" WHERE "timestamp" >= '2030-01-01T00:00:00Z' ORDER BY partition"#
        ),
        // LIMIT with nothing to filter, after an ORDER BY so the rows are the same.
        format!(r#"SELECT "offset" FROM "{o}" WHERE partition = 2 ORDER BY "offset" LIMIT 4"#),
    ];
    let tables: [(&str, &[Record]); 2] = [
        (orders.as_str(), &orders_read),
        (customers.as_str(), &customers_read),
    ];
    same_answers(&tables, &queries, &[]);
    // The same answers when the upper time bound is pushed to upper + lateness: the late
    // records (7 minutes) are inside a 10-minute allowance.
    same_answers(&tables, &queries[1..2], &["--max-lateness", "10m"]);
}

#[test]
fn a_logappendtime_window_is_read_by_its_offsets_and_matches_duckdb() {
    let broker = support::broker();
    let topic = broker.new_topic(
        "sql-appended",
        2,
        &[("message.timestamp.type", "LogAppendTime")],
    );
    // Four producer runs, so the broker's append times differ between them.
    let mut stored: Vec<Record> = Vec::new();
    for run in 0..4 {
        let input: Vec<Input> = (0..20)
            .map(|i| {
                NewRecord::new()
                    .partition(i % 2)
                    .key(format!("r{run}"))
                    .value(format!("{run}-{i}"))
                    .into()
            })
            .collect();
        stored.extend(broker.produce(&topic, &input));
    }
    let read = broker.consume(&topic);
    let mut times: Vec<i64> = stored.iter().map(|r| r.timestamp).collect();
    times.sort_unstable();
    let (lo, hi) = (times[20], times[60]);
    assert!(lo < hi, "the producer runs got distinct append times");
    let query = format!(
        r#"SELECT partition, "offset", CAST(value AS VARCHAR) AS v FROM "{topic}" WHERE "timestamp" >= '{}' AND "timestamp" < '{}' ORDER BY partition, "offset""#,
        iso(lo),
        iso(hi)
    );
    same_answers(
        &[(topic.as_str(), &read)],
        std::slice::from_ref(&query),
        &[],
    );
    // EXPLAIN: both bounds pushed (LogAppendTime), no notice, and only the window's offsets.
    let (code, out, err) = kseek_sql(&["--output-format", "csv", &format!("EXPLAIN {query}")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("max_lateness"), "{err}");
    let want = stored
        .iter()
        .filter(|r| r.timestamp >= lo && r.timestamp < hi)
        .count();
    assert!(
        out.contains(&format!("records={want}")),
        "the plan reads exactly the window's {want} records: {out}"
    );
}

#[test]
fn transactions_read_committed_and_uncommitted_match_the_java_consumer() {
    let broker = support::broker();
    let topic = support::topic_with_an_aborted_transaction(broker, "sql-txn");
    let committed = broker.consume_with(
        &topic,
        &ConsumeOptions {
            isolation: Isolation::ReadCommitted,
            ..ConsumeOptions::default()
        },
    );
    let uncommitted = broker.consume(&topic);
    assert!(committed.len() < uncommitted.len());
    let queries = vec![
        format!(
            r#"SELECT partition, "offset", CAST(value AS VARCHAR) AS v FROM "{topic}" ORDER BY partition, "offset""#
        ),
        format!(
            r#"SELECT partition, count(*) AS n FROM "{topic}" WHERE "timestamp" >= '{}' AND "offset" >= 2 GROUP BY partition ORDER BY partition"#,
            iso(support::TEN + 9_000)
        ),
    ];
    same_answers(
        &[(topic.as_str(), &committed)],
        &queries,
        &["--isolation", "read_committed"],
    );
    same_answers(&[(topic.as_str(), &uncommitted)], &queries, &[]);
    // The table option does the same as the flag.
    let create = format!(
        r#"CREATE EXTERNAL TABLE txn STORED AS KAFKA LOCATION '{topic}' OPTIONS ('isolation' 'read_committed'); SELECT count(*) AS n FROM txn"#
    );
    assert_eq!(
        kseek_rows(&create, &[]),
        vec![json!({"n": committed.len()})]
    );
}

#[test]
fn explain_shows_the_ranges_without_reading_and_notes_what_was_not_pushed() {
    let broker = support::broker();
    let (orders, _) = orders(broker);
    let window = format!(
        r#"SELECT count(*) FROM "{orders}" WHERE "timestamp" >= '{}' AND "timestamp" < '{}' AND partition = 1"#,
        iso(TEN),
        iso(TEN + 5 * MINUTE)
    );
    // CreateTime without a lateness: read to the end, and a notice naming the option.
    let (code, out, err) = kseek_sql(&["--output-format", "csv", &format!("EXPLAIN {window}")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("max_lateness"), "{err}");
    // Partition 1 only; from 10:00 (offset 30; the late record at offset 32 is 09:55) to the end.
    assert!(out.contains("ranges=[1: 30..60 (30)]"), "{out}");
    assert!(
        out.contains("pushed=[partition IN (1) AND timestamp >= 2026-01-01T10:00:00Z AND timestamp < 2026-01-01T10:05:00Z]"),
        "{out}"
    );
    // With a lateness of 10 minutes, to the first offset at 10:15 (45).
    let (code, out, err) = kseek_sql(&[
        "--output-format",
        "csv",
        "--max-lateness",
        "10m",
        &format!("EXPLAIN {window}"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("max_lateness"), "{err}");
    assert!(out.contains("ranges=[1: 30..45 (15)]"), "{out}");
}

#[test]
fn bad_queries_fail_with_one_line_and_exit_2() {
    let broker = support::broker();
    let (orders, _) = orders(broker);
    for (query, args, why) in [
        ("SELEC 1", vec![], "parsing the SQL"),
        (
            "SELECT * FROM no_such_topic_here",
            vec![],
            "no_such_topic_here",
        ),
        (&*format!(r#"SELECT nope FROM "{orders}""#), vec![], "nope"),
        (
            &*format!(r#"SELECT count(*) FROM "{orders}""#),
            vec!["--max-records", "100"],
            "--max-records 100",
        ),
        (
            &*format!(
                r#"CREATE EXTERNAL TABLE t STORED AS KAFKA LOCATION '{orders}' OPTIONS ('colour' 'red'); SELECT 1"#
            ),
            vec![],
            "unknown table option",
        ),
    ] {
        let mut all = vec![query];
        all.extend(args);
        let (code, _, err) = kseek_sql(&all);
        assert_eq!(code, Some(2), "{query}: {err}");
        assert!(err.contains(why), "{query}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{query}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_five_minute_window_of_a_two_hour_topic_fetches_about_the_windows_bytes() {
    let broker = support::broker();
    // Two hours, a record every 2 s in each of three partitions, 500-byte values.
    let topic = broker.new_topic("sql-hours", 3, &[]);
    let start = TEN - 60 * MINUTE;
    let input: Vec<Input> = (0..3_600i64)
        .flat_map(|i| {
            (0..3).map(move |p| {
                NewRecord::new()
                    .partition(p)
                    .timestamp(start + i * 2_000)
                    .value(format!("{i:0>500}"))
                    .into()
            })
        })
        .collect();
    let stored = broker.produce(&topic, &input);
    let in_window = stored
        .iter()
        .filter(|r| r.timestamp >= TEN && r.timestamp < TEN + 5 * MINUTE)
        .count() as u64;
    let client = kseek::Client::connect([broker.bootstrap()]).await.unwrap();
    let mut config = kseek_sql::SqlConfig::default();
    const PARTITION_MAX: i32 = 16 * 1024;
    config.read = kseek::ReadOptions::default().partition_max_bytes(PARTITION_MAX);
    config.defaults =
        kseek_sql::TableOptions::default().max_lateness(Some(std::time::Duration::from_secs(60)));
    let count = |kafka: kseek_sql::Kafka, filter: String| {
        let topic = topic.clone();
        async move {
            let ctx = kseek_sql::datafusion::prelude::SessionContext::new();
            kafka.register(&ctx).await.unwrap();
            let batches = ctx
                .sql(&format!(r#"SELECT count(*) AS n FROM "{topic}" {filter}"#))
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            let n = batches[0]
                .column(0)
                .as_any()
                .downcast_ref::<kseek_sql::datafusion::arrow::array::Int64Array>()
                .unwrap()
                .value(0);
            (n as u64, kafka.fetched_bytes())
        }
    };
    let full = kseek_sql::Kafka::new(client.clone(), config.clone());
    let (all, full_bytes) = count(full, String::new()).await;
    assert_eq!(all, stored.len() as u64);
    let windowed = kseek_sql::Kafka::new(client, config);
    let (n, window_bytes) = count(
        windowed,
        format!(
            r#"WHERE "timestamp" >= '{}' AND "timestamp" < '{}'"#,
            iso(TEN),
            iso(TEN + 5 * MINUTE)
        ),
    )
    .await;
    assert_eq!(n, in_window);
    // The window's share of the log (plus the minute of lateness), and one fetch per partition
    // (a fetch returns at least one whole batch, of at most the producer's 16 KiB).
    let share = full_bytes * (in_window + 3 * 30) / all;
    let bound = share + 3 * 2 * PARTITION_MAX as u64;
    assert!(
        window_bytes <= bound,
        "fetched {window_bytes} bytes for the window; its share is {share}, the bound {bound} (full scan {full_bytes})"
    );
    assert!(
        window_bytes * 10 < full_bytes,
        "{window_bytes} vs {full_bytes}"
    );
}

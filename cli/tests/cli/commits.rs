//! Group commits: read with a group then continue from it, commit to a time, and what is
//! committed when stdout closes or a record is damaged.

use super::*;

/// The `committed --format json` answer: partition -> (committed, end, lag).
fn committed(broker: &Broker, group: &str, topic: &str) -> BTreeMap<i64, (i64, i64, i64)> {
    let r = kseek(
        broker,
        &[
            "committed",
            "--group",
            group,
            "--topic",
            topic,
            "--format",
            "json",
        ],
    )
    .ok();
    r.json_lines()
        .into_iter()
        .map(|v| {
            assert_eq!(v["topic"], topic, "{}", r.what);
            let int = |k: &str| {
                v[k].as_i64()
                    .unwrap_or_else(|| panic!("{}: no integer {k} in {v}", r.what))
            };
            (int("partition"), (int("committed"), int("end"), int("lag")))
        })
        .collect()
}

/// Asserts `group` has no committed offset for the single partition of `topic`; returns that
/// partition's `committed --format json` row.
fn assert_nothing_committed(broker: &Broker, group: &str, topic: &str) -> Value {
    let r = kseek(
        broker,
        &[
            "committed",
            "--group",
            group,
            "--topic",
            topic,
            "--format",
            "json",
        ],
    )
    .ok();
    let rows = r.json_lines();
    assert_eq!(rows.len(), 1, "{}", r.what);
    assert_eq!(rows[0]["committed"], Value::Null, "{}: {}", r.what, rows[0]);
    rows[0].clone()
}

/// [`committed`]'s expected answer for the seeded topic and per-partition commits.
fn committed_want(s: &Seeded, offsets: [i64; 3]) -> BTreeMap<i64, (i64, i64, i64)> {
    (0..PARTITIONS)
        .map(|p| {
            let (c, end) = (offsets[p as usize], s.end(p));
            (i64::from(p), (c, end, end - c))
        })
        .collect()
}

#[test]
fn read_with_group_commit_then_committed_then_read_from_group_continues_exactly() {
    for broker in support::brokers() {
        let s = seeded(broker);
        let t = s.topic.as_str();
        let group = support::unique_name("cli-group");
        let g = group.as_str();

        let first = read(
            broker,
            t,
            &["--to", "2026-01-01T10:05:00Z", "--group", g, "--commit"],
        );
        assert_json_records(&first, t, &s.window(0, at(5, 0)));
        assert_eq!(committed(broker, g, t), committed_want(s, [5, 5, 5]));
        // Kafka's own admin client sees the same commits.
        let java: Vec<(i32, Option<i64>)> = broker
            .describe_group(g)
            .into_iter()
            .map(|c| (c.partition, c.offset))
            .collect();
        assert_eq!(java, vec![(0, Some(5)), (1, Some(5)), (2, Some(5))]);

        let second = read(
            broker,
            t,
            &[
                "--from",
                "group",
                "--group",
                g,
                "--to",
                "2026-01-01T10:10:00Z",
                "--commit",
            ],
        );
        assert_json_records(&second, t, &s.window(at(5, 0), at(10, 0)));
        assert_eq!(committed(broker, g, t), committed_want(s, [10, 10, 10]));

        // With --count only what was printed is committed.
        let third = read(
            broker,
            t,
            &[
                "--from",
                "group",
                "--group",
                g,
                "--partition",
                "1",
                "--count",
                "4",
                "--commit",
            ],
        );
        assert_json_records(&third, t, &s.offsets(1, 10, 14));
        assert_eq!(committed(broker, g, t), committed_want(s, [10, 14, 10]));

        // Without --commit nothing moves.
        let fourth = read(broker, t, &["--from", "group", "--group", g]);
        let want: Vec<&Record> = [
            s.offsets(0, 10, 99),
            s.offsets(1, 14, 99),
            s.offsets(2, 10, 99),
        ]
        .concat();
        assert_json_records(&fourth, t, &want);
        assert_eq!(committed(broker, g, t), committed_want(s, [10, 14, 10]));
    }
}

#[test]
fn commit_to_a_time_sets_the_group_without_reading_and_committed_shows_it() {
    let broker = support::broker();
    let s = seeded(broker);
    let t = s.topic.as_str();
    let group = support::unique_name("cli-commit");
    let g = group.as_str();

    // 10:12:00 is exactly partition 0's record 12; partitions 1 and 2 also restart at 12.
    let r = commit(broker, g, t, &["--to", "2026-01-01T10:12:00Z"]);
    assert_eq!(commit_lines(&r, t), vec![(0, 12), (1, 12), (2, 12)]);
    assert_eq!(committed(broker, g, t), committed_want(s, [12, 12, 12]));

    // --dry-run prints without committing.
    let r = commit(broker, g, t, &["--to", "2026-01-01T10:03:30Z", "--dry-run"]);
    assert_eq!(commit_lines(&r, t), vec![(0, 4), (1, 4), (2, 4)]);
    assert_eq!(committed(broker, g, t), committed_want(s, [12, 12, 12]));

    // "Restart partition 2 from midnight".
    let r = commit(broker, g, t, &["--partition", "2", "--to", "2026-01-01"]);
    assert_eq!(commit_lines(&r, t), vec![(2, 0)]);
    assert_eq!(committed(broker, g, t), committed_want(s, [12, 12, 0]));

    // The table: a header and one row per partition.
    let r = kseek(broker, &["committed", "--group", g, "--topic", t]).ok();
    let rows: Vec<Vec<String>> = r
        .lines()
        .iter()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    let want: Vec<Vec<String>> = [
        vec!["TOPIC", "PARTITION", "COMMITTED", "END", "LAG"]
            .into_iter()
            .map(str::to_string)
            .collect(),
        row(&[t, "0", "12", "22", "10"]),
        row(&[t, "1", "12", "20", "8"]),
        row(&[t, "2", "0", "20", "20"]),
    ]
    .to_vec();
    assert_eq!(rows, want, "{}", r.what);

    // A read from the group starts there.
    let r = read(
        broker,
        t,
        &["--from", "group", "--group", g, "--to", "offset:13"],
    );
    assert_json_records(
        &r,
        t,
        &[
            s.offsets(0, 12, 13),
            s.offsets(1, 12, 13),
            s.offsets(2, 0, 13),
        ]
        .concat(),
    );
}

/// `kseek commit --group <group> --topic <topic> <args>`, which must succeed.
fn commit(broker: &Broker, group: &str, topic: &str, args: &[&str]) -> Run {
    let mut all = vec!["commit", "--group", group, "--topic", topic];
    all.extend(args);
    kseek(broker, &all).ok()
}

/// The `(partition, offset)` of the `topic partition offset` lines `commit` printed.
fn commit_lines(r: &Run, topic: &str) -> Vec<(i32, i64)> {
    let lines: Vec<(i32, i64)> = r
        .lines()
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|t| t.first() == Some(&topic))
        .map(|t| {
            assert_eq!(t.len(), 3, "{}: `topic partition offset`: {t:?}", r.what);
            (
                t[1].parse().expect("partition"),
                t[2].parse().expect("offset"),
            )
        })
        .collect();
    lines
}

/// Writes `n` records of `value` to partition 0 of `topic`, at `at(0, 0)` + their offset in ms.
fn produce_values(broker: &Broker, topic: &str, n: i64, value: &str) {
    let input: Vec<support::Input> = (0..n)
        .map(|i| {
            NewRecord::new()
                .partition(0)
                .timestamp(at(0, 0) + i)
                .value(value)
                .into()
        })
        .collect();
    broker.produce(topic, &input);
}

#[test]
fn a_closed_stdout_stops_the_read_quietly_with_exit_0_and_no_commit() {
    let broker = support::broker();
    // 1000 records of 200 bytes: more than a pipe holds, so kseek writes into a closed pipe.
    let topic = broker.new_topic("cli-pipe", 1, &[]);
    produce_values(broker, &topic, 1000, &"v".repeat(200));
    let group = support::unique_name("cli-pipe-group");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kseek"))
        .args(["read", "--topic", &topic, "--group", &group, "--commit"])
        .args(["--bootstrap", broker.bootstrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running kseek");
    // Read one line, then close the pipe (like `kseek read ... | head -1`).
    let mut stdout = child.stdout.take().expect("piped stdout");
    let first = support::read_line(&mut stdout);
    drop(stdout);
    let out = child.wait_with_output().expect("waiting for kseek");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("kseek:"), "no error line: {stderr}");
    let first: Value = serde_json::from_slice(&first).expect("a JSON line");
    assert_eq!(first["offset"], 0);
    let row = assert_nothing_committed(broker, &group, &topic);
    assert_eq!(row["end"], 1000, "{row}");
}

/// Records damaged between the broker and kseek: the records before the damaged batch are
/// printed, then exit 4 with one line naming the topic, partition and offset; `--commit`
/// commits up to the last record printed (the damaged batch's first offset), so the group
/// neither repeats nor skips a record.
#[test]
fn records_damaged_on_the_way_exit_4_with_one_line_and_commit_what_was_printed() {
    let broker = support::broker();
    let topic = broker.new_topic("cli-corrupt", 1, &[]);
    let value = "x".repeat(1000);
    produce_values(broker, &topic, 50, &value);
    let group = support::unique_name("cli-corrupt-group");

    let proxy = support::Proxy::start(broker, &["--corrupt-fetch"]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
    cmd.args(["read", "--topic", &topic, "--group", &group, "--commit"])
        .args(["--bootstrap", &proxy.bootstrap])
        .env_remove("KSEEK_BOOTSTRAP");
    let r = run(cmd);
    // The commit's note, then the error.
    let (notes, line) = r.error_after_notes(4);
    assert_eq!(
        notes,
        [format!(
            "committed offsets of group {group:?} for 1 partition (up to the last record printed before the error)"
        )],
        "{}",
        r.what
    );
    assert!(
        line.contains(&format!("{topic:?}")) || line.contains(&topic),
        "{}: the topic is named: {line}",
        r.what
    );
    assert!(line.contains("partition 0"), "{}: {line}", r.what);
    assert!(line.contains("CRC mismatch"), "{}: {line}", r.what);
    // The offset of the damaged batch: the fetch's last one, somewhere in 0..50.
    let offset: i64 = line
        .split("offset ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}: no offset named: {line}", r.what));
    assert!((0..50).contains(&offset), "{}: {line}", r.what);
    // Exactly the records before the damaged batch are printed, then the read stops.
    let printed: Vec<(i64, i64, String)> = r
        .json_lines()
        .iter()
        .map(|j| {
            (
                j["offset"].as_i64().unwrap(),
                j["timestamp"].as_i64().unwrap(),
                j["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(i64, i64, String)> = (0..offset)
        .map(|o| (o, at(0, 0) + o, value.clone()))
        .collect();
    assert_eq!(printed, want, "{}", r.what);
    drop(proxy);

    // Checked past the proxy, by Kafka's own admin client: the group restarts at the damaged
    // batch, the first record not printed.
    let java: Vec<(i32, Option<i64>)> = broker
        .describe_group(&group)
        .into_iter()
        .map(|c| (c.partition, c.offset))
        .collect();
    assert_eq!(java, vec![(0, Some(offset))], "{}", r.what);
}

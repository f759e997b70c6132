//! `kseek offsets` and `kseek metadata` against the Java client and the broker.

use super::*;

#[test]
fn offsets_json_matches_the_java_clients_list_offsets_and_the_table_agrees() {
    let broker = support::broker();
    let s = seeded(broker);
    let t = s.topic.as_str();
    let (from, to) = (at(5, 1), at(10, 0));
    let java_from =
        broker.list_offsets(t, OffsetQuery::Timestamp(from), Isolation::ReadUncommitted);
    let java_to = broker.list_offsets(t, OffsetQuery::Timestamp(to), Isolation::ReadUncommitted);
    // 10:05:01 is partition 1's record 5, so partition 0 starts at 6 and partition 2 at 5.
    let starts: Vec<i64> = java_from.iter().map(|o| o.offset).collect();
    let ends: Vec<i64> = java_to.iter().map(|o| o.offset).collect();
    assert_eq!(
        (starts.as_slice(), ends.as_slice()),
        ([6, 5, 5].as_slice(), [10, 10, 10].as_slice())
    );

    let args = [
        "offsets",
        "--topic",
        t,
        "--from",
        &rfc3339(from),
        "--to",
        &rfc3339(to),
        "--format",
        "json",
    ];
    let r = kseek(broker, &args).ok();
    let want: Vec<Value> = (0..3)
        .map(|p| {
            serde_json::json!({
                "topic": t, "partition": p, "start": starts[p], "end": ends[p],
                "records": ends[p] - starts[p],
            })
        })
        .collect();
    assert_eq!(r.json_lines(), want, "{}", r.what);

    // The bootstrap from the environment.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
    cmd.args(args).env("KSEEK_BOOTSTRAP", broker.bootstrap());
    assert_eq!(run(cmd).ok().json_lines(), want, "KSEEK_BOOTSTRAP");

    // The table: header, a row per partition, a total line.
    let r = kseek(broker, &args[..7]).ok();
    let lines = r.lines();
    let rows: Vec<Vec<String>> = lines
        .iter()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 5, "{}:\n{}", r.what, lines.join("\n"));
    assert_eq!(
        rows[0],
        row(&["TOPIC", "PARTITION", "START", "END", "RECORDS"])
    );
    assert_eq!(rows[1], row(&[t, "0", "6", "10", "4"]));
    assert_eq!(rows[2], row(&[t, "1", "5", "10", "5"]));
    assert_eq!(rows[3], row(&[t, "2", "5", "10", "5"]));
    assert_eq!(
        rows[4].last().map(String::as_str),
        Some("14"),
        "the total line ends with the total: {}",
        lines[4]
    );

    // A start after the last record is the end: nothing to read, no -1.
    let r = kseek(
        broker,
        &[
            "offsets",
            "--topic",
            t,
            "--from",
            "2027-01-01",
            "--format",
            "json",
        ],
    )
    .ok();
    let want: Vec<Value> = (0..3)
        .map(|p| {
            let end = s.end(p);
            serde_json::json!({"topic": t, "partition": p, "start": end, "end": end, "records": 0})
        })
        .collect();
    assert_eq!(r.json_lines(), want, "{}", r.what);
}

#[test]
fn metadata_json_lists_the_broker_the_topic_its_partitions_and_leaders() {
    let broker = support::broker();
    let s = seeded(broker);
    let r = kseek(
        broker,
        &["metadata", "--topic", &s.topic, "--format", "json"],
    )
    .ok();
    let doc: Value = serde_json::from_slice(&r.stdout)
        .unwrap_or_else(|e| panic!("{}: not one JSON document ({e})", r.what));
    // Single-node cluster: one broker, at the bootstrap address, leading every partition.
    let brokers = doc["brokers"].as_array().expect("a brokers array");
    assert_eq!(brokers.len(), 1, "{doc}");
    let address = format!(
        "{}:{}",
        brokers[0]["host"].as_str().unwrap_or("?"),
        brokers[0]["port"]
    );
    assert_eq!(address, broker.bootstrap(), "{doc}");
    let id = brokers[0]["id"].as_i64().expect("a broker id");
    let topics = doc["topics"].as_array().expect("a topics array");
    assert_eq!(topics.len(), 1, "only the topic asked for: {doc}");
    assert_eq!(topics[0]["topic"], s.topic.as_str(), "{doc}");
    let partitions = topics[0]["partitions"]
        .as_array()
        .expect("a partitions array");
    assert_eq!(partitions.len(), 3, "{doc}");
    for (i, p) in partitions.iter().enumerate() {
        assert_eq!(p["partition"].as_i64(), Some(i as i64), "{doc}");
        assert_eq!(p["leader"].as_i64(), Some(id), "{doc}");
        assert!(p["leader_epoch"].as_i64().is_some_and(|e| e >= 0), "{doc}");
        assert_eq!(p["error"], Value::Null, "{doc}");
    }

    // The table names the topic's partitions too.
    let r = kseek(broker, &["metadata", "--topic", &s.topic]).ok();
    let rows = r
        .lines()
        .iter()
        .filter(|l| l.split_whitespace().next() == Some(s.topic.as_str()))
        .count();
    assert_eq!(rows, 3, "{}:\n{}", r.what, r.lines().join("\n"));
}

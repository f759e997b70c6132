//! Helpers for integration tests against a real Apache Kafka.
//!
//! A test gets a broker from [`broker`] (Kafka 4.4), [`broker_39`] (Kafka 3.9) or
//! [`brokers`] (both, for tests that must pass on each version), or [`broker_28`] (Kafka 2.8,
//! for the older protocol versions). When the test runner (`tests/run`) has started them,
//! their addresses come from `KSEEK_BOOTSTRAP`, `KSEEK_BOOTSTRAP_39` and `KSEEK_BOOTSTRAP_28`;
//! otherwise the first test that asks starts one through
//! `tests/kafka/broker` with a watchdog that stops it when the test binary exits.
//! [`Broker::start`] makes a private cluster (say three nodes) that stops on drop.
//! [`secure`] has the secured broker (TLS, SASL, ACLs) and the client config files for it.
//!
//! Data is written and read by Kafka's own Java client (`tests/kafka/ktool`), the
//! independent oracle: [`Broker::produce`] returns exactly what the broker stored
//! (partition, offset, timestamp) and [`Broker::consume`] what a Java consumer reads.
//!
//! Use it from a test file with `mod support;`.

#![allow(dead_code)]

pub(crate) mod proxy;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

pub(crate) mod nodes;
mod records;
pub(crate) mod secure;

pub(crate) use records::*;

/// Runs the command line `bin` (a test's `env!("CARGO_BIN_EXE_kseek")`) with `args` and the
/// shared Kafka 4.4 broker's `--bootstrap`, stdin closed and `KSEEK_BOOTSTRAP` unset: (exit
/// code, stdout, stderr).
pub(crate) fn run_kseek(bin: &str, args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let out = Command::new(bin)
        .args(args)
        .args(["--bootstrap", broker().bootstrap()])
        .env_remove("KSEEK_BOOTSTRAP")
        .stdin(Stdio::null())
        .output()
        .expect("running kseek");
    (
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tests/golden/proxy.py` in front of a single-node `broker`, with fault options (see the
/// script: `--corrupt-fetch`, `--fail API:CODE:N`). Clients given [`Proxy::bootstrap`] reach
/// the broker only through it (it rewrites the addresses in Metadata and FindCoordinator
/// answers). Killed on drop.
pub(crate) struct Proxy {
    child: std::process::Child,
    dir: PathBuf,
    /// The proxy's address.
    pub(crate) bootstrap: String,
}

impl Proxy {
    /// Starts the proxy with `options` and waits until it listens.
    pub(crate) fn start(broker: &Broker, options: &[&str]) -> Proxy {
        let dir = std::env::temp_dir().join(unique_name("kseek-proxy"));
        let mut child = Command::new("python3")
            .arg(repo_root().join("tests/golden/proxy.py"))
            .args(["0", broker.bootstrap()])
            .arg(&dir)
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("running tests/golden/proxy.py");
        // The proxy prints "PROXY_READY <port>" once it listens.
        let mut stdout = child.stdout.take().expect("piped stdout");
        let line = String::from_utf8(read_line(&mut stdout)).expect("UTF-8");
        let port = line
            .trim()
            .strip_prefix("PROXY_READY ")
            .unwrap_or_else(|| panic!("proxy said {line:?}"));
        Proxy {
            child,
            dir,
            bootstrap: format!("127.0.0.1:{port}"),
        }
    }

    /// The faults `--fail` injected so far, one `"<api> <code>"` each, in order.
    pub(crate) fn injected(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("injected"))
            .map(|s| s.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads one line (through its `\n`) byte by byte, so nothing after it is consumed: the rest
/// stays in the pipe for the writer to block on or to find closed.
pub(crate) fn read_line(from: &mut impl Read) -> Vec<u8> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.last() != Some(&b'\n') {
        assert_eq!(
            from.read(&mut byte).expect("reading a line"),
            1,
            "EOF before a line"
        );
        line.push(byte[0]);
    }
    line
}

/// `(partition, start, end)` of every partition of a plan.
pub(crate) fn ranges(plan: &kseek::Plan) -> Vec<(i32, i64, Option<i64>)> {
    plan.partitions
        .iter()
        .map(|p| (p.partition, p.start, p.end))
        .collect()
}

/// A Kafka release the tests run against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KafkaVersion {
    /// Apache Kafka 4.4.0, the default.
    V4_4,
    /// Apache Kafka 3.9.2, the last 3.x line.
    V3_9,
    /// Apache Kafka 2.8.2 in its early-access KRaft mode: the oldest release the harness runs,
    /// for the versions before topic ids and batched coordinator lookups (Fetch 12, Metadata
    /// 11, ListOffsets 6, OffsetCommit 8, OffsetFetch 7, FindCoordinator 3). No transactions.
    V2_8,
}

impl KafkaVersion {
    /// The `--version` argument of `tests/kafka/broker`.
    pub(crate) fn arg(self) -> &'static str {
        match self {
            KafkaVersion::V4_4 => "4.4",
            KafkaVersion::V3_9 => "3.9",
            KafkaVersion::V2_8 => "2.8",
        }
    }

    /// The environment variable that holds a running broker of this version.
    pub(crate) fn env_var(self) -> &'static str {
        match self {
            KafkaVersion::V4_4 => "KSEEK_BOOTSTRAP",
            KafkaVersion::V3_9 => "KSEEK_BOOTSTRAP_39",
            KafkaVersion::V2_8 => "KSEEK_BOOTSTRAP_28",
        }
    }
}

/// The shared Kafka 4.4 broker of this test binary.
pub(crate) fn broker() -> &'static Broker {
    static B: OnceLock<Broker> = OnceLock::new();
    B.get_or_init(|| Broker::shared(KafkaVersion::V4_4))
}

/// The shared Kafka 3.9 broker of this test binary.
pub(crate) fn broker_39() -> &'static Broker {
    static B: OnceLock<Broker> = OnceLock::new();
    B.get_or_init(|| Broker::shared(KafkaVersion::V3_9))
}

/// The shared Kafka 2.8 broker of this test binary.
pub(crate) fn broker_28() -> &'static Broker {
    static B: OnceLock<Broker> = OnceLock::new();
    B.get_or_init(|| Broker::shared(KafkaVersion::V2_8))
}

/// Every shared broker, newest first: for tests that must pass on every version the tests run.
pub(crate) fn brokers() -> [&'static Broker; 3] {
    [broker(), broker_39(), broker_28()]
}

/// The shared brokers that support transactions (Kafka 2.8 in KRaft mode does not), newest
/// first.
pub(crate) fn brokers_with_transactions() -> [&'static Broker; 2] {
    [broker(), broker_39()]
}

/// A name no other test (or earlier run against the same broker) uses: `<prefix>-<unique>`.
pub(crate) fn unique_name(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        nanos % 1_000_000_000
    )
}

/// A running Kafka cluster. One started by [`Broker::start`] is stopped on drop.
#[derive(Debug)]
pub(crate) struct Broker {
    version: KafkaVersion,
    bootstrap: String,
    /// The state directory of a cluster this process started, stopped on drop.
    owned_dir: Option<PathBuf>,
}

impl Broker {
    /// Moves `topic`/`partition` to `to` with Kafka's ReassignPartitionsCommand and waits until
    /// the reassignment is complete (polling `--verify`).
    pub(crate) fn reassign(&self, topic: &str, partition: i32, to: i32) {
        self.reassign_replicas(topic, partition, &[to]);
    }

    /// Deletes the records of `topic`/`partition` below `offset` with Kafka's own
    /// DeleteRecordsCommand (the Admin API's deleteRecords): the log start moves to `offset`.
    pub(crate) fn delete_records(&self, topic: &str, partition: i32, offset: i64) {
        let file = std::env::temp_dir().join(unique_name("delete-records"));
        std::fs::write(
            &file,
            format!(
                "{{\"version\":1,\"partitions\":[{{\"topic\":\"{topic}\",\"partition\":{partition},\"offset\":{offset}}}]}}"
            ),
        )
        .unwrap();
        let out = self.kafka_tool(
            "org.apache.kafka.tools.DeleteRecordsCommand",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--offset-json-file",
                file.to_str().unwrap(),
            ],
        );
        let _ = std::fs::remove_file(file);
        assert!(
            out.contains(&format!("low_watermark: {offset}")),
            "delete-records: {out}"
        );
    }

    /// The broker of `version` named by its environment variable, or a new one.
    fn shared(version: KafkaVersion) -> Broker {
        match std::env::var(version.env_var()) {
            Ok(bootstrap) if !bootstrap.is_empty() => Broker {
                version,
                bootstrap,
                owned_dir: None,
            },
            _ => Broker::start(version, 1),
        }
    }

    /// Starts a private cluster of `nodes` combined broker+controller nodes.
    ///
    /// It stops when the value is dropped, or when this process exits (a watchdog
    /// watches the process id), whichever is first.
    pub(crate) fn start(version: KafkaVersion, nodes: u32) -> Broker {
        Broker::start_with_config(version, nodes, &[])
    }

    /// The bootstrap address list, `host:port[,host:port...]`.
    pub(crate) fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// The Kafka release of this cluster.
    pub(crate) fn version(&self) -> KafkaVersion {
        self.version
    }

    /// Creates `topic` with `partitions` partitions (replication factor 1) and the given
    /// topic configs, and waits until every partition has a leader.
    pub(crate) fn create_topic(&self, topic: &str, partitions: i32, configs: &[(&str, &str)]) {
        self.create_topic_replicated(topic, partitions, 1, configs);
    }

    /// [`Broker::create_topic`] with a replication factor (for multi-node clusters).
    pub(crate) fn create_topic_replicated(
        &self,
        topic: &str,
        partitions: i32,
        replication_factor: i16,
        configs: &[(&str, &str)],
    ) {
        let mut args = vec![
            "create-topic".to_string(),
            "--topic".into(),
            topic.into(),
            "--partitions".into(),
            partitions.to_string(),
            "--replication-factor".into(),
            replication_factor.to_string(),
        ];
        for (k, v) in configs {
            args.push("--config".into());
            args.push(format!("{k}={v}"));
        }
        self.ktool(&args, None);
    }

    /// Creates a topic with a unique name starting with `prefix` and returns the name.
    pub(crate) fn new_topic(
        &self,
        prefix: &str,
        partitions: i32,
        configs: &[(&str, &str)],
    ) -> String {
        let topic = unique_name(prefix);
        self.create_topic(&topic, partitions, configs);
        topic
    }

    /// Deletes `topic`.
    pub(crate) fn delete_topic(&self, topic: &str) {
        self.ktool(&["delete-topic", "--topic", topic], None);
    }

    /// Writes `input` with the Java producer (default settings, no compression) and
    /// returns every record as stored, in input order.
    pub(crate) fn produce(&self, topic: &str, input: &[Input]) -> Vec<Record> {
        self.produce_with(topic, &ProduceOptions::default(), input)
            .into_iter()
            .map(|w| w.record)
            .collect()
    }

    /// Writes `input` with the Java producer configured by `options`; returns every
    /// record as stored, in input order, with whether its transaction was aborted.
    pub(crate) fn produce_with(
        &self,
        topic: &str,
        options: &ProduceOptions,
        input: &[Input],
    ) -> Vec<Written> {
        let mut args = vec!["produce".to_string(), "--topic".into(), topic.into()];
        if let Some(c) = &options.compression {
            args.extend(["--compression".into(), c.clone()]);
        }
        if let Some(n) = options.batch_size {
            args.extend(["--batch-size".into(), n.to_string()]);
        }
        if let Some(n) = options.linger_ms {
            args.extend(["--linger-ms".into(), n.to_string()]);
        }
        if let Some(id) = &options.transactional_id {
            args.extend(["--transactional-id".into(), id.clone()]);
        }
        if let Some(acks) = &options.acks {
            args.extend(["--acks".into(), acks.clone()]);
        }
        if self.version == KafkaVersion::V2_8 {
            assert!(
                options.transactional_id.is_none(),
                "Kafka 2.8 in KRaft mode has no transactions: use a newer broker for this test"
            );
            // Nor producer ids, which idempotence (the Java producer's default) needs.
            args.extend(["--idempotence".into(), "false".into()]);
        }
        let mut stdin = String::new();
        for line in input {
            stdin.push_str(&line.to_json().to_string());
            stdin.push('\n');
        }
        let out = self.ktool(&args, Some(&stdin));
        json_lines(&out)
            .map(|v| Written {
                record: Record::from_json(&v),
                aborted: v.get("aborted").and_then(Value::as_bool).unwrap_or(false),
            })
            .collect()
    }

    /// Reads every partition of `topic` from the beginning up to its current end
    /// offset with the Java consumer (read_uncommitted), sorted by partition then offset.
    pub(crate) fn consume(&self, topic: &str) -> Vec<Record> {
        self.consume_with(topic, &ConsumeOptions::default())
    }

    /// Reads `topic` with the Java consumer configured by `options`.
    pub(crate) fn consume_with(&self, topic: &str, options: &ConsumeOptions) -> Vec<Record> {
        let mut args = vec!["consume".to_string(), "--topic".into(), topic.into()];
        args.extend(["--isolation".into(), options.isolation.arg().into()]);
        if let Some(g) = &options.group {
            args.extend(["--group".into(), g.clone()]);
        }
        for p in &options.partitions {
            args.extend(["--partition".into(), p.to_string()]);
        }
        if let Some(ts) = options.from_timestamp {
            args.extend(["--from-timestamp".into(), ts.to_string()]);
        }
        if let Some(n) = options.expect {
            args.extend(["--expect".into(), n.to_string()]);
        }
        if options.commit {
            args.push("--commit".into());
        }
        if let Some(ms) = options.timeout_ms {
            args.extend(["--timeout-ms".into(), ms.to_string()]);
        }
        json_lines(&self.ktool(&args, None))
            .map(|v| Record::from_json(&v))
            .collect()
    }

    /// Asks the broker (Admin ListOffsets) for the offset of every partition of `topic`
    /// matching `query`, sorted by partition.
    pub(crate) fn list_offsets(
        &self,
        topic: &str,
        query: OffsetQuery,
        isolation: Isolation,
    ) -> Vec<PartitionOffset> {
        let spec = match query {
            OffsetQuery::Earliest => "earliest".to_string(),
            OffsetQuery::Latest => "latest".to_string(),
            OffsetQuery::MaxTimestamp => "max-timestamp".to_string(),
            OffsetQuery::Timestamp(ms) => ms.to_string(),
        };
        let args = [
            "list-offsets",
            "--topic",
            topic,
            "--spec",
            &spec,
            "--isolation",
            isolation.arg(),
        ];
        json_lines(&self.ktool(&args, None))
            .map(|v| PartitionOffset {
                partition: int(&v, "partition") as i32,
                offset: int(&v, "offset"),
                timestamp: int(&v, "timestamp"),
            })
            .collect()
    }

    /// Commits `offset` for `topic`/`partition` in consumer group `group` (Admin API;
    /// the group must have no active members).
    pub(crate) fn commit(&self, group: &str, topic: &str, partition: i32, offset: i64) {
        let (p, o) = (partition.to_string(), offset.to_string());
        let args = [
            "commit",
            "--group",
            group,
            "--topic",
            topic,
            "--partition",
            &p,
            "--offset",
            &o,
        ];
        self.ktool(&args, None);
    }

    /// The committed offsets of `group`, like `kafka-consumer-groups --describe`,
    /// sorted by topic then partition.
    pub(crate) fn describe_group(&self, group: &str) -> Vec<CommittedOffset> {
        json_lines(&self.ktool(&["describe-group", "--group", group], None))
            .map(|v| CommittedOffset {
                topic: v["topic"].as_str().unwrap_or_default().to_string(),
                partition: int(&v, "partition") as i32,
                offset: v["offset"].as_i64(),
                metadata: v["metadata"].as_str().map(str::to_string),
                log_end_offset: int(&v, "log_end_offset"),
            })
            .collect()
    }

    /// Runs `tests/kafka/ktool <args> --bootstrap <this cluster>` with `stdin`,
    /// panics (showing its stderr) unless it succeeds, and returns its stdout.
    pub(crate) fn ktool<S: AsRef<str>>(&self, args: &[S], stdin: Option<&str>) -> String {
        let out = run_ktool(&self.bootstrap, args, stdin, None);
        let shown: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        assert!(
            out.status.success(),
            "ktool {} against {} failed ({}):\n{}",
            shown.join(" "),
            self.bootstrap,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("ktool prints UTF-8")
    }
}

/// Runs `tests/kafka/ktool <args> --bootstrap <bootstrap> [--command-config <config>]` with
/// `stdin` and returns its output, whatever its exit status.
pub(crate) fn run_ktool<S: AsRef<str>>(
    bootstrap: &str,
    args: &[S],
    stdin: Option<&str>,
    config: Option<&Path>,
) -> std::process::Output {
    let mut cmd = Command::new(kafka_script("ktool"));
    cmd.args(args.iter().map(AsRef::as_ref))
        .args(["--bootstrap", bootstrap]);
    if let Some(config) = config {
        cmd.arg("--command-config").arg(config);
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run tests/kafka/ktool: {e}"));
    // Feed stdin from another thread: the tool may write while we still write.
    let feeder = child.stdin.take().map(|mut pipe| {
        let input = stdin.unwrap_or_default().to_string();
        std::thread::spawn(move || pipe.write_all(input.as_bytes()))
    });
    let out = child
        .wait_with_output()
        .expect("waiting for tests/kafka/ktool");
    if let Some(feeder) = feeder {
        let fed = feeder.join().expect("stdin feeder panicked");
        // A tool that failed early may have closed its stdin: its status tells.
        if out.status.success() {
            fed.expect("writing to ktool's stdin");
        }
    }
    out
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(dir) = &self.owned_dir {
            let status = Command::new(kafka_script("broker"))
                .arg("stop")
                .arg("--dir")
                .arg(dir)
                .stdin(Stdio::null())
                .status();
            if !matches!(status, Ok(s) if s.success()) {
                eprintln!(
                    "tests/kafka/broker stop --dir {} failed: {status:?}",
                    dir.display()
                );
            }
        }
    }
}

/// `tests/kafka/<name>` in this repository.
fn kafka_script(name: &str) -> PathBuf {
    repo_root().join("tests/kafka").join(name)
}

/// The repository's root: the package's folder, or the first folder above it (for the
/// workspace's other crates, whose tests include this module) that has `tests/kafka`.
pub(crate) fn repo_root() -> PathBuf {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    package
        .ancestors()
        .find(|dir| dir.join("tests/kafka/broker").exists())
        .unwrap_or(package)
        .to_path_buf()
}

fn json_lines(out: &str) -> impl Iterator<Item = Value> + '_ {
    out.lines().filter(|l| !l.trim().is_empty()).map(|l| {
        serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line from ktool ({e}): {l}"))
    })
}

fn int(v: &Value, field: &str) -> i64 {
    v[field]
        .as_i64()
        .unwrap_or_else(|| panic!("ktool line without integer {field}: {v}"))
}

/// Bytes as the tool's JSON: null, a UTF-8 string, or `{"hex": ".."}`.
fn bytes_to_json(b: Option<&[u8]>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => json!({ "hex": b.iter().map(|x| format!("{x:02x}")).collect::<String>() }),
        },
    }
}

fn bytes_from_json(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Object(o) => {
            let hex = o.get("hex").and_then(Value::as_str).expect("{\"hex\": ..}");
            let digits = hex.as_bytes();
            assert!(digits.len() % 2 == 0, "odd hex length: {hex}");
            Some(
                digits
                    .chunks(2)
                    .map(|pair| {
                        let s = std::str::from_utf8(pair).expect("hex is ASCII");
                        u8::from_str_radix(s, 16).expect("hex digit")
                    })
                    .collect(),
            )
        }
        other => panic!("not a byte field: {other}"),
    }
}

fn headers_to_json(headers: &[(String, Option<Vec<u8>>)]) -> Value {
    Value::Array(
        headers
            .iter()
            .map(|(k, v)| json!([k, bytes_to_json(v.as_deref())]))
            .collect(),
    )
}

/// Reads `plan` to its end within `limit`, calling `after(n)` after each record (n records so
/// far). Asserts that each partition's records come in strictly increasing offset order (so no
/// duplicate) and that every partition ends done. Returns the records sorted by partition and
/// offset.
pub(crate) async fn read_plan_exactly(
    client: &kseek::Client,
    plan: kseek::Plan,
    options: kseek::ReadOptions,
    limit: std::time::Duration,
    mut after: impl FnMut(usize),
) -> Vec<Record> {
    let mut stream = client.read(plan, options).records();
    let mut out = Vec::new();
    let mut last: std::collections::BTreeMap<i32, i64> = std::collections::BTreeMap::new();
    tokio::time::timeout(limit, async {
        while let Some(r) = stream.next().await {
            let r =
                r.unwrap_or_else(|e| panic!("the read failed after {} records: {e}", out.len()));
            if let Some(prev) = last.insert(r.partition, r.offset) {
                assert!(
                    r.offset > prev,
                    "partition {}: offset {} after {prev} (a duplicate or out of order)",
                    r.partition,
                    r.offset
                );
            }
            out.push(Record::from(&r));
            after(out.len());
        }
    })
    .await
    .expect("the read ends");
    assert!(
        stream.positions().iter().all(|p| p.done),
        "{:?}",
        stream.positions()
    );
    out.sort();
    out
}

/// 2026-01-01T10:00:00Z in ms.
pub(crate) const TEN: i64 = 1_767_261_600_000;

/// A new topic of two partitions written by the Java producer in three transactions, the
/// splits' test data: in both partitions a committed transaction, an aborted one of 7
/// records (so splits of 3 offsets start inside it and on its abort marker), and a committed
/// one; timestamps (from [`TEN`]) out of order within each. Returns its name.
pub(crate) fn topic_with_an_aborted_transaction(broker: &Broker, prefix: &str) -> String {
    let topic = broker.new_topic(prefix, 2, &[]);
    let transactional = ProduceOptions {
        transactional_id: Some(unique_name("txn")),
        ..ProduceOptions::default()
    };
    let mut input = vec![Input::Begin];
    for (p, s) in [(0, 0), (1, 1), (0, 5), (0, 2), (1, 9), (0, 3), (1, 4)] {
        input.push(split_record(p, s, &format!("c1-{p}-{s}")));
    }
    input.extend([Input::Commit, Input::Begin]);
    for s in 10..17 {
        input.push(split_record(0, s, &format!("aborted-0-{s}")));
        input.push(split_record(1, s + 1, &format!("aborted-1-{s}")));
    }
    input.extend([Input::Abort, Input::Begin]);
    for (p, s) in [
        (0, 30),
        (0, 21),
        (1, 25),
        (0, 40),
        (1, 20),
        (1, 35),
        (0, 22),
    ] {
        input.push(split_record(p, s, &format!("c2-{p}-{s}")));
    }
    input.push(Input::Commit);
    let written = broker.produce_with(&topic, &transactional, &input);
    assert_eq!(written.iter().filter(|w| w.aborted).count(), 14);
    topic
}

/// A record of partition `partition` at `second`s after [`TEN`], keyed and headed by `value`.
fn split_record(partition: i32, second: i64, value: &str) -> Input {
    NewRecord::new()
        .partition(partition)
        .timestamp(TEN + second * 1000)
        .key(format!("k-{value}"))
        .value(value)
        .header("h", Some(value.as_bytes()))
        .into()
}

/// A new one-partition compacted topic after Kafka's log cleaner has run over it, and the
/// records Kafka's Java consumer reads from it then: keys `k0` to `k9` written once, then
/// `k0`, `k2`, `k4`, `k6`, `k8` again, then one record `last` in a later segment (so the
/// first is cleanable). The cleaner leaves offsets 1, 3, 5, 7, 9 (the odd keys), 10 to 14
/// and 15: gaps at 0, 2, 4, 6 and 8. Waits up to two minutes for the cleaner.
pub(crate) fn compacted_topic(broker: &Broker, prefix: &str) -> (String, Vec<Record>) {
    let topic = broker.new_topic(
        prefix,
        1,
        &[
            ("cleanup.policy", "compact"),
            ("segment.ms", "100"),
            ("min.cleanable.dirty.ratio", "0.01"),
            ("delete.retention.ms", "100"),
        ],
    );
    let first: Vec<Input> = (0..10)
        .chain((0..10).step_by(2))
        .enumerate()
        .map(|(i, k)| {
            NewRecord::new()
                .partition(0)
                .key(format!("k{k}"))
                .value(format!("v{i}-{}", "x".repeat(40 * i)))
                .into()
        })
        .collect();
    broker.produce(&topic, &first);
    broker.produce(
        &topic,
        &[NewRecord::new().partition(0).key("last").value("x").into()],
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let now = broker.consume(&topic);
        if now.len() == 11 {
            let offsets: Vec<i64> = now.iter().map(|r| r.offset).collect();
            assert_eq!(offsets, [1, 3, 5, 7, 9, 10, 11, 12, 13, 14, 15]);
            return (topic, now);
        }
        assert!(
            Instant::now() < deadline,
            "the log cleaner never ran: {now:?}"
        );
        // Polling Kafka's own consumer until the cleaner (another process) has run.
        std::thread::sleep(Duration::from_millis(500));
    }
}

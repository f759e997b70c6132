//! End-to-end tests of the `kseek` command line against real Kafka 4.4, 3.9 and 2.8 brokers.
//!
//! The data is written by Kafka's own Java producer (`tests/kafka/ktool`) with explicit
//! CreateTime timestamps, so every expected record (partition, offset, timestamp, key, value,
//! headers) is known exactly. Group commits are checked with Kafka's own admin client too, the
//! plans against the Java client's `listOffsets`, and time windows against kcat's `-o s@ -o e@`.
//! Records damaged on the way (a fault no real broker produces) come from a proxy in front of
//! the real broker (`tests/golden/proxy.py --corrupt-fetch`).
//!
//! Run with `cargo test -p kseek-cli --test cli`.

#[path = "../../../tests/support/mod.rs"]
mod support;

mod commits;
mod failures;
mod inspect;
mod windows;

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Broker, Isolation, KafkaVersion, NewRecord, OffsetQuery, Record};

/// 2026-01-01T10:00:00Z in ms.
const TEN: i64 = 1_767_261_600_000;
const MINUTE: i64 = 60_000;
/// Partitions of the seeded topic.
const PARTITIONS: i32 = 3;
/// Records per partition written one a minute from 10:00.
const MINUTES: i64 = 20;
/// The longest any kseek or kcat run may take before the test fails.
const LIMIT: Duration = Duration::from_secs(60);

/// The create time of the record of `minute` in `partition`: 10:00 + minute, plus one second
/// per partition, so each partition has its own records exactly at a window's edges.
fn at(minute: i64, partition: i32) -> i64 {
    TEN + minute * MINUTE + i64::from(partition) * 1000
}

/// The RFC 3339 text of a time of 2026-01-01 given as ms since 10:00 UTC (whole seconds).
fn rfc3339(ms: i64) -> String {
    let s = (ms - TEN) / 1000;
    assert_eq!((ms - TEN) % 1000, 0, "whole seconds only");
    let (h, m, s) = (10 + s / 3600, (s / 60) % 60, s % 60);
    format!("2026-01-01T{h:02}:{m:02}:{s:02}Z")
}

/// The topic every read-only test shares, per broker: three partitions with monotonic
/// timestamps, and two odd records at the end of partition 0.
struct Seeded {
    topic: String,
    /// Every record as stored, sorted by partition then offset.
    records: Vec<Record>,
}

impl Seeded {
    /// The stored records with `from <= timestamp < to` (the same as the offset range, since
    /// the timestamps grow with the offsets).
    fn window(&self, from: i64, to: i64) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| (from..to).contains(&r.timestamp))
            .collect()
    }

    /// The stored records of `partition` with `from <= offset < to`.
    fn offsets(&self, partition: i32, from: i64, to: i64) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.partition == partition && (from..to).contains(&r.offset))
            .collect()
    }

    /// The number of records (the end offset) of `partition`.
    fn end(&self, partition: i32) -> i64 {
        self.records
            .iter()
            .filter(|r| r.partition == partition)
            .count() as i64
    }
}

fn seeded(broker: &'static Broker) -> &'static Seeded {
    static S44: OnceLock<Seeded> = OnceLock::new();
    static S39: OnceLock<Seeded> = OnceLock::new();
    static S28: OnceLock<Seeded> = OnceLock::new();
    let cell = match broker.version() {
        KafkaVersion::V4_4 => &S44,
        KafkaVersion::V3_9 => &S39,
        KafkaVersion::V2_8 => &S28,
    };
    cell.get_or_init(|| seed(broker))
}

fn seed(broker: &Broker) -> Seeded {
    let topic = broker.new_topic("cli", PARTITIONS, &[]);
    let mut input: Vec<support::Input> = (0..MINUTES)
        .flat_map(|i| {
            (0..PARTITIONS).map(move |p| {
                NewRecord::new()
                    .partition(p)
                    .timestamp(at(i, p))
                    .key(format!("k{p}-{i}"))
                    .value(format!("v{i}-p{p}"))
                    .header("minute", Some(i.to_string().as_bytes()))
                    .header("src", Some(b"cli-test"))
                    .into()
            })
        })
        .collect();
    // A null key with a value and a header that are not UTF-8 and a null header value, then
    // a tombstone: the JSON output's base64 and null cases.
    input.push(
        NewRecord::new()
            .partition(0)
            .timestamp(at(MINUTES, 0))
            .value([0xff, 0x00, 0x80, b'x'])
            .header("bin", Some(&[0xfe, 0x01]))
            .header("nul", None)
            .into(),
    );
    input.push(
        NewRecord::new()
            .partition(0)
            .timestamp(at(MINUTES + 1, 0))
            .key("tomb")
            .into(),
    );
    let mut records = broker.produce(&topic, &input);
    records.sort();
    assert_eq!(records.len(), (MINUTES as usize) * 3 + 2);
    Seeded { topic, records }
}

/// One finished run of a command.
struct Run {
    what: String,
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
    took: Duration,
}

impl Run {
    /// Asserts exit code 0 and returns the run.
    fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "{} failed (exit {}):\n{}",
            self.what, self.code, self.stderr
        );
        self
    }

    /// Stdout as UTF-8 lines.
    fn lines(&self) -> Vec<String> {
        std::str::from_utf8(&self.stdout)
            .unwrap_or_else(|e| panic!("{} printed non-UTF-8 ({e})", self.what))
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Stdout as JSON lines.
    fn json_lines(&self) -> Vec<Value> {
        self.lines()
            .iter()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}: not a JSON line ({e}): {l}", self.what))
            })
            .collect()
    }

    /// Asserts the run failed with `code` and one line `kseek: ...` on stderr; returns that line.
    fn error(&self, code: i32) -> &str {
        let (notes, line) = self.error_after_notes(code);
        assert!(
            notes.is_empty(),
            "{}: the error is not one line `kseek: ...`: {:?}",
            self.what,
            self.stderr
        );
        line
    }

    /// Asserts the run failed with `code` and stderr ends with one line `kseek: ...`; returns
    /// the lines before it (notes, such as a commit made before the error) and that line.
    fn error_after_notes(&self, code: i32) -> (Vec<&str>, &str) {
        assert_eq!(
            self.code, code,
            "{}: exit code (stderr: {})",
            self.what, self.stderr
        );
        let mut lines: Vec<&str> = self.stderr.lines().collect();
        let line = lines.pop().unwrap_or_default();
        assert!(
            line.starts_with("kseek: "),
            "{}: stderr does not end with one line `kseek: ...`: {:?}",
            self.what,
            self.stderr
        );
        (lines, line)
    }
}

/// Runs `cmd` to the end (at most [`LIMIT`]) with stdout and stderr captured.
fn run(mut cmd: Command) -> Run {
    let what = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        out.read_to_end(&mut b).map(|_| b)
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        err.read_to_end(&mut b).map(|_| b)
    });
    // Poll for the exit only to bound the run's time (the outcome is the exit status).
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    let stdout = out.join().expect("stdout reader").expect("reading stdout");
    let stderr = err.join().expect("stderr reader").expect("reading stderr");
    Run {
        what,
        code: status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took,
    }
}

/// `kseek <args>` without `--bootstrap` and without `KSEEK_BOOTSTRAP` in its environment.
fn kseek_bare(args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
    cmd.args(args).env_remove("KSEEK_BOOTSTRAP");
    run(cmd)
}

/// `kseek <args> --bootstrap <broker>`.
fn kseek(broker: &Broker, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["--bootstrap", broker.bootstrap()]);
    kseek_bare(&all)
}

/// `kseek read --topic <topic> <args> -q --bootstrap <broker>`, which must succeed.
fn read(broker: &Broker, topic: &str, args: &[&str]) -> Run {
    let mut all = vec!["read", "--topic", topic];
    all.extend(args);
    all.push("-q");
    kseek(broker, &all).ok()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// A key, value or header value as the spec's JSON: a string, null, or `{"base64":".."}`.
fn bytes_json(b: Option<&[u8]>) -> String {
    match b {
        None => "null".to_string(),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => serde_json::to_string(s).expect("a string serialises"),
            Err(_) => format!(r#"{{"base64":"{}"}}"#, base64(b)),
        },
    }
}

/// The exact `--format json` line of `record`, fields in the spec's order.
fn json_line(topic: &str, r: &Record) -> String {
    let headers: Vec<String> = r
        .headers
        .iter()
        .map(|(k, v)| {
            format!(
                "[{},{}]",
                serde_json::to_string(k).expect("a string serialises"),
                bytes_json(v.as_deref())
            )
        })
        .collect();
    format!(
        r#"{{"topic":{},"partition":{},"offset":{},"timestamp":{},"key":{},"value":{},"headers":[{}]}}"#,
        serde_json::to_string(topic).expect("a string serialises"),
        r.partition,
        r.offset,
        r.timestamp,
        bytes_json(r.key.as_deref()),
        bytes_json(r.value.as_deref()),
        headers.join(",")
    )
}

/// Asserts that a `--format json` run printed exactly `expected`: the same lines, each
/// partition's in offset order (partitions may interleave).
fn assert_json_records(run: &Run, topic: &str, expected: &[&Record]) {
    let mut got: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (line, v) in run.lines().into_iter().zip(run.json_lines()) {
        let p = v["partition"]
            .as_i64()
            .unwrap_or_else(|| panic!("{}: no partition in {line}", run.what));
        got.entry(p).or_default().push(line);
    }
    let mut want: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for r in expected {
        want.entry(i64::from(r.partition))
            .or_default()
            .push(json_line(topic, r));
    }
    assert_eq!(got, want, "{}", run.what);
}

/// The numbers of the summary line `read N records (B bytes of keys+values) from P partitions
/// in X.XXs`: (N, B, P, seconds).
fn summary(run: &Run) -> (u64, u64, u64, f64) {
    let line = run.stderr.trim_end();
    fn fail<T>(run: &Run) -> T {
        panic!("{}: not the summary line: {:?}", run.what, run.stderr)
    }
    let t: Vec<&str> = line.split(' ').collect();
    if t.len() != 12
        || t[0] != "read"
        || !["record", "records"].contains(&t[2])
        || !t[3].starts_with('(')
        || t[4..7] != ["bytes", "of", "keys+values)"]
        || t[7] != "from"
        || !["partition", "partitions"].contains(&t[9])
        || t[10] != "in"
    {
        fail::<()>(run);
    }
    let secs = t[11].strip_suffix('s').unwrap_or_else(|| fail(run));
    let (_, frac) = secs.split_once('.').unwrap_or_else(|| fail(run));
    assert_eq!(frac.len(), 2, "{}: X.XXs: {line}", run.what);
    (
        t[1].parse().unwrap_or_else(|_| fail(run)),
        t[3][1..].parse().unwrap_or_else(|_| fail(run)),
        t[8].parse().unwrap_or_else(|_| fail(run)),
        secs.parse().unwrap_or_else(|_| fail(run)),
    )
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
}

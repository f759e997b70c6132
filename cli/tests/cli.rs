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

#[path = "../../tests/support/mod.rs"]
mod support;

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

#[test]
fn read_a_time_window_given_as_rfc3339_epoch_ms_or_with_a_zone_prints_exactly_its_records() {
    for broker in support::brokers() {
        let s = seeded(broker);
        // 10:05:00 to 10:10:00: partition 0 has records exactly at both edges (the first is
        // in, the last is out), partitions 1 and 2 one and two seconds later.
        let (from, to) = (at(5, 0), at(10, 0));
        let expected = s.window(from, to);
        assert_eq!(expected.len(), 15, "minutes 5..9 of 3 partitions");

        let rfc = read(
            broker,
            &s.topic,
            &["--from", &rfc3339(from), "--to", &rfc3339(to)],
        );
        assert_json_records(&rfc, &s.topic, &expected);

        let ms = read(
            broker,
            &s.topic,
            &["--from", &from.to_string(), "--to", &to.to_string()],
        );
        assert_eq!(
            ms.stdout,
            rfc.stdout,
            "epoch ms as RFC 3339 ({:?})",
            broker.version()
        );

        let zoned = read(
            broker,
            &s.topic,
            &[
                "--from",
                "2026-01-01T11:05:00.000+01:00",
                "--to",
                "2026-01-01T05:10:00-05:00",
                "--format",
                "json",
            ],
        );
        assert_eq!(
            zoned.stdout,
            rfc.stdout,
            "with a zone ({:?})",
            broker.version()
        );

        // One millisecond after the edge record of partition 0: it is out, and the record
        // one ms before the end of partition 1 (10:10:01) is in with --to 10:10:01.001.
        let edge = read(
            broker,
            &s.topic,
            &[
                "--from",
                "2026-01-01T10:05:00.001Z",
                "--to",
                "1767262201001",
            ],
        );
        assert_json_records(&edge, &s.topic, &s.window(from + 1, at(10, 1) + 1));
    }
}

#[test]
fn read_by_offsets_earliest_latest_dates_relative_times_and_partitions() {
    for broker in support::brokers() {
        let s = seeded(broker);
        let t = s.topic.as_str();
        let all: Vec<&Record> = s.records.iter().collect();

        let r = read(broker, t, &["--from", "offset:3", "--to", "offset:7"]);
        let want: Vec<&Record> = (0..PARTITIONS).flat_map(|p| s.offsets(p, 3, 7)).collect();
        assert_json_records(&r, t, &want);

        // Per partition: partitions not named in --to end at latest.
        let r = read(
            broker,
            t,
            &["--from", "offset:0=2,1=4,2=6", "--to", "offset:0=5"],
        );
        let want: Vec<&Record> =
            [s.offsets(0, 2, 5), s.offsets(1, 4, 99), s.offsets(2, 6, 99)].concat();
        assert_json_records(&r, t, &want);

        // Everything, including the null key, the base64 value and header, the tombstone.
        let r = read(broker, t, &["--from", "earliest", "--to", "latest"]);
        assert_json_records(&r, t, &all);
        assert_eq!(read(broker, t, &[]).stdout, r.stdout, "the defaults");
        let dates = read(broker, t, &["--from", "2026-01-01", "--to", "2026-01-02"]);
        assert_eq!(dates.stdout, r.stdout, "bare dates are 00:00 UTC");
        let now = read(broker, t, &["--to", "now", "--isolation", "read_committed"]);
        assert_eq!(now.stdout, r.stdout, "--to now");
        // The data is from 2026-01-01, long before an hour ago.
        let recent = read(broker, t, &["--from", "-1h30m"]);
        assert_eq!(recent.lines(), Vec::<String>::new(), "--from -1h30m");
        let day = read(
            broker,
            t,
            &["--from", "2026-01-01T09:00:00Z", "--to", "-1d"],
        );
        assert_eq!(day.stdout, r.stdout, "--to -1d");

        let r = read(broker, t, &["--partition", "0,2", "--to", "offset:2"]);
        assert_json_records(&r, t, &[s.offsets(0, 0, 2), s.offsets(2, 0, 2)].concat());
        let r = read(
            broker,
            t,
            &[
                "--partition",
                "1",
                "--partition",
                "2",
                "--from",
                "offset:19",
            ],
        );
        assert_json_records(
            &r,
            t,
            &[s.offsets(1, 19, 20), s.offsets(2, 19, 20)].concat(),
        );
    }
}

#[test]
fn raw_and_template_formats() {
    let broker = support::broker();
    let s = seeded(broker);
    let t = s.topic.as_str();
    let window = [
        "--from",
        "2026-01-01T10:18:00Z",
        "--to",
        "2026-01-01T11:00:00Z",
    ];

    // raw: the value bytes and a newline; a null value is an empty line.
    let raw = read(
        broker,
        t,
        &[&window[..], &["--partition", "0", "--format", "raw"]].concat(),
    );
    let mut want = b"v18-p0\nv19-p0\n".to_vec();
    want.extend([0xff, 0x00, 0x80, b'x', b'\n', b'\n']);
    assert_eq!(raw.stdout, want, "{}", raw.what);

    let fmt = r"%t|%p|%o|%T|%k|%s|%K|%S|%h|%%|\t|\\\n";
    let r = read(
        broker,
        t,
        &[&window[..], &["--partition", "1", "--format", fmt]].concat(),
    );
    let want: String = s
        .offsets(1, 18, 20)
        .iter()
        .map(|r| {
            let i = r.offset;
            format!(
                "{t}|1|{i}|{}|k1-{i}|v{i}-p1|{}|{}|minute={i},src=cli-test|%|\t|\\\n",
                r.timestamp,
                format!("k1-{i}").len(),
                format!("v{i}-p1").len()
            )
        })
        .collect();
    assert_eq!(String::from_utf8_lossy(&r.stdout), want, "{}", r.what);

    // The tombstone: an empty value and length -1; a null key prints empty, length -1.
    let r = read(
        broker,
        t,
        &[
            "--partition",
            "0",
            "--from",
            "offset:20",
            "--format",
            "[%k|%K|%S]\n",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "[|-1|4]\n[tomb|4|-1]\n",
        "{}",
        r.what
    );
}

#[test]
fn count_stops_after_n_records_and_the_summary_counts_them() {
    let broker = support::broker();
    let s = seeded(broker);
    let t = s.topic.as_str();
    let args = ["read", "--topic", t, "--partition", "1", "--count", "5"];
    let r = kseek(broker, &args).ok();
    assert_json_records(&r, t, &s.offsets(1, 0, 5));
    // Keys "k1-0".."k1-4" (4 bytes) and values "v0-p1".."v4-p1" (5 bytes).
    let (records, bytes, partitions, _) = summary(&r);
    assert_eq!((records, bytes, partitions), (5, 45, 1), "{}", r.stderr);

    // Unbounded (--follow) reads end after --count too.
    let r = read(
        broker,
        t,
        &[
            "--partition",
            "2",
            "--from",
            "offset:10",
            "--follow",
            "--count",
            "3",
        ],
    );
    assert_json_records(&r, t, &s.offsets(2, 10, 13));

    // -q: no summary.
    let r = read(broker, t, &["--count", "1", "--partition", "0"]);
    assert_eq!(r.stderr, "", "{}", r.what);
}

#[test]
fn a_whole_read_reports_records_bytes_and_partitions() {
    let broker = support::broker();
    let s = seeded(broker);
    let r = kseek(broker, &["read", "--topic", &s.topic, "--format", "raw"]).ok();
    let bytes: usize = s
        .records
        .iter()
        .map(|r| r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len))
        .sum();
    let (records, b, partitions, _) = summary(&r);
    assert_eq!(
        (records, b, partitions),
        (s.records.len() as u64, bytes as u64, 3),
        "{}",
        r.stderr
    );
}

#[test]
fn exact_time_drops_the_out_of_order_records_inside_the_offset_range() {
    let broker = support::broker();
    let topic = broker.new_topic("cli-exact", 1, &[]);
    // Create times out of order: 10:00, 10:03, 10:01, 10:09, 10:04, 10:12.
    let minutes = [0, 3, 1, 9, 4, 12];
    let input: Vec<support::Input> = minutes
        .iter()
        .map(|&m| {
            NewRecord::new()
                .partition(0)
                .timestamp(at(m, 0))
                .key(format!("m{m}"))
                .value("x")
                .into()
        })
        .collect();
    let written = broker.produce(&topic, &input);
    let window = [
        "--from",
        "2026-01-01T10:02:00Z",
        "--to",
        "2026-01-01T10:10:00Z",
    ];
    // The offset range: from the first offset at or after 10:02 (offset 1, 10:03) to the
    // first at or after 10:10 (offset 5, 10:12): offsets 1..5, including 10:01.
    let plain = read(broker, &topic, &window);
    assert_json_records(&plain, &topic, &written[1..5].iter().collect::<Vec<_>>());
    // --exact-time keeps only 10:02 <= t < 10:10 of that range: 10:03, 10:09, 10:04.
    let exact = read(broker, &topic, &[&window[..], &["--exact-time"]].concat());
    assert_json_records(&exact, &topic, &[&written[1], &written[3], &written[4]]);
}

#[test]
fn an_empty_window_and_a_window_after_the_last_record_end_at_once_with_nothing() {
    for broker in support::brokers() {
        let s = seeded(broker);
        for (from, to) in [
            ("2026-01-01T09:00:00Z", "2026-01-01T09:30:00Z"),
            ("2026-01-01T10:05:00Z", "2026-01-01T10:05:00Z"),
            ("2027-01-01T00:00:00Z", "latest"),
            ("2027-01-01T00:00:00Z", "2027-01-02T00:00:00Z"),
        ] {
            let r = kseek(
                broker,
                &["read", "--topic", &s.topic, "--from", from, "--to", to],
            )
            .ok();
            assert_eq!(r.stdout, b"", "{}", r.what);
            let (records, bytes, _, _) = summary(&r);
            assert_eq!((records, bytes), (0, 0), "{}", r.stderr);
            assert!(
                r.took < Duration::from_secs(5),
                "{} took {:?}",
                r.what,
                r.took
            );
        }
    }
}

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

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
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

#[test]
fn bad_positions_and_arguments_exit_2_with_one_line() {
    // No broker needed: these fail before connecting (the bootstrap goes nowhere).
    let b = ["--bootstrap", "127.0.0.1:9"];
    for (pos, hint) in [
        ("yesterday", "yesterday"),
        ("2026-01-01T10:00:00", "add Z or +hh:mm"),
        ("offset:x", "offset:x"),
        ("2026-13-01", "2026-13-01"),
        ("-5x", "-5x"),
    ] {
        let r = kseek_bare(&[&["read", "--topic", "t", "--from", pos], &b[..]].concat());
        let line = r.error(2);
        assert!(
            line.to_lowercase().contains(&hint.to_lowercase()),
            "{line:?} mentions {hint:?}"
        );
        let r = kseek_bare(&[&["offsets", "--topic", "t", "--to", pos], &b[..]].concat());
        r.error(2);
    }
    let r = kseek_bare(&[&["read", "--topic", "t", "--from", "group"], &b[..]].concat());
    let line = r.error(2);
    assert!(line.contains("--group"), "{line}");
    for args in [
        &["read", "--topic", "t", "--commit"][..],
        &["read", "--topic", "t", "--follow", "--to", "latest"],
        &["read", "--topic", "t", "--isolation", "sometimes"],
        &["read", "--topic", "t", "--count", "many"],
        &["read"],
        &["frobnicate"],
    ] {
        let r = kseek_bare(&[args, &b[..]].concat());
        assert_eq!(r.code, 2, "{}: {}", r.what, r.stderr);
    }
}

#[test]
fn offset_positions_must_name_every_partition_for_from() {
    let broker = support::broker();
    let s = seeded(broker);
    let r = kseek(
        broker,
        &["read", "--topic", &s.topic, "--from", "offset:0=1"],
    );
    assert_eq!(r.stdout, b"", "{}", r.what);
    r.error(2);
}

/// The `--format json` plan rows of `kseek offsets` as (partition, start, end, records).
fn plan_rows(run: &Run) -> Vec<(i64, i64, i64, i64)> {
    run.json_lines()
        .iter()
        .map(|v| {
            let n = |f: &str| {
                v[f].as_i64()
                    .unwrap_or_else(|| panic!("{}: {f} in {v}", run.what))
            };
            (n("partition"), n("start"), n("end"), n("records"))
        })
        .collect()
}

#[test]
fn a_start_past_a_short_partition_reads_the_others_and_the_plan_starts_at_the_log_start() {
    let broker = support::broker();
    let topic = broker.new_topic("kseek-short", 3, &[]);
    // Partitions 0 and 1 hold 120 records, partition 2 only 36.
    let input: Vec<support::Input> = [(0, 120), (1, 120), (2, 36)]
        .into_iter()
        .flat_map(|(p, n)| {
            (0..n).map(move |i| {
                NewRecord::new()
                    .partition(p)
                    .timestamp(at(0, 0) + i)
                    .value(format!("p{p}-{i}"))
                    .into()
            })
        })
        .collect();
    broker.produce(&topic, &input);
    let all = broker.consume(&topic);
    let want = |p: i32, from: i64| -> Vec<&Record> {
        all.iter()
            .filter(|r| r.partition == p && r.offset >= from)
            .collect()
    };

    // The form the help shows: partition 2 ends at 36, so its range is empty, with a notice;
    // partition 0 is read from 100.
    let r = kseek(
        broker,
        &[
            "read",
            "--topic",
            &topic,
            "--partition",
            "0,2",
            "--from",
            "offset:100",
            "-q",
        ],
    )
    .ok();
    assert_json_records(&r, &topic, &want(0, 100));
    assert!(
        r.stderr.contains(&format!(
            "partition 2 of topic \"{topic}\" ends at offset 36, before --from offset 100: nothing to read there."
        )),
        "{}",
        r.stderr
    );
    // Over all partitions, and the plan says the same without reading.
    let r = kseek(
        broker,
        &[
            "offsets",
            "--topic",
            &topic,
            "--from",
            "offset:50",
            "--format",
            "json",
        ],
    )
    .ok();
    assert_eq!(
        plan_rows(&r),
        [(0, 50, 120, 70), (1, 50, 120, 70), (2, 36, 36, 0)],
        "{}",
        r.what
    );
    // An explicit end before the start stays an error.
    let r = kseek(
        broker,
        &[
            "read",
            "--topic",
            &topic,
            "--from",
            "offset:100",
            "--to",
            "offset:50",
        ],
    );
    assert!(
        r.error(2)
            .contains("start offset 100 is after end offset 50"),
        "{}",
        r.stderr
    );

    // After DeleteRecords up to 100 in partition 1, the plan starts at the log start and
    // counts what is left; the notice says "deleted" without guessing why.
    broker.delete_records(&topic, 1, 100);
    let args = [
        "--topic",
        &topic,
        "--partition",
        "1",
        "--from",
        "offset:50",
        "--to",
        "offset:120",
    ];
    let r = kseek(
        broker,
        &[&["offsets"][..], &args, &["--format", "json"]].concat(),
    )
    .ok();
    assert_eq!(plan_rows(&r), [(1, 100, 120, 20)], "{}", r.what);
    let notice = format!(
        "partition 1 of topic \"{topic}\": offsets 50 to 99 were deleted; the range starts at the log start, 100."
    );
    assert!(r.stderr.contains(&notice), "{}", r.stderr);
    let r = kseek(broker, &[&["read"][..], &args, &["-q"]].concat()).ok();
    assert_json_records(&r, &topic, &want(1, 100));
    assert!(r.stderr.contains(&notice), "{}", r.stderr);
    assert!(!r.stderr.contains("retention"), "{}", r.stderr);
}

#[test]
fn an_unknown_topic_and_an_unreachable_bootstrap_exit_3_with_one_line_quickly() {
    let broker = support::broker();
    let missing = support::unique_name("cli-no-such-topic");
    for sub in ["read", "offsets"] {
        let r = kseek(broker, &[sub, "--topic", &missing]);
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert!(line.contains(&missing), "{line}");
        assert!(
            r.took < Duration::from_secs(30),
            "{} took {:?}",
            r.what,
            r.took
        );
    }
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dead = format!("127.0.0.1:{port}");
    for args in [
        &["read", "--topic", "t"][..],
        &["metadata"],
        &["committed", "--group", "g"],
    ] {
        let r = kseek_bare(&[args, &["--bootstrap", &dead][..]].concat());
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert!(line.contains(&dead), "{line}");
        assert!(
            r.took < Duration::from_secs(30),
            "{} took {:?}",
            r.what,
            r.took
        );
    }
}

/// Splits template output into lines grouped by partition (the first field), in output order.
fn by_partition(out: &[u8]) -> BTreeMap<Vec<u8>, Vec<Vec<u8>>> {
    let mut m: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
    let body = out.strip_suffix(b"\n").unwrap_or(out);
    if body.is_empty() {
        return m;
    }
    for line in body.split(|&b| b == b'\n') {
        let p = line.split(|&b| b == b' ').next().unwrap_or_default();
        m.entry(p.to_vec()).or_default().push(line.to_vec());
    }
    m
}

#[test]
fn kcat_and_kseek_print_the_same_records_for_the_same_time_window() {
    let version = Command::new("kcat").arg("-V").output();
    assert!(
        matches!(&version, Ok(o) if o.status.success()),
        "kcat is not installed (Debian/Ubuntu: apt-get install kcat); the comparison with kcat \
         needs it: {version:?}"
    );
    let format = r"%p %o %T %k %s\n";
    for broker in support::brokers() {
        let s = seeded(broker);
        // Windows whose edges fall exactly on records of some partition (kcat's s@ is inclusive,
        // e@ exclusive, like kseek), one covering the odd records at the end of partition 0,
        // one before everything, one after everything.
        for (from, to) in [
            (at(5, 0), at(12, 1)),
            (at(5, 2), at(12, 0)),
            (at(15, 0), at(60, 0)),
            (TEN - 60 * MINUTE, at(3, 1)),
            (at(7, 1), at(7, 1) + 1),
            (at(100, 0), at(200, 0)),
        ] {
            let mut cmd = Command::new("kcat");
            cmd.args(["-C", "-q", "-e", "-b", broker.bootstrap(), "-t", &s.topic])
                .args(["-o", &format!("s@{from}"), "-o", &format!("e@{to}")])
                .args(["-f", format]);
            let kcat = run(cmd).ok();
            let kseek = read(
                broker,
                &s.topic,
                &[
                    "--from",
                    &from.to_string(),
                    "--to",
                    &to.to_string(),
                    "--format",
                    format,
                ],
            );
            let (k, ks) = (by_partition(&kcat.stdout), by_partition(&kseek.stdout));
            let count =
                |m: &BTreeMap<Vec<u8>, Vec<Vec<u8>>>| m.values().map(Vec::len).sum::<usize>();
            eprintln!(
                "kcat vs kseek on {:?}, {from}..{to}: {} and {} records",
                broker.version(),
                count(&k),
                count(&ks)
            );
            assert_eq!(
                k,
                ks,
                "kcat and kseek differ on {from}..{to} ({:?})",
                broker.version()
            );
            // And both are exactly the records the Java producer wrote in the window.
            let mut want = Vec::new();
            for r in s.window(from, to) {
                want.extend(format!("{} {} {} ", r.partition, r.offset, r.timestamp).bytes());
                want.extend(r.key.as_deref().unwrap_or_default());
                want.push(b' ');
                want.extend(r.value.as_deref().unwrap_or_default());
                want.push(b'\n');
            }
            assert_eq!(
                ks,
                by_partition(&want),
                "{from}..{to} ({:?})",
                broker.version()
            );
        }
    }
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

/// Every usage error, clap's own included, is one line `kseek: ...` that names the flag (or
/// what is missing) and says what to do, with exit 2 and nothing on stdout. No broker needed.
#[test]
fn usage_errors_are_one_line_that_names_the_flag_and_says_what_to_do() {
    let b = ["--bootstrap", "127.0.0.1:9"];
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["read", "--topic", "t", "--partition", "-1"],
            &["--partition", "\"-1\"", "must be >= 0"],
        ),
        (
            &["read", "--topic", "t", "--partition", "abc"],
            &["--partition", "\"abc\"", "Give 0, 1, 2"],
        ),
        (
            &["offsets", "--topic", "t", "--partition", "0,x"],
            &["--partition", "\"x\""],
        ),
        (
            &["commit", "--group", "g", "--topic", "t"],
            &["commit needs --to", "Add it"],
        ),
        (
            &["read", "--topic", "t", "--isolation", "committed"],
            &[
                "--isolation",
                "\"committed\"",
                "read_uncommitted or read_committed",
                "did you mean read_committed?",
            ],
        ),
        (
            &["read", "--topic", "t", "--bogus"],
            &["read has no flag --bogus", "kseek read --help"],
        ),
        (
            &["read", "--topic", "t", "--topc", "x"],
            &["--topc", "did you mean --topic?"],
        ),
        (&["read", "--topic"], &["--topic needs a value"]),
        (
            &["read", "--topic", "t", "--from"],
            &["--from needs a value"],
        ),
        (
            &["commit", "--group", "g", "--topic", "t", "--to"],
            &["--to needs a value"],
        ),
        (
            &["offsets", "--topic", "t", "--format"],
            &["--format needs a value", "table or json"],
        ),
        (
            &["offsets", "--topic", "t", "--format", "raw"],
            &["--format", "\"raw\"", "table or json"],
        ),
        (&["read"], &["read needs --topic"]),
        (
            &["read", "--topic", "t", "--commit"],
            &["read needs --group"],
        ),
        (
            &["read", "--topic", "t", "--count", "0"],
            &["--count", "1 or more"],
        ),
        (
            &["read", "--topic", "t", "--count", "many"],
            &["--count", "\"many\""],
        ),
        (
            &["read", "--topic", "t", "--follow", "--to", "latest"],
            &["--follow can't be used with --to"],
        ),
        (
            &["read", "--topic", "t", "--from", "-1h", "--from", "-2h"],
            &["--from is given twice"],
        ),
        (
            &["read", "--topic", "t", "stray"],
            &["\"stray\"", "kseek read --help"],
        ),
        (
            &["frobnicate"],
            &[
                "unknown subcommand \"frobnicate\"",
                "read, offsets, splits, read-split, metadata",
            ],
        ),
        (&["comit"], &["did you mean", "commit"]),
        (
            &[],
            &[
                "needs a subcommand",
                "read, offsets, splits, read-split, metadata",
            ],
        ),
        (
            &["metadata", "--request-timeout", "5x"],
            &["--request-timeout", "\"5x\"", "500ms, 5s"],
        ),
        (
            &["metadata", "--connect-timeout", "0s"],
            &["--connect-timeout", "more than 0"],
        ),
        (
            &["metadata", "--request-timeout", "-1s"],
            &["--request-timeout", "can't be negative"],
        ),
        (
            &["metadata", "--bootstrap", ","],
            &["--bootstrap", "names no server", "HOST:PORT"],
        ),
    ];
    for (args, says) in cases {
        // The bootstrap goes first, so that it is no flag's missing value.
        let all: Vec<&str> = if args.contains(&"--bootstrap") {
            args.to_vec()
        } else {
            [&b[..], args].concat()
        };
        let r = kseek_bare(&all);
        let line = r.error(2);
        assert_eq!(r.stdout, b"", "{}", r.what);
        assert!(line.ends_with('.'), "{}: {line}", r.what);
        assert!(!line.contains("error:"), "{}: {line}", r.what);
        for s in *says {
            assert!(line.contains(s), "{}: {line:?} does not say {s:?}", r.what);
        }
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
    cmd.arg("metadata").env("KSEEK_BOOTSTRAP", " , ");
    let r = run(cmd);
    let line = r.error(2);
    assert!(line.contains("KSEEK_BOOTSTRAP"), "{line}");
}

/// --help and --version print as clap prints them, on stdout, with exit 0.
#[test]
fn help_and_version_are_clap_s_own_with_exit_0() {
    let r = kseek_bare(&["--version"]).ok();
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        format!("kseek {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(r.stderr, "");
    for (args, usage) in [
        (&["--help"][..], "Usage: kseek [OPTIONS] <COMMAND>"),
        (
            &["read", "--help"],
            "Usage: kseek read [OPTIONS] --topic <TOPIC>",
        ),
        (&["help", "commit"], "Usage: kseek commit [OPTIONS]"),
    ] {
        let r = kseek_bare(args).ok();
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.contains(usage), "{}: {out}", r.what);
        assert!(out.lines().count() > 10, "{}: {out}", r.what);
        assert_eq!(r.stderr, "", "{}", r.what);
    }
    let r = kseek_bare(&["metadata", "--help"]).ok();
    let out = String::from_utf8_lossy(&r.stdout);
    for flag in ["--connect-timeout", "--request-timeout", "--retry-deadline"] {
        assert!(out.contains(flag), "{flag} in {out}");
    }
}

/// A server that accepts connections and never answers fails the command by
/// --request-timeout, with exit 3 and one line, instead of the default 30 s.
#[test]
fn a_server_that_accepts_and_never_answers_fails_by_the_request_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a local port");
    let address = listener.local_addr().expect("its address").to_string();
    // Accepts every connection and keeps it open, reading nothing and writing nothing. The
    // listener is bound before kseek starts, so kseek's connect can't come too early.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    for (args, timeout) in [
        (
            &["metadata", "--request-timeout", "1s"][..],
            Duration::from_secs(1),
        ),
        (
            &["read", "--topic", "t", "--request-timeout", "700ms"],
            Duration::from_millis(700),
        ),
    ] {
        let r = kseek_bare(&[args, &["--bootstrap", &address][..]].concat());
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert_eq!(r.stdout, b"", "{}", r.what);
        assert!(
            r.took >= timeout,
            "{}: failed before its timeout: {:?}",
            r.what,
            r.took
        );
        assert!(
            r.took < Duration::from_secs(10),
            "{} took {:?}",
            r.what,
            r.took
        );
        assert!(line.contains(&address), "{line}");
        assert!(line.contains("timed out"), "{line}");
        assert!(line.contains("--request-timeout"), "{line}");
    }
}

/// A partition the topic doesn't have is the library's error (no CLI pre-check), one line
/// naming the topic's partitions, exit 3.
#[test]
fn a_partition_the_topic_does_not_have_names_the_partitions_it_has() {
    let broker = support::broker();
    let s = seeded(broker);
    for sub in ["read", "offsets"] {
        let r = kseek(broker, &[sub, "--topic", &s.topic, "--partition", "1,7"]);
        let line = r.error(3);
        assert_eq!(r.stdout, b"", "{}", r.what);
        assert!(line.contains("has no partition 7"), "{line}");
        assert!(line.contains("(it has 3: 0 to 2)"), "{line}");
        assert!(
            line.contains(&format!("kseek metadata --topic {}", s.topic)),
            "{line}"
        );
    }
}

/// A time lookup on a topic in message format v0 (no timestamps; Kafka 2.8 still allows it)
/// ends with advice about the format, not about the broker's log or access rights.
#[test]
fn a_time_lookup_on_a_message_format_v0_topic_says_to_use_an_offset_position() {
    let broker = support::broker_28();
    let topic = broker.new_topic("cli-format-v0", 1, &[("message.format.version", "0.9.0")]);
    let r = kseek(broker, &["offsets", "--topic", &topic, "--from", "-1h"]);
    let line = r.error(3);
    assert!(line.contains("UNSUPPORTED_FOR_MESSAGE_FORMAT"), "{line}");
    assert!(
        line.contains("offset, earliest or latest position"),
        "{line}"
    );
    assert!(!line.contains("access rights"), "{line}");
    assert!(!line.contains("broker's log"), "{line}");
    // Offsets need no timestamps: the same topic reads from earliest.
    kseek(
        broker,
        &["offsets", "--topic", &topic, "--from", "earliest"],
    )
    .ok();
}

/// A missing topic is waited for by the library's retries (a topic just created may be
/// unknown for a moment), as long as --retry-deadline says, then reported in one line.
#[test]
fn a_missing_topic_is_retried_until_the_retry_deadline_then_reported() {
    let broker = support::broker();
    let missing = support::unique_name("cli-missing");
    for args in [
        &["offsets", "--topic", &missing][..],
        &["metadata", "--topic", &missing],
        &["committed", "--group", "g", "--topic", &missing],
        &[
            "commit", "--group", "g", "--topic", &missing, "--to", "offset:0",
        ],
    ] {
        let r = kseek(broker, &[args, &["--retry-deadline", "1s"][..]].concat());
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert!(
            line.contains(&format!("topic {missing:?} does not exist")),
            "{line}"
        );
        // Retried (backoff 100 ms, then 200 ms, ...), and given up well before the CLI's
        // default deadline of 10 s: the flag took effect.
        assert!(
            r.took >= Duration::from_millis(300),
            "{}: {:?}",
            r.what,
            r.took
        );
        assert!(r.took < Duration::from_secs(8), "{}: {:?}", r.what, r.took);
    }
}

#[test]
fn a_start_after_the_end_exits_2_for_latest_and_earliest_too() {
    let broker = support::broker();
    let s = seeded(broker);
    let earlier = rfc3339(at(5, 0));
    for args in [
        &[
            "read", "--topic", &s.topic, "--from", "latest", "--to", "earliest",
        ][..],
        &[
            "offsets", "--topic", &s.topic, "--from", "latest", "--to", &earlier,
        ],
        &[
            "read", "--topic", &s.topic, "--from", &earlier, "--to", "earliest",
        ],
    ] {
        let r = kseek(broker, args);
        let line = r.error(2);
        assert!(
            line.contains("is after end offset")
                && line.ends_with("Pick a --from position before --to."),
            "{line}"
        );
    }
    // A start time after the newest record finds nothing: an empty read, not an error.
    let r = kseek(
        broker,
        &[
            "read",
            "--topic",
            &s.topic,
            "--from",
            "2027-01-01T00:00:00Z",
            "--to",
            "earliest",
        ],
    )
    .ok();
    assert_eq!(r.stdout, b"", "{}", r.what);
    assert_eq!(summary(&r).0, 0, "{}", r.stderr);
}

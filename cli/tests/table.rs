//! `kseek read --output FILE.parquet` and `--output-format arrow` against a real Kafka 4.4
//! broker, read back by independent readers: pyarrow (the Parquet file and the Arrow IPC
//! stream) and DuckDB (the Parquet file), from PyPI (`tests/python/env`). Every row must be
//! the record Kafka's Java producer stored (partition, offset, timestamp, key, value, headers;
//! nulls, a tombstone, bytes that are not UTF-8), with the column types of Spark's Kafka
//! source, and the same records as kseek's own JSON lines.
//!
//! Run with `cargo test -p kseek-cli --test table`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use support::{NewRecord, Record};

/// 2026-01-01T10:00:00Z in ms.
const TEN: i64 = 1_767_261_600_000;
const MINUTE: i64 = 60_000;
const PARTITIONS: i32 = 3;

/// A topic of three partitions, one record a minute from 09:50 to 10:20 in each, with null
/// keys, a tombstone, non-UTF-8 values and headers (one with a null value). Returns its name
/// and the records as stored, sorted by partition and offset.
fn seed(prefix: &str) -> (String, Vec<Record>) {
    let broker = support::broker();
    let topic = broker.new_topic(prefix, PARTITIONS, &[]);
    let input: Vec<_> = (0..30i64)
        .flat_map(|i| {
            (0..PARTITIONS).map(move |p| {
                let mut r = NewRecord::new()
                    .partition(p)
                    .timestamp(TEN - 10 * MINUTE + i * MINUTE + i64::from(p));
                if i % 7 != 3 {
                    r = r.key(format!("k{i}"));
                }
                r = match i % 10 {
                    5 => r, // a tombstone: no value
                    6 => r.value([0xff, 0xfe, 0x00, i as u8]),
                    _ => r.value(format!("{{\"n\":{i},\"p\":{p}}}")),
                };
                if i % 2 == 0 {
                    r = r.header("trace", Some(format!("t{i}").as_bytes()));
                    r = r.header("empty", None);
                }
                r.into()
            })
        })
        .collect();
    let mut stored = broker.produce(&topic, &input);
    assert_eq!(stored.len(), input.len());
    stored.sort();
    (topic, stored)
}

/// `kseek read --topic <topic> <args> --bootstrap <broker>`: (exit code, stdout, stderr).
fn kseek_read(topic: &str, args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let all = [&["read", "--topic", topic][..], args].concat();
    support::run_kseek(env!("CARGO_BIN_EXE_kseek"), &all)
}

/// What `tests/python/read_table.py` reads of `path` (`kind`: parquet or arrow).
fn read_back(kind: &str, path: &Path) -> Value {
    let env = support::repo_root().join("tests/python/env");
    let python = Command::new(&env).output().expect("tests/python/env");
    assert!(
        python.status.success(),
        "tests/python/env: {}",
        String::from_utf8_lossy(&python.stderr)
    );
    let python = String::from_utf8(python.stdout).expect("a path");
    let script = support::repo_root().join("tests/python/read_table.py");
    let out = Command::new(python.trim())
        .arg(script)
        .arg(kind)
        .arg(path)
        .output()
        .expect("running read_table.py");
    assert!(
        out.status.success(),
        "read_table.py {kind}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("read_table.py prints JSON")
}

fn hex(bytes: &Option<Vec<u8>>) -> Value {
    match bytes {
        None => Value::Null,
        Some(b) => Value::String(b.iter().map(|x| format!("{x:02x}")).collect()),
    }
}

/// A stored record as read_table.py prints a row.
fn expected_row(topic: &str, r: &Record) -> Value {
    let headers: Vec<Value> = r
        .headers
        .iter()
        .map(|(k, v)| Value::Array(vec![Value::String(k.clone()), hex(v)]))
        .collect();
    serde_json::json!({
        "partition": r.partition,
        "offset": r.offset,
        "timestamp_us": r.timestamp * 1000,
        "timestampType": 0,
        "topic": topic,
        "key_hex": hex(&r.key),
        "value_hex": hex(&r.value),
        "headers": headers,
    })
}

/// The rows of `read`, sorted by partition and offset.
fn rows(read: &Value) -> Vec<Value> {
    let mut rows = read["rows"].as_array().expect("rows").clone();
    rows.sort_by_key(|r| (r["partition"].as_i64(), r["offset"].as_i64()));
    rows
}

/// A new empty folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(support::unique_name(name));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    dir
}

/// Every file name in `dir`.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the folder")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A new topic of one partition holding `count` records `k<i>` = `value` (or `v<i>`).
fn one_partition(prefix: &str, count: usize, value: Option<&str>) -> String {
    let broker = support::broker();
    let topic = broker.new_topic(prefix, 1, &[]);
    let input: Vec<_> = (0..count)
        .map(|i| {
            let value = value.map_or_else(|| format!("v{i}"), str::to_owned);
            NewRecord::new()
                .partition(0)
                .key(format!("k{i}"))
                .value(value)
                .into()
        })
        .collect();
    broker.produce(&topic, &input);
    topic
}

/// `kseek read --topic <topic> <args>` on the shared broker, running, its stdout and stderr
/// piped.
fn spawn_read(topic: &str, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_kseek"))
        .args(["read", "--topic", topic])
        .args(args)
        .args(["--bootstrap", support::broker().bootstrap()])
        .env_remove("KSEEK_BOOTSTRAP")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running kseek")
}

/// Waits for `child`: its exit code and stderr.
fn finish(mut child: std::process::Child) -> (Option<i32>, String) {
    use std::io::Read;
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code(), stderr)
}

#[test]
fn parquet_and_arrow_hold_exactly_the_records_of_the_window_with_spark_s_column_types() {
    let (topic, stored) = seed("table");
    let window = [
        "--from",
        "2026-01-01T10:00:00Z",
        "--to",
        "2026-01-01T10:15:00Z",
    ];
    let expected: Vec<Value> = stored
        .iter()
        .filter(|r| (TEN..TEN + 15 * MINUTE).contains(&r.timestamp))
        .map(|r| expected_row(&topic, r))
        .collect();
    assert_eq!(expected.len(), 45, "15 minutes x 3 partitions");
    let dir = folder("kseek-table");

    // Parquet, by the file's extension.
    let parquet = dir.join("window.parquet");
    let parquet_arg = parquet.to_str().unwrap();
    let (code, stdout, stderr) = kseek_read(&topic, &[&window[..], &["-o", parquet_arg]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty(), "nothing on stdout with -o FILE");
    let bytes: usize = stored
        .iter()
        .filter(|r| (TEN..TEN + 15 * MINUTE).contains(&r.timestamp))
        .map(|r| r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len))
        .sum();
    assert!(
        stderr.starts_with(&format!("read 45 records ({bytes} bytes of keys+values)")),
        "the summary counts the records and their bytes: {stderr}"
    );
    assert_eq!(files(&dir), ["window.parquet"], "no temporary file is left");
    let read = read_back("parquet", &parquet);
    assert_eq!(rows(&read), expected, "pyarrow's rows of the Parquet file");
    let schema = serde_json::json!([
        ["key", "binary"],
        ["value", "binary"],
        ["topic", "string"],
        ["partition", "int32"],
        ["offset", "int64"],
        ["timestamp", "timestamp[us, tz=UTC]"],
        ["timestampType", "int32"],
        [
            "headers",
            "list<element: struct<key: string not null, value: binary> not null>"
        ],
    ]);
    assert_eq!(read["schema"], schema, "the column types");
    assert_eq!(read["duckdb"]["rows"], 45, "DuckDB's count");
    let per_partition: Vec<Value> = (0..PARTITIONS)
        .map(|p| {
            let offsets: Vec<i64> = stored
                .iter()
                .filter(|r| r.partition == p && (TEN..TEN + 15 * MINUTE).contains(&r.timestamp))
                .map(|r| r.offset)
                .collect();
            serde_json::json!([p, offsets[0], offsets[offsets.len() - 1]])
        })
        .collect();
    assert_eq!(
        read["duckdb"]["offsets"],
        Value::Array(per_partition),
        "DuckDB's offsets"
    );

    // An Arrow IPC stream on stdout.
    let (code, stdout, stderr) = kseek_read(
        &topic,
        &[&window[..], &["-o", "-", "--output-format", "arrow", "-q"]].concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let stream = dir.join("window.arrows");
    std::fs::write(&stream, stdout).unwrap();
    let read = read_back("arrow", &stream);
    assert_eq!(rows(&read), expected, "pyarrow's rows of the Arrow stream");
    assert_eq!(read["schema"], schema);

    // kseek's own JSON lines hold the same records (partition, offset, timestamp).
    let (code, stdout, stderr) = kseek_read(&topic, &[&window[..], &["-q"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let mut json: Vec<(i64, i64, i64)> = String::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let j: Value = serde_json::from_str(l).unwrap();
            (
                j["partition"].as_i64().unwrap(),
                j["offset"].as_i64().unwrap(),
                j["timestamp"].as_i64().unwrap() * 1000,
            )
        })
        .collect();
    json.sort();
    let table: Vec<(i64, i64, i64)> = expected
        .iter()
        .map(|r| {
            (
                r["partition"].as_i64().unwrap(),
                r["offset"].as_i64().unwrap(),
                r["timestamp_us"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(json, table, "the JSON lines and the table");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn count_and_commit_with_parquet_write_exactly_the_first_records_and_commit_after_them() {
    let (topic, stored) = seed("table-count");
    let group = support::unique_name("table-count-group");
    let dir = folder("kseek-table-count");
    let path = dir.join("first.parquet");
    let (code, _, stderr) = kseek_read(
        &topic,
        &[
            "--partition",
            "1",
            "--count",
            "7",
            "--group",
            &group,
            "--commit",
            "-q",
            "-o",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let expected: Vec<Value> = stored
        .iter()
        .filter(|r| r.partition == 1)
        .take(7)
        .map(|r| expected_row(&topic, r))
        .collect();
    assert_eq!(rows(&read_back("parquet", &path)), expected);
    let committed = support::broker().describe_group(&group);
    let offset = committed
        .iter()
        .find(|c| c.partition == 1)
        .and_then(|c| c.offset);
    assert_eq!(
        offset,
        Some(stored.iter().find(|r| r.partition == 1).unwrap().offset + 7),
        "the commit is right after the last record written: {committed:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_read_that_fails_leaves_no_file_and_commits_nothing() {
    let broker = support::broker();
    let topic = one_partition("table-corrupt", 50, Some(&"x".repeat(1000)));
    let group = support::unique_name("table-corrupt-group");
    let proxy = support::Proxy::start(broker, &["--corrupt-fetch"]);
    let dir = folder("kseek-table-corrupt");
    let path = dir.join("window.parquet");
    let out = Command::new(env!("CARGO_BIN_EXE_kseek"))
        .args(["read", "--topic", &topic, "--group", &group, "--commit"])
        .args(["-o", path.to_str().unwrap()])
        .args(["--bootstrap", &proxy.bootstrap])
        .env_remove("KSEEK_BOOTSTRAP")
        .output()
        .expect("running kseek");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("CRC mismatch"), "{stderr}");
    assert_eq!(
        files(&dir),
        Vec::<String>::new(),
        "no file, final or temporary"
    );
    assert!(
        broker
            .describe_group(&group)
            .iter()
            .all(|c| c.offset.is_none()),
        "nothing committed: the file that would hold the records does not exist"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A topic of one partition with 200 records of 1,000 bytes that no codec shrinks much
/// (hex of a counter's hash), so their Parquet file takes about 200 kB.
fn incompressible(prefix: &str) -> String {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let broker = support::broker();
    let topic = broker.new_topic(prefix, 1, &[]);
    let hash = |i: u64| BuildHasherDefault::<DefaultHasher>::default().hash_one(i);
    let input: Vec<_> = (0..200u64)
        .map(|i| {
            let value: String = (0..63)
                .map(|j| format!("{:016x}", hash(i * 64 + j)))
                .collect();
            NewRecord::new()
                .partition(0)
                .key(format!("k{i}"))
                .value(&value[..1000])
                .into()
        })
        .collect();
    broker.produce(&topic, &input);
    topic
}

/// Checks a read that `--commit`s into `group` and whose output ran out of space: exit 1, one
/// line naming the cause, no commit.
fn no_space_left(group: &str, code: Option<i32>, stderr: &str, cause: &str) {
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("kseek: writing the output failed: ") && stderr.contains(cause),
        "{stderr}"
    );
    assert!(
        support::broker()
            .describe_group(group)
            .iter()
            .all(|c| c.offset.is_none()),
        "nothing committed: the records were never written"
    );
}

#[test]
fn a_full_disk_leaves_no_file_and_commits_nothing() {
    let topic = incompressible("table-disk-full");
    let group = support::unique_name("table-disk-full-group");
    let dir = folder("kseek-table-disk-full");
    let path = dir.join("window.parquet");
    // A real full disk: a 64 KiB tmpfs mounted on `dir` in a mount namespace of kseek's own
    // (a user namespace makes the mount allowed without root). The shell lists what the
    // folder holds after kseek, on stdout, before the namespace and its tmpfs go away.
    let script = r#"mount -t tmpfs -o size=64k kseek-full "$0" || exit 99
"$@" >/dev/null
code=$?
ls -A "$0"
exit $code"#;
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .arg(&dir)
        .arg(env!("CARGO_BIN_EXE_kseek"))
        .args(["read", "--topic", &topic, "--group", &group, "--commit"])
        .args(["--compression", "none", "-o", path.to_str().unwrap()])
        .args(["--bootstrap", support::broker().bootstrap()])
        .env_remove("KSEEK_BOOTSTRAP")
        .stdin(Stdio::null())
        .output()
        .expect("running unshare (util-linux)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(
        out.status.code(),
        Some(99),
        "mounting a tmpfs in a user namespace: {stderr}"
    );
    no_space_left(
        &group,
        out.status.code(),
        &stderr,
        "No space left on device",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "no file, final or temporary, on the full disk"
    );
    assert_eq!(files(&dir), Vec::<String>::new());

    // A device that is always full, written in place (it is not a regular file).
    let (code, _, stderr) = kseek_read(
        &topic,
        &[
            "--group",
            &group,
            "--commit",
            "--output-format",
            "parquet",
            "-o",
            "/dev/full",
        ],
    );
    no_space_left(&group, code, &stderr, "No space left on device");
    assert!(stderr.contains("Free space on that disk"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_ends_an_arrow_stream_whole_with_the_records_read_and_exit_130() {
    let topic = one_partition("table-ctrl-c", 50, None);
    // The range ends at offset 1000, far past the 50 records: the read waits for more until
    // Ctrl-C.
    let mut child = spawn_read(
        &topic,
        &["--to", "offset:1000", "--output-format", "arrow", "-o", "-"],
    );
    let mut reader =
        arrow_ipc::reader::StreamReader::try_new(child.stdout.take().unwrap(), None).unwrap();
    // The stream is written as the records come: read record batches until all 50 are in.
    let mut rows = 0;
    while rows < 50 {
        let batch = reader
            .next()
            .expect("a record batch before Ctrl-C")
            .expect("a whole record batch");
        rows += batch.num_rows();
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // After Ctrl-C the stream ends properly (its end marker): no more batches, no error.
    let rest: Vec<_> = reader.by_ref().collect();
    assert!(rest.is_empty(), "{rest:?}");
    let (code, stderr) = finish(child);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("read 50 records")
            && stderr.contains("kseek: interrupted before the end of the range"),
        "{stderr}"
    );
    assert_eq!(rows, 50);
}

#[test]
fn an_output_that_is_not_a_regular_file_is_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let (topic, stored) = seed("table-fifo");
    let dir = folder("kseek-table-fifo");
    // A named pipe, as /dev/null or a process substitution would be: kseek must write into
    // it, not into a temporary file renamed over it.
    let fifo = dir.join("window.parquet");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("reading the pipe"))
    };
    let (code, _, stderr) = kseek_read(&topic, &["-q", "-o", fifo.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    // Checked first: a pipe replaced by a file would leave the reader waiting for a writer.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe is still a pipe");
    let bytes = reader.join().unwrap();
    assert_eq!(&bytes[..4], b"PAR1", "a Parquet file came through the pipe");
    assert_eq!(&bytes[bytes.len() - 4..], b"PAR1", "a whole one");
    assert_eq!(files(&dir), ["window.parquet"], "no temporary file");
    // And the rows are all there: write the bytes out and read them back.
    let copy = dir.join("copy.parquet");
    std::fs::write(&copy, &bytes).unwrap();
    assert_eq!(
        read_back("parquet", &copy)["rows"]
            .as_array()
            .unwrap()
            .len(),
        stored.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_arrow_stream_to_a_pipe_closed_early_ends_quietly_with_0() {
    use std::io::Read;
    let topic = one_partition("table-pipe", 3000, Some(&"v".repeat(1000)));
    let mut child = spawn_read(&topic, &["--output-format", "arrow"]);
    // Like `| head -c 1000`: take the start of 3 MB of records, then close the pipe.
    let mut start = [0u8; 1000];
    child.stdout.take().unwrap().read_exact(&mut start).unwrap();
    let (code, stderr) = finish(child);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "", "nothing to say: the reader went away");
}

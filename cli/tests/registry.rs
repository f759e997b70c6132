//! `kseek read -s value=avro -r URL` against a real Kafka 4.4 broker, with the values written
//! by Confluent's own `AvroSerializer` (the confluent-kafka package) and read back by its
//! `AvroDeserializer`, compared field by field (`tests/registry/confluent.py`). The registry
//! is `tests/registry/server.py`, a small server of Confluent's REST API (no registry server
//! can be installed from the package registries here: issue 30's note).
//!
//! Run with `cargo test -p kseek-cli --test registry`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};

use support::NewRecord;

/// A registry process, stopped on drop (and when this process dies: its stdin closes).
struct Registry {
    child: Child,
    _stdin: ChildStdin,
    url: String,
}

impl Registry {
    fn start(args: &[&str]) -> Registry {
        let mut child = Command::new(python())
            .arg(support::repo_root().join("tests/registry/server.py"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting tests/registry/server.py");
        let stdin = child.stdin.take().expect("stdin");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("reading the registry's URL");
        let url = line
            .trim()
            .strip_prefix("URL=")
            .unwrap_or_else(|| panic!("no URL= line from the registry: {line:?}"))
            .to_owned();
        Registry {
            child,
            _stdin: stdin,
            url,
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Python of `tests/python/env` (confluent-kafka, fastavro).
fn python() -> String {
    let out = Command::new(support::repo_root().join("tests/python/env"))
        .output()
        .expect("tests/python/env");
    assert!(out.status.success(), "tests/python/env failed");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// `tests/registry/confluent.py <args>`: (success, stdout + stderr).
fn confluent(args: &[&str]) -> (bool, String) {
    confluent_with(args, &[])
}

/// [`confluent`] with environment variables set.
fn confluent_with(args: &[&str], envs: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(python())
        .arg(support::repo_root().join("tests/registry/confluent.py"))
        .args(args)
        .envs(envs.iter().copied())
        .env("PYTHONWARNINGS", "ignore")
        .stdin(Stdio::null())
        .output()
        .expect("running confluent.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `confluent.py <command> BOOTSTRAP URL TOPIC FILE` with kseek's `lines` in FILE: Confluent's
/// deserializer reads the topic and compares each value with kseek's. Asserts `records` were
/// compared and none differed.
fn assert_confluent_agrees(
    command: &str,
    registry: &Registry,
    topic: &str,
    lines: &str,
    envs: &[(&str, &str)],
    records: usize,
) {
    let file = std::env::temp_dir().join(support::unique_name("kseek-registry.jsonl"));
    std::fs::write(&file, lines).unwrap();
    let (ok, out) = confluent_with(
        &[
            command,
            support::broker().bootstrap(),
            &registry.url,
            topic,
            file.to_str().unwrap(),
        ],
        envs,
    );
    let _ = std::fs::remove_file(&file);
    assert!(
        ok && out.contains(&format!("{records} records compared, 0 mismatches")),
        "kseek's values differ from Confluent's deserializer ({command}):\n{out}"
    );
}

/// `kseek read --topic <topic> <args>` (from earliest to latest unless `args` say --from):
/// (exit code, stdout, stderr).
fn kseek_read(topic: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let range: &[&str] = if args.contains(&"--from") {
        &[]
    } else {
        &["--from", "earliest", "--to", "latest"]
    };
    let all = [
        &["read", "--topic", topic][..],
        range,
        args,
        &["--retry-deadline", "3s"],
    ]
    .concat();
    let (code, out, err) = support::run_kseek(env!("CARGO_BIN_EXE_kseek"), &all);
    (code, String::from_utf8_lossy(&out).into_owned(), err)
}

/// `kseek read` of all of `topic` with `args` into the Parquet file `file`; its exit code and
/// stderr.
fn kseek_read_parquet(topic: &str, args: &[&str], file: &std::path::Path) -> (Option<i32>, String) {
    let out = ["--output-format", "parquet", "-o", file.to_str().unwrap()];
    let (code, _, stderr) = kseek_read(topic, &[args, &out[..]].concat());
    (code, stderr)
}

/// `file` (kseek's Parquet) against Confluent's deserializer reading `topic` with `env`
/// (`confluent.py compare-table`): all 41 records equal. Removes the file; returns what the
/// comparison printed (the column types among it).
fn assert_table_agrees(
    broker: &support::Broker,
    registry: &Registry,
    topic: &str,
    file: &std::path::Path,
    env: &[(&str, &str)],
) -> String {
    let (ok, out) = confluent_with(
        &[
            "compare-table",
            broker.bootstrap(),
            &registry.url,
            topic,
            file.to_str().unwrap(),
        ],
        env,
    );
    let _ = std::fs::remove_file(file);
    assert!(
        ok && out.contains("41 records compared, 0 mismatches"),
        "{out}"
    );
    out
}

/// Every Avro type Confluent's serializer writes, two schema versions, a tombstone: kseek's
/// JSON is what Confluent's deserializer reads, field by field.
#[test]
fn avro_values_match_confluents_deserializer() {
    let broker = support::broker();
    let registry = Registry::start(&[]);
    let topic = support::unique_name("avro");
    let (ok, out) = confluent(&["produce", broker.bootstrap(), &registry.url, &topic]);
    assert!(ok, "confluent.py produce failed: {out}");
    let (code, stdout, stderr) = kseek_read(
        &topic,
        &["-s", "key=string", "-s", "value=avro", "-r", &registry.url],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 41, "{stderr}");
    assert_confluent_agrees("compare", &registry, &topic, &stdout, &[], 41);

    // The registry's URL from a properties file, as a consumer's client.properties has it.
    let config = std::env::temp_dir().join(support::unique_name("registry.properties"));
    std::fs::write(&config, format!("schema.registry.url={}\n", registry.url)).unwrap();
    let (code, again, stderr) = kseek_read(
        &topic,
        &[
            "-s",
            "key=string",
            "-s",
            "value=avro",
            "--config",
            config.to_str().unwrap(),
        ],
    );
    let _ = std::fs::remove_file(&config);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(again, stdout);

    // The same values as Parquet columns: the union of several types ("choice") is a struct
    // of its branches (member0, member1), as Spark's from_avro reads it.
    let file = std::env::temp_dir().join(support::unique_name("kseek-union.parquet"));
    let avro = ["-s", "value=avro", "-r", &registry.url];
    let (code, stderr) = kseek_read_parquet(&topic, &avro, &file);
    assert_eq!(code, Some(0), "{stderr}");
    let out = assert_table_agrees(broker, &registry, &topic, &file, &[]);
    assert!(
        out.contains("choice: struct<member0: int64, member1: struct<name: string"),
        "{out}"
    );

    // `kseek sql --value-format avro`: a column per field, the same values.
    let table = std::env::temp_dir().join(support::unique_name("kseek-sql-avro.parquet"));
    let query = format!("SELECT * FROM \"{topic}\"");
    let (code, _, stderr) = support::run_kseek(
        env!("CARGO_BIN_EXE_kseek"),
        &[
            "sql",
            "-X",
            &format!("bootstrap.servers={}", broker.bootstrap()),
            "--value-format",
            "avro",
            "-r",
            &registry.url,
            "--output-format",
            "parquet",
            "-o",
            table.to_str().unwrap(),
            &query,
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_table_agrees(broker, &registry, &topic, &table, &[]);
}

/// A value without the magic byte, an unknown schema id, a payload cut short: exit 5 naming
/// partition and offset, nothing of the batch printed; skip and raw count what they did.
#[test]
fn values_that_do_not_decode() {
    let broker = support::broker();
    let registry = Registry::start(&[]);
    let topic = support::unique_name("avro-bad");
    let (ok, out) = confluent(&["produce", broker.bootstrap(), &registry.url, &topic]);
    assert!(ok, "{out}");
    // Appended to partition 1 (20 good records at offsets 0-19): plain text, an id the
    // registry does not have, and a known id with its payload cut short.
    broker.produce(
        &topic,
        &[
            NewRecord::new().partition(1).value("{\"plain\":1}").into(),
            NewRecord::new()
                .partition(1)
                .value(b"\0\0\0\x27\x0f\x02")
                .into(),
            NewRecord::new()
                .partition(1)
                .value(b"\0\0\0\0\x01\x01")
                .into(),
        ],
    );
    let avro = ["-s", "value=avro", "-r", registry.url.as_str()];
    let (code, stdout, stderr) = kseek_read(&topic, &[&avro[..], &["-p", "1"]].concat());
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("partition 1 of topic")
            && stderr.contains("offset 20")
            && stderr.contains("not the Schema Registry magic byte"),
        "{stderr}"
    );
    // Only whole batches before the bad record are printed, and each line is complete.
    assert!(stdout.lines().count() <= 20, "{stdout}");
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["offset"].as_i64().unwrap() < 20);
    }

    let (code, stdout, stderr) = kseek_read(
        &topic,
        &[&avro[..], &["-p", "1", "--on-decode-error", "skip"]].concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 20);
    assert!(
        stderr.contains("3 records that did not decode: 3 skipped, 0 printed raw"),
        "{stderr}"
    );

    let (code, stdout, stderr) = kseek_read(
        &topic,
        &[&avro[..], &["-p", "1", "--on-decode-error", "raw"]].concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 23);
    assert_eq!(lines[20]["value"], "{\"plain\":1}");
    assert!(lines[0]["value"].is_object(), "decoded values stay decoded");
    assert!(stderr.contains("0 skipped, 3 printed raw"), "{stderr}");
    // The unknown id and the cut payload, named.
    let (_, _, stderr) = kseek_read(
        &topic,
        &[
            &avro[..],
            &["-p", "1", "--from", "offset:21", "--to", "offset:22"],
        ]
        .concat(),
    );
    assert!(
        stderr.contains("offset 21")
            && stderr.contains("schema id 9999 is not in the Schema Registry"),
        "{stderr}"
    );
    let (code, _, stderr) = kseek_read(
        &topic,
        &[
            &avro[..],
            &["-p", "1", "--from", "offset:22", "--to", "offset:23"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("offset 22") && stderr.contains("cut short"),
        "{stderr}"
    );
}

/// A registry that is down, and one that wants credentials: exit 6, no record printed; with
/// basic auth from the properties (the password from the environment), the read works.
#[test]
fn registry_down_and_basic_auth() {
    let broker = support::broker();
    let locked = Registry::start(&["--user", "alice:s3cret"]);
    let topic = support::unique_name("avro-auth");
    let (ok, out) = confluent(&[
        "produce",
        broker.bootstrap(),
        &locked.url,
        &topic,
        "alice:s3cret",
    ]);
    assert!(ok, "{out}");
    let avro = ["-s", "value=avro", "-r", locked.url.as_str()];
    let (code, stdout, stderr) = kseek_read(&topic, &avro);
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("answered 401") && stderr.contains("basic.auth.user.info"),
        "{stderr}"
    );
    let with_auth = [
        &avro[..],
        &[
            "-X",
            "basic.auth.user.info=alice:${env:KSEEK_TEST_REGISTRY_PW}",
        ],
    ]
    .concat();
    let out = Command::new(env!("CARGO_BIN_EXE_kseek"))
        .args([
            "read", "--topic", &topic, "--from", "earliest", "--to", "latest",
        ])
        .args(&with_auth)
        .args(["--bootstrap", broker.bootstrap()])
        .env("KSEEK_TEST_REGISTRY_PW", "s3cret")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 41);
    // A wrong password: 401, the password never printed.
    let (code, _, stderr) = kseek_read(
        &topic,
        &[&avro[..], &["-X", "basic.auth.user.info=alice:wrong-pw"]].concat(),
    );
    assert_eq!(code, Some(6), "{stderr}");
    assert!(!stderr.contains("wrong-pw"), "{stderr}");

    let dead = Registry::start(&[]).url.clone();
    let (code, stdout, stderr) = kseek_read(&topic, &["-s", "value=avro", "-r", &dead]);
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("could not be reached"), "{stderr}");
}

/// Certificates of `tests/kafka/secure.sh` (a CA, a server certificate for 127.0.0.1, a client
/// certificate, an untrusted CA) in a fresh folder.
fn certificates() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(support::unique_name("kseek-registry-tls"));
    let status = Command::new("bash")
        .arg("-c")
        .arg("set -euo pipefail; source \"$0/tests/kafka/secure.sh\"; secure_make_certs \"$1\"")
        .arg(support::repo_root())
        .arg(&dir)
        .status()
        .expect("running secure_make_certs");
    assert!(status.success(), "secure_make_certs failed");
    dir
}

/// A registry behind TLS that wants a client certificate and basic auth: kseek reaches it with
/// `schema.registry.ssl.*` and `basic.auth.user.info` from a properties file, and reads what
/// Confluent's serializer wrote over the same TLS; a CA it does not trust is refused (exit 6).
#[test]
fn registry_over_tls_with_a_client_certificate_and_basic_auth() {
    let broker = support::broker();
    let certs = certificates();
    let path = |name: &str| certs.join(name).to_str().unwrap().to_owned();
    let registry = Registry::start(&[
        "--cert",
        &path("broker.crt"),
        "--key",
        &path("broker.key"),
        "--client-ca",
        &path("ca.pem"),
        "--user",
        "alice:tls-s3cret",
    ]);
    assert!(registry.url.starts_with("https://"), "{}", registry.url);
    let topic = support::unique_name("avro-tls");
    let tls_env = [("KSEEK_REGISTRY_TLS", certs.to_str().unwrap())];
    let (ok, out) = confluent_with(
        &[
            "produce",
            broker.bootstrap(),
            &registry.url,
            &topic,
            "alice:tls-s3cret",
        ],
        &tls_env,
    );
    assert!(ok, "{out}");
    let properties = certs.join("registry.properties");
    let write = |ca: &str| {
        std::fs::write(
            &properties,
            format!(
                "schema.registry.url={}\n\
                 basic.auth.credentials.source=USER_INFO\n\
                 schema.registry.basic.auth.user.info=alice:tls-s3cret\n\
                 schema.registry.ssl.ca.location={}\n\
                 schema.registry.ssl.certificate.location={}\n\
                 schema.registry.ssl.key.location={}\n",
                registry.url,
                path(ca),
                path("client.crt"),
                path("client.key")
            ),
        )
        .unwrap();
    };
    write("ca.pem");
    let args = [
        "-s",
        "key=string",
        "-s",
        "value=avro",
        "--config",
        properties.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = kseek_read(&topic, &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert_confluent_agrees(
        "compare",
        &registry,
        &topic,
        &stdout,
        &[tls_env[0], ("KSEEK_REGISTRY_USER_INFO", "alice:tls-s3cret")],
        41,
    );

    // A CA that did not sign the registry's certificate: refused, named, exit 6.
    write("untrusted-ca.pem");
    let (code, stdout, stderr) = kseek_read(&topic, &args);
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("could not be reached"), "{stderr}");
    assert!(!stderr.contains("tls-s3cret"), "{stderr}");
    let _ = std::fs::remove_dir_all(&certs);
}

/// `-s value=avro --output FILE.parquet`: the values as one struct column of the subject's
/// latest schema (decimals as decimals, timestamps as timestamps, enums, maps, nested
/// records), older versions resolved to it; pyarrow reads the file, and each value equals what
/// Confluent's deserializer reads in the same reader schema. A value that does not decode
/// leaves no file (exit 5), or is left out with --on-decode-error skip.
#[test]
fn avro_values_as_typed_parquet_columns() {
    let broker = support::broker();
    let registry = Registry::start(&[]);
    let topic = support::unique_name("avro-table");
    let table = [("KSEEK_AVRO_PROFILE", "table")];
    let (ok, out) = confluent_with(
        &["produce", broker.bootstrap(), &registry.url, &topic],
        &table,
    );
    assert!(ok, "{out}");
    let dir = std::env::temp_dir().join(support::unique_name("kseek-avro-parquet"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("values.parquet");
    let avro = ["-s", "value=avro", "-r", registry.url.as_str()];
    let (code, _, stderr) = kseek_read(
        &topic,
        &[&avro[..], &["-o", file.to_str().unwrap()]].concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (ok, out) = confluent_with(
        &[
            "compare-table",
            broker.bootstrap(),
            &registry.url,
            &topic,
            file.to_str().unwrap(),
        ],
        &table,
    );
    assert!(
        ok && out.contains("41 records compared, 0 mismatches"),
        "{out}"
    );
    assert!(
        out.contains("dec: decimal128(9, 2)") && out.contains("tsm: timestamp[ms, tz=+00:00]"),
        "{out}"
    );

    // Read in version 2 (the latest) by name: the same file; in version 1, whose field "s"
    // (no default) version 2 removed: version 2's values can't be read in it (exit 5, named).
    let v2 = dir.join("v2.parquet");
    let (code, _, stderr) = kseek_read(
        &topic,
        &[
            &avro[..],
            &["-o", v2.to_str().unwrap(), "--value-schema", "version:2"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        std::fs::read(&v2).unwrap().len(),
        std::fs::read(&file).unwrap().len()
    );
    let v1 = dir.join("v1.parquet");
    let (code, _, stderr) = kseek_read(
        &topic,
        &[
            &avro[..],
            &["-o", v1.to_str().unwrap(), "--value-schema", "version:1"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("can't be read as the reader schema"),
        "{stderr}"
    );
    assert!(!v1.exists());

    // A value that is not Avro: no file, exit 5; skipped, the rest is there.
    broker.produce(
        &topic,
        &[NewRecord::new().partition(0).value("plain text").into()],
    );
    let bad = dir.join("bad.parquet");
    let (code, _, stderr) = kseek_read(
        &topic,
        &[&avro[..], &["-o", bad.to_str().unwrap()]].concat(),
    );
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("partition 0") && stderr.contains("offset 21"),
        "{stderr}"
    );
    assert!(!bad.exists());
    let skipped = dir.join("skipped.parquet");
    let (code, _, stderr) = kseek_read(
        &topic,
        &[
            &avro[..],
            &["-o", skipped.to_str().unwrap(), "--on-decode-error", "skip"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("1 skipped"), "{stderr}");
    // The 41 values Confluent's serializer wrote, without the one that is not Avro.
    let rows = Command::new(python())
        .args(["-c", "import sys, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); print(t.num_rows, t.column('value').null_count, max(t.column('offset').to_pylist()))"])
        .arg(&skipped)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&rows.stdout).trim(),
        "41 1 20",
        "{rows:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-s value=protobuf`: values of three message types of one schema (message indexes [0],
/// [0, 0] and [1]) with nested messages, oneof, repeated fields, maps, enums, well-known types
/// and an import, registered as `.proto` text (with a reference) and, by the serializer
/// itself, as a base64 descriptor; kseek's JSON is what Confluent's ProtobufDeserializer reads,
/// printed by MessageToDict. `-s value=registry` finds the same from the schema's type.
#[test]
fn protobuf_values_match_confluents_deserializer() {
    let broker = support::broker();
    let registry = Registry::start(&[]);
    let topic = support::unique_name("proto");
    let (ok, out) = confluent(&["produce-proto", broker.bootstrap(), &registry.url, &topic]);
    assert!(ok, "{out}");
    let (code, stdout, stderr) = kseek_read(&topic, &["-s", "value=protobuf", "-r", &registry.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 31, "{stderr}");
    assert_confluent_agrees("compare-proto", &registry, &topic, &stdout, &[], 31);

    let (code, auto, stderr) = kseek_read(&topic, &["-s", "value=registry", "-r", &registry.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(auto, stdout);
    // Read as Avro, a Protobuf value is named for what it is.
    let (code, _, stderr) = kseek_read(&topic, &["-s", "value=avro", "-r", &registry.url]);
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("is a PROTOBUF schema, not avro"),
        "{stderr}"
    );
}

/// A registry that answers 500 a few times is retried (the schema arrives, every record
/// prints); one that keeps failing past the retry deadline ends the read with exit 6, nothing
/// printed.
#[test]
fn registry_failures_are_retried_until_the_deadline() {
    let broker = support::broker();
    let flaky = Registry::start(&["--fail-ids", "3"]);
    let topic = support::unique_name("avro-flaky");
    let (ok, out) = confluent(&["produce", broker.bootstrap(), &flaky.url, &topic]);
    assert!(ok, "{out}");
    let (code, stdout, stderr) = kseek_read(&topic, &["-s", "value=avro", "-r", &flaky.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 41);

    let down = Registry::start(&["--fail-ids", "1000000"]);
    let (ok, out) = confluent(&["produce", broker.bootstrap(), &down.url, &topic]);
    assert!(ok, "{out}");
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = kseek_read(&topic, &["-s", "value=avro", "-r", &down.url]);
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("answered 500") && stderr.contains("injected failure"),
        "{stderr}"
    );
    // Given up at the deadline (--retry-deadline 3s), not at once.
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "{stderr}"
    );
}

/// `-s value=jsonschema` (and `registry`): values written by Confluent's JSONSerializer print as
/// the JSON JSONDeserializer reads.
#[test]
fn json_schema_values_match_confluents_deserializer() {
    let broker = support::broker();
    let registry = Registry::start(&[]);
    let topic = support::unique_name("jsonschema");
    let (ok, out) = confluent(&["produce-json", broker.bootstrap(), &registry.url, &topic]);
    assert!(ok, "{out}");
    let (code, stdout, stderr) = kseek_read(&topic, &["-s", "value=jsonschema"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_confluent_agrees("compare-json", &registry, &topic, &stdout, &[], 20);
    let (code, auto, stderr) = kseek_read(&topic, &["-s", "value=registry", "-r", &registry.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(auto, stdout);
}

/// `-s key=avro -s value=avro -o FILE.parquet`: Avro keys (subject `<topic>-key`) become a
/// struct column too; both columns equal what Confluent's deserializer reads.
#[test]
fn avro_keys_and_values_as_parquet_columns() {
    let broker = support::broker();
    let registry = Registry::start(&[]);
    let topic = support::unique_name("avro-keys");
    let env = [("KSEEK_AVRO_PROFILE", "table"), ("KSEEK_AVRO_KEYS", "1")];
    let (ok, out) = confluent_with(
        &["produce", broker.bootstrap(), &registry.url, &topic],
        &env,
    );
    assert!(ok, "{out}");
    let file = std::env::temp_dir().join(support::unique_name("kseek-keys.parquet"));
    let avro = ["-s", "key=avro", "-s", "value=avro", "-r", &registry.url];
    let (code, stderr) = kseek_read_parquet(&topic, &avro, &file);
    assert_eq!(code, Some(0), "{stderr}");
    let out = assert_table_agrees(broker, &registry, &topic, &file, &env);
    assert!(
        out.contains("key column type: struct<name: string not null, shard: int32 not null>"),
        "{out}"
    );
}

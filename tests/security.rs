//! kseek against secured Kafka 4.4 and 3.9 brokers (`tests/kafka/broker start --security`):
//! exact time windows, resolves and commits over SASL_SSL (SCRAM-SHA-512, PLAIN), SSL with a
//! client certificate, and SASL_PLAINTEXT (SCRAM-SHA-256, OAUTHBEARER), configured from the
//! `client.properties` and kcat config files users already have; every error a user can meet
//! there; ACLs; and KIP-368 re-authentication during a long read. The `kseek` command line
//! reads an exact window with `--config client.properties`.

#![cfg(all(feature = "tls", feature = "sasl"))]

mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kseek::properties::Properties;
use kseek::{
    ClientConfig, CommitOffset, Connection, End, ErrorKind, ReadOptions, ReadRecord, ReadSpec,
    Start,
};
use kseek_protocol::messages::metadata::MetadataRequest;
use support::secure::{
    secure_broker, secure_brokers, ClientCert, ClientSpec, Listener, Mechanism, SecureBroker, Trust,
};
use support::{NewRecord, Record};

/// A client config from the Java `client.properties` (or the librdkafka file) of `spec`.
fn config_of(spec: &ClientSpec<'_>, librdkafka: bool) -> ClientConfig {
    let text = if librdkafka {
        spec.librdkafka_properties()
    } else {
        spec.java_properties()
    };
    let mut properties = Properties::new();
    properties
        .add_text(&text, "client.properties")
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut config = ClientConfig::default();
    properties
        .apply(&mut config)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    config.retry_deadline = Duration::from_secs(10);
    config
}

async fn connect(spec: &ClientSpec<'_>, librdkafka: bool) -> kseek::Result<kseek::Client> {
    kseek::Client::with_config(config_of(spec, librdkafka)).await
}

const TEN: i64 = 1_767_261_600_000; // 2026-01-01T10:00:00Z
const MINUTE: i64 = 60_000;

/// Two partitions, one record a minute from 09:55 to 10:10 in each.
fn window_topic(broker: &SecureBroker) -> (String, Vec<Record>) {
    let plain = broker.plaintext();
    let topic = plain.new_topic("secure", 2, &[]);
    let input: Vec<_> = (0..16)
        .flat_map(|i| {
            (0..2).map(move |p| {
                NewRecord::new()
                    .partition(p)
                    .timestamp(TEN - 5 * MINUTE + i * MINUTE)
                    .key(format!("k{i}"))
                    .value(format!("v{i}-p{p}"))
                    .into()
            })
        })
        .collect();
    let written = plain.produce(&topic, &input);
    (topic, written)
}

async fn read_window(client: &kseek::Client, topic: &str) -> kseek::Result<Vec<ReadRecord>> {
    let spec = ReadSpec::new(
        [topic],
        Start::Timestamp(TEN),
        End::Timestamp(TEN + 5 * MINUTE),
    );
    let plan = client.resolve(&spec).await?;
    let mut records = client.read(plan, ReadOptions::default()).records();
    let mut seen = Vec::new();
    while let Some(record) = records.next().await {
        seen.push(record?);
    }
    Ok(seen)
}

fn assert_window(got: &[ReadRecord], written: &[Record], what: &str) {
    let mut expected: Vec<(i32, i64, Option<Vec<u8>>)> = written
        .iter()
        .filter(|r| (TEN..TEN + 5 * MINUTE).contains(&r.timestamp))
        .map(|r| (r.partition, r.offset, r.value.clone()))
        .collect();
    expected.sort();
    let mut got: Vec<(i32, i64, Option<Vec<u8>>)> = got
        .iter()
        .map(|r| (r.partition, r.offset, r.value.as_ref().map(|v| v.to_vec())))
        .collect();
    got.sort();
    assert_eq!(expected.len(), 10, "5 minutes x 2 partitions");
    assert_eq!(got, expected, "{what}");
}

#[tokio::test]
async fn exact_windows_resolves_and_commits_over_every_secured_listener() {
    for broker in secure_brokers() {
        let (topic, written) = window_topic(broker);
        let clients = [
            (broker.client(Listener::SaslSsl), false),
            (
                broker.client(Listener::SaslSsl).mechanism(Mechanism::Plain),
                true,
            ),
            (broker.client(Listener::Ssl), false),
            (broker.client(Listener::Ssl), true),
            (
                broker
                    .client(Listener::SaslPlaintext)
                    .mechanism(Mechanism::ScramSha256),
                false,
            ),
            (broker.client(Listener::SaslPlaintext), true),
        ];
        for (spec, librdkafka) in &clients {
            let what = format!(
                "Kafka {:?} {:?} {:?} ({})",
                broker.version(),
                spec.listener(),
                spec.sasl_mechanism(),
                if *librdkafka {
                    "librdkafka names"
                } else {
                    "Java client names"
                }
            );
            let client = connect(spec, *librdkafka)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = read_window(&client, &topic)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_window(&got, &written, &what);

            // Resolve and commit: where the window ends, seen by the group afterwards.
            let group = support::unique_name("secure-group");
            let spec = ReadSpec::new([topic.as_str()], Start::Earliest, End::Timestamp(TEN));
            let plan = client.resolve(&spec).await.unwrap();
            let commits: Vec<CommitOffset> = plan
                .partitions
                .iter()
                .map(|p| CommitOffset {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    offset: p.end.expect("a bounded end"),
                    metadata: None,
                    leader_epoch: -1,
                })
                .collect();
            assert_eq!(commits.iter().map(|c| c.offset).collect::<Vec<_>>(), [5, 5]);
            client
                .commit(&group, &commits)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let committed = client
                .committed(&group, std::slice::from_ref(&topic))
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let offsets: BTreeMap<i32, i64> = committed
                .iter()
                .map(|c| (c.partition, c.offset.expect("committed")))
                .collect();
            assert_eq!(offsets, BTreeMap::from([(0, 5), (1, 5)]), "{what}");
        }
    }
}

#[tokio::test]
async fn oauthbearer_with_a_static_token_and_with_a_token_command() {
    let broker = secure_broker();
    let (topic, written) = window_topic(broker);
    let token = support::secure::unsecured_jwt("alice", 3600);
    let bootstrap = broker.bootstrap(Listener::SaslPlaintext);
    for (key, value) in [
        ("sasl.oauthbearer.token", token.clone()),
        (
            "sasl.oauthbearer.token.command",
            format!("printf '%s\\n' '{token}'"),
        ),
    ] {
        let mut properties = Properties::new();
        for assignment in [
            format!("bootstrap.servers={bootstrap}"),
            "security.protocol=SASL_PLAINTEXT".to_owned(),
            "sasl.mechanism=OAUTHBEARER".to_owned(),
            format!("{key}={value}"),
        ] {
            properties.add_assignment(&assignment).unwrap();
        }
        let mut config = ClientConfig::default();
        properties.apply(&mut config).unwrap();
        let client = kseek::Client::with_config(config)
            .await
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        let got = read_window(&client, &topic).await.unwrap();
        assert_window(&got, &written, key);
    }
}

/// Forwards connections to `target` and counts them.
struct CountingForwarder {
    address: String,
    accepted: Arc<AtomicUsize>,
}

impl CountingForwarder {
    fn start(target: &str) -> CountingForwarder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let target = target.to_owned();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        CountingForwarder { address, accepted }
    }
}

#[tokio::test]
async fn a_wrong_password_fails_at_once_naming_the_mechanism_and_the_broker_message() {
    let broker = secure_broker();
    for spec in [
        broker
            .client(Listener::SaslSsl)
            .password("not-the-password"),
        broker
            .client(Listener::SaslSsl)
            .mechanism(Mechanism::Plain)
            .password("not-the-password"),
        broker
            .client(Listener::SaslPlaintext)
            .mechanism(Mechanism::ScramSha256)
            .password("not-the-password"),
    ] {
        // Two bootstrap entries through one counting forwarder: each is one connection.
        let forwarder = CountingForwarder::start(spec.bootstrap());
        let mut config = config_of(&spec, false);
        config.bootstrap = vec![forwarder.address.clone(), forwarder.address.clone()];
        let started = Instant::now();
        let err = kseek::Client::with_config(config).await.unwrap_err();
        let elapsed = started.elapsed();
        let mechanism = spec.sasl_mechanism().unwrap().name();
        match err.kind() {
            ErrorKind::Authentication {
                mechanism: m,
                message,
                ..
            } => {
                assert_eq!(m, mechanism);
                assert!(
                    message.contains("SASL_AUTHENTICATION_FAILED")
                        || message.contains("Authentication failed"),
                    "{err}"
                );
            }
            other => panic!("{mechanism}: expected an authentication error, got {other:?}"),
        }
        let line = err.to_string();
        assert!(!line.contains("not-the-password"), "{line}");
        assert!(!line.contains('\n'), "{line}");
        assert!(elapsed < Duration::from_secs(5), "{mechanism}: {elapsed:?}");
        assert_eq!(
            forwarder.accepted.load(Ordering::SeqCst),
            1,
            "{mechanism}: one attempt, no retry"
        );
        assert!(!err.is_retriable());
    }
}

#[tokio::test]
async fn an_unsupported_mechanism_lists_what_the_broker_enables() {
    let broker = secure_broker();
    let spec = broker
        .client(Listener::SaslSsl)
        .mechanism(Mechanism::ScramSha256);
    let err = connect(&spec, false).await.unwrap_err();
    let line = err.to_string();
    assert!(
        matches!(err.kind(), ErrorKind::Authentication { .. }),
        "{line}"
    );
    assert!(
        line.contains("does not enable SCRAM-SHA-256") && line.contains("SCRAM-SHA-512, PLAIN"),
        "{line}"
    );
}

/// A config for `bootstrap` with `protocol`, trusting the test CA, with alice's SCRAM
/// credentials when it uses SASL.
fn mismatched(broker: &SecureBroker, bootstrap: &str, protocol: &str) -> ClientConfig {
    let mut properties = Properties::new();
    let mut settings = vec![
        format!("bootstrap.servers={bootstrap}"),
        format!("security.protocol={protocol}"),
    ];
    if protocol.contains("SSL") {
        settings.push(format!("ssl.ca.location={}", broker.ca_file().display()));
    }
    if protocol.starts_with("SASL") {
        settings.push("sasl.mechanism=SCRAM-SHA-512".to_owned());
        settings.push("sasl.username=alice".to_owned());
        settings.push(format!("sasl.password={}", broker.password("alice")));
    }
    for setting in &settings {
        properties.add_assignment(setting).unwrap();
    }
    let mut config = ClientConfig::default();
    properties.apply(&mut config).unwrap();
    config.connection.connect_timeout = Duration::from_secs(5);
    config.connection.request_timeout = Duration::from_secs(5);
    config
}

#[tokio::test]
async fn tls_to_a_plaintext_port_and_plaintext_to_a_tls_port_are_clear_errors() {
    let broker = secure_broker();

    // TLS spoken to the PLAINTEXT listener.
    let started = Instant::now();
    let config = mismatched(broker, broker.plaintext().bootstrap(), "SSL");
    let err = kseek::Client::with_config(config).await.unwrap_err();
    let line = err.to_string();
    assert!(matches!(err.kind(), ErrorKind::Tls { .. }), "{line}");
    assert!(line.contains("PLAINTEXT"), "{line}");
    assert!(started.elapsed() < Duration::from_secs(5), "never hangs");

    // Plaintext spoken to the SSL listener.
    let started = Instant::now();
    let config = mismatched(broker, broker.bootstrap(Listener::Ssl), "PLAINTEXT");
    let err = kseek::Client::with_config(config).await.unwrap_err();
    let line = err.to_string();
    assert!(line.contains("TLS") || line.contains("SSL"), "{line}");
    assert!(!line.contains("bad frame"), "not a corrupt frame: {line}");
    assert!(started.elapsed() < Duration::from_secs(5), "never hangs");

    // No SASL spoken to a SASL listener.
    let config = mismatched(
        broker,
        broker.bootstrap(Listener::SaslPlaintext),
        "PLAINTEXT",
    );
    let err = kseek::Client::with_config(config).await.unwrap_err();
    let line = err.to_string();
    assert!(line.contains("SASL"), "{line}");
}

#[tokio::test]
async fn an_untrusted_certificate_or_a_wrong_host_names_the_subject_and_what_was_expected() {
    let broker = secure_broker();
    let err = connect(
        &broker.client(Listener::SaslSsl).trust(Trust::UntrustedCa),
        false,
    )
    .await
    .unwrap_err();
    let line = err.to_string();
    assert!(matches!(err.kind(), ErrorKind::Tls { .. }), "{line}");
    assert!(
        line.contains("CN=") && line.contains("not signed by a trusted CA"),
        "{line}"
    );

    let err = connect(&broker.client(Listener::SaslSslWrongHost), false)
        .await
        .unwrap_err();
    let line = err.to_string();
    assert!(matches!(err.kind(), ErrorKind::Tls { .. }), "{line}");
    assert!(
        line.contains("not valid for 127.0.0.1") && line.contains(broker.wrong_host_name()),
        "{line}"
    );

    // With hostname verification off (explicitly), the same listener is accepted.
    let client = connect(
        &broker
            .client(Listener::SaslSslWrongHost)
            .no_hostname_verification(),
        false,
    )
    .await
    .unwrap();
    client.cluster_metadata().await.unwrap();

    // mTLS: no client certificate, and one the broker doesn't trust.
    for cert in [ClientCert::None, ClientCert::Untrusted] {
        let err = connect(&broker.client(Listener::Ssl).client_cert(cert), false)
            .await
            .unwrap_err();
        let line = err.to_string();
        assert!(
            matches!(err.kind(), ErrorKind::Tls { .. }),
            "{cert:?}: {line}"
        );
        assert!(line.contains("client certificate"), "{cert:?}: {line}");
    }
}

#[tokio::test]
async fn acls_name_the_topic_or_the_group() {
    let broker = secure_broker();
    let (topic, _) = window_topic(broker);

    // bob may describe topics but not read them.
    let bob = connect(&broker.client(Listener::SaslSsl).user("bob"), false)
        .await
        .unwrap();
    let err = read_window(&bob, &topic).await.unwrap_err();
    let line = err.to_string();
    assert!(
        line.contains("TOPIC_AUTHORIZATION_FAILED") && line.contains(&topic),
        "{line}"
    );

    // carol may read topics but has no ACL on any group.
    let carol = connect(&broker.client(Listener::SaslSsl).user("carol"), false)
        .await
        .unwrap();
    read_window(&carol, &topic).await.unwrap();
    let group = support::unique_name("carol-group");
    let err = carol
        .committed(&group, std::slice::from_ref(&topic))
        .await
        .unwrap_err();
    let line = err.to_string();
    assert!(
        line.contains("GROUP_AUTHORIZATION_FAILED") && line.contains(&group),
        "{line}"
    );
}

#[tokio::test]
async fn sessions_are_renewed_during_a_long_read_without_losing_or_repeating_a_record() {
    // Sessions of 3 s: a read of 12 s renews its connections several times.
    let broker = SecureBroker::start(
        support::KafkaVersion::V4_4,
        &["connections.max.reauth.ms=3000"],
    );
    let spec = broker.client(Listener::SaslSsl);

    // One connection, a request every 500 ms for 10 s: without re-authentication the broker
    // closes it at the first request after 3 s.
    let config = config_of(&spec, false);
    let conn = Connection::connect(spec.bootstrap(), config.connection.clone())
        .await
        .unwrap();
    let mut ticks = tokio::time::interval(Duration::from_millis(500));
    for _ in 0..20 {
        ticks.tick().await;
        conn.send(&MetadataRequest::default())
            .await
            .unwrap_or_else(|e| panic!("the session was not renewed: {e}"));
    }
    assert_eq!(conn.closed_reason(), None);

    // A following read while records arrive in bursts over 10 s: every record exactly once.
    let plain = broker.plaintext();
    let topic = plain.new_topic("reauth", 2, &[]);
    let client = kseek::Client::with_config(config).await.unwrap();
    let spec = ReadSpec::new([topic.as_str()], Start::Earliest, End::Unbounded);
    let plan = client.resolve(&spec).await.unwrap();
    let mut records = client.read(plan, ReadOptions::default()).records();
    let bursts = 5;
    let per_burst = 40;
    let mut written = Vec::new();
    let mut got: Vec<(i32, i64)> = Vec::new();
    for burst in 0..bursts {
        let input: Vec<_> = (0..per_burst)
            .map(|i| {
                NewRecord::new()
                    .partition(i % 2)
                    .value(format!("b{burst}-{i}"))
                    .into()
            })
            .collect();
        written.extend(plain.produce(&topic, &input));
        while got.len() < written.len() {
            let record = tokio::time::timeout(Duration::from_secs(30), records.next())
                .await
                .expect("records arrive")
                .expect("the read goes on")
                .unwrap();
            got.push((record.partition, record.offset));
        }
        // Let the sessions age past their lifetime before the next burst.
        ticks.tick().await;
        ticks.tick().await;
        ticks.tick().await;
        ticks.tick().await;
    }
    let mut expected: Vec<(i32, i64)> = written.iter().map(|r| (r.partition, r.offset)).collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn the_tls_handshake_names_the_host_by_sni_and_an_ip_address_not() {
    // A listener that records the ClientHello and closes: the SNI extension carries the host
    // name (RFC 6066), never an IP address.
    async fn client_hello(host: &str) -> Vec<u8> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accept = tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut hello = vec![0u8; 4096];
            let n = sock.read(&mut hello).await.unwrap();
            hello.truncate(n);
            hello
        });
        let mut config = ClientConfig::new([format!("{host}:{port}")]);
        config.connection.security =
            std::sync::Arc::new(kseek::SecurityConfig::ssl(kseek::TlsConfig::default()));
        config.connection.connect_timeout = Duration::from_secs(5);
        let err = kseek::Client::with_config(config).await.unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Tls { .. }), "{err}");
        accept.await.unwrap()
    }
    let hello = client_hello("localhost").await;
    assert_eq!(hello.first(), Some(&0x16), "a TLS handshake record");
    assert!(
        hello.windows(b"localhost".len()).any(|w| w == b"localhost"),
        "SNI names localhost"
    );
    let hello = client_hello("127.0.0.1").await;
    assert!(!hello.windows(b"127.0.0.1".len()).any(|w| w == b"127.0.0.1"));
}

/// The command line with users' own files: `--config client.properties` (Java names) and
/// kcat's `-F` file (librdkafka names), `-X` on top; one-line errors with exit 3 (Kafka) or 2
/// (settings), never a secret.
#[cfg(feature = "cli")]
mod cli {
    use std::process::Command;

    use super::*;

    struct Run {
        code: Option<i32>,
        stdout: String,
        stderr: String,
    }

    fn kseek(args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
        cmd.args(args).env_remove("KSEEK_BOOTSTRAP");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn rfc3339(ms: i64) -> String {
        // 2026-01-01T10:00:00Z is TEN; the window is whole minutes after it.
        let minutes = (ms - TEN) / MINUTE;
        format!("2026-01-01T10:{minutes:02}:00Z")
    }

    fn window_args<'a>(topic: &'a str, from: &'a str, to: &'a str) -> Vec<&'a str> {
        vec![
            "read",
            "--topic",
            topic,
            "--from",
            from,
            "--to",
            to,
            "--format",
            "%p %o %s\n",
            "-q",
        ]
    }

    #[test]
    fn read_with_a_client_properties_file_prints_exactly_the_window() {
        let broker = secure_broker();
        let (topic, written) = window_topic(broker);
        let (from, to) = (rfc3339(TEN), rfc3339(TEN + 5 * MINUTE));
        let mut expected: Vec<String> = written
            .iter()
            .filter(|r| (TEN..TEN + 5 * MINUTE).contains(&r.timestamp))
            .map(|r| {
                format!(
                    "{} {} {}",
                    r.partition,
                    r.offset,
                    String::from_utf8_lossy(r.value.as_deref().unwrap_or_default())
                )
            })
            .collect();
        expected.sort();
        for (spec, flag, librdkafka) in [
            (broker.client(Listener::SaslSsl), "--config", false),
            (
                broker.client(Listener::SaslSsl).mechanism(Mechanism::Plain),
                "-F",
                true,
            ),
            (broker.client(Listener::Ssl), "--config", false),
        ] {
            let file = if librdkafka {
                spec.write_librdkafka_properties()
            } else {
                spec.write_java_properties()
            };
            let file = file.display().to_string();
            let mut args = window_args(&topic, &from, &to);
            args.extend([flag, file.as_str()]);
            let run = kseek(&args, &[]);
            assert_eq!(run.code, Some(0), "{:?}: {}", spec.listener(), run.stderr);
            let mut got: Vec<String> = run.stdout.lines().map(str::to_owned).collect();
            got.sort();
            assert_eq!(got, expected, "{:?} {flag}", spec.listener());
            let _ = std::fs::remove_file(&file);
        }
    }

    /// A new window topic, its first five minutes as `--from`/`--to`, and how many records
    /// they hold.
    fn five_minutes(broker: &SecureBroker) -> (String, String, String, usize) {
        let (topic, written) = window_topic(broker);
        let expected = written
            .iter()
            .filter(|r| (TEN..TEN + 5 * MINUTE).contains(&r.timestamp))
            .count();
        (topic, rfc3339(TEN), rfc3339(TEN + 5 * MINUTE), expected)
    }

    /// A Java consumer's consumer.properties as users keep it: group and deserializer settings,
    /// TLS versions, and `ssl.key.password` left in after the keystore was converted to PEM.
    /// It works unchanged over mTLS; the group is ignored with one notice and never committed
    /// to; `-v` lists what was not used.
    #[test]
    fn a_consumer_properties_file_works_as_it_is() {
        let broker = secure_broker();
        let (topic, from, to, expected) = five_minutes(broker);
        let spec = broker.client(Listener::Ssl);
        let group = support::unique_name("app-group");
        let text = format!(
            "{}group.id={group}\n\
             client.id=reports\n\
             auto.offset.reset=earliest\n\
             enable.auto.commit=false\n\
             key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n\
             value.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n\
             max.poll.records=500\n\
             session.timeout.ms=45000\n\
             ssl.enabled.protocols=TLSv1.2,TLSv1.3\n\
             ssl.protocol=TLSv1.3\n\
             ssl.key.password=changeit\n",
            spec.java_properties()
        );
        let file = std::env::temp_dir().join(support::unique_name("consumer.properties"));
        std::fs::write(&file, text).unwrap();
        let file_arg = file.display().to_string();
        let mut args = window_args(&topic, &from, &to);
        args.extend(["--config", file_arg.as_str(), "-v"]);
        let run = kseek(&args, &[]);
        // The file's group.id does not stand in for --group: --commit still needs one named.
        args.push("--commit");
        let commit = kseek(&args, &[]);
        let _ = std::fs::remove_file(&file);
        assert_eq!(commit.code, Some(2), "{}", commit.stderr);
        assert!(commit.stderr.contains("--group"), "{}", commit.stderr);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(run.stdout.lines().count(), expected, "{}", run.stdout);
        let notices: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("group.id"))
            .collect();
        assert_eq!(notices.len(), 2, "{}", run.stderr);
        assert!(notices[0].contains(": group.id: ignored"), "{}", run.stderr);
        assert!(
            notices[1].starts_with("kseek: properties accepted but not used by a reader: group.id")
                && notices[1].contains("max.poll.records"),
            "{}",
            run.stderr
        );
    }

    /// A Java client's truststore as users have it (JKS, its password line first): the one
    /// error names the file and the exact command that converts it; running that command and
    /// setting the properties it names makes the read work.
    #[test]
    fn a_jks_truststore_gets_the_command_that_converts_it_and_that_command_works() {
        let broker = secure_broker();
        let (topic, from, to, expected) = five_minutes(broker);
        let spec = broker.client(Listener::Ssl);
        let dir = std::env::temp_dir().join(support::unique_name("kseek-jks"));
        std::fs::create_dir_all(&dir).unwrap();
        let jks = dir.join("client.truststore.jks");
        let made = Command::new("keytool")
            .args([
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-storetype",
                "JKS",
            ])
            .args(["-storepass", "changeit", "-keystore"])
            .arg(&jks)
            .arg("-file")
            .arg(spec.ca_file())
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let others: String = spec
            .java_properties()
            .lines()
            .filter(|l| !l.starts_with("ssl.truststore."))
            .map(|l| format!("{l}\n"))
            .collect();
        let properties = |trust: &str| {
            let file = dir.join(support::unique_name("client.properties"));
            std::fs::write(&file, format!("{trust}{others}")).unwrap();
            file.display().to_string()
        };
        let file = properties(&format!(
            "ssl.truststore.password=changeit\nssl.truststore.location={}\n",
            jks.display()
        ));
        let mut args = window_args(&topic, &from, &to);
        args.extend(["--config", file.as_str()]);
        let run = kseek(&args, &[]);
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        let line = run.stderr.trim_end();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.contains(&format!("{} is a JKS truststore", jks.display())),
            "{line}"
        );
        assert!(!line.contains("changeit"), "{line}");
        // Run the command exactly as printed, then set what it says.
        let command = line.split('`').nth(1).expect("a command in backticks");
        let converted = Command::new("sh")
            .arg("-c")
            .arg(format!("printf 'changeit\\n' | {command}"))
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(converted.status.success(), "{command}: {converted:?}");
        assert!(line.contains("set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM"));
        let file = properties(&format!(
            "ssl.truststore.location={}\nssl.truststore.type=PEM\n",
            dir.join("ca.pem").display()
        ));
        let mut args = window_args(&topic, &from, &to);
        args.extend(["--config", file.as_str()]);
        let run = kseek(&args, &[]);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(run.stdout.lines().count(), expected, "{}", run.stdout);
    }

    #[test]
    fn secrets_come_from_the_environment_and_never_show_in_errors() {
        let broker = secure_broker();
        let spec = broker.client(Listener::SaslSsl);
        let ca = format!("ssl.ca.location={}", broker.ca_file().display());
        let bootstrap = format!("bootstrap.servers={}", spec.bootstrap());
        let base = [
            "metadata",
            "-X",
            bootstrap.as_str(),
            "-X",
            "security.protocol=SASL_SSL",
            "-X",
            "sasl.mechanism=SCRAM-SHA-512",
            "-X",
            "sasl.username=alice",
            "-X",
            ca.as_str(),
        ];
        // The right password from the environment.
        let mut args = base.to_vec();
        args.extend(["-X", "sasl.password=${env:KSEEK_TEST_PASSWORD}"]);
        let run = kseek(&args, &[("KSEEK_TEST_PASSWORD", broker.password("alice"))]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);

        // A wrong one: exit 3, one line naming the mechanism, never the password.
        let run = kseek(&args, &[("KSEEK_TEST_PASSWORD", "hunter2-wrong")]);
        assert_eq!(run.code, Some(3), "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("SCRAM-SHA-512"), "{}", run.stderr);
        assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);

        // A variable that isn't set: exit 2, naming it.
        let run = kseek(&args, &[]);
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        assert!(run.stderr.contains("KSEEK_TEST_PASSWORD"), "{}", run.stderr);

        // An unknown property: exit 2, naming it; a secret given inline is not echoed.
        let mut args = base.to_vec();
        args.extend(["-X", "sasl.pasword=hunter2-typo"]);
        let run = kseek(&args, &[]);
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("sasl.pasword"), "{}", run.stderr);
        assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);

        // --help shows no secret either.
        let run = kseek(&["read", "--help"], &[("KSEEK_TEST_PASSWORD", "hunter2")]);
        assert!(!run.stdout.contains("hunter2"));
    }

    #[test]
    fn tls_and_certificate_errors_are_one_line_with_exit_3() {
        let broker = secure_broker();
        let untrusted = broker.client(Listener::SaslSsl).trust(Trust::UntrustedCa);
        let wrong_host = broker.client(Listener::SaslSslWrongHost);
        let no_cert = broker.client(Listener::Ssl).client_cert(ClientCert::None);
        for (spec, expect) in [
            (&untrusted, "not signed by a trusted CA"),
            (&wrong_host, "is not valid for 127.0.0.1"),
            (&no_cert, "client certificate"),
        ] {
            let file = spec.write_java_properties().display().to_string();
            let run = kseek(&["metadata", "--config", &file], &[]);
            let _ = std::fs::remove_file(&file);
            assert_eq!(run.code, Some(3), "{:?}: {}", spec.listener(), run.stderr);
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            assert!(run.stderr.contains(expect), "{}", run.stderr);
        }
        // Hostname verification off: a warning, then it works.
        let spec = broker
            .client(Listener::SaslSslWrongHost)
            .no_hostname_verification();
        let file = spec.write_java_properties().display().to_string();
        let run = kseek(&["metadata", "--config", &file], &[]);
        let _ = std::fs::remove_file(&file);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(
            run.stderr.contains("hostname verification is off"),
            "{}",
            run.stderr
        );
    }
}

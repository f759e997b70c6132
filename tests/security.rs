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
    secure_broker, secure_brokers, window_topic, ClientCert, ClientSpec, Listener, Mechanism,
    SecureBroker, Trust, MINUTE, TEN,
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

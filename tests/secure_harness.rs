//! The secured test broker (`tests/kafka/broker start --security`, `support::secure`) proven
//! with Kafka's own Java client, independently of kseek: every listener carries records with
//! the generated `client.properties`, the ACLs force TOPIC_AUTHORIZATION_FAILED and
//! GROUP_AUTHORIZATION_FAILED, the TLS and SASL failures happen as intended, and
//! `connections.max.reauth.ms` reaches the broker (read off a hand-made SaslAuthenticate); and
//! kcat reads with the generated librdkafka config files.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::secure::{
    base64url, secure_broker, secure_brokers, unsecured_jwt, ClientCert, ClientSpec, KtoolRun,
    Listener, Mechanism, SecureBroker, Trust,
};
use support::{unique_name, KafkaVersion, NewRecord, Record};

/// Every way in that should work: each listener, each mechanism it enables.
fn working_clients(broker: &SecureBroker) -> Vec<ClientSpec<'_>> {
    let mut clients = Vec::new();
    for listener in [Listener::SaslSsl, Listener::SaslPlaintext] {
        for &m in listener.mechanisms() {
            clients.push(broker.client(listener).mechanism(m));
        }
    }
    clients.push(broker.client(Listener::Ssl));
    clients.push(
        broker
            .client(Listener::SaslSslWrongHost)
            .no_hostname_verification(),
    );
    clients
}

fn describe(c: &ClientSpec<'_>) -> String {
    format!(
        "{:?} {}",
        c.listener(),
        c.sasl_mechanism().map_or("mTLS", Mechanism::name)
    )
}

#[test]
fn java_client_writes_and_reads_over_every_listener() {
    for broker in secure_brokers() {
        let topic = broker
            .plaintext()
            .new_topic("secure-every-listener", 1, &[]);
        let mut written: Vec<Record> = Vec::new();
        let mut clients = working_clients(broker);
        if broker.version() != KafkaVersion::V4_4 {
            // Every mechanism on 4.4; one client per listener on the older release (each JVM
            // run costs seconds).
            let mut listeners = Vec::new();
            clients.retain(|c| {
                let first = !listeners.contains(&c.listener());
                listeners.push(c.listener());
                first
            });
        }
        for (i, client) in clients.iter().enumerate() {
            let what = describe(client);
            let line = format!(
                "{{\"key\":\"{what}\",\"value\":\"record {i}\",\"timestamp\":{}}}\n",
                1_700_000_000_000i64 + i as i64
            );
            let run = broker.ktool_as(client, &["produce", "--topic", &topic], Some(&line));
            let mut got = run.records();
            assert_eq!(got.len(), 1, "{:?} {what}: {got:?}", broker.version());
            assert_eq!(got[0].offset, i as i64, "{what}");
            assert_eq!(got[0].value_str(), Some(format!("record {i}").as_str()));
            written.append(&mut got);
        }
        // Every listener reads back exactly what all of them wrote (one client per listener:
        // each JVM run costs seconds).
        let mut seen = Vec::new();
        for listener in Listener::ALL {
            let client = clients
                .iter()
                .find(|c| c.listener() == listener)
                .expect("a client per listener");
            let got = broker
                .ktool_as(client, &["consume", "--topic", &topic], None)
                .records();
            assert_eq!(got, written, "{:?} {}", broker.version(), describe(client));
            seen.push(describe(client));
        }
        // And so does the plain PLAINTEXT side.
        assert_eq!(broker.plaintext().consume(&topic), written);
        eprintln!("{:?}: wrote and read over {seen:?}", broker.version());
    }
}

#[test]
fn kcat_reads_with_the_librdkafka_config_files() {
    let version = std::process::Command::new("kcat").arg("-V").output();
    assert!(
        matches!(&version, Ok(o) if o.status.success()),
        "kcat is not installed (Debian/Ubuntu: apt-get install kcat): {version:?}"
    );
    for broker in secure_brokers() {
        let topic = broker.plaintext().new_topic("secure-kcat", 1, &[]);
        let written = broker.plaintext().produce(
            &topic,
            &[
                NewRecord::new()
                    .key("a")
                    .value("1")
                    .timestamp(1_700_000_000_000)
                    .into(),
                NewRecord::new()
                    .key("b")
                    .value("2")
                    .timestamp(1_700_000_000_001)
                    .into(),
            ],
        );
        let want: String = written
            .iter()
            .map(|r| {
                format!(
                    "{} {} {} {}\n",
                    r.partition,
                    r.offset,
                    String::from_utf8_lossy(r.key.as_deref().unwrap()),
                    r.value_str().unwrap()
                )
            })
            .collect();
        // Not the WRONGHOST listener: kcat 1.7.1 ignores ssl.endpoint.identification.algorithm=none
        // when it comes from a -F file (it takes it from -X).
        let mut clients = vec![
            broker.client(Listener::SaslSsl).mechanism(Mechanism::Plain),
            broker.client(Listener::Ssl),
            broker
                .client(Listener::SaslPlaintext)
                .mechanism(Mechanism::OAuthBearer),
        ];
        // librdkafka 2.0.2 (kcat 1.7.1) fails SCRAM against Kafka 4.4.0 ("invalid credentials"):
        // its client-final-message's nonce is the client nonce followed by the server's whole
        // nonce (which already starts with the client nonce), and 4.4 checks it; 3.9 does not.
        if broker.version() != KafkaVersion::V4_4 {
            clients.push(broker.client(Listener::SaslSsl));
            clients.push(
                broker
                    .client(Listener::SaslPlaintext)
                    .mechanism(Mechanism::ScramSha256),
            );
        }
        for client in &clients {
            let config = client.write_librdkafka_properties();
            let out = std::process::Command::new("kcat")
                .arg("-F")
                .arg(&config)
                .args(["-C", "-q", "-e", "-t", &topic, "-f", "%p %o %k %s\\n"])
                .stdin(std::process::Stdio::null())
                .output()
                .expect("running kcat");
            let _ = std::fs::remove_file(&config);
            assert!(
                out.status.success(),
                "{:?} {}: kcat failed: {}",
                broker.version(),
                describe(client),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                want,
                "{:?} {}",
                broker.version(),
                describe(client)
            );
        }
    }
}

/// Runs `args` as `client` and returns the failure's error name, asserting the tool failed with
/// a broker-side error (exit code 3).
fn failure(broker: &SecureBroker, client: &ClientSpec<'_>, args: &[&str]) -> (String, KtoolRun) {
    let run = broker.ktool_as(client, args, None);
    assert_eq!(
        run.code,
        Some(3),
        "{} {args:?} should fail with a Kafka error: {run:?}",
        describe(client)
    );
    let name = run.error().expect("an error name").to_owned();
    (name, run)
}

#[test]
fn acls_force_topic_and_group_authorization_failures() {
    for broker in secure_brokers() {
        let plain = broker.plaintext();
        let topic = plain.new_topic("secure-acl", 1, &[]);
        let written = plain.produce(
            &topic,
            &[
                NewRecord::new()
                    .key("a")
                    .value("1")
                    .timestamp(1_700_000_000_000)
                    .into(),
                NewRecord::new()
                    .key("b")
                    .value("2")
                    .timestamp(1_700_000_000_001)
                    .into(),
            ],
        );
        let group = unique_name("secure-acl-group");
        let as_user = |user: &str| broker.client(Listener::SaslSsl).user(user);
        let consume = ["consume", "--topic", topic.as_str()];
        let with_group = [&consume[..], &["--group", group.as_str()]].concat();
        let commit = [&with_group[..], &["--commit"]].concat();

        // alice may do everything: read, and commit in a group.
        let got = broker.ktool_as(&as_user("alice"), &commit, None).records();
        assert_eq!(got, written);
        assert_eq!(plain.describe_group(&group)[0].offset, Some(2));

        // bob: DESCRIBE but no READ on the topic. Metadata and ListOffsets work, Fetch fails.
        let offsets = broker.ktool_as(&as_user("bob"), &["list-offsets", "--topic", &topic], None);
        assert!(offsets.ok().contains("\"offset\":2"), "{offsets:?}");
        let (name, run) = failure(broker, &as_user("bob"), &consume);
        assert_eq!(name, "TOPIC_AUTHORIZATION_FAILED", "{run:?}");
        assert!(run.stderr.contains(&topic), "names the topic: {run:?}");

        // carol: READ on the topic, no group ACL. Without a group she reads; any group request
        // (here OffsetFetch, after FindCoordinator) fails.
        let got = broker.ktool_as(&as_user("carol"), &consume, None).records();
        assert_eq!(got, written);
        let (name, run) = failure(broker, &as_user("carol"), &with_group);
        assert_eq!(name, "GROUP_AUTHORIZATION_FAILED", "{run:?}");
        assert!(run.stderr.contains(&group), "names the group: {run:?}");

        // dave: DESCRIBE but no READ on the group: OffsetFetch works (he resumes from alice's
        // commit: nothing left), OffsetCommit fails.
        let got = broker
            .ktool_as(&as_user("dave"), &with_group, None)
            .records();
        assert_eq!(got, Vec::<Record>::new());
        let (name, run) = failure(broker, &as_user("dave"), &commit);
        assert_eq!(name, "GROUP_AUTHORIZATION_FAILED", "{run:?}");
        assert!(run.stderr.contains(&group), "names the group: {run:?}");
    }
}

#[test]
fn tls_and_sasl_failures_happen_as_intended() {
    let broker = secure_broker();
    let topic = broker.plaintext().new_topic("secure-failures", 1, &[]);
    let args = ["list-offsets", "--topic", topic.as_str()];
    let cases: Vec<(ClientSpec<'_>, &str, &str)> = vec![
        (
            broker.client(Listener::SaslSsl).password("wrong-password"),
            "SASL_AUTHENTICATION_FAILED",
            "invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
        (
            broker
                .client(Listener::SaslPlaintext)
                .mechanism(Mechanism::Plain)
                .password("wrong-password"),
            "SASL_AUTHENTICATION_FAILED",
            "Invalid username or password",
        ),
        (
            broker
                .client(Listener::SaslSsl)
                .mechanism(Mechanism::ScramSha256),
            "UNSUPPORTED_SASL_MECHANISM",
            "SCRAM-SHA-256",
        ),
        (
            broker.client(Listener::SaslSsl).trust(Trust::UntrustedCa),
            "SslAuthenticationException",
            "unable to find valid certification path",
        ),
        (
            broker.client(Listener::SaslSslWrongHost),
            "SslAuthenticationException",
            "No subject alternative names matching IP address 127.0.0.1",
        ),
        (
            broker.client(Listener::Ssl).client_cert(ClientCert::None),
            "SslAuthenticationException",
            "bad_certificate",
        ),
        (
            broker
                .client(Listener::Ssl)
                .client_cert(ClientCert::Untrusted),
            "SslAuthenticationException",
            "bad_certificate",
        ),
    ];
    for (client, want, detail) in &cases {
        let (name, run) = failure(broker, client, &args);
        assert_eq!(&name, want, "{}: {run:?}", describe(client));
        assert!(
            run.stderr.contains(detail),
            "{}: no {detail:?} in {}",
            describe(client),
            run.stderr
        );
    }
}

#[test]
fn client_config_files_use_the_names_users_have() {
    let broker = secure_broker();
    let scram = broker.client(Listener::SaslSsl);
    let java = scram.java_properties();
    let password = broker.password("alice");
    for line in [
        format!(
            "bootstrap.servers={}",
            broker.bootstrap(Listener::SaslSsl)
        ),
        "security.protocol=SASL_SSL".to_owned(),
        "sasl.mechanism=SCRAM-SHA-512".to_owned(),
        format!("sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"{password}\";"),
        "ssl.truststore.type=PEM".to_owned(),
        format!("ssl.truststore.location={}", broker.ca_file().display()),
    ] {
        assert!(java.lines().any(|l| l == line), "no {line:?} in\n{java}");
    }
    let kcat = broker.client(Listener::Ssl).librdkafka_properties();
    for line in [
        "security.protocol=SSL".to_owned(),
        format!("ssl.ca.location={}", broker.ca_file().display()),
        format!(
            "ssl.certificate.location={}",
            broker
                .client_cert_file(ClientCert::Trusted)
                .unwrap()
                .display()
        ),
        format!(
            "ssl.key.location={}",
            broker
                .client_key_file(ClientCert::Trusted)
                .unwrap()
                .display()
        ),
    ] {
        assert!(kcat.lines().any(|l| l == line), "no {line:?} in\n{kcat}");
    }
    let plain = broker
        .client(Listener::SaslPlaintext)
        .mechanism(Mechanism::Plain)
        .user("bob")
        .librdkafka_properties();
    let bob = broker.password("bob");
    for line in [
        "security.protocol=SASL_PLAINTEXT",
        "sasl.mechanisms=PLAIN",
        "sasl.username=bob",
        &format!("sasl.password={bob}"),
    ] {
        assert!(plain.lines().any(|l| l == line), "no {line:?} in\n{plain}");
    }
    assert!(!plain.contains("ssl."), "{plain}");
    // Every file the state names exists, and passwords differ per user.
    for cert in [ClientCert::Trusted, ClientCert::Untrusted] {
        for file in [
            broker.client_cert_file(cert),
            broker.client_key_file(cert),
            broker.client_keystore_file(cert),
        ] {
            assert!(file.unwrap().is_file(), "{file:?}");
        }
    }
    assert!(broker.ca_file().is_file() && broker.untrusted_ca_file().is_file());
    let mut passwords: Vec<&str> = broker.users().iter().map(|u| broker.password(u)).collect();
    passwords.sort_unstable();
    passwords.dedup();
    assert_eq!(passwords.len(), broker.users().len());
    // The file writers write what they return.
    let file = scram.write_java_properties();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), java);
    std::fs::remove_file(file).unwrap();
}

#[test]
fn base64url_and_unsecured_jwt() {
    // RFC 4648 §10, in the URL-safe alphabet without padding.
    for (input, want) in [
        ("", ""),
        ("f", "Zg"),
        ("fo", "Zm8"),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64url(input.as_bytes()), want, "{input:?}");
    }
    assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    let jwt = unsecured_jwt("alice", 60);
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "{jwt}");
    assert_eq!(parts[0], base64url(br#"{"alg":"none"}"#));
    assert_eq!(parts[2], "", "an unsecured JWS has an empty signature");
}

// ----- a hand-made SASL exchange, to read what the broker says about the session -----

/// One request (header v1: api key, version, correlation id, client id) and its response body
/// (after the correlation id).
fn exchange(stream: &mut TcpStream, api_key: i16, version: i16, body: &[u8]) -> Vec<u8> {
    let client_id = b"kseek-secure-harness";
    let mut frame = Vec::new();
    frame.extend_from_slice(&api_key.to_be_bytes());
    frame.extend_from_slice(&version.to_be_bytes());
    frame.extend_from_slice(&7i32.to_be_bytes());
    frame.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
    frame.extend_from_slice(client_id);
    frame.extend_from_slice(body);
    let mut out = (frame.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&frame);
    stream.write_all(&out).unwrap();
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).unwrap();
    let len = usize::try_from(i32::from_be_bytes(len)).unwrap();
    assert!((4..1 << 20).contains(&len), "response length {len}");
    let mut response = vec![0u8; len];
    stream.read_exact(&mut response).unwrap();
    assert_eq!(response[..4], 7i32.to_be_bytes(), "correlation id");
    response.split_off(4)
}

/// SaslHandshake v1 + SaslAuthenticate v1 on a SASL_PLAINTEXT listener with `mechanism` and the
/// client's first (and, for PLAIN and OAUTHBEARER, only) message; returns the SaslAuthenticate
/// error code, message and session_lifetime_ms.
fn sasl_authenticate(
    address: &str,
    mechanism: &str,
    auth_bytes: &[u8],
) -> (i16, Option<String>, i64) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut body = (mechanism.len() as i16).to_be_bytes().to_vec();
    body.extend_from_slice(mechanism.as_bytes());
    let handshake = exchange(&mut stream, 17, 1, &body);
    assert_eq!(handshake[..2], [0, 0], "SaslHandshake error: {handshake:?}");
    let mut body = (auth_bytes.len() as i32).to_be_bytes().to_vec();
    body.extend_from_slice(auth_bytes);
    let r = exchange(&mut stream, 36, 1, &body);
    // error_code i16, error_message nullable string, auth_bytes bytes, session_lifetime_ms i64.
    let code = i16::from_be_bytes([r[0], r[1]]);
    let message_len = i16::from_be_bytes([r[2], r[3]]);
    let (message, rest) = if message_len < 0 {
        (None, &r[4..])
    } else {
        let n = message_len as usize;
        (
            Some(String::from_utf8_lossy(&r[4..4 + n]).into_owned()),
            &r[4 + n..],
        )
    };
    let auth_len = usize::try_from(i32::from_be_bytes(rest[..4].try_into().unwrap())).unwrap();
    let rest = &rest[4 + auth_len..];
    assert_eq!(rest.len(), 8, "session_lifetime_ms ends the response");
    (code, message, i64::from_be_bytes(rest.try_into().unwrap()))
}

fn plain_message(user: &str, password: &str) -> Vec<u8> {
    format!("\0{user}\0{password}").into_bytes()
}

fn oauthbearer_message(token: &str) -> Vec<u8> {
    format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()
}

#[test]
fn shared_broker_sessions_do_not_expire_and_unsecured_tokens_work() {
    let broker = secure_broker();
    let address = broker.bootstrap(Listener::SaslPlaintext);
    let alice = plain_message("alice", broker.password("alice"));
    let (code, message, lifetime) = sasl_authenticate(address, "PLAIN", &alice);
    assert_eq!((code, lifetime), (0, 0), "{message:?}");
    let (code, message, _) =
        sasl_authenticate(address, "PLAIN", &plain_message("alice", "wrong-password"));
    assert_eq!(code, 58, "SASL_AUTHENTICATION_FAILED: {message:?}");
    let token = unsecured_jwt("alice", 3600);
    let (code, message, _) =
        sasl_authenticate(address, "OAUTHBEARER", &oauthbearer_message(&token));
    assert_eq!(
        code, 0,
        "the broker takes unsecured_jwt tokens: {message:?}"
    );
}

#[test]
fn reauth_setting_reaches_the_broker() {
    let broker = SecureBroker::start(KafkaVersion::V4_4, &["connections.max.reauth.ms=5000"]);
    let address = broker.bootstrap(Listener::SaslPlaintext);
    let alice = plain_message("alice", broker.password("alice"));
    let (code, message, lifetime) = sasl_authenticate(address, "PLAIN", &alice);
    assert_eq!(code, 0, "{message:?}");
    assert_eq!(lifetime, 5000, "session_lifetime_ms");
    // An OAUTHBEARER session ends with its token, or at the limit if that comes first.
    let token = unsecured_jwt("alice", 3);
    let (code, _, lifetime) =
        sasl_authenticate(address, "OAUTHBEARER", &oauthbearer_message(&token));
    assert_eq!(code, 0);
    assert!(
        lifetime > 0 && lifetime <= 3000,
        "session_lifetime_ms {lifetime}"
    );
    // The Java client reads over a session that outlives the limit (it re-authenticates).
    let topic = broker.plaintext().new_topic("secure-reauth", 1, &[]);
    let written = broker.plaintext().produce(
        &topic,
        &[NewRecord::new()
            .value("before")
            .timestamp(1_700_000_000_000)
            .into()],
    );
    let client = broker.client(Listener::SaslSsl);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            broker
                .ktool_as(
                    &client,
                    &[
                        "consume",
                        "--topic",
                        &topic,
                        "--expect",
                        "2",
                        "--timeout-ms",
                        "60000",
                    ],
                    None,
                )
                .records()
        });
        // Not synchronisation: the reader's session must outlive connections.max.reauth.ms
        // before the second record exists.
        std::thread::sleep(Duration::from_secs(12));
        let mut all = written.clone();
        all.extend(
            broker.plaintext().produce(
                &topic,
                &[NewRecord::new()
                    .value("after")
                    .timestamp(1_700_000_000_001)
                    .into()],
            ),
        );
        assert_eq!(reader.join().unwrap(), all);
    });
}

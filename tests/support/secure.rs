//! A secured Kafka broker for tests of TLS, SASL and ACLs: `tests/kafka/broker start
//! --security` (see `tests/kafka/secure.sh` for the listeners, certificates, users and ACLs).
//!
//! A test gets the shared one of its test binary from [`secure_broker`] (Kafka 4.4) or
//! [`secure_broker_39`] (Kafka 3.9). When `tests/run` has started them, their state files are
//! named by `KSEEK_SECURE_STATE` and `KSEEK_SECURE_STATE_39`; otherwise the first test that
//! asks starts one with a watchdog, like [`super::broker`]. [`SecureBroker::start`] makes a
//! private one with extra broker settings (say `connections.max.reauth.ms=5000`) that stops on
//! drop.
//!
//! Test data goes in through [`SecureBroker::plaintext`], the PLAINTEXT listener, where
//! `ANONYMOUS` is a super user: the usual [`Broker`] helpers (Java producer and consumer) work
//! there unchanged. [`SecureBroker::client`] describes a client of a secured listener (which
//! user, mechanism, CA, client certificate) and writes it as the `client.properties` of Kafka's
//! Java client ([`ClientSpec::java_properties`]) or as a librdkafka / kcat config file
//! ([`ClientSpec::librdkafka_properties`]), the files users already have.
//!
//! Users: `admin` (super user), `alice` (may read, write and use groups), `bob` (no READ on
//! topics: TOPIC_AUTHORIZATION_FAILED), `carol` (no group ACL at all: GROUP_AUTHORIZATION_FAILED
//! on every group request), `dave` (DESCRIBE but no READ on groups: OffsetFetch works,
//! OffsetCommit fails with GROUP_AUTHORIZATION_FAILED). Passwords are random per broker start.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{kafka_script, unique_name, Broker, KafkaVersion, NewRecord, Record};

/// A secured listener of a [`SecureBroker`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listener {
    /// SASL over TLS: SCRAM-SHA-512 and PLAIN.
    SaslSsl,
    /// TLS with a required client certificate (mTLS); the certificate's CN is the user.
    Ssl,
    /// SASL without TLS: SCRAM-SHA-512, SCRAM-SHA-256, PLAIN, OAUTHBEARER (unsecured JWS).
    SaslPlaintext,
    /// SASL_SSL like [`Listener::SaslSsl`], but the broker presents a certificate (from the
    /// trusted CA) for [`SecureBroker::wrong_host_name`] only: hostname verification fails.
    SaslSslWrongHost,
}

impl Listener {
    /// Every secured listener.
    pub(crate) const ALL: [Listener; 4] = [
        Listener::SaslSsl,
        Listener::Ssl,
        Listener::SaslPlaintext,
        Listener::SaslSslWrongHost,
    ];

    /// Its `security.protocol`.
    pub(crate) fn security_protocol(self) -> &'static str {
        match self {
            Listener::SaslSsl | Listener::SaslSslWrongHost => "SASL_SSL",
            Listener::Ssl => "SSL",
            Listener::SaslPlaintext => "SASL_PLAINTEXT",
        }
    }

    /// Whether it speaks TLS.
    pub(crate) fn tls(self) -> bool {
        self != Listener::SaslPlaintext
    }

    /// Whether it authenticates with SASL.
    pub(crate) fn sasl(self) -> bool {
        self != Listener::Ssl
    }

    /// The SASL mechanisms the broker enables on it, in the order it lists them.
    pub(crate) fn mechanisms(self) -> &'static [Mechanism] {
        match self {
            Listener::SaslSsl | Listener::SaslSslWrongHost => {
                &[Mechanism::ScramSha512, Mechanism::Plain]
            }
            Listener::Ssl => &[],
            Listener::SaslPlaintext => &[
                Mechanism::ScramSha512,
                Mechanism::ScramSha256,
                Mechanism::Plain,
                Mechanism::OAuthBearer,
            ],
        }
    }

    /// The key of its address in the state file.
    fn state_key(self) -> &'static str {
        match self {
            Listener::SaslSsl => "BOOTSTRAP_SASL_SSL",
            Listener::Ssl => "BOOTSTRAP_SSL",
            Listener::SaslPlaintext => "BOOTSTRAP_SASL_PLAINTEXT",
            Listener::SaslSslWrongHost => "BOOTSTRAP_SASL_SSL_WRONG_HOST",
        }
    }
}

/// A SASL mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mechanism {
    /// PLAIN (RFC 4616).
    Plain,
    /// SCRAM-SHA-256 (RFC 7677).
    ScramSha256,
    /// SCRAM-SHA-512.
    ScramSha512,
    /// OAUTHBEARER (RFC 7628) with Kafka's unsecured JWS tokens (see [`unsecured_jwt`]).
    OAuthBearer,
}

impl Mechanism {
    /// Its `sasl.mechanism` name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
            Mechanism::OAuthBearer => "OAUTHBEARER",
        }
    }
}

/// Which CA a client trusts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trust {
    /// The test CA that signed the broker's certificates.
    TestCa,
    /// A second CA that signed nothing the broker presents: the broker is untrusted.
    UntrustedCa,
}

/// Which certificate a client presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientCert {
    /// None.
    None,
    /// `CN=alice` from the test CA: the SSL listener's principal `User:alice`.
    Trusted,
    /// `CN=mallory` from the untrusted CA: the broker refuses it.
    Untrusted,
}

/// The shared secured Kafka 4.4 broker of this test binary.
pub(crate) fn secure_broker() -> &'static SecureBroker {
    static B: OnceLock<SecureBroker> = OnceLock::new();
    B.get_or_init(|| SecureBroker::shared(KafkaVersion::V4_4))
}

/// The shared secured Kafka 3.9 broker of this test binary.
pub(crate) fn secure_broker_39() -> &'static SecureBroker {
    static B: OnceLock<SecureBroker> = OnceLock::new();
    B.get_or_init(|| SecureBroker::shared(KafkaVersion::V3_9))
}

/// Both shared secured brokers, newest first.
pub(crate) fn secure_brokers() -> [&'static SecureBroker; 2] {
    [secure_broker(), secure_broker_39()]
}

/// A broker started with `tests/kafka/broker start --security`. One from
/// [`SecureBroker::start`] is stopped on drop (by its [`Broker`]).
#[derive(Debug)]
pub(crate) struct SecureBroker {
    /// The PLAINTEXT side: the state directory's owner, and the way in for test data.
    plaintext: Broker,
    /// The state file's `KEY=value` lines.
    state: BTreeMap<String, String>,
}

impl SecureBroker {
    /// The environment variable naming the state file of a running secured broker of `version`.
    pub(crate) fn env_var(version: KafkaVersion) -> &'static str {
        match version {
            KafkaVersion::V4_4 => "KSEEK_SECURE_STATE",
            KafkaVersion::V3_9 => "KSEEK_SECURE_STATE_39",
            KafkaVersion::V2_8 => {
                panic!("no secured Kafka 2.8 broker (SCRAM at format time needs 3.5+)")
            }
        }
    }

    /// The broker named by [`SecureBroker::env_var`], or a new one.
    fn shared(version: KafkaVersion) -> SecureBroker {
        match std::env::var(SecureBroker::env_var(version)) {
            Ok(file) if !file.is_empty() => {
                let text = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("cannot read the secure broker state {file}: {e}"));
                SecureBroker::from_state(version, parse_state(&text), None)
            }
            _ => SecureBroker::start(version, &[]),
        }
    }

    /// Starts a private secured broker with broker settings (`key=value`) added, e.g.
    /// `connections.max.reauth.ms=5000`. It stops when the value is dropped or this process
    /// exits.
    pub(crate) fn start(version: KafkaVersion, config: &[&str]) -> SecureBroker {
        let dir = std::env::temp_dir().join(unique_name(&format!(
            "kseek-kafka-secure-{}",
            version.arg()
        )));
        let mut cmd = Command::new(kafka_script("broker"));
        cmd.args(["start", "--security", "--version", version.arg(), "--dir"])
            .arg(&dir)
            .arg("--watch-pid")
            .arg(std::process::id().to_string());
        for c in config {
            cmd.args(["--config", c]);
        }
        let out = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("cannot run tests/kafka/broker: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        // The printed lines are the state file without PIDS and WATCHDOG; the stopper needs
        // only the directory.
        assert!(
            out.status.success(),
            "tests/kafka/broker start --security failed ({})",
            out.status
        );
        SecureBroker::from_state(version, parse_state(&stdout), Some(dir))
    }

    fn from_state(
        version: KafkaVersion,
        state: BTreeMap<String, String>,
        owned_dir: Option<PathBuf>,
    ) -> SecureBroker {
        assert_eq!(
            state.get("SECURITY").map(String::as_str),
            Some("1"),
            "not the state of a broker started with --security"
        );
        let bootstrap = state
            .get("BOOTSTRAP")
            .expect("BOOTSTRAP= in the secure broker state")
            .clone();
        SecureBroker {
            plaintext: Broker {
                version,
                bootstrap,
                owned_dir,
            },
            state,
        }
    }

    /// A value of the state file; panics if it is missing.
    pub(crate) fn state(&self, key: &str) -> &str {
        self.state
            .get(key)
            .unwrap_or_else(|| panic!("no {key}= in the secure broker state"))
    }

    /// The PLAINTEXT listener as a [`Broker`] (`ANONYMOUS` is a super user there): create
    /// topics, produce test data and check results with the Java client as usual.
    pub(crate) fn plaintext(&self) -> &Broker {
        &self.plaintext
    }

    /// The Kafka release.
    pub(crate) fn version(&self) -> KafkaVersion {
        self.plaintext.version()
    }

    /// The address of a secured listener.
    pub(crate) fn bootstrap(&self, listener: Listener) -> &str {
        self.state(listener.state_key())
    }

    /// The users with a password (SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN).
    pub(crate) fn users(&self) -> Vec<&str> {
        self.state("USERS").split(',').collect()
    }

    /// The password of `user` (the same for every mechanism).
    pub(crate) fn password(&self, user: &str) -> &str {
        self.state(&format!("PASSWORD_{user}"))
    }

    /// The test CA's certificate (PEM): what clients trust.
    pub(crate) fn ca_file(&self) -> &Path {
        Path::new(self.state("CA_FILE"))
    }

    /// The untrusted CA's certificate (PEM).
    pub(crate) fn untrusted_ca_file(&self) -> &Path {
        Path::new(self.state("UNTRUSTED_CA_FILE"))
    }

    /// The client certificate's file (PEM): librdkafka's `ssl.certificate.location`.
    pub(crate) fn client_cert_file(&self, cert: ClientCert) -> Option<&Path> {
        self.cert_file(cert, "CERT_FILE")
    }

    /// The client key's file (unencrypted PKCS#8 PEM): librdkafka's `ssl.key.location`.
    pub(crate) fn client_key_file(&self, cert: ClientCert) -> Option<&Path> {
        self.cert_file(cert, "KEY_FILE")
    }

    /// Key and certificate chain in one PEM file: the Java client's `ssl.keystore.location`
    /// with `ssl.keystore.type=PEM`.
    pub(crate) fn client_keystore_file(&self, cert: ClientCert) -> Option<&Path> {
        self.cert_file(cert, "KEYSTORE_FILE")
    }

    fn cert_file(&self, cert: ClientCert, what: &str) -> Option<&Path> {
        let prefix = match cert {
            ClientCert::None => return None,
            ClientCert::Trusted => "CLIENT",
            ClientCert::Untrusted => "UNTRUSTED_CLIENT",
        };
        Some(Path::new(self.state(&format!("{prefix}_{what}"))))
    }

    /// The only name in the certificate the WRONGHOST listener presents.
    pub(crate) fn wrong_host_name(&self) -> &str {
        self.state("WRONG_HOST_NAME")
    }

    /// A client of `listener` with the defaults: user `alice` with the listener's first
    /// mechanism (SCRAM-SHA-512) on SASL listeners, the trusted client certificate on the SSL
    /// listener, trusting the test CA, hostname verification on.
    pub(crate) fn client(&self, listener: Listener) -> ClientSpec<'_> {
        ClientSpec {
            broker: self,
            listener,
            mechanism: listener.mechanisms().first().copied(),
            user: "alice".to_owned(),
            password: None,
            trust: Trust::TestCa,
            cert: if listener == Listener::Ssl {
                ClientCert::Trusted
            } else {
                ClientCert::None
            },
            verify_hostname: true,
        }
    }

    /// Runs `tests/kafka/ktool <args>` as `client` (its Java `client.properties`) and returns
    /// what happened; does not panic when the tool fails (for error tests).
    pub(crate) fn ktool_as<S: AsRef<str>>(
        &self,
        client: &ClientSpec<'_>,
        args: &[S],
        stdin: Option<&str>,
    ) -> KtoolRun {
        let config = client.write_java_properties();
        let out = super::run_ktool(client.bootstrap(), args, stdin, Some(&config));
        let _ = std::fs::remove_file(&config);
        KtoolRun {
            success: out.status.success(),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// What a [`SecureBroker::ktool_as`] run did.
#[derive(Clone, Debug)]
pub(crate) struct KtoolRun {
    /// Exit status 0.
    pub(crate) success: bool,
    /// The exit code: 3 for an error the broker (or the TLS/SASL layer) reported, whose name
    /// is in [`KtoolRun::error`].
    pub(crate) code: Option<i32>,
    /// Its stdout (JSON lines).
    pub(crate) stdout: String,
    /// Its stderr.
    pub(crate) stderr: String,
}

impl KtoolRun {
    /// The error name of a failed run: `TOPIC_AUTHORIZATION_FAILED`, `SASL_AUTHENTICATION_FAILED`,
    /// `SslAuthenticationException`, ... (the tool's `ktool: <NAME>: <message>` line).
    pub(crate) fn error(&self) -> Option<&str> {
        self.stderr.lines().find_map(|l| {
            let rest = l.strip_prefix("ktool: ")?;
            let (name, _) = rest.split_once(": ")?;
            (!name.contains(' ')).then_some(name)
        })
    }

    /// The stdout of a successful run; panics with the stderr otherwise.
    pub(crate) fn ok(&self) -> &str {
        assert!(
            self.success,
            "ktool failed ({:?}):\n{}",
            self.code, self.stderr
        );
        &self.stdout
    }
}

/// A client of one secured listener: who it is and what it trusts. Written out as the config
/// files of Kafka's Java client or of librdkafka / kcat.
#[derive(Clone, Debug)]
pub(crate) struct ClientSpec<'a> {
    broker: &'a SecureBroker,
    listener: Listener,
    mechanism: Option<Mechanism>,
    user: String,
    password: Option<String>,
    trust: Trust,
    cert: ClientCert,
    verify_hostname: bool,
}

impl ClientSpec<'_> {
    /// Authenticates as `user` (SASL; for OAUTHBEARER the token's subject).
    pub(crate) fn user(mut self, user: &str) -> Self {
        self.user = user.to_owned();
        self
    }

    /// Uses SASL mechanism `mechanism`.
    pub(crate) fn mechanism(mut self, mechanism: Mechanism) -> Self {
        self.mechanism = Some(mechanism);
        self
    }

    /// Sends `password` instead of the user's own.
    pub(crate) fn password(mut self, password: &str) -> Self {
        self.password = Some(password.to_owned());
        self
    }

    /// Trusts `trust` instead of the test CA.
    pub(crate) fn trust(mut self, trust: Trust) -> Self {
        self.trust = trust;
        self
    }

    /// Presents `cert` (or none).
    pub(crate) fn client_cert(mut self, cert: ClientCert) -> Self {
        self.cert = cert;
        self
    }

    /// Turns hostname verification off (`ssl.endpoint.identification.algorithm` empty).
    pub(crate) fn no_hostname_verification(mut self) -> Self {
        self.verify_hostname = false;
        self
    }

    /// The listener's address.
    pub(crate) fn bootstrap(&self) -> &str {
        self.broker.bootstrap(self.listener)
    }

    /// The listener.
    pub(crate) fn listener(&self) -> Listener {
        self.listener
    }

    /// The SASL mechanism, if the listener uses SASL.
    pub(crate) fn sasl_mechanism(&self) -> Option<Mechanism> {
        self.mechanism.filter(|_| self.listener.sasl())
    }

    /// The user name.
    pub(crate) fn user_name(&self) -> &str {
        &self.user
    }

    /// The password sent.
    pub(crate) fn password_sent(&self) -> &str {
        self.password
            .as_deref()
            .unwrap_or_else(|| self.broker.password(&self.user))
    }

    /// The trusted CA's file.
    pub(crate) fn ca_file(&self) -> &Path {
        match self.trust {
            Trust::TestCa => self.broker.ca_file(),
            Trust::UntrustedCa => self.broker.untrusted_ca_file(),
        }
    }

    /// Kafka's Java client `client.properties` for this client, `bootstrap.servers` included.
    pub(crate) fn java_properties(&self) -> String {
        let mut p = vec![
            format!("bootstrap.servers={}", self.bootstrap()),
            format!("security.protocol={}", self.listener.security_protocol()),
        ];
        if let Some(m) = self.sasl_mechanism() {
            p.push(format!("sasl.mechanism={}", m.name()));
            let jaas = match m {
                Mechanism::Plain => format!(
                    "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{}\" password=\"{}\";",
                    self.user,
                    self.password_sent()
                ),
                Mechanism::ScramSha256 | Mechanism::ScramSha512 => format!(
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{}\" password=\"{}\";",
                    self.user,
                    self.password_sent()
                ),
                Mechanism::OAuthBearer => format!(
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"{}\";",
                    self.user
                ),
            };
            p.push(format!("sasl.jaas.config={jaas}"));
        }
        if self.listener.tls() {
            p.push("ssl.truststore.type=PEM".to_owned());
            p.push(format!(
                "ssl.truststore.location={}",
                self.ca_file().display()
            ));
            if let Some(keystore) = self.broker.client_keystore_file(self.cert) {
                p.push("ssl.keystore.type=PEM".to_owned());
                p.push(format!("ssl.keystore.location={}", keystore.display()));
            }
            if !self.verify_hostname {
                p.push("ssl.endpoint.identification.algorithm=".to_owned());
            }
        }
        p.join("\n") + "\n"
    }

    /// The librdkafka (kcat `-F`) config file for this client, `bootstrap.servers` included:
    /// `sasl.mechanisms`, `sasl.username`, `sasl.password`, `ssl.ca.location`,
    /// `ssl.certificate.location`, `ssl.key.location`. OAUTHBEARER is librdkafka's unsecured
    /// JWT (`enable.sasl.oauthbearer.unsecure.jwt`, `sasl.oauthbearer.config=principal=..`).
    pub(crate) fn librdkafka_properties(&self) -> String {
        let mut p = vec![
            format!("bootstrap.servers={}", self.bootstrap()),
            format!("security.protocol={}", self.listener.security_protocol()),
        ];
        if let Some(m) = self.sasl_mechanism() {
            p.push(format!("sasl.mechanisms={}", m.name()));
            if m == Mechanism::OAuthBearer {
                p.push("enable.sasl.oauthbearer.unsecure.jwt=true".to_owned());
                p.push(format!("sasl.oauthbearer.config=principal={}", self.user));
            } else {
                p.push(format!("sasl.username={}", self.user));
                p.push(format!("sasl.password={}", self.password_sent()));
            }
        }
        if self.listener.tls() {
            p.push(format!("ssl.ca.location={}", self.ca_file().display()));
            if let (Some(cert), Some(key)) = (
                self.broker.client_cert_file(self.cert),
                self.broker.client_key_file(self.cert),
            ) {
                p.push(format!("ssl.certificate.location={}", cert.display()));
                p.push(format!("ssl.key.location={}", key.display()));
            }
            if !self.verify_hostname {
                p.push("ssl.endpoint.identification.algorithm=none".to_owned());
            }
        }
        p.join("\n") + "\n"
    }

    /// Writes [`ClientSpec::java_properties`] to a new file in the temp directory and returns
    /// its path (the caller removes it).
    pub(crate) fn write_java_properties(&self) -> PathBuf {
        write_private(
            &unique_name("client"),
            "properties",
            &self.java_properties(),
        )
    }

    /// Writes [`ClientSpec::librdkafka_properties`] to a new file in the temp directory and
    /// returns its path (the caller removes it).
    pub(crate) fn write_librdkafka_properties(&self) -> PathBuf {
        write_private(&unique_name("kcat"), "conf", &self.librdkafka_properties())
    }
}

/// An unsecured JWS (`{"alg":"none"}`), as Kafka's unsecured OAUTHBEARER validator accepts it:
/// subject `sub`, issued now, expiring in `lifetime_s` seconds.
pub(crate) fn unsecured_jwt(sub: &str, lifetime_s: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let header = base64url(br#"{"alg":"none"}"#);
    let claims = base64url(
        format!(
            r#"{{"sub":"{sub}","iat":{now},"exp":{}}}"#,
            now + lifetime_s
        )
        .as_bytes(),
    );
    format!("{header}.{claims}.")
}

/// Base64url without padding (RFC 4648 §5), as JWS uses it.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

/// Writes `text` to `<temp>/<name>.<ext>`, readable by this user only (it holds a password).
fn write_private(name: &str, ext: &str, text: &str) -> PathBuf {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = std::env::temp_dir().join(format!("{name}.{ext}"));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// The `KEY=value` lines of a state file (or of `start --security`'s output); surrounding
/// double quotes are dropped.
fn parse_state(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

impl KtoolRun {
    /// The records of a successful `consume` or `produce` run, as [`Broker::consume`] gives
    /// them; panics with the stderr when the run failed.
    pub(crate) fn records(&self) -> Vec<super::Record> {
        super::json_lines(self.ok())
            .map(|v| super::Record::from_json(&v))
            .collect()
    }
}

/// 2026-01-01T10:00:00Z in ms: where the window of [`window_topic`] starts.
pub(crate) const TEN: i64 = 1_767_261_600_000;
/// A minute in ms.
pub(crate) const MINUTE: i64 = 60_000;

/// A new topic on `broker` (written through its plaintext listener): two partitions, one
/// record a minute from 09:55 to 10:10 in each (keys `k<i>`, values `v<i>-p<p>`), as stored.
pub(crate) fn window_topic(broker: &SecureBroker) -> (String, Vec<Record>) {
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

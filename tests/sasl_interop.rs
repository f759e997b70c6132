//! kseek's SASL mechanisms against the server side of Kafka's own implementation (the classes
//! a broker runs: `ScramSaslServer`, `PlainSaslServer`, `OAuthBearerSaslServer` with the
//! default unsecured-JWT validator) of Kafka 4.4 and 3.9, driven through
//! `tests/kafka/saslserver` without a broker. Needs a JDK 17; the first run fetches Kafka's
//! jars (cached in ~/.cache/kseek).
#![cfg(feature = "sasl")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use kseek::sasl::{Authenticator, Step};
use kseek::security::{SaslConfig, ScramMechanism, Secret, TokenSource};

/// The Kafka versions whose server classes are checked.
const VERSIONS: [&str; 2] = ["4.4", "3.9"];

/// One run of the Java SASL server.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(version: &str, args: &[&str]) -> Server {
        let mut child = Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/kafka/saslserver"
        ))
        .args(["--client-version", version])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running tests/kafka/saslserver");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Server {
            child,
            stdin,
            stdout,
        }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("reading the server");
        line.trim_end().to_owned()
    }

    /// Sends a client message; the server's answer line.
    fn send(&mut self, message: &[u8]) -> String {
        writeln!(self.stdin, "{}", hex(message)).expect("writing to the server");
        self.line()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How an exchange ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Both sides are done; the server's authorization id.
    Authenticated(String),
    /// The server refused with this message.
    ServerRefused(String),
    /// The client refused: its error.
    ClientRefused(String),
}

/// Runs one whole exchange of `config` against the server of Kafka `version` started with
/// `args`.
fn exchange(version: &str, args: &[&str], config: &SaslConfig) -> Outcome {
    let mut server = Server::start(version, args);
    let mut auth = Authenticator::new(config).expect("credentials");
    let mut message = auth.initial().expect("first message");
    loop {
        let answer = server.send(&message);
        if let Some(refusal) = answer.strip_prefix("ERR ") {
            return Outcome::ServerRefused(refusal.to_owned());
        }
        let bytes = unhex(answer.strip_prefix("OK").expect("OK or ERR").trim());
        match auth.step(&bytes) {
            Ok(Step::Send(next)) => message = next,
            Ok(Step::Done) => {
                let complete = server.line();
                let id = complete.strip_prefix("COMPLETE ").unwrap_or_else(|| {
                    panic!("the client is done but the server said {complete:?}")
                });
                return Outcome::Authenticated(id.to_owned());
            }
            Ok(other) => panic!("unexpected step {other:?}"),
            Err(error) => return Outcome::ClientRefused(error.to_string()),
        }
    }
}

fn scram(mechanism: ScramMechanism, username: &str, password: &str) -> SaslConfig {
    SaslConfig::Scram {
        mechanism,
        username: username.into(),
        password: Secret::new(password),
    }
}

#[test]
fn scram_against_kafkas_server() {
    for version in VERSIONS {
        for (mechanism, name) in [
            (ScramMechanism::Sha256, "SCRAM-SHA-256"),
            (ScramMechanism::Sha512, "SCRAM-SHA-512"),
        ] {
            // A user name that needs saslname escaping, a password that isn't ASCII.
            for user in ["alice", "we=ird,name"] {
                let config = scram(mechanism, user, "pencil-é");
                assert_eq!(
                    exchange(version, &[name, user, "pencil-é", "4096"], &config),
                    Outcome::Authenticated(user.to_owned()),
                    "Kafka {version} {name} {user}"
                );
            }
            let wrong = scram(mechanism, "alice", "wrong");
            assert_eq!(
                exchange(version, &[name, "alice", "pencil", "8192"], &wrong),
                Outcome::ServerRefused("Invalid client credentials".into()),
                "Kafka {version} {name}"
            );
            // A user the server doesn't know: refused at the first message.
            let unknown = scram(mechanism, "bob", "pencil");
            let outcome = exchange(version, &[name, "alice", "pencil", "4096"], &unknown);
            assert!(
                matches!(outcome, Outcome::ServerRefused(_)),
                "Kafka {version} {name}: {outcome:?}"
            );
        }
    }
}

#[test]
fn plain_against_kafkas_server() {
    let plain = |password: &str| SaslConfig::Plain {
        username: "alice".into(),
        password: Secret::new(password),
    };
    for version in VERSIONS {
        assert_eq!(
            exchange(version, &["PLAIN", "alice", "pw-é"], &plain("pw-é")),
            Outcome::Authenticated("alice".into()),
            "Kafka {version}"
        );
        assert_eq!(
            exchange(version, &["PLAIN", "alice", "pw"], &plain("nope")),
            Outcome::ServerRefused("Authentication failed: Invalid username or password".into()),
            "Kafka {version}"
        );
    }
}

/// An unsecured JWT (`alg: none`), what Kafka's default OAUTHBEARER validator accepts.
fn unsecured_jwt(subject: &str, expires_in_s: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let header = base64url(br#"{"alg":"none"}"#);
    let claims = format!(
        r#"{{"sub":"{subject}","iat":{},"exp":{}}}"#,
        now - 60,
        now + expires_in_s
    );
    format!("{header}.{}.", base64url(claims.as_bytes()))
}

#[test]
fn oauthbearer_against_kafkas_server() {
    let token = |t: String| SaslConfig::OAuthBearer {
        token: TokenSource::Static(Secret::new(t)),
    };
    for version in VERSIONS {
        assert_eq!(
            exchange(
                version,
                &["OAUTHBEARER"],
                &token(unsecured_jwt("alice", 3600))
            ),
            Outcome::Authenticated("alice".into()),
            "Kafka {version}"
        );
        // Expired: the server answers with RFC 7628's JSON error, the client acknowledges it
        // with \x01, and the server then fails the exchange with that JSON as its message.
        assert_eq!(
            exchange(
                version,
                &["OAUTHBEARER"],
                &token(unsecured_jwt("alice", -30))
            ),
            Outcome::ServerRefused(r#"{"status":"invalid_token"}"#.into()),
            "Kafka {version}"
        );
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

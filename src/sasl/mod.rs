//! Client-side SASL mechanisms as sans-IO state machines: PLAIN, SCRAM-SHA-256,
//! SCRAM-SHA-512 and OAUTHBEARER.
//!
//! An [`Authenticator`] turns the server's SASL bytes into the client's next SASL bytes; it
//! never touches a socket. The connection code wraps each message in a SaslAuthenticate
//! request (after SaslHandshake has named [`Authenticator::mechanism`]):
//!
//! 1. create it with [`Authenticator::new`]; for OAUTHBEARER with a token command this runs
//!    the command and blocks (at most [`TOKEN_COMMAND_TIMEOUT`]), so call it from
//!    `spawn_blocking` then;
//! 2. send [`Authenticator::initial`];
//! 3. feed every answer's auth bytes to [`Authenticator::step`] and send what it says until it
//!    says [`Step::Done`].
//!
//! A broker that rejects the credentials usually answers SaslAuthenticate with
//! SASL_AUTHENTICATION_FAILED and a message instead of SASL bytes; reporting that is the
//! connection's job.
//!
//! Secrets (passwords, tokens) never appear in an [`Error`] or in `Debug` output.
//!
//! # References
//! RFC 4616 (PLAIN), RFC 5802 and RFC 7677 (SCRAM), RFC 7628 and KIP-255 (OAUTHBEARER),
//! <https://kafka.apache.org/protocol#sasl_handshake>.

mod base64;
mod oauthbearer;
mod scram;

use std::fmt;

use crate::security::{SaslConfig, Secret, TokenSource};

pub use oauthbearer::{run_token_command, TOKEN_COMMAND_TIMEOUT};

/// A `Result` whose error is a SASL [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a SASL exchange failed on the client's side. Every message names the mechanism.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configured credentials can't be sent with this mechanism (a NUL in a PLAIN
    /// password, an empty user name, a token with characters a bearer token can't have).
    #[error("{mechanism}: invalid credentials: {reason}")]
    InvalidCredentials {
        /// The mechanism.
        mechanism: &'static str,
        /// What is wrong (never the secret itself).
        reason: &'static str,
    },
    /// The server's message does not parse.
    #[error("{mechanism}: malformed message from the server: {reason}")]
    Malformed {
        /// The mechanism.
        mechanism: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// SCRAM: the server's nonce does not extend the one we sent.
    #[error("{mechanism}: the server's nonce does not start with the client's nonce")]
    NonceMismatch {
        /// The mechanism.
        mechanism: &'static str,
    },
    /// SCRAM: the server asks for an iteration count outside the accepted range.
    #[error(
        "{mechanism}: the server asks for {iterations} iterations; accepted are {min} to {max}"
    )]
    IterationCount {
        /// The mechanism.
        mechanism: &'static str,
        /// The count the server sent.
        iterations: u64,
        /// The lowest count accepted (Kafka's minimum).
        min: u32,
        /// The highest count accepted.
        max: u32,
    },
    /// SCRAM: the server's signature is wrong, so it does not know the password: it is not
    /// the broker it claims to be, or the exchange was tampered with.
    #[error("{mechanism}: the server's signature does not match; the server could not prove it knows the password")]
    ServerSignature {
        /// The mechanism.
        mechanism: &'static str,
    },
    /// The server ended the exchange with an error of the mechanism (SCRAM's `e=`,
    /// OAUTHBEARER's JSON error).
    #[error("{mechanism}: the server refused: {message}")]
    Refused {
        /// The mechanism.
        mechanism: &'static str,
        /// The server's own words, with control characters escaped.
        message: String,
    },
    /// The operating system's random source failed, so no SCRAM nonce could be made.
    #[error("{mechanism}: the operating system's random source failed")]
    NoRandomness {
        /// The mechanism.
        mechanism: &'static str,
    },
    /// The token command failed (see [`run_token_command`]).
    #[error("OAUTHBEARER: the token command failed: {reason}")]
    TokenCommand {
        /// Why (exit status and standard error; never standard output, the token).
        reason: String,
    },
    /// A method was called out of order ([`Authenticator::step`] before
    /// [`Authenticator::initial`], after [`Step::Done`], ...), or the server sent a message
    /// after the exchange ended.
    #[error("{mechanism}: {reason}")]
    OutOfOrder {
        /// The mechanism.
        mechanism: &'static str,
        /// What happened.
        reason: &'static str,
    },
}

/// What to do after a server message.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Send these bytes in the next SaslAuthenticate request. (After an OAUTHBEARER error
    /// this is the lone `\x01` RFC 7628 asks for; the broker then fails the exchange, and a
    /// further [`Authenticator::step`] is that error.)
    Send(Vec<u8>),
    /// Authentication succeeded (for SCRAM: the server proved it knows the password too).
    Done,
}

impl fmt::Debug for Step {
    // The bytes may hold a password or token: show their length only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Send(bytes) => write!(f, "Send({} bytes)", bytes.len()),
            Step::Done => f.write_str("Done"),
        }
    }
}

/// One SASL exchange on one connection, for the mechanism of a [`SaslConfig`]. Create a new
/// one for every authentication (re-authentication included).
pub struct Authenticator {
    mechanism: Mechanism,
}

enum Mechanism {
    Plain(Plain),
    Scram(scram::Scram),
    OAuthBearer(oauthbearer::OAuthBearer),
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("mechanism", &self.mechanism())
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// An exchange for `config`'s mechanism and credentials. For OAUTHBEARER with a token
    /// command, this runs the command (see [`run_token_command`]) and blocks until it ends,
    /// at most [`TOKEN_COMMAND_TIMEOUT`]: call it from `spawn_blocking` then.
    ///
    /// # Errors
    /// [`Error::InvalidCredentials`] when the credentials can't be sent with the mechanism
    /// (checked here, before anything is sent); [`Error::TokenCommand`] when the token
    /// command fails.
    pub fn new(config: &SaslConfig) -> Result<Authenticator> {
        let mechanism = match config {
            SaslConfig::Plain { username, password } => {
                Mechanism::Plain(Plain::new(username, password)?)
            }
            SaslConfig::Scram {
                mechanism,
                username,
                password,
            } => Mechanism::Scram(scram::Scram::new(
                *mechanism,
                username,
                password.clone(),
                scram::random_nonce(config.mechanism_name())?,
            )?),
            SaslConfig::OAuthBearer { token } => {
                Mechanism::OAuthBearer(oauthbearer::OAuthBearer::new(token)?)
            }
        };
        Ok(Authenticator { mechanism })
    }

    /// A SCRAM exchange with a fixed client nonce, for test vectors.
    #[cfg(test)]
    fn with_nonce(config: &SaslConfig, nonce: &str) -> Result<Authenticator> {
        match config {
            SaslConfig::Scram {
                mechanism,
                username,
                password,
            } => Ok(Authenticator {
                mechanism: Mechanism::Scram(scram::Scram::new(
                    *mechanism,
                    username,
                    password.clone(),
                    nonce.to_owned(),
                )?),
            }),
            _ => Authenticator::new(config),
        }
    }

    /// The mechanism's name as SaslHandshake sends it (`PLAIN`, `SCRAM-SHA-512`, ...).
    pub fn mechanism(&self) -> &'static str {
        match &self.mechanism {
            Mechanism::Plain(_) => "PLAIN",
            Mechanism::Scram(scram) => scram.name(),
            Mechanism::OAuthBearer(_) => oauthbearer::NAME,
        }
    }

    /// The client's first message (sent in the first SaslAuthenticate request).
    ///
    /// # Errors
    /// [`Error::OutOfOrder`] when called twice.
    pub fn initial(&mut self) -> Result<Vec<u8>> {
        match &mut self.mechanism {
            Mechanism::Plain(p) => p.initial(),
            Mechanism::Scram(s) => s.initial(),
            Mechanism::OAuthBearer(o) => o.initial(),
        }
    }

    /// Takes the server's answer (the auth bytes of a SaslAuthenticate response) and says
    /// what to do next.
    ///
    /// # Errors
    /// Anything wrong with the server's message: malformed, a wrong SCRAM nonce, signature or
    /// iteration count, a SCRAM `e=` error, an OAUTHBEARER error already answered, a message
    /// after the exchange ended. Never panics, whatever the bytes.
    pub fn step(&mut self, server: &[u8]) -> Result<Step> {
        match &mut self.mechanism {
            Mechanism::Plain(p) => p.step(server),
            Mechanism::Scram(s) => s.step(server),
            Mechanism::OAuthBearer(o) => o.step(server),
        }
    }
}

impl TokenSource {
    /// The token: the static one, or what the command prints (see [`run_token_command`];
    /// this blocks while the command runs, at most [`TOKEN_COMMAND_TIMEOUT`]).
    ///
    /// # Errors
    /// [`Error::TokenCommand`] when the command fails or prints nothing.
    pub fn fetch(&self) -> Result<Secret> {
        match self {
            TokenSource::Static(token) => Ok(token.clone()),
            TokenSource::Command(command) => run_token_command(command, TOKEN_COMMAND_TIMEOUT),
        }
    }
}

/// PLAIN (RFC 4616): one message, `authzid NUL authcid NUL passwd`, with an empty authzid
/// as Kafka's Java client sends it.
struct Plain {
    message: Option<Vec<u8>>,
    state: PlainState,
}

#[derive(PartialEq, Eq)]
enum PlainState {
    Initial,
    Sent,
    Done,
}

impl Plain {
    const NAME: &'static str = "PLAIN";

    fn new(username: &str, password: &Secret) -> Result<Plain> {
        let invalid = |reason| Error::InvalidCredentials {
            mechanism: Self::NAME,
            reason,
        };
        if username.is_empty() {
            return Err(invalid("the user name is empty"));
        }
        if password.expose().is_empty() {
            return Err(invalid("the password is empty"));
        }
        if username.contains('\0') {
            return Err(invalid("the user name contains a NUL character"));
        }
        if password.expose().contains('\0') {
            return Err(invalid("the password contains a NUL character"));
        }
        let mut message = Vec::with_capacity(2 + username.len() + password.expose().len());
        message.push(0);
        message.extend_from_slice(username.as_bytes());
        message.push(0);
        message.extend_from_slice(password.expose().as_bytes());
        Ok(Plain {
            message: Some(message),
            state: PlainState::Initial,
        })
    }

    fn initial(&mut self) -> Result<Vec<u8>> {
        match (self.state == PlainState::Initial, self.message.take()) {
            (true, Some(message)) => {
                self.state = PlainState::Sent;
                Ok(message)
            }
            _ => Err(out_of_order(
                Self::NAME,
                "the first message was already sent",
            )),
        }
    }

    fn step(&mut self, server: &[u8]) -> Result<Step> {
        match self.state {
            PlainState::Initial => Err(out_of_order(
                Self::NAME,
                "a server message came before the first client message",
            )),
            // Kafka answers a successful PLAIN exchange with empty auth bytes.
            PlainState::Sent if server.is_empty() => {
                self.state = PlainState::Done;
                Ok(Step::Done)
            }
            PlainState::Sent => Err(Error::Malformed {
                mechanism: Self::NAME,
                reason: "the server sent a challenge, but PLAIN has none",
            }),
            PlainState::Done => Err(out_of_order(
                Self::NAME,
                "the server sent a message after the exchange ended",
            )),
        }
    }
}

fn out_of_order(mechanism: &'static str, reason: &'static str) -> Error {
    Error::OutOfOrder { mechanism, reason }
}

/// The server spoke before the client's first message.
fn server_spoke_first(mechanism: &'static str) -> Error {
    out_of_order(
        mechanism,
        "a server message came before the first client message",
    )
}

/// A server-controlled string made safe for a one-line error: control characters escaped,
/// at most 300 characters.
fn printable(text: &str) -> String {
    const MAX: usize = 300;
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::security::ScramMechanism;
    use proptest::prelude::*;

    fn scram(mechanism: ScramMechanism, username: &str, password: &str) -> SaslConfig {
        SaslConfig::Scram {
            mechanism,
            username: username.into(),
            password: Secret::new(password),
        }
    }

    #[test]
    fn plain_sends_one_message() {
        let config = SaslConfig::Plain {
            username: "alice".into(),
            password: Secret::new("s3cret"),
        };
        let mut auth = Authenticator::new(&config).unwrap();
        assert_eq!(auth.mechanism(), "PLAIN");
        assert_eq!(auth.initial().unwrap(), b"\0alice\0s3cret");
        assert!(matches!(auth.initial(), Err(Error::OutOfOrder { .. })));
        assert_eq!(auth.step(b"").unwrap(), Step::Done);
        assert!(matches!(auth.step(b""), Err(Error::OutOfOrder { .. })));
    }

    #[test]
    fn plain_rejects_a_challenge_and_unsendable_credentials() {
        let plain = |u: &str, p: &str| {
            Authenticator::new(&SaslConfig::Plain {
                username: u.into(),
                password: Secret::new(p),
            })
        };
        let mut auth = plain("alice", "pw").unwrap();
        assert!(matches!(auth.step(b""), Err(Error::OutOfOrder { .. })));
        auth.initial().unwrap();
        let err = auth.step(b"more?").unwrap_err();
        assert!(matches!(err, Error::Malformed { .. }), "{err}");
        for (u, p) in [
            ("", "pw"),
            ("alice", ""),
            ("al\0ice", "pw"),
            ("alice", "p\0w"),
        ] {
            let err = plain(u, p).unwrap_err();
            assert!(
                err.to_string().starts_with("PLAIN: invalid credentials"),
                "{err}"
            );
        }
    }

    /// The client of the RFC 7677 example ("user", "pencil", its nonce) with `mechanism`,
    /// named `name`, its first message checked and sent.
    fn rfc_7677_client(mechanism: ScramMechanism, name: &str) -> Authenticator {
        let config = scram(mechanism, "user", "pencil");
        let mut auth = Authenticator::with_nonce(&config, "rOprNGfwEbeRWgbNEkqO").unwrap();
        assert_eq!(auth.mechanism(), name);
        assert_eq!(auth.initial().unwrap(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        auth
    }

    /// RFC 7677 section 3.
    #[test]
    fn scram_sha_256_rfc_7677_example() {
        let mut auth = rfc_7677_client(ScramMechanism::Sha256, "SCRAM-SHA-256");
        let step = auth
            .step(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap();
        assert_eq!(
            step,
            Step::Send(
                b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
                    .to_vec()
            )
        );
        assert_eq!(
            auth.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
                .unwrap(),
            Step::Done
        );
        assert!(matches!(auth.step(b"v=x"), Err(Error::OutOfOrder { .. })));
    }

    const SERVER_FIRST: &[u8] =
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";

    /// Computed independently with Python's hashlib and hmac (a one-off script:
    /// `hashlib.pbkdf2_hmac("sha512", ...)`, `hmac.new(..., hashlib.sha512)`), same inputs as
    /// the RFC 7677 example.
    #[test]
    fn scram_sha_512_vector() {
        let mut auth = rfc_7677_client(ScramMechanism::Sha512, "SCRAM-SHA-512");
        assert_eq!(
            auth.step(SERVER_FIRST).unwrap(),
            Step::Send(
                b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=gMGXRcevScNtxZ6/8lQYpGtnsNAc3mGcmNomv+xnoOMw+3R2xNJdMNnzMlTN8PPC6wdp6dybEmDYXYTxwnYPJQ=="
                    .to_vec()
            )
        );
        assert_eq!(
            auth.step(b"v=ZQnYEgWQMFmmsM8aQMF0nDDCy/AgCzkwk8CmMZYcMg0vSVlKDanekLtifDSeVGT4+5ZxXnJq199RVG2rR7N7Zw==")
                .unwrap(),
            Step::Done
        );
    }

    /// A SCRAM authenticator for "user" with password "pencil" and client `nonce`, its first
    /// message sent.
    fn first_sent(mechanism: ScramMechanism, nonce: &str) -> Authenticator {
        let config = scram(mechanism, "user", "pencil");
        let mut auth = Authenticator::with_nonce(&config, nonce).unwrap();
        auth.initial().unwrap();
        auth
    }

    fn after_server_first(mechanism: ScramMechanism) -> Authenticator {
        let mut auth = first_sent(mechanism, "rOprNGfwEbeRWgbNEkqO");
        assert!(matches!(auth.step(SERVER_FIRST).unwrap(), Step::Send(_)));
        auth
    }

    #[test]
    fn scram_rejects_a_wrong_server_signature() {
        for (mechanism, server_final, name) in [
            // The right signature with its first byte changed.
            (
                ScramMechanism::Sha256,
                b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
                "SCRAM-SHA-256",
            ),
            // A signature of another length.
            (
                ScramMechanism::Sha512,
                b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
                "SCRAM-SHA-512",
            ),
        ] {
            let err = after_server_first(mechanism)
                .step(server_final)
                .unwrap_err();
            assert_eq!(err, Error::ServerSignature { mechanism: name });
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn scram_reports_the_server_error() {
        let mut auth = after_server_first(ScramMechanism::Sha512);
        let err = auth.step(b"e=invalid-proof").unwrap_err();
        assert_eq!(
            err.to_string(),
            "SCRAM-SHA-512: the server refused: invalid-proof"
        );
    }

    #[test]
    fn scram_rejects_a_nonce_that_does_not_extend_ours() {
        for nonce in [
            "XOprNGfwEbeRWgbNEkqO%hvYDp",
            "rOprNGfwEbeRWgbNEkq",
            // Ours, unextended: the server added nothing of its own.
            "rOprNGfwEbeRWgbNEkqO",
        ] {
            let server_first = format!("r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
            let mut auth = first_sent(ScramMechanism::Sha256, "rOprNGfwEbeRWgbNEkqO");
            let err = auth.step(server_first.as_bytes()).unwrap_err();
            assert_eq!(
                err,
                Error::NonceMismatch {
                    mechanism: "SCRAM-SHA-256"
                }
            );
        }
    }

    #[test]
    fn scram_bounds_the_iteration_count() {
        for (count, ok) in [
            ("4095", false),
            ("4096", true),
            ("0", false),
            ("1000001", false),
            ("99999999999999999999", false),
        ] {
            let mut auth = first_sent(ScramMechanism::Sha256, "abc");
            let message = format!("r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i={count}");
            let result = auth.step(message.as_bytes());
            assert_eq!(result.is_ok(), ok, "{count}: {result:?}");
            if !ok {
                let err = result.unwrap_err();
                assert!(
                    matches!(err, Error::IterationCount { .. }),
                    "{count}: {err}"
                );
            }
        }
    }

    #[test]
    fn scram_rejects_malformed_server_messages() {
        for server_first in [
            &b""[..],
            b"r=abcdef",
            b"r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==",
            b"s=W22ZaJ0SNY7soEsUEjb6gQ==,r=abcdef,i=4096",
            b"r=abcdef,s=not base64,i=4096",
            b"r=abcdef,s=,i=4096",
            b"r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4k",
            b"r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=+4096",
            b"m=ext,r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            b"r=abc\xffdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            b"r=abc def,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            b"e=other-error",
        ] {
            let mut auth = first_sent(ScramMechanism::Sha256, "abc");
            let err = auth.step(server_first).unwrap_err();
            assert!(
                err.to_string().starts_with("SCRAM-SHA-256: "),
                "{:?}: {err}",
                String::from_utf8_lossy(server_first)
            );
        }
        for server_final in [&b""[..], b"v=", b"v=###", b"x=1", b"v"] {
            let mut auth = after_server_first(ScramMechanism::Sha256);
            let err = auth.step(server_final).unwrap_err();
            assert!(
                matches!(err, Error::Malformed { .. } | Error::ServerSignature { .. }),
                "{:?}: {err}",
                String::from_utf8_lossy(server_final)
            );
        }
    }

    #[test]
    fn a_step_before_the_first_message_leaves_the_exchange_usable() {
        let config = scram(ScramMechanism::Sha256, "user", "pencil");
        let mut auth = Authenticator::with_nonce(&config, "rOprNGfwEbeRWgbNEkqO").unwrap();
        assert!(matches!(
            auth.step(SERVER_FIRST),
            Err(Error::OutOfOrder { .. })
        ));
        assert_eq!(auth.initial().unwrap(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        assert!(matches!(auth.step(SERVER_FIRST), Ok(Step::Send(_))));
    }

    #[test]
    fn scram_escapes_the_user_name() {
        let config = scram(ScramMechanism::Sha256, "a=b,c", "pencil");
        let mut auth = Authenticator::with_nonce(&config, "nonce").unwrap();
        assert_eq!(auth.initial().unwrap(), b"n,,n=a=3Db=2Cc,r=nonce");
    }

    #[test]
    fn scram_nonces_are_random_and_printable() {
        let config = scram(ScramMechanism::Sha512, "user", "pencil");
        let first = Authenticator::new(&config).unwrap().initial().unwrap();
        let second = Authenticator::new(&config).unwrap().initial().unwrap();
        assert_ne!(first, second);
        let nonce = first.strip_prefix(b"n,,n=user,r=").unwrap();
        assert!(nonce.len() >= 24, "{nonce:?}");
        assert!(nonce.iter().all(|&c| c.is_ascii_graphic() && c != b','));
    }

    #[test]
    fn oauthbearer_static_token() {
        let config = SaslConfig::OAuthBearer {
            token: TokenSource::Static(Secret::new("eyJhbGciOi.eyJzdWIi.c2ln")),
        };
        let mut auth = Authenticator::new(&config).unwrap();
        assert_eq!(auth.mechanism(), "OAUTHBEARER");
        assert_eq!(
            auth.initial().unwrap(),
            b"n,,\x01auth=Bearer eyJhbGciOi.eyJzdWIi.c2ln\x01\x01"
        );
        assert!(matches!(auth.initial(), Err(Error::OutOfOrder { .. })));
        assert_eq!(auth.step(b"").unwrap(), Step::Done);
        assert!(matches!(auth.step(b""), Err(Error::OutOfOrder { .. })));
    }

    #[test]
    fn oauthbearer_server_error_is_answered_and_reported() {
        let config = SaslConfig::OAuthBearer {
            token: TokenSource::Static(Secret::new("tok")),
        };
        let mut auth = Authenticator::new(&config).unwrap();
        assert!(matches!(auth.step(b""), Err(Error::OutOfOrder { .. })));
        auth.initial().unwrap();
        let step = auth
            .step(br#"{"status":"invalid_token","scope":"kafka","openid-configuration":"https://x/.well-known"}"#)
            .unwrap();
        assert_eq!(step, Step::Send(b"\x01".to_vec()));
        // Whatever the server answers next, the exchange has failed, with its words.
        for answer in [&b""[..], b"anything"] {
            assert_eq!(
                auth.step(answer).unwrap_err().to_string(),
                "OAUTHBEARER: the server refused: status invalid_token, scope kafka, openid-configuration https://x/.well-known"
            );
        }
        // Not JSON: shown as it came, escaped.
        let mut auth = Authenticator::new(&config).unwrap();
        auth.initial().unwrap();
        assert_eq!(auth.step(b"nope\n").unwrap(), Step::Send(b"\x01".to_vec()));
        assert_eq!(
            auth.step(b"").unwrap_err().to_string(),
            "OAUTHBEARER: the server refused: nope\\n"
        );
    }

    #[test]
    fn oauthbearer_token_command() {
        let config = SaslConfig::OAuthBearer {
            token: TokenSource::Command("printf '  tok.en-1  \\n'".into()),
        };
        let mut auth = Authenticator::new(&config).unwrap();
        assert_eq!(
            auth.initial().unwrap(),
            b"n,,\x01auth=Bearer tok.en-1\x01\x01"
        );
        let failing = SaslConfig::OAuthBearer {
            token: TokenSource::Command("echo no >&2; exit 1".into()),
        };
        assert_eq!(
            Authenticator::new(&failing).unwrap_err().to_string(),
            "OAUTHBEARER: the token command failed: exit status: 1: no"
        );
        let not_a_token = SaslConfig::OAuthBearer {
            token: TokenSource::Command("echo two words".into()),
        };
        assert!(matches!(
            Authenticator::new(&not_a_token),
            Err(Error::InvalidCredentials { .. })
        ));
    }

    #[test]
    fn token_command_failures_are_clear() {
        let err = run_token_command("echo oops >&2; exit 3", TOKEN_COMMAND_TIMEOUT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "OAUTHBEARER: the token command failed: exit status: 3: oops"
        );
        let err = run_token_command(
            "echo secret-token-but-failed; exit 1",
            TOKEN_COMMAND_TIMEOUT,
        )
        .unwrap_err();
        assert!(!err.to_string().contains("secret-token"), "{err}");
        let err = run_token_command("printf '  \\n'", TOKEN_COMMAND_TIMEOUT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "OAUTHBEARER: the token command failed: it printed no token"
        );
        let err = run_token_command("exec sleep 10", Duration::from_millis(100)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "OAUTHBEARER: the token command failed: it did not finish within 100ms"
        );
        let err = run_token_command("printf '\\377'", TOKEN_COMMAND_TIMEOUT).unwrap_err();
        assert!(err.to_string().ends_with("not UTF-8"), "{err}");
        assert_eq!(
            TokenSource::Command("echo abc".into()).fetch().unwrap(),
            Secret::new("abc")
        );
        assert_eq!(
            TokenSource::Static(Secret::new("t")).fetch().unwrap(),
            Secret::new("t")
        );
    }

    #[test]
    fn oauthbearer_rejects_tokens_that_are_not_bearer_tokens() {
        for bad in ["", "two words", "a\x01b", "tok=en", "ünïcode"] {
            let config = SaslConfig::OAuthBearer {
                token: TokenSource::Static(Secret::new(bad)),
            };
            let err = Authenticator::new(&config).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::InvalidCredentials {
                        mechanism: "OAUTHBEARER",
                        ..
                    }
                ),
                "{bad:?}: {err}"
            );
            assert!(bad.is_empty() || !err.to_string().contains(bad), "{err}");
        }
        // Padding is allowed at the end only.
        let padded = SaslConfig::OAuthBearer {
            token: TokenSource::Static(Secret::new("abc==")),
        };
        assert!(Authenticator::new(&padded).is_ok());
    }

    #[test]
    fn secrets_stay_out_of_debug_and_errors() {
        let config = scram(ScramMechanism::Sha512, "user", "hunter2");
        let mut auth = Authenticator::new(&config).unwrap();
        let plain = SaslConfig::Plain {
            username: "u".into(),
            password: Secret::new("hunter2"),
        };
        let mut plain_auth = Authenticator::new(&plain).unwrap();
        let step = Step::Send(plain_auth.initial().unwrap());
        let shown = format!("{auth:?} {plain_auth:?} {step:?} {:?}", auth.initial());
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    proptest! {
        #[test]
        fn arbitrary_server_bytes_never_panic(
            first in proptest::collection::vec(any::<u8>(), 0..200),
            last in proptest::collection::vec(any::<u8>(), 0..200),
            sha512 in any::<bool>(),
        ) {
            let mechanism = if sha512 { ScramMechanism::Sha512 } else { ScramMechanism::Sha256 };
            let configs = [
                scram(mechanism, "user", "pencil"),
                SaslConfig::Plain { username: "u".into(), password: Secret::new("p") },
                SaslConfig::OAuthBearer { token: TokenSource::Static(Secret::new("t")) },
            ];
            for config in &configs {
                let mut auth = Authenticator::with_nonce(config, "abc").unwrap();
                auth.initial().unwrap();
                let _ = auth.step(&first);
                let _ = auth.step(&last);
            }
        }

        #[test]
        fn structured_server_first_never_panics(
            nonce in "abc[ -~]{0,10}",
            salt in "[A-Za-z0-9+/=]{0,12}",
            iterations in "[0-9]{0,4}",
            extra in "(,[a-z]=[ -~]{0,5}){0,2}",
        ) {
            let mut auth = first_sent(ScramMechanism::Sha256, "abc");
            let message = format!("r={nonce},s={salt},i={iterations}{extra}");
            let _ = auth.step(message.as_bytes());
        }
    }
}

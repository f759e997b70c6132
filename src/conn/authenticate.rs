//! SASL on a connection: the first authentication before the connection is handed out, and
//! re-authentication before the session expires (KIP-368).
//!
//! Both run the same exchange: SaslHandshake (v1, naming the mechanism), then SaslAuthenticate
//! rounds until the mechanism is satisfied. While it runs, the connection's task writes
//! nothing but SASL's own requests (`Auth::Begin` .. `Auth::End`); requests already written
//! are answered first, since a broker answers a connection's requests in order. A session
//! with a lifetime is renewed when a request is about to be sent at 85–95% of it; a connection
//! idle past its session's end is closed by the broker and reopened on next use.
//!
//! # References
//! KIP-43 (SaslHandshake), KIP-152 (SaslAuthenticate), KIP-368 (re-authentication).

use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
use std::time::Duration;

use kseek_protocol::messages::sasl_authenticate::{
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kseek_protocol::messages::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use kseek_protocol::{decode_exact, ErrorCode, Request};
use tokio::time::Instant;

use super::{Auth, Connection, Via};
use crate::error::{Error, ErrorKind, Result};
use crate::sasl::{Authenticator, Step};
use crate::security::{SaslConfig, TokenSource};

/// When the session must be renewed; `None` for a session without an end.
#[derive(Default)]
pub(super) struct Reauth {
    due: Mutex<Option<Instant>>,
    /// One renewal at a time; the others wait for it.
    gate: tokio::sync::Mutex<()>,
}

impl Reauth {
    fn due(&self, now: Instant) -> bool {
        self.due
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|due| due <= now)
    }

    /// Renew at a random point in 85–95% of `lifetime` from `start`, as Kafka's clients do,
    /// so connections opened together don't all renew at once.
    fn set(&self, start: Instant, lifetime: Option<Duration>) {
        let due = lifetime.map(|lifetime| {
            let jitter = std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
                % 1000;
            start + lifetime.mul_f64(0.85 + jitter as f64 / 10_000.0)
        });
        *self.due.lock().unwrap_or_else(|e| e.into_inner()) = due;
    }
}

/// Sends `Auth::Abort` if dropped before [`Exclusive::end`]: an exchange cut off half way
/// leaves the broker in the middle of it, so the connection must go.
struct Exclusive<'a> {
    conn: &'a Connection,
    done: bool,
}

impl Exclusive<'_> {
    async fn begin(conn: &Connection) -> Result<Exclusive<'_>> {
        conn.auth
            .send(Auth::Begin)
            .await
            .map_err(|_| conn.closed_now())?;
        Ok(Exclusive { conn, done: false })
    }

    async fn end(mut self) -> Result<()> {
        self.done = true;
        self.conn
            .auth
            .send(Auth::End)
            .await
            .map_err(|_| self.conn.closed_now())
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.conn.auth.try_send(Auth::Abort);
        }
    }
}

impl Connection {
    fn closed_now(&self) -> Error {
        let reason = self.closed_reason();
        self.shared
            .closed_error(reason.unwrap_or_else(|| "connection task stopped".to_owned()))
    }

    /// The first authentication, before the connection is handed out.
    pub(super) async fn authenticate(&self) -> Result<()> {
        let start = Instant::now();
        let lifetime = self.sasl_exchange().await?;
        self.reauth.set(start, lifetime);
        Ok(())
    }

    /// Renews the session if it is due; other callers wait for a renewal under way.
    pub(super) async fn reauthenticate_if_due(&self) -> Result<()> {
        if !self.reauth.due(Instant::now()) {
            return Ok(());
        }
        let _one_at_a_time = self.reauth.gate.lock().await;
        if !self.reauth.due(Instant::now()) {
            return Ok(());
        }
        crate::log::debug!(broker = %self.shared.broker, "re-authenticating");
        let start = Instant::now();
        let lifetime = Box::pin(self.sasl_exchange()).await?;
        self.reauth.set(start, lifetime);
        Ok(())
    }

    /// SaslHandshake, then SaslAuthenticate rounds; the session's lifetime if the broker
    /// gave one.
    async fn sasl_exchange(&self) -> Result<Option<Duration>> {
        let sasl = self
            .config
            .security
            .sasl
            .as_ref()
            .ok_or_else(|| ErrorKind::Config {
                message: format!(
                    "security.protocol {} needs a SASL mechanism and credentials \
                     (sasl.mechanism and sasl.jaas.config, or sasl.username and sasl.password)",
                    self.config.security.protocol.name()
                ),
            })?;
        let mechanism = sasl.mechanism_name();
        let fail = |message: String| -> Error {
            ErrorKind::Authentication {
                broker: self.shared.broker.clone(),
                mechanism: mechanism.to_owned(),
                message,
            }
            .into()
        };
        let versions = self.versions();
        let handshake_version = versions
            .version_for::<SaslHandshakeRequest>()
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| {
                fail(
                    "the broker does not support SaslHandshake v1 (SASL needs Kafka 1.0 or \
                     later)"
                        .to_owned(),
                )
            })?;
        let authenticate_version = versions
            .version_for::<SaslAuthenticateRequest>()
            .map_err(|source| self.protocol(source))?;
        let mut authenticator = authenticator(sasl).await.map_err(fail)?;

        let exclusive = Exclusive::begin(self).await?;
        let handshake: SaslHandshakeResponse = self
            .auth_send(
                &SaslHandshakeRequest {
                    mechanism: mechanism.to_owned(),
                },
                handshake_version,
            )
            .await?;
        if handshake.error_code != 0 {
            let code = ErrorCode::from(handshake.error_code);
            let enabled = if handshake.mechanisms.is_empty() {
                "none".to_owned()
            } else {
                handshake.mechanisms.join(", ")
            };
            return Err(fail(if code == ErrorCode::UNSUPPORTED_SASL_MECHANISM {
                format!("the broker does not enable {mechanism}; it enables: {enabled}")
            } else if code == ErrorCode::ILLEGAL_SASL_STATE {
                format!(
                    "{code}: the listener does not expect SASL (enabled mechanisms: {enabled}); \
                     if it is a PLAINTEXT or SSL listener, set security.protocol to match"
                )
            } else {
                format!("{code} (enabled mechanisms: {enabled})")
            }));
        }
        let mut out = authenticator
            .initial()
            .map_err(|e| fail(own_words(mechanism, e)))?;
        let lifetime = loop {
            let answer: SaslAuthenticateResponse = self
                .auth_send(
                    &SaslAuthenticateRequest {
                        auth_bytes: out.into(),
                        ..Default::default()
                    },
                    authenticate_version,
                )
                .await?;
            if answer.error_code != 0 {
                let code = ErrorCode::from(answer.error_code);
                return Err(fail(match answer.error_message {
                    Some(message) if !message.is_empty() => format!("{code}: {message}"),
                    _ => code.to_string(),
                }));
            }
            match authenticator
                .step(&answer.auth_bytes)
                .map_err(|e| fail(own_words(mechanism, e)))?
            {
                Step::Send(bytes) => out = bytes,
                Step::Done => break answer.session_lifetime_ms,
            }
        };
        exclusive.end().await?;
        Ok(u64::try_from(lifetime)
            .ok()
            .filter(|&ms| ms > 0)
            .map(Duration::from_millis))
    }

    /// One SASL request through the task's SASL channel.
    async fn auth_send<R: Request>(&self, request: &R, version: i16) -> Result<R::Response> {
        let body = self.round_trip(request, version, Via::Auth).await?;
        decode_exact::<R::Response>(body, version).map_err(|source| self.protocol(source))
    }
}

/// The mechanism's state machine. For a token command, `Authenticator::new` runs it: off
/// the runtime's threads, as it may take a while.
async fn authenticator(sasl: &SaslConfig) -> std::result::Result<Authenticator, String> {
    let mechanism = sasl.mechanism_name();
    let shown = |e: crate::sasl::Error| own_words(mechanism, e);
    if let SaslConfig::OAuthBearer {
        token: TokenSource::Command(_),
    } = sasl
    {
        let config = sasl.clone();
        return tokio::task::spawn_blocking(move || Authenticator::new(&config).map_err(shown))
            .await
            .map_err(|e| format!("the token command did not finish: {e}"))?;
    }
    Authenticator::new(sasl).map_err(shown)
}

/// A mechanism's error without its leading mechanism name (the error around it names it).
fn own_words(mechanism: &str, e: crate::sasl::Error) -> String {
    let text = e.to_string();
    match text
        .strip_prefix(mechanism)
        .and_then(|t| t.strip_prefix(": "))
    {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

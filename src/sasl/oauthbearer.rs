//! OAUTHBEARER (RFC 7628) as Kafka speaks it (KIP-255): one client message carrying the
//! bearer token; an empty server answer means success, a JSON error means failure, which the
//! client acknowledges with a single `\x01` before the server ends the exchange.
//!
//! # References
//! RFC 7628 sections 3.1 and 3.2.2, RFC 6750 section 2.1 (`b64token`), KIP-255.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{out_of_order, printable, server_spoke_first, Error, Result, Step};
use crate::security::{Secret, TokenSource};

pub(super) const NAME: &str = "OAUTHBEARER";

/// The `kvsep` byte of RFC 7628.
const KVSEP: u8 = 0x01;

pub(super) struct OAuthBearer {
    token: Secret,
    state: State,
}

enum State {
    Initial,
    Sent,
    /// The server refused; `\x01` went out, and the exchange can only fail now.
    Refused(Error),
    Done,
}

impl OAuthBearer {
    /// An exchange with `source`'s token; a token command runs here (and blocks).
    pub(super) fn new(source: &TokenSource) -> Result<OAuthBearer> {
        let token = source.fetch()?;
        check_token(&token)?;
        Ok(OAuthBearer {
            token,
            state: State::Initial,
        })
    }

    /// `n,,\x01auth=Bearer <token>\x01\x01`.
    pub(super) fn initial(&mut self) -> Result<Vec<u8>> {
        if !matches!(self.state, State::Initial) {
            return Err(out_of_order(NAME, "the first message was already sent"));
        }
        let token = self.token.expose();
        let mut message = Vec::with_capacity(20 + token.len());
        message.extend_from_slice(b"n,,\x01auth=Bearer ");
        message.extend_from_slice(token.as_bytes());
        message.extend_from_slice(&[KVSEP, KVSEP]);
        self.state = State::Sent;
        Ok(message)
    }

    pub(super) fn step(&mut self, server: &[u8]) -> Result<Step> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Initial => {
                self.state = State::Initial;
                Err(server_spoke_first(NAME))
            }
            State::Sent if server.is_empty() => Ok(Step::Done),
            // RFC 7628 section 3.2.2: the client answers an error with a lone kvsep, and the
            // server then fails the exchange (Kafka: SASL_AUTHENTICATION_FAILED with the
            // same JSON as its message). Should it answer anything else, the error stands.
            State::Sent => {
                self.state = State::Refused(Error::Refused {
                    mechanism: NAME,
                    message: describe_server_error(server),
                });
                Ok(Step::Send(vec![KVSEP]))
            }
            State::Refused(error) => {
                self.state = State::Refused(error.clone());
                Err(error)
            }
            State::Done => Err(out_of_order(
                NAME,
                "the server sent a message after the exchange ended",
            )),
        }
    }
}

/// RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`. A JWT
/// is one. Checked so that a stray space or newline gives a clear error here instead of an
/// opaque refusal from the broker.
fn check_token(token: &Secret) -> Result<()> {
    let invalid = |reason| Error::InvalidCredentials {
        mechanism: NAME,
        reason,
    };
    let token = token.expose();
    let body = token.trim_end_matches('=');
    if body.is_empty() {
        return Err(invalid("the token is empty"));
    }
    let allowed = |c: u8| c.is_ascii_alphanumeric() || b"-._~+/".contains(&c);
    if !body.bytes().all(allowed) {
        return Err(invalid(
            "the token has characters a bearer token can't have (RFC 6750 b64token: letters, digits, -._~+/ and trailing =)",
        ));
    }
    Ok(())
}

/// The server's error (RFC 7628 section 3.2.2: a JSON object with `status`, and maybe
/// `scope` and `openid-configuration`) as `status invalid_token, scope ...`; anything that
/// isn't such an object is shown as it came, escaped.
fn describe_server_error(server: &[u8]) -> String {
    let text = String::from_utf8_lossy(server);
    match parse_flat_json_object(&text) {
        Some(fields) if !fields.is_empty() => printable(
            &fields
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        _ => printable(&text),
    }
}

/// A JSON object whose values are all strings, in order; `None` for anything else. Enough for
/// RFC 7628's error, without a JSON dependency.
fn parse_flat_json_object(text: &str) -> Option<Vec<(String, String)>> {
    let mut chars = text.trim().chars().peekable();
    let mut fields = Vec::new();
    let skip_ws = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
    };
    if chars.next()? != '{' {
        return None;
    }
    skip_ws(&mut chars);
    if chars.next_if_eq(&'}').is_some() {
        return chars.next().is_none().then_some(fields);
    }
    loop {
        skip_ws(&mut chars);
        let key = json_string(&mut chars)?;
        skip_ws(&mut chars);
        if chars.next()? != ':' {
            return None;
        }
        skip_ws(&mut chars);
        let value = json_string(&mut chars)?;
        fields.push((key, value));
        skip_ws(&mut chars);
        match chars.next()? {
            ',' => continue,
            '}' => break,
            _ => return None,
        }
    }
    chars.next().is_none().then_some(fields)
}

fn json_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    if chars.next()? != '"' {
        return None;
    }
    let mut out = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => out.push(match chars.next()? {
                '"' => '"',
                '\\' => '\\',
                '/' => '/',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => {
                    let hex: String = (0..4).map(|_| chars.next()).collect::<Option<_>>()?;
                    char::from_u32(u32::from_str_radix(&hex, 16).ok()?).unwrap_or('\u{fffd}')
                }
                _ => return None,
            }),
            c => out.push(c),
        }
    }
}

/// How long [`TokenSource::fetch`] lets a token command run.
pub const TOKEN_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `command` with `sh -c` and returns what it prints on standard output, trimmed: the
/// OAUTHBEARER token. Blocks until the command ends, at most `timeout` (then it is killed);
/// call it from `spawn_blocking`.
///
/// # Errors
/// [`Error::TokenCommand`] when `sh` can't start, the command exits unsuccessfully (the
/// error has its exit status and standard error), runs longer than `timeout`, prints
/// something that isn't UTF-8, or prints nothing. Standard output never appears in the error.
pub fn run_token_command(command: &str, timeout: Duration) -> Result<Secret> {
    let failed = |reason: String| Error::TokenCommand { reason };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("could not start sh: {e}")))?;
    // Both pipes are drained while the command runs, so a chatty command can't block on a
    // full pipe.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!("it did not finish within {timeout:?}")));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(failed(format!("could not wait for it: {e}"))),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let stderr = stderr.trim();
        return Err(failed(if stderr.is_empty() {
            format!("{status}")
        } else {
            format!("{status}: {}", printable(stderr))
        }));
    }
    let token = String::from_utf8(stdout)
        .map_err(|_| failed("it printed something that is not UTF-8".to_owned()))?;
    let token = token.trim();
    if token.is_empty() {
        return Err(failed("it printed no token".to_owned()));
    }
    Ok(Secret::new(token))
}

/// Reads a child's pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc_7628_errors() {
        assert_eq!(
            parse_flat_json_object(r#" { "status" : "invalid_token", "scope":"a \"b\"\u0041" } "#),
            Some(vec![
                ("status".into(), "invalid_token".into()),
                ("scope".into(), "a \"b\"A".into())
            ])
        );
        assert_eq!(parse_flat_json_object("{}"), Some(vec![]));
        for bad in [
            "",
            "{",
            r#"{"a":1}"#,
            r#"{"a":"b",}"#,
            r#"{"a":"b"} x"#,
            r#"{"a":"\u12"}"#,
            r#"{"a" "b"}"#,
        ] {
            assert_eq!(parse_flat_json_object(bad), None, "{bad}");
        }
    }
}

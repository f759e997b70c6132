//! Golden SASL frames: SaslHandshake and SaslAuthenticate exchanges between Kafka's Java client
//! and a real Kafka 4.4 broker's SASL_PLAINTEXT listener, recorded by
//! `tests/golden/capture-sasl` (see `tests/data/README.md`).
//!
//! Every recorded request and response has its header decoded at the header version the index
//! names (which must also be the one this crate computes), then its body decoded, re-encoded
//! and compared byte for byte with what the wire carried. The capture logged in with fixed
//! test-only users, so the decoded values are checked too: the mechanisms, PLAIN's bytes, the
//! shape of each SCRAM message and its nonces, the session lifetime, and the broker's errors
//! for a wrong password and an unsupported mechanism.

use std::fs;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::sasl_authenticate::{
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kseek_protocol::messages::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use kseek_protocol::{
    decode_exact, ApiKey, ErrorCode, Message, Request, RequestHeader, ResponseHeader,
};

/// The test-only credentials of the capture (see `tests/golden/capture-sasl`).
const PLAIN_USER: &str = "golden_plain";
const PLAIN_PASSWORD: &str = "golden-plain-test-password";
const SCRAM_USER: &str = "golden_scram";
const SCRAM_PASSWORD: &str = "golden-scram-test-password";
/// The listener's `connections.max.reauth.ms`, which the broker sends as the session lifetime.
const REAUTH_MS: i64 = 3_600_000;
/// The mechanisms the listener enables, in the broker's order.
const ENABLED: [&str; 2] = ["PLAIN", "SCRAM-SHA-512"];

/// One recorded request and its response, already checked: headers and bodies round-trip.
enum Exchange {
    Handshake {
        phase: String,
        request: SaslHandshakeRequest,
        response: SaslHandshakeResponse,
    },
    Authenticate {
        phase: String,
        request: SaslAuthenticateRequest,
        response: SaslAuthenticateResponse,
        /// The whole request frame, to check that `auth_bytes` is a view into it.
        frame: Bytes,
    },
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sasl/4.4.0")
}

/// Decodes `body` as `M` at `version`, re-encodes it and asserts the bytes are the same.
fn round_trip<M: Message + std::fmt::Debug>(name: &str, body: &Bytes, version: i16) -> M {
    let msg = decode_exact::<M>(body.clone(), version)
        .unwrap_or_else(|e| panic!("{name}: decoding {} v{version}: {e}", M::NAME));
    let mut out = BytesMut::new();
    msg.encode(&mut out, version)
        .unwrap_or_else(|e| panic!("{name}: encoding {} v{version}: {e}", M::NAME));
    assert!(
        out[..] == body[..],
        "{name}: {} v{version} re-encoded differs\n wire: {:02x?}\n ours: {:02x?}",
        M::NAME,
        &body[..],
        &out[..]
    );
    msg
}

/// Checks both headers of a frame pair of request type `R` (versions as the crate computes
/// them, byte-identical re-encoding, matching correlation ids) and returns both bodies.
fn bodies<R: Request>(name: &str, f: &[&str], request: &Bytes, response: &Bytes) -> (Bytes, Bytes) {
    let num = |s: &str| -> i16 { s.parse().expect("a number in index.tsv") };
    let (version, req_hv, resp_hv) = (num(f[3]), num(f[4]), num(f[5]));
    assert_eq!(
        (req_hv, resp_hv),
        (
            R::request_header_version(version),
            R::response_header_version(version)
        ),
        "{name}: header versions"
    );
    let mut req = request.clone();
    let h = RequestHeader::decode(&mut req, req_hv)
        .unwrap_or_else(|e| panic!("{name}: request header: {e}"));
    assert_eq!(
        (h.api_key, h.api_version),
        (R::API_KEY.0, version),
        "{name}"
    );
    assert_eq!(h.client_id.as_deref(), Some(f[6]), "{name}: client id");
    let mut out = BytesMut::new();
    h.encode(&mut out, req_hv).expect("header encodes");
    assert_eq!(
        &out[..],
        &request[..out.len()],
        "{name}: request header bytes"
    );

    let mut resp = response.clone();
    let r = ResponseHeader::decode(&mut resp, resp_hv)
        .unwrap_or_else(|e| panic!("{name}: response header: {e}"));
    assert_eq!(r.correlation_id, h.correlation_id, "{name}: correlation id");
    let mut out = BytesMut::new();
    r.encode(&mut out, resp_hv).expect("header encodes");
    assert_eq!(
        &out[..],
        &response[..out.len()],
        "{name}: response header bytes"
    );
    (req, resp)
}

/// Loads, round-trips and returns every exchange of the capture, in the order it was sent.
fn load() -> Vec<Exchange> {
    let dir = data_dir();
    let index = fs::read_to_string(dir.join("index.tsv")).expect("index.tsv is readable");
    let mut out = Vec::new();
    for line in index
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 9, "index line {line:?}");
        let name = f[7].trim_end_matches("-request.bin");
        let read = |file: &str| Bytes::from(fs::read(dir.join(file)).expect("frame file"));
        let (request, response) = (read(f[7]), read(f[8]));
        let version: i16 = f[3].parse().expect("a version");
        let phase = f[6].to_owned();
        match ApiKey(f[1].parse().expect("an api key")) {
            ApiKey::SASL_HANDSHAKE => {
                let (req, resp) = bodies::<SaslHandshakeRequest>(name, &f, &request, &response);
                out.push(Exchange::Handshake {
                    phase,
                    request: round_trip(name, &req, version),
                    response: round_trip(name, &resp, version),
                });
            }
            ApiKey::SASL_AUTHENTICATE => {
                let (req, resp) = bodies::<SaslAuthenticateRequest>(name, &f, &request, &response);
                out.push(Exchange::Authenticate {
                    phase,
                    request: round_trip(name, &req, version),
                    response: round_trip(name, &resp, version),
                    frame: request,
                });
            }
            other => panic!("{name}: unexpected API {other:?}"),
        }
    }
    out
}

/// The exchanges of one capture phase (client id).
fn phase<'a>(all: &'a [Exchange], name: &str) -> Vec<&'a Exchange> {
    let v: Vec<&Exchange> = all
        .iter()
        .filter(|x| match x {
            Exchange::Handshake { phase, .. } | Exchange::Authenticate { phase, .. } => {
                phase == name
            }
        })
        .collect();
    assert!(!v.is_empty(), "phase {name} captured");
    v
}

/// Asserts `x` is a successful handshake for `mechanism`.
fn handshake_ok(x: &Exchange, mechanism: &str) {
    let Exchange::Handshake {
        request, response, ..
    } = x
    else {
        panic!("expected a SaslHandshake first");
    };
    assert_eq!(request.mechanism, mechanism);
    assert_eq!(response.error_code, 0);
    assert_eq!(response.mechanisms, ENABLED);
}

/// The request and response of a SaslAuthenticate exchange, after checking that the request's
/// `auth_bytes` is a view into the frame it was decoded from (zero-copy).
fn authenticate(x: &Exchange) -> (&SaslAuthenticateRequest, &SaslAuthenticateResponse) {
    let Exchange::Authenticate {
        request,
        response,
        frame,
        ..
    } = x
    else {
        panic!("expected a SaslAuthenticate");
    };
    let start = frame.as_ptr() as usize;
    let at = request.auth_bytes.as_ptr() as usize;
    assert!(
        request.auth_bytes.is_empty()
            || (start <= at && at + request.auth_bytes.len() <= start + frame.len()),
        "auth_bytes is a view into the frame"
    );
    (request, response)
}

fn text(b: &Bytes) -> &str {
    std::str::from_utf8(b).expect("SCRAM messages are UTF-8")
}

/// The value of attribute `key` (`r`, `s`, `i`, `p`, `v`) of a SCRAM message.
fn attr<'a>(message: &'a str, key: &str) -> &'a str {
    message
        .split(',')
        .find_map(|a| a.strip_prefix(key).and_then(|a| a.strip_prefix('=')))
        .unwrap_or_else(|| panic!("attribute {key} in {message:?}"))
}

#[test]
fn plain_login() {
    let all = load();
    let x = phase(&all, "golden-sasl-plain");
    assert_eq!(x.len(), 2);
    handshake_ok(x[0], "PLAIN");
    let (req, resp) = authenticate(x[1]);
    // RFC 4616: authzid (empty), NUL, authcid, NUL, password.
    assert_eq!(
        req.auth_bytes,
        Bytes::from(format!("\0{PLAIN_USER}\0{PLAIN_PASSWORD}"))
    );
    assert_eq!(resp.error_code, 0);
    // Kafka answers success with an empty (not null) message and no bytes.
    assert_eq!(resp.error_message.as_deref(), Some(""));
    assert!(resp.auth_bytes.is_empty());
    assert_eq!(resp.session_lifetime_ms, REAUTH_MS);
}

#[test]
fn scram_sha_512_login() {
    let all = load();
    let x = phase(&all, "golden-sasl-scram");
    assert_eq!(x.len(), 3);
    handshake_ok(x[0], "SCRAM-SHA-512");
    // RFC 5802: client-first, server-first; client-final, server-final.
    let (first, server_first) = authenticate(x[1]);
    let client_first = text(&first.auth_bytes);
    let bare = client_first
        .strip_prefix("n,,")
        .expect("gs2 header, no channel binding");
    assert_eq!(attr(bare, "n"), SCRAM_USER);
    let client_nonce = attr(bare, "r");
    assert_eq!(server_first.error_code, 0);
    assert_eq!(
        server_first.session_lifetime_ms, 0,
        "no session before the end"
    );
    let server_first = text(&server_first.auth_bytes);
    let nonce = attr(server_first, "r");
    assert!(nonce.starts_with(client_nonce) && nonce.len() > client_nonce.len());
    assert!(!attr(server_first, "s").is_empty());
    assert_eq!(attr(server_first, "i"), "4096");

    let (last, server_final) = authenticate(x[2]);
    let client_final = text(&last.auth_bytes);
    assert!(client_final.starts_with("c=biws,"), "{client_final}");
    assert_eq!(attr(client_final, "r"), nonce);
    // A SHA-512 proof: 64 bytes, 88 base64 characters.
    assert_eq!(attr(client_final, "p").len(), 88);
    assert!(!client_final.contains(SCRAM_PASSWORD));
    assert_eq!(server_final.error_code, 0);
    assert_eq!(attr(text(&server_final.auth_bytes), "v").len(), 88);
    assert_eq!(server_final.session_lifetime_ms, REAUTH_MS);
}

#[test]
fn wrong_passwords_are_refused() {
    let all = load();
    let x = phase(&all, "golden-sasl-plain-bad-password");
    assert_eq!(x.len(), 2);
    handshake_ok(x[0], "PLAIN");
    let (_, resp) = authenticate(x[1]);
    assert_eq!(
        ErrorCode(resp.error_code),
        ErrorCode::SASL_AUTHENTICATION_FAILED
    );
    assert_eq!(
        resp.error_message.as_deref(),
        Some("Authentication failed: Invalid username or password")
    );
    assert_eq!(resp.session_lifetime_ms, 0);

    let x = phase(&all, "golden-sasl-scram-bad-password");
    assert_eq!(x.len(), 3);
    handshake_ok(x[0], "SCRAM-SHA-512");
    let (_, server_first) = authenticate(x[1]);
    assert_eq!(server_first.error_code, 0);
    let (_, resp) = authenticate(x[2]);
    assert_eq!(
        ErrorCode(resp.error_code),
        ErrorCode::SASL_AUTHENTICATION_FAILED
    );
    assert_eq!(
        resp.error_message.as_deref(),
        Some(
            "Authentication failed during authentication due to invalid credentials with SASL \
             mechanism SCRAM-SHA-512"
        )
    );
    assert!(resp.auth_bytes.is_empty());
}

#[test]
fn unsupported_mechanism_lists_the_enabled_ones() {
    let all = load();
    let x = phase(&all, "golden-sasl-unsupported-mechanism");
    assert_eq!(x.len(), 1, "no SaslAuthenticate after a refused handshake");
    let Exchange::Handshake {
        request, response, ..
    } = x[0]
    else {
        panic!("expected a SaslHandshake");
    };
    assert_eq!(request.mechanism, "SCRAM-SHA-256");
    assert_eq!(
        ErrorCode(response.error_code),
        ErrorCode::UNSUPPORTED_SASL_MECHANISM
    );
    assert_eq!(response.mechanisms, ENABLED);
}

#[test]
fn debug_output_of_real_logins_holds_no_password() {
    for x in load() {
        if let Exchange::Authenticate {
            request, response, ..
        } = x
        {
            let shown = format!("{request:?} {response:?} {request:#?}");
            for secret in [PLAIN_PASSWORD, "wrong-password", "golden_", "n,,", "r="] {
                assert!(!shown.contains(secret), "{secret:?} in {shown}");
            }
            assert!(shown.contains("bytes redacted"), "{shown}");
        }
    }
}

#[test]
fn every_frame_is_checked() {
    // Handshakes (5) and SaslAuthenticate exchanges (6) of the five phases.
    let all = load();
    let handshakes = all
        .iter()
        .filter(|x| matches!(x, Exchange::Handshake { .. }))
        .count();
    assert_eq!((handshakes, all.len() - handshakes), (5, 6));
}

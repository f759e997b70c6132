//! SaslHandshake (API key 17), versions 0–1: which SASL mechanism the client will use.
//!
//! The client names one mechanism; the broker answers with an error code and the mechanisms
//! its listener enables (so an `UNSUPPORTED_SASL_MECHANISM` answer tells the user what would
//! work). After a version 1 handshake the SASL exchange itself travels in SaslAuthenticate
//! requests ([`crate::messages::sasl_authenticate`]); after version 0 it would travel as raw
//! size-prefixed tokens outside Kafka's framing, which this crate does not speak.
//!
//! No version is flexible: requests use request header v1 and responses response header v0.
//! The version range can't grow easily either (KAFKA-9577).
//!
//! # References
//! <https://kafka.apache.org/protocol#sasl_handshake>, KIP-43 (SASL mechanisms), KIP-152
//! (SaslAuthenticate), `SaslHandshakeRequest.json` / `SaslHandshakeResponse.json` (Kafka 4.2.1).

use bytes::{Bytes, BytesMut};

use crate::error::Result;
use crate::messages::codec::{wire_message, Cx, Wire};

/// SaslHandshake never uses the flexible encoding: a first flexible version no version reaches.
const NEVER_FLEXIBLE: i16 = i16::MAX;

/// SaslHandshake request body.
///
/// # References
/// `SaslHandshakeRequest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SaslHandshakeRequest {
    /// The SASL mechanism the client chose, as the broker spells it (`PLAIN`,
    /// `SCRAM-SHA-512`, `OAUTHBEARER`, ...).
    pub mechanism: String,
}

// No tagged fields, so no `unknown_tagged_fields`: the two bodies are written by hand from
// their fields' codecs, not declared with `wire_struct!`.
impl Wire for SaslHandshakeRequest {
    fn min_size(cx: Cx) -> usize {
        String::min_size(cx)
    }
    fn put(&self, buf: &mut BytesMut, cx: Cx, _: &'static str) -> Result<()> {
        self.mechanism
            .put(buf, cx, "SaslHandshakeRequest.mechanism")
    }
    fn get(buf: &mut Bytes, cx: Cx, _: &'static str) -> Result<Self> {
        let mechanism = Wire::get(buf, cx, "SaslHandshakeRequest.mechanism")?;
        Ok(SaslHandshakeRequest { mechanism })
    }
}

/// SaslHandshake response body (the same in both versions).
///
/// # References
/// `SaslHandshakeResponse.json`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SaslHandshakeResponse {
    /// The error code, or 0: typically 33 (`UNSUPPORTED_SASL_MECHANISM`) or 34
    /// (`ILLEGAL_SASL_STATE`).
    pub error_code: i16,
    /// The mechanisms the broker's listener enables.
    pub mechanisms: Vec<String>,
}

impl Wire for SaslHandshakeResponse {
    fn min_size(cx: Cx) -> usize {
        i16::min_size(cx) + Vec::<String>::min_size(cx)
    }
    fn put(&self, buf: &mut BytesMut, cx: Cx, _: &'static str) -> Result<()> {
        self.error_code
            .put(buf, cx, "SaslHandshakeResponse.error_code")?;
        self.mechanisms
            .put(buf, cx, "SaslHandshakeResponse.mechanisms")
    }
    fn get(buf: &mut Bytes, cx: Cx, _: &'static str) -> Result<Self> {
        let error_code = Wire::get(buf, cx, "SaslHandshakeResponse.error_code")?;
        let mechanisms = Wire::get(buf, cx, "SaslHandshakeResponse.mechanisms")?;
        Ok(SaslHandshakeResponse {
            error_code,
            mechanisms,
        })
    }
}

wire_message!(
    SaslHandshakeRequest => SaslHandshakeResponse: SASL_HANDSHAKE,
    versions 0..=1, first flexible NEVER_FLEXIBLE
);

#[cfg(test)]
mod tests;

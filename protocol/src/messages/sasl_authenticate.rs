//! SaslAuthenticate (API key 36), versions 0–2: one step of a SASL exchange, carried in Kafka's
//! framing after a SaslHandshake v1.
//!
//! The client sends the mechanism's bytes (PLAIN's `\0user\0password`, a SCRAM
//! client-first or client-final message, an OAUTHBEARER token) and the broker answers with its
//! own bytes (a SCRAM server-first or server-final message), an error code and message, and
//! from version 1 the session's lifetime (KIP-368: the client must re-authenticate before it
//! ends). Version 2 is the first flexible version.
//!
//! The authentication bytes are secrets, or derived from them: these messages' `Debug` prints
//! their length only. Decoding hands them out as views into the frame (`Bytes`), without a
//! copy.
//!
//! # References
//! <https://kafka.apache.org/protocol#sasl_handshake>, KIP-152 (SaslAuthenticate), KIP-368
//! (session lifetime, re-authentication), `SaslAuthenticateRequest.json` /
//! `SaslAuthenticateResponse.json` (Kafka 4.2.1).

use core::fmt;

use bytes::Bytes;

use crate::messages::codec::{wire_message, wire_struct};
use crate::primitives::UnknownTaggedFields;

wire_struct! {
    /// SaslAuthenticate request body.
    ///
    /// # References
    /// `SaslAuthenticateRequest.json`.
    pub struct SaslAuthenticateRequest in "SaslAuthenticateRequest", manual_debug {
        /// The client's SASL bytes, as the mechanism defines them. Secret: `Debug` prints
        /// only their length.
        pub auth_bytes: Bytes,
    }

    /// SaslAuthenticate response body.
    ///
    /// # References
    /// `SaslAuthenticateResponse.json`, KIP-368.
    pub struct SaslAuthenticateResponse in "SaslAuthenticateResponse", manual_debug {
        /// The error code, or 0: typically 58 (`SASL_AUTHENTICATION_FAILED`).
        pub error_code: i16,
        /// The broker's error message, or null.
        pub error_message: Option<String>,
        /// The broker's SASL bytes, as the mechanism defines them. `Debug` prints only their
        /// length.
        pub auth_bytes: Bytes,
        /// Milliseconds after which the session ends unless the client re-authenticates on
        /// the connection; 0 when the broker sets no limit (versions 1+; ignorable, default
        /// 0).
        pub session_lifetime_ms: i64 => since(1).ignorable(),
    }
}

wire_message!(
    SaslAuthenticateRequest => SaslAuthenticateResponse: SASL_AUTHENTICATE,
    versions 0..=2, first flexible 2
);

impl fmt::Debug for SaslAuthenticateRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslAuthenticateRequest")
            .field("auth_bytes", &Redacted(self.auth_bytes.len()))
            .field(
                "unknown_tagged_fields",
                &TagCount(&self.unknown_tagged_fields),
            )
            .finish()
    }
}

impl fmt::Debug for SaslAuthenticateResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslAuthenticateResponse")
            .field("error_code", &self.error_code)
            .field("error_message", &self.error_message)
            .field("auth_bytes", &Redacted(self.auth_bytes.len()))
            .field("session_lifetime_ms", &self.session_lifetime_ms)
            .field(
                "unknown_tagged_fields",
                &TagCount(&self.unknown_tagged_fields),
            )
            .finish()
    }
}

/// Prints the length of secret bytes instead of the bytes.
struct Redacted(usize);

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} bytes redacted>", self.0)
    }
}

/// Prints the tags and sizes of unknown tagged fields, not their payloads: a newer version's
/// tagged field beside the authentication bytes may be as secret as they are.
struct TagCount<'a>(&'a UnknownTaggedFields);

impl fmt::Debug for TagCount<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0 .0.iter().map(|t| TagSize(t.tag, t.data.len())))
            .finish()
    }
}

/// One unknown tagged field as [`TagCount`] prints it: tag and size.
struct TagSize(u32, usize);

impl fmt::Debug for TagSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tag {}: {} bytes", self.0, self.1)
    }
}

#[cfg(test)]
mod tests;

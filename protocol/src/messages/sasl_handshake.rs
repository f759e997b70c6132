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

use bytes::{BufMut, Bytes, BytesMut};

use crate::api_key::ApiKey;
use crate::error::Result;
use crate::messages::{Message, Request, VersionRange};
use crate::primitives::{get_array, get_i16, get_string, min_string, put_array, put_string};

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

impl Message for SaslHandshakeRequest {
    const API_KEY: ApiKey = ApiKey::SASL_HANDSHAKE;
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const FIRST_FLEXIBLE_VERSION: i16 = NEVER_FLEXIBLE;
    const NAME: &'static str = "SaslHandshakeRequest";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        put_string(
            buf,
            &self.mechanism,
            false,
            "SaslHandshakeRequest.mechanism",
        )
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        Ok(SaslHandshakeRequest {
            mechanism: get_string(buf, false, "SaslHandshakeRequest.mechanism")?,
        })
    }
}

impl Request for SaslHandshakeRequest {
    type Response = SaslHandshakeResponse;
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

impl Message for SaslHandshakeResponse {
    const API_KEY: ApiKey = ApiKey::SASL_HANDSHAKE;
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const FIRST_FLEXIBLE_VERSION: i16 = NEVER_FLEXIBLE;
    const NAME: &'static str = "SaslHandshakeResponse";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        buf.put_i16(self.error_code);
        put_array(
            buf,
            &self.mechanisms,
            false,
            "SaslHandshakeResponse.mechanisms",
            |b, m| put_string(b, m, false, "SaslHandshakeResponse.mechanisms"),
        )
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        Ok(SaslHandshakeResponse {
            error_code: get_i16(buf, "SaslHandshakeResponse.error_code")?,
            mechanisms: get_array(
                buf,
                false,
                min_string(false),
                "SaslHandshakeResponse.mechanisms",
                |b| get_string(b, false, "SaslHandshakeResponse.mechanisms"),
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::header::{RequestHeader, ResponseHeader};
    use crate::messages::decode_exact;
    use crate::messages::testing::sample_property_tests;
    use crate::messages::testing::{assert_prefixes_fail, assert_wire};
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn arb_request(_version: i16) -> impl Strategy<Value = SaslHandshakeRequest> {
        ".{0,16}".prop_map(|mechanism| SaslHandshakeRequest { mechanism })
    }

    fn arb_response(_version: i16) -> impl Strategy<Value = SaslHandshakeResponse> {
        (any::<i16>(), vec(".{0,14}", 0..5)).prop_map(|(error_code, mechanisms)| {
            SaslHandshakeResponse {
                error_code,
                mechanisms,
            }
        })
    }

    sample_property_tests!(
        SaslHandshakeRequest,
        SaslHandshakeResponse,
        0..=1,
        [
            (REQUEST_PLAIN, 0),
            (REQUEST_PLAIN, 1),
            (RESPONSE_UNSUPPORTED, 1)
        ]
    );

    /// "PLAIN" (both versions).
    const REQUEST_PLAIN: &[u8] = &[0x00, 0x05, b'P', b'L', b'A', b'I', b'N'];

    /// Error 33 (`UNSUPPORTED_SASL_MECHANISM`), mechanisms "PLAIN" and "SCRAM-SHA-512".
    const RESPONSE_UNSUPPORTED: &[u8] = &[
        0x00, 0x21, // error_code 33
        0x00, 0x00, 0x00, 0x02, // mechanisms: 2
        0x00, 0x05, b'P', b'L', b'A', b'I', b'N', // "PLAIN"
        0x00, 0x0d, b'S', b'C', b'R', b'A', b'M', b'-', b'S', b'H', b'A', b'-', b'5', b'1',
        b'2', // "SCRAM-SHA-512"
    ];

    #[test]
    fn hand_derived_bytes() {
        let plain = SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        };
        let unsupported = SaslHandshakeResponse {
            error_code: 33,
            mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-512".into()],
        };
        for v in 0..=1 {
            assert_wire(&plain, v, REQUEST_PLAIN);
            assert_wire(&unsupported, v, RESPONSE_UNSUPPORTED);
            assert_wire(
                &SaslHandshakeResponse::default(),
                v,
                &[0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
            );
        }
    }

    #[test]
    fn never_flexible_headers() {
        for v in 0..=1 {
            assert!(!SaslHandshakeRequest::is_flexible(v));
            assert_eq!(SaslHandshakeRequest::request_header_version(v), 1);
            assert_eq!(SaslHandshakeRequest::response_header_version(v), 0);
        }
        assert_eq!(RequestHeader::version_for(i16::MAX, 1), 1);
        assert_eq!(
            ResponseHeader::version_for(ApiKey::SASL_HANDSHAKE, i16::MAX, 1),
            0
        );
    }

    #[test]
    fn prefixes_fail_and_trailing_bytes_are_refused() {
        for v in 0..=1 {
            assert_prefixes_fail::<SaslHandshakeRequest>(REQUEST_PLAIN, v);
            assert_prefixes_fail::<SaslHandshakeResponse>(RESPONSE_UNSUPPORTED, v);
        }
    }

    #[test]
    fn nulls_and_length_bombs_fail() {
        // A null mechanism, and one with int16 length 0x7fff in 4 bytes.
        for b in [&[0xff, 0xff][..], &[0x7f, 0xff, b'a', b'b'][..]] {
            assert!(decode_exact::<SaslHandshakeRequest>(Bytes::copy_from_slice(b), 1).is_err());
        }
        // Mechanisms: count 0x7fffffff in a few bytes fails before allocating; a null array
        // is refused.
        let b = Bytes::from_static(&[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]);
        assert!(matches!(
            decode_exact::<SaslHandshakeResponse>(b, 1),
            Err(Error::InvalidLength { .. })
        ));
        let b = Bytes::from_static(&[0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            decode_exact::<SaslHandshakeResponse>(b, 0),
            Err(Error::InvalidValue { value: -1, .. })
        ));
    }

    #[test]
    fn unsupported_versions_are_refused() {
        let mut b = BytesMut::new();
        assert!(matches!(
            SaslHandshakeRequest::default().encode(&mut b, 2),
            Err(Error::UnsupportedVersion { version: 2, .. })
        ));
        assert!(SaslHandshakeResponse::decode(&mut Bytes::new(), -1).is_err());
    }
}

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
mod tests {
    use super::*;
    use crate::api_key::ApiKey;
    use crate::error::Error;
    use crate::header::{RequestHeader, ResponseHeader};
    use crate::messages::testing::{codec_tests, sample_property_tests};
    use crate::messages::{decode_exact, Message, Request};
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

    fn plain() -> SaslHandshakeRequest {
        SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        }
    }

    fn unsupported() -> SaslHandshakeResponse {
        SaslHandshakeResponse {
            error_code: 33,
            mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-512".into()],
        }
    }

    /// An empty response: error 0, no mechanisms.
    const RESPONSE_EMPTY: &[u8] = &[0x00, 0x00, 0x00, 0x00, 0x00, 0x00];

    codec_tests! {
        encodings {
            SaslHandshakeRequest: [(0, REQUEST_PLAIN, plain()), (1, REQUEST_PLAIN, plain())],
            SaslHandshakeResponse: [
                (0, RESPONSE_UNSUPPORTED, unsupported()),
                (1, RESPONSE_UNSUPPORTED, unsupported()),
                (0, RESPONSE_EMPTY, SaslHandshakeResponse::default()),
                (1, RESPONSE_EMPTY, SaslHandshakeResponse::default()),
            ],
        }
        length_bombs {
            // A mechanism of int16 length 0x7fff in 4 bytes.
            SaslHandshakeRequest: [(1, &[0x7f, 0xff, b'a', b'b'])],
            // Mechanisms: count 0x7fffffff in a few bytes fails before allocating.
            SaslHandshakeResponse: [(1, &[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0])],
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
    fn nulls_are_refused() {
        // A null mechanism; a null mechanisms array.
        let b = Bytes::from_static(&[0xff, 0xff]);
        assert!(decode_exact::<SaslHandshakeRequest>(b, 1).is_err());
        let b = Bytes::from_static(&[0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            decode_exact::<SaslHandshakeResponse>(b, 0),
            Err(Error::InvalidValue { value: -1, .. })
        ));
    }
}

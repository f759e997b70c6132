//! Tests of `sasl_handshake`: the SaslHandshake request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::api_key::ApiKey;
use crate::header::{RequestHeader, ResponseHeader};
use crate::messages::testing::prelude::*;

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

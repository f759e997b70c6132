//! Tests of `sasl_authenticate`: the SaslAuthenticate request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

fn arb_request(version: i16) -> impl Strategy<Value = SaslAuthenticateRequest> {
    (vec(any::<u8>(), 0..48), arb_unknown_tags(version >= 2)).prop_map(|(auth, tags)| {
        SaslAuthenticateRequest {
            auth_bytes: Bytes::from(auth),
            unknown_tagged_fields: tags,
        }
    })
}

fn arb_response(version: i16) -> impl Strategy<Value = SaslAuthenticateResponse> {
    (
        any::<i16>(),
        proptest::option::of(".{0,20}"),
        vec(any::<u8>(), 0..48),
        any::<i64>(),
        arb_unknown_tags(version >= 2),
    )
        .prop_map(move |(error_code, error_message, auth, lifetime, tags)| {
            SaslAuthenticateResponse {
                error_code,
                error_message,
                auth_bytes: Bytes::from(auth),
                session_lifetime_ms: if version >= 1 { lifetime } else { 0 },
                unknown_tagged_fields: tags,
            }
        })
}

sample_property_tests!(
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    [
        (REQUEST_V0, 0),
        (REQUEST_V2, 2),
        (RESPONSE_V0, 0),
        (RESPONSE_V1, 1),
        (RESPONSE_V2, 2),
    ]
);

/// PLAIN's `\0u\0p`, classic bytes (versions 0 and 1).
const REQUEST_V0: &[u8] = &[0x00, 0x00, 0x00, 0x04, 0x00, b'u', 0x00, b'p'];
/// The same in v2: compact bytes and an empty tagged section.
const REQUEST_V2: &[u8] = &[0x05, 0x00, b'u', 0x00, b'p', 0x00];
/// v0: error 58, message "bad", no bytes.
const RESPONSE_V0: &[u8] = &[
    0x00, 0x3a, // error_code 58
    0x00, 0x03, b'b', b'a', b'd', // error_message "bad"
    0x00, 0x00, 0x00, 0x00, // auth_bytes: empty
];
/// v1: no error, null message, bytes "ok", session lifetime 3600000 ms.
const RESPONSE_V1: &[u8] = &[
    0x00, 0x00, // error_code
    0xff, 0xff, // null error_message
    0x00, 0x00, 0x00, 0x02, b'o', b'k', // auth_bytes "ok"
    0x00, 0x00, 0x00, 0x00, 0x00, 0x36, 0xee, 0x80, // session_lifetime_ms 3600000
];
/// The same in v2, with an unknown tagged field 5 of one byte.
const RESPONSE_V2: &[u8] = &[
    0x00, 0x00, // error_code
    0x00, // null error_message (compact)
    0x03, b'o', b'k', // auth_bytes "ok" (compact)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x36, 0xee, 0x80, // session_lifetime_ms
    0x01, 0x05, 0x01, 0xab, // tagged section: tag 5, 1 byte
];

fn plain_request() -> SaslAuthenticateRequest {
    SaslAuthenticateRequest {
        auth_bytes: Bytes::from_static(b"\0u\0p"),
        ..Default::default()
    }
}

fn ok_response() -> SaslAuthenticateResponse {
    SaslAuthenticateResponse {
        auth_bytes: Bytes::from_static(b"ok"),
        session_lifetime_ms: 3_600_000,
        ..Default::default()
    }
}

fn failed_response() -> SaslAuthenticateResponse {
    SaslAuthenticateResponse {
        error_code: 58,
        error_message: Some("bad".into()),
        ..Default::default()
    }
}

fn tagged_response() -> SaslAuthenticateResponse {
    SaslAuthenticateResponse {
        unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
            tag: 5,
            data: Bytes::from_static(&[0xab]),
        }]),
        ..ok_response()
    }
}

codec_tests! {
    encodings {
        SaslAuthenticateRequest: [
            (0, REQUEST_V0, plain_request()),
            (1, REQUEST_V0, plain_request()),
            (2, REQUEST_V2, plain_request()),
        ],
        SaslAuthenticateResponse: [
            (0, RESPONSE_V0, failed_response()),
            (1, RESPONSE_V1, ok_response()),
            (2, RESPONSE_V2, tagged_response()),
        ],
    }
    length_bombs {
        // Lengths far beyond the bytes present: int32 0x7fffffff, compact 0xffffffff.
        SaslAuthenticateRequest: [
            (1, &[0x7f, 0xff, 0xff, 0xff, 1, 2, 3]),
            (2, &[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 0]),
        ],
        SaslAuthenticateResponse: [(1, &[0, 0, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0])],
    }
}

#[test]
fn header_versions() {
    for v in 0..=1 {
        assert_eq!(SaslAuthenticateRequest::request_header_version(v), 1);
        assert_eq!(SaslAuthenticateRequest::response_header_version(v), 0);
    }
    assert_eq!(SaslAuthenticateRequest::request_header_version(2), 2);
    assert_eq!(SaslAuthenticateRequest::response_header_version(2), 1);
}

#[test]
fn session_lifetime_is_dropped_in_v0() {
    let mut b = BytesMut::new();
    ok_response().encode(&mut b, 0).unwrap();
    let back: SaslAuthenticateResponse = decode_exact(b.freeze(), 0).unwrap();
    assert_eq!(back.session_lifetime_ms, 0);
    assert_eq!(back.auth_bytes, Bytes::from_static(b"ok"));
}

#[test]
fn auth_bytes_are_a_view_into_the_frame() {
    let frame = Bytes::from_static(REQUEST_V2);
    let req: SaslAuthenticateRequest = decode_exact(frame.clone(), 2).unwrap();
    // Bytes::from_static views share the static slice: same address, no copy.
    assert_eq!(req.auth_bytes.as_ptr(), frame[1..].as_ptr());
    let frame = Bytes::copy_from_slice(RESPONSE_V1);
    let resp: SaslAuthenticateResponse = decode_exact(frame.clone(), 1).unwrap();
    assert_eq!(resp.auth_bytes.as_ptr(), frame[8..].as_ptr());
}

#[test]
fn debug_prints_no_secret() {
    let secret = "hunter2-secret";
    let req = SaslAuthenticateRequest {
        auth_bytes: Bytes::from(format!("\0alice\0{secret}")),
        unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
            tag: 3,
            data: Bytes::from(secret),
        }]),
    };
    let shown = format!("{req:?} {req:#?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(!shown.contains("alice"), "{shown}");
    assert!(shown.contains("<21 bytes redacted>"), "{shown}");
    assert!(shown.contains("tag 3: 14 bytes"), "{shown}");
    let resp = SaslAuthenticateResponse {
        error_message: Some("Authentication failed".into()),
        auth_bytes: Bytes::from(secret),
        session_lifetime_ms: 7,
        ..Default::default()
    };
    let shown = format!("{resp:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.contains("<14 bytes redacted>"), "{shown}");
    assert!(shown.contains("Authentication failed"), "{shown}");
    assert!(shown.contains("session_lifetime_ms: 7"), "{shown}");
}

#[test]
fn null_auth_bytes_are_refused() {
    // Null auth bytes: int32 -1 (v0), compact 0 (v2).
    let null_v0 = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff]);
    assert!(matches!(
        decode_exact::<SaslAuthenticateRequest>(null_v0, 0),
        Err(Error::InvalidValue { value: -1, .. })
    ));
    let null_v2 = Bytes::from_static(&[0x00, 0x00]);
    assert!(decode_exact::<SaslAuthenticateRequest>(null_v2, 2).is_err());
}

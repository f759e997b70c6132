//! Tests of `find_coordinator`: the FindCoordinator request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

fn request(v: i16) -> impl Strategy<Value = FindCoordinatorRequest> {
    (
        "[a-z0-9._-]{0,12}",
        0i8..3,
        vec("[a-z0-9]{0,8}", 0..4),
        arb_unknown_tags(v >= 3),
    )
        .prop_map(move |(key, key_type, keys, tags)| FindCoordinatorRequest {
            key: if v <= 3 { key } else { String::new() },
            key_type: if v >= 1 { key_type } else { 0 },
            coordinator_keys: if v >= 4 { keys } else { Vec::new() },
            unknown_tagged_fields: tags,
        })
}

fn response(v: i16) -> impl Strategy<Value = FindCoordinatorResponse> {
    (
        any::<i32>(),
        any::<i16>(),
        proptest::option::of("[ -~]{0,10}"),
        any::<i32>(),
        "[a-z0-9.]{0,10}",
        any::<i32>(),
        vec(coordinator(), 0..3),
        arb_unknown_tags(v >= 3),
    )
        .prop_map(
            move |(throttle, error_code, msg, node_id, host, port, coords, tags)| {
                let old = v <= 3;
                FindCoordinatorResponse {
                    throttle_time_ms: if v >= 1 { throttle } else { 0 },
                    error_code: if old { error_code } else { 0 },
                    error_message: if (1..=3).contains(&v) { msg } else { None },
                    node_id: if old { node_id } else { 0 },
                    host: if old { host } else { String::new() },
                    port: if old { port } else { 0 },
                    coordinators: if old { Vec::new() } else { coords },
                    unknown_tagged_fields: tags,
                }
            },
        )
}

fn coordinator() -> impl Strategy<Value = Coordinator> {
    (
        "[a-z0-9]{0,8}",
        any::<i32>(),
        "[a-z0-9.]{0,10}",
        any::<i32>(),
        any::<i16>(),
        proptest::option::of("[ -~]{0,10}"),
        arb_unknown_tags(true),
    )
        .prop_map(
            |(key, node_id, host, port, error_code, error_message, tags)| Coordinator {
                key,
                node_id,
                host,
                port,
                error_code,
                error_message,
                unknown_tagged_fields: tags,
            },
        )
}

property_tests!(FindCoordinatorRequest, FindCoordinatorResponse, 64);

/// A request for the coordinator of key "g1" of type `key_type`.
fn single(key_type: i8) -> FindCoordinatorRequest {
    FindCoordinatorRequest {
        key: "g1".into(),
        key_type,
        ..Default::default()
    }
}

#[test]
fn prefixes_fail_and_trailing_bytes_are_refused() {
    let req = FindCoordinatorRequest {
        key: "group".into(),
        ..Default::default()
    };
    let req4 = FindCoordinatorRequest {
        coordinator_keys: vec!["a".into(), "bc".into()],
        ..Default::default()
    };
    let resp = FindCoordinatorResponse {
        throttle_time_ms: 1,
        error_message: Some("m".into()),
        node_id: 3,
        host: "host".into(),
        port: 9092,
        ..Default::default()
    };
    let resp4 = FindCoordinatorResponse {
        coordinators: vec![Coordinator {
            key: "k".into(),
            host: "h".into(),
            error_message: Some("e".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    for v in 0..=6 {
        let (req, resp) = if v <= 3 {
            (&req, &resp)
        } else {
            (&req4, &resp4)
        };
        assert_encoding_prefixes_fail(req, v);
        assert_encoding_prefixes_fail(resp, v);
    }
}

#[test]
fn non_ignorable_fields_absent_in_version_error() {
    check_not_in_version(&[
        (
            3,
            FindCoordinatorRequest {
                coordinator_keys: vec!["g".into()],
                ..Default::default()
            },
        ),
        (
            4,
            FindCoordinatorRequest {
                key: "g".into(),
                ..Default::default()
            },
        ),
        (
            0,
            FindCoordinatorRequest {
                key_type: 1,
                ..Default::default()
            },
        ),
    ]);
    check_not_in_version(&[(
        4,
        FindCoordinatorResponse {
            host: "h".into(),
            ..Default::default()
        },
    )]);
    // Ignorable fields are dropped instead.
    let throttled = FindCoordinatorResponse {
        throttle_time_ms: 7,
        error_message: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(encode(&throttled, 0).len(), 12);
}

codec_tests! {
    encodings {
        FindCoordinatorRequest: [
            // key: int16 len 2, "g1"; key_type int8 1.
            (
                1,
                &[0x00, 0x02, b'g', b'1', 0x01],
                single(KEY_TYPE_TRANSACTION),
            ),
            // v0 has no key type.
            (0, &[0x00, 0x02, b'g', b'1'], single(KEY_TYPE_GROUP)),
            // compact string (len+1 = 3), key_type 0, empty tagged section.
            (3, &[0x03, b'g', b'1', 0x00, 0x00], single(KEY_TYPE_GROUP)),
            // key_type 0; compact array of 2 (0x03); "g1", "x"; tagged section.
            (
                4,
                &[0x00, 0x03, 0x03, b'g', b'1', 0x02, b'x', 0x00],
                FindCoordinatorRequest {
                    coordinator_keys: vec!["g1".into(), "x".into()],
                    ..Default::default()
                },
            ),
        ],
        FindCoordinatorResponse: [
            (
                0,
                &[
                    0x00, 0x00, // error_code
                    0x00, 0x00, 0x00, 0x01, // node_id
                    0x00, 0x01, b'h', // host
                    0x00, 0x00, 0x23, 0x84, // port 9092
                ],
                FindCoordinatorResponse {
                    node_id: 1,
                    host: "h".into(),
                    port: 9092,
                    ..Default::default()
                },
            ),
            (
                1,
                &[
                    0x00, 0x00, 0x00, 0x05, // throttle
                    0x00, 0x0f, // COORDINATOR_NOT_AVAILABLE
                    0xff, 0xff, // null error message
                    0xff, 0xff, 0xff, 0xff, // node_id -1
                    0x00, 0x00, // empty host
                    0xff, 0xff, 0xff, 0xff, // port -1
                ],
                FindCoordinatorResponse {
                    throttle_time_ms: 5,
                    error_code: 15,
                    error_message: None,
                    node_id: -1,
                    host: String::new(),
                    port: -1,
                    ..Default::default()
                },
            ),
            (
                4,
                &[
                    0x00, 0x00, 0x00, 0x00, // throttle
                    0x02, // one coordinator
                    0x02, b'g', // key
                    0x00, 0x00, 0x00, 0x01, // node_id
                    0x02, b'h', // host
                    0x00, 0x00, 0x23, 0x84, // port
                    0x00, 0x00, // error_code
                    0x00, // null error message
                    0x00, // element tagged section
                    0x01, 0x09, 0x01, 0xab, // body tagged section: tag 9, 1 byte
                ],
                FindCoordinatorResponse {
                    unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
                        tag: 9,
                        data: Bytes::from_static(&[0xab]),
                    }]),
                    coordinators: vec![Coordinator {
                        key: "g".into(),
                        node_id: 1,
                        host: "h".into(),
                        port: 9092,
                        error_code: 0,
                        error_message: None,
                        unknown_tagged_fields: Default::default(),
                    }],
                    ..Default::default()
                },
            ),
        ],
    }
    length_bombs {
        FindCoordinatorResponse: [
            // v4: coordinators count 0x7fffffff.
            (4, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0]),
            // v1: error message with int16 length 0x7fff.
            (1, &[0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0, 0]),
        ],
        FindCoordinatorRequest: [
            // v0: key with int16 length 0x7fff in a 10-byte buffer.
            (0, &[0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]),
            // v4: coordinator_keys compact count 0x7fffffff, then 0xffffffff.
            (4, &[0x00, 0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0]),
            (4, &[0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0]),
        ],
    }
}

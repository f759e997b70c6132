//! Tests of `api_versions`: the ApiVersions request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

fn request(v: i16) -> impl Strategy<Value = ApiVersionsRequest> {
    (
        "[a-zA-Z0-9.-]{0,12}",
        "[a-zA-Z0-9.-]{0,8}",
        arb_unknown_tags(true),
    )
        .prop_map(move |(name, ver, tags)| {
            if v >= 3 {
                ApiVersionsRequest {
                    client_software_name: name,
                    client_software_version: ver,
                    unknown_tagged_fields: tags,
                }
            } else {
                ApiVersionsRequest::default()
            }
        })
}

fn response(v: i16) -> impl Strategy<Value = ApiVersionsResponse> {
    let flexible = v >= 3;
    let api_key = (any::<(i16, i16, i16)>(), arb_unknown_tags(flexible)).prop_map(
        |((api_key, min_version, max_version), unknown_tagged_fields)| ApiVersion {
            api_key,
            min_version,
            max_version,
            unknown_tagged_fields,
        },
    );
    let feature = || ("[a-z.]{0,10}", any::<(i16, i16)>(), arb_unknown_tags(true));
    let supported =
        feature().prop_map(
            |(name, (min_version, max_version), tags)| SupportedFeatureKey {
                name,
                min_version,
                max_version,
                unknown_tagged_fields: tags,
            },
        );
    let finalized = feature().prop_map(|(name, (max_version_level, min_version_level), tags)| {
        FinalizedFeatureKey {
            name,
            max_version_level,
            min_version_level,
            unknown_tagged_fields: tags,
        }
    });
    (
        any::<i16>(),
        vec(api_key, 0..5),
        any::<i32>(),
        vec(supported, 0..3),
        prop_oneof![Just(-1i64), any::<i64>()],
        vec(finalized, 0..3),
        any::<bool>(),
        // Clear of the known tags 0-3.
        arb_unknown_tags_in(true, 4..300),
    )
        .prop_map(
            move |(error_code, api_keys, throttle, sup, epoch, fin, zk, tags)| {
                let mut m = ApiVersionsResponse {
                    error_code,
                    api_keys,
                    throttle_time_ms: if v >= 1 { throttle } else { 0 },
                    ..ApiVersionsResponse::default()
                };
                if flexible {
                    m.supported_features = sup;
                    m.finalized_features_epoch = epoch;
                    m.finalized_features = fin;
                    m.zk_migration_ready = zk;
                    m.unknown_tagged_fields = tags;
                }
                m
            },
        )
}

property_tests!(ApiVersionsRequest, ApiVersionsResponse, 96);

/// v3: client "kseek" "0.1".
const REQUEST_V3: &[u8] = &[
    0x06, b'k', b's', b'e', b'e', b'k', // compact string, 5+1
    0x04, b'0', b'.', b'1', // compact string, 3+1
    0x00, // tagged section
];

#[test]
fn software_ids_follow_the_broker_pattern() {
    assert!(ApiVersionsRequest::kseek().is_valid_for_brokers());
    assert!(ApiVersionsRequest::for_client("apache-kafka-java", "4.4.0").is_valid_for_brokers());
    assert!(ApiVersionsRequest::for_client("a", "1").is_valid_for_brokers());
    for bad in ["", "-a", "a.", "a b", "ü"] {
        assert!(
            !ApiVersionsRequest::for_client(bad, "1").is_valid_for_brokers(),
            "{bad:?}"
        );
        assert!(
            !ApiVersionsRequest::for_client("k", bad).is_valid_for_brokers(),
            "{bad:?}"
        );
    }
    assert!(!ApiVersionsRequest::default().is_valid_for_brokers());
}

/// v0: API 18, versions 0-4.
const RESPONSE_V0: &[u8] = &[
    0x00, 0x00, // error_code
    0x00, 0x00, 0x00, 0x01, // one api key
    0x00, 0x12, 0x00, 0x00, 0x00, 0x04, // 18: 0..=4
];

/// v1: UNSUPPORTED_VERSION, throttled 100 ms.
const RESPONSE_V1: &[u8] = &[
    0x00, 0x23, // UNSUPPORTED_VERSION
    0x00, 0x00, 0x00, 0x00, // no api keys
    0x00, 0x00, 0x00, 0x64, // throttle 100
];

/// v3: every tagged field, and an unknown one.
const RESPONSE_V3: &[u8] = &[
    0x00, 0x00, // error_code
    0x02, // one api key (compact)
    0x00, 0x01, 0x00, 0x04, 0x00, 0x12, 0x00, // Fetch 4..=18, tagged section
    0x00, 0x00, 0x00, 0x00, // throttle
    0x05, // five tagged fields
    0x00, 0x09, // tag 0, 9 bytes:
    0x02, 0x03, b'm', b'v', 0x00, 0x01, 0x00, 0x1b, 0x00, // [ {mv, 1, 27} ]
    0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x05, // tag 1: epoch 5
    0x02, 0x09, // tag 2, 9 bytes:
    0x02, 0x03, b'm', b'v', 0x00, 0x1b, 0x00, 0x1b, 0x00, // [ {mv, max 27, min 27} ]
    0x03, 0x01, 0x01, // tag 3: true
    0x07, 0x02, 0xaa, 0xbb, // unknown tag 7
];

/// An API with its range.
fn api(api_key: i16, min_version: i16, max_version: i16) -> ApiVersion {
    ApiVersion {
        api_key,
        min_version,
        max_version,
        ..Default::default()
    }
}

fn response_v3() -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: 0,
        api_keys: vec![api(1, 4, 18)],
        throttle_time_ms: 0,
        supported_features: vec![SupportedFeatureKey {
            name: "mv".into(),
            min_version: 1,
            max_version: 27,
            ..Default::default()
        }],
        finalized_features_epoch: 5,
        finalized_features: vec![FinalizedFeatureKey {
            name: "mv".into(),
            max_version_level: 27,
            min_version_level: 27,
            ..Default::default()
        }],
        zk_migration_ready: true,
        unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
            tag: 7,
            data: Bytes::from_static(&[0xaa, 0xbb]),
        }]),
    }
}

#[test]
fn v4_is_v3_and_v2_drops_the_tagged_fields() {
    let m = response_v3();
    assert_eq!(encode(&m, 4), encode(&m, 3));
    assert_eq!(encode(&m, 2).len(), 2 + 4 + 6 + 4);
}

#[test]
fn prefixes_fail_and_trailing_bytes_are_refused() {
    let req = ApiVersionsRequest::for_client("k", "1");
    assert_encoding_prefixes_fail(&req, 4);
    // v0-1 are empty: only the trailing byte can be checked.
    for v in 0..=1 {
        assert_encoding_prefixes_fail(&ApiVersionsRequest::default(), v);
    }
    let resp = ApiVersionsResponse {
        api_keys: vec![api(3, 0, 13); 2],
        throttle_time_ms: 1,
        supported_features: vec![SupportedFeatureKey {
            name: "f".into(),
            ..Default::default()
        }],
        finalized_features_epoch: 2,
        zk_migration_ready: true,
        ..Default::default()
    };
    for v in 0..=4 {
        assert_encoding_prefixes_fail(&resp, v);
    }
}

#[test]
fn ignorable_fields_are_dropped_in_older_versions() {
    // Every field that older versions lack is ignorable in both schemas, so nothing
    // errors; the fields simply disappear.
    let req = ApiVersionsRequest::for_client("kseek", "1");
    assert_eq!(encode(&req, 2), Vec::<u8>::new());
    let resp = ApiVersionsResponse {
        throttle_time_ms: 9,
        zk_migration_ready: true,
        ..Default::default()
    };
    assert_eq!(encode(&resp, 0), vec![0, 0, 0, 0, 0, 0]);
}

#[test]
fn unsupported_versions_and_conflicting_tags_error() {
    // The "non-ignorable field in a version that lacks it" case doesn't exist in this API,
    // so the closest encode-time errors are tested instead.
    let mut b = BytesMut::new();
    let v5 = Err(Error::UnsupportedVersion {
        api: "ApiVersionsRequest",
        version: 5,
    });
    assert_eq!(ApiVersionsRequest::default().encode(&mut b, 5), v5);
    // An unknown tagged field that reuses a known tag can't be written alongside it.
    let clash = ApiVersionsResponse {
        zk_migration_ready: true,
        unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
            tag: 3,
            data: Bytes::from_static(&[1]),
        }]),
        ..Default::default()
    };
    assert!(matches!(
        clash.encode(&mut b, 3),
        Err(Error::TagOrder { .. })
    ));
}

#[test]
fn known_tag_with_bad_payload_errors() {
    // Tag 3 (bool) with two bytes of payload: leftover bytes in a known field.
    let b = Bytes::from_static(&[0, 0, 0x01, 0, 0, 0, 0, 0x01, 0x03, 0x02, 0x01, 0x00]);
    assert!(matches!(
        decode_exact::<ApiVersionsResponse>(b, 3),
        Err(Error::TrailingBytes { .. })
    ));
}

#[test]
fn range_of_finds_an_api() {
    let resp = ApiVersionsResponse {
        api_keys: vec![api(1, 4, 17)],
        ..Default::default()
    };
    assert_eq!(
        resp.range_of(ApiKey::FETCH),
        Some(VersionRange { min: 4, max: 17 })
    );
    assert_eq!(resp.range_of(ApiKey::METADATA), None);
}

codec_tests! {
    encodings {
        ApiVersionsRequest: [
            // Versions 0-2: an empty body.
            (2, &[], ApiVersionsRequest::default()),
            (
                3,
                REQUEST_V3,
                ApiVersionsRequest::for_client("kseek", "0.1"),
            ),
        ],
        ApiVersionsResponse: [
            (
                0,
                RESPONSE_V0,
                ApiVersionsResponse {
                    api_keys: vec![api(18, 0, 4)],
                    ..Default::default()
                },
            ),
            (
                1,
                RESPONSE_V1,
                ApiVersionsResponse {
                    error_code: 35,
                    throttle_time_ms: 100,
                    ..Default::default()
                },
            ),
            (3, RESPONSE_V3, response_v3()),
        ],
    }
    length_bombs {
        ApiVersionsResponse: [
            // api_keys count 0x7fffffff (classic) in a 10-byte buffer.
            (0, &[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
            // Compact counts 0x7fffffff and 0xffffffff.
            (3, &[0, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0]),
            (3, &[0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0]),
            // A supported_features array inside tag 0 claiming 0x7fffffff entries.
            (
                3,
                &[
                    0, 0, 0x01, 0, 0, 0, 0, 0x01, 0x00, 0x05, 0xff, 0xff, 0xff, 0xff, 0x07,
                ],
            ),
        ],
        ApiVersionsRequest: [
            // v3: client_software_name of 0x7ffffffe bytes.
            (3, &[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0]),
        ],
    }
}

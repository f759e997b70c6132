//! Tests of `describe_configs`: the DescribeConfigs request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

fn request(v: i16) -> impl Strategy<Value = DescribeConfigsRequest> {
    let flexible = v >= 4;
    let resource = (
        any::<i8>(),
        "[a-z0-9._-]{0,12}",
        proptest::option::of(vec("[a-z.]{0,12}", 0..3)),
        arb_unknown_tags(flexible),
    )
        .prop_map(|(t, name, keys, tags)| DescribeConfigsResource {
            resource_type: ConfigResourceType(t),
            resource_name: name,
            configuration_keys: keys,
            unknown_tagged_fields: tags,
        });
    (
        vec(resource, 0..3),
        any::<bool>(),
        any::<bool>(),
        arb_unknown_tags(flexible),
    )
        .prop_map(
            move |(resources, synonyms, documentation, tags)| DescribeConfigsRequest {
                resources,
                include_synonyms: synonyms,
                include_documentation: v >= 3 && documentation,
                unknown_tagged_fields: tags,
            },
        )
}

fn response(v: i16) -> impl Strategy<Value = DescribeConfigsResponse> {
    let flexible = v >= 4;
    let synonym = (
        "[a-z.]{0,12}",
        proptest::option::of("[ -~]{0,8}"),
        any::<i8>(),
        arb_unknown_tags(flexible),
    )
        .prop_map(|(name, value, source, tags)| DescribeConfigsSynonym {
            name,
            value,
            source: ConfigSource(source),
            unknown_tagged_fields: tags,
        });
    let config = (
        (
            "[a-z.]{0,12}",
            proptest::option::of("[ -~]{0,8}"),
            any::<bool>(),
            any::<i8>(),
            any::<bool>(),
        ),
        (
            vec(synonym, 0..3),
            any::<i8>(),
            proptest::option::of("[ -~]{0,16}"),
            arb_unknown_tags(flexible),
        ),
    )
        .prop_map(
            move |((name, value, read_only, source, sensitive), (synonyms, ty, doc, tags))| {
                DescribeConfigsResourceResult {
                    name,
                    value,
                    read_only,
                    config_source: ConfigSource(source),
                    is_sensitive: sensitive,
                    synonyms,
                    config_type: if v >= 3 { ty } else { 0 },
                    documentation: if v >= 3 { doc } else { None },
                    unknown_tagged_fields: tags,
                }
            },
        );
    let result = (
        any::<i16>(),
        proptest::option::of("[ -~]{0,16}"),
        any::<i8>(),
        "[a-z0-9._-]{0,12}",
        vec(config, 0..3),
        arb_unknown_tags(flexible),
    )
        .prop_map(|(error_code, error_message, t, name, configs, tags)| {
            DescribeConfigsResult {
                error_code,
                error_message,
                resource_type: ConfigResourceType(t),
                resource_name: name,
                configs,
                unknown_tagged_fields: tags,
            }
        });
    (any::<i32>(), vec(result, 0..3), arb_unknown_tags(flexible)).prop_map(
        |(throttle, results, tags)| DescribeConfigsResponse {
            throttle_time_ms: throttle,
            results,
            unknown_tagged_fields: tags,
        },
    )
}

property_tests!(DescribeConfigsRequest, DescribeConfigsResponse, 96);

fn one_topic() -> DescribeConfigsRequest {
    DescribeConfigsRequest::for_topics(["t"])
}

/// A request for key "a" of topic "t".
fn with_keys() -> DescribeConfigsRequest {
    DescribeConfigsRequest {
        resources: vec![DescribeConfigsResource {
            resource_type: ConfigResourceType::TOPIC,
            resource_name: "t".into(),
            configuration_keys: Some(vec!["a".into()]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// One topic with one entry: `a=b` from Kafka's default, a `STRING` at v3+.
fn answer(v: i16) -> DescribeConfigsResponse {
    DescribeConfigsResponse {
        results: vec![DescribeConfigsResult {
            resource_type: ConfigResourceType::TOPIC,
            resource_name: "t".into(),
            configs: vec![DescribeConfigsResourceResult {
                name: "a".into(),
                value: Some("b".into()),
                config_source: ConfigSource::DEFAULT_CONFIG,
                config_type: if v >= 3 { 2 } else { 0 },
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// v1 and v2: topic "t" with config a=b (a default, not read-only or sensitive).
const RESPONSE_V1: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // throttle
    0x00, 0x00, 0x00, 0x01, // one result
    0x00, 0x00, // error_code
    0xff, 0xff, // error_message null
    0x02, // resource_type TOPIC
    0x00, 0x01, b't', // resource_name
    0x00, 0x00, 0x00, 0x01, // one config
    0x00, 0x01, b'a', // name
    0x00, 0x01, b'b', // value
    0x00, // read_only
    0x05, // config_source DEFAULT_CONFIG
    0x00, // is_sensitive
    0x00, 0x00, 0x00, 0x00, // no synonyms
];

/// v3: [`RESPONSE_V1`], then config_type STRING (2) and a null documentation.
fn response_v3_bytes() -> Vec<u8> {
    [RESPONSE_V1, &[0x02, 0xff, 0xff]].concat()
}

#[test]
fn synonyms_are_read_past_by_their_bytes() {
    // v1: the entry of `answer(1)` with two synonyms, then a second entry: the second is
    // read from where the synonyms end.
    let mut wire = vec![
        0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, b't', 0, 0, 0, 2, // two configs
        0, 1, b'a', 0, 1, b'b', 0, 1, 0, // a=b, TOPIC_CONFIG
        0, 0, 0, 2, // two synonyms
        0, 1, b'a', 0, 1, b'b', 1, // a=b TOPIC_CONFIG
        0, 3, b'l', b'.', b'a', 0xff, 0xff, 5, // l.a=null DEFAULT_CONFIG
    ];
    wire.extend_from_slice(&[0, 1, b'c', 0, 1, b'd', 1, 4, 1, 0, 0, 0, 0]);
    let r: DescribeConfigsResponse = decode_exact(Bytes::from(wire.clone()), 1).unwrap();
    let configs = &r.results[0].configs;
    assert_eq!(configs.len(), 2);
    assert_eq!(configs[0].config_source, ConfigSource::TOPIC_CONFIG);
    assert_eq!(configs[0].synonyms.len(), 2);
    assert_eq!(configs[0].synonyms[1].name, "l.a");
    assert_eq!(configs[0].synonyms[1].value, None);
    assert_eq!(configs[0].synonyms[1].source, ConfigSource::DEFAULT_CONFIG);
    assert_eq!(
        (configs[1].name.as_str(), configs[1].value.as_deref()),
        ("c", Some("d"))
    );
    assert!(configs[1].read_only && configs[1].is_sensitive);
    assert_eq!(configs[1].config_source, ConfigSource::STATIC_BROKER_CONFIG);
    assert_eq!(encode(&r, 1), wire);
    assert_prefixes_fail::<DescribeConfigsResponse>(&wire, 1);
}

#[test]
fn truncated_encodings_fail_at_every_length() {
    for v in 1..=4 {
        assert_encoding_prefixes_fail(&one_topic(), v);
        assert_encoding_prefixes_fail(&answer(v), v);
        // Everything set: error message, null value, synonyms, documentation.
        let full = DescribeConfigsResponse {
            throttle_time_ms: 7,
            results: vec![DescribeConfigsResult {
                error_message: Some("m".into()),
                configs: vec![DescribeConfigsResourceResult {
                    name: "n".into(),
                    synonyms: vec![DescribeConfigsSynonym {
                        name: "s".into(),
                        value: Some("v".into()),
                        source: ConfigSource::STATIC_BROKER_CONFIG,
                        ..Default::default()
                    }],
                    documentation: (v >= 3).then(|| "doc".into()),
                    ..Default::default()
                }],
                ..answer(v).results[0].clone()
            }],
            ..Default::default()
        };
        assert_encoding_prefixes_fail(&full, v);
    }
}

#[test]
fn a_huge_count_with_few_bytes_allocates_nothing() {
    // The count is checked against the bytes present (each result takes at least 12 at
    // v1) before anything is reserved: the error says how many it would have needed.
    let r = decode_exact::<DescribeConfigsResponse>(
        Bytes::from_static(&[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
        1,
    );
    match r {
        Err(Error::InvalidLength { len, .. }) => assert_eq!(len, 0x7fff_ffff),
        other => panic!("{other:?}"),
    }
}

#[test]
fn documentation_asked_of_an_old_version_is_refused() {
    check_not_in_version(&[(
        2,
        DescribeConfigsRequest {
            include_documentation: true,
            ..one_topic()
        },
    )]);
}

#[test]
fn fields_of_later_versions_are_dropped_from_earlier_ones() {
    // Type and documentation are ignorable: encoding a v3 answer at v2 drops them.
    let mut full = answer(3);
    full.results[0].configs[0].documentation = Some("doc".into());
    let b = encode(&full, 2);
    let back: DescribeConfigsResponse = decode_exact(b, 2).unwrap();
    assert_eq!(back, answer(2));
}

#[test]
fn finds_a_result_by_type_and_name() {
    let r = answer(4);
    assert!(r.result(ConfigResourceType::TOPIC, "t").is_some());
    assert!(r.result(ConfigResourceType::BROKER, "t").is_none());
    assert!(r.result(ConfigResourceType::TOPIC, "u").is_none());
}

#[test]
fn names_and_unknown_values() {
    assert_eq!(ConfigSource::TOPIC_CONFIG.to_string(), "TOPIC_CONFIG");
    assert_eq!(ConfigSource(-1).to_string(), "config source -1");
    assert_eq!(ConfigResourceType::TOPIC.to_string(), "TOPIC");
    assert_eq!(ConfigResourceType(3).to_string(), "resource type 3");
    assert_eq!(
        DescribeConfigsRequest::API_KEY.name(),
        Some("DescribeConfigs")
    );
}

codec_tests! {
    encodings {
        DescribeConfigsRequest: [
            // resources: int32 count 1; type 2; name int16 len 1 "t"; keys null (int32 -1);
            // include_synonyms false.
            (
                1,
                &[
                    0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, b't', 0xff, 0xff, 0xff, 0xff, 0x00,
                ][..],
                one_topic(),
            ),
            (
                2,
                &[
                    0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, b't', 0xff, 0xff, 0xff, 0xff, 0x00,
                ],
                one_topic(),
            ),
            // v3: then include_documentation.
            (
                3,
                &[
                    0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, b't', 0xff, 0xff, 0xff, 0xff, 0x00,
                    0x00,
                ],
                one_topic(),
            ),
            // v4, compact: count+1, type, len+1 "t", null keys (0), the resource's tags, the
            // two flags, the body's tags.
            (
                4,
                &[0x02, 0x02, 0x02, b't', 0x00, 0x00, 0x00, 0x00, 0x00],
                one_topic(),
            ),
            // One key asked for: an array of one string.
            (
                1,
                &[
                    0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, b't', 0x00, 0x00, 0x00, 0x01, 0x00,
                    0x01, b'a', 0x00,
                ],
                with_keys(),
            ),
            (
                4,
                &[
                    0x02, 0x02, 0x02, b't', 0x02, 0x02, b'a', 0x00, 0x00, 0x00, 0x00,
                ],
                with_keys(),
            ),
        ],
        DescribeConfigsResponse: [
            (1, RESPONSE_V1, answer(1)),
            (2, RESPONSE_V1, answer(2)),
            (3, &response_v3_bytes()[..], answer(3)),
            (
                4,
                &[
                    0x00, 0x00, 0x00, 0x00, // throttle
                    0x02, // one result
                    0x00, 0x00, // error_code
                    0x00, // error_message null
                    0x02, // resource_type TOPIC
                    0x02, b't', // resource_name
                    0x02, // one config
                    0x02, b'a', // name
                    0x02, b'b', // value
                    0x00, // read_only
                    0x05, // config_source DEFAULT_CONFIG
                    0x00, // is_sensitive
                    0x01, // no synonyms
                    0x02, // config_type STRING
                    0x00, // documentation null
                    0x00, 0x00, 0x00, // the config's, the result's and the body's tags
                ],
                answer(4),
            ),
            // An unknown topic: its error code and message, no configs.
            (
                4,
                &[
                    0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x03, 0x03, b'n', b'o', 0x02, 0x02, b't',
                    0x01, 0x00, 0x00,
                ],
                DescribeConfigsResponse {
                    results: vec![DescribeConfigsResult {
                        error_code: 3,
                        error_message: Some("no".into()),
                        resource_type: ConfigResourceType::TOPIC,
                        resource_name: "t".into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            ),
        ],
    }
    length_bombs {
        DescribeConfigsResponse: [
            // v1: results count 0x7fffffff.
            (1, &[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
            // v4: results compact count 0x7fffffff.
            (4, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0]),
            // v1: one result whose configs count says 0x7fffffff.
            (
                1,
                &[
                    0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, b't', 0x7f, 0xff, 0xff,
                    0xff, 0, 0,
                ],
            ),
            // v1: one config whose synonyms count says 0x7fffffff.
            (
                1,
                &[
                    0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, b't', 0, 0, 0, 1, 0, 1,
                    b'a', 0xff, 0xff, 0, 5, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0,
                ],
            ),
            // v1: one result whose error message says 0x7fff bytes.
            (1, &[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0, 0]),
        ],
        DescribeConfigsRequest: [
            // v1: resources count 0x7fffffff.
            (1, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]),
            // v4: one resource whose keys count says 0x7ffffffe.
            (
                4,
                &[0x02, 0x02, 0x02, b't', 0xff, 0xff, 0xff, 0xff, 0x07, 0],
            ),
        ],
    }
}

//! DescribeConfigs (API key 32), versions 1–4: the configuration of topics (or brokers, broker
//! loggers, client-metrics subscriptions, groups), each entry with its value and where the
//! value comes from.
//!
//! A request names resources by type and name, each with the configuration keys wanted (or
//! `None` for all). Any broker answers for a topic (from its metadata); a broker's own
//! configuration is answered by that broker. Each resource gets its own error code in the
//! response: `UNKNOWN_TOPIC_OR_PARTITION` for a topic that doesn't exist,
//! `TOPIC_AUTHORIZATION_FAILED` without `DESCRIBE_CONFIGS` on it, `INVALID_TOPIC_EXCEPTION`
//! for a name that can't be a topic's.
//!
//! Version 1 (the oldest Kafka 4 serves; version 0 was removed) replaced version 0's
//! `is_default` with [`DescribeConfigsResourceResult::config_source`] and added synonyms (the
//! same setting at each level it may be set, asked for with
//! [`DescribeConfigsRequest::include_synonyms`]); version 2 throttles after answering;
//! version 3 adds each entry's type and documentation (asked for with
//! [`DescribeConfigsRequest::include_documentation`]); version 4 is the first flexible version.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_DescribeConfigs>, KIP-133 (describe
//! configs), KIP-226 (config sources and synonyms), KIP-569 (types and documentation);
//! `DescribeConfigsRequest.json` / `DescribeConfigsResponse.json`, and the `ConfigSource` and
//! `ConfigType` enums of Kafka's `DescribeConfigsResponse.java`.

use crate::messages::codec::{int8_newtype, wire_message, wire_struct};

int8_newtype! {
    /// The type of a configuration resource: an open newtype over the wire's `int8`, so a type
    /// this crate doesn't name survives decoding.
    ///
    /// # References
    /// Kafka's `ConfigResource.Type`; the `ResourceType` fields of `DescribeConfigsRequest.json`.
    pub struct ConfigResourceType(pub i8), unknown "resource type" {
        /// A type the broker doesn't know.
        UNKNOWN = 0 => "UNKNOWN",
        /// A topic (the resource name is the topic's name).
        TOPIC = 2 => "TOPIC",
        /// A broker (the resource name is its node id, or empty for the cluster-wide default).
        BROKER = 4 => "BROKER",
        /// A broker's loggers (the resource name is the broker's node id).
        BROKER_LOGGER = 8 => "BROKER_LOGGER",
        /// A client-metrics subscription (KIP-714).
        CLIENT_METRICS = 16 => "CLIENT_METRICS",
        /// A consumer group (KIP-848).
        GROUP = 32 => "GROUP",
    }
}

int8_newtype! {
    /// Where a configuration value comes from: an open newtype over the wire's `int8`.
    ///
    /// For a topic, [`ConfigSource::TOPIC_CONFIG`] is a value set on the topic itself (at creation
    /// or with `kafka-configs --alter`); the others are what the topic inherits: a broker's
    /// dynamic configuration (for this broker or the cluster-wide default), its
    /// `server.properties`, or Kafka's own default.
    ///
    /// # References
    /// KIP-226; the `ConfigSource` enum of Kafka's `DescribeConfigsResponse.java`.
    pub struct ConfigSource(pub i8), unknown "config source" {
        /// A source the broker can't tell.
        UNKNOWN = 0 => "UNKNOWN",
        /// Set on the topic itself.
        TOPIC_CONFIG = 1 => "TOPIC_CONFIG",
        /// A dynamic configuration of this broker.
        DYNAMIC_BROKER_CONFIG = 2 => "DYNAMIC_BROKER_CONFIG",
        /// A dynamic configuration of every broker (the cluster-wide default).
        DYNAMIC_DEFAULT_BROKER_CONFIG = 3 => "DYNAMIC_DEFAULT_BROKER_CONFIG",
        /// The broker's static configuration (`server.properties`).
        STATIC_BROKER_CONFIG = 4 => "STATIC_BROKER_CONFIG",
        /// Kafka's own default.
        DEFAULT_CONFIG = 5 => "DEFAULT_CONFIG",
        /// A dynamic log level of a broker's logger.
        DYNAMIC_BROKER_LOGGER_CONFIG = 6 => "DYNAMIC_BROKER_LOGGER_CONFIG",
        /// A client-metrics subscription's configuration (KIP-714).
        CLIENT_METRICS_CONFIG = 7 => "CLIENT_METRICS_CONFIG",
        /// A consumer group's configuration (KIP-848).
        GROUP_CONFIG = 8 => "GROUP_CONFIG",
    }

    /// Kafka's name for the source (`TOPIC_CONFIG`), or `None` for one this crate doesn't know.
    pub fn name(self) -> Option<&'static str> {
        self.known_name()
    }
}

wire_struct! {
    /// DescribeConfigs request body.
    ///
    /// # References
    /// `DescribeConfigsRequest.json`.
    pub struct DescribeConfigsRequest in "DescribeConfigsRequest" {
        /// The resources whose configurations are asked for.
        pub resources: Vec<DescribeConfigsResource>,
        /// Whether to list each entry's synonyms (v1+).
        pub include_synonyms: bool => since(1),
        /// Whether to send each entry's documentation (v3+).
        pub include_documentation: bool => since(3),
    }

    /// A resource in a DescribeConfigs request.
    pub struct DescribeConfigsResource in "DescribeConfigsRequest.resources" {
        /// The resource type.
        pub resource_type: ConfigResourceType,
        /// The resource name (for a topic, its name).
        pub resource_name: String,
        /// The configuration keys to list, or `None` for all.
        pub configuration_keys: Option<Vec<String>>,
    }

    /// DescribeConfigs response body.
    ///
    /// # References
    /// `DescribeConfigsResponse.json`.
    pub struct DescribeConfigsResponse in "DescribeConfigsResponse" {
        /// Throttle time in milliseconds because of a quota violation.
        pub throttle_time_ms: i32,
        /// One result per resource asked about.
        pub results: Vec<DescribeConfigsResult>,
    }

    /// One resource in a DescribeConfigs response.
    pub struct DescribeConfigsResult in "DescribeConfigsResponse.results" {
        /// The error code for this resource, or 0.
        pub error_code: i16,
        /// The broker's error message, or `None`.
        pub error_message: Option<String>,
        /// The resource type.
        pub resource_type: ConfigResourceType,
        /// The resource name.
        pub resource_name: String,
        /// The resource's configuration entries (none after an error).
        pub configs: Vec<DescribeConfigsResourceResult>,
    }

    /// One configuration entry of a resource.
    pub struct DescribeConfigsResourceResult in "DescribeConfigsResponse.results.configs" {
        /// The configuration name (`retention.ms`).
        pub name: String,
        /// The value, or `None` (a sensitive entry's value is always `None`).
        pub value: Option<String>,
        /// Whether the entry is read-only.
        pub read_only: bool,
        /// Where the value comes from (v1+, ignorable; -1 where unknown).
        pub config_source: ConfigSource = ConfigSource(-1) => since(1).ignorable(),
        /// Whether the entry is sensitive (a password): its value is never sent.
        pub is_sensitive: bool,
        /// The entry's synonyms, most specific first, when the request asked for them (v1+,
        /// ignorable).
        pub synonyms: Vec<DescribeConfigsSynonym> => since(1).ignorable(),
        /// The data type (v3+, ignorable): 0 unknown, 1 `BOOLEAN`, 2 `STRING`, 3 `INT`,
        /// 4 `SHORT`, 5 `LONG`, 6 `DOUBLE`, 7 `LIST`, 8 `CLASS`, 9 `PASSWORD`.
        pub config_type: i8 => since(3).ignorable(),
        /// The entry's documentation, when the request asked for it (v3+, ignorable).
        pub documentation: Option<String> => since(3).ignorable(),
    }

    /// A synonym of a configuration entry: the same setting at one level where it may be set.
    pub struct DescribeConfigsSynonym in "DescribeConfigsResponse.results.configs.synonyms" {
        /// The synonym's name (`log.retention.ms` for a topic's `retention.ms`).
        pub name: String,
        /// Its value, or `None`.
        pub value: Option<String>,
        /// Where it is set.
        pub source: ConfigSource,
    }
}

wire_message!(
    DescribeConfigsRequest => DescribeConfigsResponse: DESCRIBE_CONFIGS,
    versions 1..=4, first flexible 4
);

impl DescribeConfigsRequest {
    /// A request for every configuration entry of each of `topics`, without synonyms or
    /// documentation.
    pub fn for_topics<S: Into<String>>(topics: impl IntoIterator<Item = S>) -> Self {
        DescribeConfigsRequest {
            resources: topics
                .into_iter()
                .map(|name| DescribeConfigsResource {
                    resource_type: ConfigResourceType::TOPIC,
                    resource_name: name.into(),
                    configuration_keys: None,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }
}

impl DescribeConfigsResponse {
    /// The result for the resource of type `resource_type` named `name`, if the response has
    /// one.
    pub fn result(
        &self,
        resource_type: ConfigResourceType,
        name: &str,
    ) -> Option<&DescribeConfigsResult> {
        self.results
            .iter()
            .find(|r| r.resource_type == resource_type && r.resource_name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::messages::testing::{
        arb_unknown_tags, assert_encoding_prefixes_fail, assert_prefixes_fail,
        check_not_in_version, codec_tests, encode as enc, property_tests,
    };
    use crate::messages::{decode_exact, Message};
    use bytes::Bytes;
    use proptest::collection::vec;
    use proptest::prelude::*;

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
            .prop_map(move |(resources, synonyms, documentation, tags)| {
                DescribeConfigsRequest {
                    resources,
                    include_synonyms: synonyms,
                    include_documentation: v >= 3 && documentation,
                    unknown_tagged_fields: tags,
                }
            })
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
            0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, b't', 0, 0, 0,
            2, // two configs
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
        assert_eq!(enc(&r, 1), wire);
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
        let b = enc(&full, 2);
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
}

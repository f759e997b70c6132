//! ApiVersions (API key 18), versions 0–4: which APIs and versions the broker supports.
//!
//! The first request on every connection. Version 3 is the first flexible version; the
//! response nevertheless always goes with response header v0 (KIP-511, handled in
//! [`crate::header`]), so that a client can read the error of a version the broker doesn't
//! know. A broker that rejects the request's version answers with a v0 body carrying error 35
//! (`UNSUPPORTED_VERSION`) and its own ApiVersions range; [`crate::negotiate`] handles that
//! fallback.
//!
//! # References
//! <https://kafka.apache.org/protocol#api_versions>, KIP-35, KIP-511, KIP-584 (features),
//! `ApiVersionsRequest.json` / `ApiVersionsResponse.json` (Kafka 4.2.1).

use crate::api_key::ApiKey;
use crate::messages::codec::{wire_message, wire_struct};
use crate::messages::VersionRange;

wire_struct! {
    /// ApiVersions request body.
    ///
    /// Versions 0–2 are empty; versions 3+ name the client software (both fields ignorable: they
    /// are dropped when encoding an older version). Brokers refuse v3+ requests whose name or
    /// version doesn't match `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?` with `INVALID_REQUEST`,
    /// and the empty strings of [`Default`] don't: use [`ApiVersionsRequest::kseek`] or
    /// [`ApiVersionsRequest::for_client`].
    ///
    /// # References
    /// `ApiVersionsRequest.json`, KIP-511.
    pub struct ApiVersionsRequest in "ApiVersionsRequest" {
        /// The name of the client (versions 3+). Brokers accept `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
        pub client_software_name: String => since(3).ignorable(),
        /// The version of the client (versions 3+), same character set as the name.
        pub client_software_version: String => since(3).ignorable(),
    }
}

impl ApiVersionsRequest {
    /// A request naming the client as `name` `version` (each must match the broker's
    /// pattern, see the type's documentation).
    pub fn for_client(name: impl Into<String>, version: impl Into<String>) -> Self {
        ApiVersionsRequest {
            client_software_name: name.into(),
            client_software_version: version.into(),
            unknown_tagged_fields: Default::default(),
        }
    }

    /// A request naming this crate: `kseek` and its version.
    pub fn kseek() -> Self {
        Self::for_client("kseek", env!("CARGO_PKG_VERSION"))
    }

    /// Whether the client name and version match the pattern brokers require from v3 on.
    pub fn is_valid_for_brokers(&self) -> bool {
        is_valid_software_id(&self.client_software_name)
            && is_valid_software_id(&self.client_software_version)
    }
}

/// `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`, Kafka's `SOFTWARE_NAME_VERSION_PATTERN`.
fn is_valid_software_id(s: &str) -> bool {
    let edge = |c: u8| c.is_ascii_alphanumeric();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'.';
    match s.as_bytes() {
        [] => false,
        [only] => edge(*only),
        [first, middle @ .., last] => edge(*first) && edge(*last) && middle.iter().all(inner),
    }
}

wire_struct! {
    /// ApiVersions response body.
    ///
    /// `error_code` 35 (`UNSUPPORTED_VERSION`) comes in a v0 body whatever version was asked;
    /// see [`crate::negotiate::decode_api_versions_response`].
    ///
    /// # References
    /// `ApiVersionsResponse.json`, KIP-35, KIP-511, KIP-584.
    pub struct ApiVersionsResponse in "ApiVersionsResponse" {
        /// The top-level error code.
        pub error_code: i16,
        /// The APIs the broker supports, with their version ranges.
        pub api_keys: Vec<ApiVersion>,
        /// Throttle time in milliseconds because of a quota violation (versions 1+; ignorable).
        pub throttle_time_ms: i32 => since(1).ignorable(),
        /// Features the broker supports (tag 0, versions 3+; ignorable).
        pub supported_features: Vec<SupportedFeatureKey> => since(3).tagged(0).ignorable(),
        /// Epoch of the finalized features, -1 when unknown (tag 1, versions 3+; ignorable).
        pub finalized_features_epoch: i64 = -1 => since(3).tagged(1).ignorable(),
        /// Cluster-wide finalized features, valid when `finalized_features_epoch >= 0` (tag 2,
        /// versions 3+; ignorable).
        pub finalized_features: Vec<FinalizedFeatureKey> => since(3).tagged(2).ignorable(),
        /// Set by a KRaft controller ready for ZooKeeper migration (tag 3, versions 3+; ignorable).
        pub zk_migration_ready: bool => since(3).tagged(3).ignorable(),
    }

    /// One API the broker supports.
    pub struct ApiVersion in "ApiVersionsResponse.api_keys" {
        /// The API key.
        pub api_key: i16,
        /// The lowest supported version, inclusive.
        pub min_version: i16,
        /// The highest supported version, inclusive.
        pub max_version: i16,
    }

    /// A feature the broker supports (KIP-584).
    pub struct SupportedFeatureKey in "ApiVersionsResponse.supported_features" {
        /// The feature's name.
        pub name: String,
        /// The lowest supported version of the feature.
        pub min_version: i16,
        /// The highest supported version of the feature.
        pub max_version: i16,
    }

    /// A cluster-wide finalized feature (KIP-584).
    pub struct FinalizedFeatureKey in "ApiVersionsResponse.finalized_features" {
        /// The feature's name.
        pub name: String,
        /// The finalized highest version level.
        pub max_version_level: i16,
        /// The finalized lowest version level.
        pub min_version_level: i16,
    }
}

wire_message!(
    ApiVersionsRequest => ApiVersionsResponse: API_VERSIONS,
    versions 0..=4, first flexible 3
);

impl ApiVersionsResponse {
    /// The broker's version range for `api_key`, if it lists the API.
    pub fn range_of(&self, api_key: ApiKey) -> Option<VersionRange> {
        self.api_keys
            .iter()
            .find(|k| k.api_key == api_key.0)
            .map(|k| VersionRange {
                min: k.min_version,
                max: k.max_version,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::messages::decode_exact;
    use crate::messages::testing::{
        arb_unknown_tags, arb_unknown_tags_in, assert_encoding_prefixes_fail, codec_tests,
        encode as enc, property_tests,
    };
    use crate::messages::Message;
    use crate::primitives::{RawTaggedField, UnknownTaggedFields};
    use bytes::{Bytes, BytesMut};
    use proptest::collection::vec;
    use proptest::prelude::*;

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
        let finalized =
            feature().prop_map(|(name, (max_version_level, min_version_level), tags)| {
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
        assert_eq!(enc(&m, 4), enc(&m, 3));
        assert_eq!(enc(&m, 2).len(), 2 + 4 + 6 + 4);
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
        assert_eq!(enc(&req, 2), Vec::<u8>::new());
        let resp = ApiVersionsResponse {
            throttle_time_ms: 9,
            zk_migration_ready: true,
            ..Default::default()
        };
        assert_eq!(enc(&resp, 0), vec![0, 0, 0, 0, 0, 0]);
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
}

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

use bytes::{BufMut, Bytes, BytesMut};

use crate::api_key::ApiKey;
use crate::error::Result;
use crate::messages::{Message, Request, VersionRange};
use crate::primitives::{
    get_array, get_bool, get_i16, get_i32, get_i64, get_string, get_tagged_fields, get_tags_if,
    get_unknown_tagged_fields, put_array, put_bool, put_string, put_tagged_fields, put_tags_if,
    put_unknown_tagged_fields, UnknownTaggedFields,
};

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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiVersionsRequest {
    /// The name of the client (versions 3+). Brokers accept `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
    pub client_software_name: String,
    /// The version of the client (versions 3+), same character set as the name.
    pub client_software_version: String,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl ApiVersionsRequest {
    /// A request naming the client as `name` `version` (each must match the broker's
    /// pattern, see the type's documentation).
    pub fn for_client(name: impl Into<String>, version: impl Into<String>) -> Self {
        ApiVersionsRequest {
            client_software_name: name.into(),
            client_software_version: version.into(),
            unknown_tagged_fields: UnknownTaggedFields::default(),
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

impl Message for ApiVersionsRequest {
    const API_KEY: ApiKey = ApiKey::API_VERSIONS;
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 4 };
    const FIRST_FLEXIBLE_VERSION: i16 = 3;
    const NAME: &'static str = "ApiVersionsRequest";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        if Self::is_flexible(version) {
            put_string(
                buf,
                &self.client_software_name,
                true,
                "ApiVersionsRequest.client_software_name",
            )?;
            put_string(
                buf,
                &self.client_software_version,
                true,
                "ApiVersionsRequest.client_software_version",
            )?;
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let mut out = Self::default();
        if Self::is_flexible(version) {
            out.client_software_name =
                get_string(buf, true, "ApiVersionsRequest.client_software_name")?;
            out.client_software_version =
                get_string(buf, true, "ApiVersionsRequest.client_software_version")?;
            out.unknown_tagged_fields = get_unknown_tagged_fields(buf, "ApiVersionsRequest")?;
        }
        Ok(out)
    }
}

impl Request for ApiVersionsRequest {
    type Response = ApiVersionsResponse;
}

/// ApiVersions response body.
///
/// `error_code` 35 (`UNSUPPORTED_VERSION`) comes in a v0 body whatever version was asked;
/// see [`crate::negotiate::decode_api_versions_response`].
///
/// # References
/// `ApiVersionsResponse.json`, KIP-35, KIP-511, KIP-584.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersionsResponse {
    /// The top-level error code.
    pub error_code: i16,
    /// The APIs the broker supports, with their version ranges.
    pub api_keys: Vec<ApiVersion>,
    /// Throttle time in milliseconds because of a quota violation (versions 1+; ignorable).
    pub throttle_time_ms: i32,
    /// Features the broker supports (tag 0, versions 3+; ignorable).
    pub supported_features: Vec<SupportedFeatureKey>,
    /// Epoch of the finalized features, -1 when unknown (tag 1, versions 3+; ignorable).
    pub finalized_features_epoch: i64,
    /// Cluster-wide finalized features, valid when `finalized_features_epoch >= 0` (tag 2,
    /// versions 3+; ignorable).
    pub finalized_features: Vec<FinalizedFeatureKey>,
    /// Set by a KRaft controller ready for ZooKeeper migration (tag 3, versions 3+; ignorable).
    pub zk_migration_ready: bool,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for ApiVersionsResponse {
    fn default() -> Self {
        ApiVersionsResponse {
            error_code: 0,
            api_keys: Vec::new(),
            throttle_time_ms: 0,
            supported_features: Vec::new(),
            finalized_features_epoch: -1,
            finalized_features: Vec::new(),
            zk_migration_ready: false,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        }
    }
}

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

/// One API the broker supports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiVersion {
    /// The API key.
    pub api_key: i16,
    /// The lowest supported version, inclusive.
    pub min_version: i16,
    /// The highest supported version, inclusive.
    pub max_version: i16,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A feature the broker supports (KIP-584).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SupportedFeatureKey {
    /// The feature's name.
    pub name: String,
    /// The lowest supported version of the feature.
    pub min_version: i16,
    /// The highest supported version of the feature.
    pub max_version: i16,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A cluster-wide finalized feature (KIP-584).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FinalizedFeatureKey {
    /// The feature's name.
    pub name: String,
    /// The finalized highest version level.
    pub max_version_level: i16,
    /// The finalized lowest version level.
    pub min_version_level: i16,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// Tags of the response's known tagged fields.
const TAG_SUPPORTED_FEATURES: u32 = 0;
const TAG_FINALIZED_FEATURES_EPOCH: u32 = 1;
const TAG_FINALIZED_FEATURES: u32 = 2;
const TAG_ZK_MIGRATION_READY: u32 = 3;

/// Smallest encoding of a feature entry: name 1, two int16s, tagged section 1.
const FEATURE_MIN_SIZE: usize = 6;

impl ApiVersion {
    fn encode(&self, buf: &mut BytesMut, flexible: bool) {
        buf.put_i16(self.api_key);
        buf.put_i16(self.min_version);
        buf.put_i16(self.max_version);
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
    }

    fn decode(buf: &mut Bytes, flexible: bool) -> Result<Self> {
        let mut out = ApiVersion {
            api_key: get_i16(buf, "ApiVersionsResponse.api_keys.api_key")?,
            min_version: get_i16(buf, "ApiVersionsResponse.api_keys.min_version")?,
            max_version: get_i16(buf, "ApiVersionsResponse.api_keys.max_version")?,
            unknown_tagged_fields: UnknownTaggedFields::default(),
        };
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "ApiVersionsResponse.api_keys")?;
        Ok(out)
    }
}

impl SupportedFeatureKey {
    fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        put_string(
            buf,
            &self.name,
            true,
            "ApiVersionsResponse.supported_features.name",
        )?;
        buf.put_i16(self.min_version);
        buf.put_i16(self.max_version);
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        Ok(SupportedFeatureKey {
            name: get_string(buf, true, "ApiVersionsResponse.supported_features.name")?,
            min_version: get_i16(buf, "ApiVersionsResponse.supported_features.min_version")?,
            max_version: get_i16(buf, "ApiVersionsResponse.supported_features.max_version")?,
            unknown_tagged_fields: get_unknown_tagged_fields(
                buf,
                "ApiVersionsResponse.supported_features",
            )?,
        })
    }
}

impl FinalizedFeatureKey {
    fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        put_string(
            buf,
            &self.name,
            true,
            "ApiVersionsResponse.finalized_features.name",
        )?;
        buf.put_i16(self.max_version_level);
        buf.put_i16(self.min_version_level);
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        Ok(FinalizedFeatureKey {
            name: get_string(buf, true, "ApiVersionsResponse.finalized_features.name")?,
            max_version_level: get_i16(
                buf,
                "ApiVersionsResponse.finalized_features.max_version_level",
            )?,
            min_version_level: get_i16(
                buf,
                "ApiVersionsResponse.finalized_features.min_version_level",
            )?,
            unknown_tagged_fields: get_unknown_tagged_fields(
                buf,
                "ApiVersionsResponse.finalized_features",
            )?,
        })
    }
}

impl Message for ApiVersionsResponse {
    const API_KEY: ApiKey = ApiKey::API_VERSIONS;
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 4 };
    const FIRST_FLEXIBLE_VERSION: i16 = 3;
    const NAME: &'static str = "ApiVersionsResponse";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        buf.put_i16(self.error_code);
        put_array(
            buf,
            &self.api_keys,
            flexible,
            "ApiVersionsResponse.api_keys",
            |b, k| {
                k.encode(b, flexible);
                Ok(())
            },
        )?;
        // ThrottleTimeMs and all the tagged fields are ignorable: dropped in older versions.
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        }
        if flexible {
            let mut known = Vec::new();
            if !self.supported_features.is_empty() {
                let mut b = BytesMut::new();
                put_array(
                    &mut b,
                    &self.supported_features,
                    true,
                    "ApiVersionsResponse.supported_features",
                    |b, f| f.encode(b),
                )?;
                known.push((TAG_SUPPORTED_FEATURES, b));
            }
            if self.finalized_features_epoch != -1 {
                let mut b = BytesMut::new();
                b.put_i64(self.finalized_features_epoch);
                known.push((TAG_FINALIZED_FEATURES_EPOCH, b));
            }
            if !self.finalized_features.is_empty() {
                let mut b = BytesMut::new();
                put_array(
                    &mut b,
                    &self.finalized_features,
                    true,
                    "ApiVersionsResponse.finalized_features",
                    |b, f| f.encode(b),
                )?;
                known.push((TAG_FINALIZED_FEATURES, b));
            }
            if self.zk_migration_ready {
                let mut b = BytesMut::new();
                put_bool(&mut b, true);
                known.push((TAG_ZK_MIGRATION_READY, b));
            }
            put_tagged_fields(
                buf,
                known,
                &self.unknown_tagged_fields,
                "ApiVersionsResponse",
            )?;
        }
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut out = Self {
            error_code: get_i16(buf, "ApiVersionsResponse.error_code")?,
            // Smallest element: three int16s, plus a tagged section when flexible.
            api_keys: get_array(
                buf,
                flexible,
                if flexible { 7 } else { 6 },
                "ApiVersionsResponse.api_keys",
                |b| ApiVersion::decode(b, flexible),
            )?,
            ..Self::default()
        };
        if version >= 1 {
            out.throttle_time_ms = get_i32(buf, "ApiVersionsResponse.throttle_time_ms")?;
        }
        if flexible {
            let mut supported_features = Vec::new();
            let mut finalized_features_epoch = -1;
            let mut finalized_features = Vec::new();
            let mut zk_migration_ready = false;
            out.unknown_tagged_fields =
                get_tagged_fields(buf, "ApiVersionsResponse", |tag, data| {
                    match tag {
                        TAG_SUPPORTED_FEATURES => {
                            supported_features = get_array(
                                data,
                                true,
                                FEATURE_MIN_SIZE,
                                "ApiVersionsResponse.supported_features",
                                SupportedFeatureKey::decode,
                            )?;
                        }
                        TAG_FINALIZED_FEATURES_EPOCH => {
                            finalized_features_epoch =
                                get_i64(data, "ApiVersionsResponse.finalized_features_epoch")?;
                        }
                        TAG_FINALIZED_FEATURES => {
                            finalized_features = get_array(
                                data,
                                true,
                                FEATURE_MIN_SIZE,
                                "ApiVersionsResponse.finalized_features",
                                FinalizedFeatureKey::decode,
                            )?;
                        }
                        TAG_ZK_MIGRATION_READY => {
                            zk_migration_ready =
                                get_bool(data, "ApiVersionsResponse.zk_migration_ready")?;
                        }
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
            out.supported_features = supported_features;
            out.finalized_features_epoch = finalized_features_epoch;
            out.finalized_features = finalized_features;
            out.zk_migration_ready = zk_migration_ready;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::messages::decode_exact;
    use crate::messages::testing::property_tests;
    use crate::messages::testing::{assert_prefixes_fail, assert_wire, encode as enc};
    use crate::primitives::RawTaggedField;
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// Unknown tagged fields with tags above `first` (clear of the known tags).
    fn unknown_tags(first: u32) -> impl Strategy<Value = UnknownTaggedFields> {
        vec((0u32..3, vec(any::<u8>(), 0..4)), 0..3).prop_map(move |fields| {
            let mut tag = first;
            UnknownTaggedFields(
                fields
                    .into_iter()
                    .map(|(gap, data)| {
                        tag += gap + 1;
                        RawTaggedField {
                            tag,
                            data: Bytes::from(data),
                        }
                    })
                    .collect(),
            )
        })
    }

    fn request(v: i16) -> impl Strategy<Value = ApiVersionsRequest> {
        ("[a-zA-Z0-9.-]{0,12}", "[a-zA-Z0-9.-]{0,8}", unknown_tags(0)).prop_map(
            move |(name, ver, tags)| {
                if v >= 3 {
                    ApiVersionsRequest {
                        client_software_name: name,
                        client_software_version: ver,
                        unknown_tagged_fields: tags,
                    }
                } else {
                    ApiVersionsRequest::default()
                }
            },
        )
    }

    fn response(v: i16) -> impl Strategy<Value = ApiVersionsResponse> {
        let flexible = v >= 3;
        let api_key = (any::<i16>(), any::<i16>(), any::<i16>(), unknown_tags(0)).prop_map(
            move |(api_key, min_version, max_version, tags)| ApiVersion {
                api_key,
                min_version,
                max_version,
                unknown_tagged_fields: if flexible { tags } else { Default::default() },
            },
        );
        let supported = ("[a-z.]{0,10}", any::<i16>(), any::<i16>(), unknown_tags(0)).prop_map(
            |(name, min_version, max_version, tags)| SupportedFeatureKey {
                name,
                min_version,
                max_version,
                unknown_tagged_fields: tags,
            },
        );
        let finalized = ("[a-z.]{0,10}", any::<i16>(), any::<i16>(), unknown_tags(0)).prop_map(
            |(name, max_version_level, min_version_level, tags)| FinalizedFeatureKey {
                name,
                max_version_level,
                min_version_level,
                unknown_tagged_fields: tags,
            },
        );
        (
            any::<i16>(),
            vec(api_key, 0..5),
            any::<i32>(),
            vec(supported, 0..3),
            prop_oneof![Just(-1i64), any::<i64>()],
            vec(finalized, 0..3),
            any::<bool>(),
            unknown_tags(3),
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

    property_tests!(ApiVersionsRequest, ApiVersionsResponse, 0..=4, 96);

    #[test]
    fn request_bytes() {
        // Versions 0-2: an empty body.
        assert_wire(&ApiVersionsRequest::default(), 2, &[]);
        let m = ApiVersionsRequest {
            client_software_name: "kseek".into(),
            client_software_version: "0.1".into(),
            unknown_tagged_fields: Default::default(),
        };
        assert_wire(
            &m,
            3,
            &[
                0x06, b'k', b's', b'e', b'e', b'k', // compact string, 5+1
                0x04, b'0', b'.', b'1', // compact string, 3+1
                0x00, // tagged section
            ],
        );
    }

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

    #[test]
    fn response_v0_and_v1_bytes() {
        let m = ApiVersionsResponse {
            api_keys: vec![ApiVersion {
                api_key: 18,
                min_version: 0,
                max_version: 4,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_wire(
            &m,
            0,
            &[
                0x00, 0x00, // error_code
                0x00, 0x00, 0x00, 0x01, // one api key
                0x00, 0x12, 0x00, 0x00, 0x00, 0x04, // 18: 0..=4
            ],
        );
        let m = ApiVersionsResponse {
            error_code: 35,
            throttle_time_ms: 100,
            ..Default::default()
        };
        assert_wire(
            &m,
            1,
            &[
                0x00, 0x23, // UNSUPPORTED_VERSION
                0x00, 0x00, 0x00, 0x00, // no api keys
                0x00, 0x00, 0x00, 0x64, // throttle 100
            ],
        );
    }

    #[test]
    fn response_v3_bytes_with_every_tagged_field() {
        let m = ApiVersionsResponse {
            error_code: 0,
            api_keys: vec![ApiVersion {
                api_key: 1,
                min_version: 4,
                max_version: 18,
                ..Default::default()
            }],
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
        };
        assert_wire(
            &m,
            3,
            &[
                0x00, 0x00, // error_code
                0x02, // one api key (compact)
                0x00, 0x01, 0x00, 0x04, 0x00, 0x12, 0x00, // Fetch 4..=18, tagged section
                0x00, 0x00, 0x00, 0x00, // throttle
                0x05, // five tagged fields
                0x00, 0x09, // tag 0, 9 bytes:
                0x02, 0x03, b'm', b'v', 0x00, 0x01, 0x00, 0x1b, 0x00, // [ {mv, 1, 27} ]
                0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x05, // tag 1: epoch 5
                0x02, 0x09, // tag 2, 9 bytes:
                0x02, 0x03, b'm', b'v', 0x00, 0x1b, 0x00, 0x1b,
                0x00, // [ {mv, max 27, min 27} ]
                0x03, 0x01, 0x01, // tag 3: true
                0x07, 0x02, 0xaa, 0xbb, // unknown tag 7
            ],
        );
        // The same at v4 is byte-identical; at v2 the tagged fields are dropped.
        assert_eq!(enc(&m, 4), enc(&m, 3));
        assert_eq!(enc(&m, 2).len(), 2 + 4 + 6 + 4);
    }

    #[test]
    fn prefixes_fail_and_trailing_bytes_are_refused() {
        let req = ApiVersionsRequest {
            client_software_name: "k".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
        assert_prefixes_fail::<ApiVersionsRequest>(&enc(&req, 3), 3);
        assert_prefixes_fail::<ApiVersionsRequest>(&enc(&req, 4), 4);
        // v0-2 is empty: only the trailing byte can be checked.
        for v in 0..=2 {
            assert_prefixes_fail::<ApiVersionsRequest>(&enc(&ApiVersionsRequest::default(), v), v);
        }
        let resp = ApiVersionsResponse {
            api_keys: vec![
                ApiVersion {
                    api_key: 3,
                    min_version: 0,
                    max_version: 13,
                    ..Default::default()
                };
                2
            ],
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
            assert_prefixes_fail::<ApiVersionsResponse>(&enc(&resp, v), v);
        }
    }

    #[test]
    fn length_bombs_fail_at_once() {
        // api_keys count 0x7fffffff (classic) in a 10-byte buffer.
        let b = Bytes::from_static(&[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        assert!(matches!(
            decode_exact::<ApiVersionsResponse>(b, 0),
            Err(Error::InvalidLength { .. })
        ));
        // Compact counts 0x7fffffff and 0xffffffff.
        for count in [
            &[0xff, 0xff, 0xff, 0xff, 0x07][..],
            &[0xff, 0xff, 0xff, 0xff, 0x0f][..],
        ] {
            let mut b = vec![0, 0];
            b.extend_from_slice(count);
            b.extend_from_slice(&[0; 3]);
            assert!(decode_exact::<ApiVersionsResponse>(Bytes::from(b), 3).is_err());
        }
        // A supported_features array inside tag 0 claiming 0x7fffffff entries.
        let b = Bytes::from_static(&[
            0, 0, 0x01, 0, 0, 0, 0, 0x01, 0x00, 0x05, 0xff, 0xff, 0xff, 0xff, 0x07,
        ]);
        assert!(decode_exact::<ApiVersionsResponse>(b, 3).is_err());
        // Request v3: client_software_name of 0x7ffffffe bytes.
        let b = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0]);
        assert!(decode_exact::<ApiVersionsRequest>(b, 3).is_err());
    }

    #[test]
    fn ignorable_fields_are_dropped_in_older_versions() {
        // Every field that older versions lack is ignorable in both schemas, so nothing
        // errors; the fields simply disappear.
        let req = ApiVersionsRequest {
            client_software_name: "kseek".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
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
        assert!(matches!(
            ApiVersionsRequest::default().encode(&mut b, 5),
            Err(Error::UnsupportedVersion { version: 5, .. })
        ));
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
            api_keys: vec![ApiVersion {
                api_key: 1,
                min_version: 4,
                max_version: 17,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            resp.range_of(ApiKey::FETCH),
            Some(VersionRange { min: 4, max: 17 })
        );
        assert_eq!(resp.range_of(ApiKey::METADATA), None);
    }
}

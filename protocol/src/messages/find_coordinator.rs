//! FindCoordinator (API key 10), versions 0–6: which broker coordinates a consumer group (or a
//! transaction or share group).
//!
//! Versions 0–3 ask about one key (`key`) and answer with one coordinator in the top-level
//! fields; version 4 and later batch the question (`coordinator_keys`) and answer with one
//! [`Coordinator`] per key. Version 3 is the first flexible version.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_FindCoordinator>, KIP-699 (batching),
//! `FindCoordinatorRequest.json` / `FindCoordinatorResponse.json` (Kafka 4.2.1).

use bytes::{BufMut, Bytes, BytesMut};

use crate::api_key::ApiKey;
use crate::error::Result;
use crate::messages::{Message, Request, VersionRange};
use crate::primitives::{
    get_array, get_i16, get_i32, get_i8, get_nullable_string, get_string, get_tags_if,
    get_unknown_tagged_fields, put_array, put_nullable_string, put_string, put_tags_if,
    put_unknown_tagged_fields, require_default, UnknownTaggedFields,
};

/// `KeyType` for a consumer group coordinator.
pub const KEY_TYPE_GROUP: i8 = 0;
/// `KeyType` for a transaction coordinator.
pub const KEY_TYPE_TRANSACTION: i8 = 1;
/// `KeyType` for a share group coordinator (version 6 and later).
pub const KEY_TYPE_SHARE: i8 = 2;

/// FindCoordinator request body.
///
/// Versions 0–3 carry one [`key`](Self::key); versions 4+ carry
/// [`coordinator_keys`](Self::coordinator_keys). Neither is ignorable: encoding a non-empty
/// `key` at v4+ or non-empty `coordinator_keys` at v0–3 is an
/// [`Error::FieldNotInVersion`](crate::Error::FieldNotInVersion).
///
/// # References
/// `FindCoordinatorRequest.json`, KIP-699.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FindCoordinatorRequest {
    /// The coordinator key: a group id or transactional id (versions 0–3).
    pub key: String,
    /// The coordinator key type: [`KEY_TYPE_GROUP`], [`KEY_TYPE_TRANSACTION`] or
    /// [`KEY_TYPE_SHARE`] (versions 1+, default 0).
    pub key_type: i8,
    /// The coordinator keys (versions 4+).
    pub coordinator_keys: Vec<String>,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Message for FindCoordinatorRequest {
    const API_KEY: ApiKey = ApiKey::FIND_COORDINATOR;
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 6 };
    const FIRST_FLEXIBLE_VERSION: i16 = 3;
    const NAME: &'static str = "FindCoordinatorRequest";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        if version <= 3 {
            put_string(buf, &self.key, flexible, "FindCoordinatorRequest.key")?;
        } else {
            require_default(self.key.is_empty(), "FindCoordinatorRequest.key", version)?;
        }
        if version >= 1 {
            buf.put_i8(self.key_type);
        } else {
            require_default(
                self.key_type == 0,
                "FindCoordinatorRequest.key_type",
                version,
            )?;
        }
        if version >= 4 {
            put_array(
                buf,
                &self.coordinator_keys,
                flexible,
                "FindCoordinatorRequest.coordinator_keys",
                |b, k| put_string(b, k, flexible, "FindCoordinatorRequest.coordinator_keys"),
            )?;
        } else {
            require_default(
                self.coordinator_keys.is_empty(),
                "FindCoordinatorRequest.coordinator_keys",
                version,
            )?;
        }
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut out = Self::default();
        if version <= 3 {
            out.key = get_string(buf, flexible, "FindCoordinatorRequest.key")?;
        }
        if version >= 1 {
            out.key_type = get_i8(buf, "FindCoordinatorRequest.key_type")?;
        }
        if version >= 4 {
            // Smallest element: an empty compact string (one byte).
            out.coordinator_keys = get_array(
                buf,
                flexible,
                if flexible { 1 } else { 2 },
                "FindCoordinatorRequest.coordinator_keys",
                |b| get_string(b, flexible, "FindCoordinatorRequest.coordinator_keys"),
            )?;
        }
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "FindCoordinatorRequest")?;
        Ok(out)
    }
}

impl Request for FindCoordinatorRequest {
    type Response = FindCoordinatorResponse;
}

/// FindCoordinator response body.
///
/// Versions 0–3 answer in the top-level `error_code`, `error_message`, `node_id`, `host` and
/// `port`; versions 4+ answer in [`coordinators`](Self::coordinators), one per requested key.
///
/// # References
/// `FindCoordinatorResponse.json`, KIP-699.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FindCoordinatorResponse {
    /// Throttle time in milliseconds because of a quota violation (versions 1+; ignorable).
    pub throttle_time_ms: i32,
    /// The error code, or 0 (versions 0–3).
    pub error_code: i16,
    /// The error message, or null (versions 1–3; ignorable).
    pub error_message: Option<String>,
    /// The coordinator's node id (versions 0–3).
    pub node_id: i32,
    /// The coordinator's host name (versions 0–3).
    pub host: String,
    /// The coordinator's port (versions 0–3).
    pub port: i32,
    /// One result per requested key (versions 4+).
    pub coordinators: Vec<Coordinator>,
    /// Tagged fields this crate doesn't know (flexible versions).
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// The coordinator of one key in a FindCoordinator response (versions 4+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Coordinator {
    /// The coordinator key this result is for.
    pub key: String,
    /// The coordinator's node id.
    pub node_id: i32,
    /// The coordinator's host name.
    pub host: String,
    /// The coordinator's port.
    pub port: i32,
    /// The error code, or 0.
    pub error_code: i16,
    /// The error message, or null.
    pub error_message: Option<String>,
    /// Tagged fields this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// The smallest encoding of a [`Coordinator`] (always flexible): key 1, node id 4, host 1,
/// port 4, error code 2, error message 1, tagged section 1.
const COORDINATOR_MIN_SIZE: usize = 14;

impl Coordinator {
    fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        put_string(
            buf,
            &self.key,
            true,
            "FindCoordinatorResponse.coordinators.key",
        )?;
        buf.put_i32(self.node_id);
        put_string(
            buf,
            &self.host,
            true,
            "FindCoordinatorResponse.coordinators.host",
        )?;
        buf.put_i32(self.port);
        buf.put_i16(self.error_code);
        put_nullable_string(
            buf,
            self.error_message.as_deref(),
            true,
            "FindCoordinatorResponse.coordinators.error_message",
        )?;
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes) -> Result<Self> {
        Ok(Coordinator {
            key: get_string(buf, true, "FindCoordinatorResponse.coordinators.key")?,
            node_id: get_i32(buf, "FindCoordinatorResponse.coordinators.node_id")?,
            host: get_string(buf, true, "FindCoordinatorResponse.coordinators.host")?,
            port: get_i32(buf, "FindCoordinatorResponse.coordinators.port")?,
            error_code: get_i16(buf, "FindCoordinatorResponse.coordinators.error_code")?,
            error_message: get_nullable_string(
                buf,
                true,
                "FindCoordinatorResponse.coordinators.error_message",
            )?,
            unknown_tagged_fields: get_unknown_tagged_fields(
                buf,
                "FindCoordinatorResponse.coordinators",
            )?,
        })
    }
}

impl Message for FindCoordinatorResponse {
    const API_KEY: ApiKey = ApiKey::FIND_COORDINATOR;
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 6 };
    const FIRST_FLEXIBLE_VERSION: i16 = 3;
    const NAME: &'static str = "FindCoordinatorResponse";

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        // ThrottleTimeMs is ignorable: dropped in version 0.
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        }
        if version <= 3 {
            buf.put_i16(self.error_code);
            // ErrorMessage is ignorable: dropped in version 0.
            if version >= 1 {
                put_nullable_string(
                    buf,
                    self.error_message.as_deref(),
                    flexible,
                    "FindCoordinatorResponse.error_message",
                )?;
            }
            buf.put_i32(self.node_id);
            put_string(buf, &self.host, flexible, "FindCoordinatorResponse.host")?;
            buf.put_i32(self.port);
            require_default(
                self.coordinators.is_empty(),
                "FindCoordinatorResponse.coordinators",
                version,
            )?;
        } else {
            require_default(
                self.error_code == 0,
                "FindCoordinatorResponse.error_code",
                version,
            )?;
            require_default(
                self.node_id == 0,
                "FindCoordinatorResponse.node_id",
                version,
            )?;
            require_default(
                self.host.is_empty(),
                "FindCoordinatorResponse.host",
                version,
            )?;
            require_default(self.port == 0, "FindCoordinatorResponse.port", version)?;
            put_array(
                buf,
                &self.coordinators,
                flexible,
                "FindCoordinatorResponse.coordinators",
                |b, c| c.encode(b),
            )?;
        }
        put_tags_if(buf, flexible, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self> {
        Self::check_version(version)?;
        let flexible = Self::is_flexible(version);
        let mut out = Self::default();
        if version >= 1 {
            out.throttle_time_ms = get_i32(buf, "FindCoordinatorResponse.throttle_time_ms")?;
        }
        if version <= 3 {
            out.error_code = get_i16(buf, "FindCoordinatorResponse.error_code")?;
            if version >= 1 {
                out.error_message =
                    get_nullable_string(buf, flexible, "FindCoordinatorResponse.error_message")?;
            }
            out.node_id = get_i32(buf, "FindCoordinatorResponse.node_id")?;
            out.host = get_string(buf, flexible, "FindCoordinatorResponse.host")?;
            out.port = get_i32(buf, "FindCoordinatorResponse.port")?;
        } else {
            out.coordinators = get_array(
                buf,
                flexible,
                COORDINATOR_MIN_SIZE,
                "FindCoordinatorResponse.coordinators",
                Coordinator::decode,
            )?;
        }
        out.unknown_tagged_fields = get_tags_if(buf, flexible, "FindCoordinatorResponse")?;
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

    fn unknown_tags() -> impl Strategy<Value = UnknownTaggedFields> {
        vec((0u32..3, vec(any::<u8>(), 0..4)), 0..3).prop_map(|fields| {
            let mut tag = 0;
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

    fn request(v: i16) -> impl Strategy<Value = FindCoordinatorRequest> {
        (
            "[a-z0-9._-]{0,12}",
            0i8..3,
            vec("[a-z0-9]{0,8}", 0..4),
            unknown_tags(),
        )
            .prop_map(move |(key, key_type, keys, tags)| FindCoordinatorRequest {
                key: if v <= 3 { key } else { String::new() },
                key_type: if v >= 1 { key_type } else { 0 },
                coordinator_keys: if v >= 4 { keys } else { Vec::new() },
                unknown_tagged_fields: if v >= 3 { tags } else { Default::default() },
            })
    }

    fn coordinator() -> impl Strategy<Value = Coordinator> {
        (
            "[a-z0-9]{0,8}",
            any::<i32>(),
            "[a-z0-9.]{0,10}",
            any::<i32>(),
            any::<i16>(),
            proptest::option::of("[ -~]{0,10}"),
            unknown_tags(),
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

    fn response(v: i16) -> impl Strategy<Value = FindCoordinatorResponse> {
        (
            any::<i32>(),
            any::<i16>(),
            proptest::option::of("[ -~]{0,10}"),
            any::<i32>(),
            "[a-z0-9.]{0,10}",
            any::<i32>(),
            vec(coordinator(), 0..3),
            unknown_tags(),
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
                        unknown_tagged_fields: if v >= 3 { tags } else { Default::default() },
                    }
                },
            )
    }

    property_tests!(FindCoordinatorRequest, FindCoordinatorResponse, 0..=6, 64);

    #[test]
    fn request_v1_bytes() {
        let m = FindCoordinatorRequest {
            key: "g1".into(),
            key_type: KEY_TYPE_TRANSACTION,
            ..Default::default()
        };
        // key: int16 len 2, "g1"; key_type int8 1.
        assert_wire(&m, 1, &[0x00, 0x02, b'g', b'1', 0x01]);
        // v0 has no key type.
        let m0 = FindCoordinatorRequest {
            key: "g1".into(),
            ..Default::default()
        };
        assert_wire(&m0, 0, &[0x00, 0x02, b'g', b'1']);
    }

    #[test]
    fn request_v3_and_v4_bytes() {
        let m = FindCoordinatorRequest {
            key: "g1".into(),
            ..Default::default()
        };
        // compact string (len+1 = 3), key_type 0, empty tagged section.
        assert_wire(&m, 3, &[0x03, b'g', b'1', 0x00, 0x00]);
        let m = FindCoordinatorRequest {
            coordinator_keys: vec!["g1".into(), "x".into()],
            ..Default::default()
        };
        // key_type 0; compact array of 2 (0x03); "g1", "x"; tagged section.
        assert_wire(&m, 4, &[0x00, 0x03, 0x03, b'g', b'1', 0x02, b'x', 0x00]);
    }

    #[test]
    fn response_v0_and_v1_bytes() {
        let m = FindCoordinatorResponse {
            node_id: 1,
            host: "h".into(),
            port: 9092,
            ..Default::default()
        };
        assert_wire(
            &m,
            0,
            &[
                0x00, 0x00, // error_code
                0x00, 0x00, 0x00, 0x01, // node_id
                0x00, 0x01, b'h', // host
                0x00, 0x00, 0x23, 0x84, // port 9092
            ],
        );
        let m = FindCoordinatorResponse {
            throttle_time_ms: 5,
            error_code: 15,
            error_message: None,
            node_id: -1,
            host: String::new(),
            port: -1,
            ..Default::default()
        };
        assert_wire(
            &m,
            1,
            &[
                0x00, 0x00, 0x00, 0x05, // throttle
                0x00, 0x0f, // COORDINATOR_NOT_AVAILABLE
                0xff, 0xff, // null error message
                0xff, 0xff, 0xff, 0xff, // node_id -1
                0x00, 0x00, // empty host
                0xff, 0xff, 0xff, 0xff, // port -1
            ],
        );
    }

    #[test]
    fn response_v4_bytes() {
        let m = FindCoordinatorResponse {
            coordinators: vec![Coordinator {
                key: "g".into(),
                node_id: 1,
                host: "h".into(),
                port: 9092,
                error_code: 0,
                error_message: None,
                unknown_tagged_fields: Default::default(),
            }],
            unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
                tag: 9,
                data: Bytes::from_static(&[0xab]),
            }]),
            ..Default::default()
        };
        assert_wire(
            &m,
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
        );
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
        for v in 0..=3 {
            assert_prefixes_fail::<FindCoordinatorRequest>(&enc(&req, v), v);
        }
        for v in 4..=6 {
            assert_prefixes_fail::<FindCoordinatorRequest>(&enc(&req4, v), v);
        }
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
        for v in 0..=3 {
            assert_prefixes_fail::<FindCoordinatorResponse>(&enc(&resp, v), v);
        }
        for v in 4..=6 {
            assert_prefixes_fail::<FindCoordinatorResponse>(&enc(&resp4, v), v);
        }
    }

    #[test]
    fn length_bombs_fail_at_once() {
        // Request v0: key with int16 length 0x7fff in a 10-byte buffer.
        let b = Bytes::from_static(&[0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(decode_exact::<FindCoordinatorRequest>(b, 0).is_err());
        // Request v4: coordinator_keys compact count 0x7fffffff, then 0xffffffff.
        for count in [
            &[0xff, 0xff, 0xff, 0xff, 0x07][..],
            &[0xff, 0xff, 0xff, 0xff, 0x0f][..],
        ] {
            let mut b = vec![0x00];
            b.extend_from_slice(count);
            b.extend_from_slice(&[0; 4]);
            assert!(decode_exact::<FindCoordinatorRequest>(Bytes::from(b), 4).is_err());
        }
        // Response v4: coordinators count 0x7fffffff.
        let b = Bytes::from_static(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0]);
        assert!(matches!(
            decode_exact::<FindCoordinatorResponse>(b, 4),
            Err(Error::InvalidLength { .. })
        ));
        // Response v1: error message with int16 length 0x7fff.
        let b = Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0, 0]);
        assert!(decode_exact::<FindCoordinatorResponse>(b, 1).is_err());
    }

    #[test]
    fn non_ignorable_fields_absent_in_version_error() {
        let mut b = BytesMut::new();
        let batched = FindCoordinatorRequest {
            coordinator_keys: vec!["g".into()],
            ..Default::default()
        };
        assert!(matches!(
            batched.encode(&mut b, 3),
            Err(Error::FieldNotInVersion { version: 3, .. })
        ));
        let single = FindCoordinatorRequest {
            key: "g".into(),
            ..Default::default()
        };
        assert!(matches!(
            single.encode(&mut b, 4),
            Err(Error::FieldNotInVersion { version: 4, .. })
        ));
        let typed = FindCoordinatorRequest {
            key_type: 1,
            ..Default::default()
        };
        assert!(matches!(
            typed.encode(&mut b, 0),
            Err(Error::FieldNotInVersion { version: 0, .. })
        ));
        let old_resp = FindCoordinatorResponse {
            host: "h".into(),
            ..Default::default()
        };
        assert!(matches!(
            old_resp.encode(&mut b, 4),
            Err(Error::FieldNotInVersion { .. })
        ));
        // Ignorable fields are dropped instead.
        let throttled = FindCoordinatorResponse {
            throttle_time_ms: 7,
            error_message: Some("x".into()),
            ..Default::default()
        };
        assert_eq!(enc(&throttled, 0).len(), 12);
    }

    #[test]
    fn unsupported_versions_are_refused() {
        let mut b = BytesMut::new();
        assert!(matches!(
            FindCoordinatorRequest::default().encode(&mut b, 7),
            Err(Error::UnsupportedVersion { version: 7, .. })
        ));
        assert!(FindCoordinatorResponse::decode(&mut Bytes::new(), -1).is_err());
    }
}

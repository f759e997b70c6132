//! Version negotiation: which version of each API to speak to one broker.
//!
//! A connection starts with an ApiVersions request at our highest version. The broker answers
//! with the version range of every API it knows; for each API the client then speaks the
//! highest version both sides implement. A broker older than our ApiVersions request answers
//! error 35 (`UNSUPPORTED_VERSION`) in a v0 body that lists its own ApiVersions range, and the
//! client asks again at a version it knows
//! ([`decode_api_versions_response`] returns [`ApiVersionsReply::Retry`]).
//!
//! # Example
//!
//! ```
//! use bytes::{BufMut, BytesMut};
//! use kseek_protocol::frame::split_frame;
//! use kseek_protocol::messages::api_versions::{
//!     ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
//! };
//! use kseek_protocol::messages::encode_request_frame;
//! use kseek_protocol::messages::find_coordinator::FindCoordinatorRequest;
//! use kseek_protocol::negotiate::{decode_api_versions_response, negotiate, ApiVersionsReply};
//! use kseek_protocol::{ApiKey, Error, ErrorCode, Message, Request, ResponseHeader};
//!
//! // A stand-in for the network: an old broker that knows ApiVersions 0..=2, Fetch 4..=12 and
//! // FindCoordinator 0..=2. It takes a request frame and returns the response frame.
//! fn old_broker(request: &[u8]) -> BytesMut {
//!     let version = i16::from_be_bytes([request[6], request[7]]);
//!     let api = |key: ApiKey, min_version, max_version| ApiVersion {
//!         api_key: key.0,
//!         min_version,
//!         max_version,
//!         ..Default::default()
//!     };
//!     let mut body = BytesMut::new();
//!     if version > 2 {
//!         // KIP-511: a v0 body with UNSUPPORTED_VERSION and the broker's own range.
//!         let refusal = ApiVersionsResponse {
//!             error_code: ErrorCode::UNSUPPORTED_VERSION.0,
//!             api_keys: vec![api(ApiKey::API_VERSIONS, 0, 2)],
//!             ..Default::default()
//!         };
//!         refusal.encode(&mut body, 0).unwrap();
//!     } else {
//!         let answer = ApiVersionsResponse {
//!             api_keys: vec![
//!                 api(ApiKey::API_VERSIONS, 0, 2),
//!                 api(ApiKey::FETCH, 4, 12),
//!                 api(ApiKey::FIND_COORDINATOR, 0, 2),
//!             ],
//!             ..Default::default()
//!         };
//!         answer.encode(&mut body, version).unwrap();
//!     }
//!     let mut frame = BytesMut::new();
//!     frame.put_i32(4 + body.len() as i32);
//!     frame.put_slice(&request[8..12]); // the correlation id (response header v0)
//!     frame.put_slice(&body);
//!     frame
//! }
//!
//! # fn main() -> kseek_protocol::Result<()> {
//! // Start at our highest ApiVersions version and step down while the broker refuses it.
//! // Each retry is at a strictly lower version, so this loop ends.
//! let mut version = ApiVersionsRequest::VERSIONS.max;
//! let mut correlation_id = 0;
//! let response = loop {
//!     correlation_id += 1;
//!     let mut request = BytesMut::new();
//!     let body = ApiVersionsRequest::kseek();
//!     encode_request_frame(&mut request, correlation_id, Some("kseek"), version, &body)?;
//!     let mut received = old_broker(&request); // write the frame, read the answer
//!     let mut body = split_frame(&mut received, 1 << 20)?.expect("a whole frame");
//!     // ApiVersions answers always use response header v0, whatever the version.
//!     let header_version = ApiVersionsRequest::response_header_version(version);
//!     let header = ResponseHeader::decode(&mut body, header_version)?;
//!     assert_eq!(header.correlation_id, correlation_id);
//!     match decode_api_versions_response(body, version)? {
//!         ApiVersionsReply::Response(response) => break response,
//!         ApiVersionsReply::Retry { version: lower } => version = lower,
//!     }
//! };
//! assert_eq!(version, 2);
//!
//! // Then, for every request on this connection, ask the map which version to speak.
//! let versions = negotiate(&response)?;
//! assert_eq!(versions.version(ApiKey::FETCH)?, 12);
//! assert_eq!(versions.version_for::<FindCoordinatorRequest>()?, 2);
//! // An API the broker doesn't list is an error that names it.
//! assert_eq!(
//!     versions.version(ApiKey::OFFSET_COMMIT),
//!     Err(Error::ApiNotSupported { api: "OffsetCommit" })
//! );
//! # Ok(())
//! # }
//! ```
//!
//! # References
//! <https://kafka.apache.org/protocol#api_versions>, KIP-35, KIP-511; Kafka's
//! `NetworkClient.handleApiVersionsResponse` and `ApiVersionsResponse.parse` (the v0 fallback).

use bytes::Bytes;

use crate::api_key::ApiKey;
use crate::error::{Error, Result};
use crate::error_code::ErrorCode;
use crate::messages::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use crate::messages::fetch::FetchRequest;
use crate::messages::find_coordinator::FindCoordinatorRequest;
use crate::messages::list_offsets::ListOffsetsRequest;
use crate::messages::metadata::MetadataRequest;
use crate::messages::offset_commit::OffsetCommitRequest;
use crate::messages::offset_fetch::OffsetFetchRequest;
use crate::messages::sasl_authenticate::SaslAuthenticateRequest;
use crate::messages::sasl_handshake::SaslHandshakeRequest;
use crate::messages::{decode_exact, Message, Request, VersionRange};

/// One API kseek implements, with the versions it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupportedApi {
    /// The API.
    pub api_key: ApiKey,
    /// Kafka's name for it, for errors.
    pub name: &'static str,
    /// The versions kseek encodes and decodes.
    pub versions: VersionRange,
}

impl SupportedApi {
    /// The entry of request type `R`, named `name`.
    const fn of<R: Message>(name: &'static str) -> SupportedApi {
        SupportedApi {
            api_key: R::API_KEY,
            name,
            versions: R::VERSIONS,
        }
    }
}

/// The APIs kseek implements and their version ranges, in API key order.
///
/// Each range is the request type's [`Message::VERSIONS`], so the table can't drift from what
/// the codecs implement.
pub const SUPPORTED_APIS: [SupportedApi; 9] = [
    SupportedApi::of::<FetchRequest>("Fetch"),
    SupportedApi::of::<ListOffsetsRequest>("ListOffsets"),
    SupportedApi::of::<MetadataRequest>("Metadata"),
    SupportedApi::of::<OffsetCommitRequest>("OffsetCommit"),
    SupportedApi::of::<OffsetFetchRequest>("OffsetFetch"),
    SupportedApi::of::<FindCoordinatorRequest>("FindCoordinator"),
    SupportedApi::of::<SaslHandshakeRequest>("SaslHandshake"),
    SupportedApi::of::<ApiVersionsRequest>("ApiVersions"),
    SupportedApi::of::<SaslAuthenticateRequest>("SaslAuthenticate"),
];

/// The entry of [`SUPPORTED_APIS`] for `api_key`, if kseek implements the API.
pub fn supported_api(api_key: ApiKey) -> Option<&'static SupportedApi> {
    SUPPORTED_APIS.iter().find(|a| a.api_key == api_key)
}

/// What [`decode_api_versions_response`] made of an ApiVersions response body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiVersionsReply {
    /// The broker answered (possibly with an error code other than `UNSUPPORTED_VERSION`,
    /// which [`negotiate`] reports).
    Response(ApiVersionsResponse),
    /// The broker doesn't support the version we sent; send the request again at `version`,
    /// which is always lower than the version sent.
    Retry {
        /// The ApiVersions version to send next.
        version: i16,
    },
}

/// Decodes the body of an ApiVersions response to a request sent at `sent_version`, handling
/// the broker's refusal of that version.
///
/// The body is decoded at `sent_version`. If that fails, or the error code is 35
/// (`UNSUPPORTED_VERSION`), it is decoded again as v0, the form a broker uses to refuse a
/// version it doesn't know (KIP-511). A refusal yields [`ApiVersionsReply::Retry`] with the
/// broker's highest ApiVersions version, capped at ours and below `sent_version` (so retrying
/// always terminates); a refusal without the broker's range (brokers before 2.4) retries at 0.
/// A refusal of version 0 is returned as a [`ApiVersionsReply::Response`] with its error.
///
/// # Errors
/// The decoding error at `sent_version`, when the body isn't an error answer in v0 either;
/// [`Error::NoCommonVersion`] when the broker's ApiVersions range and ours don't meet.
///
/// # References
/// KIP-511; Kafka's `ApiVersionsResponse.parse` and `NetworkClient.handleApiVersionsResponse`.
pub fn decode_api_versions_response(body: Bytes, sent_version: i16) -> Result<ApiVersionsReply> {
    let unsupported = ErrorCode::UNSUPPORTED_VERSION.0;
    let response = match decode_exact::<ApiVersionsResponse>(body.clone(), sent_version) {
        Ok(r) if r.error_code != unsupported => return Ok(ApiVersionsReply::Response(r)),
        Ok(r) if sent_version <= 0 => r,
        // A refusal decoded at the sent version: prefer the v0 reading, which is the form
        // brokers actually send, but keep this one if the bytes aren't a v0 body.
        Ok(r) => decode_exact::<ApiVersionsResponse>(body, 0).unwrap_or(r),
        Err(e) if sent_version <= 0 => return Err(e),
        Err(e) => match decode_exact::<ApiVersionsResponse>(body, 0) {
            // Only an error answer justifies the v0 reading; a "successful" v0 body that
            // didn't decode at the version sent is malformed.
            Ok(r) if r.error_code != 0 => r,
            _ => return Err(e),
        },
    };
    if response.error_code != unsupported || sent_version <= 0 {
        return Ok(ApiVersionsReply::Response(response));
    }
    let ours = ApiVersionsRequest::VERSIONS;
    let broker = response
        .range_of(ApiKey::API_VERSIONS)
        .unwrap_or(VersionRange { min: 0, max: 0 });
    let version = broker.max.min(ours.max).min(sent_version.saturating_sub(1));
    if version < broker.min.max(ours.min) {
        return Err(Error::NoCommonVersion {
            api: "ApiVersions",
            broker_min: broker.min,
            broker_max: broker.max,
            ours_min: ours.min,
            ours_max: ours.max,
        });
    }
    Ok(ApiVersionsReply::Retry { version })
}

/// Builds the version map for one broker from its ApiVersions response.
///
/// # Errors
/// [`Error::BrokerError`] when the response carries an error code. APIs without a common
/// version are not an error here; asking [`ApiVersionMap::version`] for one is.
pub fn negotiate(response: &ApiVersionsResponse) -> Result<ApiVersionMap> {
    if response.error_code != 0 {
        return Err(Error::BrokerError {
            api: "ApiVersions",
            error_code: ErrorCode(response.error_code),
        });
    }
    let mut broker: Vec<(ApiKey, VersionRange)> = Vec::with_capacity(response.api_keys.len());
    for k in &response.api_keys {
        // A key listed twice keeps its first range, as a lookup by key would.
        if !broker.iter().any(|(key, _)| key.0 == k.api_key) {
            broker.push((
                ApiKey(k.api_key),
                VersionRange {
                    min: k.min_version,
                    max: k.max_version,
                },
            ));
        }
    }
    Ok(ApiVersionMap { broker })
}

/// The APIs one broker supports, answering "which version of API X do we speak".
///
/// Built by [`negotiate`]. Lookups pick the highest version both the broker and kseek
/// implement. The [`Default`] map is empty (before negotiation): every lookup is
/// [`Error::ApiNotSupported`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiVersionMap {
    broker: Vec<(ApiKey, VersionRange)>,
}

impl ApiVersionMap {
    /// The version of `api_key` to use: the highest version in both the broker's range and
    /// kseek's ([`SUPPORTED_APIS`]).
    ///
    /// # Errors
    /// [`Error::ApiNotSupported`] when the broker doesn't list the API, or kseek doesn't
    /// implement it; [`Error::NoCommonVersion`] when the ranges don't meet.
    pub fn version(&self, api_key: ApiKey) -> Result<i16> {
        match supported_api(api_key) {
            Some(api) => self.version_within(api_key, api.name, api.versions),
            None => Err(Error::ApiNotSupported {
                api: api_key.name().unwrap_or("an API unknown to kseek"),
            }),
        }
    }

    /// The version to use for request type `R`: the highest version in both the broker's range
    /// and `R::VERSIONS`.
    ///
    /// # Errors
    /// As [`ApiVersionMap::version`].
    pub fn version_for<R: Request>(&self) -> Result<i16> {
        let name = R::API_KEY.name().unwrap_or(R::NAME);
        self.version_within(R::API_KEY, name, R::VERSIONS)
    }

    /// The highest version of `api_key` in both the broker's range and `ours`; `name` is
    /// used in errors.
    ///
    /// # Errors
    /// As [`ApiVersionMap::version`].
    pub fn version_within(
        &self,
        api_key: ApiKey,
        name: &'static str,
        ours: VersionRange,
    ) -> Result<i16> {
        let broker = self
            .broker_range(api_key)
            .ok_or(Error::ApiNotSupported { api: name })?;
        let highest = broker.max.min(ours.max);
        if highest < broker.min.max(ours.min) {
            return Err(Error::NoCommonVersion {
                api: name,
                broker_min: broker.min,
                broker_max: broker.max,
                ours_min: ours.min,
                ours_max: ours.max,
            });
        }
        Ok(highest)
    }

    /// The broker's advertised range for `api_key`, if it lists the API.
    pub fn broker_range(&self, api_key: ApiKey) -> Option<VersionRange> {
        self.broker
            .iter()
            .find(|(key, _)| *key == api_key)
            .map(|(_, range)| *range)
    }

    /// Every API the broker listed, with its range, in the broker's order.
    pub fn broker_ranges(&self) -> impl Iterator<Item = (ApiKey, VersionRange)> + '_ {
        self.broker.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::api_versions::ApiVersion;
    use bytes::BytesMut;

    fn api(key: ApiKey, min_version: i16, max_version: i16) -> ApiVersion {
        ApiVersion {
            api_key: key.0,
            min_version,
            max_version,
            ..Default::default()
        }
    }

    fn response(api_keys: Vec<ApiVersion>) -> ApiVersionsResponse {
        ApiVersionsResponse {
            api_keys,
            ..Default::default()
        }
    }

    /// The map negotiated from a successful response listing `apis` (key, min, max).
    fn negotiated(apis: &[(ApiKey, i16, i16)]) -> ApiVersionMap {
        let api_keys = apis
            .iter()
            .map(|&(key, min, max)| api(key, min, max))
            .collect();
        negotiate(&response(api_keys)).unwrap()
    }

    #[test]
    fn table_has_the_promised_ranges_in_key_order() {
        let expect = [
            (ApiKey::FETCH, 4, 18),
            (ApiKey::LIST_OFFSETS, 1, 11),
            (ApiKey::METADATA, 1, 13),
            (ApiKey::OFFSET_COMMIT, 2, 10),
            (ApiKey::OFFSET_FETCH, 1, 10),
            (ApiKey::FIND_COORDINATOR, 0, 6),
            (ApiKey::SASL_HANDSHAKE, 0, 1),
            (ApiKey::API_VERSIONS, 0, 4),
            (ApiKey::SASL_AUTHENTICATE, 0, 2),
        ];
        assert_eq!(SUPPORTED_APIS.len(), expect.len());
        for (api, (key, min, max)) in SUPPORTED_APIS.iter().zip(expect) {
            assert_eq!(api.api_key, key);
            assert_eq!(api.versions, VersionRange { min, max }, "{}", api.name);
            assert_eq!(Some(api.name), key.name());
        }
        assert!(SUPPORTED_APIS
            .windows(2)
            .all(|w| w[0].api_key < w[1].api_key));
    }

    #[test]
    fn picks_the_highest_common_version() {
        let map = negotiated(&[
            (ApiKey::FETCH, 0, 17),          // older broker: its max
            (ApiKey::METADATA, 0, 20),       // newer broker: our max
            (ApiKey::LIST_OFFSETS, 9, 11),   // same top
            (ApiKey::OFFSET_COMMIT, 11, 12), // only newer than ours
            (ApiKey::OFFSET_FETCH, 0, 0),    // only older than ours
        ]);
        assert_eq!(map.version(ApiKey::FETCH), Ok(17));
        assert_eq!(map.version(ApiKey::METADATA), Ok(13));
        assert_eq!(map.version(ApiKey::LIST_OFFSETS), Ok(11));
        assert_eq!(
            map.version(ApiKey::OFFSET_COMMIT),
            Err(Error::NoCommonVersion {
                api: "OffsetCommit",
                broker_min: 11,
                broker_max: 12,
                ours_min: 2,
                ours_max: 10,
            })
        );
        assert!(matches!(
            map.version(ApiKey::OFFSET_FETCH),
            Err(Error::NoCommonVersion {
                api: "OffsetFetch",
                ..
            })
        ));
        assert_eq!(
            map.version(ApiKey::FIND_COORDINATOR),
            Err(Error::ApiNotSupported {
                api: "FindCoordinator"
            })
        );
        // An API kseek doesn't implement.
        assert_eq!(
            map.version(ApiKey::PRODUCE),
            Err(Error::ApiNotSupported { api: "Produce" })
        );
        assert_eq!(
            map.broker_range(ApiKey::FETCH),
            Some(VersionRange { min: 0, max: 17 })
        );
        assert_eq!(map.broker_ranges().count(), 5);
    }

    #[test]
    fn version_for_uses_the_request_type() {
        let map = negotiated(&[
            (ApiKey::FIND_COORDINATOR, 0, 5),
            (ApiKey::API_VERSIONS, 0, 3),
            (ApiKey::METADATA, 0, 12),
        ]);
        assert_eq!(map.version_for::<FindCoordinatorRequest>(), Ok(5));
        assert_eq!(map.version_for::<ApiVersionsRequest>(), Ok(3));
        assert_eq!(map.version_for::<MetadataRequest>(), Ok(12));
    }

    #[test]
    fn sasl_versions_are_negotiated() {
        // Kafka 4.4 lists SaslHandshake 0..=1 and SaslAuthenticate 0..=2.
        let map = negotiated(&[
            (ApiKey::SASL_HANDSHAKE, 0, 1),
            (ApiKey::SASL_AUTHENTICATE, 0, 2),
        ]);
        assert_eq!(map.version_for::<SaslHandshakeRequest>(), Ok(1));
        assert_eq!(map.version_for::<SaslAuthenticateRequest>(), Ok(2));
        assert_eq!(map.version(ApiKey::SASL_HANDSHAKE), Ok(1));
        assert_eq!(map.version(ApiKey::SASL_AUTHENTICATE), Ok(2));
        // An old broker (before KIP-152) and a hypothetical newer one.
        let map = negotiated(&[
            (ApiKey::SASL_HANDSHAKE, 0, 0),
            (ApiKey::SASL_AUTHENTICATE, 1, 3),
        ]);
        assert_eq!(map.version_for::<SaslHandshakeRequest>(), Ok(0));
        assert_eq!(map.version_for::<SaslAuthenticateRequest>(), Ok(2));
        assert_eq!(
            ApiVersionMap::default().version_for::<SaslAuthenticateRequest>(),
            Err(Error::ApiNotSupported {
                api: "SaslAuthenticate"
            })
        );
    }

    #[test]
    fn the_default_map_supports_nothing() {
        assert_eq!(
            ApiVersionMap::default().version(ApiKey::FETCH),
            Err(Error::ApiNotSupported { api: "Fetch" })
        );
    }

    #[test]
    fn a_key_listed_twice_keeps_its_first_range() {
        let map = negotiated(&[(ApiKey::FETCH, 4, 12), (ApiKey::FETCH, 4, 18)]);
        assert_eq!(map.version(ApiKey::FETCH), Ok(12));
    }

    #[test]
    fn an_error_response_does_not_negotiate() {
        let mut r = response(vec![api(ApiKey::FETCH, 4, 18)]);
        r.error_code = 35;
        assert_eq!(
            negotiate(&r),
            Err(Error::BrokerError {
                api: "ApiVersions",
                error_code: ErrorCode::UNSUPPORTED_VERSION,
            })
        );
    }

    // ---- the UNSUPPORTED_VERSION fallback, from hand-made bytes ----

    /// A v0 refusal: error 35, one entry for ApiVersions with the broker's range.
    fn refusal_v0(min: u8, max: u8) -> Bytes {
        Bytes::from(vec![
            0x00, 0x23, // error_code 35
            0x00, 0x00, 0x00, 0x01, // one api key (int32 count)
            0x00, 0x12, 0x00, min, 0x00, max, // ApiVersions (18): min..=max
        ])
    }

    /// Asserts that `body`, the answer to ApiVersions at version `sent`, asks for a retry at
    /// `version`.
    #[track_caller]
    fn assert_retry(body: Bytes, sent: i16, version: i16) {
        assert_eq!(
            decode_api_versions_response(body, sent),
            Ok(ApiVersionsReply::Retry { version })
        );
    }

    #[test]
    fn refusal_in_v0_asks_for_a_retry_at_the_brokers_max() {
        assert_retry(refusal_v0(0, 2), 4, 2);
        assert_retry(refusal_v0(0, 2), 3, 2);
    }

    #[test]
    fn retry_is_capped_at_ours_and_below_the_version_sent() {
        // A broker claiming to know more than we do, yet refusing v3: step down to 2.
        assert_retry(refusal_v0(0, 9), 3, 2);
        // Sent v1, refused with a v0 body that doesn't even decode at v1 (no throttle time).
        assert_retry(refusal_v0(0, 4), 1, 0);
    }

    #[test]
    fn real_refusal_from_a_3_9_broker() {
        // Captured (protocol/tests/data/3.9.2/0001-ApiVersions-v5-response.bin, after its
        // 4-byte response header): a 4.4 Java client sent ApiVersions v5 to a 3.9.2 broker,
        // which answered with a v0 body: error 35, ApiVersions 0..=4. The Java client then
        // retried at v4, as this function says to. Inlined so the test doesn't depend on the
        // capture's file name.
        let body = Bytes::from_static(&[
            0x00, 0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0x00, 0x00, 0x00, 0x04,
        ]);
        assert_retry(body.clone(), 5, 4);
        assert_retry(body, 4, 3);
    }

    #[test]
    fn refusal_without_a_range_retries_at_zero() {
        // Pre-2.4 brokers: error 35 and an empty array.
        let body = Bytes::from_static(&[0x00, 0x23, 0x00, 0x00, 0x00, 0x00]);
        assert_retry(body, 3, 0);
    }

    #[test]
    fn refusal_with_a_range_above_what_we_can_send_errors() {
        // Broker supports ApiVersions 5..=7 only (hypothetical): nothing we can send.
        assert!(matches!(
            decode_api_versions_response(refusal_v0(5, 7), 4),
            Err(Error::NoCommonVersion {
                api: "ApiVersions",
                broker_min: 5,
                broker_max: 7,
                ..
            })
        ));
    }

    #[test]
    fn refusal_of_version_zero_is_a_response_with_its_error() {
        let reply = decode_api_versions_response(refusal_v0(0, 4), 0).unwrap();
        let ApiVersionsReply::Response(r) = reply else {
            panic!("expected a response, got {reply:?}");
        };
        assert_eq!(r.error_code, 35);
        assert!(matches!(negotiate(&r), Err(Error::BrokerError { .. })));
    }

    #[test]
    fn refusal_encoded_at_the_sent_version_still_retries() {
        // A v3 body (compact array, tagged section) carrying error 35 and range 0..=2.
        let body = Bytes::from_static(&[
            0x00, 0x23, // error_code 35
            0x02, // one api key (compact)
            0x00, 0x12, 0x00, 0x00, 0x00, 0x02, 0x00, // ApiVersions 0..=2, tagged section
            0x00, 0x00, 0x00, 0x00, // throttle
            0x00, // tagged section
        ]);
        assert_retry(body, 3, 2);
    }

    #[test]
    fn a_good_v3_answer_is_returned() {
        let body = Bytes::from_static(&[
            0x00, 0x00, // error_code
            0x03, // two api keys
            0x00, 0x01, 0x00, 0x04, 0x00, 0x11, 0x00, // Fetch 4..=17
            0x00, 0x12, 0x00, 0x00, 0x00, 0x04, 0x00, // ApiVersions 0..=4
            0x00, 0x00, 0x00, 0x00, // throttle
            0x00, // tagged section
        ]);
        let reply = decode_api_versions_response(body, 3).unwrap();
        let ApiVersionsReply::Response(r) = reply else {
            panic!("expected a response, got {reply:?}");
        };
        let map = negotiate(&r).unwrap();
        assert_eq!(map.version(ApiKey::FETCH), Ok(17));
        assert_eq!(map.version(ApiKey::API_VERSIONS), Ok(4));
    }

    #[test]
    fn other_errors_are_returned_as_responses() {
        // v0-style body with a different error (e.g. 33 UNSUPPORTED_SASL_MECHANISM) after a v3
        // request: handed back for the caller to report, as the Java client does.
        let body = Bytes::from_static(&[0x00, 0x21, 0x00, 0x00, 0x00, 0x00]);
        let reply = decode_api_versions_response(body, 3).unwrap();
        assert!(matches!(reply, ApiVersionsReply::Response(ref r) if r.error_code == 33));
    }

    proptest::proptest! {
        /// Whatever the broker sends, the fallback never panics and a retry always goes
        /// down, so a client's retry loop ends.
        #[test]
        fn fallback_never_panics_and_retries_go_down(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48),
            sent in -1i16..=5,
        ) {
            if let Ok(ApiVersionsReply::Retry { version }) =
                decode_api_versions_response(Bytes::from(body), sent)
            {
                proptest::prop_assert!(version < sent && version >= 0);
            }
        }
    }

    #[test]
    fn nonsense_sent_versions_do_not_panic() {
        for sent in [i16::MIN, -1, 5, i16::MAX] {
            let _ = decode_api_versions_response(refusal_v0(0, 4), sent);
        }
        assert!(matches!(
            decode_api_versions_response(refusal_v0(0, 4), -1),
            Err(Error::UnsupportedVersion { .. })
        ));
    }

    #[test]
    fn garbage_is_a_decoding_error() {
        for (body, v) in [
            (&[][..], 3),
            (&[0x00][..], 0),
            (&[0x00, 0x00, 0x00, 0x00, 0x00, 0x00][..], 3), // v0 success body after a v3 request
            (&[0x00, 0x23, 0x00][..], 3),
        ] {
            assert!(
                decode_api_versions_response(Bytes::copy_from_slice(body), v).is_err(),
                "{body:?} at v{v}"
            );
        }
    }

    #[test]
    fn encoded_refusal_round_trips_through_the_fallback() {
        // What a broker's encoder produces for every version we might send.
        for sent in 1..=4 {
            let refusal = ApiVersionsResponse {
                error_code: 35,
                api_keys: vec![api(ApiKey::API_VERSIONS, 0, sent - 1)],
                ..Default::default()
            };
            let mut body = BytesMut::new();
            refusal.encode(&mut body, 0).unwrap();
            assert_retry(body.freeze(), sent, sent - 1);
        }
    }
}

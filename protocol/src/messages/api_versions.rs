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
mod tests;

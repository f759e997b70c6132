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
mod tests;

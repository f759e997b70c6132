//! A topic's configuration: DescribeConfigs to any broker.
//!
//! [`Client::topic_config`] returns every configuration entry of a topic, each with its value
//! and whether the topic sets it itself or inherits it, the figures `kafka-configs --describe
//! --all --entity-type topics` prints. Any broker answers for a topic (from the cluster
//! metadata every broker holds), so the request goes to whichever connection is open.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_DescribeConfigs>, KIP-133, KIP-226 (config
//! sources).

use kseek_protocol::messages::describe_configs::{
    ConfigResourceType, DescribeConfigsRequest, DescribeConfigsResponse,
};
use kseek_protocol::{ApiKey, ErrorCode};

use crate::client::Client;
use crate::error::{ErrorKind, Result};

pub use kseek_protocol::messages::describe_configs::ConfigSource;

/// The configuration of one topic, as a broker describes it: every entry the topic has, set on
/// the topic or inherited.
///
/// ```no_run
/// # async fn example(client: kseek::Client) -> kseek::Result<()> {
/// let config = client.topic_config("events").await?;
/// if config.get("message.timestamp.type") == Some("LogAppendTime") {
///     println!("record timestamps are the broker's");
/// }
/// for entry in config.entries.iter().filter(|e| !e.is_default) {
///     println!("{} = {:?} (set on the topic)", entry.name, entry.value);
/// }
/// # Ok(())
/// # }
/// ```
///
/// # References
/// `DescribeConfigsResponse.json`; Kafka's `Admin.describeConfigs`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopicConfig {
    /// The topic's name.
    pub topic: String,
    /// The entries, in the broker's order (by name).
    pub entries: Vec<TopicConfigEntry>,
}

impl TopicConfig {
    /// The value of entry `name` (`retention.ms`), or `None` when the topic has no such entry
    /// or its value is null (a sensitive entry's always is).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entry(name).and_then(|e| e.value.as_deref())
    }

    /// Entry `name`, if the topic has it.
    pub fn entry(&self, name: &str) -> Option<&TopicConfigEntry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// One configuration entry of a topic.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopicConfigEntry {
    /// The entry's name (`retention.ms`).
    pub name: String,
    /// Its value, or `None` for a sensitive entry (brokers never send those) or a null value.
    pub value: Option<String>,
    /// Where the value comes from: [`ConfigSource::TOPIC_CONFIG`] when set on the topic, else
    /// the broker's dynamic configuration (`DYNAMIC_BROKER_CONFIG`,
    /// `DYNAMIC_DEFAULT_BROKER_CONFIG`), its `server.properties` (`STATIC_BROKER_CONFIG`) or
    /// Kafka's own default (`DEFAULT_CONFIG`).
    pub source: ConfigSource,
    /// Whether the topic inherits the value rather than setting it: true for every source but
    /// [`ConfigSource::TOPIC_CONFIG`] (so a value from a broker's `log.*` setting counts as a
    /// default here; Kafka's Java `ConfigEntry.isDefault` is true for `DEFAULT_CONFIG` alone).
    pub is_default: bool,
    /// Whether the entry is read-only (can't be altered).
    pub read_only: bool,
    /// Whether the entry is sensitive (a password): its value is never sent.
    pub sensitive: bool,
}

impl Client {
    /// The configuration of `topic`: one DescribeConfigs request (every entry, no synonyms, no
    /// documentation) to any broker. Retriable failures are retried as metadata lookups are
    /// (until [`ClientConfig::retry_deadline`](crate::ClientConfig::retry_deadline); a topic
    /// that doesn't exist until
    /// [`ClientConfig::missing_topic_wait`](crate::ClientConfig::missing_topic_wait)).
    ///
    /// The principal needs Kafka's `DESCRIBE_CONFIGS` on the topic.
    ///
    /// ```no_run
    /// # async fn example(client: kseek::Client) -> kseek::Result<()> {
    /// let config = client.topic_config("events").await?;
    /// let retention = config.get("retention.ms");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::RetriesExhausted`] wrapping [`ErrorKind::UnknownTopic`] for a topic that
    /// still doesn't exist at the deadline, as [`Client::metadata`] does; [`ErrorKind::Broker`]
    /// with the broker's code and message for another error of the topic
    /// (`TOPIC_AUTHORIZATION_FAILED`, `INVALID_TOPIC_EXCEPTION`); [`ErrorKind::InvalidResponse`]
    /// for an answer without the topic; others as they come.
    ///
    /// # References
    /// <https://kafka.apache.org/protocol#The_Messages_DescribeConfigs>.
    pub async fn topic_config(&self, topic: &str) -> Result<TopicConfig> {
        self.retry(
            &format!("describing the configuration of topic {topic:?}"),
            || self.topic_config_once(topic),
        )
        .await
    }

    async fn topic_config_once(&self, topic: &str) -> Result<TopicConfig> {
        let conn = self.any_connection(&[], None).await?;
        let response = conn
            .send(&DescribeConfigsRequest::for_topics([topic]))
            .await?;
        topic_config_from(conn.broker(), topic, response)
    }
}

/// `topic`'s configuration in `response` from `broker`, or the error its result carries.
fn topic_config_from(
    broker: &str,
    topic: &str,
    response: DescribeConfigsResponse,
) -> Result<TopicConfig> {
    let Some(result) = response
        .results
        .into_iter()
        .find(|r| r.resource_type == ConfigResourceType::TOPIC && r.resource_name == topic)
    else {
        return Err(ErrorKind::InvalidResponse {
            broker: broker.to_owned(),
            api: ApiKey::DESCRIBE_CONFIGS,
            reason: format!("no result for topic {topic:?}"),
        }
        .into());
    };
    let code = ErrorCode(result.error_code);
    if code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION {
        return Err(ErrorKind::UnknownTopic {
            topic: topic.to_owned(),
            broker: broker.to_owned(),
        }
        .into());
    }
    if !code.is_ok() {
        return Err(ErrorKind::Broker {
            broker: broker.to_owned(),
            api: ApiKey::DESCRIBE_CONFIGS,
            code,
            message: Some(match result.error_message {
                Some(m) => format!("for topic {topic:?}: {m}"),
                None => format!("for topic {topic:?}"),
            }),
        }
        .into());
    }
    let entries = result
        .configs
        .into_iter()
        .map(|c| TopicConfigEntry {
            is_default: c.config_source != ConfigSource::TOPIC_CONFIG,
            name: c.name,
            value: c.value,
            source: c.config_source,
            read_only: c.read_only,
            sensitive: c.is_sensitive,
        })
        .collect();
    Ok(TopicConfig {
        topic: topic.to_owned(),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kseek_protocol::messages::describe_configs::{
        DescribeConfigsResourceResult, DescribeConfigsResult,
    };

    fn result(
        topic: &str,
        code: i16,
        configs: &[(&str, Option<&str>, ConfigSource)],
    ) -> DescribeConfigsResult {
        DescribeConfigsResult {
            error_code: code,
            error_message: (code != 0).then(|| "boom".to_owned()),
            resource_type: ConfigResourceType::TOPIC,
            resource_name: topic.into(),
            configs: configs
                .iter()
                .map(|&(name, value, source)| DescribeConfigsResourceResult {
                    name: name.into(),
                    value: value.map(str::to_owned),
                    config_source: source,
                    is_sensitive: value.is_none(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn response(results: Vec<DescribeConfigsResult>) -> DescribeConfigsResponse {
        DescribeConfigsResponse {
            results,
            ..Default::default()
        }
    }

    #[test]
    fn entries_say_whether_the_topic_sets_them() {
        let config = topic_config_from(
            "b:9092",
            "t",
            response(vec![
                result("other", 0, &[("x", Some("y"), ConfigSource::TOPIC_CONFIG)]),
                result(
                    "t",
                    0,
                    &[
                        (
                            "message.timestamp.type",
                            Some("LogAppendTime"),
                            ConfigSource::TOPIC_CONFIG,
                        ),
                        (
                            "retention.ms",
                            Some("-1"),
                            ConfigSource::STATIC_BROKER_CONFIG,
                        ),
                        (
                            "cleanup.policy",
                            Some("delete"),
                            ConfigSource::DEFAULT_CONFIG,
                        ),
                        ("secret", None, ConfigSource::DYNAMIC_BROKER_CONFIG),
                    ],
                ),
            ]),
        )
        .unwrap();
        assert_eq!(config.topic, "t");
        assert_eq!(config.entries.len(), 4);
        assert_eq!(config.get("message.timestamp.type"), Some("LogAppendTime"));
        assert!(!config.entry("message.timestamp.type").unwrap().is_default);
        let retention = config.entry("retention.ms").unwrap();
        assert!(retention.is_default);
        assert_eq!(retention.source, ConfigSource::STATIC_BROKER_CONFIG);
        assert!(config.entry("cleanup.policy").unwrap().is_default);
        assert_eq!(config.get("secret"), None);
        assert!(config.entry("secret").unwrap().sensitive);
        assert_eq!(config.get("x"), None);
        assert!(config.entry("missing").is_none());
    }

    #[test]
    fn result_errors_map_to_the_client_kinds() {
        let unknown =
            topic_config_from("b:9092", "t", response(vec![result("t", 3, &[])])).unwrap_err();
        assert!(
            matches!(unknown.kind(), ErrorKind::UnknownTopic { topic, broker } if topic == "t" && broker == "b:9092"),
            "{unknown:?}"
        );
        assert!(unknown.is_retriable());

        let denied =
            topic_config_from("b:9092", "t", response(vec![result("t", 29, &[])])).unwrap_err();
        match denied.kind() {
            ErrorKind::Broker {
                api, code, message, ..
            } => {
                assert_eq!(*api, ApiKey::DESCRIBE_CONFIGS);
                assert_eq!(*code, ErrorCode::TOPIC_AUTHORIZATION_FAILED);
                assert_eq!(message.as_deref(), Some("for topic \"t\": boom"));
            }
            other => panic!("{other:?}"),
        }
        assert!(!denied.is_retriable());

        // A retriable code (the broker's metadata not ready) is retried.
        let retry =
            topic_config_from("b:9092", "t", response(vec![result("t", 7, &[])])).unwrap_err();
        assert!(retry.is_retriable(), "{retry:?}");

        let missing = topic_config_from("b:9092", "t", response(vec![])).unwrap_err();
        assert!(
            matches!(missing.kind(), ErrorKind::InvalidResponse { .. }),
            "{missing:?}"
        );
    }
}

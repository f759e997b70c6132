//! A topic's configuration (DescribeConfigs) against real brokers (Kafka 4.4, 3.9 and 2.8):
//! topics created by Kafka's own Admin client with and without a configuration of their own.

mod support;

use std::time::Duration;

use kseek::topic_config::ConfigSource;
use kseek::{Client, ClientConfig, ErrorKind};

#[tokio::test]
async fn a_topic_config_says_what_the_topic_sets_and_what_it_inherits() {
    for broker in support::brokers() {
        let client = Client::with_config(
            ClientConfig::new([broker.bootstrap()])
                .retry_deadline(Duration::from_secs(10))
                .missing_topic_wait(Duration::from_millis(800)),
        )
        .await
        .unwrap();
        let version = broker.version();

        let appended = broker.new_topic(
            "config-append",
            1,
            &[("message.timestamp.type", "LogAppendTime")],
        );
        let config = client.topic_config(&appended).await.unwrap();
        assert_eq!(config.topic, appended);
        assert_eq!(
            config.get("message.timestamp.type"),
            Some("LogAppendTime"),
            "{version:?}"
        );
        let entry = config.entry("message.timestamp.type").unwrap();
        assert_eq!(entry.source, ConfigSource::TOPIC_CONFIG, "{version:?}");
        assert!(
            !entry.is_default && !entry.sensitive,
            "{version:?}: {entry:?}"
        );

        let plain = broker.new_topic("config-plain", 1, &[]);
        let config = client.topic_config(&plain).await.unwrap();
        let entry = config.entry("message.timestamp.type").unwrap();
        assert_eq!(entry.value.as_deref(), Some("CreateTime"), "{version:?}");
        assert_eq!(entry.source, ConfigSource::DEFAULT_CONFIG, "{version:?}");
        assert!(entry.is_default, "{version:?}: {entry:?}");
        // The test brokers set log.retention.ms=-1 in server.properties: inherited, and from
        // the broker, not Kafka's default.
        let retention = config.entry("retention.ms").unwrap();
        assert_eq!(retention.value.as_deref(), Some("-1"), "{version:?}");
        assert_eq!(
            retention.source,
            ConfigSource::STATIC_BROKER_CONFIG,
            "{version:?}"
        );
        assert!(retention.is_default, "{version:?}");
        // Nothing is set on this topic.
        assert!(
            config.entries.iter().all(|e| e.is_default),
            "{version:?}: {:?}",
            config
                .entries
                .iter()
                .filter(|e| !e.is_default)
                .collect::<Vec<_>>()
        );
        assert!(config.entries.len() > 10, "{version:?}: {config:?}");

        // An unknown topic: the same error as an unknown topic anywhere in kseek.
        let missing = support::unique_name("no-such-topic");
        let err = client.topic_config(&missing).await.unwrap_err();
        match err.kind() {
            ErrorKind::RetriesExhausted { source, what, .. } => {
                assert!(what.contains("configuration"), "{what}");
                assert!(
                    matches!(source.kind(), ErrorKind::UnknownTopic { topic, .. } if *topic == missing),
                    "{version:?}: {source:?}"
                );
            }
            other => panic!("{version:?}: {other:?}"),
        }
        assert!(err.to_string().contains("does not exist"), "{err}");
    }
}

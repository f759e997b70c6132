//! The connection layer against real brokers: version negotiation, requests in flight at once,
//! and what happens when the broker goes away or doesn't answer in time.

mod support;

use std::time::Duration;

use kseek::{Connection, ConnectionConfig, ErrorKind};
use kseek_protocol::messages::metadata::{MetadataRequest, MetadataRequestTopic};
use kseek_protocol::ApiKey;
use tokio::io::AsyncReadExt;

fn topic_request(name: &str) -> MetadataRequest {
    MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(name.to_owned()),
            ..Default::default()
        }]),
        allow_auto_topic_creation: false,
        ..Default::default()
    }
}

#[tokio::test]
async fn negotiates_and_pipelines_requests_on_every_broker_version() {
    for broker in support::brokers() {
        let topic = broker.new_topic("conn", 3, &[]);
        let conn = Connection::connect(broker.bootstrap(), ConnectionConfig::default())
            .await
            .unwrap();
        let versions = conn.versions();
        let fetch = versions.version(ApiKey::FETCH).unwrap();
        let metadata = versions.version(ApiKey::METADATA).unwrap();
        match broker.version() {
            support::KafkaVersion::V4_4 => {
                assert_eq!(
                    (fetch, metadata),
                    (18, 13),
                    "Kafka 4.4 speaks our highest versions"
                )
            }
            // 3.9 tops out at Fetch 17 and Metadata 12.
            support::KafkaVersion::V3_9 => assert_eq!((fetch, metadata), (17, 12)),
            // 2.8: before topic ids in Fetch (13), batched coordinator lookups
            // (FindCoordinator 4) and multi-group OffsetFetch (8).
            support::KafkaVersion::V2_8 => {
                assert_eq!((fetch, metadata), (12, 11));
                let others = [
                    ApiKey::API_VERSIONS,
                    ApiKey::LIST_OFFSETS,
                    ApiKey::OFFSET_COMMIT,
                    ApiKey::OFFSET_FETCH,
                    ApiKey::FIND_COORDINATOR,
                ]
                .map(|key| versions.version(key).unwrap());
                assert_eq!(others, [3, 6, 8, 7, 3]);
            }
        }

        // Twenty requests in flight on one connection, answered in order and matched back.
        let conn = std::sync::Arc::new(conn);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let (conn, request) = (conn.clone(), topic_request(&topic));
            set.spawn(async move { conn.send(&request).await });
        }
        let answers = set.join_all().await;
        assert_eq!(answers.len(), 20);
        for answer in answers {
            let response = answer.unwrap();
            assert_eq!(response.topics.len(), 1);
            assert_eq!(response.topics[0].name.as_deref(), Some(topic.as_str()));
            assert_eq!(response.topics[0].partitions.len(), 3);
            assert_eq!(response.topics[0].error_code, 0);
        }
    }
}

/// A server that accepts, answers the ApiVersions request with a canned Kafka 4.x-like answer,
/// then reads requests and never answers (or closes): faults a real broker can't be forced into.
async fn silent_broker(close_after_versions: bool) -> String {
    use kseek_protocol::messages::api_versions::{ApiVersion, ApiVersionsResponse};
    use kseek_protocol::negotiate::SUPPORTED_APIS;
    use kseek_protocol::Message;
    use tokio::io::AsyncWriteExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut len = [0u8; 4];
        sock.read_exact(&mut len).await.unwrap();
        let mut req = vec![0u8; u32::from_be_bytes(len) as usize];
        sock.read_exact(&mut req).await.unwrap();
        let version = i16::from_be_bytes([req[2], req[3]]);
        let response = ApiVersionsResponse {
            api_keys: SUPPORTED_APIS
                .iter()
                .map(|a| ApiVersion {
                    api_key: a.api_key.0,
                    min_version: a.versions.min,
                    max_version: a.versions.max,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut body = bytes::BytesMut::new();
        response.encode(&mut body, version).unwrap();
        let mut frame = Vec::new();
        frame.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        frame.extend_from_slice(&req[4..8]);
        frame.extend_from_slice(&body);
        sock.write_all(&frame).await.unwrap();
        if close_after_versions {
            // Wait for the next request to arrive, then drop the socket under it.
            let _ = sock.read(&mut [0u8; 1]).await;
            return;
        }
        let mut sink = Vec::new();
        let _ = sock.read_to_end(&mut sink).await;
    });
    addr
}

#[tokio::test]
async fn a_request_without_an_answer_times_out() {
    let addr = silent_broker(false).await;
    let config = ConnectionConfig::default().request_timeout(Duration::from_millis(300));
    let conn = Connection::connect(&addr, config).await.unwrap();
    let err = conn.send(&topic_request("t")).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Timeout {
                api: ApiKey::METADATA,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.is_retriable());
    assert!(err.to_string().contains(&addr), "{err}");
}

#[tokio::test]
async fn a_closed_connection_fails_requests_in_flight_and_later_ones() {
    let addr = silent_broker(true).await;
    let conn = Connection::connect(&addr, ConnectionConfig::default())
        .await
        .unwrap();
    let err = conn.send(&topic_request("t")).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ConnectionClosed { .. }),
        "{err}"
    );
    assert!(conn.closed_reason().is_some());
    let again = conn.send(&topic_request("t")).await.unwrap_err();
    assert!(
        matches!(again.kind(), ErrorKind::ConnectionClosed { .. }),
        "{again}"
    );
}

#[tokio::test]
async fn connecting_to_nothing_is_an_io_error_naming_the_address() {
    // Bind then drop, so the port is (very likely) closed.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let err = Connection::connect(&addr, ConnectionConfig::default())
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Io { .. }), "{err}");
    assert!(err.to_string().contains(&addr));
}

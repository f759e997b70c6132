//! Unit tests of the client: retries and their deadlines, timeouts, and the metadata cache.

use super::*;
use crate::error::Error;

fn offline_client(config: ClientConfig) -> Client {
    Client {
        inner: Arc::new(Inner {
            config,
            state: Mutex::new(State::default()),
            connections: Mutex::new(FewMap::new()),
            bootstrap: tokio::sync::Mutex::new(None),
        }),
    }
}

/// What `client.retry(what, ..)` ends with when every attempt fails with `kind()`, and how many
/// attempts it made.
async fn always_failing(client: &Client, what: &str, kind: impl Fn() -> ErrorKind) -> (Error, u32) {
    let mut calls = 0;
    let err = client
        .retry(what, || {
            calls += 1;
            let error = Error::from(kind());
            async move { Err::<(), Error>(error) }
        })
        .await
        .unwrap_err();
    (err, calls)
}

#[tokio::test]
async fn a_missing_topic_is_given_up_at_its_own_shorter_wait() {
    let client = offline_client(
        ClientConfig::default()
            .retry_backoff(Duration::from_millis(1))
            .retry_backoff_max(Duration::from_millis(200))
            .retry_deadline(Duration::from_secs(30))
            .missing_topic_wait(Duration::from_millis(60)),
    );
    let started = Instant::now();
    let (err, _) = always_failing(&client, "looking up a topic", || ErrorKind::UnknownTopic {
        topic: "nope".into(),
        broker: "b:9092".into(),
    })
    .await;
    let elapsed = started.elapsed();
    assert!(
        matches!(err.kind(), ErrorKind::RetriesExhausted { source, .. } if matches!(source.kind(), ErrorKind::UnknownTopic { .. })),
        "{err:?}"
    );
    assert!(elapsed >= Duration::from_millis(60), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[tokio::test]
async fn retry_gives_up_at_the_deadline_naming_what_it_did() {
    let client = offline_client(ClientConfig {
        retry_backoff: Duration::from_millis(1),
        retry_backoff_max: Duration::from_millis(4),
        retry_deadline: Duration::from_millis(50),
        ..ClientConfig::default()
    });
    let (err, calls) = always_failing(&client, "looking up a thing", || {
        ErrorKind::LeaderNotAvailable {
            topic: "t".into(),
            partition: 0,
        }
    })
    .await;
    assert!(calls > 3, "retried {calls} times");
    match err.kind() {
        ErrorKind::RetriesExhausted { what, attempts, .. } => {
            assert_eq!(what, "looking up a thing");
            assert_eq!(*attempts, calls);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err
        .to_string()
        .starts_with("looking up a thing: gave up after"));
}

#[tokio::test]
async fn retry_returns_fatal_errors_at_once_and_succeeds_after_retriable_ones() {
    let client = offline_client(ClientConfig {
        retry_backoff: Duration::from_millis(1),
        ..ClientConfig::default()
    });
    let (err, calls) = always_failing(&client, "x", || ErrorKind::InvalidSpec {
        reason: "no".into(),
    })
    .await;
    assert!(matches!(err.kind(), ErrorKind::InvalidSpec { .. }));
    assert_eq!(calls, 1);

    let mut calls = 0;
    let value = client
        .retry("x", || {
            calls += 1;
            let n = calls;
            async move {
                if n < 3 {
                    Err(ErrorKind::UnknownBroker { broker_id: 1 }.into())
                } else {
                    Ok(n)
                }
            }
        })
        .await
        .unwrap();
    assert_eq!(value, 3);
}

#[tokio::test]
async fn metadata_cache_respects_staleness() {
    let client = offline_client(ClientConfig::default());
    let response = MetadataResponse {
        topics: vec![kseek_protocol::messages::metadata::MetadataResponseTopic {
            name: Some("t".into()),
            partitions: vec![
                kseek_protocol::messages::metadata::MetadataResponsePartition {
                    partition_index: 1,
                    leader_id: 2,
                    leader_epoch: 7,
                    ..Default::default()
                },
                kseek_protocol::messages::metadata::MetadataResponsePartition {
                    partition_index: 0,
                    leader_id: -1,
                    error_code: ErrorCode::LEADER_NOT_AVAILABLE.0,
                    ..Default::default()
                },
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    let got = client
        .apply_metadata("b:1", &["t".to_owned()], response)
        .unwrap();
    assert_eq!(got[0].partitions[0].partition, 0, "sorted by partition");
    assert_eq!(got[0].partitions[1].leader_epoch, 7);
    assert!(client.cached(&["t".to_owned()]).is_some());
    assert!(client.cached(&["u".to_owned()]).is_none());
    assert_eq!(client.leader("t", 1).await.unwrap(), (2, 7));
    assert!(matches!(
        client.leader("t", 0).await.map_err(Error::into_kind),
        Err(ErrorKind::LeaderNotAvailable { partition: 0, .. })
    ));
    assert!(matches!(
        client.leader("t", 5).await.map_err(Error::into_kind),
        Err(ErrorKind::UnknownPartition {
            partition: 5,
            partitions: 2,
            ..
        })
    ));
    client.invalidate("t");
    assert!(client.cached(&["t".to_owned()]).is_none());
}

#[test]
fn metadata_older_than_max_age_is_not_used() {
    let client = offline_client(ClientConfig {
        metadata_max_age: Duration::ZERO,
        ..ClientConfig::default()
    });
    let response = MetadataResponse {
        topics: vec![kseek_protocol::messages::metadata::MetadataResponseTopic {
            name: Some("t".into()),
            partitions: vec![Default::default()],
            ..Default::default()
        }],
        ..Default::default()
    };
    client
        .apply_metadata("b:1", &["t".to_owned()], response)
        .unwrap();
    assert!(client.cached(&["t".to_owned()]).is_none());
}

#[tokio::test]
async fn no_bootstrap_servers_is_its_own_error() {
    for servers in [vec![], vec![" , ".to_owned(), String::new()]] {
        let err = Client::connect(servers).await.unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::NoBootstrapServers),
            "{err:?}"
        );
        assert!(!err.is_retriable());
    }
}

#[test]
fn timeouts_set_on_the_client_reach_every_connection() {
    let config = ClientConfig::new(["b:1"])
        .connect_timeout(Duration::from_millis(700))
        .request_timeout(Duration::from_millis(900))
        .retry_deadline(Duration::from_secs(2));
    assert_eq!(
        config.connection.connect_timeout,
        Duration::from_millis(700)
    );
    assert_eq!(
        config.connection.request_timeout,
        Duration::from_millis(900)
    );
    assert_eq!(config.retry_deadline, Duration::from_secs(2));
    // The other connection settings keep their defaults.
    assert_eq!(config.connection.max_in_flight, 16);
}

#[tokio::test]
async fn a_server_that_never_answers_fails_within_the_request_timeout() {
    // Accepts and holds every connection, never writes a byte.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let started = Instant::now();
    let err = Client::with_config(
        ClientConfig::new([address.as_str()])
            .request_timeout(Duration::from_millis(200))
            .retry_deadline(Duration::from_millis(100)),
    )
    .await
    .unwrap_err();
    let took = started.elapsed();
    holder.abort();
    let timed_out = |e: &Error| matches!(e.kind(), ErrorKind::Timeout { .. });
    let source = match err.kind() {
        ErrorKind::RetriesExhausted { source, .. } => source,
        _ => &err,
    };
    assert!(
        matches!(source.kind(), ErrorKind::Bootstrap { source, .. } if timed_out(source)),
        "{err:?}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn unknown_topic_in_metadata_is_retriable() {
    let client = offline_client(ClientConfig::default());
    let response = MetadataResponse {
        topics: vec![kseek_protocol::messages::metadata::MetadataResponseTopic {
            name: Some("gone".into()),
            error_code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0,
            ..Default::default()
        }],
        ..Default::default()
    };
    let err = client
        .apply_metadata("b:1", &["gone".to_owned()], response)
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::UnknownTopic { topic, .. } if topic == "gone"));
    assert!(err.is_retriable());
}

fn cached_topic(name: &str, partitions: usize) -> CachedTopic {
    CachedTopic {
        metadata: TopicMetadata {
            name: name.to_owned(),
            topic_id: kseek_protocol::Uuid::ZERO,
            partitions: vec![
                crate::cluster::PartitionMetadata {
                    partition: 0,
                    leader_id: 1,
                    leader_epoch: 0,
                    error_code: ErrorCode::NONE,
                };
                partitions
            ],
        },
        fetched_at: Instant::now(),
        stale: false,
    }
}

fn names(cache: &TopicCache) -> Vec<&str> {
    cache.0.iter().map(|c| c.metadata.name.as_str()).collect()
}

#[test]
fn the_topic_cache_stays_sorted_by_name_whatever_order_topics_arrive_in() {
    let mut cache = TopicCache::default();
    // Every size up to 40, in a scrambled order (41 is prime to each): sorted, found, and
    // nothing else found.
    for n in 0..40_usize {
        let mut fresh: Vec<CachedTopic> = (0..n)
            .map(|i| cached_topic(&format!("t{:02}", (i * 41 + 3) % n), 1))
            .collect();
        fresh.reverse();
        cache = TopicCache::default();
        cache.insert_all(fresh);
        let expected: Vec<String> = (0..n).map(|i| format!("t{i:02}")).collect();
        assert_eq!(names(&cache), expected, "{n} topics");
        for name in &expected {
            assert_eq!(cache.get(name).unwrap().metadata.name, *name);
        }
        assert!(cache.get("t").is_none() && cache.get("u").is_none());
    }
    // Known names are replaced in place, new ones put in order, one listed twice kept once.
    cache.insert_all(vec![
        cached_topic("t05", 3),
        cached_topic("a", 1),
        cached_topic("t05x", 1),
        cached_topic("a", 1),
    ]);
    assert_eq!(cache.0.len(), 41, "39 topics and 2 new");
    assert_eq!(names(&cache)[..2], ["a", "t00"]);
    assert_eq!(cache.get("t05").unwrap().metadata.partitions.len(), 3);
    assert_eq!(names(&cache)[6..8], ["t05", "t05x"]);
    cache.get_mut("t07").unwrap().stale = true;
    assert!(cache.get("t07").unwrap().stale);
    cache.remove("t05");
    cache.remove("nope");
    assert!(cache.get("t05").is_none());
    assert_eq!(cache.0.len(), 40);
    assert_eq!(cache.values_mut().filter(|c| c.stale).count(), 1);
}

#[test]
fn metadata_for_topics_listed_out_of_order_is_cached_and_answered_in_the_order_asked() {
    let client = offline_client(ClientConfig::default());
    let topic = |name: &str| kseek_protocol::messages::metadata::MetadataResponseTopic {
        name: Some(name.into()),
        partitions: vec![Default::default()],
        ..Default::default()
    };
    let asked: Vec<String> = ["m", "z", "a"].map(str::to_owned).to_vec();
    let response = MetadataResponse {
        topics: vec![topic("z"), topic("a"), topic("m")],
        ..Default::default()
    };
    let got = client.apply_metadata("b:1", &asked, response).unwrap();
    let got: Vec<&str> = got.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(got, ["m", "z", "a"]);
    let cached = client.cached(&asked).unwrap();
    assert_eq!(cached.len(), 3);
    assert_eq!(cached[1].name, "z");
    assert_eq!(names(&client.state().topics), ["a", "m", "z"]);
}

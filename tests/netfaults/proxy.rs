//! The proxy itself, against a fake broker: exact fault semantics, and the address rewrite at
//! every Metadata and FindCoordinator version.

use super::*;

/// The addresses the fake broker advertises.
const FAKE_A: (&str, i32) = ("fake-a.invalid", 9001);
const FAKE_B: (&str, i32) = ("fake-b.invalid", 9002);

fn fake_metadata() -> MetadataResponse {
    let broker = |node_id, (host, port): (&str, i32)| MetadataResponseBroker {
        node_id,
        host: host.to_owned(),
        port,
        rack: Some(format!("rack-{node_id}")),
        ..MetadataResponseBroker::default()
    };
    MetadataResponse {
        brokers: vec![broker(1, FAKE_A), broker(2, FAKE_B)],
        cluster_id: Some("fake".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            partitions: vec![MetadataResponsePartition {
                partition_index: 0,
                leader_id: 2,
                leader_epoch: 7,
                replica_nodes: vec![2, 1],
                isr_nodes: vec![2, 1],
                ..MetadataResponsePartition::default()
            }],
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    }
}

fn fake_coordinator(version: i16) -> FindCoordinatorResponse {
    let (host, port) = FAKE_B;
    if version >= 4 {
        FindCoordinatorResponse {
            coordinators: vec![Coordinator {
                key: "g".into(),
                node_id: 2,
                host: host.into(),
                port,
                ..Coordinator::default()
            }],
            ..FindCoordinatorResponse::default()
        }
    } else {
        FindCoordinatorResponse {
            node_id: 2,
            host: host.into(),
            port,
            ..FindCoordinatorResponse::default()
        }
    }
}

/// The frame of a response: size prefix, header, body.
fn response_frame<R: Request>(correlation_id: i32, version: i16, body: &R::Response) -> Vec<u8> {
    let mut out = BytesMut::new();
    out.extend_from_slice(&[0; 4]);
    ResponseHeader {
        correlation_id,
        ..ResponseHeader::default()
    }
    .encode(&mut out, R::response_header_version(version))
    .unwrap();
    body.encode(&mut out, version).unwrap();
    let len = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&len.to_be_bytes());
    out.to_vec()
}

/// The Fetch "response" of the fake broker: `len` bytes with the correlation id, then filler.
fn fake_fetch(correlation_id: i32, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&((len - 4) as i32).to_be_bytes());
    out.extend_from_slice(&correlation_id.to_be_bytes());
    out.extend((0..len - 8).map(|i| i as u8));
    out
}

/// A fake broker: answers Metadata and FindCoordinator with [`fake_metadata`] and
/// [`fake_coordinator`] at the request's version, and a Fetch request whose correlation id is
/// `n` with a frame of `n` bytes ([`fake_fetch`]). Returns its address.
async fn fake_broker() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                loop {
                    let mut prefix = [0u8; 4];
                    if conn.read_exact(&mut prefix).await.is_err() {
                        return;
                    }
                    let mut frame = vec![0u8; i32::from_be_bytes(prefix) as usize];
                    if conn.read_exact(&mut frame).await.is_err() {
                        return;
                    }
                    let api = i16::from_be_bytes([frame[0], frame[1]]);
                    let version = i16::from_be_bytes([frame[2], frame[3]]);
                    let corr = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
                    let answer = match ApiKey(api) {
                        ApiKey::METADATA => {
                            response_frame::<MetadataRequest>(corr, version, &fake_metadata())
                        }
                        ApiKey::FIND_COORDINATOR => response_frame::<FindCoordinatorRequest>(
                            corr,
                            version,
                            &fake_coordinator(version),
                        ),
                        _ => fake_fetch(corr, corr as usize),
                    };
                    if conn.write_all(&answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    address
}

/// A raw connection to the proxy.
struct Raw(TcpStream);

impl Raw {
    async fn connect(address: &str) -> Raw {
        Raw(TcpStream::connect(address).await.unwrap())
    }

    /// Sends a request frame with this header and an empty body.
    async fn send(&mut self, api: ApiKey, version: i16, correlation_id: i32) {
        let mut frame = Vec::new();
        frame.extend_from_slice(&10i32.to_be_bytes());
        frame.extend_from_slice(&api.0.to_be_bytes());
        frame.extend_from_slice(&version.to_be_bytes());
        frame.extend_from_slice(&correlation_id.to_be_bytes());
        frame.extend_from_slice(&(-1i16).to_be_bytes());
        self.0.write_all(&frame).await.unwrap();
    }

    /// Sends a real request frame.
    async fn send_request<R: Request>(&mut self, version: i16, correlation_id: i32, body: &R) {
        let mut frame = BytesMut::new();
        kseek_protocol::messages::encode_request_frame(
            &mut frame,
            correlation_id,
            Some("netfaults"),
            version,
            body,
        )
        .unwrap();
        self.0.write_all(&frame).await.unwrap();
    }

    /// Every byte until the proxy closes the connection.
    async fn read_to_close(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.0.read_to_end(&mut out))
            .await
            .expect("the proxy closes the connection")
            .unwrap();
        out
    }

    /// One whole response frame (size prefix included).
    async fn frame(&mut self) -> Vec<u8> {
        let mut prefix = [0u8; 4];
        let read = async {
            self.0.read_exact(&mut prefix).await.unwrap();
            let mut rest = vec![0u8; i32::from_be_bytes(prefix) as usize];
            self.0.read_exact(&mut rest).await.unwrap();
            [prefix.to_vec(), rest].concat()
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("a response frame")
    }
}

/// A response body (after size prefix and header).
fn body_of<R: Request>(frame: &[u8], version: i16) -> R::Response {
    let mut buf = Bytes::copy_from_slice(&frame[4..]);
    ResponseHeader::decode(&mut buf, R::response_header_version(version)).unwrap();
    kseek_protocol::decode_exact(buf, version).unwrap()
}

#[tokio::test]
async fn the_proxy_rewrites_broker_addresses_at_every_version() {
    let upstream = fake_broker().await;
    let proxy = FaultProxy::start(&upstream);
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    let local = |proxy: &FaultProxy, (host, port): (&str, i32)| {
        i32::from(proxy.upstreams()[&format!("{host}:{port}")])
    };
    for version in 1..=13 {
        conn.send_request(
            version,
            100 + i32::from(version),
            &MetadataRequest::all_topics(),
        )
        .await;
        let got = body_of::<MetadataRequest>(&conn.frame().await, version);
        // What a client would decode without the proxy, addresses aside.
        let mut expected = body_of::<MetadataRequest>(
            &response_frame::<MetadataRequest>(0, version, &fake_metadata()),
            version,
        );
        expected.brokers[0].host = "127.0.0.1".into();
        expected.brokers[0].port = local(&proxy, FAKE_A);
        expected.brokers[1].host = "127.0.0.1".into();
        expected.brokers[1].port = local(&proxy, FAKE_B);
        assert_eq!(got, expected, "Metadata v{version}");
        assert_ne!(got.brokers[0].port, got.brokers[1].port);
    }
    for version in 0..=6 {
        let request = if version >= 4 {
            FindCoordinatorRequest {
                coordinator_keys: vec!["g".into()],
                ..FindCoordinatorRequest::default()
            }
        } else {
            FindCoordinatorRequest {
                key: "g".into(),
                ..FindCoordinatorRequest::default()
            }
        };
        conn.send_request(version, 200 + i32::from(version), &request)
            .await;
        let got = body_of::<FindCoordinatorRequest>(&conn.frame().await, version);
        let port = local(&proxy, FAKE_B);
        if version >= 4 {
            assert_eq!(got.coordinators.len(), 1);
            assert_eq!(
                (got.coordinators[0].host.as_str(), got.coordinators[0].port),
                ("127.0.0.1", port)
            );
        } else {
            assert_eq!(
                (got.host.as_str(), got.port),
                ("127.0.0.1", port),
                "v{version}"
            );
        }
    }
    let c = proxy.counters();
    assert_eq!((c.rewritten, c.rewrite_failures), (13 + 7, 0), "{c:?}");
    // Each listener forwards to its own upstream.
    assert_eq!(proxy.ports().len(), 3, "{:?}", proxy.upstreams());
}

#[tokio::test]
async fn the_proxy_cuts_a_fetch_response_exactly_at_byte_n() {
    let upstream = fake_broker().await;
    let proxy = FaultProxy::start(&upstream);
    let len = 5000;
    for (at, delivered) in [
        (CutAt::At(2), 2),
        (CutAt::At(7), 7),
        (CutAt::Middle, len / 2),
        (CutAt::BeforeEnd(1), len - 1),
        (CutAt::AfterFrame, len),
    ] {
        proxy.cut_next_fetch(at);
        let mut conn = Raw::connect(proxy.bootstrap()).await;
        // Too small to be cut: it comes whole, and the cut stays armed.
        conn.send(ApiKey::FETCH, 12, 100).await;
        assert_eq!(conn.frame().await, fake_fetch(100, 100));
        assert!(proxy.fetch_cut_pending());
        conn.send(ApiKey::FETCH, 12, len as i32).await;
        let got = conn.read_to_close().await;
        assert_eq!(got, fake_fetch(len as i32, len)[..delivered], "{at:?}");
        assert!(!proxy.fetch_cut_pending());
        assert_eq!(
            proxy.cuts_made().last().copied(),
            Some(CutMade {
                delivered,
                frame_len: len
            })
        );
    }
    // The next connection is not cut.
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    conn.send(ApiKey::FETCH, 12, len as i32).await;
    assert_eq!(conn.frame().await, fake_fetch(len as i32, len));
    assert_eq!(proxy.counters().fetch_cuts, 5);
}

#[tokio::test]
async fn the_proxy_slices_black_holes_and_cuts_at_random() {
    let upstream = fake_broker().await;
    let proxy = FaultProxy::start(&upstream);
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    proxy.set_slices(true);
    conn.send(ApiKey::FETCH, 12, 3000).await;
    assert_eq!(conn.frame().await, fake_fetch(3000, 3000));
    assert_eq!(proxy.counters().sliced_responses, 1);
    proxy.set_slices(false);

    proxy.set_black_hole(true);
    conn.send(ApiKey::FETCH, 12, 2000).await;
    let mut byte = [0u8; 1];
    // Nothing comes: the read is still waiting after a while.
    let waited = tokio::time::timeout(Duration::from_millis(300), conn.0.read(&mut byte)).await;
    assert!(waited.is_err(), "the black hole answered: {waited:?}");
    let mut fresh = Raw::connect(proxy.bootstrap()).await;
    fresh.send(ApiKey::FETCH, 12, 2000).await;
    let waited = tokio::time::timeout(Duration::from_millis(300), fresh.0.read(&mut byte)).await;
    assert!(waited.is_err(), "the black hole answered a new connection");
    // The proxy counts a swallowed request when it has read it: wait for that, boundedly.
    let deadline = Instant::now() + Duration::from_secs(10);
    while proxy.counters().swallowed_requests < 2 {
        assert!(Instant::now() < deadline, "{:?}", proxy.counters());
        tokio::task::yield_now().await;
    }
    assert_eq!(proxy.counters().swallowed_requests, 2);
    proxy.set_black_hole(false);
    conn.send(ApiKey::FETCH, 12, 2500).await;
    assert_eq!(conn.frame().await, fake_fetch(2500, 2500), "answers again");

    // Probability 1, a gap of an hour: exactly one cut, at a byte inside the frame.
    proxy.set_random_cuts(Some(RandomCuts {
        seed: 5,
        probability: 1.0,
        min_gap: Duration::from_secs(3600),
    }));
    conn.send(ApiKey::FETCH, 12, 4000).await;
    let got = conn.read_to_close().await;
    assert!(got.len() < 4000 && got[..] == fake_fetch(4000, 4000)[..got.len()]);
    let mut conn = Raw::connect(proxy.bootstrap()).await;
    for _ in 0..5 {
        conn.send(ApiKey::FETCH, 12, 4000).await;
        assert_eq!(conn.frame().await, fake_fetch(4000, 4000));
    }
    assert_eq!(proxy.counters().random_cuts, 1);
}

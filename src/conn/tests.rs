//! Unit tests of the connection: framing, pipelining, timeouts, version negotiation and TLS
//! detection, against in-memory peers.

use std::future::{poll_fn, Future};
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use kseek_protocol::messages::api_versions::{ApiVersion, ApiVersionsResponse};
use kseek_protocol::messages::metadata::{MetadataRequest, MetadataRequestTopic, MetadataResponse};
use kseek_protocol::negotiate::SUPPORTED_APIS;
use kseek_protocol::{Message, Request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;

#[test]
fn read_buffer_grows_toward_the_frame_in_bounded_steps() {
    // Nothing pending: the usual spare room.
    assert_eq!(read_capacity(0, None, 0), MIN_SPARE);
    assert_eq!(read_capacity(100, None, 0), 100 + MIN_SPARE);
    // The first 64 KiB of a connection's first 8 MiB frame: room for 16 times that, not the
    // whole frame.
    assert_eq!(
        read_capacity(64 << 10, Some((8 << 20) - (64 << 10)), 0),
        1 << 20
    );
    // From 1 MiB on, the rest of the frame fits: the last buffer is the frame's own.
    assert_eq!(read_capacity(1 << 20, Some(7 << 20), 0), 8 << 20);
    // A frame about to end: room for its end, no more (more would copy the frame).
    assert_eq!(read_capacity(100, Some(50), 0), 150);
    assert_eq!(read_capacity(8 << 20, Some(3), 8 << 20), (8 << 20) + 3);
    // A size prefix alone, however large the size it claims, asks for little...
    assert_eq!(read_capacity(4, Some(100 << 20), 0), 4 + MIN_SPARE);
    assert_eq!(read_capacity(4, Some(100 << 20), 1000), 4 + MIN_SPARE);
}

#[test]
fn a_frame_no_larger_than_one_read_before_gets_its_room_before_its_first_byte() {
    // After an 8 MiB frame, the next one's room is there before its size prefix comes, and
    // made whole as soon as its size is known: none of its bytes are copied into a larger
    // buffer later.
    let largest = 8 << 20;
    assert_eq!(read_capacity(0, None, largest), largest);
    assert_eq!(read_capacity(2, None, largest), largest);
    assert_eq!(read_capacity(75, Some((8 << 20) - 75), largest), 8 << 20);
    assert_eq!(read_capacity(4, Some(1 << 20), largest), 4 + (1 << 20));
    // A larger claim gets no more than the largest frame so far, or 16 times what came.
    assert_eq!(read_capacity(4, Some(100 << 20), largest), largest);
    assert_eq!(read_capacity(1 << 20, Some(100 << 20), largest), 16 << 20);
}

async fn read_request(sock: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    sock.read_exact(&mut len).await.unwrap();
    let mut req = vec![0u8; u32::from_be_bytes(len) as usize];
    sock.read_exact(&mut req).await.unwrap();
    req
}

/// Reads the next `n` request frames.
async fn read_requests(sock: &mut TcpStream, n: usize) -> Vec<Vec<u8>> {
    let mut requests = Vec::new();
    for _ in 0..n {
        requests.push(read_request(sock).await);
    }
    requests
}

/// Answers `req` (a request frame without its length) with `body` encoded at the request's
/// version, behind the response header that version of `R` uses.
async fn answer<R: Request>(sock: &mut TcpStream, req: &[u8], body: &R::Response) {
    let version = i16::from_be_bytes([req[2], req[3]]);
    let mut out = BytesMut::new();
    out.extend_from_slice(&req[4..8]);
    if R::response_header_version(version) >= 1 {
        out.extend_from_slice(&[0]); // no tagged fields
    }
    body.encode(&mut out, version).unwrap();
    let mut frame = (out.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&out);
    sock.write_all(&frame).await.unwrap();
}

/// Accepts one connection and answers its ApiVersions request with every version kseek
/// supports.
async fn accept_and_negotiate(listener: &tokio::net::TcpListener) -> TcpStream {
    let (mut sock, _) = listener.accept().await.unwrap();
    let req = read_request(&mut sock).await;
    let versions = ApiVersionsResponse {
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
    answer::<ApiVersionsRequest>(&mut sock, &req, &versions).await;
    sock
}

/// A broker that answers ApiVersions, then holds the first Metadata request until the
/// second one arrives, and answers both, in order.
async fn late_broker() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut sock = accept_and_negotiate(&listener).await;
        let first = read_request(&mut sock).await;
        let second = read_request(&mut sock).await;
        for (req, cluster) in [(first, "late"), (second, "on time")] {
            let body = MetadataResponse {
                cluster_id: Some(cluster.to_owned()),
                ..Default::default()
            };
            answer::<MetadataRequest>(&mut sock, &req, &body).await;
        }
        let _ = sock.read_to_end(&mut Vec::new()).await;
    });
    addr
}

#[tokio::test]
async fn a_late_answer_is_dropped_and_the_connection_goes_on_also_across_the_id_wrap() {
    for first_id in [7, i32::MAX] {
        let config = ConnectionConfig {
            request_timeout: Duration::from_millis(200),
            ..Default::default()
        };
        let conn = Connection::connect(&late_broker().await, config)
            .await
            .unwrap();
        // The first request gets the largest id, the second one wraps to 0.
        conn.shared.lock().next_correlation_id = first_id;
        let err = conn.send(&MetadataRequest::default()).await.unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{err}");
        // The broker answers the first request only now, then the second.
        let response = conn.send(&MetadataRequest::default()).await.unwrap();
        assert_eq!(
            response.cluster_id.as_deref(),
            Some("on time"),
            "{first_id}"
        );
        assert!(conn.closed_reason().is_none(), "{first_id}");
        assert!(conn.shared.lock().pending.is_empty());
    }
}

#[tokio::test]
async fn an_answer_nobody_asked_for_closes_the_connection() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut sock = accept_and_negotiate(&listener).await;
        let mut req = read_request(&mut sock).await;
        // Answer with an id that was never sent.
        req[4..8].copy_from_slice(&(-5i32).to_be_bytes());
        answer::<MetadataRequest>(&mut sock, &req, &MetadataResponse::default()).await;
        let _ = sock.read_to_end(&mut Vec::new()).await;
    });
    let conn = Connection::connect(&addr, ConnectionConfig::default())
        .await
        .unwrap();
    let err = conn.send(&MetadataRequest::default()).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ConnectionClosed { .. }),
        "{err}"
    );
    let reason = conn.closed_reason().unwrap();
    assert!(reason.contains("unknown correlation id -5"), "{reason}");
}

/// A Metadata request of about `mib` MiB: far more than the socket buffers of loopback
/// hold, so writing it takes as long as the broker takes to read it.
fn big_request(mib: usize) -> MetadataRequest {
    let name = "t".repeat(1000);
    MetadataRequest {
        topics: Some(
            (0..mib * 1024)
                .map(|_| MetadataRequestTopic {
                    name: Some(name.clone()),
                    ..Default::default()
                })
                .collect(),
        ),
        ..Default::default()
    }
}

fn config(timeout_ms: u64) -> ConnectionConfig {
    ConnectionConfig {
        request_timeout: Duration::from_millis(timeout_ms),
        ..Default::default()
    }
}

fn metadata_answer(cluster: &str) -> MetadataResponse {
    MetadataResponse {
        cluster_id: Some(cluster.to_owned()),
        ..Default::default()
    }
}

async fn listener() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

/// The half-written frame: a caller cancelled in the middle of writing a large request
/// must not leave part of its frame on the connection, where the next request's bytes
/// would follow it and the broker would read them as the rest of the first.
#[tokio::test]
async fn a_request_dropped_mid_write_leaves_no_partial_frame() {
    let (started_tx, started_rx) = oneshot::channel();
    let (resume_tx, resume_rx) = oneshot::channel::<()>();
    let (addr, broker) = spawn_broker(|mut sock| async move {
        // Read the start of the large frame, then stop reading until told to go on.
        let mut head = vec![0u8; 64 * 1024];
        sock.read_exact(&mut head).await.unwrap();
        started_tx.send(()).unwrap();
        resume_rx.await.unwrap();
        let size = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let mut first = head[4..].to_vec();
        first.resize(size, 0);
        sock.read_exact(&mut first[head.len() - 4..]).await.unwrap();
        // The next frame must be a whole request of its own.
        let second = read_request(&mut sock).await;
        for (req, cluster) in [(first, "first"), (second, "second")] {
            answer::<MetadataRequest>(&mut sock, &req, &metadata_answer(cluster)).await;
        }
        let _ = sock.read_to_end(&mut Vec::new()).await;
    })
    .await;
    let conn = Connection::connect(&addr, config(5_000)).await.unwrap();
    let big = big_request(32);
    // Dropped in the middle of its frame.
    drop(send_until_started(&conn, &big, started_rx).await);
    resume_tx.send(()).unwrap();
    let response = conn.send(&MetadataRequest::default()).await.unwrap();
    assert_eq!(response.cluster_id.as_deref(), Some("second"));
    assert!(conn.closed_reason().is_none());
    drop(conn);
    broker.await.unwrap();
}

/// A broker on a fresh listener: a task that accepts one connection, answers the
/// handshake and hands the socket to `serve`. Returns the address and the task.
async fn spawn_broker<F, Fut>(serve: F) -> (String, tokio::task::JoinHandle<()>)
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (listener, addr) = listener().await;
    let task = tokio::spawn(async move { serve(accept_and_negotiate(&listener).await).await });
    (addr, task)
}

/// Starts sending `request` and polls it until the broker reports (`started`) that it has
/// begun reading the frame and then stopped: the send can't finish before, and is
/// returned unfinished, in the middle of its frame.
async fn send_until_started<'a>(
    conn: &'a Connection,
    request: &'a MetadataRequest,
    started: oneshot::Receiver<()>,
) -> Pin<Box<impl Future<Output = Result<MetadataResponse>> + 'a>> {
    let mut send = Box::pin(conn.send(request));
    tokio::select! {
        r = &mut send => panic!("the broker is not reading, yet: {:?}", r.map(|_| ())),
        _ = started => {}
    }
    send
}

/// A Metadata request for one topic named `name`, to tell requests apart on the wire.
fn named(name: &str) -> MetadataRequest {
    MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(name.to_owned()),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn mentions(frame: &[u8], name: &str) -> bool {
    frame.windows(name.len()).any(|w| w == name.as_bytes())
}

/// Waits (a bounded poll of shared state, not a sleep as synchronisation) until the
/// connection reports itself closed, and returns why.
async fn closed_within(conn: &Connection, limit: Duration) -> String {
    let until = Instant::now() + limit;
    loop {
        if let Some(reason) = conn.closed_reason() {
            return reason;
        }
        assert!(Instant::now() < until, "still open after {limit:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A request whose caller goes away while it waits behind another one's write is never
/// written: the broker sees the request after it, not it.
#[tokio::test]
async fn a_request_cancelled_before_its_write_is_never_sent() {
    let (started_tx, started_rx) = oneshot::channel();
    let (resume_tx, resume_rx) = oneshot::channel::<()>();
    let (addr, broker) = spawn_broker(|mut sock| async move {
        let mut len = [0u8; 4];
        sock.read_exact(&mut len).await.unwrap();
        started_tx.send(()).unwrap();
        resume_rx.await.unwrap();
        let mut first = vec![0u8; u32::from_be_bytes(len) as usize];
        sock.read_exact(&mut first).await.unwrap();
        let next = read_request(&mut sock).await;
        assert!(mentions(&next, "third") && !mentions(&next, "second"));
        for req in [first, next] {
            answer::<MetadataRequest>(&mut sock, &req, &metadata_answer("ok")).await;
        }
        let _ = sock.read_to_end(&mut Vec::new()).await;
    })
    .await;
    let conn = Connection::connect(&addr, config(10_000)).await.unwrap();
    let big = big_request(32);
    {
        let first = send_until_started(&conn, &big, started_rx).await;
        {
            let second = named("second");
            let second = conn.send(&second);
            tokio::pin!(second);
            // One poll queues it behind the large write; then its caller goes away.
            poll_fn(|cx| {
                assert!(second.as_mut().poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
        }
        resume_tx.send(()).unwrap();
        let third = named("third");
        let (first, third) = tokio::join!(first, conn.send(&third));
        first.unwrap();
        third.unwrap();
    }
    drop(conn);
    broker.await.unwrap();
}

/// A broker that stops reading: the request fails by its deadline instead of holding
/// the connection forever, and the connection closes (it holds half a frame).
#[tokio::test]
async fn a_broker_that_stops_reading_fails_the_request_by_its_deadline() {
    let (done_tx, done_rx) = oneshot::channel::<()>();
    let (addr, _) = spawn_broker(|sock| async move {
        let _ = done_rx.await;
        drop(sock);
    })
    .await;
    let conn = Connection::connect(&addr, config(300)).await.unwrap();
    let started = Instant::now();
    let err = conn.send(&big_request(32)).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{err}");
    let reason = closed_within(&conn, Duration::from_secs(5)).await;
    assert!(reason.contains("stopped reading"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let err = conn.send(&MetadataRequest::default()).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ConnectionClosed { .. }),
        "{err}"
    );
    drop(done_tx);
}

/// A broker that reads but never answers: connecting fails by the request timeout.
#[tokio::test]
async fn a_broker_that_never_answers_fails_the_connect_by_its_deadline() {
    let (listener, addr) = listener().await;
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let _ = sock.read_to_end(&mut Vec::new()).await;
    });
    let started = Instant::now();
    let err = Connection::connect(&addr, config(300)).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout { api, .. } if *api == ApiKey::API_VERSIONS),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A broker that stops answering after the handshake: the request times out, and one
/// more timeout later the connection is given up, failing what is still pending.
#[tokio::test]
async fn a_broker_that_stops_answering_closes_the_connection_one_timeout_later() {
    let (addr, _) = spawn_broker(|mut sock| async move {
        let _ = sock.read_to_end(&mut Vec::new()).await;
    })
    .await;
    let conn = Connection::connect(&addr, config(200)).await.unwrap();
    let err = conn.send(&MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{err}");
    let reason = closed_within(&conn, Duration::from_secs(5)).await;
    assert!(reason.contains("stopped answering"), "{reason}");
    assert!(conn.shared.lock().pending.is_empty());
}

/// Answers in another order than the requests reach the request that each names.
#[tokio::test]
async fn answers_out_of_order_reach_their_callers() {
    let (addr, _) = spawn_broker(|mut sock| async move {
        let requests = read_requests(&mut sock, 3).await;
        for (i, req) in requests.iter().enumerate().rev() {
            let body = metadata_answer(&format!("answer to request {i}"));
            answer::<MetadataRequest>(&mut sock, req, &body).await;
        }
        let _ = sock.read_to_end(&mut Vec::new()).await;
    })
    .await;
    let conn = Connection::connect(&addr, config(10_000)).await.unwrap();
    let request = MetadataRequest::default();
    let (a, b, c) = tokio::join!(
        conn.send(&request),
        conn.send(&request),
        conn.send(&request)
    );
    for (i, r) in [a, b, c].into_iter().enumerate() {
        let expected = format!("answer to request {i}");
        assert_eq!(r.unwrap().cluster_id.as_deref(), Some(expected.as_str()));
    }
    assert!(conn.closed_reason().is_none());
}

/// A broker that closes the socket in the middle of an answer: every request pending on
/// the connection fails at once, with the reason.
#[tokio::test]
async fn a_connection_closed_mid_frame_fails_every_pending_request_at_once() {
    let (addr, _) = spawn_broker(|mut sock| async move {
        let requests = read_requests(&mut sock, 3).await;
        // The size prefix of a 100-byte answer, its correlation id, and no more.
        let mut half = 100i32.to_be_bytes().to_vec();
        half.extend_from_slice(&requests[0][4..8]);
        sock.write_all(&half).await.unwrap();
    })
    .await;
    let conn = Connection::connect(&addr, config(30_000)).await.unwrap();
    let request = MetadataRequest::default();
    let started = Instant::now();
    let (a, b, c) = tokio::join!(
        conn.send(&request),
        conn.send(&request),
        conn.send(&request)
    );
    for r in [a, b, c] {
        match r.unwrap_err().into_kind() {
            ErrorKind::ConnectionClosed { reason, .. } => {
                assert!(reason.contains("in the middle of a frame"), "{reason}")
            }
            other => panic!("{other}"),
        }
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// No more than `max_in_flight` requests are written and unanswered at once; the rest
/// wait their turn and all are answered.
#[tokio::test]
async fn requests_in_flight_are_bounded() {
    let (addr, _) = spawn_broker(|mut sock| async move {
        // Answers only in pairs: a client allowed two in flight gets all four answered.
        for _ in 0..2 {
            let pair = [read_request(&mut sock).await, read_request(&mut sock).await];
            for req in &pair {
                answer::<MetadataRequest>(&mut sock, req, &metadata_answer("ok")).await;
            }
        }
        let _ = sock.read_to_end(&mut Vec::new()).await;
    })
    .await;
    let config = ConnectionConfig {
        max_in_flight: 2,
        ..config(10_000)
    };
    let conn = Connection::connect(&addr, config).await.unwrap();
    let request = MetadataRequest::default();
    let (a, b, c, d) = tokio::join!(
        conn.send(&request),
        conn.send(&request),
        conn.send(&request),
        conn.send(&request)
    );
    for r in [a, b, c, d] {
        r.unwrap();
    }
    assert_eq!(conn.shared.lock().most_pending, 2);
}

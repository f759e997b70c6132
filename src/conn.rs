//! One TCP connection to one broker.
//!
//! A connection negotiates API versions on connect (ApiVersions, with the fallback for a broker
//! that rejects our version), then carries any number of requests at once: each gets a
//! correlation id, a reader task matches responses back to their callers, and each request has
//! its own timeout. Frames larger than the configured maximum are refused from their size
//! prefix. When the socket fails, every request in flight fails with that reason and the
//! connection reports itself closed; the owner (the cluster view) opens a new one on next use.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_network>, KIP-511 (ApiVersions fallback).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use kseek_protocol::negotiate::{self, ApiVersionMap, ApiVersionsReply};
use kseek_protocol::{
    decode_exact, messages::encode_request_frame, split_frame, ApiKey, Message, Request,
    ResponseHeader,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

/// Settings of a connection.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// Sent in every request header, for the broker's logs and quotas.
    pub client_id: String,
    /// How long a TCP connect may take.
    pub connect_timeout: Duration,
    /// How long a request may wait for its response (a Fetch adds its own max wait to this).
    pub request_timeout: Duration,
    /// The largest response frame accepted; a larger size prefix fails the connection before
    /// the frame is read.
    pub max_frame_size: usize,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            client_id: "kseek".to_owned(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            // Fetch's default max bytes is 50 MiB; leave room for the response's framing.
            max_frame_size: 100 * 1024 * 1024,
        }
    }
}

/// A request on the wire, as [`Connection::exchange`] needs it.
struct Sent {
    api: ApiKey,
    /// For the request's span.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    name: &'static str,
    /// For the request's span.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    version: i16,
    correlation_id: i32,
    rx: oneshot::Receiver<Result<Bytes>>,
}

/// A request waiting for its response.
struct Pending {
    response_header_version: i16,
    tx: oneshot::Sender<Result<Bytes>>,
}

/// State shared between callers and the reader task.
struct State {
    next_correlation_id: i32,
    pending: HashMap<i32, Pending>,
    /// Why the connection closed, once it has.
    closed: Option<String>,
}

struct Shared {
    broker: String,
    state: Mutex<State>,
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the connection closed and fails everything in flight with `reason`.
    fn close(&self, reason: String) {
        let pending = {
            let mut st = self.lock();
            if st.closed.is_none() {
                st.closed = Some(reason.clone());
            }
            std::mem::take(&mut st.pending)
        };
        for (_, p) in pending {
            let _ = p.tx.send(Err(Error::ConnectionClosed {
                broker: self.broker.clone(),
                reason: reason.clone(),
            }));
        }
    }
}

/// A connection to one broker, with negotiated API versions. Cheap to share by reference;
/// requests from several tasks interleave on it.
pub struct Connection {
    shared: Arc<Shared>,
    reader: JoinHandle<()>,
    /// `None` only while connecting.
    versions: Option<ApiVersionMap>,
    config: ConnectionConfig,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("broker", &self.shared.broker)
            .field("closed", &self.shared.lock().closed)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects to `broker` (`host:port`) and negotiates API versions.
    pub async fn connect(broker: &str, config: ConnectionConfig) -> Result<Connection> {
        let io_err = |source| Error::Io {
            broker: broker.to_owned(),
            source,
        };
        let stream = tokio::time::timeout(config.connect_timeout, TcpStream::connect(broker))
            .await
            .map_err(|_| {
                io_err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("connect timed out after {:?}", config.connect_timeout),
                ))
            })?
            .map_err(io_err)?;
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let shared = Arc::new(Shared {
            broker: broker.to_owned(),
            state: Mutex::new(State {
                next_correlation_id: 0,
                pending: HashMap::new(),
                closed: None,
            }),
            writer: tokio::sync::Mutex::new(write),
        });
        let reader = tokio::spawn(read_loop(read, shared.clone(), config.max_frame_size));
        let mut conn = Connection {
            shared,
            reader,
            versions: None,
            config,
        };
        conn.versions = Some(conn.negotiate().await?);
        Ok(conn)
    }

    /// ApiVersions at our highest version; if the broker answers UNSUPPORTED_VERSION with its
    /// own range, once more at the highest version both know.
    async fn negotiate(&self) -> Result<ApiVersionMap> {
        let request = ApiVersionsRequest::kseek();
        // Each retry is at a strictly lower version, so this ends.
        let mut version = ApiVersionsRequest::VERSIONS.max;
        loop {
            let body = self.round_trip(&request, version).await?;
            match negotiate::decode_api_versions_response(body, version)
                .map_err(|source| self.protocol(source))?
            {
                ApiVersionsReply::Response(response) => return self.check_api_versions(response),
                ApiVersionsReply::Retry { version: lower } => version = lower,
            }
        }
    }

    fn check_api_versions(&self, response: ApiVersionsResponse) -> Result<ApiVersionMap> {
        if response.error_code != 0 {
            return Err(Error::Broker {
                broker: self.shared.broker.clone(),
                api: ApiKey::API_VERSIONS,
                code: response.error_code.into(),
                message: None,
            });
        }
        negotiate::negotiate(&response).map_err(|source| self.protocol(source))
    }

    fn protocol(&self, source: kseek_protocol::Error) -> Error {
        Error::Protocol {
            broker: self.shared.broker.clone(),
            source,
        }
    }

    /// The broker's address.
    pub fn broker(&self) -> &str {
        &self.shared.broker
    }

    /// The API versions agreed with this broker.
    pub fn versions(&self) -> &ApiVersionMap {
        // Set before `connect` returns the connection.
        self.versions
            .as_ref()
            .expect("versions are negotiated before a Connection is handed out")
    }

    /// Why the connection closed, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<String> {
        self.shared.lock().closed.clone()
    }

    /// Sends `request` at the highest version both sides support and waits for its response.
    pub async fn send<R: Request>(&self, request: &R) -> Result<R::Response> {
        let version = self
            .versions()
            .version_for::<R>()
            .map_err(|source| self.protocol(source))?;
        self.send_version(request, version).await
    }

    /// Sends `request` at `version` and waits for its response.
    pub async fn send_version<R: Request>(&self, request: &R, version: i16) -> Result<R::Response> {
        let body = self.round_trip(request, version).await?;
        decode_exact::<R::Response>(body, version).map_err(|source| self.protocol(source))
    }

    /// Sends one request and returns the raw response body (after the response header).
    ///
    /// Only the encoding depends on the request's type; the exchange itself is one
    /// non-generic future shared by every API, so it is compiled once, not once per request
    /// type (it would otherwise be duplicated into each caller's state machine).
    async fn round_trip<R: Request>(&self, request: &R, version: i16) -> Result<Bytes> {
        let (correlation_id, rx) = self.register(R::response_header_version(version))?;
        let mut frame = BytesMut::new();
        if let Err(source) = encode_request_frame(
            &mut frame,
            correlation_id,
            Some(&self.config.client_id),
            version,
            request,
        ) {
            self.shared.lock().pending.remove(&correlation_id);
            return Err(self.protocol(source));
        }
        let sent = Sent {
            api: R::API_KEY,
            name: R::NAME,
            version,
            correlation_id,
            rx,
        };
        Box::pin(self.exchange(frame.freeze(), sent)).await
    }

    /// Writes an encoded request frame and waits for its response under the request timeout.
    async fn exchange(&self, frame: Bytes, sent: Sent) -> Result<Bytes> {
        let exchange = async {
            crate::log::trace!(
                correlation_id = sent.correlation_id,
                bytes = frame.len(),
                "send"
            );
            {
                let mut w = self.shared.writer.lock().await;
                if let Err(e) = w.write_all(&frame).await {
                    drop(w);
                    self.shared.close(format!("write failed: {e}"));
                    return Err(Error::Io {
                        broker: self.shared.broker.clone(),
                        source: e,
                    });
                }
            }
            match tokio::time::timeout(self.config.request_timeout, sent.rx).await {
                Ok(Ok(result)) => result,
                // The reader task is gone (aborted): the connection is closed.
                Ok(Err(_)) => Err(Error::ConnectionClosed {
                    broker: self.shared.broker.clone(),
                    reason: self
                        .closed_reason()
                        .unwrap_or_else(|| "reader stopped".to_owned()),
                }),
                Err(_) => {
                    // The entry stays in `pending` (its receiver is gone): the broker still
                    // answers, and the reader drops that late answer when it comes.
                    Err(Error::Timeout {
                        broker: self.shared.broker.clone(),
                        api: sent.api,
                        after: self.config.request_timeout,
                    })
                }
            }
        };
        #[cfg(feature = "tracing")]
        let exchange = tracing::Instrument::instrument(
            exchange,
            tracing::debug_span!(
                "kafka_request",
                api = sent.name,
                version = sent.version,
                broker = %self.shared.broker,
            ),
        );
        exchange.await
    }

    fn register(
        &self,
        response_header_version: i16,
    ) -> Result<(i32, oneshot::Receiver<Result<Bytes>>)> {
        let mut st = self.shared.lock();
        if let Some(reason) = &st.closed {
            return Err(Error::ConnectionClosed {
                broker: self.shared.broker.clone(),
                reason: reason.clone(),
            });
        }
        let id = st.next_correlation_id;
        st.next_correlation_id = id.wrapping_add(1) & i32::MAX;
        let (tx, rx) = oneshot::channel();
        st.pending.insert(
            id,
            Pending {
                response_header_version,
                tx,
            },
        );
        Ok((id, rx))
    }
}

/// Reads frames until the socket ends, handing each response to the request that waits
/// for it.
async fn read_loop(mut read: tokio::net::tcp::OwnedReadHalf, shared: Arc<Shared>, max: usize) {
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let reason = loop {
        match split_frame(&mut buf, max) {
            Ok(Some(frame)) => {
                if let Err(reason) = dispatch(&shared, frame) {
                    break reason;
                }
                continue;
            }
            Ok(None) => {}
            Err(e) => break format!("bad frame from broker: {e}"),
        }
        if buf.capacity() - buf.len() < 8 * 1024 {
            buf.reserve(64 * 1024);
        }
        match read.read_buf(&mut buf).await {
            Ok(0) => break "broker closed the connection".to_owned(),
            Ok(_) => {}
            Err(e) => break format!("read failed: {e}"),
        }
    };
    crate::log::debug!(broker = %shared.broker, %reason, "connection closed");
    shared.close(reason);
}

fn dispatch(shared: &Shared, mut frame: Bytes) -> std::result::Result<(), String> {
    let Some(id) = frame
        .get(..4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    else {
        return Err("response frame shorter than its header".to_owned());
    };
    // A request that timed out or whose caller went away keeps its entry until its answer
    // comes (the send below then finds nobody waiting), so an id not pending was never sent
    // or was answered already: the stream can't be trusted any more.
    let Some(pending) = shared.lock().pending.remove(&id) else {
        return Err(format!("response with unknown correlation id {id}"));
    };
    let result = ResponseHeader::decode(&mut frame, pending.response_header_version)
        .map(|_| frame)
        .map_err(|source| Error::Protocol {
            broker: shared.broker.clone(),
            source,
        });
    let _ = pending.tx.send(result);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::BytesMut;
    use kseek_protocol::messages::api_versions::{ApiVersion, ApiVersionsResponse};
    use kseek_protocol::messages::metadata::{MetadataRequest, MetadataResponse};
    use kseek_protocol::negotiate::SUPPORTED_APIS;
    use kseek_protocol::{Message, Request};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    async fn read_request(sock: &mut TcpStream) -> Vec<u8> {
        let mut len = [0u8; 4];
        sock.read_exact(&mut len).await.unwrap();
        let mut req = vec![0u8; u32::from_be_bytes(len) as usize];
        sock.read_exact(&mut req).await.unwrap();
        req
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
            assert!(matches!(err, Error::Timeout { .. }), "{err}");
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
        assert!(matches!(err, Error::ConnectionClosed { .. }), "{err}");
        let reason = conn.closed_reason().unwrap();
        assert!(reason.contains("unknown correlation id -5"), "{reason}");
    }
}

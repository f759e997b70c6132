//! One TCP connection to one broker.
//!
//! A connection negotiates API versions on connect (ApiVersions, with the fallback for a broker
//! that rejects our version), then carries any number of requests at once. One task owns the
//! socket: callers hand it encoded requests through a bounded channel and wait for their
//! answers on a oneshot, so a caller that is cancelled (a dropped future, a `select!` that
//! lost, an aborted task) can never leave part of a frame on the wire. The task gives each
//! request its correlation id as it starts writing it, so a request cancelled before that is
//! never sent at all; one cancelled later is written whole and its answer dropped.
//!
//! Deadlines: a request must be answered within [`ConnectionConfig::request_timeout`] of the
//! call (waiting for a free slot and the write included) or the caller gets
//! [`ErrorKind::Timeout`]. The connection itself is given up, failing every request on it at once
//! with [`ErrorKind::ConnectionClosed`], when a frame can't be written by its request's deadline
//! (the broker stopped reading), when a timed-out request is still unanswered one more timeout
//! later (the broker stopped answering), when a frame larger than
//! [`ConnectionConfig::max_frame_size`] is announced, when an answer names a request that is
//! not pending, or when the socket fails or closes. At most
//! [`ConnectionConfig::max_in_flight`] requests are written and unanswered at once; more wait
//! in the channel, in order. The owner (the cluster view) opens a new connection on next use.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_network>, KIP-511 (ApiVersions fallback).

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use kseek_protocol::negotiate::{self, ApiVersionMap, ApiVersionsReply};
use kseek_protocol::{
    check_frame, decode_exact, messages::encode_request_frame, split_frame, ApiKey, FrameStatus,
    Message, Request, ResponseHeader,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::{Instant, Sleep};

use crate::error::{Dur, Error, ErrorKind, Result};
use crate::few::FewMap;
use crate::security::SecurityConfig;
use crate::task::BoxFuture;

#[cfg(feature = "sasl")]
mod authenticate;
#[cfg(test)]
pub(crate) mod sim_net;

/// Settings of a connection. `ConnectionConfig::default()` and the builder-style setters make
/// one (new fields may be added, so it can't be built as a struct literal):
///
/// ```
/// use std::time::Duration;
/// use kseek::ConnectionConfig;
///
/// let config = ConnectionConfig::default()
///     .client_id("billing-audit")
///     .connect_timeout(Duration::from_secs(3))
///     .request_timeout(Duration::from_secs(10));
/// assert_eq!(config.max_in_flight, 16);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectionConfig {
    /// Sent in every request header, for the broker's logs and quotas.
    pub client_id: String,
    /// How long a TCP connect may take.
    pub connect_timeout: Duration,
    /// How long a request may take from the call to its answer: waiting for a free slot,
    /// writing it and waiting for the response. A frame not written by then, or a timed-out
    /// request still unanswered one more timeout later, closes the connection.
    pub request_timeout: Duration,
    /// The largest response frame accepted; a larger size prefix fails the connection before
    /// the frame is read.
    pub max_frame_size: usize,
    /// The most requests written and not yet answered at once (at least 1); further requests
    /// wait their turn, in order.
    pub max_in_flight: usize,
    /// TLS and SASL (plain TCP without authentication by default). Shared: cloning a
    /// connection config (every connection takes one) doesn't copy the secrets and files.
    pub security: Arc<SecurityConfig>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            client_id: "kseek".to_owned(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            // Fetch's default max bytes is 50 MiB; leave room for the response's framing.
            max_frame_size: 100 * 1024 * 1024,
            max_in_flight: 16,
            security: Arc::default(),
        }
    }
}

impl ConnectionConfig {
    /// Sets [`ConnectionConfig::client_id`].
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = client_id.into();
        self
    }

    /// Sets [`ConnectionConfig::connect_timeout`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`ConnectionConfig::request_timeout`].
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`ConnectionConfig::max_frame_size`].
    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.max_frame_size = bytes;
        self
    }

    /// Sets [`ConnectionConfig::max_in_flight`].
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests;
        self
    }

    /// Sets [`ConnectionConfig::security`].
    pub fn security(mut self, security: SecurityConfig) -> Self {
        self.security = Arc::new(security);
        self
    }
}

/// Where the correlation id sits in a request frame: after the size prefix, the API key and
/// the API version (every request header version starts so).
const CORRELATION_ID_AT: std::ops::Range<usize> = 8..12;

/// A request handed to the connection's task.
struct Command {
    /// The whole frame, size prefix included; the task writes the correlation id into it.
    frame: BytesMut,
    response_header_version: i16,
    /// When the caller stops waiting.
    deadline: Instant,
    reply: oneshot::Sender<Result<Bytes>>,
}

/// A request written (or being written) and not answered yet.
struct Pending {
    response_header_version: i16,
    /// When its caller stops waiting; one more request timeout after that, an answer that
    /// still hasn't come means the broker stopped answering.
    deadline: Instant,
    tx: oneshot::Sender<Result<Bytes>>,
}

/// State shared between callers and the connection's task.
struct State {
    next_correlation_id: i32,
    pending: FewMap<i32, Pending>,
    /// Why the connection closed, once it has.
    closed: Option<String>,
    /// The most requests ever pending at once.
    #[cfg(test)]
    most_pending: usize,
}

struct Shared {
    broker: String,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn closed_error(&self, reason: String) -> Error {
        ErrorKind::ConnectionClosed {
            broker: self.broker.clone(),
            reason,
        }
        .into()
    }

    /// Marks the connection closed and fails everything pending with `reason`.
    fn close(&self, reason: &str) {
        let pending = {
            let mut st = self.lock();
            if st.closed.is_none() {
                st.closed = Some(reason.to_owned());
            }
            std::mem::take(&mut st.pending)
        };
        for (_, p) in pending {
            let _ = p.tx.send(Err(self.closed_error(reason.to_owned())));
        }
    }
}

/// A connection to one broker, with negotiated API versions. Cheap to share by reference;
/// requests from several tasks interleave on it.
pub struct Connection {
    shared: Arc<Shared>,
    requests: mpsc::Sender<Command>,
    /// SASL's own requests, which the task writes while it holds back all others.
    #[cfg(feature = "sasl")]
    auth: mpsc::Sender<Auth>,
    /// When the SASL session must be renewed (KIP-368), if it must.
    #[cfg(feature = "sasl")]
    reauth: authenticate::Reauth,
    task: JoinHandle<()>,
    /// `None` only while connecting.
    versions: Option<ApiVersionMap>,
    config: ConnectionConfig,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.task.abort();
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
        Connection::open(broker, config).await
    }

    /// [`Connection::connect`], boxed: compiled once however many callers (and crates) await
    /// it (see `task::BoxFuture`).
    #[inline(never)]
    pub(crate) fn open(
        broker: &str,
        config: ConnectionConfig,
    ) -> BoxFuture<'_, Result<Connection>> {
        Box::pin(Connection::open_inner(broker, config))
    }

    async fn open_inner(broker: &str, config: ConnectionConfig) -> Result<Connection> {
        let io_err = |source| ErrorKind::Io {
            broker: broker.to_owned(),
            source,
        };
        let stream =
            tokio::time::timeout(config.connect_timeout, connect_transport(broker, &config))
                .await
                .map_err(|_| {
                    io_err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("connect timed out after {}", Dur(config.connect_timeout)),
                    ))
                })??;
        let shared = Arc::new(Shared {
            broker: broker.to_owned(),
            state: Mutex::new(State {
                next_correlation_id: 0,
                pending: FewMap::new(),
                closed: None,
                #[cfg(test)]
                most_pending: 0,
            }),
        });
        let max_in_flight = config.max_in_flight.max(1);
        let (requests, rx) = mpsc::channel(max_in_flight);
        #[cfg(feature = "sasl")]
        let (auth, auth_rx) = mpsc::channel(4);
        let io = Io {
            stream,
            requests: rx,
            #[cfg(feature = "sasl")]
            auth: auth_rx,
            #[cfg(feature = "sasl")]
            authenticating: false,
            sasl: config.security.protocol.uses_sasl(),
            answers: 0,
            has_client_cert: config.security.tls.client_cert.is_some(),
            shared: shared.clone(),
            read_buf: BytesMut::new(),
            answered: false,
            writing: None,
            flushing: false,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            max_frame_size: config.max_frame_size,
            max_in_flight,
            answer_grace: config.request_timeout,
        };
        let task = crate::task::spawn(Box::pin(io.run()));
        let mut conn = Connection {
            shared,
            requests,
            #[cfg(feature = "sasl")]
            auth,
            #[cfg(feature = "sasl")]
            reauth: authenticate::Reauth::default(),
            task,
            versions: None,
            config,
        };
        conn.versions = Some(conn.negotiate().await.map_err(refused_tls)?);
        if conn.config.security.protocol.uses_sasl() {
            #[cfg(feature = "sasl")]
            conn.authenticate().await?;
            #[cfg(not(feature = "sasl"))]
            return Err(ErrorKind::Config {
                message: "security.protocol SASL_PLAINTEXT and SASL_SSL need SASL, and this \
                          kseek was built without its `sasl` feature"
                    .to_owned(),
            }
            .into());
        }
        Ok(conn)
    }

    /// ApiVersions at our highest version; if the broker answers UNSUPPORTED_VERSION with its
    /// own range, once more at the highest version both know.
    async fn negotiate(&self) -> Result<ApiVersionMap> {
        let request = ApiVersionsRequest::kseek();
        // Each retry is at a strictly lower version, so this ends.
        let mut version = ApiVersionsRequest::VERSIONS.max;
        loop {
            let body = self.round_trip(&request, version, Via::Requests).await?;
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
            return Err(ErrorKind::Broker {
                broker: self.shared.broker.clone(),
                api: ApiKey::API_VERSIONS,
                code: response.error_code.into(),
                message: None,
            }
            .into());
        }
        negotiate::negotiate(&response).map_err(|source| self.protocol(source))
    }

    fn protocol(&self, source: kseek_protocol::Error) -> Error {
        ErrorKind::Protocol {
            broker: self.shared.broker.clone(),
            source,
        }
        .into()
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
    ///
    /// Cancellation-safe: dropping the future before it completes never disturbs the
    /// connection or other requests on it.
    pub async fn send<R: Request>(&self, request: &R) -> Result<R::Response> {
        let version = self
            .versions()
            .version_for::<R>()
            .map_err(|source| self.protocol(source))?;
        self.send_version(request, version).await
    }

    /// Sends `request` at `version` and waits for its response. Cancellation-safe, like
    /// [`Connection::send`].
    pub async fn send_version<R: Request>(&self, request: &R, version: i16) -> Result<R::Response> {
        let body = self.round_trip(request, version, Via::Requests).await?;
        decode_exact::<R::Response>(body, version).map_err(|source| self.protocol(source))
    }

    /// Sends one request `via` a channel and returns the raw response body (after the
    /// response header).
    ///
    /// Only the encoding depends on the request's type; the exchange itself is one
    /// non-generic future shared by every API, so it is compiled once, not once per request
    /// type (it would otherwise be duplicated into each caller's state machine).
    async fn round_trip<R: Request>(&self, request: &R, version: i16, via: Via) -> Result<Bytes> {
        let mut frame = BytesMut::new();
        // The task puts the real correlation id in when it writes the frame.
        encode_request_frame(
            &mut frame,
            0,
            Some(&self.config.client_id),
            version,
            request,
        )
        .map_err(|source| self.protocol(source))?;
        let request = RequestInfo {
            api: R::API_KEY,
            name: R::NAME,
            version,
            response_header_version: R::response_header_version(version),
        };
        Box::pin(self.exchange(frame, request, via)).await
    }

    /// Hands an encoded request frame to the connection's task and waits for its response
    /// until the request's deadline.
    async fn exchange(&self, frame: BytesMut, request: RequestInfo, via: Via) -> Result<Bytes> {
        #[cfg(feature = "sasl")]
        if matches!(via, Via::Requests) {
            // A session about to expire is renewed before anything else is sent (KIP-368).
            self.reauthenticate_if_due().await?;
        }
        let timeout = self.config.request_timeout;
        let deadline = Instant::now() + timeout;
        let exchange = async {
            crate::log::trace!(bytes = frame.len(), "send");
            let (reply, answer) = oneshot::channel();
            let command = Command {
                frame,
                response_header_version: request.response_header_version,
                deadline,
                reply,
            };
            let closed = || {
                let reason = self.closed_reason();
                self.shared
                    .closed_error(reason.unwrap_or_else(|| "connection task stopped".to_owned()))
            };
            let wait = async {
                match via {
                    Via::Requests => self.requests.send(command).await.map_err(|_| closed())?,
                    #[cfg(feature = "sasl")]
                    Via::Auth => self
                        .auth
                        .send(Auth::Request(command))
                        .await
                        .map_err(|_| closed())?,
                }
                answer.await.unwrap_or_else(|_| Err(closed()))
            };
            match tokio::time::timeout_at(deadline, wait).await {
                Ok(result) => result,
                // Dropping `wait` is all the cleanup there is: a request still in the channel
                // is skipped, one written stays pending until its late answer comes.
                Err(_) => Err(ErrorKind::Timeout {
                    broker: self.shared.broker.clone(),
                    api: request.api,
                    after: timeout,
                }
                .into()),
            }
        };
        #[cfg(feature = "tracing")]
        let exchange = tracing::Instrument::instrument(
            exchange,
            tracing::debug_span!(
                "kafka_request",
                api = request.name,
                version = request.version,
                broker = %self.shared.broker,
            ),
        );
        exchange.await
    }
}

/// Which channel a request takes to the connection's task.
#[derive(Clone, Copy)]
enum Via {
    /// The normal queue.
    Requests,
    /// SASL's own: written while the task holds back the normal queue.
    #[cfg(feature = "sasl")]
    Auth,
}

/// What SASL tells the connection's task.
#[cfg(feature = "sasl")]
enum Auth {
    /// Write nothing from the normal queue until `End`: an authentication starts.
    Begin,
    /// A SaslHandshake or SaslAuthenticate request.
    Request(Command),
    /// The authentication is over: back to the normal queue.
    End,
    /// The authentication was cancelled half way: the connection can't be used any more.
    Abort,
}

/// What [`Connection::exchange`] needs to know of a request besides its bytes.
struct RequestInfo {
    api: ApiKey,
    /// For the request's span.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    name: &'static str,
    /// For the request's span.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    version: i16,
    response_header_version: i16,
}

/// A frame being written.
struct Writing {
    frame: Bytes,
    written: usize,
    correlation_id: i32,
    deadline: Instant,
}

/// The task that owns the socket: writes requests one frame at a time, reads responses and
/// hands each to its caller, and watches the deadlines.
struct Io {
    stream: Transport,
    requests: mpsc::Receiver<Command>,
    #[cfg(feature = "sasl")]
    auth: mpsc::Receiver<Auth>,
    /// Between `Auth::Begin` and `Auth::End`: only SASL requests are written.
    #[cfg(feature = "sasl")]
    authenticating: bool,
    /// Whether the connection is meant to authenticate with SASL (for error hints).
    sasl: bool,
    /// Response frames read so far.
    answers: u64,
    /// Whether TLS presents a client certificate (for error hints).
    has_client_cert: bool,
    shared: Arc<Shared>,
    read_buf: BytesMut,
    /// Whether any response frame has come yet.
    answered: bool,
    writing: Option<Writing>,
    /// Whether written bytes may still sit in a buffer of the transport (TLS).
    flushing: bool,
    timer: Pin<Box<Sleep>>,
    max_frame_size: usize,
    max_in_flight: usize,
    /// How long past its deadline an unanswered request may stay pending.
    answer_grace: Duration,
}

impl Io {
    async fn run(mut self) {
        let reason = poll_fn(|cx| self.poll(cx)).await;
        crate::log::debug!(broker = %self.shared.broker, %reason, "connection closed");
        self.shared.close(&reason);
        // Requests still queued were never written: they fail the same way.
        self.requests.close();
        while let Ok(command) = self.requests.try_recv() {
            let _ = command
                .reply
                .send(Err(self.shared.closed_error(reason.clone())));
        }
    }

    /// Moves bytes both ways until nothing can progress; `Ready` with the reason once the
    /// connection is finished.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<String> {
        loop {
            let mut progress = false;
            match self.poll_read(cx) {
                Poll::Ready(Ok(())) => progress = true,
                Poll::Ready(Err(reason)) => return Poll::Ready(reason),
                Poll::Pending => {}
            }
            if self.writing.is_none() {
                match self.poll_next_request(cx) {
                    Poll::Ready(Ok(writing)) => {
                        self.writing = Some(writing);
                        progress = true;
                    }
                    Poll::Ready(Err(reason)) => return Poll::Ready(reason),
                    Poll::Pending => {}
                }
            }
            match self.poll_write(cx) {
                Poll::Ready(Ok(())) => progress = true,
                Poll::Ready(Err(reason)) => return Poll::Ready(reason),
                Poll::Pending => {}
            }
            match self.poll_deadlines(cx) {
                Poll::Ready(Ok(())) => progress = true,
                Poll::Ready(Err(reason)) => return Poll::Ready(reason),
                Poll::Pending => {}
            }
            if !progress {
                return Poll::Pending;
            }
        }
    }

    /// Reads what has arrived and dispatches every complete frame.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), String>> {
        let len = self.read_buf.len();
        let pending = match check_frame(&self.read_buf, self.max_frame_size) {
            Ok(FrameStatus::Incomplete { needed }) if len >= 4 => Some(needed),
            _ => None,
        };
        let want = read_capacity(len, pending);
        if self.read_buf.capacity() < want {
            self.read_buf.reserve((want - len).max(READ_CHUNK));
        }
        // `read_buf` is cancel-safe: a future made for one poll and dropped loses nothing.
        let read = pin!(self.stream.read_buf(&mut self.read_buf));
        let n = match ready!(read.poll(cx)) {
            Ok(n) => n,
            Err(e) => return Poll::Ready(Err(read_error(&e, self.has_client_cert))),
        };
        if n == 0 {
            return Poll::Ready(Err(if self.read_buf.is_empty() {
                if self.answers == 1 && !self.sasl {
                    // ApiVersions is answered before authentication, nothing else is.
                    "broker closed the connection after ApiVersions: if this listener needs \
                     SASL, set security.protocol SASL_PLAINTEXT or SASL_SSL"
                        .to_owned()
                } else {
                    "broker closed the connection".to_owned()
                }
            } else {
                format!(
                    "broker closed the connection in the middle of a frame ({} bytes of it read)",
                    self.read_buf.len()
                )
            }));
        }
        if !self.answered && looks_like_tls(&self.read_buf) {
            return Poll::Ready(Err(format!(
                "{TLS_ANSWER}: this listener expects security.protocol SSL or SASL_SSL"
            )));
        }
        loop {
            match split_frame(&mut self.read_buf, self.max_frame_size) {
                Ok(Some(frame)) => {
                    self.answered = true;
                    self.answers += 1;
                    dispatch(&self.shared, frame)?
                }
                Ok(None) => return Poll::Ready(Ok(())),
                Err(e) => return Poll::Ready(Err(format!("bad frame from broker: {e}"))),
            }
        }
    }

    /// The next request to write, once fewer than the maximum are in flight. Requests whose
    /// caller stopped waiting are dropped unsent. `Err` with the reason when the connection
    /// must close: every sender is gone, or an authentication was abandoned.
    fn poll_next_request(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<std::result::Result<Writing, String>> {
        loop {
            // A full window opens when an answer is read, and reading is always polled.
            if self.shared.lock().pending.len() >= self.max_in_flight {
                return Poll::Pending;
            }
            #[cfg_attr(not(feature = "sasl"), allow(unused_mut))]
            let mut command = None;
            // SASL's channel first, always, so its waker is registered.
            #[cfg(feature = "sasl")]
            match self.auth.poll_recv(cx) {
                Poll::Ready(Some(Auth::Begin)) => {
                    self.authenticating = true;
                    continue;
                }
                Poll::Ready(Some(Auth::End)) => {
                    self.authenticating = false;
                    continue;
                }
                Poll::Ready(Some(Auth::Abort)) => {
                    return Poll::Ready(
                        Err("SASL authentication was abandoned half way".to_owned()),
                    )
                }
                Poll::Ready(Some(Auth::Request(c))) => command = Some(c),
                Poll::Ready(None) | Poll::Pending if self.authenticating => return Poll::Pending,
                Poll::Ready(None) | Poll::Pending => {}
            }
            let mut command = match command {
                Some(command) => command,
                None => match ready!(self.requests.poll_recv(cx)) {
                    Some(command) => command,
                    // Every sender is gone: the connection was dropped.
                    None => return Poll::Ready(Err("connection dropped".to_owned())),
                },
            };
            if command.reply.is_closed() || command.frame.len() < CORRELATION_ID_AT.end {
                continue;
            }
            let correlation_id = {
                let mut st = self.shared.lock();
                let id = st.next_correlation_id;
                st.next_correlation_id = id.wrapping_add(1) & i32::MAX;
                st.pending.insert(
                    id,
                    Pending {
                        response_header_version: command.response_header_version,
                        deadline: command.deadline,
                        tx: command.reply,
                    },
                );
                #[cfg(test)]
                {
                    st.most_pending = st.most_pending.max(st.pending.len());
                }
                id
            };
            command.frame[CORRELATION_ID_AT].copy_from_slice(&correlation_id.to_be_bytes());
            return Poll::Ready(Ok(Writing {
                frame: command.frame.freeze(),
                written: 0,
                correlation_id,
                deadline: command.deadline,
            }));
        }
    }

    /// Writes more of the current frame; `Ready(Ok)` when some was written.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), String>> {
        let Some(w) = &mut self.writing else {
            if !self.flushing {
                return Poll::Pending;
            }
            // TLS keeps records it could not write yet; push them out.
            let flush = pin!(self.stream.flush());
            return match ready!(flush.poll(cx)) {
                Ok(()) => {
                    self.flushing = false;
                    Poll::Ready(Ok(()))
                }
                Err(e) => Poll::Ready(Err(format!("write failed: {e}"))),
            };
        };
        // `write` is cancel-safe: a future made for one poll and dropped writes nothing.
        let write = pin!(self.stream.write(&w.frame[w.written..]));
        match ready!(write.poll(cx)) {
            Ok(0) => Poll::Ready(Err(
                "write failed: the socket accepts no more bytes".to_owned()
            )),
            Ok(n) => {
                w.written += n;
                if w.written == w.frame.len() {
                    crate::log::trace!(
                        correlation_id = w.correlation_id,
                        bytes = w.frame.len(),
                        "sent"
                    );
                    self.writing = None;
                    self.flushing = self.stream.buffers_writes();
                }
                Poll::Ready(Ok(()))
            }
            Err(e) => Poll::Ready(Err(format!("write failed: {e}"))),
        }
    }

    /// Fails the connection when a frame is still unwritten at its request's deadline, or a
    /// request is still unanswered `answer_grace` after its deadline; otherwise arms the timer
    /// for the next such moment. `Ready(Ok)` when the timer fired early.
    fn poll_deadlines(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), String>> {
        let now = Instant::now();
        let mut next = None;
        if let Some(w) = &self.writing {
            if w.deadline <= now {
                return Poll::Ready(Err(format!(
                    "request {} not written by its deadline ({} of {} bytes): the broker \
                     stopped reading",
                    w.correlation_id,
                    w.written,
                    w.frame.len()
                )));
            }
            next = Some(w.deadline);
        }
        {
            let st = self.shared.lock();
            for (id, p) in st.pending.iter() {
                let give_up = p.deadline + self.answer_grace;
                if give_up <= now {
                    return Poll::Ready(Err(format!(
                        "no answer to request {id} within {} after its deadline: the broker \
                         stopped answering",
                        Dur(self.answer_grace)
                    )));
                }
                next = Some(next.map_or(give_up, |t: Instant| t.min(give_up)));
            }
        }
        let Some(next) = next else {
            return Poll::Pending;
        };
        if self.timer.deadline() != next {
            self.timer.as_mut().reset(next);
        }
        ready!(self.timer.as_mut().poll(cx));
        Poll::Ready(Ok(()))
    }
}

/// Why a connection closes when a broker answers a plaintext request in TLS.
const TLS_ANSWER: &str = "the broker answered in TLS";

/// Marks a connection closed by a TLS alert from the broker (see [`refused_tls`]).
const TLS_REFUSED: &str = "TLS session refused: ";

/// What a read asks the socket for at least, and the room kept free for one.
const READ_CHUNK: usize = 64 * 1024;
const MIN_SPARE: usize = 8 * 1024;
/// How far ahead of the bytes it has received a frame's buffer may grow: a size prefix alone
/// never makes the connection allocate much more than what arrived.
const FRAME_GROWTH: usize = 16;

/// The capacity the read buffer should have before the next read, holding `len` bytes of
/// which the start of a frame still missing `pending` bytes (when its size prefix is there).
///
/// Room for the whole rest of the frame, so a large Fetch response lands in the buffer it is
/// split from and is not copied as the buffer grows in steps, but at most `FRAME_GROWTH`
/// times what has arrived: a frame of 8 MiB is read into buffers of 1 MiB (after its first
/// 64 KiB) and then 8 MiB, copying 1 MiB, not into one doubling at every 64 KiB.
fn read_capacity(len: usize, pending: Option<usize>) -> usize {
    let spare = len + MIN_SPARE;
    match pending {
        Some(needed) => (len + needed)
            .min(len.saturating_mul(FRAME_GROWTH))
            .max(spare),
        None => spare,
    }
}

/// Why a read failed. A TLS alert means the broker refused the session: with TLS 1.3 a
/// client certificate it rejects (or one it requires and didn't get) shows only now, on the
/// first read after the handshake.
fn read_error(e: &std::io::Error, has_client_cert: bool) -> String {
    #[cfg(feature = "tls")]
    if let Some(rustls::Error::AlertReceived(alert)) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        use rustls::AlertDescription as A;
        let hint = match alert {
            A::CertificateRequired => {
                "the listener requires a client certificate (ssl.client.auth=required): set \
                 ssl.certificate.location and ssl.key.location (or ssl.keystore.location)"
            }
            A::BadCertificate | A::UnknownCA | A::CertificateUnknown | A::HandshakeFailure
                if !has_client_cert =>
            {
                "the listener requires a client certificate (ssl.client.auth=required): set \
                 ssl.certificate.location and ssl.key.location (or ssl.keystore.location)"
            }
            A::BadCertificate | A::UnknownCA | A::CertificateUnknown => {
                "the broker does not trust our client certificate: use one signed by a CA in \
                 its truststore"
            }
            _ => "see the broker's log",
        };
        return format!("{TLS_REFUSED}the broker sent the alert {alert:?}; {hint}");
    }
    let _ = has_client_cert;
    format!("read failed: {e}")
}

/// A connection the broker closed with a TLS alert while connecting is a TLS error (not
/// retriable), not a closed connection.
fn refused_tls(e: Error) -> Error {
    match e.kind() {
        ErrorKind::ConnectionClosed { broker, reason }
            if reason.starts_with(TLS_REFUSED) || reason.starts_with(TLS_ANSWER) =>
        {
            ErrorKind::Tls {
                broker: broker.clone(),
                message: reason.clone(),
            }
            .into()
        }
        _ => e,
    }
}

/// Whether the first bytes from a broker are a TLS record (a handshake or an alert) rather
/// than a Kafka size prefix: one that large (over 350 MB) is never a real answer.
fn looks_like_tls(buf: &[u8]) -> bool {
    matches!(buf, [0x15 | 0x16, 0x03, 0x00..=0x04, ..])
}

/// The socket, with TLS when the security settings ask for it.
enum Transport {
    Tcp(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    /// An in-memory connection to a simulated broker (tests only: [`sim_net`]).
    #[cfg(test)]
    Sim(tokio::io::DuplexStream),
}

impl Transport {
    /// Whether a completed write may leave bytes in a buffer that only a flush sends.
    fn buffers_writes(&self) -> bool {
        !matches!(self, Transport::Tcp(_))
    }
}

impl tokio::io::AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            #[cfg(test)]
            Transport::Sim(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            #[cfg(test)]
            Transport::Sim(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            #[cfg(test)]
            Transport::Sim(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            #[cfg(test)]
            Transport::Sim(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// Opens the TCP connection and, when the security settings ask for it, runs the TLS
/// handshake over it.
async fn connect_transport(broker: &str, config: &ConnectionConfig) -> Result<Transport> {
    #[cfg(test)]
    if let Some(stream) = sim_net::connect(broker) {
        return stream.map(Transport::Sim).map_err(|source| {
            ErrorKind::Io {
                broker: broker.to_owned(),
                source,
            }
            .into()
        });
    }
    let tcp = TcpStream::connect(broker)
        .await
        .map_err(|source| ErrorKind::Io {
            broker: broker.to_owned(),
            source,
        })?;
    let _ = tcp.set_nodelay(true);
    if !config.security.protocol.uses_tls() {
        return Ok(Transport::Tcp(tcp));
    }
    #[cfg(feature = "tls")]
    {
        let tls_error = |message| ErrorKind::Tls {
            broker: broker.to_owned(),
            message,
        };
        let rustls_config = config
            .security
            .tls_cache
            .get(&config.security.tls)
            .map_err(|message| ErrorKind::Config { message })?;
        let stream = crate::tls::handshake(rustls_config, broker, tcp)
            .await
            .map_err(tls_error)?;
        Ok(Transport::Tls(Box::new(stream)))
    }
    #[cfg(not(feature = "tls"))]
    {
        drop(tcp);
        Err(ErrorKind::Config {
            message: "security.protocol SSL and SASL_SSL need TLS, and this kseek was built \
                      without its `tls` feature"
                .to_owned(),
        }
        .into())
    }
}

/// Hands one response frame to the request that waits for it.
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
        .map_err(|source| {
            ErrorKind::Protocol {
                broker: shared.broker.clone(),
                source,
            }
            .into()
        });
    let _ = pending.tx.send(result);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::future::{poll_fn, Future};
    use std::task::Poll;
    use std::time::Duration;

    use bytes::BytesMut;
    use kseek_protocol::messages::api_versions::{ApiVersion, ApiVersionsResponse};
    use kseek_protocol::messages::metadata::{
        MetadataRequest, MetadataRequestTopic, MetadataResponse,
    };
    use kseek_protocol::negotiate::SUPPORTED_APIS;
    use kseek_protocol::{Message, Request};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    #[test]
    fn read_buffer_grows_toward_the_frame_in_bounded_steps() {
        // Nothing pending: the usual spare room.
        assert_eq!(read_capacity(0, None), MIN_SPARE);
        assert_eq!(read_capacity(100, None), 100 + MIN_SPARE);
        // The first 64 KiB of an 8 MiB frame: room for 16 times that, not the whole frame.
        assert_eq!(
            read_capacity(64 << 10, Some((8 << 20) - (64 << 10))),
            1 << 20
        );
        // From 1 MiB on, the rest of the frame fits: the last buffer is the frame's own.
        assert_eq!(read_capacity(1 << 20, Some(7 << 20)), 8 << 20);
        // A frame about to end: at least the usual spare room.
        assert_eq!(read_capacity(100, Some(50)), 100 + MIN_SPARE);
        // A size prefix alone, however large the size it claims, asks for little.
        assert_eq!(read_capacity(4, Some(100 << 20)), 4 + MIN_SPARE);
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
}

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
    check_frame, decode_exact, frame::SIZE_PREFIX_LEN, messages::encode_request_frame, split_frame,
    ApiKey, FrameStatus, Message, Request, ResponseHeader,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
mod transport;

use transport::{
    connect_transport, looks_like_tls, read_error, refused_tls, Transport, TLS_ANSWER,
};

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
            largest_frame: 0,
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
    /// The largest response frame read whole so far, size prefix included: the room the next
    /// frame may be given from its size prefix on (`read_capacity`).
    largest_frame: usize,
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
            Ok(FrameStatus::Incomplete { needed }) if len >= SIZE_PREFIX_LEN => Some(needed),
            _ => None,
        };
        let want = read_capacity(len, pending, self.largest_frame);
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
                    self.largest_frame = self.largest_frame.max(SIZE_PREFIX_LEN + frame.len());
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

/// What a read asks the socket for at least, and the room kept free for one.
const READ_CHUNK: usize = 64 * 1024;
const MIN_SPARE: usize = 8 * 1024;
/// How far ahead of the bytes it has received a frame's buffer may grow: a size prefix alone
/// never makes the connection allocate much more than what arrived.
const FRAME_GROWTH: usize = 16;

/// The capacity the read buffer should have before the next read, holding `len` bytes of
/// which the start of a frame still missing `pending` bytes (`None` until its size prefix is
/// there), on a connection whose largest whole frame so far was `largest` bytes.
///
/// Room for the whole rest of the frame, so a large Fetch response lands in the buffer it is
/// split from and is not copied as the buffer grows. A size prefix is only a claim, so the
/// room is at most `FRAME_GROWTH` times what has arrived of the frame or the largest frame
/// read whole so far, whichever is more (before the size prefix: room for that largest frame).
/// So answers of one size are each read into room made before their first byte; the first
/// 8 MiB frame of a connection goes into 1 MiB (after its first 64 KiB), then 8 MiB. A frame's
/// last bytes ask for no more room than they take: more would move the whole frame to a new
/// buffer just before it is split off.
fn read_capacity(len: usize, pending: Option<usize>, largest: usize) -> usize {
    match pending {
        Some(needed) => (len + needed)
            .min(len.saturating_mul(FRAME_GROWTH).max(largest))
            .max(len + needed.min(MIN_SPARE)),
        None => (len + MIN_SPARE).max(largest),
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
mod tests;

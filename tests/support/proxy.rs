//! A Kafka-aware fault proxy in Rust, for network-fault tests against real brokers.
//!
//! [`FaultProxy::start`] listens on one loopback port per upstream broker and forwards every
//! connection to that broker. It reads frames in both directions (4-byte size prefix), keeps
//! the API key and version of every request by correlation id, and rewrites every broker
//! address in Metadata and FindCoordinator responses to its own listener for that broker
//! (decoded with `kseek_protocol`, re-encoded at the same version), opening a listener for each
//! broker it learns of. A client given [`FaultProxy::bootstrap`] therefore reaches the brokers
//! only through the proxy, on a single node as on a cluster.
//!
//! Faults are switched at run time through the proxy's methods (it runs on its own thread and
//! runtime, so a test may block or run its own runtime meanwhile):
//! - [`FaultProxy::cut_next_fetch`]: the next Fetch response carrying data reaches the client
//!   only up to a byte position, then the connection closes;
//! - [`FaultProxy::set_slices`]: every response is written one byte per write;
//! - [`FaultProxy::set_black_hole`] (or [`FaultProxy::set_black_hole_for`] one broker):
//!   requests are read and dropped, nothing is answered;
//! - [`FaultProxy::set_random_cuts`]: responses are cut at a random byte, seeded, at a bounded
//!   rate.
//!
//! - [`FaultProxy::spoil_next_incremental_fetch`]: the next incremental Fetch (KIP-227 fetch
//!   session, epoch above 0) goes to the broker with an unknown session id or the wrong
//!   epoch, so that the broker itself answers FETCH_SESSION_ID_NOT_FOUND or
//!   INVALID_FETCH_SESSION_EPOCH.
//!
//! [`FaultProxy::counters`] tells what was injected and how many bytes went each way;
//! [`FaultProxy::fetches`] lists the Fetch requests and answers seen, with their session
//! fields and sizes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::fetch::FetchRequest;
use kseek_protocol::messages::find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
use kseek_protocol::messages::metadata::{MetadataRequest, MetadataResponse};
use kseek_protocol::{ApiKey, Message, Request, RequestHeader, ResponseHeader};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

/// The smallest Fetch response [`FaultProxy::cut_next_fetch`] cuts: smaller ones carry no
/// records worth cutting (an empty Fetch answer is well under this).
pub(crate) const MIN_CUT_FETCH: usize = 1024;

/// Where a response is cut, counted in bytes of the frame including its size prefix: the
/// client receives exactly that many bytes, then the connection closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CutAt {
    /// After byte `n` (so `At(2)` cuts inside the size prefix, `At(6)` inside the header).
    At(usize),
    /// In the middle of the frame (inside the records of a Fetch response with data).
    Middle,
    /// `k` bytes before the end (`BeforeEnd(1)`: everything but the last byte).
    BeforeEnd(usize),
    /// After the whole frame: the response arrives complete, then the connection closes.
    AfterFrame,
}

impl CutAt {
    /// The number of bytes delivered of a frame of `len` bytes, if this cut falls inside it
    /// (or right after it, for [`CutAt::AfterFrame`]).
    fn position(self, len: usize) -> Option<usize> {
        let pos = match self {
            CutAt::At(n) => n,
            CutAt::Middle => len / 2,
            CutAt::BeforeEnd(k) => len.checked_sub(k)?,
            CutAt::AfterFrame => return Some(len),
        };
        (pos < len).then_some(pos)
    }
}

/// Random cuts for a soak: each response is cut with `probability` at a uniformly random
/// byte, but never two cuts less than `min_gap` apart (over all connections).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RandomCuts {
    /// Seed of the generator (the same seed gives the same choices for the same traffic).
    pub(crate) seed: u64,
    /// The chance that a response is cut, 0.0 to 1.0.
    pub(crate) probability: f64,
    /// The least time between two cuts.
    pub(crate) min_gap: Duration,
}

/// The most Fetch requests and answers [`FaultProxy::fetches`] keeps (a soak sends many).
const MAX_FETCHES_SEEN: usize = 100_000;

/// How [`FaultProxy::spoil_next_incremental_fetch`] spoils a Fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SessionSpoiler {
    /// A session id the broker never gave out.
    UnknownId,
    /// The epoch after the one the client sent (as if the request had been replayed).
    WrongEpoch,
}

/// One Fetch request or answer the proxy forwarded (a request as the broker got it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FetchSeen {
    Request {
        /// The whole frame, size prefix included.
        frame_len: usize,
        session_id: i32,
        session_epoch: i32,
        /// The partitions named, and the partitions forgotten.
        partitions: usize,
        forgotten: usize,
        /// Spoiled by [`FaultProxy::spoil_next_incremental_fetch`].
        spoiled: bool,
    },
    Response {
        frame_len: usize,
        error_code: i16,
        session_id: i32,
    },
}

/// What the proxy did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Client connections accepted.
    pub(crate) connections: u64,
    /// Request bytes forwarded to brokers.
    pub(crate) bytes_to_brokers: u64,
    /// Response bytes forwarded to clients (cut responses count what was delivered).
    pub(crate) bytes_to_clients: u64,
    /// Metadata and FindCoordinator responses whose broker addresses were rewritten.
    pub(crate) rewritten: u64,
    /// Metadata or FindCoordinator responses that could not be decoded: their connection was
    /// closed instead of forwarding an address the client could use to bypass the proxy.
    pub(crate) rewrite_failures: u64,
    /// Fetch responses cut by [`FaultProxy::cut_next_fetch`].
    pub(crate) fetch_cuts: u64,
    /// Responses cut by [`FaultProxy::set_random_cuts`].
    pub(crate) random_cuts: u64,
    /// Responses written one byte at a time.
    pub(crate) sliced_responses: u64,
    /// Requests read and dropped by the black hole.
    pub(crate) swallowed_requests: u64,
    /// Responses dropped by the black hole (answers to requests forwarded before it).
    pub(crate) swallowed_responses: u64,
}

/// One cut made by [`FaultProxy::cut_next_fetch`]: bytes delivered of a frame of `frame_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CutMade {
    /// Bytes of the frame (size prefix included) the client received.
    pub(crate) delivered: usize,
    /// The frame's whole length, size prefix included.
    pub(crate) frame_len: usize,
}

#[derive(Default)]
struct AtomicCounters {
    connections: AtomicU64,
    bytes_to_brokers: AtomicU64,
    bytes_to_clients: AtomicU64,
    rewritten: AtomicU64,
    rewrite_failures: AtomicU64,
    fetch_cuts: AtomicU64,
    random_cuts: AtomicU64,
    sliced_responses: AtomicU64,
    swallowed_requests: AtomicU64,
    swallowed_responses: AtomicU64,
}

fn add(counter: &AtomicU64, n: usize) {
    counter.fetch_add(n as u64, Ordering::Relaxed);
}

#[derive(Default)]
struct Faults {
    cut_next_fetch: Option<CutAt>,
    cuts_made: Vec<CutMade>,
    slices: bool,
    black_hole: bool,
    /// Upstream brokers whose connections are black holes.
    black_holed: HashSet<String>,
    random: Option<RandomCuts>,
    rng: u64,
    next_random_cut: Option<Instant>,
    spoil_next_incremental_fetch: Option<SessionSpoiler>,
    fetches: Vec<FetchSeen>,
}

impl Faults {
    fn is_black_hole(&self, upstream: &str) -> bool {
        self.black_hole || self.black_holed.contains(upstream)
    }

    /// splitmix64: small, seeded, good enough to spread cuts.
    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

struct Shared {
    /// Upstream `host:port` to the local port that forwards to it.
    listeners: Mutex<HashMap<String, u16>>,
    faults: Mutex<Faults>,
    counters: AtomicCounters,
}

impl Shared {
    fn faults(&self) -> std::sync::MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The proxy; it stops (closing every connection) on drop.
pub(crate) struct FaultProxy {
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    bootstrap: String,
}

impl FaultProxy {
    /// Starts a proxy in front of the cluster at `bootstrap` (`host:port[,host:port...]`):
    /// one listener per bootstrap address now, one per other broker as responses name them.
    pub(crate) fn start(bootstrap: &str) -> FaultProxy {
        let shared = Arc::new(Shared {
            listeners: Mutex::new(HashMap::new()),
            faults: Mutex::new(Faults::default()),
            counters: AtomicCounters::default(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let upstreams: Vec<String> = bootstrap
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fault-proxy".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("proxy runtime");
                runtime.block_on(async move {
                    let ports: Vec<u16> = upstreams
                        .iter()
                        .map(|u| listener_for(&for_thread, u))
                        .collect();
                    ready_tx.send(ports).expect("the starter waits");
                    let _ = stopped.await;
                });
                // Dropping the runtime drops every task: all sockets close.
            })
            .expect("spawning the proxy thread");
        let ports = ready_rx.recv().expect("the proxy starts");
        let bootstrap = ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        FaultProxy {
            shared,
            stop: Some(stop),
            thread: Some(thread),
            bootstrap,
        }
    }

    /// The proxy's addresses for the bootstrap brokers, `127.0.0.1:port[,...]`.
    pub(crate) fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// Makes the broker see the next incremental Fetch (session epoch above 0) with an
    /// unknown session id or the wrong epoch: its answer is then the broker's own
    /// FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH.
    pub(crate) fn spoil_next_incremental_fetch(&self, how: SessionSpoiler) {
        self.shared.faults().spoil_next_incremental_fetch = Some(how);
    }

    /// Whether a spoiler set by [`FaultProxy::spoil_next_incremental_fetch`] waits for its
    /// Fetch.
    pub(crate) fn spoil_pending(&self) -> bool {
        self.shared.faults().spoil_next_incremental_fetch.is_some()
    }

    /// Every Fetch request and answer forwarded so far, in the order forwarded (the first
    /// 100,000).
    pub(crate) fn fetches(&self) -> Vec<FetchSeen> {
        self.shared.faults().fetches.clone()
    }

    /// The local ports of every listener (one per upstream broker address seen so far).
    pub(crate) fn ports(&self) -> Vec<u16> {
        let listeners = self
            .shared
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut ports: Vec<u16> = listeners.values().copied().collect();
        ports.sort_unstable();
        ports
    }

    /// Upstream broker address to local port, for every listener.
    pub(crate) fn upstreams(&self) -> HashMap<String, u16> {
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Cuts the next Fetch response of at least [`MIN_CUT_FETCH`] bytes into which `at` falls:
    /// the client gets that response up to `at`, then the connection closes. Once.
    pub(crate) fn cut_next_fetch(&self, at: CutAt) {
        self.shared.faults().cut_next_fetch = Some(at);
    }

    /// Whether a cut armed by [`FaultProxy::cut_next_fetch`] is still waiting for its response.
    pub(crate) fn fetch_cut_pending(&self) -> bool {
        self.shared.faults().cut_next_fetch.is_some()
    }

    /// The cuts [`FaultProxy::cut_next_fetch`] made, in order.
    pub(crate) fn cuts_made(&self) -> Vec<CutMade> {
        self.shared.faults().cuts_made.clone()
    }

    /// Writes every response one byte at a time (a write and a flush per byte), or stops.
    pub(crate) fn set_slices(&self, on: bool) {
        self.shared.faults().slices = on;
    }

    /// Reads and drops every request (on open connections and on new ones, which are still
    /// accepted), and drops answers still coming; or stops doing so.
    pub(crate) fn set_black_hole(&self, on: bool) {
        self.shared.faults().black_hole = on;
    }

    /// [`FaultProxy::set_black_hole`] for the connections to one upstream broker only
    /// (`host:port` as the cluster advertises it; see [`FaultProxy::upstreams`]).
    pub(crate) fn set_black_hole_for(&self, upstream: &str, on: bool) {
        let mut faults = self.shared.faults();
        if on {
            faults.black_holed.insert(upstream.to_owned());
        } else {
            faults.black_holed.remove(upstream);
        }
    }

    /// Cuts responses at random (see [`RandomCuts`]), or stops (`None`).
    pub(crate) fn set_random_cuts(&self, cuts: Option<RandomCuts>) {
        let mut faults = self.shared.faults();
        if let Some(c) = cuts {
            faults.rng = c.seed;
        }
        faults.random = cuts;
        faults.next_random_cut = None;
    }

    /// What the proxy did so far.
    pub(crate) fn counters(&self) -> Counters {
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Counters {
            connections: get(&c.connections),
            bytes_to_brokers: get(&c.bytes_to_brokers),
            bytes_to_clients: get(&c.bytes_to_clients),
            rewritten: get(&c.rewritten),
            rewrite_failures: get(&c.rewrite_failures),
            fetch_cuts: get(&c.fetch_cuts),
            random_cuts: get(&c.random_cuts),
            sliced_responses: get(&c.sliced_responses),
            swallowed_requests: get(&c.swallowed_requests),
            swallowed_responses: get(&c.swallowed_responses),
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The local port forwarding to `upstream`, opening a listener (and its accept task) for a
/// broker address not seen before. Runs on the proxy's runtime.
fn listener_for(shared: &Arc<Shared>, upstream: &str) -> u16 {
    let mut listeners = shared.listeners.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(port) = listeners.get(upstream) {
        return *port;
    }
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a proxy port");
    std_listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let port = std_listener.local_addr().expect("local address").port();
    let listener = TcpListener::from_std(std_listener).expect("tokio listener");
    listeners.insert(upstream.to_owned(), port);
    let shared = shared.clone();
    let upstream = upstream.to_owned();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            add(&shared.counters.connections, 1);
            tokio::spawn(proxy_connection(shared.clone(), client, upstream.clone()));
        }
    });
    port
}

/// (api key, api version) of the requests in flight on one connection, by correlation id.
type InFlight = Arc<Mutex<HashMap<i32, (i16, i16)>>>;

/// Forwards one client connection to `upstream` until either side closes or a fault cuts it.
async fn proxy_connection(shared: Arc<Shared>, client: TcpStream, upstream: String) {
    let Ok(broker) = TcpStream::connect(&upstream).await else {
        return; // The client sees its connection close.
    };
    let _ = client.set_nodelay(true);
    let _ = broker.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (broker_read, broker_write) = broker.into_split();
    let in_flight: InFlight = Arc::default();
    let requests = tokio::spawn(forward_requests(
        shared.clone(),
        client_read,
        broker_write,
        in_flight.clone(),
        upstream.clone(),
    ));
    forward_responses(&shared, broker_read, client_write, &in_flight, &upstream).await;
    // Responses ended (broker closed, client gone, or a cut): close the request side too, so
    // both sockets close now.
    requests.abort();
    let _ = requests.await;
}

/// Reads one frame: `Ok(None)` at a clean end of stream between frames.
async fn read_frame(from: &mut OwnedReadHalf) -> std::io::Result<Option<Vec<u8>>> {
    let mut prefix = [0u8; 4];
    match from.read_exact(&mut prefix).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let size = i32::from_be_bytes(prefix);
    let size = usize::try_from(size)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "negative frame size"))?;
    let mut frame = Vec::with_capacity(4 + size.min(1 << 20));
    frame.extend_from_slice(&prefix);
    let got = (&mut *from)
        .take(size as u64)
        .read_to_end(&mut frame)
        .await?;
    if got < size {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(Some(frame))
}

async fn forward_requests(
    shared: Arc<Shared>,
    mut client: OwnedReadHalf,
    mut broker: OwnedWriteHalf,
    in_flight: InFlight,
    upstream: String,
) {
    while let Ok(Some(mut frame)) = read_frame(&mut client).await {
        if frame.len() >= 8 && i16::from_be_bytes([frame[4], frame[5]]) == ApiKey::FETCH.0 {
            frame = fetch_request(&shared, frame);
        }
        if shared.faults().is_black_hole(&upstream) {
            add(&shared.counters.swallowed_requests, 1);
            continue;
        }
        // Request header: api key, api version, correlation id (the same in every version).
        if frame.len() >= 12 {
            let api_key = i16::from_be_bytes([frame[4], frame[5]]);
            let version = i16::from_be_bytes([frame[6], frame[7]]);
            let correlation_id = i32::from_be_bytes([frame[8], frame[9], frame[10], frame[11]]);
            in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(correlation_id, (api_key, version));
        }
        // Counted before the write: a test reading the counters after its answer sees them.
        add(&shared.counters.bytes_to_brokers, frame.len());
        if broker.write_all(&frame).await.is_err() {
            break;
        }
    }
    let _ = broker.shutdown().await;
}

/// What to do with one response frame.
enum Delivery {
    Whole,
    Sliced,
    /// Deliver this many bytes, then close.
    Cut(usize),
    Drop,
}

async fn forward_responses(
    shared: &Arc<Shared>,
    mut broker: OwnedReadHalf,
    mut client: OwnedWriteHalf,
    in_flight: &InFlight,
    upstream: &str,
) {
    while let Ok(Some(mut frame)) = read_frame(&mut broker).await {
        let correlation_id = match frame.get(4..8) {
            Some(b) => i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            None => return,
        };
        let request = in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&correlation_id);
        if let Some((api_key, version)) = request {
            if api_key == ApiKey::METADATA.0 || api_key == ApiKey::FIND_COORDINATOR.0 {
                match rewrite(shared, api_key, version, &frame) {
                    Some(rewritten) => {
                        add(&shared.counters.rewritten, 1);
                        frame = rewritten;
                    }
                    None => {
                        add(&shared.counters.rewrite_failures, 1);
                        return;
                    }
                }
            }
        }
        let is_fetch = matches!(request, Some((k, _)) if k == ApiKey::FETCH.0);
        if let (true, Some((_, version))) = (is_fetch, request) {
            fetch_response(shared, version, &frame);
        }
        let delivery = decide(shared, upstream, is_fetch, frame.len());
        // Counted before the write: a test reading the counters once it has the response sees
        // them (a cut counts the bytes it delivers).
        let delivered = match delivery {
            Delivery::Drop => 0,
            Delivery::Cut(n) => n,
            Delivery::Whole | Delivery::Sliced => frame.len(),
        };
        add(&shared.counters.bytes_to_clients, delivered);
        let written = match delivery {
            Delivery::Drop => {
                add(&shared.counters.swallowed_responses, 1);
                continue;
            }
            Delivery::Whole => client.write_all(&frame).await,
            Delivery::Sliced => {
                add(&shared.counters.sliced_responses, 1);
                let mut result = Ok(());
                for byte in frame.chunks(1) {
                    result = client.write_all(byte).await;
                    if result.is_ok() {
                        result = client.flush().await;
                    }
                    if result.is_err() {
                        break;
                    }
                }
                result
            }
            Delivery::Cut(n) => {
                let _ = client.write_all(&frame[..n]).await;
                let _ = client.flush().await;
                return;
            }
        };
        if written.is_err() {
            return;
        }
    }
}

/// Records a Fetch request frame and spoils its session fields if asked; returns the frame
/// to forward. A frame that doesn't decode goes on as it is.
fn fetch_request(shared: &Shared, frame: Vec<u8>) -> Vec<u8> {
    let version = i16::from_be_bytes([frame[6], frame[7]]);
    let header_version = FetchRequest::request_header_version(version);
    let mut body = Bytes::copy_from_slice(&frame[4..]);
    let Ok(header) = RequestHeader::decode(&mut body, header_version) else {
        return frame;
    };
    let Ok(mut request) = kseek_protocol::decode_exact::<FetchRequest>(body, version) else {
        return frame;
    };
    let mut faults = shared.faults();
    let spoiler = faults
        .spoil_next_incremental_fetch
        .filter(|_| version >= 7 && request.session_epoch > 0);
    let mut out = frame;
    if let Some(how) = spoiler {
        faults.spoil_next_incremental_fetch = None;
        match how {
            SessionSpoiler::UnknownId => request.session_id ^= 0x2a2a_2a2a,
            SessionSpoiler::WrongEpoch => request.session_epoch += 1,
        }
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[0; 4]);
        let encoded = header
            .encode(&mut buf, header_version)
            .and_then(|()| request.encode(&mut buf, version));
        if encoded.is_ok() {
            let size = (buf.len() - 4) as u32;
            buf[..4].copy_from_slice(&size.to_be_bytes());
            out = buf.to_vec();
        }
    }
    if faults.fetches.len() >= MAX_FETCHES_SEEN {
        return out;
    }
    faults.fetches.push(FetchSeen::Request {
        frame_len: out.len(),
        session_id: request.session_id,
        session_epoch: request.session_epoch,
        partitions: request.topics.iter().map(|t| t.partitions.len()).sum(),
        forgotten: request
            .forgotten_topics_data
            .iter()
            .map(|t| t.partitions.len())
            .sum(),
        spoiled: spoiler.is_some(),
    });
    out
}

/// Records a Fetch response frame (answering a request at `version`): its top-level error
/// code and session id (v7+).
fn fetch_response(shared: &Shared, version: i16, frame: &[u8]) {
    let header_version = FetchRequest::response_header_version(version);
    let mut body = Bytes::copy_from_slice(frame.get(4..).unwrap_or_default());
    if ResponseHeader::decode(&mut body, header_version).is_err() || version < 7 {
        return;
    }
    // throttle_time_ms, error_code, session_id: fixed fields at the start of v7+ bodies.
    let Some(b) = body.get(..10) else { return };
    let seen = FetchSeen::Response {
        frame_len: frame.len(),
        error_code: i16::from_be_bytes([b[4], b[5]]),
        session_id: i32::from_be_bytes([b[6], b[7], b[8], b[9]]),
    };
    let mut faults = shared.faults();
    if faults.fetches.len() < MAX_FETCHES_SEEN {
        faults.fetches.push(seen);
    }
}

/// The delivery of a response frame of `len` bytes, under the faults now set.
fn decide(shared: &Shared, upstream: &str, is_fetch: bool, len: usize) -> Delivery {
    let mut faults = shared.faults();
    if faults.is_black_hole(upstream) {
        return Delivery::Drop;
    }
    if is_fetch && len >= MIN_CUT_FETCH {
        if let Some(at) = faults.cut_next_fetch {
            if let Some(n) = at.position(len) {
                faults.cut_next_fetch = None;
                faults.cuts_made.push(CutMade {
                    delivered: n,
                    frame_len: len,
                });
                add(&shared.counters.fetch_cuts, 1);
                return Delivery::Cut(n);
            }
        }
    }
    if let Some(random) = faults.random {
        let now = Instant::now();
        let allowed = faults.next_random_cut.is_none_or(|t| now >= t);
        // Draw on every response, allowed or not, so the sequence depends on the traffic only.
        let draw = faults.next_u64();
        let pos = faults.next_u64() as usize % len;
        let hit = (draw >> 11) as f64 / (1u64 << 53) as f64 <= random.probability;
        if allowed && hit {
            faults.next_random_cut = Some(now + random.min_gap);
            add(&shared.counters.random_cuts, 1);
            return Delivery::Cut(pos);
        }
    }
    if faults.slices {
        Delivery::Sliced
    } else {
        Delivery::Whole
    }
}

/// The frame of a Metadata or FindCoordinator response with every broker address replaced by
/// this proxy's listener for that broker; `None` if it doesn't decode at `version`.
fn rewrite(shared: &Arc<Shared>, api_key: i16, version: i16, frame: &[u8]) -> Option<Vec<u8>> {
    let mut body = Bytes::copy_from_slice(&frame[4..]);
    let mut out = BytesMut::new();
    out.extend_from_slice(&[0; 4]);
    let local = |host: &mut String, port: &mut i32| {
        let port_here = listener_for(shared, &format!("{host}:{port}"));
        *host = "127.0.0.1".to_owned();
        *port = i32::from(port_here);
    };
    if api_key == ApiKey::METADATA.0 {
        let header_version = MetadataRequest::response_header_version(version);
        let header = ResponseHeader::decode(&mut body, header_version).ok()?;
        let mut response: MetadataResponse = kseek_protocol::decode_exact(body, version).ok()?;
        for b in &mut response.brokers {
            local(&mut b.host, &mut b.port);
        }
        header.encode(&mut out, header_version).ok()?;
        response.encode(&mut out, version).ok()?;
    } else {
        let header_version = FindCoordinatorRequest::response_header_version(version);
        let header = ResponseHeader::decode(&mut body, header_version).ok()?;
        let mut response: FindCoordinatorResponse =
            kseek_protocol::decode_exact(body, version).ok()?;
        if response.node_id >= 0 && !response.host.is_empty() {
            local(&mut response.host, &mut response.port);
        }
        for c in &mut response.coordinators {
            if c.node_id >= 0 && !c.host.is_empty() {
                local(&mut c.host, &mut c.port);
            }
        }
        header.encode(&mut out, header_version).ok()?;
        response.encode(&mut out, version).ok()?;
    }
    let len = i32::try_from(out.len() - 4).ok()?;
    out[..4].copy_from_slice(&len.to_be_bytes());
    Some(out.to_vec())
}

//! The [`Client`]: bootstrap, the topic metadata cache, and one lazily opened connection per
//! broker.
//!
//! A [`Client`] starts from a list of `host:port` bootstrap servers and learns the rest of the
//! cluster from Metadata. Metadata is fetched only for the topics in use and cached per topic;
//! a topic's entry is refreshed when it is older than [`ClientConfig::metadata_max_age`] or
//! after something marked it stale (NOT_LEADER_OR_FOLLOWER, a closed connection, ...).
//! Connections to brokers are opened on first use, shared by every request to that broker,
//! and reopened when they have closed.
//!
//! Retriable failures (see [`Error::is_retriable`](crate::Error::is_retriable)) are retried with exponential backoff until
//! [`ClientConfig::retry_deadline`]; the final error says what was being done
//! ([`ErrorKind::RetriesExhausted`]). A topic that does not exist is retriable for that long too,
//! because a topic created a moment ago is unknown to some brokers for a short while.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_partitioning> (bootstrap, Metadata),
//! docs/reading-by-time.md point 9.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use kseek_protocol::messages::metadata::{MetadataRequest, MetadataResponse};
use kseek_protocol::{ApiKey, ErrorCode};
use tokio::time::Instant;

use crate::backoff::{Backoff, Failing};
use crate::cluster::{cluster_from_response, partitions_of, ClusterMetadata, TopicMetadata};
use crate::conn::{Connection, ConnectionConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::few::{self, FewMap};
use crate::task::BoxFuture;

/// Settings of a [`Client`]. [`ClientConfig::new`] and the builder-style setters make one (new
/// fields may be added, so it can't be built as a struct literal):
///
/// ```
/// use std::time::Duration;
/// use kseek::ClientConfig;
///
/// let config = ClientConfig::new(["kafka-1:9092", "kafka-2:9092"])
///     .connect_timeout(Duration::from_secs(3))
///     .request_timeout(Duration::from_secs(10))
///     .retry_deadline(Duration::from_secs(60));
/// assert_eq!(config.connection.connect_timeout, Duration::from_secs(3));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// `host:port` of brokers to learn the cluster from; tried in order until one answers.
    /// An entry may be a comma-separated list (Kafka's `bootstrap.servers` form).
    pub bootstrap: Vec<String>,
    /// Settings of every broker connection.
    pub connection: ConnectionConfig,
    /// Cached topic metadata older than this is fetched again before use (default 5 min).
    pub metadata_max_age: Duration,
    /// The first wait before retrying a retriable error; doubled after each try up to
    /// [`ClientConfig::retry_backoff_max`] (default 100 ms).
    pub retry_backoff: Duration,
    /// The longest wait between two tries (default 1 s).
    pub retry_backoff_max: Duration,
    /// Retriable errors are retried until this much time has passed since the first try
    /// (default 30 s).
    pub retry_deadline: Duration,
    /// How long a topic that doesn't exist is waited for (it may have just been created, and
    /// not every broker knows it yet) before it is [`ErrorKind::UnknownTopic`] (default 30 s; at
    /// most [`ClientConfig::retry_deadline`]). A command line wants it short: a mistyped name
    /// should be reported while the user waits.
    pub missing_topic_wait: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            bootstrap: Vec::new(),
            connection: ConnectionConfig::default(),
            metadata_max_age: Duration::from_secs(5 * 60),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(1),
            retry_deadline: Duration::from_secs(30),
            missing_topic_wait: Duration::from_secs(30),
        }
    }
}

impl ClientConfig {
    /// The retry schedule of [`ClientConfig::retry_backoff`],
    /// [`ClientConfig::retry_backoff_max`] and [`ClientConfig::retry_deadline`].
    pub(crate) fn backoff(&self) -> Backoff {
        Backoff::new(
            self.retry_backoff,
            self.retry_backoff_max,
            self.retry_deadline,
        )
    }

    /// The defaults, with these bootstrap servers.
    pub fn new(bootstrap: impl IntoIterator<Item = impl Into<String>>) -> Self {
        ClientConfig {
            bootstrap: bootstrap.into_iter().map(Into::into).collect(),
            ..ClientConfig::default()
        }
    }

    /// Sets [`ClientConfig::bootstrap`].
    pub fn bootstrap(mut self, bootstrap: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.bootstrap = bootstrap.into_iter().map(Into::into).collect();
        self
    }

    /// Sets [`ClientConfig::connection`], the settings of every broker connection.
    pub fn connection(mut self, connection: ConnectionConfig) -> Self {
        self.connection = connection;
        self
    }

    /// How long opening a TCP connection to a broker may take (default 10 s): sets the
    /// connection's [`ConnectionConfig::connect_timeout`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connection.connect_timeout = timeout;
        self
    }

    /// How long a request may wait for its answer (default 30 s), the first one (ApiVersions,
    /// to a server that accepts and never answers) included: sets the connection's
    /// [`ConnectionConfig::request_timeout`]. A read's max wait is kept below half of it.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.connection.request_timeout = timeout;
        self
    }

    /// Sets [`ClientConfig::metadata_max_age`].
    pub fn metadata_max_age(mut self, age: Duration) -> Self {
        self.metadata_max_age = age;
        self
    }

    /// Sets [`ClientConfig::retry_backoff`].
    pub fn retry_backoff(mut self, wait: Duration) -> Self {
        self.retry_backoff = wait;
        self
    }

    /// Sets [`ClientConfig::retry_backoff_max`].
    pub fn retry_backoff_max(mut self, wait: Duration) -> Self {
        self.retry_backoff_max = wait;
        self
    }

    /// Sets [`ClientConfig::retry_deadline`].
    pub fn retry_deadline(mut self, deadline: Duration) -> Self {
        self.retry_deadline = deadline;
        self
    }

    /// Sets [`ClientConfig::missing_topic_wait`].
    pub fn missing_topic_wait(mut self, wait: Duration) -> Self {
        self.missing_topic_wait = wait;
        self
    }
}

/// A connection to a Kafka cluster. Cheap to clone: clones share the metadata cache and the
/// broker connections.
///
/// ```no_run
/// # async fn example() -> kseek::Result<()> {
/// let client = kseek::Client::connect(["localhost:9092"]).await?;
/// let topics = client.metadata(&["events"]).await?;
/// println!("{} has {} partitions", topics[0].name, topics[0].partitions.len());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("bootstrap", &self.inner.config.bootstrap)
            .finish_non_exhaustive()
    }
}

/// A broker's connection, once opened; locked while it is being opened.
type ConnectionSlot = Arc<tokio::sync::Mutex<Option<Arc<Connection>>>>;

struct Inner {
    config: ClientConfig,
    state: Mutex<State>,
    /// One slot per broker id; the async lock is held while that broker is being connected
    /// to, so concurrent callers wait for one connect instead of opening several.
    connections: Mutex<FewMap<i32, ConnectionSlot>>,
    /// The connection used for Metadata before any broker connection exists.
    bootstrap: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

#[derive(Default)]
struct State {
    /// Node id to `host:port`, from the latest Metadata answer.
    brokers: FewMap<i32, String>,
    /// Cached topics, by name.
    topics: TopicCache,
    /// Group coordinators found by FindCoordinator, by group id (see `group.rs`).
    #[cfg(feature = "group")]
    coordinators: FewMap<String, i32>,
}

impl State {
    /// Replaces the broker list with `brokers` (node id, host, port) unless it is empty (an
    /// answer that names no broker says nothing about them).
    fn learn_brokers<'a>(&mut self, brokers: impl ExactSizeIterator<Item = (i32, &'a str, i32)>) {
        if brokers.len() > 0 {
            self.brokers = brokers
                .map(|(id, host, port)| (id, format!("{host}:{port}")))
                .collect();
        }
    }
}

struct CachedTopic {
    metadata: TopicMetadata,
    fetched_at: Instant,
    stale: bool,
}

impl CachedTopic {
    /// `metadata` as just fetched, at `now`.
    fn new(metadata: TopicMetadata, now: Instant) -> Self {
        CachedTopic {
            metadata,
            fetched_at: now,
            stale: false,
        }
    }
}

/// The cached topics in a `Vec` sorted by name, found by binary search: a reader of thousands
/// of topics looks each up in a few steps, without a hash map's code in the binary.
#[derive(Default)]
struct TopicCache(Vec<CachedTopic>);

impl TopicCache {
    /// Where `name` is, or would be put.
    fn search(&self, name: &str) -> std::result::Result<usize, usize> {
        search(&self.0, name)
    }

    fn get(&self, name: &str) -> Option<&CachedTopic> {
        self.search(name).ok().map(|at| &self.0[at])
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut CachedTopic> {
        let at = self.search(name).ok()?;
        Some(&mut self.0[at])
    }

    fn remove(&mut self, name: &str) {
        if let Ok(at) = self.search(name) {
            self.0.remove(at);
        }
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut CachedTopic> {
        self.0.iter_mut()
    }

    /// Puts in `fresh`, replacing the entries of the same names. New names are appended, then
    /// the whole is sorted once: a Metadata answer for thousands of new topics, listed in the
    /// broker's hash order, costs one sort rather than a shift of the cache per topic.
    fn insert_all(&mut self, fresh: Vec<CachedTopic>) {
        let known = self.0.len();
        for topic in fresh {
            match search(&self.0[..known], &topic.metadata.name) {
                Ok(at) => self.0[at] = topic,
                Err(_) => self.0.push(topic),
            }
        }
        if self.0.len() > known {
            few::sort_by(&mut self.0, |a, b| a.metadata.name < b.metadata.name);
            // A name listed twice in one answer is kept once.
            self.0.dedup_by(|a, b| a.metadata.name == b.metadata.name);
        }
    }
}

/// Where `name` is in `topics` (sorted by name), or would be put: one binary search for
/// the lookups and the merge of fresh topics alike.
fn search(topics: &[CachedTopic], name: &str) -> std::result::Result<usize, usize> {
    topics.binary_search_by(|c| c.metadata.name.as_str().cmp(name))
}

impl Client {
    /// Connects to the cluster through the first of `bootstrap` (`host:port`) that answers,
    /// with the default [`ClientConfig`].
    ///
    /// # Errors
    /// [`ErrorKind::Bootstrap`] when none answers.
    pub async fn connect(bootstrap: impl IntoIterator<Item = impl Into<String>>) -> Result<Client> {
        Client::with_config(ClientConfig::new(bootstrap)).await
    }

    /// Connects with `config`: tries each bootstrap server in order until one answers
    /// ApiVersions and Metadata, and learns the cluster's brokers from it. An entry may
    /// itself be a comma-separated list, as in Kafka's `bootstrap.servers`.
    ///
    /// # Errors
    /// [`ErrorKind::Bootstrap`] when none answers, [`ErrorKind::NoBootstrapServers`] for an empty list.
    pub async fn with_config(mut config: ClientConfig) -> Result<Client> {
        // Accept Kafka's `bootstrap.servers` form too: "host:port,host:port".
        config.bootstrap = config
            .bootstrap
            .iter()
            .flat_map(|b| b.split(','))
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(str::to_owned)
            .collect();
        if config.bootstrap.is_empty() {
            return Err(ErrorKind::NoBootstrapServers.into());
        }
        let client = Client {
            inner: Arc::new(Inner {
                config,
                state: Mutex::new(State::default()),
                connections: Mutex::new(FewMap::new()),
                bootstrap: tokio::sync::Mutex::new(None),
            }),
        };
        // Learn the brokers from the first server that answers ApiVersions and Metadata: one
        // that accepts the connection and then closes it goes on to the next, like one that
        // refuses it.
        let mut last = None;
        for address in &client.inner.config.bootstrap {
            match client.learn_cluster_from(address).await {
                Ok(()) => return Ok(client),
                // Credentials or a certificate refused by one broker are refused by all.
                Err(e) if !e.is_retriable() => return Err(e),
                Err(e) => {
                    crate::log::debug!(broker = %address, error = %e, "bootstrap server did not answer");
                    last = Some(e);
                }
            }
        }
        Err(none_answered(client.inner.config.bootstrap.clone(), last))
    }

    /// Connects to bootstrap server `address` and learns the brokers from its answer to a
    /// Metadata request naming no topic; the connection stays open for later Metadata.
    #[inline(never)]
    fn learn_cluster_from<'a>(&'a self, address: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let conn = self.open(address).await?;
            *self.inner.bootstrap.lock().await = Some(conn);
            // The Metadata goes to the bootstrap connection just opened.
            self.refresh(&[], &[]).await.map(drop)
        })
    }

    /// Opens a connection to `address` (one copy of the connection setup for every caller).
    #[inline(never)]
    fn open<'a>(&'a self, address: &'a str) -> BoxFuture<'a, Result<Arc<Connection>>> {
        Box::pin(async move {
            let config = self.inner.config.connection.clone();
            Connection::open(address, config).await.map(Arc::new)
        })
    }

    /// The client's settings.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// Metadata for `topics`, in the order given: from the cache when every topic is there,
    /// fresh and not marked stale, else fetched. Retriable failures (a topic just created, a
    /// leader election) are retried until [`ClientConfig::retry_deadline`].
    ///
    /// # Errors
    /// [`ErrorKind::RetriesExhausted`] wrapping [`ErrorKind::UnknownTopic`] for a topic that still
    /// doesn't exist at the deadline; other errors as they come.
    pub async fn metadata(&self, topics: &[impl AsRef<str>]) -> Result<Vec<TopicMetadata>> {
        // Owned once here: the request and the cache keep the names.
        let topics: Vec<String> = topics.iter().map(|t| t.as_ref().to_owned()).collect();
        self.retry(&format!("fetching metadata for topics {topics:?}"), || {
            self.metadata_once(&topics)
        })
        .await
    }

    /// The brokers, the controller and every topic of the cluster, from one Metadata request
    /// for all topics (retried on retriable failures until [`ClientConfig::retry_deadline`]).
    /// The answer also refreshes the broker list and the cached metadata of every topic in it.
    ///
    /// ```no_run
    /// # async fn example(client: kseek::Client) -> kseek::Result<()> {
    /// let cluster = client.cluster_metadata().await?;
    /// for t in &cluster.topics {
    ///     println!("{}: {} partitions", t.name, t.partitions.len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # References
    /// <https://kafka.apache.org/protocol#The_Messages_Metadata> (a null topic list asks for
    /// every topic).
    pub async fn cluster_metadata(&self) -> Result<ClusterMetadata> {
        self.retry("fetching metadata for every topic", || async {
            let conn = self.any_connection(&[], None).await?;
            let response = conn.send(&MetadataRequest::all_topics()).await?;
            let cluster = cluster_from_response(response);
            let now = Instant::now();
            let mut state = self.state();
            let brokers = &cluster.brokers;
            state.learn_brokers(brokers.iter().map(|b| (b.node_id, &*b.host, b.port)));
            let fresh = cluster.topics.iter().cloned();
            state
                .topics
                .insert_all(fresh.map(|t| CachedTopic::new(t, now)).collect());
            Ok(cluster)
        })
        .await
    }

    /// [`Client::metadata`] without retries: the cache if fresh, else one Metadata request.
    #[inline(never)]
    pub(crate) fn metadata_once<'a>(
        &'a self,
        topics: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<TopicMetadata>>> {
        match self.cached(topics) {
            Some(cached) => Box::pin(std::future::ready(Ok(cached))),
            None => self.refresh(topics, &[]),
        }
    }

    /// The cached metadata of `topics` if all are cached, fresh and not stale.
    pub(crate) fn cached(&self, topics: &[String]) -> Option<Vec<TopicMetadata>> {
        let max_age = self.inner.config.metadata_max_age;
        let state = self.state();
        // Plain loops, here and at the end of `apply_metadata`: collecting into an `Option` or
        // `Result` of a `Vec` compiles an adapter and its own collect for each.
        let mut found = Vec::with_capacity(topics.len());
        for t in topics {
            let c = state.topics.get(t)?;
            if c.stale || c.fetched_at.elapsed() >= max_age {
                return None;
            }
            found.push(c.metadata.clone());
        }
        Some(found)
    }

    /// Fetches metadata for `topics` (one request, no retries), updating the broker list and
    /// the cache. With no topics, only the broker list is updated. Asks on an open connection to a
    /// broker not in `avoid` (leaders whose Fetches went unanswered: a frozen broker would hold
    /// the request to its timeout) if there is one.
    ///
    /// A broker can freeze before anything marks it a suspect (a stopped process, a link that
    /// drops every packet). So when the answer has not come after [`METADATA_HEDGE_AFTER`],
    /// the same request also goes to another broker, and the first answer wins; the other
    /// request is dropped (connections are cancellation-safe). A hedge that finds no other
    /// broker, or fails, leaves the first request to its answer or its timeout.
    #[inline(never)]
    pub(crate) fn refresh<'a>(
        &'a self,
        topics: &'a [String],
        avoid: &'a [i32],
    ) -> BoxFuture<'a, Result<Vec<TopicMetadata>>> {
        Box::pin(async move {
            let conn = self.any_connection(avoid, None).await?;
            let request = MetadataRequest::for_topics(topics.iter().cloned());
            let mut first = std::pin::pin!(conn.send(&request));
            let mut delay = std::pin::pin!(tokio::time::sleep(METADATA_HEDGE_AFTER));
            let mut hedge = None;
            let mut hedged = false;
            let (via, response) = std::future::poll_fn(|cx| {
                if let Poll::Ready(r) = first.as_mut().poll(cx) {
                    return Poll::Ready(r.map(|response| (conn.clone(), response)));
                }
                if !hedged && delay.as_mut().poll(cx).is_ready() {
                    hedged = true;
                    hedge = Some(self.metadata_elsewhere(&conn, avoid, &request));
                }
                if let Some(h) = hedge.as_mut() {
                    if let Poll::Ready(answer) = h.as_mut().poll(cx) {
                        hedge = None;
                        if let Some(answer) = answer {
                            return Poll::Ready(Ok(answer));
                        }
                    }
                }
                Poll::Pending
            })
            .await?;
            self.apply_metadata(via.broker(), topics, response)
        })
    }

    /// The hedge of [`Client::refresh`]: `request` on a connection to a broker other than
    /// `asked`'s and those of `avoid`, or `None` if there is none or it fails too.
    #[inline(never)]
    fn metadata_elsewhere<'a>(
        &'a self,
        asked: &'a Connection,
        avoid: &'a [i32],
        request: &'a MetadataRequest,
    ) -> BoxFuture<'a, Option<(Arc<Connection>, MetadataResponse)>> {
        Box::pin(async move {
            let other = self
                .any_connection(avoid, Some(asked.broker()))
                .await
                .ok()?;
            if other.broker() == asked.broker() {
                return None;
            }
            crate::log::debug!(slow = %asked.broker(), hedge = %other.broker(), "Metadata asked of a second broker");
            let response = other.send(request).await.ok()?;
            Some((other, response))
        })
    }

    fn apply_metadata(
        &self,
        broker: &str,
        topics: &[String],
        response: MetadataResponse,
    ) -> Result<Vec<TopicMetadata>> {
        let now = Instant::now();
        let mut state = self.state();
        let brokers = &response.brokers;
        state.learn_brokers(brokers.iter().map(|b| (b.node_id, &*b.host, b.port)));
        let mut first_error = None;
        let mut fresh = Vec::with_capacity(response.topics.len());
        for topic in response.topics {
            let Some(name) = topic.name else { continue };
            let code = ErrorCode(topic.error_code);
            let error = if code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                || (code.is_ok() && topic.partitions.is_empty())
            {
                Some(ErrorKind::UnknownTopic {
                    topic: name.clone(),
                    broker: broker.to_owned(),
                })
            } else if !code.is_ok() {
                Some(ErrorKind::Broker {
                    broker: broker.to_owned(),
                    api: ApiKey::METADATA,
                    code,
                    message: Some(format!("for topic {name:?}")),
                })
            } else {
                None
            };
            if let Some(error) = error {
                state.topics.remove(&name);
                first_error.get_or_insert(error);
                continue;
            }
            let partitions = partitions_of(&topic.partitions);
            let metadata = TopicMetadata {
                name,
                topic_id: topic.topic_id,
                partitions,
            };
            fresh.push(CachedTopic::new(metadata, now));
        }
        state.topics.insert_all(fresh);
        if let Some(error) = first_error {
            return Err(error.into());
        }
        let mut found = Vec::with_capacity(topics.len());
        for t in topics {
            let Some(c) = state.topics.get(t) else {
                return Err(ErrorKind::UnknownTopic {
                    topic: t.clone(),
                    broker: broker.to_owned(),
                }
                .into());
            };
            found.push(c.metadata.clone());
        }
        Ok(found)
    }

    /// The connection to broker `broker_id`: opened on first use, then reused; reopened when
    /// it has closed.
    #[inline(never)]
    pub(crate) fn connection(&self, broker_id: i32) -> BoxFuture<'_, Result<Arc<Connection>>> {
        Box::pin(async move {
            let slot = {
                let mut connections = self
                    .inner
                    .connections
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                connections
                    .get_or_insert_with(broker_id, ConnectionSlot::default)
                    .clone()
            };
            let mut slot = slot.lock().await;
            if let Some(conn) = slot.as_ref() {
                if conn.closed_reason().is_none() {
                    return Ok(conn.clone());
                }
            }
            let address = self.state().brokers.get(&broker_id).cloned();
            let Some(address) = address else {
                return Err(ErrorKind::UnknownBroker { broker_id }.into());
            };
            let conn = self.open(&address).await?;
            *slot = Some(conn.clone());
            Ok(conn)
        })
    }

    /// The leader's node id and epoch of `topic`/`partition`, from (fresh) metadata.
    pub(crate) async fn leader(&self, topic: &str, partition: i32) -> Result<(i32, i32)> {
        let topics = self.metadata_once(&[topic.to_owned()]).await?;
        let Some(t) = topics.first() else {
            return Err(ErrorKind::UnknownTopic {
                topic: topic.to_owned(),
                broker: String::new(),
            }
            .into());
        };
        let Some(p) = t.partition(partition) else {
            return Err(ErrorKind::UnknownPartition {
                topic: topic.to_owned(),
                partition,
                partitions: t.partitions.len(),
            }
            .into());
        };
        if p.leader_id < 0 {
            return Err(ErrorKind::LeaderNotAvailable {
                topic: topic.to_owned(),
                partition,
            }
            .into());
        }
        Ok((p.leader_id, p.leader_epoch))
    }

    /// Marks `topic`'s metadata stale, so the next use fetches it again (after
    /// NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH and the like).
    pub(crate) fn invalidate(&self, topic: &str) {
        if let Some(c) = self.state().topics.get_mut(topic) {
            c.stale = true;
        }
    }

    /// Marks every cached topic stale and forgets the group coordinators.
    pub(crate) fn invalidate_all(&self) {
        let mut state = self.state();
        for c in state.topics.values_mut() {
            c.stale = true;
        }
        #[cfg(feature = "group")]
        state.coordinators.clear();
    }

    /// Runs `f` until it succeeds, fails with an error that is not retriable, or
    /// [`ClientConfig::retry_deadline`] has passed since the first try. Between tries, cached
    /// metadata is marked stale and the wait doubles from [`ClientConfig::retry_backoff`] up
    /// to [`ClientConfig::retry_backoff_max`].
    ///
    /// # Errors
    /// A non-retriable error as `f` returned it; [`ErrorKind::RetriesExhausted`] naming `what`
    /// with the last error at the deadline.
    pub(crate) async fn retry<T, F, Fut>(&self, what: &str, mut f: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let backoff = self.inner.config.backoff();
        // Counted from the first try, so a slow first failure counts against the deadline.
        let mut failing = Some(Failing {
            since: Instant::now(),
            failures: 0,
        });
        loop {
            let error = match f().await {
                Ok(value) => return Ok(value),
                Err(e) if e.is_retriable() => e,
                Err(e) => return Err(e),
            };
            let now = Instant::now();
            let missing_for_too_long = matches!(error.kind(), ErrorKind::UnknownTopic { .. })
                && failing.as_ref().is_some_and(|f| {
                    now.saturating_duration_since(f.since) >= self.inner.config.missing_topic_wait
                });
            let wait = match backoff.fail(&mut failing, now) {
                Ok(_) if missing_for_too_long => {
                    let f = failing.expect("a failure was just counted");
                    return Err(ErrorKind::RetriesExhausted {
                        what: what.to_owned(),
                        attempts: f.failures,
                        elapsed: f.since.elapsed(),
                        source: error,
                    }
                    .into());
                }
                // A missing topic is looked for again at its own deadline at the latest.
                Ok(wait) if matches!(error.kind(), ErrorKind::UnknownTopic { .. }) => {
                    let since = failing.as_ref().map_or(now, |f| f.since);
                    let left = (since + self.inner.config.missing_topic_wait)
                        .saturating_duration_since(now);
                    wait.min(left)
                }
                Ok(wait) => wait,
                Err(Failing { since, failures }) => {
                    return Err(ErrorKind::RetriesExhausted {
                        what: what.to_owned(),
                        attempts: failures,
                        elapsed: since.elapsed(),
                        source: error,
                    }
                    .into())
                }
            };
            crate::log::debug!(what, ?wait, %error, "retrying");
            self.invalidate_all();
            tokio::time::sleep(wait).await;
        }
    }

    /// Any open connection, for Metadata: an existing connection to a broker not in `avoid`,
    /// else the bootstrap connection if it is not to one of them, else a new connection to a
    /// bootstrap server or a known broker (those of `avoid` last).
    #[inline(never)]
    pub(crate) fn any_connection<'a>(
        &'a self,
        avoid: &'a [i32],
        avoid_address: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Arc<Connection>>> {
        Box::pin(async move {
            let open: Vec<_> = {
                let connections = self
                    .inner
                    .connections
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let open = connections.iter().filter(|(id, _)| !avoid.contains(id));
                open.map(|(_, slot)| slot.clone()).collect()
            };
            let alive = |c: &&Arc<Connection>| {
                c.closed_reason().is_none() && Some(c.broker()) != avoid_address
            };
            for slot in open {
                if let Ok(slot) = slot.try_lock() {
                    if let Some(conn) = slot.as_ref().filter(alive) {
                        return Ok(conn.clone());
                    }
                }
            }
            // The bootstrap connection, and the servers to open one to: not those of `avoid`
            // (their addresses as the metadata names them) or `avoid_address`, unless nothing
            // else answers.
            let avoided = |address: &str| {
                let state = self.state();
                Some(address) == avoid_address
                    || avoid
                        .iter()
                        .any(|id| state.brokers.get(id).is_some_and(|a| a == address))
            };
            let mut bootstrap = self.inner.bootstrap.lock().await;
            let usable = |c: &&Arc<Connection>| c.closed_reason().is_none() && !avoided(c.broker());
            if let Some(conn) = bootstrap.as_ref().filter(usable) {
                return Ok(conn.clone());
            }
            // Bootstrap servers first, then the brokers the metadata named.
            let mut candidates = self.inner.config.bootstrap.clone();
            let mut known: Vec<_> = self.state().brokers.values().cloned().collect();
            few::sort(&mut known);
            candidates.extend(
                known
                    .into_iter()
                    .filter(|b| !self.inner.config.bootstrap.contains(b)),
            );
            let (mut candidates, suspects): (Vec<_>, Vec<_>) =
                candidates.into_iter().partition(|a| !avoided(a));
            candidates.extend(suspects);
            let mut last = None;
            for address in &candidates {
                match self.open(address).await {
                    Ok(conn) => {
                        *bootstrap = Some(conn.clone());
                        return Ok(conn);
                    }
                    // Credentials or a certificate refused by one broker are refused by
                    // all: one attempt, no retry storm.
                    Err(e) if !e.is_retriable() => return Err(e),
                    Err(e) => {
                        crate::log::debug!(broker = %address, error = %e, "bootstrap server did not answer");
                        last = Some(e);
                    }
                }
            }
            Err(none_answered(candidates, last))
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Plain data: a panic elsewhere while holding the lock leaves it usable.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How long a Metadata request waits for its answer before the same request also goes to
/// another broker (see [`Client::refresh`]).
pub(crate) const METADATA_HEDGE_AFTER: Duration = Duration::from_secs(1);

/// [`ErrorKind::Bootstrap`]: none of `servers` answered, the last with `last`.
#[cold]
#[inline(never)]
fn none_answered(servers: Vec<String>, last: Option<Error>) -> Error {
    ErrorKind::Bootstrap {
        servers,
        source: last.unwrap_or_else(|| ErrorKind::NoBootstrapServers.into()),
    }
    .into()
}

/// The coordinator cache and the brokers FindCoordinator names (see `group.rs`).
#[cfg(feature = "group")]
impl Client {
    /// The cached coordinator of `group`, if any (see `group.rs`).
    pub(crate) fn cached_coordinator(&self, group: &str) -> Option<i32> {
        self.state().coordinators.get(group).copied()
    }

    /// Remembers `broker_id` as the coordinator of `group`.
    pub(crate) fn set_coordinator(&self, group: &str, broker_id: i32) {
        self.state()
            .coordinators
            .insert(group.to_owned(), broker_id);
    }

    /// Forgets the coordinator of `group` (after NOT_COORDINATOR and the like).
    pub(crate) fn forget_coordinator(&self, group: &str) {
        self.state().coordinators.remove(group);
    }

    /// Records `address` as broker `broker_id` (FindCoordinator names brokers too).
    pub(crate) fn learn_broker(&self, broker_id: i32, address: String) {
        self.state()
            .brokers
            .get_or_insert_with(broker_id, || address);
    }
}

#[cfg(test)]
mod tests;

//! The read engine as a pure state machine, in the style of quinn-proto: it knows what a read
//! has to do, never how requests travel.
//!
//! [`ReadMachine`] is fed the time and the answers to what it asked for, and says what to do
//! next:
//!
//! - [`ReadMachine::poll_transmit`]: the next request to send ([`Transmit`]): Metadata,
//!   a Fetch to one leader, a ListOffsets for a log start, or marking a topic's cached
//!   metadata stale. Each request carries an id; its answer comes back through
//!   [`ReadMachine::handle_metadata`], [`ReadMachine::handle_fetch`] or
//!   [`ReadMachine::handle_list_offsets`] with that id.
//! - [`ReadMachine::poll_output`]: what the stream hands out ([`Output`]): batches and the
//!   position after them, data loss, partitions found by discovery, the error that ends the
//!   read.
//! - [`ReadMachine::poll_timeout`]: when to wake it with [`ReadMachine::handle_timeout`]
//!   (a backoff ends, partition discovery is due).
//! - [`ReadMachine::is_finished`]: the read is over (every partition done, or failed), once
//!   the outputs are taken.
//!
//! The contract with whoever drives it (the async driver, or a simulated cluster in tests):
//! answer every Metadata, Fetch and ListEarliest exactly once, in any order, with its id;
//! apply Invalidate before making the next request; pass a `now` that never goes back; after
//! every input, take the outputs and the transmits until both are `None`, then wait for an
//! answer or [`ReadMachine::poll_timeout`], whichever comes first, or, while
//! [`ReadMachine::is_waiting_for_room`], for the caller to take batches (then report the
//! bytes taken with [`ReadMachine::handle_taken`]). Answers to requests the
//! machine no longer waits for (unknown ids, after a failure) are ignored.
//!
//! It owns per-partition positions and ends, retries with the client's [`Backoff`] until the
//! retry deadline, asks for metadata to be invalidated after errors that mean the leader
//! moved, applies the [`OutOfRange`] policy and discovers partitions of unbounded reads.
//! It fetches ahead within [`ReadOptions::max_buffered_bytes`]: the record bytes of its
//! outputs the caller has not taken yet ([`ReadMachine::buffered_bytes`]); while they reach
//! the bound it asks for no Metadata for Fetches and starts no Fetch.
//! One Fetch is in flight per leader at a time, in a fetch session with that leader
//! (KIP-227) unless [`ReadOptions::fetch_sessions`] is off: [`Transmit::Fetch`] names every
//! partition the session is to hold, marks those the broker holds as they are
//! ([`Requested::unchanged`]: [`build_fetch`] leaves them out) and lists the ones to forget.
//! It has no clock, no sockets and no async runtime: the async driver (`driver.rs`) runs it
//! against real connections, and tests run it against hand-made answers with a virtual
//! clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kseek_protocol::messages::fetch::{
    FetchPartition, FetchRequest, FetchResponse, FetchTopic, ForgottenTopic, PartitionData,
};
use kseek_protocol::records::{AbortedTransaction, PartitionReader};
use kseek_protocol::{ApiKey, ErrorCode, Uuid};

use crate::backoff::{Backoff, Failing};
use crate::cluster::TopicMetadata;
use crate::error::{Error, ErrorKind, Result};
use crate::few::{find_from, FewMap};
use crate::plan::{IsolationLevel, Plan};
use crate::read::batch::{DataLoss, FetchedBatch, PartitionPosition};
use crate::read::options::{OutOfRange, ReadOptions};

/// A request the driver must make for the machine, or a side effect it must apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transmit {
    /// Metadata for `topics`: from the client's cache when fresh (`refresh: false`), or
    /// asked of a broker (`refresh: true`, for partition discovery). Answer with
    /// [`ReadMachine::handle_metadata`].
    Metadata {
        id: u64,
        topics: Vec<Arc<str>>,
        refresh: bool,
    },
    /// A Fetch to broker `leader` for `partitions`, in this order (build it with
    /// [`build_fetch`] at the version [`fetch_version`] picks). Answer with
    /// [`ReadMachine::handle_fetch`]: the broker's address, the version sent, the response.
    Fetch {
        id: u64,
        leader: i32,
        partitions: Vec<Requested>,
        params: FetchParams,
        session: SessionRequest,
    },
    /// The log start offset of `topic`/`partition` (ListOffsets -2 to its leader, at
    /// `isolation`). Answer with [`ReadMachine::handle_list_offsets`].
    ListEarliest {
        id: u64,
        topic: Arc<str>,
        partition: i32,
        isolation: IsolationLevel,
    },
    /// Mark `topic`'s cached metadata stale (its leader may have moved). No answer.
    Invalidate { topic: Arc<str> },
    /// Metadata for `topics`, asked of a broker other than those in `avoid` (the leaders
    /// of overdue Fetches: a frozen broker would not answer it either), updating the
    /// client's cache. Answer with [`ReadMachine::handle_metadata`].
    LeaderCheck {
        id: u64,
        topics: Vec<Arc<str>>,
        avoid: Vec<i32>,
    },
}

/// How long past its max wait a Fetch may go unanswered before the machine checks, in
/// Metadata from another broker, whether its partitions' leaders moved (a frozen or
/// unreachable leader answers nothing until the request timeout, 30 s by default).
pub(crate) const OVERDUE_AFTER: Duration = Duration::from_millis(500);

/// How often that check is made while a Fetch stays overdue.
pub(crate) const LEADER_CHECK_EVERY: Duration = Duration::from_millis(250);

/// A Fetch in flight.
#[derive(Debug)]
struct InFlightFetch {
    leader: i32,
    /// The partitions it still stands for: those whose leader moved while it was overdue
    /// are taken out (and fetched from their new leader), so its answer no longer applies
    /// to them.
    requested: Vec<Requested>,
    session: SessionRequest,
    /// When it becomes overdue (sent, plus the max wait, plus [`OVERDUE_AFTER`]).
    overdue_at: Instant,
    /// Partitions were taken out: the session with the leader no longer matches what we
    /// hold of it, so it starts over after the answer.
    detached: bool,
}

/// What the read hands out, in order.
pub(crate) enum Output {
    /// A partition's batches from one response, then its position after them.
    Chunk {
        idx: usize,
        batches: Vec<FetchedBatch>,
        position: i64,
        done: bool,
    },
    /// A partition jumped over deleted offsets.
    DataLoss {
        idx: usize,
        loss: DataLoss,
        position: i64,
        done: bool,
    },
    /// A partition found by discovery joined the read (its index is the next one).
    Added(PartitionPosition),
    /// The read failed; nothing follows.
    Failed(Error),
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Chunk {
                idx,
                batches,
                position,
                done,
            } => f
                .debug_struct("Chunk")
                .field("idx", idx)
                .field("batches", &batches.len())
                .field("position", position)
                .field("done", done)
                .finish(),
            Output::DataLoss { idx, loss, .. } => f
                .debug_struct("DataLoss")
                .field("idx", idx)
                .field("loss", loss)
                .finish(),
            Output::Added(p) => f.debug_tuple("Added").field(p).finish(),
            Output::Failed(e) => f.debug_tuple("Failed").field(e).finish(),
        }
    }
}

impl Output {
    /// The record bytes it carries (its batches' sizes on the wire), which count against
    /// [`ReadOptions::max_buffered_bytes`] until the caller takes them.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        match self {
            Output::Chunk { batches, .. } => batches.iter().map(FetchedBatch::buffered_bytes).sum(),
            _ => 0,
        }
    }
}

/// A partition in one Fetch request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requested {
    /// The partition's index in the read.
    pub(crate) idx: usize,
    pub(crate) topic: Arc<str>,
    /// [`Uuid::ZERO`] when unknown (then the Fetch goes by name, v12 or lower).
    pub(crate) topic_id: Uuid,
    pub(crate) partition: i32,
    /// The offset to fetch from.
    pub(crate) position: i64,
    /// The leader epoch the metadata gave, for fencing (-1 where unknown).
    pub(crate) leader_epoch: i32,
    pub(crate) max_bytes: i32,
    /// In an incremental fetch: the broker's session holds the partition with these very
    /// fields, so the request leaves it out (the broker still fetches it).
    pub(crate) unchanged: bool,
}

impl Requested {
    /// Whether the broker's session copy `held` has the fields this request would send.
    fn same_as(&self, held: &Requested) -> bool {
        (
            self.position,
            self.leader_epoch,
            self.max_bytes,
            self.topic_id,
        ) == (
            held.position,
            held.leader_epoch,
            held.max_bytes,
            held.topic_id,
        )
    }
}

/// The fetch session fields of one Fetch (KIP-227).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionRequest {
    /// The session id: 0 for none; with epoch 0, a session to close while opening a new one.
    pub(crate) id: i32,
    /// -1 for a sessionless full fetch, 0 for a full fetch opening a session, above 0 for an
    /// incremental fetch in session `id`.
    pub(crate) epoch: i32,
    /// Partitions to drop from the session (incremental fetches only).
    pub(crate) forgotten: Vec<Requested>,
}

impl SessionRequest {
    /// A full fetch without a session (sessions off): id 0, epoch -1.
    pub(crate) const SESSIONLESS: SessionRequest = SessionRequest {
        id: 0,
        epoch: -1,
        forgotten: Vec::new(),
    };

    /// Whether this is an incremental fetch at `version` (sessions need v7).
    pub(crate) fn is_incremental(&self, version: i16) -> bool {
        self.epoch > 0 && version >= 7
    }
}

/// A fetch session with one broker, as the client tracks it (KIP-227).
#[derive(Debug, Default)]
struct FetchSession {
    /// The broker's session id; 0 while there is none.
    id: i32,
    /// The epoch of the next request: 0 for a full fetch (which asks for a session, and
    /// closes session `id` if there is one), 1 and up for incremental ones.
    epoch: i32,
    /// What the broker holds for the session, per partition index: the fields last sent.
    held: Held,
    /// Sessions lost in a row without an incremental answer in between: the second in a row
    /// backs off like any retriable error (a broker that keeps losing sessions must not
    /// keep the read in a tight loop).
    lost_in_a_row: u32,
}

impl FetchSession {
    /// Forgets the session; the next fetch is full. `close`: ask the broker to close the
    /// old session (it may still hold it); otherwise it is known to be gone.
    fn reset(&mut self, close: bool) {
        if !close {
            self.id = 0;
        }
        self.epoch = 0;
        self.held.clear();
    }
}

/// What a broker holds of a fetch session: per partition index of the read (dense, from 0),
/// the fields last sent, or `None`.
#[derive(Debug, Default)]
struct Held(Vec<Option<Requested>>);

impl Held {
    /// Exactly `requested`.
    fn of(requested: &[Requested]) -> Held {
        let mut held = Held::default();
        for r in requested {
            held.set(r);
        }
        held
    }

    /// The fields held for partition `idx`.
    fn get(&self, idx: usize) -> Option<&Requested> {
        self.0.get(idx).and_then(Option::as_ref)
    }

    /// Holds `r`'s fields for its partition.
    fn set(&mut self, r: &Requested) {
        if self.0.len() <= r.idx {
            self.0.resize(r.idx + 1, None);
        }
        self.0[r.idx] = Some(r.clone());
    }

    /// Forgets partition `idx`.
    fn remove(&mut self, idx: usize) {
        if let Some(slot) = self.0.get_mut(idx) {
            *slot = None;
        }
    }

    /// Forgets every partition.
    fn clear(&mut self) {
        self.0.clear();
    }

    /// The partitions held, in index order.
    fn iter(&self) -> impl Iterator<Item = &Requested> {
        self.0.iter().flatten()
    }
}

/// The epoch after `epoch`: 1 follows i32::MAX (0 means a new session, KIP-227).
fn next_epoch(epoch: i32) -> i32 {
    if epoch == i32::MAX {
        1
    } else {
        epoch + 1
    }
}

/// The request-wide Fetch fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FetchParams {
    pub(crate) max_wait_ms: i32,
    pub(crate) min_bytes: i32,
    pub(crate) max_bytes: i32,
    pub(crate) isolation: IsolationLevel,
}

/// One partition of the read, as the machine tracks it.
#[derive(Debug)]
pub(crate) struct PartState {
    pub(crate) topic: Arc<str>,
    pub(crate) topic_id: Uuid,
    pub(crate) partition: i32,
    /// The next offset to fetch.
    pub(crate) position: i64,
    pub(crate) end: Option<i64>,
    pub(crate) done: bool,
    /// A Fetch or a ListOffsets for it is in flight.
    pub(crate) in_flight: bool,
    /// Due, but its leader had a Fetch in flight: waits for a Fetch to come back.
    pub(crate) parked: bool,
    /// Not fetched again before this (backoff after a failure).
    pub(crate) not_before: Option<Instant>,
    /// The failures in a row since the last success.
    pub(crate) failing: Option<Failing>,
    /// While it backs off after a Fetch to this leader failed for it: that leader. A leader
    /// check that finds another leader ends the backoff.
    pub(crate) failed_at: Option<i32>,
    /// The partition max bytes to ask for: raised when a batch larger than the default was
    /// cut off.
    pub(crate) max_bytes: i32,
    /// Put first in the next Fetch (the broker returns at least one whole batch there).
    pub(crate) first: bool,
}

impl PartState {
    fn new(topic: Arc<str>, topic_id: Uuid, partition: i32, start: i64, end: Option<i64>) -> Self {
        PartState {
            topic,
            topic_id,
            partition,
            position: start,
            end,
            done: end.is_some_and(|end| start >= end),
            in_flight: false,
            parked: false,
            not_before: None,
            failing: None,
            failed_at: None,
            max_bytes: 0,
            first: false,
        }
    }

    /// Idle and not backing off at `now`: to be fetched.
    fn due(&self, now: Instant) -> bool {
        !self.done && !self.in_flight && !self.parked && self.not_before.is_none_or(|t| t <= now)
    }
}

/// Why a ListOffsets for the log start was asked.
#[derive(Debug)]
enum Listing {
    /// OFFSET_OUT_OF_RANGE from `broker` at the partition's position.
    Reset { idx: usize, broker: Arc<str> },
    /// Discovery found a partition not in the read.
    Discovered {
        topic: Arc<str>,
        topic_id: Uuid,
        partition: i32,
    },
}

/// The state of one read: see the module docs.
#[derive(Debug)]
pub(crate) struct ReadMachine {
    options: ReadOptions,
    params: FetchParams,
    backoff: Backoff,
    parts: Vec<PartState>,
    /// Topics of an unbounded read, watched for new partitions.
    discover: Vec<Arc<str>>,
    next_discovery: Option<Instant>,
    next_id: u64,
    /// The Metadata request for the next Fetches in flight, and the topics it asked for.
    metadata: Option<(u64, Vec<Arc<str>>)>,
    /// The Metadata request of partition discovery in flight.
    discovery: Option<u64>,
    /// Fetches in flight.
    fetches: FewMap<u64, InFlightFetch>,
    /// How long after it is sent a Fetch is overdue: the max wait and [`OVERDUE_AFTER`].
    overdue_after: Duration,
    /// The leader check in flight ([`Transmit::LeaderCheck`]).
    leader_check: Option<u64>,
    /// No leader check before this.
    next_leader_check: Option<Instant>,
    /// Fetch sessions per leader broker (when [`ReadOptions::fetch_sessions`] is on).
    sessions: FewMap<i32, FetchSession>,
    /// ListOffsets in flight.
    listings: FewMap<u64, Listing>,
    transmits: VecDeque<Transmit>,
    outputs: VecDeque<Output>,
    failed: bool,
    /// The record bytes that may wait for the caller before Fetches pause
    /// ([`ReadOptions::max_buffered_bytes`], at least 1).
    max_buffered: u64,
    /// The record bytes of every output so far ([`Output::buffered_bytes`]).
    emitted: u64,
    /// Of those, the bytes the caller has taken ([`ReadMachine::handle_taken`]).
    taken: u64,
}

impl ReadMachine {
    /// The machine reading `plan` with `options` (its `max_wait` as it goes on the wire: the
    /// driver caps it below the request timeout), retrying on `backoff`'s schedule, started
    /// at `now`.
    pub(crate) fn new(plan: &Plan, options: &ReadOptions, backoff: Backoff, now: Instant) -> Self {
        let params = FetchParams {
            max_wait_ms: i32::try_from(options.max_wait.as_millis()).unwrap_or(i32::MAX),
            min_bytes: options.min_bytes,
            max_bytes: options.fetch_max_bytes,
            isolation: plan.isolation,
        };
        let parts = plan
            .partitions
            .iter()
            .map(|p| {
                let mut part = PartState::new(
                    Arc::from(p.topic.as_str()),
                    p.topic_id,
                    p.partition,
                    p.start,
                    p.end,
                );
                part.done = p.is_empty();
                part.max_bytes = options.partition_max_bytes;
                part
            })
            .collect();
        let mut discover: Vec<Arc<str>> = Vec::new();
        if options.partition_discovery.is_some() {
            for p in &plan.partitions {
                let unbounded = plan
                    .partitions
                    .iter()
                    .filter(|q| q.topic == p.topic)
                    .all(|q| q.end.is_none());
                if unbounded && !discover.iter().any(|t| **t == *p.topic) {
                    discover.push(Arc::from(p.topic.as_str()));
                }
            }
        }
        let next_discovery = options
            .partition_discovery
            .filter(|_| !discover.is_empty())
            .map(|every| now + every);
        ReadMachine {
            options: options.clone(),
            params,
            backoff,
            parts,
            discover,
            next_discovery,
            next_id: 0,
            metadata: None,
            discovery: None,
            fetches: FewMap::new(),
            overdue_after: options.max_wait + OVERDUE_AFTER,
            leader_check: None,
            next_leader_check: None,
            sessions: FewMap::new(),
            listings: FewMap::new(),
            transmits: VecDeque::new(),
            outputs: VecDeque::new(),
            failed: false,
            max_buffered: u64::try_from(options.max_buffered_bytes)
                .unwrap_or(u64::MAX)
                .max(1),
            emitted: 0,
            taken: 0,
        }
    }

    /// Whether the read is over: it failed, or every partition is done and none can be
    /// added. Take the outputs left ([`ReadMachine::poll_output`]) first.
    pub(crate) fn is_finished(&self) -> bool {
        self.failed || (self.discover.is_empty() && self.parts.iter().all(|p| p.done))
    }

    /// The next thing to hand out.
    pub(crate) fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// The caller has taken `taken` record bytes in all (a running total, never going down)
    /// of the outputs handed out so far: they no longer count against
    /// [`ReadOptions::max_buffered_bytes`].
    pub(crate) fn handle_taken(&mut self, taken: u64) {
        self.taken = self.taken.max(taken.min(self.emitted));
    }

    /// The record bytes of the outputs so far that the caller has not taken yet.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        self.emitted - self.taken
    }

    /// Whether Fetches pause because [`ReadOptions::max_buffered_bytes`] are waiting for the
    /// caller: then only [`ReadMachine::handle_taken`] (or an answer to a request already
    /// made) moves the read on, and [`ReadMachine::poll_timeout`] may say nothing.
    pub(crate) fn is_waiting_for_room(&self) -> bool {
        !self.is_finished() && !self.has_room()
    }

    fn has_room(&self) -> bool {
        self.buffered_bytes() < self.max_buffered
    }

    /// Queues `output` for the stream, counting its record bytes as waiting.
    fn emit(&mut self, output: Output) {
        self.emitted += output.buffered_bytes();
        self.outputs.push_back(output);
    }

    /// The next request to make at `now`, if any. Call until `None` after every input.
    pub(crate) fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if self.is_finished() {
            return None;
        }
        if let Some(t) = self.transmits.pop_front() {
            return Some(t);
        }
        if self.discovery.is_none() && self.next_discovery.is_some_and(|t| t <= now) {
            self.next_discovery = self.options.partition_discovery.map(|every| now + every);
            let id = self.next_id();
            self.discovery = Some(id);
            return Some(Transmit::Metadata {
                id,
                topics: self.discover.clone(),
                refresh: true,
            });
        }
        if let Some(t) = self.leader_check(now) {
            return Some(t);
        }
        // Fetching ahead stops while the budget of waiting bytes is used up.
        if self.metadata.is_none() && self.has_room() {
            let mut topics: Vec<Arc<str>> = Vec::new();
            for p in self.parts.iter().filter(|p| p.due(now)) {
                if !topics.contains(&p.topic) {
                    topics.push(p.topic.clone());
                }
            }
            if !topics.is_empty() {
                let id = self.next_id();
                self.metadata = Some((id, topics.clone()));
                return Some(Transmit::Metadata {
                    id,
                    topics,
                    refresh: false,
                });
            }
        }
        None
    }

    /// When to call [`ReadMachine::handle_timeout`] next, if nothing else happens first:
    /// the end of the earliest backoff, or the next partition discovery.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        if self.is_finished() {
            return None;
        }
        // While Metadata for the next Fetches is in flight, its answer wakes the machine.
        let backoffs = self
            .parts
            .iter()
            .filter(|p| self.metadata.is_none() && !p.done && !p.in_flight && !p.parked)
            .filter_map(|p| p.not_before);
        let discovery = self.next_discovery.filter(|_| self.discovery.is_none());
        let check = self.next_leader_check_at();
        backoffs.chain(discovery).chain(check).min()
    }

    /// When a leader check will be due: the earliest time a Fetch with partitions is
    /// overdue, or now if a partition backs off after its leader failed it; not before the
    /// next check may go.
    fn next_leader_check_at(&self) -> Option<Instant> {
        if self.leader_check.is_some() {
            return None;
        }
        let overdue = self
            .fetches
            .values()
            .filter(|f| !f.requested.is_empty())
            .map(|f| f.overdue_at)
            .min();
        // A partition backing off after its leader failed it set the next check then.
        let backing_off = self.parts.iter().any(|p| self.waits_for_leader(p));
        let due = if backing_off {
            self.next_leader_check
        } else {
            overdue
        }?;
        Some(self.next_leader_check.map_or(due, |t| t.max(due)))
    }

    /// Whether `p` backs off after its leader failed it (and no request for it is out).
    fn waits_for_leader(&self, p: &PartState) -> bool {
        !p.done && !p.in_flight && p.not_before.is_some() && p.failed_at.is_some()
    }

    /// A [`Transmit::LeaderCheck`] for the topics of the overdue Fetches at `now`, if one is
    /// due.
    fn leader_check(&mut self, now: Instant) -> Option<Transmit> {
        if self.next_leader_check_at().is_none_or(|t| t > now) {
            return None;
        }
        let mut topics: Vec<Arc<str>> = Vec::new();
        let mut avoid = Vec::new();
        for p in self.parts.iter().filter(|p| self.waits_for_leader(p)) {
            if !topics.contains(&p.topic) {
                topics.push(p.topic.clone());
            }
            if let Some(leader) = p.failed_at.filter(|l| !avoid.contains(l)) {
                avoid.push(leader);
            }
        }
        for f in self.fetches.values() {
            if f.requested.is_empty() || f.overdue_at > now {
                continue;
            }
            if !avoid.contains(&f.leader) {
                avoid.push(f.leader);
            }
            for r in &f.requested {
                if !topics.contains(&r.topic) {
                    topics.push(r.topic.clone());
                }
            }
        }
        let id = self.next_id();
        self.leader_check = Some(id);
        self.next_leader_check = Some(now + LEADER_CHECK_EVERY);
        crate::log::debug!(leaders = ?avoid, "fetch overdue; checking its partitions' leaders");
        Some(Transmit::LeaderCheck { id, topics, avoid })
    }

    /// The answer to a leader check: the partitions of overdue Fetches whose leader moved
    /// are taken out of them, to be fetched from their new leader at once. (The broker
    /// that was leader can no longer serve them; a Fetch of them it answers late is
    /// ignored.)
    fn leaders_checked(&mut self, now: Instant, result: Result<Vec<TopicMetadata>>) {
        let Ok(metadata) = result else {
            return; // Checked again after LEADER_CHECK_EVERY.
        };
        let leader_of = |topic: &str, partition: i32| {
            metadata
                .iter()
                .find(|t| *t.name == *topic)
                .and_then(|t| t.partition(partition))
                .map(|pm| pm.leader_id)
                .filter(|l| *l >= 0)
        };
        // Partitions backing off after their leader failed them: due at once if another
        // broker leads them now.
        for i in 0..self.parts.len() {
            let p = &self.parts[i];
            if !self.waits_for_leader(p) {
                continue;
            }
            let moved = leader_of(&p.topic, p.partition).is_some_and(|l| Some(l) != p.failed_at);
            if moved {
                let p = &mut self.parts[i];
                p.not_before = None;
                p.failed_at = None;
            }
        }
        let parts = &mut self.parts;
        for f in self.fetches.values_mut() {
            if f.overdue_at > now {
                continue;
            }
            let leader = f.leader;
            let before = f.requested.len();
            f.requested.retain(|r| {
                let moved = leader_of(&r.topic, r.partition).is_some_and(|l| l != leader);
                if moved {
                    parts[r.idx].in_flight = false;
                }
                !moved
            });
            f.detached |= f.requested.len() != before;
        }
    }

    /// Time passed: backoffs that ended at `now` are over (the partitions are due).
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        for p in &mut self.parts {
            if p.not_before.is_some_and(|t| t <= now) {
                p.not_before = None;
            }
        }
    }

    /// The answer to [`Transmit::Metadata`] `id`.
    pub(crate) fn handle_metadata(
        &mut self,
        now: Instant,
        id: u64,
        result: Result<Vec<TopicMetadata>>,
    ) {
        if self.failed {
            return;
        }
        if self.discovery == Some(id) {
            self.discovery = None;
            self.discovered(result);
            return;
        }
        if self.leader_check == Some(id) {
            self.leader_check = None;
            self.leaders_checked(now, result);
            return;
        }
        let Some((_, topics)) = self.metadata.take_if(|(m, _)| *m == id) else {
            return;
        };
        if let Err(e) = self.plan_fetches(now, &topics, result) {
            self.fail(e);
        }
    }

    /// The answer to [`Transmit::Fetch`] `id`: the broker's address, the version sent and
    /// the response, or why there is none.
    pub(crate) fn handle_fetch(
        &mut self,
        now: Instant,
        id: u64,
        result: Result<(Arc<str>, i16, FetchResponse)>,
    ) {
        let Some(InFlightFetch {
            leader,
            requested,
            session,
            detached,
            ..
        }) = self.fetches.remove(&id)
        else {
            return;
        };
        // The leader is free again: partitions waiting for it are due.
        for p in &mut self.parts {
            p.parked = false;
        }
        for r in &requested {
            self.parts[r.idx].in_flight = false;
        }
        if self.failed {
            return;
        }
        if let Err(e) = self.fetched(now, leader, &requested, &session, result) {
            self.fail(e);
        }
        let mut leader_failed = false;
        for r in &requested {
            let p = &mut self.parts[r.idx];
            p.failed_at = p.not_before.is_some().then_some(leader);
            leader_failed |= p.failed_at.is_some();
        }
        if leader_failed && self.next_leader_check.is_none_or(|t| t <= now) {
            self.next_leader_check = Some(now + LEADER_CHECK_EVERY);
        }
        if detached {
            if let Some(s) = self.sessions.get_mut(&leader) {
                s.reset(true);
            }
        }
    }

    /// The answer to [`Transmit::ListEarliest`] `id`: the log start offset.
    pub(crate) fn handle_list_offsets(&mut self, now: Instant, id: u64, result: Result<i64>) {
        let Some(listing) = self.listings.remove(&id) else {
            return;
        };
        if let Listing::Reset { idx, .. } = listing {
            self.parts[idx].in_flight = false;
        }
        if self.failed {
            return;
        }
        match listing {
            Listing::Reset { idx, broker } => {
                if let Err(e) = self.reset_to_log_start(now, idx, &broker, result) {
                    self.fail(e);
                }
            }
            Listing::Discovered {
                topic,
                topic_id,
                partition,
            } => self.add_partition(topic, topic_id, partition, result),
        }
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Ends the read with `error`: it is the last output.
    fn fail(&mut self, error: Error) {
        self.outputs.push_back(Output::Failed(error));
        self.failed = true;
        self.transmits.clear();
    }

    /// Groups the due partitions of `topics` by leader into one Fetch each, by the metadata
    /// in `result`.
    fn plan_fetches(
        &mut self,
        now: Instant,
        topics: &[Arc<str>],
        result: Result<Vec<TopicMetadata>>,
    ) -> Result<()> {
        let due: Vec<usize> = (0..self.parts.len())
            .filter(|&i| self.parts[i].due(now) && topics.contains(&self.parts[i].topic))
            .collect();
        let metadata = match result {
            Ok(metadata) => metadata,
            Err(e) if e.is_retriable() => return self.retry_all(now, &due, e),
            Err(e) => return Err(e),
        };
        if !self.has_room() {
            // Answers to other Fetches filled the budget meanwhile: the partitions stay due,
            // and are asked for again once the caller makes room.
            return Ok(());
        }
        let busy: Vec<i32> = self.fetches.values().map(|f| f.leader).collect();
        let mut groups: Vec<(i32, Vec<Requested>)> = Vec::new();
        for idx in due {
            let p = &self.parts[idx];
            let topic = metadata.iter().find(|t| *t.name == *p.topic);
            let Some((topic, pm)) = topic.and_then(|t| t.partition(p.partition).map(|pm| (t, pm)))
            else {
                let e: Error = ErrorKind::UnknownPartition {
                    topic: p.topic.to_string(),
                    partition: p.partition,
                    partitions: topic.map_or(0, |t| t.partitions.len()),
                }
                .into();
                // Metadata can lag behind a partition the plan saw: retry until the deadline.
                self.retry_all(now, &[idx], e)?;
                continue;
            };
            if pm.leader_id < 0 {
                let e: Error = ErrorKind::LeaderNotAvailable {
                    topic: p.topic.to_string(),
                    partition: p.partition,
                }
                .into();
                self.retry_all(now, &[idx], e)?;
                continue;
            }
            if busy.contains(&pm.leader_id) {
                self.parts[idx].parked = true;
                continue;
            }
            let requested = Requested {
                idx,
                topic: p.topic.clone(),
                topic_id: if p.topic_id.is_zero() {
                    topic.topic_id
                } else {
                    p.topic_id
                },
                partition: p.partition,
                position: p.position,
                leader_epoch: pm.leader_epoch,
                max_bytes: p.max_bytes,
                unchanged: false,
            };
            match groups
                .iter_mut()
                .find(|(leader, _)| *leader == pm.leader_id)
            {
                Some((_, group)) => group.push(requested),
                None => groups.push((pm.leader_id, vec![requested])),
            }
        }
        for (leader, requested) in groups {
            // A partition stuck behind a large batch goes first: the broker returns at least
            // one whole batch for the first partition (KIP-74). A stable partition, not a
            // sort: the order is otherwise kept, without a stable sort's code.
            let (mut requested, rest): (Vec<_>, Vec<_>) =
                requested.into_iter().partition(|r| self.parts[r.idx].first);
            requested.extend(rest);
            for r in &requested {
                self.parts[r.idx].in_flight = true;
            }
            let session = self.session_request(leader, &mut requested);
            let id = self.next_id();
            self.fetches.insert(
                id,
                InFlightFetch {
                    leader,
                    requested: requested.clone(),
                    session: session.clone(),
                    overdue_at: now + self.overdue_after,
                    detached: false,
                },
            );
            self.transmits.push_back(Transmit::Fetch {
                id,
                leader,
                partitions: requested,
                params: self.params,
                session,
            });
        }
        Ok(())
    }

    /// The session fields of the next Fetch to `leader` for `requested` (every partition the
    /// session is to hold), marking the partitions the broker's session already holds as
    /// they are.
    fn session_request(&mut self, leader: i32, requested: &mut [Requested]) -> SessionRequest {
        if !self.options.fetch_sessions {
            return SessionRequest::SESSIONLESS;
        }
        let session = self
            .sessions
            .get_or_insert_with(leader, FetchSession::default);
        if session.epoch == 0 {
            return SessionRequest {
                id: session.id,
                epoch: 0,
                forgotten: Vec::new(),
            };
        }
        // Which partitions this request names, by index (the held ones not named are
        // forgotten, in index order).
        let mut wanted = vec![false; session.held.0.len()];
        for r in requested.iter_mut() {
            if let Some(w) = wanted.get_mut(r.idx) {
                *w = true;
            }
            r.unchanged = session.held.get(r.idx).is_some_and(|held| r.same_as(held));
        }
        let forgotten: Vec<Requested> = session
            .held
            .iter()
            .filter(|held| !wanted[held.idx])
            .cloned()
            .collect();
        SessionRequest {
            id: session.id,
            epoch: session.epoch,
            forgotten,
        }
    }

    /// Updates the session with `leader` after a Fetch with `sent` for `requested` was
    /// answered at `version` with top-level `code` and session id `answered_id`. Returns
    /// whether the answer was a session error on an incremental fetch: then nothing of the
    /// answer applies and the partitions are fetched again at once, in a full fetch.
    fn session_answered(
        &mut self,
        leader: i32,
        requested: &[Requested],
        sent: &SessionRequest,
        version: i16,
        code: ErrorCode,
        answered_id: i32,
    ) -> bool {
        if sent.epoch < 0 {
            return false;
        }
        let session = self
            .sessions
            .get_or_insert_with(leader, FetchSession::default);
        let incremental = sent.is_incremental(version);
        if !code.is_ok() {
            // FETCH_SESSION_ID_NOT_FOUND: the broker has no such session (evicted, or the
            // broker restarted). Other errors leave the session's epoch unknown: close it.
            session.reset(code != ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
            let session_error = [
                ErrorCode::FETCH_SESSION_ID_NOT_FOUND,
                ErrorCode::INVALID_FETCH_SESSION_EPOCH,
                ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR,
            ]
            .contains(&code);
            if !(incremental && session_error) {
                return false;
            }
            session.lost_in_a_row += 1;
            crate::log::debug!(leader, session = sent.id, epoch = sent.epoch, %code,
                "fetch session lost; fetching in full");
            return session.lost_in_a_row == 1;
        }
        if !incremental {
            // A full fetch: the broker opened a session (id above 0), or did not (id 0:
            // sessions are off, or its cache is full); then the next fetch is full again.
            session.id = answered_id;
            session.epoch = if answered_id > 0 { 1 } else { 0 };
            session.held = Held::of(requested);
            if answered_id <= 0 {
                session.held.clear();
            }
        } else if answered_id != sent.id {
            // Not the session asked for: start over.
            session.reset(true);
        } else {
            session.lost_in_a_row = 0;
            session.epoch = next_epoch(sent.epoch);
            for r in requested.iter().filter(|r| !r.unchanged) {
                session.held.set(r);
            }
            for f in &sent.forgotten {
                session.held.remove(f.idx);
            }
        }
        false
    }

    /// A Fetch to `leader` for `requested` with session fields `sent` came back (or failed).
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    fn fetched(
        &mut self,
        now: Instant,
        leader: i32,
        requested: &[Requested],
        sent: &SessionRequest,
        result: Result<(Arc<str>, i16, FetchResponse)>,
    ) -> Result<()> {
        let idxs: Vec<usize> = requested.iter().map(|r| r.idx).collect();
        let (broker, version, response) = match result {
            Ok(ok) => ok,
            Err(e) => {
                // The request may or may not have reached the broker: its session's epoch is
                // unknown, and the connection may be a new one next time. Start a new session.
                if let Some(session) = self.sessions.get_mut(&leader) {
                    session.reset(true);
                }
                if !e.is_retriable() {
                    return Err(e);
                }
                crate::log::debug!(leader, error = %e, "fetch failed; retrying");
                return self.retry_all(now, &idxs, e);
            }
        };
        let code = ErrorCode(response.error_code);
        if self.session_answered(leader, requested, sent, version, code, response.session_id) {
            // The partitions are due again at once, at the positions they had: nothing of
            // this answer was used, so nothing is lost or repeated.
            return Ok(());
        }
        if response.error_code != 0 {
            let e: Error = ErrorKind::Broker {
                broker: broker.to_string(),
                api: ApiKey::FETCH,
                code: ErrorCode(response.error_code),
                message: None,
            }
            .into();
            if !e.is_retriable() {
                return Err(e);
            }
            return self.retry_all(now, &idxs, e);
        }
        // Match answers to requested partitions: by topic id from v13, by name before. A
        // broker answers in the order asked, so a scan from after the previous match takes
        // one step each; any other order only scans further.
        let mut next = 0;
        for topic in response.responses {
            for data in topic.partitions {
                let partition = data.partition_index;
                let found = find_from(requested, next, |r| {
                    r.partition == partition
                        && if version >= 13 {
                            r.topic_id == topic.topic_id
                        } else {
                            *r.topic == *topic.topic
                        }
                });
                let Some(i) = found else { continue };
                next = i + 1;
                self.partition_response(now, &requested[i], data, &broker)?;
            }
        }
        Ok(())
    }

    /// Handles one partition of a Fetch response.
    fn partition_response(
        &mut self,
        now: Instant,
        r: &Requested,
        data: PartitionData,
        broker: &Arc<str>,
    ) -> Result<()> {
        let idx = r.idx;
        if self.parts[idx].done || self.parts[idx].position != r.position {
            return Ok(());
        }
        let code = ErrorCode(data.error_code);
        if code == ErrorCode::OFFSET_OUT_OF_RANGE {
            return self.out_of_range(idx, broker);
        }
        if !code.is_ok() {
            let p = &self.parts[idx];
            let e: Error = ErrorKind::Partition {
                broker: broker.to_string(),
                api: ApiKey::FETCH,
                topic: p.topic.to_string(),
                partition: p.partition,
                code,
            }
            .into();
            // UNKNOWN_TOPIC_ID (100) and INCONSISTENT_TOPIC_ID (103) are metadata errors too.
            if code.is_retriable() || code == ErrorCode(100) || code == ErrorCode(103) {
                crate::log::debug!(topic = %p.topic, partition = p.partition, %code, "fetch error; retrying");
                return self.retry_all(now, &[idx], e);
            }
            return Err(e);
        }
        let decoded = match decode_partition(
            &mut self.parts[idx],
            idx,
            data,
            broker,
            self.params.isolation,
            &self.options,
        ) {
            Ok(decoded) => decoded,
            Err(failure) => {
                let DecodeFailure { before, error } = *failure;
                // The good batches before the failing one are handed out, then the error.
                if let Some(before) = before {
                    self.emit(before);
                }
                return Err(error);
            }
        };
        let p = &mut self.parts[idx];
        p.failing = None;
        p.not_before = None;
        if let Some(decoded) = decoded {
            self.emit(decoded);
        }
        Ok(())
    }

    /// OFFSET_OUT_OF_RANGE: ask for the log start (then [`Self::reset_to_log_start`]), or
    /// fail.
    fn out_of_range(&mut self, idx: usize, broker: &Arc<str>) -> Result<()> {
        let p = &mut self.parts[idx];
        if self.options.out_of_range == OutOfRange::Fail {
            return Err(ErrorKind::OffsetOutOfRange {
                broker: broker.to_string(),
                topic: p.topic.to_string(),
                partition: p.partition,
                offset: p.position,
            }
            .into());
        }
        p.in_flight = true;
        let (topic, partition) = (p.topic.clone(), p.partition);
        let id = self.next_id();
        self.listings.insert(
            id,
            Listing::Reset {
                idx,
                broker: broker.clone(),
            },
        );
        self.transmits.push_back(Transmit::ListEarliest {
            id,
            topic,
            partition,
            isolation: self.params.isolation,
        });
        Ok(())
    }

    /// The log start after OFFSET_OUT_OF_RANGE at partition `idx`'s position: jump there and
    /// report the loss.
    fn reset_to_log_start(
        &mut self,
        now: Instant,
        idx: usize,
        broker: &Arc<str>,
        result: Result<i64>,
    ) -> Result<()> {
        let log_start = match result {
            Ok(offset) => offset,
            Err(e) if e.is_retriable() => return self.retry_all(now, &[idx], e),
            Err(e) => return Err(e),
        };
        let p = &mut self.parts[idx];
        if log_start <= p.position {
            // Past the log's end (truncation), or a leader that is behind: retry until the
            // deadline, then fail.
            let error: Error = ErrorKind::OffsetOutOfRange {
                broker: broker.to_string(),
                topic: p.topic.to_string(),
                partition: p.partition,
                offset: p.position,
            }
            .into();
            return self.retry_all(now, &[idx], error);
        }
        let to = p.end.map_or(log_start, |end| log_start.min(end));
        let loss = DataLoss {
            topic: p.topic.to_string(),
            partition: p.partition,
            from: p.position,
            to,
        };
        crate::log::warning!(
            topic = %p.topic,
            partition = p.partition,
            from = loss.from,
            to = loss.to,
            "offset out of range: the data was deleted; continuing at the log start"
        );
        p.position = log_start;
        p.done = p.end.is_some_and(|end| log_start >= end);
        p.failing = None;
        p.not_before = None;
        self.outputs.push_back(Output::DataLoss {
            idx,
            loss,
            position: p.position,
            done: p.done,
        });
        Ok(())
    }

    /// Discovery's metadata: ask for the log start of every partition not in the read yet.
    // The errors it skips are only logged, so without `tracing` they go unused.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    fn discovered(&mut self, result: Result<Vec<TopicMetadata>>) {
        let metadata = match result {
            Ok(metadata) => metadata,
            Err(e) => {
                crate::log::debug!(error = %e, "partition discovery failed; trying later");
                return;
            }
        };
        for topic in metadata {
            let Some(name) = self.discover.iter().find(|t| ***t == *topic.name).cloned() else {
                continue;
            };
            for pm in &topic.partitions {
                let known = self
                    .parts
                    .iter()
                    .any(|p| p.topic == name && p.partition == pm.partition);
                let asked = self.listings.values().any(|l| {
                    matches!(l, Listing::Discovered { topic, partition, .. }
                        if *topic == name && *partition == pm.partition)
                });
                if known || asked {
                    continue;
                }
                let id = self.next_id();
                self.listings.insert(
                    id,
                    Listing::Discovered {
                        topic: name.clone(),
                        topic_id: topic.topic_id,
                        partition: pm.partition,
                    },
                );
                self.transmits.push_back(Transmit::ListEarliest {
                    id,
                    topic: name.clone(),
                    partition: pm.partition,
                    isolation: self.params.isolation,
                });
            }
        }
    }

    /// A partition found by discovery starts at its log start.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    fn add_partition(
        &mut self,
        topic: Arc<str>,
        topic_id: Uuid,
        partition: i32,
        start: Result<i64>,
    ) {
        let start = match start {
            Ok(start) => start,
            Err(e) => {
                crate::log::debug!(topic = %topic, partition, error = %e,
                    "new partition's log start unknown; trying later");
                return;
            }
        };
        crate::log::info!(topic = %topic, partition, start, "new partition joins the read");
        let mut part = PartState::new(topic.clone(), topic_id, partition, start, None);
        part.max_bytes = self.options.partition_max_bytes;
        self.parts.push(part);
        self.outputs.push_back(Output::Added(PartitionPosition {
            topic: topic.to_string(),
            partition,
            next_offset: start,
            leader_epoch: -1,
            end: None,
            done: false,
        }));
    }

    /// Schedules a retry of partitions `idxs` after `error`, asking for their metadata to be
    /// invalidated; fails with [`ErrorKind::RetriesExhausted`] once a partition has kept failing
    /// for the retry deadline.
    fn retry_all(&mut self, now: Instant, idxs: &[usize], error: Error) -> Result<()> {
        for &idx in idxs {
            let p = &mut self.parts[idx];
            let wait = match self.backoff.fail(&mut p.failing, now) {
                Ok(wait) => wait,
                Err(Failing { since, failures }) => {
                    return Err(ErrorKind::RetriesExhausted {
                        what: format!(
                            "reading partition {} of topic {:?} at offset {}",
                            p.partition, p.topic, p.position
                        ),
                        attempts: failures,
                        elapsed: now.saturating_duration_since(since),
                        source: error,
                    }
                    .into());
                }
            };
            p.not_before = Some(now + wait);
            let topic = p.topic.clone();
            let queued = self
                .transmits
                .iter()
                .any(|t| matches!(t, Transmit::Invalidate { topic: t } if *t == topic));
            if !queued {
                self.transmits.push_back(Transmit::Invalidate { topic });
            }
        }
        Ok(())
    }
}

/// The Fetch version to use: the negotiated one, but names (v12) when a topic id is unknown.
pub(crate) fn fetch_version(negotiated: i16, requested: &[Requested]) -> i16 {
    if negotiated >= 13 && requested.iter().any(|r| r.topic_id.is_zero()) {
        12
    } else {
        negotiated
    }
}

/// The Fetch for `requested` with the session fields of `session`, topics in order of first
/// appearance. An incremental fetch (epoch above 0, v7+) leaves out the partitions marked
/// unchanged and lists the forgotten ones; a full fetch has every partition. Below v7 the
/// session fields are not on the wire, and the fetch is always full.
pub(crate) fn build_fetch(
    requested: &[Requested],
    version: i16,
    params: &FetchParams,
    session: &SessionRequest,
) -> FetchRequest {
    let incremental = session.is_incremental(version);
    let same_topic = |t: &str, id: Uuid, r: &Requested| {
        if version >= 13 {
            id == r.topic_id
        } else {
            *t == *r.topic
        }
    };
    let mut topics: Vec<FetchTopic> = Vec::new();
    for r in requested.iter().filter(|r| !incremental || !r.unchanged) {
        let partition = FetchPartition {
            partition: r.partition,
            current_leader_epoch: if version >= 9 { r.leader_epoch } else { -1 },
            fetch_offset: r.position,
            partition_max_bytes: r.max_bytes,
            ..FetchPartition::default()
        };
        match topics
            .iter_mut()
            .find(|t| same_topic(&t.topic, t.topic_id, r))
        {
            Some(t) => t.partitions.push(partition),
            None => topics.push(FetchTopic {
                topic: r.topic.to_string(),
                topic_id: r.topic_id,
                partitions: vec![partition],
                ..FetchTopic::default()
            }),
        }
    }
    let mut forgotten_topics_data: Vec<ForgottenTopic> = Vec::new();
    if incremental {
        for f in &session.forgotten {
            match forgotten_topics_data
                .iter_mut()
                .find(|t| same_topic(&t.topic, t.topic_id, f))
            {
                Some(t) => t.partitions.push(f.partition),
                None => forgotten_topics_data.push(ForgottenTopic {
                    topic: f.topic.to_string(),
                    topic_id: f.topic_id,
                    partitions: vec![f.partition],
                    ..ForgottenTopic::default()
                }),
            }
        }
    }
    let (session_id, session_epoch) = if version >= 7 {
        (session.id, session.epoch)
    } else {
        (0, -1)
    };
    FetchRequest {
        max_wait_ms: params.max_wait_ms,
        min_bytes: params.min_bytes,
        max_bytes: params.max_bytes,
        isolation_level: params.isolation,
        session_id,
        session_epoch,
        topics,
        forgotten_topics_data,
        ..FetchRequest::default()
    }
}

/// Record batches of a partition that failed to decode.
#[derive(Debug)]
pub(crate) struct DecodeFailure {
    /// The batches before the failing one, as a chunk ending where the failing one starts.
    pub(crate) before: Option<Output>,
    /// What failed, at which offset.
    pub(crate) error: Error,
}

/// Decodes one partition's records from a Fetch response, moving `p`'s position. Returns
/// the output for the stream, or `None` when nothing changed.
pub(crate) fn decode_partition(
    p: &mut PartState,
    idx: usize,
    data: PartitionData,
    broker: &Arc<str>,
    isolation: IsolationLevel,
    options: &ReadOptions,
) -> std::result::Result<Option<Output>, Box<DecodeFailure>> {
    let start = p.position;
    let mut reader = PartitionReader::new(data.records.unwrap_or_default(), start, options.decode);
    if let Some(end) = p.end {
        reader = reader.with_end_offset(end);
    }
    if isolation == IsolationLevel::READ_COMMITTED {
        let aborted = data.aborted_transactions.unwrap_or_default();
        reader = reader.read_committed(aborted.into_iter().map(|t| AbortedTransaction {
            producer_id: t.producer_id,
            first_offset: t.first_offset,
        }));
    }
    let mut batches = Vec::new();
    for batch in &mut reader {
        let batch = match batch {
            Ok(batch) => batch,
            Err(source) => {
                let position = reader_position_hint(start, &batches);
                let error: Error = ErrorKind::CorruptRecords {
                    broker: broker.to_string(),
                    topic: p.topic.to_string(),
                    partition: p.partition,
                    offset: position,
                    source: Box::new(source),
                }
                .into();
                let before = (!batches.is_empty()).then(|| {
                    p.position = position;
                    Output::Chunk {
                        idx,
                        batches,
                        position,
                        done: false,
                    }
                });
                return Err(Box::new(DecodeFailure { before, error }));
            }
        };
        let last = batch.batch().next_offset();
        batches.push(FetchedBatch {
            idx,
            topic: p.topic.clone(),
            partition: p.partition,
            broker: broker.clone(),
            next_offset: p.end.map_or(last, |end| last.min(end)),
            inner: batch,
            high_watermark: data.high_watermark,
            time_filter: options.time_filter,
        });
    }
    let position = reader.next_offset();
    let done = reader.end_reached() || p.end.is_some_and(|end| position >= end);
    if position == start && !done {
        // No whole batch: a batch larger than the partition's max bytes was cut off. Ask
        // for all of it, first in the next request.
        if let Some(size) = reader.partial_batch().and_then(|b| b.declared_size) {
            let size = i32::try_from(size).unwrap_or(i32::MAX);
            if size > p.max_bytes {
                p.max_bytes = size;
                p.first = true;
            }
        }
    } else {
        p.max_bytes = options.partition_max_bytes;
        p.first = false;
    }
    p.position = position;
    p.done = done;
    if batches.is_empty() && position == start && !done {
        return Ok(None);
    }
    Ok(Some(Output::Chunk {
        idx,
        batches,
        position,
        done,
    }))
}

/// The position of the batch that failed to decode: after the last good one.
fn reader_position_hint(start: i64, batches: &[FetchedBatch]) -> i64 {
    batches
        .last()
        .map_or(start, |b| b.inner.batch().next_offset().max(start))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use bytes::Bytes;
    use kseek_protocol::messages::fetch::{self, PartitionData};
    use kseek_protocol::records::{ControlRecordType, NewRecord, RecordBatchBuilder};

    use super::*;
    use crate::read::options::TimeFilter;

    pub(crate) fn part(topic: &str, position: i64, end: Option<i64>) -> PartState {
        let mut p = PartState::new(Arc::from(topic), Uuid::ZERO, 0, position, end);
        p.done = false;
        p.max_bytes = 1024;
        p
    }

    pub(crate) fn batch(base: i64, n: i32) -> RecordBatchBuilder {
        let mut b = RecordBatchBuilder::new(base, 1_000 + base).partition_leader_epoch(3);
        for i in 0..n {
            b.push(NewRecord::new(i, i64::from(i)).value(format!("v{}", base + i64::from(i))));
        }
        b
    }

    pub(crate) fn wire(batches: &[RecordBatchBuilder]) -> Bytes {
        let mut out = Vec::new();
        for b in batches {
            out.extend_from_slice(&b.build().unwrap());
        }
        Bytes::from(out)
    }

    pub(crate) fn data(records: Bytes) -> PartitionData {
        PartitionData {
            high_watermark: 100,
            records: Some(records),
            ..PartitionData::default()
        }
    }

    pub(crate) fn offsets_of(event: &Output) -> Vec<i64> {
        let Output::Chunk { batches, .. } = event else {
            panic!("not a chunk: {event:?}");
        };
        batches
            .iter()
            .flat_map(|b| b.records().map(|r| r.unwrap().offset()).collect::<Vec<_>>())
            .collect()
    }

    fn requested(topic: &str, id: u8, partition: i32) -> Requested {
        Requested {
            idx: 0,
            topic: Arc::from(topic),
            topic_id: Uuid([id; 16]),
            partition,
            position: 10 + i64::from(partition),
            leader_epoch: 4,
            max_bytes: 1000,
            unchanged: false,
        }
    }

    const PARAMS: FetchParams = FetchParams {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 50 << 20,
        isolation: IsolationLevel::READ_COMMITTED,
    };

    #[test]
    fn fetch_requests_group_partitions_by_topic_in_order() {
        let parts = [
            requested("b", 2, 1),
            requested("a", 1, 0),
            requested("b", 2, 0),
        ];
        let request = build_fetch(&parts, 13, &PARAMS, &SessionRequest::SESSIONLESS);
        assert_eq!((request.session_id, request.session_epoch), (0, -1));
        assert_eq!(request.isolation_level, IsolationLevel::READ_COMMITTED);
        assert_eq!(request.max_wait_ms, 500);
        assert_eq!(request.max_bytes, 50 << 20);
        let topics: Vec<(Uuid, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                (
                    t.topic_id,
                    t.partitions.iter().map(|p| p.partition).collect(),
                )
            })
            .collect();
        assert_eq!(
            topics,
            [(Uuid([2; 16]), vec![1, 0]), (Uuid([1; 16]), vec![0])]
        );
        let p = &request.topics[0].partitions[0];
        assert_eq!(
            (
                p.fetch_offset,
                p.current_leader_epoch,
                p.partition_max_bytes
            ),
            (11, 4, 1000)
        );
        // Encodes at every version the client may pick.
        for version in [4, 8, 9, 12, 13, 17, 18] {
            let request = build_fetch(&parts, version, &PARAMS, &SessionRequest::SESSIONLESS);
            let mut buf = bytes::BytesMut::new();
            kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
            let expected_epoch = if version >= 9 { 4 } else { -1 };
            assert_eq!(
                request.topics[0].partitions[0].current_leader_epoch,
                expected_epoch
            );
        }
        // By name before v13: topics are told apart by name.
        let by_name = build_fetch(&parts, 12, &PARAMS, &SessionRequest::SESSIONLESS);
        assert_eq!(by_name.topics[0].topic, "b");
        assert_eq!(by_name.topics.len(), 2);
    }

    #[test]
    fn unknown_topic_ids_fall_back_to_names() {
        let mut parts = vec![requested("a", 1, 0)];
        assert_eq!(fetch_version(18, &parts), 18);
        assert_eq!(fetch_version(11, &parts), 11);
        parts.push(requested("b", 0, 0));
        assert_eq!(fetch_version(18, &parts), 12);
        assert_eq!(fetch_version(12, &parts), 12);
    }

    #[test]
    fn decoding_drops_records_outside_the_range_and_moves_by_batches() {
        let options = ReadOptions::default();
        let broker: Arc<str> = Arc::from("b:1");
        let mut p = part("t", 2, Some(7));
        let event = decode_partition(
            &mut p,
            0,
            data(wire(&[batch(0, 5), batch(5, 5)])),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), [2, 3, 4, 5, 6]);
        let Output::Chunk {
            batches,
            position,
            done,
            ..
        } = &event
        else {
            unreachable!()
        };
        // The position moved past the whole second batch; what is handed out stops at the end.
        assert_eq!((*position, *done), (10, true));
        assert_eq!(batches[0].next_offset(), 5);
        assert_eq!(batches[1].next_offset(), 7);
        assert_eq!(batches[1].leader_epoch(), 3);
        assert_eq!(batches[1].high_watermark(), 100);
        assert!(p.done);

        // The time filter applies per record.
        let options = ReadOptions::default().time_filter(TimeFilter::new(Some(1_003), None));
        let mut p = part("t", 0, Some(5));
        let event = decode_partition(
            &mut p,
            0,
            data(wire(&[batch(0, 5)])),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), [3, 4]);
    }

    #[test]
    fn a_cut_off_batch_is_fetched_again_with_room_for_it() {
        let options = ReadOptions::default().partition_max_bytes(1024);
        let broker: Arc<str> = Arc::from("b:1");
        let mut big = RecordBatchBuilder::new(0, 0);
        for i in 0..50 {
            big.push(NewRecord::new(i, 0).value(vec![b'x'; 100]));
        }
        let full = wire(&[big]);
        let mut p = part("t", 0, Some(50));
        p.max_bytes = 1024;
        let event = decode_partition(
            &mut p,
            0,
            data(full.slice(..1024)),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap();
        assert!(event.is_none());
        assert_eq!(p.position, 0);
        assert!(!p.done);
        assert!(p.first);
        assert_eq!(p.max_bytes as usize, full.len());
        // Once it came whole, back to the default.
        let event = decode_partition(
            &mut p,
            0,
            data(full),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &options,
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event).len(), 50);
        assert!(p.done && !p.first);
        assert_eq!(p.max_bytes, 1024);
    }

    #[test]
    fn read_committed_uses_the_aborted_transactions_of_the_response() {
        let broker: Arc<str> = Arc::from("b:1");
        let records = wire(&[
            batch(0, 2).producer(7, 0, 0).transactional(true),
            RecordBatchBuilder::control_marker(2, 0, 7, 0, ControlRecordType::ABORT, 0),
            batch(3, 2),
        ]);
        let mut d = data(records);
        d.aborted_transactions = Some(vec![fetch::AbortedTransaction {
            producer_id: 7,
            first_offset: 0,
            ..Default::default()
        }]);
        for (level, expected) in [
            (IsolationLevel::READ_COMMITTED, vec![3, 4]),
            (IsolationLevel::READ_UNCOMMITTED, vec![0, 1, 3, 4]),
        ] {
            let mut p = part("t", 0, Some(5));
            let event = decode_partition(
                &mut p,
                0,
                d.clone(),
                &broker,
                level,
                &ReadOptions::default(),
            )
            .unwrap()
            .unwrap();
            assert_eq!(offsets_of(&event), expected);
            assert!(p.done);
        }
        // A range of nothing but the aborted transaction and its marker still ends.
        let mut p = part("t", 0, Some(3));
        let event = decode_partition(
            &mut p,
            0,
            d,
            &broker,
            IsolationLevel::READ_COMMITTED,
            &ReadOptions::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), Vec::<i64>::new());
        assert!(p.done);
        assert_eq!(p.position, 3);
    }

    #[test]
    fn corrupt_records_name_the_partition_and_offset() {
        let broker: Arc<str> = Arc::from("b:1");
        let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let mut p = part("t", 0, None);
        let err = decode_partition(
            &mut p,
            0,
            data(Bytes::from(bytes)),
            &broker,
            IsolationLevel::READ_UNCOMMITTED,
            &ReadOptions::default(),
        )
        .unwrap_err();
        let DecodeFailure { before, error } = *err;
        assert!(
            matches!(error.kind(), ErrorKind::CorruptRecords { topic, offset: 2, .. } if topic == "t"),
            "{error:?}"
        );
        // The good batch before the broken one is still handed out, ending at offset 2.
        let Some(Output::Chunk {
            batches,
            position: 2,
            done: false,
            ..
        }) = before
        else {
            panic!("{before:?}");
        };
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].next_offset(), 2);
    }

    // --- The machine, driven by hand with a virtual clock -----------------------------------

    use std::time::Duration;

    use kseek_protocol::messages::fetch::FetchableTopicResponse;

    use crate::cluster::PartitionMetadata;
    use crate::plan::PartitionPlan;
    use crate::read::virtual_epoch;

    const MS: Duration = Duration::from_millis(1);

    fn plan(ranges: &[(i32, i64, Option<i64>)]) -> Plan {
        Plan {
            partitions: ranges
                .iter()
                .map(|&(partition, start, end)| PartitionPlan {
                    topic: "t".into(),
                    topic_id: Uuid([1; 16]),
                    partition,
                    start,
                    end,
                    log_start_offset: 0,
                    last_fetchable_offset: end.unwrap_or(0),
                    leader_epoch: 0,
                    adjusted: None,
                })
                .collect(),
            isolation: IsolationLevel::READ_UNCOMMITTED,
        }
    }

    /// Topic "t" with these (partition, leader) pairs.
    fn metadata(leaders: &[(i32, i32)]) -> Vec<TopicMetadata> {
        vec![TopicMetadata {
            name: "t".into(),
            topic_id: Uuid([1; 16]),
            partitions: leaders
                .iter()
                .map(|&(partition, leader_id)| PartitionMetadata {
                    partition,
                    leader_id,
                    leader_epoch: 5,
                    error_code: ErrorCode::NONE,
                })
                .collect(),
        }]
    }

    /// A Fetch answer (v12, by name) from broker "b:1" for topic "t".
    fn answer(partitions: Vec<PartitionData>) -> Result<(Arc<str>, i16, FetchResponse)> {
        Ok((
            Arc::from("b:1"),
            12,
            FetchResponse {
                responses: vec![FetchableTopicResponse {
                    topic: "t".into(),
                    partitions,
                    ..Default::default()
                }],
                ..Default::default()
            },
        ))
    }

    fn records_of(partition: i32, records: Bytes) -> PartitionData {
        PartitionData {
            partition_index: partition,
            ..data(records)
        }
    }

    fn error_of(partition: i32, code: ErrorCode) -> PartitionData {
        PartitionData {
            partition_index: partition,
            error_code: code.0,
            ..PartitionData::default()
        }
    }

    fn machine(plan: &Plan, options: &ReadOptions, now: Instant) -> ReadMachine {
        ReadMachine::new(
            plan,
            options,
            Backoff::new(100 * MS, 1000 * MS, 3000 * MS),
            now,
        )
    }

    fn transmits(m: &mut ReadMachine, now: Instant) -> Vec<Transmit> {
        std::iter::from_fn(|| m.poll_transmit(now)).collect()
    }

    fn outputs(m: &mut ReadMachine) -> Vec<Output> {
        std::iter::from_fn(|| m.poll_output()).collect()
    }

    /// The id of the one Metadata request in `t`, for cached (not refreshed) metadata.
    fn metadata_id(t: &[Transmit]) -> u64 {
        match t {
            [Transmit::Metadata {
                id, refresh: false, ..
            }] => *id,
            other => panic!("expected one Metadata request, got {other:?}"),
        }
    }

    /// A Fetch sent: (id, leader, [(partition, position)]).
    type Sent = (u64, i32, Vec<(i32, i64)>);

    /// The Fetches in `t`.
    fn fetches(t: &[Transmit]) -> Vec<Sent> {
        t.iter()
            .filter_map(|t| match t {
                Transmit::Fetch {
                    id,
                    leader,
                    partitions,
                    ..
                } => Some((
                    *id,
                    *leader,
                    partitions
                        .iter()
                        .map(|p| (p.partition, p.position))
                        .collect(),
                )),
                _ => None,
            })
            .collect()
    }

    /// The one Fetch in `t` (after the Metadata answer): its id and positions.
    fn one_fetch(t: &[Transmit]) -> (u64, Vec<(i32, i64)>) {
        match &fetches(t)[..] {
            [(id, _, positions)] => (*id, positions.clone()),
            other => panic!("expected one Fetch, got {other:?}"),
        }
    }

    #[test]
    fn partitions_of_an_overdue_fetch_whose_leader_moved_are_fetched_from_the_new_leader() {
        let t0 = virtual_epoch();
        let options = ReadOptions::default().max_wait(500 * MS);
        let mut m = machine(&plan(&[(0, 0, Some(10)), (1, 0, Some(10))]), &options, t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
        let (old, positions) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(positions, [(0, 0), (1, 0)]);
        // Broker 1 holds the Fetch past its max wait: overdue after 500 + 500 ms.
        let overdue = t0 + 1000 * MS;
        assert_eq!(m.poll_timeout(), Some(overdue));
        assert!(transmits(&mut m, overdue - MS).is_empty());
        m.handle_timeout(overdue);
        let check = match &transmits(&mut m, overdue)[..] {
            [Transmit::LeaderCheck { id, topics, avoid }] => {
                assert_eq!((&topics[..], &avoid[..]), (&[Arc::from("t")][..], &[1][..]));
                *id
            }
            other => panic!("expected a leader check, got {other:?}"),
        };
        // Nothing moved yet: checked again 250 ms later, the Fetch still stands.
        m.handle_metadata(overdue, check, Ok(metadata(&[(0, 1), (1, 1)])));
        assert!(transmits(&mut m, overdue).is_empty());
        let again = overdue + LEADER_CHECK_EVERY;
        assert_eq!(m.poll_timeout(), Some(again));
        m.handle_timeout(again);
        let check = match &transmits(&mut m, again)[..] {
            [Transmit::LeaderCheck { id, .. }] => *id,
            other => panic!("expected a leader check, got {other:?}"),
        };
        // Partition 0 moved to broker 2: fetched from it at once; partition 1 stays with
        // the overdue Fetch.
        m.handle_metadata(again, check, Ok(metadata(&[(0, 2), (1, 1)])));
        let id = metadata_id(&transmits(&mut m, again));
        m.handle_metadata(again, id, Ok(metadata(&[(0, 2), (1, 1)])));
        let new = fetches(&transmits(&mut m, again));
        assert_eq!(new.len(), 1, "{new:?}");
        assert_eq!((new[0].1, &new[0].2[..]), (2, &[(0, 0)][..]));
        m.handle_fetch(
            again,
            new[0].0,
            answer(vec![records_of(0, wire(&[batch(0, 4)]))]),
        );
        assert!(matches!(
            &outputs(&mut m)[..],
            [Output::Chunk {
                idx: 0,
                position: 4,
                ..
            }]
        ));
        // Broker 1 answers late, opening session 7, with partition 0 from offset 0 too:
        // only partition 1's records are taken, partition 0's are not handed out twice.
        let late = answer(vec![
            records_of(0, wire(&[batch(0, 4)])),
            records_of(1, wire(&[batch(0, 3)])),
        ])
        .map(|(broker, version, response)| {
            let response = FetchResponse {
                session_id: 7,
                ..response
            };
            (broker, version, response)
        });
        m.handle_fetch(again, old, late);
        assert!(matches!(
            &outputs(&mut m)[..],
            [Output::Chunk {
                idx: 1,
                position: 3,
                ..
            }]
        ));
        // Session 7 does not hold partition 0 as we would think: the session with broker 1
        // starts over, its next Fetch is a full one (epoch 0) closing session 7.
        let id = metadata_id(&transmits(&mut m, again));
        m.handle_metadata(again, id, Ok(metadata(&[(0, 2), (1, 1)])));
        let next = transmits(&mut m, again);
        let to_1 = next.iter().find_map(|t| match t {
            Transmit::Fetch {
                leader: 1, session, ..
            } => Some((session.id, session.epoch)),
            _ => None,
        });
        assert_eq!(to_1, Some((7, 0)), "{next:?}");
    }

    #[test]
    fn fetching_ahead_pauses_while_the_budget_is_used_up_and_resumes_when_the_caller_takes() {
        let t0 = virtual_epoch();
        let first = wire(&[batch(0, 2)]);
        let second = wire(&[batch(2, 2)]);
        // Room for the first batch and a byte of the second.
        let budget = first.len() + 1;
        let options = ReadOptions::default().max_buffered_bytes(budget);
        let mut m = machine(&plan(&[(0, 0, Some(6))]), &options, t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let (id, at) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(at, [(0, 0)]);
        m.handle_fetch(t0, id, answer(vec![records_of(0, first.clone())]));
        let out = outputs(&mut m);
        assert_eq!(offsets_of(&out[0]), [0, 1]);
        assert_eq!(out[0].buffered_bytes(), first.len() as u64);
        assert_eq!(m.buffered_bytes(), first.len() as u64);
        // The caller has taken nothing, and the next Fetch goes out all the same: ahead.
        assert!(!m.is_waiting_for_room());
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let (id, at) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(at, [(0, 2)]);
        m.handle_fetch(t0, id, answer(vec![records_of(0, second.clone())]));
        assert_eq!(offsets_of(&outputs(&mut m)[0]), [2, 3]);
        // Now the budget is used up: no request, no timeout, only the caller moves it on.
        assert!(m.is_waiting_for_room());
        assert_eq!(transmits(&mut m, t0 + 10 * MS), []);
        assert_eq!(m.poll_timeout(), None);
        assert!(!m.is_finished());
        // Taking the first batch is not enough (still budget bytes waiting)...
        m.handle_taken(first.len() as u64 - 1);
        assert!(m.is_waiting_for_room());
        assert_eq!(transmits(&mut m, t0), []);
        // ... taking all of it is: fetching resumes at once.
        m.handle_taken(first.len() as u64);
        assert_eq!(m.buffered_bytes(), second.len() as u64);
        assert!(!m.is_waiting_for_room());
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let (id, at) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(at, [(0, 4)]);
        m.handle_fetch(t0, id, answer(vec![records_of(0, wire(&[batch(4, 2)]))]));
        let out = outputs(&mut m);
        assert!(matches!(
            out[..],
            [Output::Chunk {
                position: 6,
                done: true,
                ..
            }]
        ));
        // A bounded read ends when its positions reach their ends, taken or not.
        assert!(m.is_finished());
        assert!(!m.is_waiting_for_room());
    }

    #[test]
    fn a_batch_larger_than_the_whole_budget_still_passes_alone() {
        let t0 = virtual_epoch();
        let big = wire(&[batch(0, 5)]);
        let options = ReadOptions::default().max_buffered_bytes(1);
        let mut m = machine(&plan(&[(0, 0, Some(8)), (1, 0, Some(2))]), &options, t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
        let (id, _) = one_fetch(&transmits(&mut m, t0));
        // Partition 1 has nothing yet; partition 0 a batch many times the budget.
        m.handle_fetch(
            t0,
            id,
            answer(vec![
                records_of(0, big.clone()),
                records_of(1, Bytes::new()),
            ]),
        );
        let out = outputs(&mut m);
        assert_eq!(out.len(), 1);
        assert_eq!(offsets_of(&out[0]), [0, 1, 2, 3, 4]);
        assert!(m.is_waiting_for_room());
        assert_eq!(transmits(&mut m, t0), []);
        m.handle_taken(big.len() as u64);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
        let (id, at) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(at, [(0, 5), (1, 0)]);
        m.handle_fetch(
            t0,
            id,
            answer(vec![
                records_of(0, wire(&[batch(5, 3)])),
                records_of(1, wire(&[batch(0, 2)])),
            ]),
        );
        // Both chunks of the one response pass; the read is over.
        let out = outputs(&mut m);
        assert_eq!(out.len(), 2);
        assert!(m.is_finished());
    }

    #[test]
    fn metadata_answered_after_other_fetches_filled_the_budget_starts_no_fetch() {
        let t0 = virtual_epoch();
        let one = wire(&[batch(0, 2)]);
        let options = ReadOptions::default().max_buffered_bytes(one.len() + 1);
        let leaders = [(0, 1), (1, 2)];
        let mut m = machine(&plan(&[(0, 0, Some(4)), (1, 0, Some(4))]), &options, t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&leaders)));
        let sent = fetches(&transmits(&mut m, t0));
        assert_eq!(sent.len(), 2);
        // Leader 1 answers: room is left, so Metadata for partition 0's next Fetch goes out.
        m.handle_fetch(t0, sent[0].0, answer(vec![records_of(0, one.clone())]));
        outputs(&mut m);
        let next = metadata_id(&transmits(&mut m, t0));
        // Before it is answered, leader 2's answer uses the budget up.
        m.handle_fetch(t0, sent[1].0, answer(vec![records_of(1, one.clone())]));
        outputs(&mut m);
        m.handle_metadata(t0, next, Ok(metadata(&leaders)));
        assert_eq!(transmits(&mut m, t0), []);
        assert!(m.is_waiting_for_room());
        // Once the caller takes both chunks, both partitions are asked for again.
        m.handle_taken(2 * one.len() as u64);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&leaders)));
        let sent = fetches(&transmits(&mut m, t0));
        let at: Vec<_> = sent.iter().map(|s| s.2.clone()).collect();
        assert_eq!(at, [vec![(0, 2)], vec![(1, 2)]]);
    }

    #[test]
    fn a_plan_of_empty_ranges_is_finished_before_any_request() {
        let now = virtual_epoch();
        let mut m = machine(
            &plan(&[(0, 5, Some(5)), (1, 7, Some(3))]),
            &ReadOptions::default(),
            now,
        );
        assert!(m.is_finished());
        assert_eq!(m.poll_transmit(now), None);
        assert_eq!(m.poll_timeout(), None);
        assert!(m.poll_output().is_none());
    }

    #[test]
    fn one_fetch_per_leader_until_every_partition_reaches_its_end() {
        let t0 = virtual_epoch();
        let p = plan(&[(0, 0, Some(4)), (1, 0, Some(2)), (2, 0, Some(3))]);
        let mut m = machine(&p, &ReadOptions::default(), t0);
        let id = metadata_id(&transmits(&mut m, t0));
        // Nothing more until the metadata is in.
        assert_eq!(transmits(&mut m, t0), []);
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 2), (2, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        assert_eq!(sent.len(), 2);
        assert_eq!((sent[0].1, &sent[0].2[..]), (1, &[(0, 0), (2, 0)][..]));
        assert_eq!((sent[1].1, &sent[1].2[..]), (2, &[(1, 0)][..]));
        // Leader 2 answers with all of partition 1; leader 1 still has its Fetch.
        m.handle_fetch(
            t0,
            sent[1].0,
            answer(vec![records_of(1, wire(&[batch(0, 2)]))]),
        );
        let out = outputs(&mut m);
        assert_eq!(offsets_of(&out[0]), [0, 1]);
        assert!(matches!(
            out[0],
            Output::Chunk {
                idx: 1,
                position: 2,
                done: true,
                ..
            }
        ));
        assert!(!m.is_finished());
        assert_eq!(
            transmits(&mut m, t0),
            [],
            "partitions 0 and 2 are in flight"
        );
        // Leader 1 answers partition 0 in part, partition 2 whole.
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![
                records_of(0, wire(&[batch(0, 3)])),
                records_of(2, wire(&[batch(0, 3)])),
            ]),
        );
        assert_eq!(outputs(&mut m).len(), 2);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 2), (2, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        assert_eq!(
            sent.iter().map(|f| f.2.clone()).collect::<Vec<_>>(),
            [vec![(0, 3)]]
        );
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![records_of(0, wire(&[batch(3, 5)]))]),
        );
        let out = outputs(&mut m);
        assert_eq!(offsets_of(&out[0]), [3], "records past the end are dropped");
        assert!(m.is_finished());
        assert_eq!(m.poll_transmit(t0), None);
    }

    /// (partition index, offsets) of each chunk in `out`.
    fn chunks(out: &[Output]) -> Vec<(usize, Vec<i64>)> {
        out.iter()
            .map(|o| match o {
                Output::Chunk { idx, .. } => (*idx, offsets_of(o)),
                other => panic!("not a chunk: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn answers_out_of_request_order_go_to_their_own_partitions() {
        let t0 = virtual_epoch();
        // Partitions 0..4 of "t", all led by broker 1, each 3 records long.
        let p = plan(&[
            (0, 0, Some(3)),
            (1, 0, Some(3)),
            (2, 0, Some(3)),
            (3, 0, Some(3)),
        ]);
        let mut m = machine(&p, &ReadOptions::default(), t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1), (2, 1), (3, 1)])));
        let (id, asked) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(asked, [(0, 0), (1, 0), (2, 0), (3, 0)]);
        // By name (v12): partition 2, then 0, a partition not asked for, 3 and 1, each with
        // a different number of records.
        m.handle_fetch(
            t0,
            id,
            answer(vec![
                records_of(2, wire(&[batch(0, 3)])),
                records_of(0, wire(&[batch(0, 1)])),
                records_of(7, wire(&[batch(0, 3)])),
                records_of(3, wire(&[batch(0, 2)])),
                records_of(1, wire(&[batch(0, 3)])),
            ]),
        );
        assert_eq!(
            chunks(&outputs(&mut m)),
            [
                (2, vec![0, 1, 2]),
                (0, vec![0]),
                (3, vec![0, 1]),
                (1, vec![0, 1, 2]),
            ]
        );
        // By topic id (v13, the name left empty): 3 first, then 0 in two topic entries.
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1), (2, 1), (3, 1)])));
        let (id, asked) = one_fetch(&transmits(&mut m, t0));
        assert_eq!(asked, [(0, 1), (3, 2)]);
        let by_id = |partitions| FetchableTopicResponse {
            topic_id: Uuid([1; 16]),
            partitions,
            ..Default::default()
        };
        let response = FetchResponse {
            responses: vec![
                by_id(vec![records_of(3, wire(&[batch(2, 1)]))]),
                by_id(vec![records_of(0, wire(&[batch(1, 2)]))]),
            ],
            ..Default::default()
        };
        m.handle_fetch(t0, id, Ok((Arc::from("b:1"), 13, response)));
        assert_eq!(chunks(&outputs(&mut m)), [(3, vec![2]), (0, vec![1, 2])]);
        assert!(m.is_finished());
    }

    #[test]
    fn retries_double_the_wait_invalidate_and_give_up_at_the_deadline() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 0, Some(10))]), &ReadOptions::default(), t0);
        let mut now = t0;
        let mut waits = Vec::new();
        let mut checks = 0;
        let mut id = metadata_id(&transmits(&mut m, now));
        let error = loop {
            m.handle_metadata(now, id, Ok(metadata(&[(0, 1)])));
            let sent = fetches(&transmits(&mut m, now));
            assert_eq!(sent.len(), 1);
            m.handle_fetch(
                now,
                sent[0].0,
                answer(vec![error_of(0, ErrorCode::NOT_LEADER_OR_FOLLOWER)]),
            );
            if let Some(Output::Failed(e)) = m.poll_output() {
                break e;
            }
            assert_eq!(
                transmits(&mut m, now),
                [Transmit::Invalidate {
                    topic: Arc::from("t")
                }]
            );
            // Until the backoff ends nothing is fetched; leader checks go out every 250 ms
            // and find broker 1 still leading, so the backoff runs its course.
            let failed = now;
            id = loop {
                now = m.poll_timeout().expect("a backoff to wait for");
                m.handle_timeout(now);
                match &transmits(&mut m, now)[..] {
                    [Transmit::LeaderCheck { id, avoid, .. }] => {
                        assert_eq!(avoid[..], [1]);
                        m.handle_metadata(now, *id, Ok(metadata(&[(0, 1)])));
                        checks += 1;
                    }
                    [Transmit::Metadata {
                        id, refresh: false, ..
                    }] => break *id,
                    other => panic!("unexpected {other:?}"),
                }
            };
            waits.push(now - failed);
        };
        assert_eq!(
            waits,
            [100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS],
            "the next wait, 1 s at 2.5 s, would end past the 3 s deadline"
        );
        assert!(checks >= 4, "{checks} leader checks");
        match error.kind() {
            ErrorKind::RetriesExhausted {
                attempts, elapsed, ..
            } => assert_eq!((*attempts, *elapsed), (6, 2500 * MS)),
            other => panic!("unexpected {other:?}"),
        }
        assert!(m.is_finished());
        assert_eq!(m.poll_transmit(now), None);
    }

    #[test]
    fn a_partition_backing_off_after_its_leader_failed_is_fetched_once_a_check_finds_another() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 0, Some(10))]), &ReadOptions::default(), t0);
        let refused = || -> Result<(Arc<str>, i16, FetchResponse)> {
            Err(ErrorKind::ConnectionClosed {
                broker: "b:1".into(),
                reason: "refused".into(),
            }
            .into())
        };
        let mut now = t0;
        let mut transmitted = transmits(&mut m, now);
        // Broker 1 refuses every Fetch (retries at 0.1, 0.3, 0.7 and 1.5 s, then a 1 s
        // backoff); from 1.6 s on, Metadata names broker 2 the leader.
        let moved_at = t0 + 1600 * MS;
        loop {
            let leader = if now >= moved_at { 2 } else { 1 };
            match &transmitted[..] {
                [] => {}
                [Transmit::Metadata {
                    id, refresh: false, ..
                }] => {
                    m.handle_metadata(now, *id, Ok(metadata(&[(0, leader)])));
                    let sent = fetches(&transmits(&mut m, now));
                    if sent[0].1 == 2 {
                        break;
                    }
                    m.handle_fetch(now, sent[0].0, refused());
                }
                [Transmit::LeaderCheck { id, avoid, .. }] => {
                    assert_eq!(avoid[..], [1]);
                    let backoff_ends = m.parts[0].not_before.expect("backing off");
                    m.handle_metadata(now, *id, Ok(metadata(&[(0, leader)])));
                    if leader == 2 {
                        // Fetched from broker 2 at once, not when the backoff would end.
                        assert!(backoff_ends > now + 100 * MS, "{:?}", backoff_ends - now);
                        let id = metadata_id(&transmits(&mut m, now));
                        m.handle_metadata(now, id, Ok(metadata(&[(0, 2)])));
                        let sent = fetches(&transmits(&mut m, now));
                        assert_eq!((sent[0].1, &sent[0].2[..]), (2, &[(0, 0)][..]));
                        assert!(now - moved_at <= LEADER_CHECK_EVERY, "{:?}", now - moved_at);
                        return;
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
            now = m.poll_timeout().expect("a backoff or a check to wait for");
            m.handle_timeout(now);
            transmitted = transmits(&mut m, now);
            transmitted.retain(|t| !matches!(t, Transmit::Invalidate { .. }));
        }
        panic!("the partition was fetched from broker 2 by a retry, not by a leader check");
    }

    #[test]
    fn a_success_resets_the_retry_schedule_and_leader_minus_one_is_retried() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 0, Some(10))]), &ReadOptions::default(), t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, -1)])));
        assert!(fetches(&transmits(&mut m, t0)).is_empty());
        let t1 = m.poll_timeout().unwrap();
        assert_eq!(t1 - t0, 100 * MS);
        m.handle_timeout(t1);
        let id = metadata_id(&transmits(&mut m, t1));
        m.handle_metadata(t1, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t1));
        m.handle_fetch(
            t1,
            sent[0].0,
            answer(vec![records_of(0, wire(&[batch(0, 2)]))]),
        );
        assert_eq!(outputs(&mut m).len(), 1);
        // A transport error after the success waits the first backoff again.
        let id = metadata_id(&transmits(&mut m, t1));
        m.handle_metadata(t1, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t1));
        m.handle_fetch(
            t1,
            sent[0].0,
            Err(ErrorKind::ConnectionClosed {
                broker: "b:1".into(),
                reason: "reset".into(),
            }
            .into()),
        );
        assert_eq!(m.poll_timeout().unwrap() - t1, 100 * MS);
        assert_eq!(
            transmits(&mut m, t1),
            [Transmit::Invalidate {
                topic: Arc::from("t")
            }]
        );
        // A fatal error ends the read at once.
        let t2 = t1 + 100 * MS;
        m.handle_timeout(t2);
        let id = metadata_id(&transmits(&mut m, t2));
        m.handle_metadata(
            t2,
            id,
            Err(ErrorKind::InvalidSpec {
                reason: "fatal".into(),
            }
            .into()),
        );
        assert!(matches!(
            &outputs(&mut m)[..],
            [Output::Failed(e)] if matches!(e.kind(), ErrorKind::InvalidSpec { .. })
        ));
        assert!(m.is_finished());
    }

    #[test]
    fn out_of_range_resets_to_the_log_start_reporting_the_loss() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 2, Some(10))]), &ReadOptions::default(), t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![error_of(0, ErrorCode::OFFSET_OUT_OF_RANGE)]),
        );
        let list = match &transmits(&mut m, t0)[..] {
            [Transmit::ListEarliest {
                id,
                topic,
                partition: 0,
                ..
            }] if &**topic == "t" => *id,
            other => panic!("expected a ListEarliest, got {other:?}"),
        };
        assert!(m.poll_output().is_none());
        m.handle_list_offsets(t0, list, Ok(6));
        match &outputs(&mut m)[..] {
            [Output::DataLoss {
                idx: 0,
                loss,
                position: 6,
                done: false,
            }] => assert_eq!((loss.from, loss.to, loss.skipped()), (2, 6, 4)),
            other => panic!("unexpected {other:?}"),
        }
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        assert_eq!(fetches(&transmits(&mut m, t0))[0].2, [(0, 6)]);

        // A log start past the end: the loss stops at the end and the partition is done.
        let mut m = machine(&plan(&[(0, 2, Some(4))]), &ReadOptions::default(), t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![error_of(0, ErrorCode::OFFSET_OUT_OF_RANGE)]),
        );
        let Some(Transmit::ListEarliest { id, .. }) = m.poll_transmit(t0) else {
            panic!("expected a ListEarliest");
        };
        m.handle_list_offsets(t0, id, Ok(9));
        assert!(matches!(
            &outputs(&mut m)[..],
            [Output::DataLoss {
                loss: DataLoss { from: 2, to: 4, .. },
                position: 9,
                done: true,
                ..
            }]
        ));
        assert!(m.is_finished());

        // OutOfRange::Fail ends the read instead.
        let options = ReadOptions::default().out_of_range(OutOfRange::Fail);
        let mut m = machine(&plan(&[(0, 2, Some(10))]), &options, t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![error_of(0, ErrorCode::OFFSET_OUT_OF_RANGE)]),
        );
        assert!(matches!(
            &outputs(&mut m)[..],
            [Output::Failed(e)] if matches!(e.kind(), ErrorKind::OffsetOutOfRange { offset: 2, .. })
        ));
        assert!(m.is_finished());
    }

    #[test]
    fn discovery_adds_new_partitions_of_an_unbounded_read_at_their_log_start() {
        let t0 = virtual_epoch();
        // A max wait of a minute: partition 0's Fetch stays out past the discovery, without
        // going overdue (that would add leader checks, tested on their own).
        let options = ReadOptions::default()
            .partition_discovery(Some(30_000 * MS))
            .max_wait(60_000 * MS);
        let mut m = machine(&plan(&[(0, 0, None)]), &options, t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        assert_eq!(m.poll_timeout(), Some(t0 + 30_000 * MS));
        // Discovery is due while partition 0's Fetch is still out.
        let t1 = t0 + 30_000 * MS;
        m.handle_timeout(t1);
        let discovery = match &transmits(&mut m, t1)[..] {
            [Transmit::Metadata {
                id,
                topics,
                refresh: true,
            }] if topics == &[Arc::from("t")] => *id,
            other => panic!("expected discovery's Metadata, got {other:?}"),
        };
        m.handle_metadata(t1, discovery, Ok(metadata(&[(0, 1), (1, 2)])));
        let list = match &transmits(&mut m, t1)[..] {
            [Transmit::ListEarliest {
                id, partition: 1, ..
            }] => *id,
            other => panic!("expected a ListEarliest for partition 1, got {other:?}"),
        };
        m.handle_list_offsets(t1, list, Ok(3));
        match &outputs(&mut m)[..] {
            [Output::Added(p)] => {
                assert_eq!(
                    (p.partition, p.next_offset, p.end, p.done),
                    (1, 3, None, false)
                )
            }
            other => panic!("unexpected {other:?}"),
        }
        // The new partition is fetched from its leader, the old one is still in flight.
        let id = metadata_id(&transmits(&mut m, t1));
        m.handle_metadata(t1, id, Ok(metadata(&[(0, 1), (1, 2)])));
        let new = fetches(&transmits(&mut m, t1));
        assert_eq!((new[0].1, &new[0].2[..]), (2, &[(1, 3)][..]));
        assert_eq!(m.poll_timeout(), Some(t1 + 30_000 * MS));
        m.handle_fetch(t1, sent[0].0, answer(vec![]));
        assert!(!m.is_finished(), "an unbounded read never finishes");
    }

    #[test]
    fn a_decode_failure_hands_out_the_good_batches_then_the_error() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 0, Some(10))]), &ReadOptions::default(), t0);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![records_of(0, Bytes::from(bytes))]),
        );
        let out = outputs(&mut m);
        assert_eq!(out.len(), 2);
        assert_eq!(offsets_of(&out[0]), [0, 1]);
        assert!(matches!(
            &out[1],
            Output::Failed(e) if matches!(e.kind(), ErrorKind::CorruptRecords { offset: 2, .. })
        ));
        assert!(m.is_finished());
    }

    #[test]
    fn a_batch_cut_off_by_max_bytes_is_asked_first_with_room_for_it() {
        let t0 = virtual_epoch();
        let options = ReadOptions::default().partition_max_bytes(1024);
        let mut m = machine(&plan(&[(0, 0, Some(10)), (1, 0, Some(50))]), &options, t0);
        let mut big = RecordBatchBuilder::new(0, 0);
        for i in 0..50 {
            big.push(NewRecord::new(i, 0).value(vec![b'x'; 100]));
        }
        let full = wire(&[big]);
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
        let sent = fetches(&transmits(&mut m, t0));
        assert_eq!(sent[0].2, [(0, 0), (1, 0)]);
        m.handle_fetch(
            t0,
            sent[0].0,
            answer(vec![
                records_of(0, wire(&[batch(0, 2)])),
                records_of(1, full.slice(..1024)),
            ]),
        );
        assert_eq!(
            outputs(&mut m).len(),
            1,
            "nothing for the cut-off partition"
        );
        let id = metadata_id(&transmits(&mut m, t0));
        m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
        let Some(Transmit::Fetch { partitions, .. }) = m.poll_transmit(t0) else {
            panic!("expected a Fetch");
        };
        let asked: Vec<_> = partitions
            .iter()
            .map(|p| (p.partition, p.position, p.max_bytes))
            .collect();
        assert_eq!(asked, [(1, 0, full.len() as i32), (0, 2, 1024)]);
    }

    #[test]
    fn unknown_and_inconsistent_topic_ids_are_retried_other_partition_errors_fail() {
        for (code, retried) in [
            (ErrorCode(100), true),
            (ErrorCode(103), true),
            (ErrorCode::FENCED_LEADER_EPOCH, true),
            (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, true),
            (ErrorCode::TOPIC_AUTHORIZATION_FAILED, false),
        ] {
            let t0 = virtual_epoch();
            let mut m = machine(&plan(&[(0, 0, Some(10))]), &ReadOptions::default(), t0);
            let id = metadata_id(&transmits(&mut m, t0));
            m.handle_metadata(t0, id, Ok(metadata(&[(0, 1)])));
            let sent = fetches(&transmits(&mut m, t0));
            m.handle_fetch(t0, sent[0].0, answer(vec![error_of(0, code)]));
            let failed = matches!(
                &outputs(&mut m)[..],
                [Output::Failed(e)] if matches!(e.kind(), ErrorKind::Partition { code: c, .. } if *c == code)
            );
            assert_eq!(
                (failed, m.poll_timeout().is_some()),
                (!retried, retried),
                "{code:?}"
            );
        }
    }

    // --- Fetch sessions (KIP-227) ------------------------------------------------------------

    /// `answer` in fetch session `session` (0: none).
    fn in_session(
        session: i32,
        partitions: Vec<PartitionData>,
    ) -> Result<(Arc<str>, i16, FetchResponse)> {
        let mut a = answer(partitions);
        if let Ok((_, _, response)) = &mut a {
            response.session_id = session;
        }
        a
    }

    /// A Fetch answer with the top-level error `code` (v12).
    fn top_level_error(code: ErrorCode) -> Result<(Arc<str>, i16, FetchResponse)> {
        Ok((
            Arc::from("b:1"),
            12,
            FetchResponse {
                error_code: code.0,
                ..Default::default()
            },
        ))
    }

    /// What the next Fetch puts on the wire at v12, after its Metadata: its id, the
    /// (partition, position) pairs sent, the partitions forgotten, (session id, epoch), and
    /// every partition the machine waits for an answer about.
    struct Wire {
        id: u64,
        sent: Vec<(i32, i64)>,
        forgotten: Vec<i32>,
        session: (i32, i32),
        asked: Vec<i32>,
    }

    fn next_fetch(m: &mut ReadMachine, now: Instant, leaders: &[(i32, i32)]) -> Wire {
        let id = metadata_id(&transmits(m, now));
        m.handle_metadata(now, id, Ok(metadata(leaders)));
        let t = transmits(m, now);
        let [Transmit::Fetch {
            id,
            partitions,
            params,
            session,
            ..
        }] = &t[..]
        else {
            panic!("expected one Fetch, got {t:?}");
        };
        let request = build_fetch(partitions, 12, params, session);
        let mut buf = bytes::BytesMut::new();
        kseek_protocol::Message::encode(&request, &mut buf, 12).unwrap();
        Wire {
            id: *id,
            sent: request
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| (p.partition, p.fetch_offset)))
                .collect(),
            forgotten: request
                .forgotten_topics_data
                .iter()
                .flat_map(|t| t.partitions.iter().copied())
                .collect(),
            session: (request.session_id, request.session_epoch),
            asked: partitions.iter().map(|p| p.partition).collect(),
        }
    }

    /// Collects the offsets handed out per partition index.
    fn collect(m: &mut ReadMachine, got: &mut HashMap<usize, Vec<i64>>) {
        for out in outputs(m) {
            if let Output::Chunk { idx, .. } = out {
                got.entry(idx).or_default().extend(offsets_of(&out));
            }
        }
    }

    #[test]
    fn incremental_fetches_send_changed_partitions_only_and_forget_finished_ones() {
        let t0 = virtual_epoch();
        let p = plan(&[(0, 0, Some(4)), (1, 0, Some(10)), (2, 0, Some(3))]);
        let mut m = machine(&p, &ReadOptions::default(), t0);
        let leaders = [(0, 1), (1, 1), (2, 1)];
        let mut got = HashMap::new();

        // The first Fetch is full, asking for a session.
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(
            (f.session, &f.sent[..]),
            ((0, 0), &[(0, 0), (1, 0), (2, 0)][..])
        );
        m.handle_fetch(
            t0,
            f.id,
            in_session(
                42,
                vec![
                    records_of(0, wire(&[batch(0, 2)])),
                    records_of(2, Bytes::new()),
                ],
            ),
        );
        collect(&mut m, &mut got);

        // Only partition 0 moved: the next Fetch sends it alone; the broker keeps 1 and 2.
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, (42, 1));
        assert_eq!(f.sent, [(0, 2)]);
        assert_eq!(f.asked, [0, 1, 2]);
        assert!(f.forgotten.is_empty());
        // Partition 1 is absent from the incremental answer: nothing new, same position.
        m.handle_fetch(
            t0,
            f.id,
            in_session(
                42,
                vec![
                    records_of(0, wire(&[batch(2, 2)])),
                    records_of(2, wire(&[batch(0, 3)])),
                ],
            ),
        );
        collect(&mut m, &mut got);

        // Partitions 0 and 2 reached their ends: forgotten. Partition 1 is still unchanged.
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, (42, 2));
        assert_eq!((&f.sent[..], &f.forgotten[..]), (&[][..], &[0, 2][..]));
        assert_eq!(f.asked, [1]);
        m.handle_fetch(t0, f.id, in_session(42, vec![]));
        assert!(outputs(&mut m).is_empty());

        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(
            (f.session, &f.sent[..], &f.forgotten[..]),
            ((42, 3), &[][..], &[][..])
        );
        m.handle_fetch(
            t0,
            f.id,
            in_session(42, vec![records_of(1, wire(&[batch(0, 10)]))]),
        );
        collect(&mut m, &mut got);
        assert!(m.is_finished());
        assert_eq!(got[&0], [0, 1, 2, 3]);
        assert_eq!(got[&1], (0..10).collect::<Vec<_>>());
        assert_eq!(got[&2], [0, 1, 2]);
    }

    #[test]
    fn a_raised_max_bytes_or_a_new_leader_epoch_is_a_change_too() {
        let t0 = virtual_epoch();
        let options = ReadOptions::default().partition_max_bytes(1024);
        let mut m = machine(&plan(&[(0, 0, Some(50)), (1, 0, Some(5))]), &options, t0);
        let mut big = RecordBatchBuilder::new(0, 0);
        for i in 0..50 {
            big.push(NewRecord::new(i, 0).value(vec![b'x'; 100]));
        }
        let full = wire(&[big]);
        let f = next_fetch(&mut m, t0, &[(0, 1), (1, 1)]);
        m.handle_fetch(
            t0,
            f.id,
            in_session(7, vec![records_of(0, full.slice(..1024))]),
        );
        let f = next_fetch(&mut m, t0, &[(0, 1), (1, 1)]);
        assert_eq!((f.session, &f.sent[..]), ((7, 1), &[(0, 0)][..]));
        m.handle_fetch(t0, f.id, in_session(7, vec![]));
        // The metadata now has a newer leader epoch for partition 1.
        let id = metadata_id(&transmits(&mut m, t0));
        let mut md = metadata(&[(0, 1), (1, 1)]);
        md[0].partitions[1].leader_epoch = 6;
        m.handle_metadata(t0, id, Ok(md));
        let Some(Transmit::Fetch {
            partitions,
            params,
            session,
            ..
        }) = m.poll_transmit(t0)
        else {
            panic!("expected a Fetch");
        };
        let request = build_fetch(&partitions, 12, &params, &session);
        let sent: Vec<_> = request.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition, p.current_leader_epoch))
            .collect();
        assert_eq!(
            (session.id, session.epoch, &sent[..]),
            (7, 2, &[(1, 6)][..])
        );
    }

    #[test]
    fn session_errors_fall_back_to_a_full_fetch_at_once_losing_and_repeating_nothing() {
        for (code, next_session) in [
            (ErrorCode::FETCH_SESSION_ID_NOT_FOUND, (0, 0)),
            (ErrorCode::INVALID_FETCH_SESSION_EPOCH, (42, 0)),
            (ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR, (42, 0)),
        ] {
            let t0 = virtual_epoch();
            let mut m = machine(
                &plan(&[(0, 0, Some(6)), (1, 0, Some(6))]),
                &ReadOptions::default(),
                t0,
            );
            let leaders = [(0, 1), (1, 1)];
            let mut got = HashMap::new();
            let f = next_fetch(&mut m, t0, &leaders);
            m.handle_fetch(
                t0,
                f.id,
                in_session(
                    42,
                    vec![
                        records_of(0, wire(&[batch(0, 2)])),
                        records_of(1, wire(&[batch(0, 2)])),
                    ],
                ),
            );
            collect(&mut m, &mut got);
            let f = next_fetch(&mut m, t0, &leaders);
            assert_eq!((f.session, &f.sent[..]), ((42, 1), &[(0, 2), (1, 2)][..]));
            m.handle_fetch(t0, f.id, top_level_error(code));
            assert!(outputs(&mut m).is_empty(), "{code:?}");
            // No backoff, no metadata invalidated: a full fetch at once, from the positions.
            assert_eq!(m.poll_timeout(), None, "{code:?}");
            let f = next_fetch(&mut m, t0, &leaders);
            assert_eq!(f.session, next_session, "{code:?}");
            assert_eq!(f.sent, [(0, 2), (1, 2)], "{code:?}");
            m.handle_fetch(
                t0,
                f.id,
                in_session(
                    43,
                    vec![
                        records_of(0, wire(&[batch(2, 4)])),
                        records_of(1, wire(&[batch(2, 4)])),
                    ],
                ),
            );
            collect(&mut m, &mut got);
            assert!(m.is_finished(), "{code:?}");
            assert_eq!(got[&0], (0..6).collect::<Vec<_>>(), "{code:?}");
            assert_eq!(got[&1], (0..6).collect::<Vec<_>>(), "{code:?}");
        }
    }

    #[test]
    fn a_session_lost_again_before_an_incremental_answer_backs_off() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 0, Some(6))]), &ReadOptions::default(), t0);
        let leaders = [(0, 1)];
        let f = next_fetch(&mut m, t0, &leaders);
        m.handle_fetch(t0, f.id, in_session(42, vec![]));
        let f = next_fetch(&mut m, t0, &leaders);
        m.handle_fetch(
            t0,
            f.id,
            top_level_error(ErrorCode::FETCH_SESSION_ID_NOT_FOUND),
        );
        assert_eq!(
            m.poll_timeout(),
            None,
            "the first loss: a full fetch at once"
        );
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, (0, 0));
        m.handle_fetch(t0, f.id, in_session(43, vec![]));
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, (43, 1));
        m.handle_fetch(
            t0,
            f.id,
            top_level_error(ErrorCode::FETCH_SESSION_ID_NOT_FOUND),
        );
        assert_eq!(
            m.poll_timeout(),
            Some(t0 + 100 * MS),
            "lost again: backs off"
        );
        assert!(matches!(
            &transmits(&mut m, t0)[..],
            [Transmit::Invalidate { .. }]
        ));
        let t1 = t0 + 100 * MS;
        m.handle_timeout(t1);
        let f = next_fetch(&mut m, t1, &leaders);
        assert_eq!((f.session, &f.sent[..]), ((0, 0), &[(0, 0)][..]));
        m.handle_fetch(t1, f.id, in_session(44, vec![]));
        let f = next_fetch(&mut m, t1, &leaders);
        m.handle_fetch(
            t1,
            f.id,
            in_session(44, vec![records_of(0, wire(&[batch(0, 2)]))]),
        );
        assert_eq!(outputs(&mut m).len(), 1);
        // An incremental answer came in between: the next loss is cured at once again.
        let f = next_fetch(&mut m, t1, &leaders);
        assert_eq!(f.session, (44, 2));
        m.handle_fetch(
            t1,
            f.id,
            top_level_error(ErrorCode::INVALID_FETCH_SESSION_EPOCH),
        );
        assert_eq!(m.poll_timeout(), None);
    }

    #[test]
    fn a_session_error_on_a_full_fetch_or_a_lost_answer_backs_off() {
        let t0 = virtual_epoch();
        let mut m = machine(&plan(&[(0, 0, Some(6))]), &ReadOptions::default(), t0);
        let f = next_fetch(&mut m, t0, &[(0, 1)]);
        assert_eq!(f.session, (0, 0));
        // A session error to a full fetch can't be cured by another full fetch: retried.
        m.handle_fetch(
            t0,
            f.id,
            top_level_error(ErrorCode::FETCH_SESSION_ID_NOT_FOUND),
        );
        assert_eq!(m.poll_timeout(), Some(t0 + 100 * MS));
        assert!(matches!(
            &transmits(&mut m, t0)[..],
            [Transmit::Invalidate { .. }]
        ));
        let t1 = t0 + 100 * MS;
        m.handle_timeout(t1);
        let f = next_fetch(&mut m, t1, &[(0, 1)]);
        m.handle_fetch(
            t1,
            f.id,
            in_session(9, vec![records_of(0, wire(&[batch(0, 2)]))]),
        );
        assert_eq!(outputs(&mut m).len(), 1);
        let f = next_fetch(&mut m, t1, &[(0, 1)]);
        assert_eq!(f.session, (9, 1));
        // The connection broke: the epoch the broker has is unknown. Close and start over.
        m.handle_fetch(
            t1,
            f.id,
            Err(ErrorKind::ConnectionClosed {
                broker: "b:1".into(),
                reason: "reset".into(),
            }
            .into()),
        );
        assert!(matches!(
            &transmits(&mut m, t1)[..],
            [Transmit::Invalidate { .. }]
        ));
        let t2 = m.poll_timeout().unwrap();
        m.handle_timeout(t2);
        let f = next_fetch(&mut m, t2, &[(0, 1)]);
        assert_eq!((f.session, &f.sent[..]), ((9, 0), &[(0, 2)][..]));
    }

    #[test]
    fn without_a_session_every_fetch_is_full() {
        // The broker gives no session (id 0: sessions off, or its cache is full).
        let t0 = virtual_epoch();
        let mut m = machine(
            &plan(&[(0, 0, Some(4)), (1, 0, Some(4))]),
            &ReadOptions::default(),
            t0,
        );
        let leaders = [(0, 1), (1, 1)];
        let mut got = HashMap::new();
        for (round, from) in [(0, 0), (1, 2)] {
            let f = next_fetch(&mut m, t0, &leaders);
            assert_eq!(f.session, (0, 0), "round {round}");
            assert_eq!(f.sent, [(0, from), (1, 0)], "round {round}");
            m.handle_fetch(
                t0,
                f.id,
                in_session(0, vec![records_of(0, wire(&[batch(from, 2)]))]),
            );
            collect(&mut m, &mut got);
        }
        assert_eq!(got[&0], [0, 1, 2, 3]);
        // Sessions off in the options: sessionless fetches (epoch -1), always full.
        let options = ReadOptions::default().fetch_sessions(false);
        let mut m = machine(&plan(&[(0, 0, Some(4)), (1, 0, Some(4))]), &options, t0);
        for from in [0, 2] {
            let f = next_fetch(&mut m, t0, &leaders);
            assert_eq!(
                (f.session, &f.sent[..]),
                ((0, -1), &[(0, from), (1, 0)][..])
            );
            m.handle_fetch(
                t0,
                f.id,
                in_session(5, vec![records_of(0, wire(&[batch(from, 2)]))]),
            );
            let _ = outputs(&mut m);
        }
    }

    #[test]
    fn session_fields_on_the_wire_and_epochs_wrap_to_one() {
        assert_eq!(next_epoch(1), 2);
        assert_eq!(next_epoch(i32::MAX), 1);
        let mut parts = vec![
            requested("a", 1, 0),
            requested("b", 2, 1),
            requested("a", 1, 1),
        ];
        parts[0].unchanged = true;
        let session = SessionRequest {
            id: 3,
            epoch: 8,
            forgotten: vec![
                requested("b", 2, 4),
                requested("c", 3, 0),
                requested("b", 2, 5),
            ],
        };
        for version in [7, 12, 13, 17] {
            let request = build_fetch(&parts, version, &PARAMS, &session);
            assert_eq!((request.session_id, request.session_epoch), (3, 8));
            let sent: Vec<(String, Vec<i32>)> = request
                .topics
                .iter()
                .map(|t| {
                    (
                        t.topic.clone(),
                        t.partitions.iter().map(|p| p.partition).collect(),
                    )
                })
                .collect();
            assert_eq!(sent, [("b".to_owned(), vec![1]), ("a".to_owned(), vec![1])]);
            let forgotten: Vec<(Uuid, Vec<i32>)> = request
                .forgotten_topics_data
                .iter()
                .map(|t| (t.topic_id, t.partitions.clone()))
                .collect();
            assert_eq!(
                forgotten,
                [(Uuid([2; 16]), vec![4, 5]), (Uuid([3; 16]), vec![0])]
            );
            let mut buf = bytes::BytesMut::new();
            kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
            let back: FetchRequest = kseek_protocol::decode_exact(buf.freeze(), version).unwrap();
            assert_eq!(back.forgotten_topics_data.len(), 2, "v{version}");
            assert_eq!((back.session_id, back.session_epoch), (3, 8), "v{version}");
        }
        // Below v7 there are no sessions: every partition, no session fields.
        let request = build_fetch(&parts, 6, &PARAMS, &session);
        assert_eq!((request.session_id, request.session_epoch), (0, -1));
        assert!(request.forgotten_topics_data.is_empty());
        assert_eq!(
            request
                .topics
                .iter()
                .map(|t| t.partitions.len())
                .sum::<usize>(),
            3
        );
    }
}

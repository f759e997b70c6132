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
use std::time::Duration;

use kseek_protocol::messages::fetch::{
    FetchPartition, FetchRequest, FetchResponse, FetchTopic, ForgottenTopic, PartitionData,
};
use kseek_protocol::records::{AbortedTransaction, PartitionReader};
use kseek_protocol::{ApiKey, ErrorCode, Uuid};
use tokio::time::Instant;

use crate::backoff::{Backoff, Failing};
use crate::cluster::TopicMetadata;
use crate::error::{Error, ErrorKind, Result};
use crate::few::{find_from, FewMap};
use crate::plan::{IsolationLevel, Plan};
use crate::read::batch::{DataLoss, FetchedBatch, PartitionPosition};
use crate::read::options::{OutOfRange, ReadOptions};

mod leaders;
mod session;
#[cfg(test)]
pub(crate) mod tests;
mod transmit;
mod wire;

use session::FetchSession;
pub(crate) use session::{Requested, Sent, SessionRequest};
pub(crate) use transmit::{Chunk, FetchParams, Output, PlannedFetch, Transmit};
pub(crate) use wire::{build_fetch, decode_partition, fetch_version, DecodeFailure};

/// How long past its max wait a Fetch may go unanswered before the machine checks, in
/// Metadata from another broker, whether its partitions' leaders moved (a frozen or
/// unreachable leader answers nothing until the request timeout, 30 s by default).
pub(crate) const OVERDUE_AFTER: Duration = Duration::from_millis(500);

/// How often that check is made while a Fetch stays overdue.
pub(crate) const LEADER_CHECK_EVERY: Duration = Duration::from_millis(250);

/// How long a leader check may go unanswered before another one goes out beside it (the
/// broker it went to may have frozen too). Metadata is answered in milliseconds; the
/// request timeout (30 s by default) is far too long to wait for a new leader.
pub(crate) const LEADER_CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// The most leader checks in flight at once (one overdue beside a fresh one).
const LEADER_CHECKS_AT_ONCE: usize = 2;

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
    /// The leader checks in flight ([`Transmit::LeaderCheck`]) and when each was sent,
    /// oldest first (at most [`LEADER_CHECKS_AT_ONCE`]).
    leader_checks: Vec<(u64, Instant)>,
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
            leader_checks: Vec::new(),
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
                avoid: self.suspects(now),
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
                    avoid: self.suspects(now),
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
        if let Some(i) = self.leader_checks.iter().position(|&(c, _)| c == id) {
            self.leader_checks.remove(i);
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
                partition: p.partition,
                sent: Sent {
                    topic_id: if p.topic_id.is_zero() {
                        topic.topic_id
                    } else {
                        p.topic_id
                    },
                    position: p.position,
                    leader_epoch: pm.leader_epoch,
                    max_bytes: p.max_bytes,
                },
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
            self.transmits.push_back(Transmit::Fetch(PlannedFetch {
                id,
                leader,
                partitions: requested,
                params: self.params,
                session,
            }));
        }
        Ok(())
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
                            r.sent.topic_id == topic.topic_id
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
        if self.parts[idx].done || self.parts[idx].position != r.sent.position {
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

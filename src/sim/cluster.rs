//! The simulated cluster: partition logs of real record batches, answering Metadata, Fetch
//! and ListOffsets as a broker does, with the schedule's faults.

use super::schedule::{Fault, LossPoint, PartitionSpec, Schedule, Trigger};
use super::stats::SimStats;
use super::*;

/// A record as it was written: offset and value.
pub(crate) type Written = (i64, Option<Bytes>);

/// One batch of a partition log.
#[derive(Debug, Clone)]
pub(super) struct LogBatch {
    /// The batch's base offset.
    pub(super) base: i64,
    /// Its last offset + 1.
    pub(super) next: i64,
    /// The batch on the wire.
    pub(super) bytes: Bytes,
}

/// One partition as the cluster holds it.
#[derive(Debug, Clone)]
pub(super) struct SimPartition {
    /// The batches not deleted yet.
    pub(super) batches: Vec<LogBatch>,
    /// Every record ever written, in offset order, and whether its transaction aborted.
    pub(super) written: Vec<(Written, bool)>,
    /// The aborted transactions: producer id, first offset, offset of the ABORT marker.
    pub(super) aborted: Vec<(i64, i64, i64)>,
    pub(super) log_start: i64,
    /// The log end offset, which is also the high watermark (everything is replicated).
    pub(super) log_end: i64,
    pub(super) leader: i32,
    pub(super) leader_epoch: i32,
    /// What Metadata answers while `stale_left > 0`: the leader (-1 in an election) and epoch.
    pub(super) shown: (i32, i32),
    pub(super) stale_left: u32,
    pub(super) not_leader_left: u32,
    pub(super) fenced_left: u32,
    pub(super) newer_epoch_left: u32,
    pub(super) unknown_fetch_left: u32,
    /// A new leader's high watermark, behind the log end, for this many more Fetch answers.
    pub(super) lagging_hw: i64,
    pub(super) lagging_left: u32,
}

/// An answer on its way back: when it arrives, from which broker, and whether the connection
/// broke with it (every other request in flight on that connection then fails too).
#[derive(Debug)]
pub(crate) struct Delivery<T> {
    /// The virtual time it arrives.
    pub(crate) at: Duration,
    /// The broker it was sent to.
    pub(crate) broker: i32,
    /// The answer, or how the request failed.
    pub(crate) result: Result<T>,
    /// The connection to `broker` broke.
    pub(crate) closes_connection: bool,
}

/// What a request meets before the broker handles it.
pub(super) struct Fate {
    pub(super) loss: Option<LossPoint>,
    pub(super) slow: Duration,
    pub(super) empty: Option<bool>,
    pub(super) jitter: Duration,
}

/// A simulated cluster of one topic; see the module docs.
#[derive(Debug)]
pub(crate) struct SimCluster {
    pub(super) topic: Arc<str>,
    /// [`TOPIC_ID`], or zero for brokers without topic ids.
    pub(super) topic_id: Uuid,
    pub(super) brokers: Vec<Arc<str>>,
    pub(super) parts: Vec<SimPartition>,
    /// Faults not yet in effect.
    pub(super) pending: Vec<(Trigger, Fault)>,
    pub(super) armed_loss: VecDeque<LossPoint>,
    pub(super) armed_slow: VecDeque<Duration>,
    pub(super) armed_empty: VecDeque<bool>,
    pub(super) unknown_metadata_left: u32,
    pub(super) blackout: Option<Duration>,
    pub(super) outage: Option<(Duration, Duration)>,
    pub(super) rng: u64,
    /// The fetch sessions the brokers hold.
    pub(super) sessions: Vec<SimSession>,
    /// The last session id given out.
    pub(super) last_session_id: i32,
    /// The brokers open no sessions (`max.incremental.fetch.session.cache.slots=0`).
    pub(super) sessions_off: bool,
    /// Counts of this cluster's answers and faults.
    pub(crate) stats: SimStats,
}

/// A fetch session a simulated broker holds (KIP-227).
#[derive(Debug)]
pub(super) struct SimSession {
    pub(super) broker: i32,
    pub(super) id: i32,
    /// The epoch the next incremental fetch must carry.
    pub(super) epoch: i32,
    /// The partitions it holds, in order: the topic's name and id, the fields last sent.
    pub(super) held: Vec<(String, Uuid, FetchPartition)>,
}

impl SimCluster {
    /// The cluster of `schedule`: its logs written, its faults pending.
    pub(crate) fn new(schedule: &Schedule) -> SimCluster {
        let brokers = i32::from(schedule.brokers.max(1));
        let parts = schedule
            .partitions
            .iter()
            .enumerate()
            .map(|(p, spec)| build_partition(p as i32, spec, brokers))
            .collect();
        SimCluster {
            topic: Arc::from(TOPIC),
            topic_id: if schedule.topic_ids || schedule.fetch_version >= 13 {
                TOPIC_ID
            } else {
                Uuid::ZERO
            },
            brokers: (0..brokers)
                .map(|b| Arc::from(format!("sim-{b}:9092").as_str()))
                .collect(),
            parts,
            pending: schedule.faults.clone(),
            armed_loss: VecDeque::new(),
            armed_slow: VecDeque::new(),
            armed_empty: VecDeque::new(),
            unknown_metadata_left: 0,
            blackout: schedule.blackout,
            outage: schedule.outage,
            rng: schedule.seed | 1,
            sessions: Vec::new(),
            last_session_id: 0,
            sessions_off: schedule.seed.is_multiple_of(5),
            stats: SimStats::default(),
        }
    }

    /// The plan a resolution of the whole topic would give: the schedule's ranges inside the
    /// logs, with the log start, high watermark and epoch of now.
    pub(crate) fn plan(&self, schedule: &Schedule) -> Plan {
        let partitions = self
            .parts
            .iter()
            .zip(&schedule.partitions)
            .enumerate()
            .map(|(p, (part, spec))| {
                let (start, end) = plan_range(part.log_start, part.log_end, spec);
                PartitionPlan {
                    topic: TOPIC.to_owned(),
                    topic_id: self.topic_id,
                    partition: p as i32,
                    start,
                    end: Some(end),
                    log_start_offset: part.log_start,
                    last_fetchable_offset: part.log_end,
                    leader_epoch: part.leader_epoch,
                    adjusted: None,
                }
            })
            .collect();
        Plan {
            partitions,
            isolation: if schedule.read_committed {
                IsolationLevel::READ_COMMITTED
            } else {
                IsolationLevel::READ_UNCOMMITTED
            },
        }
    }

    /// Every record written to `partition` that a read at `isolation` hands out (no aborted
    /// one under read_committed), deleted ones included.
    pub(crate) fn written(&self, partition: i32, isolation: IsolationLevel) -> Vec<Written> {
        let committed = isolation == IsolationLevel::READ_COMMITTED;
        self.part(partition).map_or(Vec::new(), |p| {
            p.written
                .iter()
                .filter(|(_, aborted)| !(committed && *aborted))
                .map(|(w, _)| w.clone())
                .collect()
        })
    }

    /// The log start offset of every partition now.
    pub(crate) fn log_starts(&self) -> Vec<i64> {
        self.parts.iter().map(|p| p.log_start).collect()
    }

    /// The address of broker `id`.
    pub(crate) fn broker_name(&self, id: i32) -> Arc<str> {
        usize::try_from(id)
            .ok()
            .and_then(|b| self.brokers.get(b))
            .cloned()
            .unwrap_or_else(|| Arc::from(format!("sim-{id}:9092").as_str()))
    }

    /// A Metadata request for `topics` at virtual time `now`, to a broker of the cluster's
    /// choosing.
    pub(crate) fn metadata(
        &mut self,
        now: Duration,
        topics: &[Arc<str>],
    ) -> Delivery<Vec<TopicMetadata>> {
        self.stats.metadata += 1;
        let broker = (self.next_random() % self.brokers.len() as u64) as i32;
        self.request(now, broker, ApiKey::METADATA, false, |sim, _| {
            let name = sim.broker_name(broker).to_string();
            let mut answer = Vec::new();
            for topic in topics {
                if **topic != *sim.topic {
                    return Err(ErrorKind::UnknownTopic {
                        topic: topic.to_string(),
                        broker: name,
                    }
                    .into());
                }
                if sim.unknown_metadata_left > 0 {
                    sim.unknown_metadata_left -= 1;
                    sim.stats.unknown_topic += 1;
                    return Err(ErrorKind::UnknownTopic {
                        topic: topic.to_string(),
                        broker: name,
                    }
                    .into());
                }
                let mut partitions = Vec::new();
                for (p, part) in sim.parts.iter_mut().enumerate() {
                    let (leader_id, leader_epoch) = if part.stale_left > 0 {
                        part.stale_left -= 1;
                        sim.stats.stale_metadata += 1;
                        part.shown
                    } else {
                        (part.leader, part.leader_epoch)
                    };
                    partitions.push(PartitionMetadata {
                        partition: p as i32,
                        leader_id,
                        leader_epoch,
                        error_code: if leader_id < 0 {
                            ErrorCode::LEADER_NOT_AVAILABLE
                        } else {
                            ErrorCode::NONE
                        },
                    });
                }
                answer.push(TopicMetadata {
                    name: topic.to_string(),
                    topic_id: sim.topic_id,
                    partitions,
                });
            }
            Ok((answer, Duration::ZERO))
        })
    }

    /// A Fetch sent to broker `broker` at virtual time `now`, at `version`. The request and
    /// the answer go through their wire encoding.
    pub(crate) fn fetch(
        &mut self,
        now: Duration,
        broker: i32,
        request: &FetchRequest,
        version: i16,
    ) -> Delivery<(Arc<str>, i16, FetchResponse)> {
        self.stats.fetches += 1;
        self.request(now, broker, ApiKey::FETCH, true, |sim, empty| {
            let name = sim.broker_name(broker);
            let protocol = |source| ErrorKind::Protocol {
                broker: name.to_string(),
                source,
            };
            let request: FetchRequest = round_trip(request, version).map_err(protocol)?;
            let (response, wait) = sim.answer_fetch(broker, &request, version, empty);
            let response: FetchResponse = round_trip(&response, version).map_err(protocol)?;
            Ok(((name, version, response), wait))
        })
    }

    /// A ListOffsets request for the earliest offset of `partition` to broker `broker` (the
    /// leader as the client's metadata has it), at virtual time `now`.
    pub(crate) fn list_earliest(
        &mut self,
        now: Duration,
        broker: i32,
        topic: &str,
        partition: i32,
    ) -> Delivery<i64> {
        self.stats.list_offsets += 1;
        self.request(now, broker, ApiKey::LIST_OFFSETS, false, |sim, _| {
            let name = sim.broker_name(broker).to_string();
            let error = |code| {
                Error::from(ErrorKind::Partition {
                    broker: name.clone(),
                    api: ApiKey::LIST_OFFSETS,
                    topic: topic.to_owned(),
                    partition,
                    code,
                })
            };
            if topic != &*sim.topic {
                return Err(error(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION));
            }
            let Some((leader, log_start)) = sim.part(partition).map(|p| (p.leader, p.log_start))
            else {
                return Err(error(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION));
            };
            if leader != broker {
                sim.stats.not_leader += 1;
                return Err(error(ErrorCode::NOT_LEADER_OR_FOLLOWER));
            }
            Ok((log_start, Duration::ZERO))
        })
    }

    /// The leader of `partition` now (0 for a partition the cluster doesn't have).
    pub(crate) fn leader(&self, partition: i32) -> i32 {
        self.part(partition).map_or(0, |p| p.leader)
    }

    fn part(&self, partition: i32) -> Option<&SimPartition> {
        usize::try_from(partition)
            .ok()
            .and_then(|p| self.parts.get(p))
    }

    /// One request through the fault schedule: faults due take effect, then the connection
    /// faults and delays armed for it decide what comes back and when. `work` answers it and
    /// says how long the broker held it.
    fn request<T>(
        &mut self,
        now: Duration,
        broker: i32,
        api: ApiKey,
        is_fetch: bool,
        work: impl FnOnce(&mut SimCluster, Option<bool>) -> Result<(T, Duration)>,
    ) -> Delivery<T> {
        let index = self.stats.requests;
        self.stats.requests += 1;
        self.activate(index, now);
        let name = self.broker_name(broker).to_string();
        let down = self
            .outage
            .is_some_and(|(from, to)| (from..to).contains(&now));
        if down {
            // The brokers restart: their fetch sessions are gone.
            self.sessions.clear();
        }
        if self.blackout.is_some_and(|t| t <= now) || down {
            self.stats.blackout += u64::from(!down);
            self.stats.outage += u64::from(down);
            return Delivery {
                at: now + Duration::from_millis(1),
                broker,
                result: Err(ErrorKind::Io {
                    broker: name,
                    source: std::io::ErrorKind::ConnectionRefused.into(),
                }
                .into()),
                closes_connection: true,
            };
        }
        let fate = Fate {
            loss: self.armed_loss.pop_front(),
            slow: self.armed_slow.pop_front().unwrap_or_default(),
            empty: if is_fetch {
                self.armed_empty.pop_front()
            } else {
                None
            },
            jitter: Duration::from_millis(1 + self.next_random() % 20),
        };
        let closed = |reason: &str| {
            Error::from(ErrorKind::ConnectionClosed {
                broker: name.clone(),
                reason: reason.to_owned(),
            })
        };
        match fate.loss {
            Some(LossPoint::Before) => {
                self.stats.loss_before += 1;
                return Delivery {
                    at: now,
                    broker,
                    result: Err(closed("sim: closed before the request was written")),
                    closes_connection: true,
                };
            }
            Some(LossPoint::During) => {
                self.stats.loss_during += 1;
                return Delivery {
                    at: now + fate.jitter / 2,
                    broker,
                    result: Err(ErrorKind::Io {
                        broker: name.clone(),
                        source: std::io::ErrorKind::ConnectionReset.into(),
                    }
                    .into()),
                    closes_connection: true,
                };
            }
            _ => {}
        }
        let result = work(self, fate.empty);
        let wait = result.as_ref().map_or(Duration::ZERO, |(_, wait)| *wait);
        let latency = fate.jitter + wait + fate.slow;
        if fate.loss == Some(LossPoint::After) {
            self.stats.loss_after += 1;
            return Delivery {
                at: now + latency.min(REQUEST_TIMEOUT),
                broker,
                result: Err(closed("sim: closed before the answer arrived")),
                closes_connection: true,
            };
        }
        if latency > REQUEST_TIMEOUT {
            self.stats.timeouts += 1;
            return Delivery {
                at: now + REQUEST_TIMEOUT,
                broker,
                result: Err(ErrorKind::Timeout {
                    broker: name,
                    api,
                    after: REQUEST_TIMEOUT,
                }
                .into()),
                closes_connection: false,
            };
        }
        if !fate.slow.is_zero() {
            self.stats.slow += 1;
        }
        Delivery {
            at: now + latency,
            broker,
            result: result.map(|(answer, _)| answer),
            closes_connection: false,
        }
    }

    /// Puts into effect the faults due at request `index` and time `now`.
    fn activate(&mut self, index: u64, now: Duration) {
        let mut i = 0;
        while i < self.pending.len() {
            let due = match self.pending[i].0 {
                Trigger::Request(n) => u64::from(n) <= index,
                Trigger::Time(t) => t <= now,
            };
            if due {
                let (_, fault) = self.pending.remove(i);
                self.apply(fault);
            } else {
                i += 1;
            }
        }
    }

    fn apply(&mut self, fault: Fault) {
        let brokers = self.brokers.len() as i32;
        let count = self.parts.len();
        let part = |p: u8| usize::from(p) % count;
        match fault {
            Fault::LeaderMove {
                partition,
                to,
                stale_metadata,
                election,
                lagging_fetches,
            } => {
                let p = &mut self.parts[part(partition)];
                let middle = p.log_start + (p.log_end - p.log_start) / 2;
                p.lagging_hw = p
                    .batches
                    .iter()
                    .find(|b| b.next > middle)
                    .map_or(p.log_end, |b| b.base.max(p.log_start));
                p.lagging_left = u32::from(lagging_fetches);
                let mut to = i32::from(to) % brokers;
                if to == p.leader {
                    to = (to + 1) % brokers;
                }
                p.shown = if election {
                    (-1, p.leader_epoch)
                } else {
                    (p.leader, p.leader_epoch)
                };
                p.stale_left = u32::from(stale_metadata);
                p.leader = to;
                p.leader_epoch += 1;
                self.stats.leader_moves += 1;
            }
            Fault::NotLeaderStorm { partition, fetches } => {
                self.parts[part(partition)].not_leader_left += u32::from(fetches);
            }
            Fault::FencedStorm {
                partition,
                fetches,
                newer,
            } => {
                let p = &mut self.parts[part(partition)];
                if newer {
                    p.newer_epoch_left += u32::from(fetches);
                } else {
                    p.fenced_left += u32::from(fetches);
                }
            }
            Fault::UnknownTopicOrPartition {
                partition,
                fetches,
                metadata,
            } => {
                self.parts[part(partition)].unknown_fetch_left += u32::from(fetches);
                self.unknown_metadata_left += u32::from(metadata);
            }
            Fault::ConnectionLoss(point) => self.armed_loss.push_back(point),
            Fault::Retention {
                partition,
                advance,
                mid_batch,
            } => {
                let p = &mut self.parts[part(partition)];
                let left = p.log_end - p.log_start;
                let mut target = p.log_start + left * i64::from(advance.min(1000)) / 1000;
                if !mid_batch {
                    // Whole segments go: the start of the batch holding the target.
                    if let Some(b) = p.batches.iter().find(|b| b.next > target) {
                        target = target.min(b.base).max(p.log_start);
                    }
                }
                if target > p.log_start {
                    p.log_start = target;
                    p.batches.retain(|b| b.next > target);
                    self.stats.retention += 1;
                }
            }
            Fault::Empty { throttled } => self.armed_empty.push_back(throttled),
            Fault::Slow { extra_ms } => self
                .armed_slow
                .push_back(Duration::from_millis(u64::from(extra_ms))),
            Fault::SessionLoss { epoch: false } => self.sessions.clear(),
            Fault::SessionLoss { epoch: true } => {
                for s in &mut self.sessions {
                    s.epoch = s.epoch.wrapping_add(1).max(1);
                }
            }
        }
    }

    /// The fetch session part of a Fetch to `broker` (KIP-227): the partitions to answer
    /// for, the session id to answer with and whether the answer is incremental; or the
    /// session error.
    fn fetch_session(
        &mut self,
        broker: i32,
        request: &FetchRequest,
        version: i16,
    ) -> std::result::Result<(Vec<FetchTopic>, i32, bool), ErrorCode> {
        let same = |name: &str, id: Uuid, t: &str, t_id: Uuid| {
            if version >= 13 {
                id == t_id
            } else {
                name == t
            }
        };
        let id = request.session_id;
        if request.session_epoch <= 0 {
            if id != 0 {
                // Closing a session (with epoch 0 also opening a new one).
                self.sessions
                    .retain(|s| !(s.broker == broker && s.id == id));
            }
            if request.session_epoch < -1 {
                self.stats.session_epoch += 1;
                return Err(ErrorCode::INVALID_FETCH_SESSION_EPOCH);
            }
            if request.session_epoch == -1 || self.sessions_off || version < 7 {
                return Ok((request.topics.clone(), 0, false));
            }
            self.last_session_id += 1;
            let held = request
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| (t.topic.clone(), t.topic_id, p.clone()))
                })
                .collect();
            self.sessions.push(SimSession {
                broker,
                id: self.last_session_id,
                epoch: 1,
                held,
            });
            return Ok((request.topics.clone(), self.last_session_id, false));
        }
        let Some(session) = self
            .sessions
            .iter_mut()
            .find(|s| s.broker == broker && s.id == id)
        else {
            self.stats.session_not_found += 1;
            return Err(ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
        };
        if session.epoch != request.session_epoch {
            self.stats.session_epoch += 1;
            return Err(ErrorCode::INVALID_FETCH_SESSION_EPOCH);
        }
        session.epoch = if session.epoch == i32::MAX {
            1
        } else {
            session.epoch + 1
        };
        for t in &request.topics {
            for p in &t.partitions {
                let found = session.held.iter_mut().find(|(name, tid, q)| {
                    same(name, *tid, &t.topic, t.topic_id) && q.partition == p.partition
                });
                match found {
                    Some((_, _, q)) => *q = p.clone(),
                    None => session.held.push((t.topic.clone(), t.topic_id, p.clone())),
                }
            }
        }
        for f in &request.forgotten_topics_data {
            session.held.retain(|(name, tid, q)| {
                !(same(name, *tid, &f.topic, f.topic_id) && f.partitions.contains(&q.partition))
            });
        }
        let mut topics: Vec<FetchTopic> = Vec::new();
        for (name, tid, p) in &session.held {
            match topics
                .iter_mut()
                .find(|t| same(&t.topic, t.topic_id, name, *tid))
            {
                Some(t) => t.partitions.push(p.clone()),
                None => topics.push(FetchTopic {
                    topic: name.clone(),
                    topic_id: *tid,
                    partitions: vec![p.clone()],
                    ..FetchTopic::default()
                }),
            }
        }
        self.stats.incremental += 1;
        Ok((topics, session.id, true))
    }

    /// The broker's answer to a Fetch, and how long it held it (the max wait when there was
    /// nothing to send).
    fn answer_fetch(
        &mut self,
        broker: i32,
        request: &FetchRequest,
        version: i16,
        empty: Option<bool>,
    ) -> (FetchResponse, Duration) {
        let (topics, session_id, incremental) = match self.fetch_session(broker, request, version) {
            Ok(session) => session,
            Err(code) => {
                let response = FetchResponse {
                    error_code: code.0,
                    ..FetchResponse::default()
                };
                return (response, Duration::ZERO);
            }
        };
        if empty == Some(true) {
            self.stats.throttled += 1;
            let response = FetchResponse {
                throttle_time_ms: 50,
                session_id,
                ..FetchResponse::default()
            };
            return (response, Duration::ZERO);
        }
        let max_wait = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0));
        // What is left of the response's max bytes, and whether the next partition with data
        // gets at least one whole batch (KIP-74).
        let mut left = usize::try_from(request.max_bytes).unwrap_or(0);
        let mut min_one = true;
        let mut any_error = false;
        let mut any_bytes = false;
        let mut responses = Vec::new();
        for t in &topics {
            let known = if version >= 13 {
                t.topic_id == self.topic_id && !t.topic_id.is_zero()
            } else {
                *t.topic == *self.topic
            };
            let mut out = FetchableTopicResponse {
                topic: t.topic.clone(),
                topic_id: t.topic_id,
                ..FetchableTopicResponse::default()
            };
            for fp in &t.partitions {
                let mut data = PartitionData {
                    partition_index: fp.partition,
                    records: Some(Bytes::new()),
                    ..PartitionData::default()
                };
                let idx = usize::try_from(fp.partition).ok();
                let part = idx.filter(|_| known).and_then(|i| self.parts.get_mut(i));
                let Some(p) = part else {
                    data.error_code = if version >= 13 {
                        ErrorCode::UNKNOWN_TOPIC_ID.0
                    } else {
                        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
                    };
                    self.stats.unknown_topic += 1;
                    any_error = true;
                    out.partitions.push(data);
                    continue;
                };
                data.high_watermark = p.log_end;
                data.last_stable_offset = p.log_end;
                data.log_start_offset = p.log_start;
                if request.isolation_level == IsolationLevel::READ_COMMITTED {
                    // The aborted transactions the answer's records may hold: not over before
                    // the fetch offset (their markers are all written: the LSO is the HW).
                    let aborted = p
                        .aborted
                        .iter()
                        .filter(|(_, _, marker)| *marker >= fp.fetch_offset)
                        .map(|&(producer_id, first_offset, _)| FetchAbortedTransaction {
                            producer_id,
                            first_offset,
                            ..FetchAbortedTransaction::default()
                        })
                        .collect();
                    data.aborted_transactions = Some(aborted);
                } else {
                    data.aborted_transactions = None;
                }
                let stats = &mut self.stats;
                let code = if use_one(&mut p.unknown_fetch_left, &mut stats.unknown_topic) {
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                } else if use_one(&mut p.fenced_left, &mut stats.fenced) {
                    ErrorCode::FENCED_LEADER_EPOCH
                } else if use_one(&mut p.newer_epoch_left, &mut stats.unknown_leader_epoch) {
                    ErrorCode::UNKNOWN_LEADER_EPOCH
                } else if use_one(&mut p.not_leader_left, &mut stats.not_leader) {
                    ErrorCode::NOT_LEADER_OR_FOLLOWER
                } else if fp.current_leader_epoch >= 0 && fp.current_leader_epoch < p.leader_epoch {
                    stats.fenced += 1;
                    ErrorCode::FENCED_LEADER_EPOCH
                } else if fp.current_leader_epoch > p.leader_epoch {
                    stats.unknown_leader_epoch += 1;
                    ErrorCode::UNKNOWN_LEADER_EPOCH
                } else if broker != p.leader {
                    stats.not_leader += 1;
                    ErrorCode::NOT_LEADER_OR_FOLLOWER
                } else if fp.fetch_offset < p.log_start || fp.fetch_offset > p.log_end {
                    stats.out_of_range += 1;
                    ErrorCode::OFFSET_OUT_OF_RANGE
                } else {
                    ErrorCode::NONE
                };
                if !code.is_ok() {
                    data.error_code = code.0;
                    if code != ErrorCode::OFFSET_OUT_OF_RANGE && version >= 12 {
                        data.current_leader = LeaderIdAndEpoch {
                            leader_id: p.leader,
                            leader_epoch: p.leader_epoch,
                            ..LeaderIdAndEpoch::default()
                        };
                    }
                    any_error = true;
                    out.partitions.push(data);
                    continue;
                }
                let limit = usize::try_from(fp.partition_max_bytes)
                    .unwrap_or(0)
                    .min(left);
                let high_watermark = if p.lagging_left > 0 {
                    p.lagging_left -= 1;
                    self.stats.lagging_high_watermark += 1;
                    p.lagging_hw
                } else {
                    p.log_end
                };
                data.high_watermark = high_watermark;
                data.last_stable_offset = high_watermark;
                let (records, cut, over) =
                    read_log(p, fp.fetch_offset, high_watermark, limit, min_one);
                self.stats.cut += u64::from(cut);
                self.stats.whole_over_limit += u64::from(over);
                if empty == Some(false) {
                    data.records = Some(Bytes::new());
                } else {
                    left = left.saturating_sub(records.len());
                    if !records.is_empty() {
                        min_one = false;
                        any_bytes = true;
                    }
                    data.records = Some(records);
                }
                out.partitions.push(data);
            }
            responses.push(out);
        }
        if empty == Some(false) {
            self.stats.empty += 1;
        }
        let wait = if any_bytes || any_error {
            Duration::ZERO
        } else {
            max_wait
        };
        if incremental {
            // An incremental answer leaves out the partitions with nothing new (KIP-227).
            for t in &mut responses {
                t.partitions.retain(|p| {
                    p.error_code != 0 || p.records.as_ref().is_some_and(|r| !r.is_empty())
                });
            }
            responses.retain(|t| !t.partitions.is_empty());
        }
        let response = FetchResponse {
            responses,
            session_id,
            ..FetchResponse::default()
        };
        (response, wait)
    }

    /// xorshift64: deterministic per schedule.
    fn next_random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }
}

/// The bytes a broker returns for a fetch at `offset` with `limit` bytes: from the batch
/// holding the offset up to the high watermark, cut at the limit (mid-batch), or the whole
/// first batch when `min_one` and it alone is larger. Also whether the answer ends in a
/// partial batch and whether a whole batch went over the limit.
/// Uses up one of the answers a fault has `left` and counts it in `count`; false when none
/// is left.
fn use_one(left: &mut u32, count: &mut u64) -> bool {
    if *left == 0 {
        return false;
    }
    *left -= 1;
    *count += 1;
    true
}

pub(super) fn read_log(
    p: &SimPartition,
    offset: i64,
    high_watermark: i64,
    limit: usize,
    min_one: bool,
) -> (Bytes, bool, bool) {
    let readable = p.batches.partition_point(|b| b.next <= high_watermark);
    let Some(first) = p.batches[..readable].iter().position(|b| b.next > offset) else {
        return (Bytes::new(), false, false);
    };
    let batches = &p.batches[first..readable];
    let first_len = batches[0].bytes.len();
    let over = min_one && first_len > limit;
    let limit = if over { first_len } else { limit };
    let mut out = BytesMut::new();
    let mut cut = false;
    for b in batches {
        let room = limit - out.len();
        if room == 0 {
            break;
        }
        if b.bytes.len() > room {
            out.extend_from_slice(&b.bytes[..room]);
            cut = true;
            break;
        }
        out.extend_from_slice(&b.bytes);
    }
    (out.freeze(), cut, over)
}

/// Encodes `message` at `version` and decodes it again: what the other side would see.
pub(super) fn round_trip<M: Message>(message: &M, version: i16) -> kseek_protocol::Result<M> {
    let mut buf = BytesMut::new();
    message.encode(&mut buf, version)?;
    decode_exact(buf.freeze(), version)
}

/// The range a plan reads of a log `[log_start, log_end)`, as `spec` places it.
pub(super) fn plan_range(log_start: i64, log_end: i64, spec: &PartitionSpec) -> (i64, i64) {
    let len = log_end - log_start;
    let start = log_start + len * i64::from(spec.start.min(1000)) / 1000;
    let end = start + (log_end - start) * i64::from(spec.len.min(1000)) / 1000;
    (start, end)
}

/// Writes the log of partition `p` as `spec` says.
pub(super) fn build_partition(p: i32, spec: &PartitionSpec, brokers: i32) -> SimPartition {
    let epoch = FIRST_EPOCH + p;
    let mut next = spec.log_start;
    let mut batches = Vec::new();
    let mut written = Vec::new();
    let mut aborted = Vec::new();
    for (i, b) in spec.batches.iter().enumerate() {
        let base = next;
        let step = if b.gap { 2 } else { 1 };
        let mut builder = RecordBatchBuilder::new(base, BASE_TIMESTAMP + base * 10)
            .partition_leader_epoch(epoch)
            .compression(if b.compressed {
                compressed()
            } else {
                Compression::None
            });
        // One producer per transaction.
        let producer_id = 1_000 + i as i64;
        if b.aborted.is_some() {
            builder = builder.producer(producer_id, 0, 0).transactional(true);
        }
        let n = i32::from(b.records);
        for i in 0..n {
            let delta = i * step;
            let offset = base + i64::from(delta);
            let mut value = format!("{p}:{offset}:").into_bytes();
            value.resize(value.len() + usize::from(b.value_len), b'x');
            builder.push(NewRecord::new(delta, i64::from(delta) * 10).value(&value));
            written.push(((offset, Some(Bytes::from(value))), b.aborted == Some(true)));
        }
        // With a gap, compaction also removed the batch's last offset; a batch compaction
        // emptied keeps two offsets.
        let last_delta = if n == 0 { 1 } else { (n - 1) * step } + i32::from(b.gap);
        builder = builder.last_offset_delta(last_delta);
        next = base + i64::from(last_delta) + 1;
        let bytes = builder.build().expect("a simulated batch encodes");
        batches.push(LogBatch { base, next, bytes });
        if let Some(abort) = b.aborted {
            let kind = if abort {
                aborted.push((producer_id, base, next));
                ControlRecordType::ABORT
            } else {
                ControlRecordType::COMMIT
            };
            let marker = RecordBatchBuilder::control_marker(
                next,
                BASE_TIMESTAMP + next * 10,
                producer_id,
                0,
                kind,
                0,
            )
            .partition_leader_epoch(epoch);
            let bytes = marker.build().expect("a simulated marker encodes");
            batches.push(LogBatch {
                base: next,
                next: next + 1,
                bytes,
            });
            next += 1;
        }
    }
    let leader = i32::from(spec.leader) % brokers;
    SimPartition {
        batches,
        written,
        aborted,
        log_start: spec.log_start,
        log_end: next,
        leader,
        leader_epoch: epoch,
        shown: (leader, epoch),
        stale_left: 0,
        not_leader_left: 0,
        fenced_left: 0,
        newer_epoch_left: 0,
        unknown_fetch_left: 0,
        lagging_hw: next,
        lagging_left: 0,
    }
}

/// The codec of a compressed simulated batch: LZ4 where the build has it.
pub(super) fn compressed() -> Compression {
    if cfg!(feature = "lz4") {
        Compression::Lz4
    } else if cfg!(feature = "gzip") {
        Compression::Gzip
    } else {
        Compression::None
    }
}

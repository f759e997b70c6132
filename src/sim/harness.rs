//! The harness: the read machine against the simulated cluster, in virtual time.

use super::check::{Budget, Outcome};
use super::cluster::{Delivery, SimCluster};
use super::schedule::Schedule;
use super::*;

/// The first wait of the read's retries.
pub(crate) const RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait of the read's retries.
pub(crate) const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// The retry deadline of a read while brokers come back: far beyond what the faults of a
/// schedule can cost, so giving up is a bug.
pub(crate) const PATIENT_DEADLINE: Duration = Duration::from_secs(600);
/// The retry deadline of a read whose brokers all go away for good: it must give up by it.
pub(crate) const BLACKOUT_DEADLINE: Duration = Duration::from_secs(10);
/// How long the client's metadata cache keeps an entry (`ClientConfig::metadata_max_age`).
pub(super) const METADATA_MAX_AGE: Duration = Duration::from_secs(300);

/// An answer on its way to the machine.
pub(super) enum Answer {
    Metadata(u64, Result<Vec<TopicMetadata>>),
    Fetch(u64, Result<(Arc<str>, i16, FetchResponse)>),
    ListEarliest(u64, Result<i64>),
}

/// A request in flight: when its answer arrives, on which broker's connection (-1 for an
/// answer from the client's cache), in what order it was sent.
pub(super) struct InFlight {
    pub(super) at: Duration,
    pub(super) broker: i32,
    pub(super) seq: u64,
    pub(super) closes_connection: bool,
    pub(super) answer: Answer,
    /// For a Fetch, its leader.
    pub(super) fetch_to: Option<i32>,
    /// The partitions it is about (Fetch and ListOffsets).
    pub(super) partitions: Vec<i32>,
    /// When it was sent.
    pub(super) sent: Duration,
}

impl Answer {
    /// The same request failed because its connection broke.
    fn closed(&mut self, broker: &str) {
        let error = || {
            Error::from(ErrorKind::ConnectionClosed {
                broker: broker.to_owned(),
                reason: "sim: another request on the connection lost it".to_owned(),
            })
        };
        match self {
            Answer::Metadata(_, r) => *r = Err(error()),
            Answer::Fetch(_, r) => *r = Err(error()),
            Answer::ListEarliest(_, r) => *r = Err(error()),
        }
    }
}

/// What one simulated read did: the outcome for [`check`], the cluster after it, its plan.
pub(crate) struct Run {
    pub(crate) outcome: Outcome,
    pub(crate) cluster: SimCluster,
    pub(crate) plan: Plan,
    pub(crate) retry_deadline: Duration,
}

/// Reads the plan of `schedule` with the read machine against its simulated cluster: a
/// deterministic loop in virtual time that makes the requests the machine asks for (Metadata
/// from a cache the machine invalidates, as the client's), delivers the answers in the order
/// they arrive (so across leaders, not the order they were sent), wakes the machine at its
/// timeouts, and records what it hands out. Stops when the machine is finished, or after
/// `limit`'s steps or past its virtual time.
pub(crate) fn run(schedule: &Schedule, limit: Budget) -> Run {
    let mut cluster = SimCluster::new(schedule);
    let plan = cluster.plan(schedule);
    let options = &schedule.options;
    let retry_deadline = if schedule.blackout.is_some() {
        BLACKOUT_DEADLINE
    } else {
        PATIENT_DEADLINE
    };
    let backoff = Backoff::new(RETRY_BACKOFF, RETRY_BACKOFF_MAX, retry_deadline);
    // Only differences from `base` matter to the machine: the run is the same whenever it is.
    let base = crate::read::virtual_epoch();
    let mut now = Duration::ZERO;
    let mut machine = ReadMachine::new(&plan, options, backoff, base);
    let mut outcome = Outcome::default();
    let mut cache: Option<(Vec<TopicMetadata>, Duration)> = None;
    let mut in_flight: Vec<InFlight> = Vec::new();
    let mut seq = 0u64;
    let mut latest_delivered = 0u64;
    // The caller: the sizes of the batches handed out and not taken yet, and the bytes taken.
    let mut not_taken: VecDeque<u64> = VecDeque::new();
    let mut taken = 0u64;
    loop {
        outcome.spent.steps += 1;
        while let Some(output) = machine.poll_output() {
            if let Output::Chunk(chunk) = &output {
                not_taken.extend(chunk.batches.iter().map(|b| b.buffered_bytes()));
            }
            record(&mut outcome, output, now);
        }
        outcome.max_buffered = outcome.max_buffered.max(machine.buffered_bytes());
        outcome.waited_for_room += u64::from(machine.is_waiting_for_room());
        // A slow caller takes one batch per step, a fast one all of them.
        let take = if schedule.slow_caller {
            not_taken.len().min(1)
        } else {
            not_taken.len()
        };
        taken += not_taken.drain(..take).sum::<u64>();
        machine.handle_taken(taken);
        if machine.is_finished() {
            outcome.finished = outcome.failed.is_none();
            break;
        }
        if outcome.spent.steps > limit.steps || now > limit.elapsed {
            break;
        }
        while let Some(transmit) = machine.poll_transmit(base + now) {
            seq += 1;
            let mut sent = match transmit {
                Transmit::Metadata {
                    id,
                    topics,
                    refresh,
                    ..
                } => {
                    let cached = cache.as_ref().filter(|(metadata, fetched_at)| {
                        !refresh
                            && now < *fetched_at + METADATA_MAX_AGE
                            && topics
                                .iter()
                                .all(|t| metadata.iter().any(|m| *m.name == **t))
                    });
                    match cached {
                        Some((metadata, _)) => InFlight {
                            at: now,
                            broker: -1,
                            seq,
                            closes_connection: false,
                            answer: Answer::Metadata(id, Ok(metadata.clone())),
                            fetch_to: None,
                            partitions: Vec::new(),
                            sent: Duration::ZERO,
                        },
                        None => {
                            let d = cluster.metadata(now, &topics);
                            in_flight_of(d, seq, |r| Answer::Metadata(id, r))
                        }
                    }
                }
                Transmit::Fetch(planned) => {
                    let leader = planned.leader;
                    let asked: Vec<(i32, Option<i64>)> = planned
                        .partitions
                        .iter()
                        .map(|r| (r.partition, Some(r.sent.position)))
                        .collect();
                    let found = violations(&in_flight, &plan, Some(leader), &asked, now);
                    outcome.violations.extend(found);
                    if machine.is_waiting_for_room() {
                        outcome.violations.push(format!(
                            "a Fetch to leader {leader} with {} bytes waiting for the caller",
                            machine.buffered_bytes()
                        ));
                    }
                    let version = planned.version(schedule.fetch_version);
                    let request = planned.request(version);
                    let d = cluster.fetch(now, leader, &request, version);
                    let mut f = in_flight_of(d, seq, |r| Answer::Fetch(planned.id, r));
                    f.fetch_to = Some(leader);
                    f.partitions = asked.iter().map(|a| a.0).collect();
                    f
                }
                Transmit::ListEarliest {
                    id,
                    topic,
                    partition,
                    ..
                } => {
                    // To the leader the client's cache names; without one the client would
                    // ask for metadata first, and learn the leader of now.
                    let cached = cache.as_ref().and_then(|(metadata, _)| {
                        let t = metadata.iter().find(|t| *t.name == *topic)?;
                        Some(t.partition(partition)?.leader_id).filter(|l| *l >= 0)
                    });
                    let leader = cached.unwrap_or_else(|| cluster.leader(partition));
                    let found = violations(&in_flight, &plan, None, &[(partition, None)], now);
                    outcome.violations.extend(found);
                    let d = cluster.list_earliest(now, leader, &topic, partition);
                    let mut f = in_flight_of(d, seq, |r| Answer::ListEarliest(id, r));
                    f.partitions = vec![partition];
                    f
                }
                // The sim's Metadata comes from any broker up; which one the client would
                // avoid (the leaders of overdue Fetches) makes no difference to its answer.
                Transmit::LeaderCheck { id, topics, .. } => {
                    let d = cluster.metadata(now, &topics);
                    in_flight_of(d, seq, |r| Answer::Metadata(id, r))
                }
                Transmit::Invalidate { .. } => {
                    cache = None;
                    continue;
                }
            };
            sent.sent = now;
            in_flight.push(sent);
        }
        let timeout = machine
            .poll_timeout()
            .map(|t| t.saturating_duration_since(base));
        let next = in_flight
            .iter()
            .enumerate()
            .min_by_key(|(_, f)| (f.at, f.seq))
            .map(|(i, f)| (i, f.at));
        if next.is_none() && timeout.is_none() && !not_taken.is_empty() {
            // Only the caller can move the read on: it takes the next batch.
            continue;
        }
        // The earliest of the next answer and the machine's timeout; answers first on a tie.
        let deliver = match (next, timeout) {
            // Not finished, nothing in flight, nothing to wait for: the read is stuck.
            (None, None) => break,
            (Some((i, at)), timeout) => timeout.is_none_or(|t| at <= t).then_some((i, at)),
            (None, Some(_)) => None,
        };
        match (deliver, timeout) {
            (Some((i, at)), _) => {
                now = now.max(at);
                let f = in_flight.swap_remove(i);
                if f.seq < latest_delivered {
                    cluster.stats.overtaken += 1;
                }
                latest_delivered = latest_delivered.max(f.seq);
                if f.closes_connection {
                    // Every other request on that connection fails with it.
                    let name = cluster.broker_name(f.broker);
                    for other in in_flight.iter_mut().filter(|o| o.broker == f.broker) {
                        other.answer.closed(&name);
                        other.at = other.at.min(now);
                        cluster.stats.loss_collateral += 1;
                    }
                }
                let at = base + now;
                match f.answer {
                    Answer::Metadata(id, result) => {
                        if f.broker >= 0 {
                            match &result {
                                Ok(metadata) => cache = Some((metadata.clone(), now)),
                                Err(e) if matches!(e.kind(), ErrorKind::UnknownTopic { .. }) => {
                                    cache = None
                                }
                                Err(_) => {}
                            }
                        }
                        machine.handle_metadata(at, id, result);
                    }
                    Answer::Fetch(id, result) => machine.handle_fetch(at, id, result),
                    Answer::ListEarliest(id, result) => machine.handle_list_offsets(at, id, result),
                }
            }
            (None, Some(t)) => {
                now = now.max(t);
                machine.handle_timeout(base + now);
            }
            (None, None) => unreachable!("a timeout when nothing is delivered"),
        }
    }
    outcome.spent.elapsed = now;
    Run {
        outcome,
        cluster,
        plan,
        retry_deadline,
    }
}

/// The request in flight for delivery `d`, its answer made by `answer`.
pub(super) fn in_flight_of<T>(
    d: Delivery<T>,
    seq: u64,
    answer: impl FnOnce(Result<T>) -> Answer,
) -> InFlight {
    InFlight {
        at: d.at,
        broker: d.broker,
        seq,
        closes_connection: d.closes_connection,
        answer: answer(d.result),
        fetch_to: None,
        partitions: Vec::new(),
        sent: Duration::ZERO,
    }
}

/// What the machine's contract forbids in a request about to go out at `now`: a second
/// Fetch to one leader, a partition in two requests at once, a fetch outside the plan's
/// range. A partition may be in a Fetch to its new leader (or a ListOffsets) while a Fetch to
/// its old one is overdue (sent more than the max wait and `OVERDUE_AFTER` ago): the machine
/// took it out of that one after a leader check.
pub(super) fn violations(
    in_flight: &[InFlight],
    plan: &Plan,
    fetch_to: Option<i32>,
    partitions: &[(i32, Option<i64>)],
    now: Duration,
) -> Vec<String> {
    let overdue = SIM_MAX_WAIT + OVERDUE_AFTER;
    let detached =
        |f: &InFlight| f.fetch_to.is_some() && f.fetch_to != fetch_to && now >= f.sent + overdue;
    let mut found = Vec::new();
    if let Some(leader) = fetch_to {
        if in_flight.iter().any(|f| f.fetch_to == Some(leader)) {
            found.push(format!("a second Fetch to leader {leader}"));
        }
    }
    for &(partition, offset) in partitions {
        if in_flight
            .iter()
            .any(|f| f.partitions.contains(&partition) && !detached(f))
        {
            found.push(format!("partition {partition} in two requests at once"));
        }
        let range = plan
            .partitions
            .iter()
            .find(|p| p.partition == partition)
            .map(|p| (p.start, p.end.unwrap_or(i64::MAX)));
        if let (Some(offset), Some((start, end))) = (offset, range) {
            if !(start..end).contains(&offset) {
                found.push(format!(
                    "a fetch of partition {partition} at {offset}, outside the plan {start}..{end}"
                ));
            }
        }
    }
    found
}

/// Notes what the machine handed out.
pub(super) fn record(outcome: &mut Outcome, output: Output, now: Duration) {
    match output {
        Output::Chunk(chunk) => {
            for batch in &chunk.batches {
                for r in batch.records() {
                    match r {
                        Ok(r) => {
                            outcome
                                .records
                                .push((batch.partition(), r.offset(), r.value_bytes()))
                        }
                        Err(e) => {
                            outcome.failed.get_or_insert((e, now));
                        }
                    }
                }
            }
            // The plan's partition i is partition i of the topic.
            outcome
                .positions
                .push((chunk.idx as i32, chunk.position, chunk.done));
        }
        Output::DataLoss {
            loss,
            position,
            done,
            ..
        } => {
            outcome.losses.push((loss.partition, loss.from, loss.to));
            outcome.positions.push((loss.partition, position, done));
        }
        Output::Added(p) => {
            let error = Error::from(ErrorKind::InvalidSpec {
                reason: format!(
                    "a bounded read added partition {} of {:?}",
                    p.partition, p.topic
                ),
            });
            outcome.failed.get_or_insert((error, now));
        }
        Output::Failed(e) => {
            outcome.failed.get_or_insert((e, now));
        }
    }
}

//! Resolution: turning a [`ReadSpec`] into a [`Plan`] of per-partition offset ranges, once,
//! before any record is fetched.
//!
//! The steps, for the partitions the spec covers (fixed at this point):
//! 1. Metadata for the topics; a partitions filter naming a partition a topic doesn't have is
//!    an [`ErrorKind::UnknownPartition`].
//! 2. Committed offsets (OffsetFetch to the group's coordinator) when a start or end is
//!    [`Start::Committed`] / [`End::Committed`].
//! 3. The snapshot: the last fetchable offset (ListOffsets -1: the high watermark, or the last
//!    stable offset under read_committed) and the log start offset (-2) of every partition.
//! 4. Only then the timestamp lookups (ListOffsets T, or a special timestamp), so a lookup
//!    that misses resolves to the snapshot taken *before* it and never races new writes.
//!
//! Every ListOffsets goes to the partition's leader, one request per leader and lookup
//! covering all its partitions, with the spec's isolation level, the current leader epoch from
//! the metadata (sent on v4+) and replica id -1. Retriable errors (NOT_LEADER_OR_FOLLOWER,
//! FENCED/UNKNOWN_LEADER_EPOCH, OFFSET_NOT_AVAILABLE, LEADER_NOT_AVAILABLE, a topic just
//! created, ...) start the whole resolution over with fresh metadata, with backoff, until the
//! retry deadline.
//!
//! # Decisions
//! - A timestamp (or special timestamp) lookup that finds nothing, or finds an offset at or
//!   beyond the snapshot, is a *miss*: a start resolves to the last fetchable offset (nothing to
//!   read), an end to the last fetchable offset. With [`ReadSpec::strict`] a miss is
//!   [`ErrorKind::TimestampNotFound`]. No position is ever -1.
//! - A committed offset is clamped into `[log start, last fetchable]`. Below the log start
//!   the records are gone (retention); starting at the log start reads everything that is left
//!   (Java's consumer would reset by `auto.offset.reset`, whose default, latest, silently skips
//!   it all). Above the last fetchable offset (a truncated log, or a commit past the last
//!   stable offset under read_committed) it resolves to the last fetchable offset: a bounded
//!   read is then empty, an unbounded one waits there; never skipping records is preferred to
//!   never repeating them.
//! - A partition without a commit uses the fallback of [`Start::Committed`]; without a
//!   fallback, in strict mode, or for [`End::Committed`], it is [`ErrorKind::NoCommittedOffset`]
//!   naming every such partition.
//! - Explicit offsets ([`Start::Offsets`], [`End::Offsets`]) are used as given, with two
//!   adjustments, each recorded in [`PartitionPlan::adjusted`] so a caller can tell the user:
//!   a start below the log start moves up to it (those offsets were deleted; the plan counts
//!   only what is left, and an end below the log start moves up too:
//!   [`Adjusted::BelowLogStart`]), and a start past the end of the log, when the end is the
//!   log's end (latest, or an end time that finds nothing), becomes that end, an empty range,
//!   as a consumer seeking past the end of a short partition finds nothing
//!   ([`Adjusted::PastEnd`]); the other partitions are read as usual.
//! - Any other start after the end of the same partition is [`ErrorKind::StartAfterEnd`],
//!   whatever kind of position either side is: latest to earliest, latest to an earlier time,
//!   a commit after the end time, an offset after an explicit end offset or an end time that
//!   found a record. The one exception is a start lookup that finds nothing (a start time
//!   after the newest record): it becomes the partition's end, an empty range. A start equal
//!   to its end is an empty range, never an error.
//! - A start timestamp after an end timestamp is an [`ErrorKind::InvalidSpec`]; negative
//!   timestamps too (the special positions have their own variants: [`Start::MaxTimestamp`],
//!   [`End::Earliest`], ...).
//!
//! # References
//! docs/reading-by-time.md ("Positions", points 1, 2, 4, 7, 8, 9, 11);
//! <https://kafka.apache.org/protocol#The_Messages_ListOffsets>, KIP-734.

use std::future::poll_fn;
use std::task::Poll;

use kseek_protocol::messages::list_offsets::{
    min_version_for_timestamp, ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic,
    CONSUMER_REPLICA_ID, EARLIEST, EARLIEST_LOCAL, LATEST, LATEST_TIERED, MAX_TIMESTAMP,
};
use kseek_protocol::negotiate::ApiVersionMap;
use kseek_protocol::{ApiKey, ErrorCode, Uuid};

use crate::client::Client;
use crate::cluster::TopicMetadata;
use crate::error::{ErrorKind, Result};
use crate::few::{self, find_from, FewMap};
#[cfg(feature = "group")]
use crate::group::CommittedOffset;
use crate::plan::{Adjusted, End, IsolationLevel, PartitionPlan, Plan, ReadSpec, Start};
use crate::task::{poll_each, BoxFuture};

/// A (topic, partition) pair.
type Key = (String, i32);

/// Per group named, the committed offset of each target (by index in the targets; `None`: no
/// commit).
type Commits = Vec<(String, Vec<Option<i64>>)>;

/// A partition to ask ListOffsets about: its index in the targets, the target and the
/// timestamp.
type Asked = (usize, Target, i64);

/// A partition the read covers, with its leader at resolution.
#[derive(Debug, Clone)]
struct Target {
    topic: String,
    topic_id: Uuid,
    partition: i32,
    leader_id: i32,
    leader_epoch: i32,
}

impl Target {
    fn key(&self) -> Key {
        (self.topic.clone(), self.partition)
    }
}

/// How one side of one partition's range is decided, once commits are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Earliest,
    Latest,
    /// A ListOffsets lookup of this (possibly special) timestamp.
    Lookup(i64),
    /// Given by the caller.
    Explicit(i64),
    /// The group's committed offset.
    Committed(i64),
    /// No commit and no fallback: an error, collected over all partitions.
    NoCommit,
    /// The end of an unbounded read.
    Unbounded,
}

/// The snapshot of one partition, listed before any timestamp lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Snapshot {
    log_start: i64,
    last_fetchable: i64,
}

impl Client {
    /// Resolves `spec` into a [`Plan`]: one offset range per partition, decided once, now.
    /// See the [module documentation](crate::resolve) for every decision.
    ///
    /// ```no_run
    /// # async fn example(client: kseek::Client) -> kseek::Result<()> {
    /// use kseek::{End, ReadSpec, Start};
    /// let midnight = 1_764_460_800_000;
    /// let plan = client
    ///     .resolve(&ReadSpec::new(["events"], Start::Timestamp(midnight), End::Latest))
    ///     .await?;
    /// for p in &plan.partitions {
    ///     println!("{}[{}]: {}..{:?}", p.topic, p.partition, p.start, p.end);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSpec`], [`ErrorKind::UnknownPartition`], [`ErrorKind::StartAfterEnd`],
    /// [`ErrorKind::TimestampNotFound`] (strict), [`ErrorKind::NoCommittedOffset`],
    /// [`ErrorKind::UnsupportedTimestamp`]; [`ErrorKind::InvalidResponse`] for a leader's unusable
    /// answer (-1 for latest or earliest); [`ErrorKind::RetriesExhausted`] when retriable errors
    /// outlast the retry deadline (a topic that doesn't exist, a leader that doesn't come).
    pub async fn resolve(&self, spec: &ReadSpec) -> Result<Plan> {
        validate(spec)?;
        self.retry(
            &format!("resolving the read of topics {:?}", spec.topics),
            || self.resolve_once(spec),
        )
        .await
    }

    async fn resolve_once(&self, spec: &ReadSpec) -> Result<Plan> {
        let mut metadata = self.metadata_once(&spec.topics).await?;
        let targets = match select(spec, &metadata) {
            // The cache may predate added partitions: look once more before refusing.
            Err(e) if matches!(e.kind(), ErrorKind::UnknownPartition { .. }) => {
                metadata = self.refresh(&spec.topics, &[]).await?;
                select(spec, &metadata)?
            }
            other => other?,
        };
        check_offsets_cover(spec, &targets)?;

        // Committed offsets, per group named (none without the `group` feature: `validate`
        // refused a spec that names a group).
        #[cfg_attr(not(feature = "group"), allow(unused_mut))]
        let mut commits: Commits = Vec::new();
        #[cfg(feature = "group")]
        for group in groups(spec) {
            let found = self.committed_once(&group, &metadata).await?;
            commits.push((group, committed_per_target(&targets, &found)));
        }

        let rules = rules(spec, &targets, &commits)?;

        // The snapshot first (latest, earliest), then the start and end lookups: four rounds
        // through one await point, so the state machine holds one copy of the ListOffsets
        // future's poll and drop, not four.
        let mut rounds: [Vec<Option<i64>>; 4] = Default::default();
        for (round, offsets) in rounds.iter_mut().enumerate() {
            let timestamps = round_timestamps(round, &rules);
            *offsets = self
                .list_offsets(&targets, spec.isolation, timestamps)
                .await?;
        }
        plan(spec, &targets, &rules, &rounds)
    }

    /// One ListOffsets per leader for the targets `timestamps` has a value for (by index in
    /// `targets`), to all leaders at once; returns the offset per target (-1 for a miss,
    /// `None` where nothing was asked). No request for none. (A vector, not a closure: one
    /// copy of this future serves every lookup.)
    async fn list_offsets(
        &self,
        targets: &[Target],
        isolation: IsolationLevel,
        timestamps: Vec<Option<i64>>,
    ) -> Result<Vec<Option<i64>>> {
        let mut by_leader: FewMap<i32, Vec<Asked>> = FewMap::new();
        for (at, (t, timestamp)) in targets.iter().zip(timestamps).enumerate() {
            if let Some(ts) = timestamp {
                by_leader
                    .get_or_insert_with(t.leader_id, Vec::new)
                    .push((at, t.clone(), ts));
            }
        }
        let mut offsets = vec![None; targets.len()];
        let record = |answers: Vec<(usize, i64)>| {
            for (at, offset) in answers {
                offsets[at] = Some(offset);
            }
        };
        // The requests to every leader polled in place, in this task (one leader or many, one
        // path): a `JoinSet` would spawn them, and each spawned future type compiles tokio's
        // task machinery once more.
        let pending = by_leader
            .into_iter()
            .map(|(leader, partitions)| self.list_offsets_of(leader, partitions, isolation))
            .collect();
        all_answers(pending, record).await?;
        Ok(offsets)
    }

    /// The log start offset of `topic`/`partition` (ListOffsets -2) from its current leader,
    /// by the same request as resolution's snapshot. No retries: a read retries it with its
    /// own schedule (after OFFSET_OUT_OF_RANGE, and for partitions discovery finds).
    pub(crate) async fn list_earliest(
        &self,
        topic: &str,
        partition: i32,
        isolation: IsolationLevel,
    ) -> Result<i64> {
        let (leader_id, leader_epoch) = self.leader(topic, partition).await?;
        let target = Target {
            topic: topic.to_owned(),
            topic_id: Uuid::ZERO,
            partition,
            leader_id,
            leader_epoch,
        };
        let key = target.key();
        let offsets = self
            .list_offsets_of(leader_id, vec![(0, target, EARLIEST)], isolation)
            .await?;
        answer(
            offsets.first().map(|&(_, o)| o),
            &key,
            "the log start",
            leader_id,
        )
    }

    /// One ListOffsets to `leader` for `partitions`; returns each one's offset with its index,
    /// in the order asked (boxed: one copy serves the snapshot, the lookups and the read's
    /// log-start queries; see `task::BoxFuture`).
    #[inline(never)]
    fn list_offsets_of(
        &self,
        leader: i32,
        partitions: Vec<Asked>,
        isolation: IsolationLevel,
    ) -> BoxFuture<'_, Result<Vec<(usize, i64)>>> {
        Box::pin(async move {
            let conn = self.connection(leader).await?;
            let request = list_offsets_request(&partitions, isolation);
            let version = list_offsets_version(conn.broker(), conn.versions(), &request)?;
            let response = conn.send_version(&request, version).await?;
            // The answer per partition asked, matched by a scan from after the previous
            // match: one step each when the broker answers in the order asked, as it does.
            let mut offsets = vec![None; partitions.len()];
            let mut next = 0;
            for topic in response.topics {
                for p in topic.partitions {
                    let code = ErrorCode(p.error_code);
                    if !code.is_ok() {
                        if code.is_retriable() {
                            self.invalidate(&topic.name);
                        }
                        return Err(ErrorKind::Partition {
                            broker: conn.broker().to_owned(),
                            api: ApiKey::LIST_OFFSETS,
                            topic: topic.name.clone(),
                            partition: p.partition_index,
                            code,
                        }
                        .into());
                    }
                    let asked = find_from(&partitions, next, |(_, t, _)| {
                        t.partition == p.partition_index && t.topic == topic.name
                    });
                    if let Some(i) = asked {
                        offsets[i] = Some(p.offset);
                        next = i + 1;
                    }
                }
            }
            let mut answers = Vec::with_capacity(partitions.len());
            for ((at, t, timestamp), offset) in partitions.iter().zip(offsets) {
                let bad = match offset {
                    None => "no answer",
                    // Latest and earliest always have an offset; -1 would become a position.
                    Some(o) if o < 0 && matches!(*timestamp, LATEST | EARLIEST) => {
                        "offset -1 for the latest or earliest offset"
                    }
                    Some(o) => {
                        answers.push((*at, o));
                        continue;
                    }
                };
                return Err(ErrorKind::InvalidResponse {
                    broker: conn.broker().to_owned(),
                    api: ApiKey::LIST_OFFSETS,
                    reason: format!("{bad} for partition {} of topic {:?}", t.partition, t.topic),
                }
                .into());
            }
            Ok(answers)
        })
    }
}

/// The committed offset of each target from a group's commits (OffsetFetch answers in the
/// order the metadata lists the partitions, as the targets are: a scan from after the previous
/// match takes one step each).
#[cfg(feature = "group")]
fn committed_per_target(targets: &[Target], found: &[CommittedOffset]) -> Vec<Option<i64>> {
    let mut next = 0;
    targets
        .iter()
        .map(|t| {
            let i = find_from(found, next, |c| {
                c.partition == t.partition && c.topic == t.topic
            })?;
            next = i + 1;
            found[i].offset
        })
        .collect()
}

/// Each target's start and end rule, once commits are known; every partition without a
/// commit that needs one is named in one error.
fn rules(spec: &ReadSpec, targets: &[Target], commits: &Commits) -> Result<Vec<(Rule, Rule)>> {
    let mut rules = Vec::with_capacity(targets.len());
    let mut missing = Vec::new();
    for (at, t) in targets.iter().enumerate() {
        let key = t.key();
        let start = start_rule(&spec.start, &key, at, commits, spec.strict)?;
        let end = end_rule(&spec.end, &key, at, commits)?;
        if start == Rule::NoCommit || end == Rule::NoCommit {
            missing.push(key);
        }
        rules.push((start, end));
    }
    if !missing.is_empty() {
        let group = match (&spec.start, &spec.end) {
            (Start::Committed { group, .. }, _) | (_, End::Committed { group }) => group.clone(),
            _ => String::new(),
        };
        return Err(ErrorKind::NoCommittedOffset {
            group,
            partitions: missing,
        }
        .into());
    }
    Ok(rules)
}

/// What ListOffsets round `round` asks per target: 0 the latest offset, 1 the earliest,
/// 2 the start lookups and 3 the end lookups (`None`: nothing to ask for that target).
fn round_timestamps(round: usize, rules: &[(Rule, Rule)]) -> Vec<Option<i64>> {
    let lookup = |rule: Rule| match rule {
        Rule::Lookup(ts) => Some(ts),
        _ => None,
    };
    rules
        .iter()
        .map(|&(start, end)| match round {
            0 => Some(LATEST),
            1 => Some(EARLIEST),
            2 => lookup(start),
            _ => lookup(end),
        })
        .collect()
}

/// The plan from the rules and the four ListOffsets rounds: latest, earliest, the start
/// lookups and the end lookups, each an offset per partition.
fn plan(
    spec: &ReadSpec,
    targets: &[Target],
    rules: &[(Rule, Rule)],
    rounds: &[Vec<Option<i64>>; 4],
) -> Result<Plan> {
    let [latest, earliest, start_hits, end_hits] = rounds;
    let mut partitions = Vec::with_capacity(targets.len());
    for (i, t) in targets.iter().enumerate() {
        let key = t.key();
        let snapshot = Snapshot {
            log_start: answer(earliest[i], &key, "the log start offset", t.leader_id)?,
            last_fetchable: answer(latest[i], &key, "the last fetchable offset", t.leader_id)?,
        };
        let (start_rule, end_rule) = rules[i];
        let start = position(start_rule, snapshot, start_hits[i], spec.strict, &key)?;
        let end = match end_rule {
            Rule::Unbounded => None,
            rule => Some(position(rule, snapshot, end_hits[i], spec.strict, &key)?),
        };
        let mut adjusted = None;
        let mut start = match end {
            Some(end) if start > end => {
                // A start lookup that found nothing becomes the partition's end: nothing to
                // read, not an error (point 1). So does an explicit start offset past the end
                // of the log, when the end is the log's end (latest, or an end time that found
                // nothing): that partition is shorter than the offset, an empty range. Every
                // other start after its end is an error (point 4).
                let missed =
                    matches!(start_rule, Rule::Lookup(_)) && hit(start_hits[i], snapshot).is_none();
                let end_of_log = match end_rule {
                    Rule::Latest => true,
                    Rule::Lookup(_) => hit(end_hits[i], snapshot).is_none(),
                    _ => false,
                };
                if matches!(start_rule, Rule::Explicit(_)) && end_of_log {
                    adjusted = Some(Adjusted::PastEnd { requested: start });
                } else if !missed {
                    return Err(ErrorKind::StartAfterEnd {
                        topic: t.topic.clone(),
                        partition: t.partition,
                        start,
                        end,
                    }
                    .into());
                }
                end
            }
            _ => start,
        };
        let mut end = end;
        if start < snapshot.log_start {
            // Only an explicit offset can lie below the log start: those offsets were deleted,
            // so the plan starts (and counts) from the log start, and says so.
            adjusted = Some(Adjusted::BelowLogStart { requested: start });
            start = snapshot.log_start;
            end = end.map(|e| e.max(snapshot.log_start));
        }
        partitions.push(PartitionPlan {
            topic: t.topic.clone(),
            topic_id: t.topic_id,
            partition: t.partition,
            start,
            end,
            log_start_offset: snapshot.log_start,
            last_fetchable_offset: snapshot.last_fetchable,
            leader_epoch: t.leader_epoch,
            adjusted,
        });
    }
    Ok(Plan {
        partitions,
        isolation: spec.isolation,
    })
}

/// Checks what can be checked without a broker.
fn validate(spec: &ReadSpec) -> Result<()> {
    let invalid = |reason: String| Err(ErrorKind::InvalidSpec { reason }.into());
    if spec.topics.is_empty() {
        return invalid("no topics to read".to_owned());
    }
    fn check_start(s: &Start, nested: bool) -> std::result::Result<(), String> {
        match s {
            Start::Timestamp(t) if *t < 0 => Err(format!(
                "start timestamp {t} is negative; Start::Earliest, Start::Latest and Start::MaxTimestamp name the special positions"
            )),
            Start::Offsets { offsets, default } => {
                if nested {
                    return Err("a default or fallback can't be Offsets or Committed".to_owned());
                }
                if let Some(((topic, p), o)) = offsets.iter().find(|(_, o)| **o < 0) {
                    return Err(format!(
                        "start offset {o} for partition {p} of topic {topic:?} is negative"
                    ));
                }
                default.as_deref().map_or(Ok(()), |d| check_start(d, true))
            }
            Start::Committed { fallback, .. } => {
                if nested {
                    return Err("a default or fallback can't be Offsets or Committed".to_owned());
                }
                fallback.as_deref().map_or(Ok(()), |d| check_start(d, true))
            }
            _ => Ok(()),
        }
    }
    check_start(&spec.start, false).or_else(invalid)?;
    match &spec.end {
        End::Timestamp(t) if *t < 0 => {
            return invalid(format!(
                "end timestamp {t} is negative; End::Earliest, End::Latest and End::MaxTimestamp name the special positions"
            ))
        }
        End::Offsets(offsets) => {
            if let Some(((topic, p), o)) = offsets.iter().find(|(_, o)| **o < 0) {
                return invalid(format!(
                    "end offset {o} for partition {p} of topic {topic:?} is negative"
                ));
            }
        }
        _ => {}
    }
    if let (Start::Timestamp(s), End::Timestamp(e)) = (&spec.start, &spec.end) {
        if s > e {
            return invalid(format!("start timestamp {s} is after end timestamp {e}"));
        }
    }
    #[cfg(not(feature = "group"))]
    if let Some(group) = groups(spec).first() {
        return Err(ErrorKind::Config {
            message: format!(
                "the read names consumer group {group:?} (Start::Committed or End::Committed), \
                 and this kseek was built without its `group` feature"
            ),
        }
        .into());
    }
    Ok(())
}

/// Waits for every future of `pending` at once, polling them in the calling task, and hands
/// each answer to `each` as it comes. The first error ends the wait and drops (cancels) the
/// futures still pending.
async fn all_answers<T>(
    mut pending: Vec<BoxFuture<'_, Result<T>>>,
    mut each: impl FnMut(T),
) -> Result<()> {
    let mut failed = None;
    poll_fn(|cx| {
        poll_each(&mut pending, cx, |answer| match answer {
            Ok(answer) => each(answer),
            Err(e) => {
                failed.get_or_insert(e);
            }
        });
        if let Some(e) = failed.take() {
            Poll::Ready(Err(e))
        } else if pending.is_empty() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    })
    .await
}

/// The partitions the read covers, ordered by topic (as listed) and partition.
fn select(spec: &ReadSpec, metadata: &[TopicMetadata]) -> Result<Vec<Target>> {
    let mut targets: Vec<Target> = Vec::new();
    for (i, topic) in metadata.iter().enumerate() {
        // A topic listed twice is read once.
        if metadata[..i].iter().any(|t| t.name == topic.name) {
            continue;
        }
        let chosen: Vec<i32> = match &spec.partitions {
            None => topic.partitions.iter().map(|p| p.partition).collect(),
            Some(only) => {
                let mut only = only.clone();
                few::sort(&mut only);
                only.dedup();
                only
            }
        };
        for partition in chosen {
            let Some(p) = topic.partition(partition) else {
                return Err(ErrorKind::UnknownPartition {
                    topic: topic.name.clone(),
                    partition,
                    partitions: topic.partitions.len(),
                }
                .into());
            };
            if p.leader_id < 0 {
                return Err(ErrorKind::LeaderNotAvailable {
                    topic: topic.name.clone(),
                    partition,
                }
                .into());
            }
            targets.push(Target {
                topic: topic.name.clone(),
                topic_id: topic.topic_id,
                partition,
                leader_id: p.leader_id,
                leader_epoch: p.leader_epoch,
            });
        }
    }
    Ok(targets)
}

/// Explicit offsets must name partitions the read covers (a typo would otherwise be ignored).
fn check_offsets_cover(spec: &ReadSpec, targets: &[Target]) -> Result<()> {
    let covered = |(topic, partition): &Key| {
        targets
            .iter()
            .any(|t| &t.topic == topic && t.partition == *partition)
    };
    let given = match (&spec.start, &spec.end) {
        (Start::Offsets { offsets, .. }, End::Offsets(ends)) => {
            offsets.keys().chain(ends.keys()).collect::<Vec<_>>()
        }
        (Start::Offsets { offsets, .. }, _) => offsets.keys().collect(),
        (_, End::Offsets(ends)) => ends.keys().collect(),
        _ => Vec::new(),
    };
    match given.into_iter().find(|k| !covered(k)) {
        Some((topic, partition)) => Err(ErrorKind::InvalidSpec {
            reason: format!(
                "an offset is given for partition {partition} of topic {topic:?}, which the read does not cover"
            ),
        }.into()),
        None => Ok(()),
    }
}

/// The groups whose commits the spec needs.
fn groups(spec: &ReadSpec) -> Vec<String> {
    let mut groups = Vec::new();
    if let Start::Committed { group, .. } = &spec.start {
        groups.push(group.clone());
    }
    if let End::Committed { group } = &spec.end {
        if !groups.contains(group) {
            groups.push(group.clone());
        }
    }
    groups
}

/// `group`'s committed offset of the target at index `at`.
fn committed_offset(commits: &Commits, group: &str, at: usize) -> Option<i64> {
    let (_, offsets) = commits.iter().find(|(g, _)| g == group)?;
    offsets.get(at).copied().flatten()
}

/// The start rule of the target `key`, at index `at` in the targets.
fn start_rule(
    start: &Start,
    key: &Key,
    at: usize,
    commits: &Commits,
    strict: bool,
) -> Result<Rule> {
    Ok(match start {
        Start::Earliest => Rule::Earliest,
        Start::Latest => Rule::Latest,
        Start::Timestamp(t) => Rule::Lookup(*t),
        Start::MaxTimestamp => Rule::Lookup(MAX_TIMESTAMP),
        Start::EarliestLocal => Rule::Lookup(EARLIEST_LOCAL),
        Start::LatestTiered => Rule::Lookup(LATEST_TIERED),
        Start::Offsets { offsets, default } => match (offsets.get(key), default) {
            (Some(o), _) => Rule::Explicit(*o),
            (None, Some(d)) => start_rule(d, key, at, commits, strict)?,
            (None, None) => {
                return Err(ErrorKind::InvalidSpec {
                    reason: format!(
                        "no start offset given for partition {} of topic {:?}, and no default",
                        key.1, key.0
                    ),
                }
                .into())
            }
        },
        Start::Committed { group, fallback } => match committed_offset(commits, group, at) {
            Some(o) => Rule::Committed(o),
            None => match fallback {
                Some(f) if !strict => start_rule(f, key, at, commits, strict)?,
                _ => Rule::NoCommit,
            },
        },
    })
}

/// The end rule of the target `key`, at index `at` in the targets.
fn end_rule(end: &End, key: &Key, at: usize, commits: &Commits) -> Result<Rule> {
    Ok(match end {
        End::Unbounded => Rule::Unbounded,
        End::Earliest => Rule::Earliest,
        End::Latest => Rule::Latest,
        End::Timestamp(t) => Rule::Lookup(*t),
        End::MaxTimestamp => Rule::Lookup(MAX_TIMESTAMP),
        End::EarliestLocal => Rule::Lookup(EARLIEST_LOCAL),
        End::LatestTiered => Rule::Lookup(LATEST_TIERED),
        End::Offsets(offsets) => offsets
            .get(key)
            .map_or(Rule::Latest, |o| Rule::Explicit(*o)),
        End::Committed { group } => {
            committed_offset(commits, group, at).map_or(Rule::NoCommit, Rule::Committed)
        }
    })
}

/// One side of a partition's range. `hit` is the lookup's offset for [`Rule::Lookup`].
fn position(
    rule: Rule,
    snapshot: Snapshot,
    hit: Option<i64>,
    strict: bool,
    key: &Key,
) -> Result<i64> {
    let Snapshot {
        log_start,
        last_fetchable,
    } = snapshot;
    Ok(match rule {
        Rule::Earliest => log_start,
        Rule::Latest => last_fetchable,
        Rule::Lookup(timestamp) => match self::hit(hit, snapshot) {
            Some(o) => o,
            None if strict => {
                return Err(ErrorKind::TimestampNotFound {
                    topic: key.0.clone(),
                    partition: key.1,
                    timestamp,
                    last_fetchable_offset: last_fetchable,
                }
                .into())
            }
            None => last_fetchable,
        },
        Rule::Explicit(o) => o,
        Rule::Committed(o) => o.clamp(log_start, last_fetchable.max(log_start)),
        Rule::NoCommit | Rule::Unbounded => {
            return Err(ErrorKind::InvalidSpec {
                reason: format!("no position for partition {} of topic {:?}", key.1, key.0),
            }
            .into())
        }
    })
}

/// The offset a lookup answered, if it found one: at or beyond the snapshot counts as a miss,
/// as the broker itself answers -1 for a match at or past the last fetchable offset. A hit
/// below the log start (deleted since) is moved up to it.
fn hit(answer: Option<i64>, snapshot: Snapshot) -> Option<i64> {
    answer
        .filter(|&o| o >= 0 && o < snapshot.last_fetchable)
        .map(|o| o.max(snapshot.log_start))
}

/// A snapshot answer; -1 from the broker for latest or earliest would be a broker bug, and
/// must never become a position. (`list_offsets_of` refuses such answers already; this keeps
/// the plan from depending on it.) `leader` names the broker in the error.
fn answer(offset: Option<i64>, key: &Key, what: &str, leader: i32) -> Result<i64> {
    match offset {
        Some(o) if o >= 0 => Ok(o),
        other => Err(ErrorKind::InvalidResponse {
            broker: format!("node {leader}"),
            api: ApiKey::LIST_OFFSETS,
            reason: format!(
                "{} for {what} of partition {} of topic {:?}",
                other.map_or("no answer".to_owned(), |o| format!("offset {o}")),
                key.1,
                key.0
            ),
        }
        .into()),
    }
}

fn list_offsets_request(partitions: &[Asked], isolation: IsolationLevel) -> ListOffsetsRequest {
    let mut topics: Vec<ListOffsetsTopic> = Vec::new();
    for (_, t, timestamp) in partitions {
        let partition = ListOffsetsPartition {
            partition_index: t.partition,
            // Dropped by the encoder before v4, where the field doesn't exist.
            current_leader_epoch: t.leader_epoch,
            timestamp: *timestamp,
            ..ListOffsetsPartition::default()
        };
        match topics.iter_mut().find(|x| x.name == t.topic) {
            Some(topic) => topic.partitions.push(partition),
            None => topics.push(ListOffsetsTopic {
                name: t.topic.clone(),
                partitions: vec![partition],
                ..ListOffsetsTopic::default()
            }),
        }
    }
    ListOffsetsRequest {
        replica_id: CONSUMER_REPLICA_ID,
        isolation_level: isolation,
        topics,
        timeout_ms: 30_000,
        ..ListOffsetsRequest::default()
    }
}

/// The ListOffsets version to send `request` at to a broker with `versions`: the highest both
/// speak, if it can carry every timestamp in the request.
///
/// # Errors
/// [`ErrorKind::UnsupportedTimestamp`] naming the timestamp the broker is too old for.
fn list_offsets_version(
    broker: &str,
    versions: &ApiVersionMap,
    request: &ListOffsetsRequest,
) -> Result<i16> {
    let version = versions
        .version_for::<ListOffsetsRequest>()
        .map_err(|source| ErrorKind::Protocol {
            broker: broker.to_owned(),
            source,
        })?;
    for p in request.topics.iter().flat_map(|t| &t.partitions) {
        let required =
            min_version_for_timestamp(p.timestamp).ok_or_else(|| ErrorKind::InvalidSpec {
                reason: format!("{} is not a ListOffsets special timestamp", p.timestamp),
            })?;
        if required > version {
            return Err(ErrorKind::UnsupportedTimestamp {
                broker: broker.to_owned(),
                timestamp: p.timestamp,
                required_version: required,
                broker_max_version: version,
            }
            .into());
        }
    }
    Ok(version)
}

#[cfg(test)]
mod tests;

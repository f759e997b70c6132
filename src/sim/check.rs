//! The invariant checker: what a bounded read must have handed out, given what it was asked
//! and what the cluster did.

use super::cluster::{SimCluster, Written};
use super::schedule::Schedule;
use super::*;

/// What a read handed out, as the harness saw it.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Every record handed out, in order: partition, offset, value.
    pub(crate) records: Vec<(i32, i64, Option<Bytes>)>,
    /// The loss reports, in order: partition, first offset lost, first offset not lost.
    pub(crate) losses: Vec<(i32, i64, i64)>,
    /// The positions handed out after each chunk and loss, in order: partition, next offset
    /// to fetch, done.
    pub(crate) positions: Vec<(i32, i64, bool)>,
    /// Requests the machine's contract forbids (a second Fetch to one leader, a partition in
    /// two requests at once, a fetch outside the plan).
    pub(crate) violations: Vec<String>,
    /// The error the read ended with, and the virtual time it came.
    pub(crate) failed: Option<(Error, Duration)>,
    /// The read said it was finished.
    pub(crate) finished: bool,
    /// How many steps the machine spent waiting for the caller to take batches.
    pub(crate) waited_for_room: u64,
    /// The most record bytes that waited for the caller at once.
    pub(crate) max_buffered: u64,
    /// The harness steps and the virtual time the read took.
    pub(crate) spent: Budget,
}

/// How long a read runs, or may run: steps of the harness and virtual time.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) steps: u64,
    pub(crate) elapsed: Duration,
}

/// Which errors may end a read, and by when. Any other error fails the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MayFail {
    /// [`ErrorKind::OffsetOutOfRange`] (the policy is to fail and retention happened).
    pub(crate) out_of_range: bool,
    /// [`ErrorKind::RetriesExhausted`], by this virtual time (every broker went away).
    pub(crate) give_up_by: Option<Duration>,
}

impl MayFail {
    /// No error: the read must hand out its whole plan.
    pub(crate) const NEVER: MayFail = MayFail {
        out_of_range: false,
        give_up_by: None,
    };
}

/// What a read of a plan against a cluster must have done.
#[derive(Debug)]
pub(crate) struct Expectation {
    /// The plan's ranges: partition, start, end (exclusive).
    pub(crate) ranges: Vec<(i32, i64, i64)>,
    /// Per partition (by index), every record written.
    pub(crate) written: Vec<Vec<Written>>,
    /// Per partition, the log start at the end of the read: lost offsets lie below it.
    pub(crate) log_starts: Vec<i64>,
    /// Whether retention moved any log start.
    pub(crate) retention: bool,
    /// Whether the policy for OFFSET_OUT_OF_RANGE is to fail (then nothing is reported lost).
    pub(crate) fail_on_out_of_range: bool,
    /// Which error may end the read.
    pub(crate) may_fail: MayFail,
    /// The most steps a read may take, and the latest virtual time it may end.
    pub(crate) limit: Budget,
}

impl Expectation {
    /// What a read of `schedule`'s plan against `cluster` (after the read) must have done.
    pub(crate) fn of(
        schedule: &Schedule,
        plan: &Plan,
        cluster: &SimCluster,
        retry_deadline: Duration,
        slack: Duration,
    ) -> Expectation {
        let ranges = plan
            .partitions
            .iter()
            .map(|p| (p.partition, p.start, p.end.unwrap_or(i64::MAX)))
            .collect();
        let written = (0..plan.partitions.len() as i32)
            .map(|p| cluster.written(p, plan.isolation))
            .collect();
        let retention = cluster.stats.retention > 0;
        let fail_on_out_of_range = schedule.options.out_of_range == OutOfRange::Fail;
        let may_fail = MayFail {
            out_of_range: retention && fail_on_out_of_range,
            give_up_by: schedule.blackout.map(|at| at + retry_deadline + slack),
        };
        Expectation {
            ranges,
            written,
            log_starts: cluster.log_starts(),
            retention,
            fail_on_out_of_range,
            may_fail,
            limit: Budget {
                steps: 100_000,
                elapsed: may_fail.give_up_by.unwrap_or(retry_deadline),
            },
        }
    }
}

/// Checks `outcome` against `expected`: the read ended within its bounds (a); per partition
/// the records came out in offset order, each once, and are exactly the plan's records less
/// the loss reported, or a prefix of them when the read failed as allowed (b); nothing was
/// lost without retention (c). Returns how many records were compared.
pub(crate) fn check(expected: &Expectation, outcome: &Outcome) -> std::result::Result<u64, String> {
    // (a) It ended, within bounds.
    let (spent, limit) = (outcome.spent, expected.limit);
    if spent.steps > limit.steps {
        return Err(format!(
            "the read took {} steps (at most {})",
            spent.steps, limit.steps
        ));
    }
    if spent.elapsed > limit.elapsed {
        return Err(format!(
            "the read took {:?} of virtual time (at most {:?})",
            spent.elapsed, limit.elapsed
        ));
    }
    if !outcome.violations.is_empty() {
        return Err(format!(
            "the machine broke its contract: {:?}",
            outcome.violations
        ));
    }
    let failed = match &outcome.failed {
        None if !outcome.finished => return Err("the read did not end".to_owned()),
        None => false,
        Some((error, at)) => {
            let allowed = match (error.kind(), expected.may_fail.give_up_by) {
                (ErrorKind::OffsetOutOfRange { .. }, _) => expected.may_fail.out_of_range,
                (ErrorKind::RetriesExhausted { .. }, Some(by)) if *at > by => {
                    return Err(format!("the read gave up at {at:?}, after {by:?}: {error}"));
                }
                (ErrorKind::RetriesExhausted { .. }, Some(_)) => true,
                _ => false,
            };
            if !allowed {
                return Err(format!("the read failed at {at:?}: {error} ({error:?})"));
            }
            true
        }
    };
    // (c) Nothing lost without retention, and nothing reported lost under the Fail policy.
    if !outcome.losses.is_empty() && (!expected.retention || expected.fail_on_out_of_range) {
        return Err(format!(
            "loss reported without retention or under the Fail policy: {:?}",
            outcome.losses
        ));
    }
    // (b) Per partition: the plan's records less the loss, in order, once.
    let mut compared = 0;
    for &(partition, start, end) in &expected.ranges {
        let mut losses: Vec<(i64, i64)> = outcome
            .losses
            .iter()
            .filter(|l| l.0 == partition)
            .map(|l| (l.1, l.2))
            .collect();
        let log_start = usize::try_from(partition)
            .ok()
            .and_then(|p| expected.log_starts.get(p))
            .copied()
            .unwrap_or(i64::MIN);
        for (i, &(from, to)) in losses.iter().enumerate() {
            if from < start || to > end || from >= to {
                return Err(format!(
                    "partition {partition}: loss {from}..{to} is not inside the plan {start}..{end}"
                ));
            }
            if to > log_start {
                return Err(format!(
                    "partition {partition}: loss {from}..{to} reaches past the log start {log_start}: those records were not deleted"
                ));
            }
            if i > 0 && from < losses[i - 1].1 {
                return Err(format!(
                    "partition {partition}: losses overlap or go backwards: {losses:?}"
                ));
            }
        }
        losses.sort_unstable();
        let written = usize::try_from(partition)
            .ok()
            .and_then(|p| expected.written.get(p))
            .map_or(&[][..], Vec::as_slice);
        let want: Vec<&Written> = written
            .iter()
            .filter(|(offset, _)| (start..end).contains(offset))
            .filter(|(offset, _)| !losses.iter().any(|(f, t)| (*f..*t).contains(offset)))
            .collect();
        let got: Vec<(i64, &Option<Bytes>)> = outcome
            .records
            .iter()
            .filter(|r| r.0 == partition)
            .map(|r| (r.1, &r.2))
            .collect();
        for pair in got.windows(2) {
            if pair[1].0 <= pair[0].0 {
                return Err(format!(
                    "partition {partition}: offset {} handed out after {} (out of order or twice)",
                    pair[1].0, pair[0].0
                ));
            }
        }
        for (i, (offset, value)) in got.iter().enumerate() {
            match want.get(i) {
                Some((o, v)) if o == offset && v == *value => compared += 1,
                Some((o, _)) if o == offset => {
                    return Err(format!("partition {partition}: offset {offset} has the wrong value"))
                }
                Some((o, _)) => {
                    return Err(format!(
                        "partition {partition}: record {i} handed out is offset {offset}, expected {o}"
                    ))
                }
                None => {
                    return Err(format!(
                        "partition {partition}: offset {offset} handed out beyond the {} records expected",
                        want.len()
                    ))
                }
            }
        }
        let positions: Vec<(i64, bool)> = outcome
            .positions
            .iter()
            .filter(|p| p.0 == partition)
            .map(|p| (p.1, p.2))
            .collect();
        for pair in positions.windows(2) {
            if pair[1].0 < pair[0].0 {
                return Err(format!(
                    "partition {partition}: the position went backwards: {positions:?}"
                ));
            }
        }
        if !failed && start < end && !positions.last().is_some_and(|&(p, done)| done && p >= end) {
            return Err(format!(
                "partition {partition}: not done at the end of the read (end {end}, positions {positions:?})"
            ));
        }
        if !failed && got.len() < want.len() {
            return Err(format!(
                "partition {partition}: {} of {} records handed out; offset {} is missing",
                got.len(),
                want.len(),
                want[got.len()].0
            ));
        }
    }
    for r in &outcome.records {
        if !expected.ranges.iter().any(|(p, ..)| *p == r.0) {
            return Err(format!(
                "a record of partition {} which is not in the plan",
                r.0
            ));
        }
    }
    Ok(compared)
}

//! Exponential backoff with a deadline: the one retry schedule of the client.
//!
//! After the n-th failure in a row the wait before the next try is `initial * 2^(n-1)`,
//! capped at `max`; a retry that would start later than `deadline` after the first failure
//! is not made, and the caller gives up with the last error. [`Client::retry`] (one
//! operation) and the read engine (each partition on its own) both follow it.
//!
//! Pure arithmetic on durations: the caller passes the time elapsed, so the schedule can be
//! tested, and driven by a simulated clock, without waiting.
//!
//! [`Client::retry`]: crate::Client

use std::time::Duration;

use tokio::time::Instant;

/// A retry schedule: waits doubling from `initial` up to `max`, tries until `deadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Backoff {
    initial: Duration,
    max: Duration,
    deadline: Duration,
}

impl Backoff {
    /// The schedule waiting `initial`, then twice as long each time up to `max` (never less
    /// than `initial`), and giving up once `deadline` has passed since the first failure.
    pub(crate) fn new(initial: Duration, max: Duration, deadline: Duration) -> Self {
        Backoff {
            initial,
            max: max.max(initial),
            deadline,
        }
    }

    /// The wait after the `failures`-th failure in a row (1 for the first).
    pub(crate) fn wait(&self, failures: u32) -> Duration {
        // 2^16 times any sensible initial wait is past any sensible max: stop doubling there,
        // so the shift never overflows.
        let doublings = failures.saturating_sub(1).min(16);
        self.initial.saturating_mul(1 << doublings).min(self.max)
    }

    /// How long to wait before trying again after the `failures`-th failure in a row,
    /// `elapsed` after the first; `None` when that try would start past the deadline.
    pub(crate) fn retry_after(&self, failures: u32, elapsed: Duration) -> Option<Duration> {
        let wait = self.wait(failures);
        (elapsed.saturating_add(wait) <= self.deadline).then_some(wait)
    }

    /// Counts a failure at `now` in `failing` (started at `now` if `None`) and says how long
    /// to wait before the next try; `Err` with the failures and the time since the first
    /// once the deadline would be passed.
    pub(crate) fn fail(
        &self,
        failing: &mut Option<Failing>,
        now: Instant,
    ) -> Result<Duration, Failing> {
        let f = failing.get_or_insert(Failing {
            since: now,
            failures: 0,
        });
        f.failures += 1;
        let elapsed = now.saturating_duration_since(f.since);
        self.retry_after(f.failures, elapsed).ok_or(*f)
    }
}

/// Failures in a row of one operation: when the first came, and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failing {
    /// When the first failure since the last success came.
    pub(crate) since: Instant,
    /// Failures since then (at least 1).
    pub(crate) failures: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn waits_double_up_to_the_max() {
        let b = Backoff::new(100 * MS, 1000 * MS, 30_000 * MS);
        let waits: Vec<_> = (1..=6).map(|n| b.wait(n)).collect();
        assert_eq!(
            waits,
            [100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS, 1000 * MS]
        );
        // Far past 2^16 doublings: still the max, no overflow.
        assert_eq!(b.wait(u32::MAX), 1000 * MS);
        // A max below the first wait is raised to it.
        assert_eq!(Backoff::new(50 * MS, MS, 30_000 * MS).wait(3), 50 * MS);
    }

    #[test]
    fn no_retry_would_start_past_the_deadline() {
        let b = Backoff::new(10 * MS, 40 * MS, 100 * MS);
        assert_eq!(b.retry_after(1, Duration::ZERO), Some(10 * MS));
        assert_eq!(b.retry_after(3, 60 * MS), Some(40 * MS));
        assert_eq!(b.retry_after(3, 61 * MS), None);
        assert_eq!(b.retry_after(1, 100 * MS), None);
    }

    #[test]
    fn failures_in_a_row_are_counted_from_the_first() {
        let b = Backoff::new(10 * MS, 40 * MS, 100 * MS);
        let t0 = Instant::now();
        let mut failing = None;
        assert_eq!(b.fail(&mut failing, t0), Ok(10 * MS));
        assert_eq!(b.fail(&mut failing, t0 + 10 * MS), Ok(20 * MS));
        assert_eq!(b.fail(&mut failing, t0 + 30 * MS), Ok(40 * MS));
        let gave_up = b.fail(&mut failing, t0 + 70 * MS).unwrap_err();
        assert_eq!((gave_up.since, gave_up.failures), (t0, 4));
    }
}

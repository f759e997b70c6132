//! The clock of the protocol crate's measuring examples (shared with `#[path]`; not an example
//! itself).

use std::time::Instant;

/// CPU time of this thread in seconds (Linux), so a loaded machine does not skew the figures;
/// falls back to wall time elsewhere.
pub(crate) struct Clock(Instant, Option<u64>);

fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

impl Clock {
    /// Starts measuring.
    pub(crate) fn start() -> Clock {
        Clock(Instant::now(), cpu_ns())
    }

    /// Seconds since [`Clock::start`].
    pub(crate) fn elapsed(&self) -> f64 {
        match (self.1, cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => self.0.elapsed().as_secs_f64(),
        }
    }
}

//! The progress bar of a bounded read: drawn on stderr (only when it is a terminal), at most
//! ten times a second, and cleared at the end.

use std::io::Write;
use std::time::{Duration, Instant};

/// How often the bar may be redrawn.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// The bar's width in cells.
const BAR_CELLS: usize = 30;

/// A progress bar over `total` offsets.
#[derive(Debug)]
pub(crate) struct Progress {
    total: u64,
    started: Instant,
    /// The last redraw, or the start: a read that ends within 100 ms draws no bar at all.
    last_draw: Instant,
    drawn: bool,
}

impl Progress {
    /// A bar for a read of at most `total` offsets (the plan's `max_records`).
    pub(crate) fn new(total: u64) -> Progress {
        Progress {
            total,
            started: Instant::now(),
            last_draw: Instant::now(),
            drawn: false,
        }
    }

    /// Whether a redraw is due (the last one, or the start, was at least 100 ms ago).
    pub(crate) fn due(&self) -> bool {
        self.last_draw.elapsed() >= REDRAW_EVERY
    }

    /// Redraws the bar: `done` of the total offsets passed, `records` records printed.
    pub(crate) fn draw(&mut self, done: u64, records: u64) {
        self.last_draw = Instant::now();
        self.drawn = true;
        let line = render(done, self.total, records, self.started.elapsed());
        let mut err = std::io::stderr().lock();
        // A progress bar that can't be drawn is no reason to stop the read.
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    }

    /// Clears the bar's line, if it was ever drawn.
    pub(crate) fn clear(&mut self) {
        if std::mem::take(&mut self.drawn) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// One line: `[#########.........]  45%  4500/10000 offsets  4321 records  1234/s`.
pub(crate) fn render(done: u64, total: u64, records: u64, elapsed: Duration) -> String {
    let done = done.min(total);
    let (filled, percent) = if total == 0 {
        (BAR_CELLS, 100)
    } else {
        (
            (done as u128 * BAR_CELLS as u128 / total as u128) as usize,
            done as u128 * 100 / total as u128,
        )
    };
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        (records as f64 / secs).round() as u64
    } else {
        0
    };
    format!(
        "[{}{}] {percent:>3}%  {done}/{total} offsets  {records} records  {rate} records/s",
        "#".repeat(filled),
        ".".repeat(BAR_CELLS - filled)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_fraction_done_and_the_rate() {
        assert_eq!(
            render(50, 200, 40, Duration::from_secs(2)),
            "[#######.......................]  25%  50/200 offsets  40 records  20 records/s"
        );
        assert_eq!(
            render(300, 200, 200, Duration::from_secs(1)),
            "[##############################] 100%  200/200 offsets  200 records  200 records/s"
        );
        assert_eq!(
            render(0, 0, 0, Duration::ZERO),
            "[##############################] 100%  0/0 offsets  0 records  0 records/s"
        );
    }

    #[test]
    fn redraws_at_most_ten_times_a_second() {
        let mut p = Progress::new(10);
        // (Drawing itself writes to the real stderr, so it is tried by hand, not here.)
        assert!(!p.due(), "no bar in the first 100 ms");
        p.started = Instant::now() - Duration::from_millis(500);
        p.last_draw = Instant::now() - Duration::from_millis(150);
        assert!(p.due());
        p.last_draw = Instant::now();
        assert!(!p.due());
    }
}

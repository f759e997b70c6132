//! How a read fetches, filters and reacts to data loss: [`ReadOptions`], [`TimeFilter`] and
//! [`OutOfRange`].

use std::time::Duration;

use kseek_protocol::records::DecodeOptions;

use crate::plan::{End, ReadSpec, Start, TimestampMs};
#[cfg(doc)]
use crate::{error::Error, read::BatchStream, read::DataLoss};

/// How a read fetches, filters and reacts to data loss. `ReadOptions::default()` suits most
/// reads; the fields are public, and the builder-style methods set them one at a time (new
/// fields may be added, so it can't be built as a struct literal).
///
/// ```
/// use std::time::Duration;
/// use kseek::read::{OutOfRange, ReadOptions};
///
/// let options = ReadOptions::default()
///     .partition_max_bytes(256 * 1024)
///     .out_of_range(OutOfRange::Fail)
///     .partition_discovery(None)
///     .max_buffered_bytes(16 * 1024 * 1024);
/// assert_eq!(options.max_wait, Duration::from_millis(500));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// The most bytes one Fetch response may carry (Fetch `MaxBytes`); default 50 MiB.
    pub fetch_max_bytes: i32,
    /// The most bytes one partition may contribute to a response (`PartitionMaxBytes`);
    /// default 1 MiB. A larger batch is still read whole (KIP-74).
    pub partition_max_bytes: i32,
    /// How long the broker may wait for `min_bytes` before answering (`MaxWaitMs`); default
    /// 500 ms. An unbounded read that has caught up long-polls with it. Capped below the
    /// connection's request timeout.
    pub max_wait: Duration,
    /// The bytes the broker waits for before answering (`MinBytes`); default 1.
    pub min_bytes: i32,
    /// Only hand out records whose timestamp lies in this range; default `None` (every record
    /// of the offset range).
    pub time_filter: Option<TimeFilter>,
    /// What to do when a position falls outside the partition's log; default
    /// [`OutOfRange::ResetToLogStart`].
    pub out_of_range: OutOfRange,
    /// How record batches are decoded (CRC checks, decompression limits).
    pub decode: DecodeOptions,
    /// How many threads may decompress the batches of one partition's answer at once, the
    /// read's own among them; default the cores available
    /// ([`std::thread::available_parallelism`]), 1 in a build without codecs. Threads are
    /// started only for an answer with at least two zstd or gzip batches of 256 KiB or more
    /// in all, and the batches are handed out in order, exactly as one at a time
    /// ([`PartitionReader::decode_threads`](kseek_protocol::records::PartitionReader::decode_threads)).
    /// 1 decompresses each batch on the read's thread.
    pub decode_threads: usize,
    /// How often an unbounded read looks for partitions added to its topics; default 30 s.
    /// `None` never looks. Bounded reads keep the partitions they were resolved with.
    pub partition_discovery: Option<Duration>,
    /// The most fetched record bytes (batches as they came on the wire) that may wait,
    /// decoded, for the caller to take them; default 64 MiB. While that many are waiting, no
    /// new Fetch starts; one starts again as soon as the caller takes a batch
    /// ([`BatchStream::next`]) and the bytes waiting fall below the bound. Within it the read
    /// fetches ahead: the next Fetch to a broker goes out as soon as the previous response is
    /// decoded, whether or not the caller has taken its batches yet. It is a bound on what
    /// waits, not on what is in flight: the responses of Fetches already sent (at most one
    /// per leader broker, each up to [`fetch_max_bytes`](Self::fetch_max_bytes), or one
    /// batch larger than that) come on top, and a single batch larger than the whole bound
    /// is still handed out, on its own. At least 1.
    pub max_buffered_bytes: usize,
    /// A second bound, on how many partition responses (one partition's batches from one
    /// Fetch response) may wait for the caller; default 1024, so that
    /// [`max_buffered_bytes`](Self::max_buffered_bytes) is the bound that normally applies.
    /// While that many wait, no answer is taken in and no Fetch starts. (It was the only
    /// bound, with a default of 16, before `max_buffered_bytes`.)
    pub buffer: usize,
    /// Whether Fetches use fetch sessions (KIP-227, Fetch v7+); default true. In a session,
    /// after one full fetch per broker, a Fetch names only the partitions whose position
    /// changed (and those added or removed): much smaller requests for reads over many
    /// partitions. Off, every Fetch names every partition (session id 0, epoch -1).
    pub fetch_sessions: bool,
}

/// The cores available with a codec compiled in (there may be batches to decompress), else 1
/// (nothing to share out, and no cgroup parsing in the program).
fn default_decode_threads() -> usize {
    let codecs = cfg!(any(
        feature = "gzip",
        feature = "snappy",
        feature = "lz4",
        feature = "zstd",
        feature = "zstd-c"
    ));
    if codecs {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    }
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            fetch_max_bytes: 50 * 1024 * 1024,
            partition_max_bytes: 1024 * 1024,
            max_wait: Duration::from_millis(500),
            min_bytes: 1,
            time_filter: None,
            out_of_range: OutOfRange::ResetToLogStart,
            decode: DecodeOptions::default(),
            decode_threads: default_decode_threads(),
            partition_discovery: Some(Duration::from_secs(30)),
            max_buffered_bytes: 64 * 1024 * 1024,
            buffer: 1024,
            fetch_sessions: true,
        }
    }
}

impl ReadOptions {
    /// Sets [`ReadOptions::fetch_max_bytes`].
    pub fn fetch_max_bytes(mut self, bytes: i32) -> Self {
        self.fetch_max_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::partition_max_bytes`].
    pub fn partition_max_bytes(mut self, bytes: i32) -> Self {
        self.partition_max_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::max_wait`].
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// Sets [`ReadOptions::min_bytes`].
    pub fn min_bytes(mut self, bytes: i32) -> Self {
        self.min_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::time_filter`].
    pub fn time_filter(mut self, filter: TimeFilter) -> Self {
        self.time_filter = Some(filter);
        self
    }

    /// Sets [`ReadOptions::out_of_range`].
    pub fn out_of_range(mut self, policy: OutOfRange) -> Self {
        self.out_of_range = policy;
        self
    }

    /// Sets [`ReadOptions::fetch_sessions`].
    pub fn fetch_sessions(mut self, on: bool) -> Self {
        self.fetch_sessions = on;
        self
    }

    /// Sets [`ReadOptions::partition_discovery`].
    pub fn partition_discovery(mut self, every: Option<Duration>) -> Self {
        self.partition_discovery = every;
        self
    }

    /// Sets [`ReadOptions::decode`].
    pub fn decode(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Sets [`ReadOptions::decode_threads`] (0 counts as 1).
    pub fn decode_threads(mut self, threads: usize) -> Self {
        self.decode_threads = threads.max(1);
        self
    }

    /// Sets [`ReadOptions::max_buffered_bytes`] (0 counts as 1).
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_bytes = bytes;
        self
    }

    /// Sets [`ReadOptions::buffer`].
    pub fn buffer(mut self, partition_responses: usize) -> Self {
        self.buffer = partition_responses;
        self
    }
}

/// A per-record timestamp filter: `start <= timestamp < end`, either bound optional.
///
/// With CreateTime timestamps chosen by producers, a partition's timestamps can be out of
/// order, so the offsets between two timestamps (what resolution gives) can hold records from
/// outside that time range, and miss some inside it. The filter drops the former; the latter
/// lie outside the offset range and need a wider read (say, an earlier start) to be found.
///
/// ```
/// use kseek::read::TimeFilter;
///
/// let f = TimeFilter::new(Some(1_000), Some(2_000));
/// assert!(f.contains(1_000) && f.contains(1_999));
/// assert!(!f.contains(999) && !f.contains(2_000));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeFilter {
    /// The lowest timestamp kept (inclusive); `None` for no lower bound.
    pub start: Option<TimestampMs>,
    /// The first timestamp dropped (exclusive); `None` for no upper bound.
    pub end: Option<TimestampMs>,
}

impl TimeFilter {
    /// A filter keeping `start <= timestamp < end`.
    pub fn new(start: Option<TimestampMs>, end: Option<TimestampMs>) -> Self {
        TimeFilter { start, end }
    }

    /// The time bounds of `spec`: its start and end where they are timestamps. `None` when
    /// neither is.
    pub fn from_spec(spec: &ReadSpec) -> Option<Self> {
        let start = match spec.start {
            Start::Timestamp(ts) => Some(ts),
            _ => None,
        };
        let end = match spec.end {
            End::Timestamp(ts) => Some(ts),
            _ => None,
        };
        (start.is_some() || end.is_some()).then_some(TimeFilter { start, end })
    }

    /// Whether a record with `timestamp` passes.
    #[inline]
    pub fn contains(&self, timestamp: TimestampMs) -> bool {
        self.start.is_none_or(|s| timestamp >= s) && self.end.is_none_or(|e| timestamp < e)
    }
}

/// What a read does when a partition's fetch position is outside its log
/// (OFFSET_OUT_OF_RANGE): retention or DeleteRecords removed the data it was about to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutOfRange {
    /// Look up the log start offset (ListOffsets -2), continue there, and report the offsets
    /// skipped as [`DataLoss`] ([`BatchStream::data_loss`]). The default.
    #[default]
    ResetToLogStart,
    /// End the read with [`ErrorKind::OffsetOutOfRange`](crate::ErrorKind::OffsetOutOfRange).
    Fail,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_filter_bounds() {
        let f = TimeFilter::new(Some(10), Some(20));
        assert!(!f.contains(9) && f.contains(10) && f.contains(19) && !f.contains(20));
        assert!(TimeFilter::default().contains(i64::MIN));
        let spec = ReadSpec::new(["t"], Start::Earliest, End::Timestamp(5));
        assert_eq!(
            TimeFilter::from_spec(&spec),
            Some(TimeFilter::new(None, Some(5)))
        );
        let spec = ReadSpec::new(["t"], Start::Earliest, End::Latest);
        assert_eq!(TimeFilter::from_spec(&spec), None);
    }
}

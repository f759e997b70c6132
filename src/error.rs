//! The client's errors: what the user was doing, where, and whether trying again can help.

use std::fmt;
use std::time::Duration;

use kseek_protocol::{ApiKey, ErrorCode};

/// A `Result` whose error is the client's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Something went wrong talking to Kafka: an [`ErrorKind`] behind one pointer.
///
/// [`Error::kind`] says what happened, with its details ([`Error::into_kind`] takes them);
/// [`Error::is_retriable`] says whether the same call may succeed later (after a metadata
/// refresh or a reconnect). `Display` and `Debug` are the kind's.
///
/// The kind is boxed so that every [`Result`] of the client is its value or one pointer: a
/// failure costs an allocation, and every `?` moves a word instead of the largest kind's 80
/// bytes (14 KB less code in a program that seeks, reads and commits; BENCHMARKS.md,
/// Footprint).
pub struct Error(Box<ErrorKind>);

impl Error {
    /// What went wrong, with its details.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// What went wrong, taken out of the error.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    /// Whether the same operation may succeed if tried again: [`ErrorKind::is_retriable`].
    pub fn is_retriable(&self) -> bool {
        self.0.is_retriable()
    }
}

impl From<ErrorKind> for Error {
    // One copy for every place that makes an error, not the box's allocation inlined into
    // each: errors are the cold path.
    #[inline(never)]
    #[cold]
    fn from(kind: ErrorKind) -> Self {
        Error(Box::new(kind))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// What went wrong talking to Kafka: the details of an [`Error`].
///
/// Every kind names the broker it happened with where there is one;
/// [`ErrorKind::is_retriable`] says whether the same call may succeed later.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Connecting to, reading from or writing to a broker failed.
    #[error("I/O error with broker {broker}: {source}")]
    Io {
        /// The broker's address.
        broker: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The broker sent bytes that don't decode, or we could not encode a request.
    #[error("protocol error with broker {broker}: {source}")]
    Protocol {
        /// The broker's address.
        broker: String,
        /// What the wire crate reported.
        #[source]
        source: kseek_protocol::Error,
    },
    /// A request got no answer in time.
    #[error("{api} request to broker {broker} timed out after {}", Dur(*after))]
    Timeout {
        /// The broker's address.
        broker: String,
        /// The API of the request.
        api: ApiKey,
        /// How long we waited.
        after: Duration,
    },
    /// The connection closed while a request was in flight, or was already closed.
    #[error("connection to broker {broker} closed: {reason}")]
    ConnectionClosed {
        /// The broker's address.
        broker: String,
        /// Why it closed.
        reason: String,
    },
    /// The broker answered with an error code.
    #[error("broker {broker} answered {api} with {code}{}", BrokerMessage(message))]
    Broker {
        /// The broker's address.
        broker: String,
        /// The API of the request.
        api: ApiKey,
        /// The error code.
        code: ErrorCode,
        /// The broker's own message, where the API carries one.
        message: Option<String>,
    },
    /// The topic doesn't exist, or the broker doesn't know it yet (shortly after creation):
    /// retriable until the retry deadline.
    #[error(
        "topic {topic:?} does not exist (broker {broker} answered UNKNOWN_TOPIC_OR_PARTITION)"
    )]
    UnknownTopic {
        /// The topic's name.
        topic: String,
        /// The broker that answered.
        broker: String,
    },
    /// The topic exists but has no such partition.
    #[error("topic {topic:?} has no partition {partition} (it has {partitions} partitions)")]
    UnknownPartition {
        /// The topic's name.
        topic: String,
        /// The partition asked for.
        partition: i32,
        /// How many partitions the topic has.
        partitions: usize,
    },
    /// The partition has no leader right now (an election is under way): retriable.
    #[error("partition {partition} of topic {topic:?} has no leader right now")]
    LeaderNotAvailable {
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// A broker id that the cluster metadata doesn't list (it may have just joined): retriable.
    #[error("broker id {broker_id} is not in the cluster metadata")]
    UnknownBroker {
        /// The broker's node id.
        broker_id: i32,
    },
    /// The broker answered with an error code for one partition.
    #[error(
        "broker {broker} answered {api} for partition {partition} of topic {topic:?} with {code}"
    )]
    Partition {
        /// The broker's address.
        broker: String,
        /// The API of the request.
        api: ApiKey,
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i32,
        /// The error code.
        code: ErrorCode,
    },
    /// No bootstrap server answered.
    #[error("none of the bootstrap servers {servers:?} answered; the last error: {source}")]
    Bootstrap {
        /// The addresses tried.
        servers: Vec<String>,
        /// The last failure.
        #[source]
        source: Error,
    },
    /// A retriable error kept happening until the retry deadline.
    #[error("{what}: gave up after {attempts} attempts in {}: {source}", Dur(*elapsed))]
    RetriesExhausted {
        /// What was being done.
        what: String,
        /// How many attempts were made.
        attempts: u32,
        /// How long they took.
        elapsed: Duration,
        /// The last attempt's error.
        #[source]
        source: Error,
    },
    /// A start offset lies after the end offset of the same partition.
    #[error(
        "partition {partition} of topic {topic:?}: start offset {start} is after end offset {end}"
    )]
    StartAfterEnd {
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i32,
        /// The resolved start.
        start: i64,
        /// The resolved end.
        end: i64,
    },
    /// Strict mode: no record has a timestamp at or after the one asked for (below the last
    /// fetchable offset).
    #[error("partition {partition} of topic {topic:?} has no {} below offset {last_fetchable_offset} (strict mode)", LookupName(*timestamp))]
    TimestampNotFound {
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i32,
        /// The timestamp looked up (ms since the epoch), or the ListOffsets timestamp of a
        /// special position (-3 max timestamp, -4 earliest local, -5 latest tiered).
        timestamp: i64,
        /// The last fetchable offset at resolution.
        last_fetchable_offset: i64,
    },
    /// The group has no committed offset for these partitions and no fallback was given.
    #[error(
        "group {group:?} has no committed offset for {}",
        Partitions(partitions)
    )]
    NoCommittedOffset {
        /// The consumer group.
        group: String,
        /// The partitions without a commit, as (topic, partition).
        partitions: Vec<(String, i32)>,
    },
    /// A position ([`Start::MaxTimestamp`](crate::Start::MaxTimestamp),
    /// [`Start::EarliestLocal`](crate::Start::EarliestLocal),
    /// [`Start::LatestTiered`](crate::Start::LatestTiered) or their [`End`](crate::End)
    /// twins) that the partition leader's ListOffsets version can't carry.
    #[error("broker {broker} speaks ListOffsets up to v{broker_max_version}, but the {} position (ListOffsets timestamp {timestamp}) needs v{required_version}", special_name(*timestamp))]
    UnsupportedTimestamp {
        /// The broker's address.
        broker: String,
        /// The ListOffsets timestamp the position is sent as (-3 max timestamp, -4 earliest
        /// local, -5 latest tiered): what the broker was asked, for diagnosis.
        timestamp: i64,
        /// The lowest version that carries it.
        required_version: i16,
        /// The highest version usable with this broker.
        broker_max_version: i16,
    },
    /// A standalone commit (generation -1, no member id) to a group that has active members.
    #[error("cannot commit offsets for group {group:?}: the group has active members (broker {broker} answered {code}); standalone commits need an empty group, so stop its consumers first")]
    GroupHasActiveMembers {
        /// The consumer group.
        group: String,
        /// The coordinator's address.
        broker: String,
        /// The code the coordinator answered.
        code: ErrorCode,
    },
    /// A read's fetch position lies outside the partition's log (retention or DeleteRecords
    /// removed the data) and the read's policy is to fail
    /// ([`OutOfRange::Fail`](crate::read::OutOfRange::Fail)).
    #[error("partition {partition} of topic {topic:?}: offset {offset} is out of range (broker {broker}); the data was deleted or the log truncated")]
    OffsetOutOfRange {
        /// The broker's address.
        broker: String,
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i32,
        /// The fetch position that was out of range.
        offset: i64,
    },
    /// Record batches fetched from a partition don't decode (CRC mismatch, bad lengths, a
    /// decompression failure).
    #[error("partition {partition} of topic {topic:?}: records from offset {offset} (broker {broker}) don't decode: {source}")]
    CorruptRecords {
        /// The broker's address.
        broker: String,
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i32,
        /// The position of the batch that failed.
        offset: i64,
        /// What the wire crate reported (boxed: the largest variant sets the size of every
        /// [`Result`]).
        #[source]
        source: Box<kseek_protocol::Error>,
    },
    /// The TLS handshake with a broker failed: an untrusted or mismatched certificate, a
    /// listener that doesn't speak TLS, a refused client certificate.
    #[error("TLS with broker {broker} failed: {message}")]
    Tls {
        /// The broker's address.
        broker: String,
        /// What went wrong, naming the certificate where there is one.
        message: String,
    },
    /// SASL authentication with a broker failed: wrong credentials, a mechanism the broker
    /// doesn't enable, a server that failed to prove it knows the password.
    #[error("SASL {mechanism} authentication with broker {broker} failed: {message}")]
    Authentication {
        /// The broker's address.
        broker: String,
        /// The mechanism tried (`PLAIN`, `SCRAM-SHA-512`, ...).
        mechanism: String,
        /// What went wrong: the broker's message where it gave one.
        message: String,
    },
    /// The connection settings can't be used (a CA file that doesn't parse, SASL without
    /// credentials, TLS asked of a build without the `tls` feature).
    #[error("invalid connection settings: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The read spec asks for something that can't be resolved: no topics, a negative
    /// timestamp or offset, a start time after the end time, an offset for a partition the
    /// read doesn't cover, a nested fallback.
    #[error("invalid read: {reason}")]
    InvalidSpec {
        /// What is wrong.
        reason: String,
    },
    /// A client was configured without any bootstrap server (an empty list, or only commas
    /// and blanks).
    #[error("no bootstrap servers given: a client needs at least one host:port to learn the cluster from")]
    NoBootstrapServers,
    /// A broker's answer decoded, but says something no correct broker says: -1 where an
    /// offset is required, no entry for a partition that was asked about.
    #[error("broker {broker} gave an unusable {api} answer: {reason}")]
    InvalidResponse {
        /// The broker's address (or node id, where the address is not at hand).
        broker: String,
        /// The API of the request.
        api: ApiKey,
        /// What is wrong with the answer.
        reason: String,
    },
    /// A read has partitions left to read but nothing in flight and nothing to wait for: a
    /// bug in kseek's read state machine. The read fails instead of ending early.
    #[error("the read stalled with partitions left to read, no request in flight and nothing to wait for (a bug in kseek; please report it)")]
    ReadStalled,
}

impl ErrorKind {
    /// Whether the same operation may succeed if tried again (after refreshing metadata or
    /// reconnecting). The client's own retries (until
    /// [`ClientConfig::retry_deadline`](crate::ClientConfig::retry_deadline)) use this, and
    /// [`ErrorKind::RetriesExhausted`] is what they end with.
    ///
    /// Retriable, because the cause passes by itself:
    /// - [`ErrorKind::Io`], [`ErrorKind::Timeout`] and [`ErrorKind::ConnectionClosed`]: the network or a
    ///   broker was down or slow; a new connection may work. [`ErrorKind::Bootstrap`] when its
    ///   last error is one of these (not when a server refused the credentials or certificate).
    /// - [`ErrorKind::Broker`] and [`ErrorKind::Partition`] with a code Kafka marks retriable
    ///   ([`ErrorCode::is_retriable`]: NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
    ///   OFFSET_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, ...); others are not.
    /// - [`ErrorKind::UnknownTopic`] (a topic just created is unknown to some brokers for a
    ///   moment), [`ErrorKind::LeaderNotAvailable`] (an election is under way) and
    ///   [`ErrorKind::UnknownBroker`] (a broker that just joined).
    ///
    /// Not retriable, because trying again gives the same answer:
    /// - settings a broker refuses or that can't be used: [`ErrorKind::Tls`],
    ///   [`ErrorKind::Authentication`], [`ErrorKind::Config`];
    /// - what the caller asked for: [`ErrorKind::InvalidSpec`], [`ErrorKind::NoBootstrapServers`],
    ///   [`ErrorKind::UnknownPartition`], [`ErrorKind::StartAfterEnd`], [`ErrorKind::TimestampNotFound`],
    ///   [`ErrorKind::NoCommittedOffset`], [`ErrorKind::UnsupportedTimestamp`],
    ///   [`ErrorKind::GroupHasActiveMembers`] and [`ErrorKind::OffsetOutOfRange`] (a fail-fast read);
    /// - bytes or answers that are wrong: [`ErrorKind::Protocol`], [`ErrorKind::CorruptRecords`],
    ///   [`ErrorKind::InvalidResponse`];
    /// - the end of the road: [`ErrorKind::RetriesExhausted`] (retried already),
    ///   and [`ErrorKind::ReadStalled`] (a bug).
    pub fn is_retriable(&self) -> bool {
        match self {
            ErrorKind::Io { .. }
            | ErrorKind::Timeout { .. }
            | ErrorKind::ConnectionClosed { .. } => true,
            ErrorKind::Protocol { .. } => false,
            ErrorKind::Broker { code, .. } | ErrorKind::Partition { code, .. } => {
                code.is_retriable()
            }
            ErrorKind::UnknownTopic { .. }
            | ErrorKind::LeaderNotAvailable { .. }
            | ErrorKind::UnknownBroker { .. } => true,
            // A bootstrap server that refused our credentials or certificate will do so again.
            ErrorKind::Bootstrap { source, .. } => source.is_retriable(),
            ErrorKind::Tls { .. } | ErrorKind::Authentication { .. } | ErrorKind::Config { .. } => {
                false
            }
            ErrorKind::UnknownPartition { .. }
            | ErrorKind::RetriesExhausted { .. }
            | ErrorKind::StartAfterEnd { .. }
            | ErrorKind::TimestampNotFound { .. }
            | ErrorKind::NoCommittedOffset { .. }
            | ErrorKind::UnsupportedTimestamp { .. }
            | ErrorKind::GroupHasActiveMembers { .. }
            | ErrorKind::InvalidSpec { .. }
            | ErrorKind::NoBootstrapServers
            | ErrorKind::InvalidResponse { .. }
            | ErrorKind::ReadStalled
            | ErrorKind::OffsetOutOfRange { .. }
            | ErrorKind::CorruptRecords { .. } => false,
        }
    }
}

/// A duration in an error message, as `Duration`'s `Debug` writes it ("1.5s", "250ms",
/// "3µs", "0ns"), by integer arithmetic alone: `Debug` for `Duration` brings its decimal
/// formatting with rounding, precision and padding into the binary (about 2 KB in the
/// footprint probe) for the messages that show a duration.
pub(crate) struct Dur(pub(crate) Duration);

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secs, nanos) = (self.0.as_secs(), self.0.subsec_nanos());
        // The largest unit with a whole number of at least 1, and the rest as a fraction of
        // that unit in `digits` decimal places.
        let (whole, mut fraction, mut digits, unit) = if secs > 0 {
            (secs, nanos, 9, "s")
        } else if nanos >= 1_000_000 {
            (u64::from(nanos / 1_000_000), nanos % 1_000_000, 6, "ms")
        } else if nanos >= 1_000 {
            (u64::from(nanos / 1_000), nanos % 1_000, 3, "µs")
        } else {
            (u64::from(nanos), 0, 0, "ns")
        };
        if fraction == 0 {
            return write!(f, "{whole}{unit}");
        }
        // Trailing zeros left out, leading ones kept by the zero-padded width.
        while fraction % 10 == 0 {
            fraction /= 10;
            digits -= 1;
        }
        write!(f, "{whole}.{fraction:0digits$}{unit}")
    }
}

/// The name of a special ListOffsets timestamp, for an error message.
fn special_name(timestamp: i64) -> &'static str {
    use kseek_protocol::messages::list_offsets::{EARLIEST_LOCAL, LATEST_TIERED, MAX_TIMESTAMP};
    match timestamp {
        MAX_TIMESTAMP => "max timestamp",
        EARLIEST_LOCAL => "earliest local",
        LATEST_TIERED => "latest tiered",
        _ => "special",
    }
}

// The parts of messages below are written straight to the formatter: a `String` built by
// `format!` for each costs its allocation and formatting code in every message that has one.

/// `: the broker's message`, where it gave one.
struct BrokerMessage<'a>(&'a Option<String>);

impl fmt::Display for BrokerMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(message) => write!(f, ": {message}"),
            None => Ok(()),
        }
    }
}

/// What a lookup of a timestamp looked for.
struct LookupName(i64);

impl fmt::Display for LookupName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            t if t >= 0 => write!(f, "record with timestamp >= {t}"),
            t => write!(f, "{} offset", special_name(t)),
        }
    }
}

/// `topic-a[0], topic-a[2]`.
struct Partitions<'a>(&'a [(String, i32)]);

impl fmt::Display for Partitions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (topic, partition)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{topic}[{partition}]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_one_pointer_and_keeps_its_kinds_text_and_source() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        assert_eq!(
            std::mem::size_of::<Result<()>>(),
            std::mem::size_of::<usize>()
        );
        let inner = Error::from(ErrorKind::Timeout {
            broker: "b:1".into(),
            api: ApiKey::FETCH,
            after: Duration::from_secs(2),
        });
        let inner_text = inner.to_string();
        let outer = Error::from(ErrorKind::RetriesExhausted {
            what: "reading".into(),
            attempts: 3,
            elapsed: Duration::from_secs(5),
            source: inner,
        });
        assert!(outer.to_string().ends_with(&inner_text), "{outer}");
        assert_eq!(
            std::error::Error::source(&outer).map(ToString::to_string),
            Some(inner_text)
        );
        assert!(!outer.is_retriable());
        match outer.into_kind() {
            ErrorKind::RetriesExhausted { source, .. } => assert!(source.is_retriable()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn special_positions_are_named_in_messages() {
        let unsupported = ErrorKind::UnsupportedTimestamp {
            broker: "b:1".into(),
            timestamp: -3,
            required_version: 7,
            broker_max_version: 6,
        };
        assert_eq!(
            unsupported.to_string(),
            "broker b:1 speaks ListOffsets up to v6, but the max timestamp position (ListOffsets timestamp -3) needs v7"
        );
        let not_found = |timestamp| ErrorKind::TimestampNotFound {
            topic: "t".into(),
            partition: 1,
            timestamp,
            last_fetchable_offset: 9,
        };
        assert_eq!(
            not_found(5).to_string(),
            "partition 1 of topic \"t\" has no record with timestamp >= 5 below offset 9 (strict mode)"
        );
        assert_eq!(
            not_found(-5).to_string(),
            "partition 1 of topic \"t\" has no latest tiered offset below offset 9 (strict mode)"
        );
    }

    #[test]
    fn durations_read_as_their_debug_form() {
        let nanos = [
            0, 1, 7, 999, 1_000, 1_500, 1_001, 999_999, 1_000_000, 1_000_001,
        ];
        let more_nanos = [250_000_000, 100_010_000, 999_999_999, 123_456_789];
        for secs in [0, 1, 2, 59, 3_600, u64::MAX] {
            for nanos in nanos.into_iter().chain(more_nanos) {
                let d = Duration::new(secs, nanos);
                assert_eq!(Dur(d).to_string(), format!("{d:?}"));
            }
        }
        let timeout = ErrorKind::Timeout {
            broker: "b:1".into(),
            api: ApiKey::FETCH,
            after: Duration::from_millis(1_500),
        };
        assert_eq!(
            timeout.to_string(),
            "Fetch request to broker b:1 timed out after 1.5s"
        );
    }

    #[test]
    fn message_parts_are_written_in_place() {
        let broker = |message: Option<&str>| ErrorKind::Broker {
            broker: "b:1".into(),
            api: ApiKey::FETCH,
            code: ErrorCode(3),
            message: message.map(str::to_owned),
        };
        let code = ErrorCode(3).to_string();
        assert_eq!(
            broker(None).to_string(),
            format!("broker b:1 answered Fetch with {code}")
        );
        assert_eq!(
            broker(Some("gone")).to_string(),
            format!("broker b:1 answered Fetch with {code}: gone")
        );
        let missing = ErrorKind::NoCommittedOffset {
            group: "g".into(),
            partitions: vec![("a".into(), 0), ("a".into(), 2), ("b".into(), 1)],
        };
        assert_eq!(
            missing.to_string(),
            "group \"g\" has no committed offset for a[0], a[2], b[1]"
        );
    }
}

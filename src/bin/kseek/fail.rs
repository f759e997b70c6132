//! The command line's errors: one line each, `kseek: <what failed>: <why>. <what to do>`, and
//! the exit code that goes with it.

use std::fmt;

use kseek::protocol::Error as WireError;
use kseek::Error;

/// Exit code: success.
pub(crate) const OK: u8 = 0;
/// Exit code: anything not covered below (writing output failed, ...).
pub(crate) const OTHER: u8 = 1;
/// Exit code: a bad flag or position (clap uses 2 too).
pub(crate) const USAGE: u8 = 2;
/// Exit code: Kafka or the network (cannot connect, unknown topic, broker error codes, group
/// errors).
pub(crate) const KAFKA: u8 = 3;
/// Exit code: the broker sent data that doesn't decode (CRC, lengths, decompression).
pub(crate) const CORRUPT: u8 = 4;
/// Exit code: a bounded read stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub(crate) const INTERRUPTED: u8 = 130;

/// A failure, ready to print: the whole line after `kseek: `, and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail {
    /// The exit code.
    pub(crate) code: u8,
    /// The message, without the `kseek: ` prefix.
    pub(crate) message: String,
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every line ends as a sentence does.
        let stop = if self.message.ends_with('.') { "" } else { "." };
        write!(f, "kseek: {}{stop}", self.message)
    }
}

impl Fail {
    /// A usage error (exit 2).
    pub(crate) fn usage(message: impl Into<String>) -> Fail {
        Fail {
            code: USAGE,
            message: message.into(),
        }
    }

    /// Writing output failed (exit 1).
    pub(crate) fn output(error: &std::io::Error) -> Fail {
        Fail {
            code: OTHER,
            message: format!(
                "writing the output failed: {error}. Check the disk or the pipe stdout goes to"
            ),
        }
    }

    /// A library error met while doing `doing` ("reading", "resolving the plan", ...).
    pub(crate) fn kafka(doing: &str, error: &Error) -> Fail {
        let code = exit_code(error);
        let message = match innermost(error) {
            Error::UnknownTopic { topic, .. } => format!(
                "topic {topic:?} does not exist (UNKNOWN_TOPIC_OR_PARTITION). Check the name with kseek metadata"
            ),
            // "cannot connect to Kafka at ..." says what failed by itself.
            _ if matches!(error, Error::Bootstrap { .. }) => {
                format!("{}. {}", one_line(&describe(error)), hint(error))
            }
            _ => format!("{doing}: {}. {}", one_line(&describe(error)), hint(error)),
        };
        Fail {
            code,
            message: format!("{message}."),
        }
    }
}

/// The error a retry gave up on, through every [`Error::RetriesExhausted`] and
/// [`Error::Bootstrap`] wrapper.
fn innermost(error: &Error) -> &Error {
    match error {
        Error::RetriesExhausted { source, .. } => innermost(source),
        other => other,
    }
}

/// The error's text, shorter than its `Display` where that repeats itself: a failed bootstrap
/// names its servers once, and a retry's elapsed time is rounded.
fn describe(error: &Error) -> String {
    match error {
        Error::Bootstrap { servers, source } => {
            let why = match source.as_ref() {
                Error::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            format!("cannot connect to Kafka at {}: {why}", servers.join(","))
        }
        Error::RetriesExhausted {
            what,
            attempts,
            elapsed,
            source,
        } => format!(
            "{what}: gave up after {attempts} attempts in {:.1}s: {}",
            elapsed.as_secs_f64(),
            describe(source)
        ),
        other => other.to_string(),
    }
}

/// The exit code of a library error: 4 for data that doesn't decode, 2 for a read that can't
/// be resolved as asked (or no bootstrap server), 1 for a cancelled task or a stalled read
/// (kseek's own failures), 3 for everything Kafka or the network said.
pub(crate) fn exit_code(error: &Error) -> u8 {
    match error {
        Error::RetriesExhausted { source, .. } | Error::Bootstrap { source, .. } => {
            exit_code(source)
        }
        Error::CorruptRecords { .. } => CORRUPT,
        Error::Protocol { source, .. } => match source {
            // The broker speaks no version we do: a Kafka problem, not corrupt bytes.
            WireError::NoCommonVersion { .. }
            | WireError::ApiNotSupported { .. }
            | WireError::UnsupportedVersion { .. }
            | WireError::FieldNotInVersion { .. }
            | WireError::BrokerError { .. } => KAFKA,
            _ => CORRUPT,
        },
        Error::InvalidSpec { .. } | Error::StartAfterEnd { .. } | Error::NoBootstrapServers => {
            USAGE
        }
        // Not Kafka's doing: the runtime going away, or a bug in kseek.
        Error::Cancelled { .. } | Error::ReadStalled => OTHER,
        _ => KAFKA,
    }
}

/// What to do about `error`, one sentence without the final full stop.
fn hint(error: &Error) -> &'static str {
    match error {
        Error::RetriesExhausted { source, .. } => hint(source),
        Error::Bootstrap { .. } | Error::Io { .. } | Error::ConnectionClosed { .. } => {
            "Check that Kafka is running and reachable at --bootstrap (or KSEEK_BOOTSTRAP)"
        }
        Error::Timeout { .. } => "Check that the broker is reachable and not overloaded, then try again",
        Error::Protocol { .. } if exit_code(error) == KAFKA => {
            "This broker's version is not supported by kseek; try a broker on Kafka 2.1 or newer"
        }
        Error::Protocol { .. } | Error::CorruptRecords { .. } => {
            "The broker sent data kseek can't decode; try again, and report it with the broker's version if it persists"
        }
        Error::UnknownTopic { .. } => "Check the name with kseek metadata",
        Error::UnknownPartition { .. } => "List the partitions with kseek metadata --topic <TOPIC>",
        Error::LeaderNotAvailable { .. } | Error::UnknownBroker { .. } => {
            "A leader election may be under way; check the cluster with kseek metadata and try again"
        }
        Error::StartAfterEnd { .. } => "Pick a --from position before --to",
        Error::NoBootstrapServers => "Give --bootstrap host:port (or set KSEEK_BOOTSTRAP)",
        Error::InvalidResponse { .. } => {
            "The broker answered something no correct broker does; check its log, and report it with the broker's version"
        }
        Error::ReadStalled => "This is a bug in kseek; report it with the command you ran",
        Error::InvalidSpec { .. } => "Check --from and --to",
        Error::TimestampNotFound { .. } => "Pick an earlier time",
        Error::NoCommittedOffset { .. } => {
            "Start from another position (e.g. --from earliest), or set the group's offsets with kseek commit"
        }
        Error::UnsupportedTimestamp { .. } => "Use another position; this broker is too old for it",
        Error::GroupHasActiveMembers { .. } => {
            "kafka-consumer-groups.sh --describe --group <GROUP> lists the members"
        }
        Error::OffsetOutOfRange { .. } => "Read from a later position (e.g. --from earliest)",
        Error::Broker { .. } | Error::Partition { .. } => {
            "Check the broker's log and access rights, then try again"
        }
        _ => "Try again, and check the broker's log if it persists",
    }
}

/// `text` on one line, without a trailing full stop (the hint follows one).
fn one_line(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    line.trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kseek::protocol::{ApiKey, ErrorCode};

    use super::*;

    fn io(kind: std::io::ErrorKind) -> Error {
        Error::Io {
            broker: "b:1".into(),
            source: kind.into(),
        }
    }

    #[test]
    fn network_and_kafka_errors_exit_3() {
        let kafka = [
            io(std::io::ErrorKind::ConnectionRefused),
            Error::Bootstrap {
                servers: vec!["b:1".into()],
                source: Box::new(io(std::io::ErrorKind::ConnectionRefused)),
            },
            Error::Timeout {
                broker: "b:1".into(),
                api: ApiKey::FETCH,
                after: Duration::from_secs(1),
            },
            Error::ConnectionClosed {
                broker: "b:1".into(),
                reason: "eof".into(),
            },
            Error::Broker {
                broker: "b:1".into(),
                api: ApiKey::METADATA,
                code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                message: None,
            },
            Error::UnknownTopic {
                topic: "x".into(),
                broker: "b:1".into(),
            },
            Error::UnknownPartition {
                topic: "x".into(),
                partition: 9,
                partitions: 3,
            },
            Error::LeaderNotAvailable {
                topic: "x".into(),
                partition: 0,
            },
            Error::UnknownBroker { broker_id: 4 },
            Error::Partition {
                broker: "b:1".into(),
                api: ApiKey::FETCH,
                topic: "x".into(),
                partition: 0,
                code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
            },
            Error::NoCommittedOffset {
                group: "g".into(),
                partitions: vec![("x".into(), 0)],
            },
            Error::GroupHasActiveMembers {
                group: "g".into(),
                broker: "b:1".into(),
                code: ErrorCode::UNKNOWN_MEMBER_ID,
            },
            Error::OffsetOutOfRange {
                broker: "b:1".into(),
                topic: "x".into(),
                partition: 0,
                offset: 5,
            },
            Error::TimestampNotFound {
                topic: "x".into(),
                partition: 0,
                timestamp: 5,
                last_fetchable_offset: 3,
            },
            Error::UnsupportedTimestamp {
                broker: "b:1".into(),
                timestamp: -3,
                required_version: 7,
                broker_max_version: 6,
            },
            Error::Protocol {
                broker: "b:1".into(),
                source: WireError::NoCommonVersion {
                    api: "Fetch",
                    broker_min: 0,
                    broker_max: 3,
                    ours_min: 4,
                    ours_max: 17,
                },
            },
        ];
        for e in &kafka {
            assert_eq!(exit_code(e), KAFKA, "{e:?}");
            let f = Fail::kafka("reading", e);
            assert!(!f.message.contains('\n') && f.message.ends_with('.'), "{f}");
        }
    }

    #[test]
    fn corrupt_data_exits_4() {
        let crc = WireError::CrcMismatch {
            base_offset: 0,
            stored: 1,
            computed: 2,
        };
        let corrupt = [
            Error::CorruptRecords {
                broker: "b:1".into(),
                topic: "x".into(),
                partition: 0,
                offset: 0,
                source: crc.clone(),
            },
            Error::Protocol {
                broker: "b:1".into(),
                source: WireError::Truncated {
                    what: "x",
                    needed: 4,
                    remaining: 1,
                },
            },
            Error::RetriesExhausted {
                what: "w".into(),
                attempts: 2,
                elapsed: Duration::from_secs(1),
                source: Box::new(Error::Protocol {
                    broker: "b:1".into(),
                    source: crc,
                }),
            },
        ];
        for e in &corrupt {
            assert_eq!(exit_code(e), CORRUPT, "{e:?}");
        }
    }

    #[test]
    fn unresolvable_reads_are_usage_errors() {
        let e = Error::StartAfterEnd {
            topic: "x".into(),
            partition: 0,
            start: 9,
            end: 3,
        };
        assert_eq!(exit_code(&e), USAGE);
        assert_eq!(
            Fail::kafka("resolving the read", &e).to_string(),
            "kseek: resolving the read: partition 0 of topic \"x\": start offset 9 is after end offset 3. Pick a --from position before --to."
        );
        assert_eq!(exit_code(&Error::InvalidSpec { reason: "r".into() }), USAGE);
    }

    #[test]
    fn the_new_variants_have_their_own_codes_and_hints() {
        let f = Fail::kafka("connecting", &Error::NoBootstrapServers);
        assert_eq!(f.code, USAGE);
        assert!(
            f.message
                .ends_with("Give --bootstrap host:port (or set KSEEK_BOOTSTRAP)."),
            "{f}"
        );
        let bad = Error::InvalidResponse {
            broker: "b:1".into(),
            api: ApiKey::LIST_OFFSETS,
            reason: "offset -1 for the latest or earliest offset for partition 0 of topic \"x\""
                .into(),
        };
        let f = Fail::kafka("resolving the read", &bad);
        assert_eq!(f.code, KAFKA);
        assert!(f.message.contains("no correct broker"), "{f}");
        assert!(!f.message.contains("--from"), "{f}");
        assert_eq!(exit_code(&Error::ReadStalled), OTHER);
        let cancelled = Error::Cancelled {
            what: "a ListOffsets request".into(),
            reason: "task 3 was cancelled".into(),
        };
        assert_eq!(exit_code(&cancelled), OTHER);
        assert!(!Fail::kafka("resolving the read", &cancelled)
            .message
            .contains("--from"));
    }

    #[test]
    fn an_unknown_topic_says_to_check_the_name_even_after_retries() {
        let e = Error::RetriesExhausted {
            what: "fetching metadata".into(),
            attempts: 9,
            elapsed: Duration::from_secs(30),
            source: Box::new(Error::UnknownTopic {
                topic: "x".into(),
                broker: "b:1".into(),
            }),
        };
        let f = Fail::kafka("resolving the read", &e);
        assert_eq!(f.code, KAFKA);
        assert_eq!(
            f.to_string(),
            "kseek: topic \"x\" does not exist (UNKNOWN_TOPIC_OR_PARTITION). Check the name with kseek metadata."
        );
    }

    #[test]
    fn connection_failures_say_to_check_the_bootstrap() {
        let e = Error::Bootstrap {
            servers: vec!["127.0.0.1:1".into()],
            source: Box::new(io(std::io::ErrorKind::ConnectionRefused)),
        };
        let f = Fail::kafka("connecting", &e);
        assert!(
            f.message
                .starts_with("cannot connect to Kafka at 127.0.0.1:1: connection refused. Check"),
            "{f}"
        );
        let e = Error::RetriesExhausted {
            what: "reading partition 0".into(),
            attempts: 3,
            elapsed: Duration::from_millis(29_543),
            source: Box::new(e),
        };
        let f = Fail::kafka("reading", &e);
        assert!(
            f.message.starts_with(
                "reading: reading partition 0: gave up after 3 attempts in 29.5s: cannot connect to Kafka at 127.0.0.1:1: "
            ),
            "{f}"
        );
        assert!(
            f.message.ends_with(
                "Check that Kafka is running and reachable at --bootstrap (or KSEEK_BOOTSTRAP)."
            ),
            "{f}"
        );
    }
}

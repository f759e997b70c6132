//! The command line's errors: one line each, `kseek: <what failed>: <why>. <what to do>`, and
//! the exit code that goes with it.

use std::fmt;

use kseek::protocol::{Error as WireError, ErrorCode};
use kseek::{Error, ErrorKind};

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
/// Exit code: a key or value that does not decode as `-s` says (`--on-decode-error fail`).
pub(crate) const DECODE: u8 = 5;
/// Exit code: the Schema Registry failed (unreachable, credentials refused, 5xx).
pub(crate) const REGISTRY: u8 = 6;
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
        let hint = match error.kind() {
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                "Free space on that disk, or write the output elsewhere"
            }
            std::io::ErrorKind::FileTooLarge => {
                "The file system, or the shell's file size limit (ulimit -f), allows no larger file; write elsewhere or raise the limit"
            }
            _ => "Check the disk or the pipe stdout goes to",
        };
        Fail {
            code: OTHER,
            message: format!("writing the output failed: {error}. {hint}"),
        }
    }

    /// The output file `path` could not be created.
    pub(crate) fn output_to(path: &std::path::Path, error: &std::io::Error) -> Fail {
        Fail {
            code: OTHER,
            message: format!(
                "cannot write --output {}: {error}. Check the folder exists and is writable",
                path.display()
            ),
        }
    }

    /// A library error met while doing `doing` ("reading", "resolving the plan", ...).
    pub(crate) fn kafka(doing: &str, error: &Error) -> Fail {
        let code = exit_code(error);
        let message = match innermost(error).kind() {
            ErrorKind::UnknownTopic { topic, .. } => format!(
                "topic {topic:?} does not exist (UNKNOWN_TOPIC_OR_PARTITION). Check the name with kseek metadata"
            ),
            ErrorKind::UnknownPartition {
                topic,
                partition,
                partitions,
            } => format!(
                "topic {topic:?} has no partition {partition} (it has {partitions}: 0 to {}). Pick partitions that exist; kseek metadata --topic {topic} lists them",
                partitions.saturating_sub(1)
            ),
            // "cannot connect to Kafka at ..." says what failed by itself.
            _ if matches!(error.kind(), ErrorKind::Bootstrap { .. }) => {
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

/// The subcommands, for usage lines.
const SUBCOMMANDS: [&str; 8] = [
    "read",
    "offsets",
    "splits",
    "read-split",
    "metadata",
    "commit",
    "committed",
    "sql",
];

impl Fail {
    /// A command-line parse error as one usage line (exit 2) that names the flag and says
    /// what to do, built from clap's error kind and context instead of clap's several lines
    /// of usage. `args` are the process's arguments (for the subcommand's name). Not for
    /// `--help` and `--version`, which clap prints itself.
    pub(crate) fn from_clap(error: &clap::Error, args: &[String]) -> Fail {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let sub = args
            .iter()
            .skip(1)
            .find(|a| SUBCOMMANDS.contains(&a.as_str()));
        // "read has no flag --x" or "kseek has no flag --x".
        let (who, command) = match sub {
            Some(sub) => (sub.clone(), format!("kseek {sub}")),
            None => ("kseek".to_owned(), "kseek".to_owned()),
        };
        let strings = |kind: ContextKind| -> Vec<String> {
            match error.get(kind) {
                Some(ContextValue::String(s)) => vec![s.clone()],
                Some(ContextValue::Strings(v)) => v.clone(),
                Some(ContextValue::StyledStr(s)) => vec![s.to_string()],
                Some(ContextValue::StyledStrs(v)) => v.iter().map(ToString::to_string).collect(),
                _ => Vec::new(),
            }
        };
        let first = |kind: ContextKind| strings(kind).into_iter().next().unwrap_or_default();
        // "--partition <P>" names the flag as --partition.
        let arg = first(ContextKind::InvalidArg);
        let flag = arg.split_whitespace().next().unwrap_or_default().to_owned();
        let value = first(ContextKind::InvalidValue);
        let suggestion = |kind: ContextKind| match strings(kind).as_slice() {
            [] => String::new(),
            some => format!(" (did you mean {}?)", one_of(some)),
        };
        let help = format!("See {command} --help");
        let message = match error.kind() {
            ErrorKind::InvalidValue if value.is_empty() => {
                let valid = strings(ContextKind::ValidValue);
                if valid.is_empty() {
                    format!("{flag} needs a value. Write {arg}")
                } else {
                    format!("{flag} needs a value. Give {}", one_of(&valid))
                }
            }
            ErrorKind::InvalidValue => format!(
                "invalid {flag} {value:?}. Give {}{}",
                one_of(&strings(ContextKind::ValidValue)),
                suggestion(ContextKind::SuggestedValue)
            ),
            ErrorKind::ValueValidation => {
                let why = std::error::Error::source(error)
                    .map_or_else(|| "not valid".to_owned(), ToString::to_string);
                format!("invalid {flag} {value:?}: {why}")
            }
            ErrorKind::UnknownArgument if flag.starts_with('-') => format!(
                "{who} has no flag {flag}{}. {help}",
                suggestion(ContextKind::SuggestedArg)
            ),
            ErrorKind::UnknownArgument => format!(
                "{who} takes no argument {flag:?} (values follow their flag, as in --topic NAME). {help}"
            ),
            ErrorKind::InvalidSubcommand => format!(
                "unknown subcommand {:?}. Use {}{}",
                first(ContextKind::InvalidSubcommand),
                one_of(&SUBCOMMANDS.map(str::to_owned)),
                suggestion(ContextKind::SuggestedSubcommand)
            ),
            ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => format!(
                "kseek needs a subcommand. Use {}; kseek --help shows them",
                one_of(&SUBCOMMANDS.map(str::to_owned))
            ),
            ErrorKind::MissingRequiredArgument => {
                let missing = strings(ContextKind::InvalidArg);
                format!(
                    "{who} needs {}. Add {}; {command} --help shows the forms",
                    missing.join(" and "),
                    if missing.len() == 1 { "it" } else { "them" }
                )
            }
            ErrorKind::ArgumentConflict => {
                let prior: Vec<String> = strings(ContextKind::PriorArg)
                    .iter()
                    .map(|a| a.split_whitespace().next().unwrap_or_default().to_owned())
                    .collect();
                if prior == [flag.clone()] {
                    format!("{flag} is given twice. Give it once")
                } else {
                    format!(
                        "{flag} can't be used with {}. Drop one of them",
                        prior.join(" or ")
                    )
                }
            }
            _ => {
                // Kinds the flags above can't produce (too many values, invalid UTF-8, ...):
                // clap's own first line, without its "error: " prefix.
                let rendered = error.render().to_string();
                let line = rendered.lines().next().unwrap_or_default();
                format!("{}. {help}", line.trim_start_matches("error: ").trim_end_matches('.'))
            }
        };
        Fail::usage(one_line(&message))
    }
}

/// `a`, `a or b`, `a, b or c`.
fn one_of(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The error a retry gave up on, through every [`ErrorKind::RetriesExhausted`] and
/// [`ErrorKind::Bootstrap`] wrapper.
fn innermost(error: &Error) -> &Error {
    match error.kind() {
        ErrorKind::RetriesExhausted { source, .. } => innermost(source),
        _ => error,
    }
}

/// The error's text, shorter than its `Display` where that repeats itself: a failed bootstrap
/// names its servers once, and a retry's elapsed time is rounded.
fn describe(error: &Error) -> String {
    match error.kind() {
        ErrorKind::Bootstrap { servers, source } => {
            let why = match source.kind() {
                ErrorKind::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            format!("cannot connect to Kafka at {}: {why}", servers.join(","))
        }
        ErrorKind::RetriesExhausted {
            what,
            attempts,
            elapsed,
            source,
        } => format!(
            "{what}: gave up after {attempts} attempts in {:.1}s: {}",
            elapsed.as_secs_f64(),
            describe(source)
        ),
        _ => error.to_string(),
    }
}

/// The exit code of a library error: 4 for data that doesn't decode, 2 for a read that can't
/// be resolved as asked (or no bootstrap server), 1 for a stalled read
/// (kseek's own failures), 3 for everything Kafka or the network said.
pub(crate) fn exit_code(error: &Error) -> u8 {
    match error.kind() {
        ErrorKind::RetriesExhausted { source, .. } | ErrorKind::Bootstrap { source, .. } => {
            exit_code(source)
        }
        ErrorKind::CorruptRecords { .. } => CORRUPT,
        ErrorKind::Protocol { source, .. } => match source {
            // The broker speaks no version we do: a Kafka problem, not corrupt bytes.
            WireError::NoCommonVersion { .. }
            | WireError::ApiNotSupported { .. }
            | WireError::UnsupportedVersion { .. }
            | WireError::FieldNotInVersion { .. }
            | WireError::BrokerError { .. } => KAFKA,
            _ => CORRUPT,
        },
        ErrorKind::InvalidSpec { .. }
        | ErrorKind::StartAfterEnd { .. }
        | ErrorKind::NoBootstrapServers
        | ErrorKind::Config { .. } => USAGE,
        // Not Kafka's doing: the runtime going away, or a bug in kseek.
        ErrorKind::ReadStalled => OTHER,
        _ => KAFKA,
    }
}

/// What to do about `error`, one sentence without the final full stop.
fn hint(error: &Error) -> &'static str {
    match error.kind() {
        ErrorKind::RetriesExhausted { source, .. } => hint(source),
        // Connected, but no answer: something else listens there, or it wants TLS or SASL.
        ErrorKind::Bootstrap { source, .. } if matches!(innermost(source).kind(), ErrorKind::Timeout { .. }) => {
            "Check that --bootstrap is a Kafka listener that speaks plaintext (a TLS listener gives a plaintext client no answer); a slow broker needs a longer --request-timeout"
        }
        // The TCP connect itself took too long: nothing answered the SYN.
        ErrorKind::Bootstrap { source, .. }
            if matches!(innermost(source).kind(), ErrorKind::Io { source, .. } if source.kind() == std::io::ErrorKind::TimedOut) =>
        {
            "Check that Kafka is reachable at --bootstrap (a firewall may drop the connection), or raise --connect-timeout"
        }
        // A listener that wants SASL closed the connection after ApiVersions.
        ErrorKind::Bootstrap { source, .. }
            if matches!(innermost(source).kind(), ErrorKind::ConnectionClosed { reason, .. } if reason.contains("security.protocol")) =>
        {
            "Check security.protocol against the listener (--config or -X)"
        }
        ErrorKind::ConnectionClosed { reason, .. } if reason.contains("security.protocol") => {
            "Check security.protocol against the listener (--config or -X)"
        }
        ErrorKind::Bootstrap { .. } | ErrorKind::Io { .. } | ErrorKind::ConnectionClosed { .. } => {
            "Check that Kafka is running and reachable at --bootstrap (or KSEEK_BOOTSTRAP)"
        }
        ErrorKind::Timeout { .. } => {
            "Check that the broker is reachable and not overloaded, then try again (or raise --request-timeout)"
        }
        ErrorKind::Protocol { .. } if exit_code(error) == KAFKA => {
            "This broker's version is not supported by kseek; try a broker on Kafka 2.1 or newer"
        }
        ErrorKind::Protocol { .. } | ErrorKind::CorruptRecords { .. } => {
            "The broker sent data kseek can't decode; try again, and report it with the broker's version if it persists"
        }
        ErrorKind::UnknownTopic { .. } => "Check the name with kseek metadata",
        ErrorKind::UnknownPartition { .. } => "List the partitions with kseek metadata --topic <TOPIC>",
        ErrorKind::LeaderNotAvailable { .. } | ErrorKind::UnknownBroker { .. } => {
            "A leader election may be under way; check the cluster with kseek metadata and try again (a longer --retry-deadline waits for it)"
        }
        ErrorKind::StartAfterEnd { .. } => "Pick a --from position before --to",
        ErrorKind::NoBootstrapServers => "Give --bootstrap host:port (or set KSEEK_BOOTSTRAP)",
        ErrorKind::InvalidResponse { .. } => {
            "The broker answered something no correct broker does; check its log, and report it with the broker's version"
        }
        ErrorKind::ReadStalled => "This is a bug in kseek; report it with the command you ran",
        ErrorKind::InvalidSpec { .. } => "Check --from, --to and --partition",
        ErrorKind::TimestampNotFound { .. } => "Pick an earlier time",
        ErrorKind::NoCommittedOffset { .. } => {
            "Start from another position (e.g. --from earliest), or set the group's offsets with kseek commit"
        }
        ErrorKind::UnsupportedTimestamp { .. } => "Use another position; this broker is too old for it",
        ErrorKind::GroupHasActiveMembers { .. } => {
            "Stop the group's consumers first; kafka-consumer-groups.sh --describe --group <GROUP> lists them"
        }
        ErrorKind::OffsetOutOfRange { .. } => "Read from a later position (e.g. --from earliest)",
        ErrorKind::Broker { code, .. } | ErrorKind::Partition { code, .. } => code_hint(*code),
        ErrorKind::Tls { .. } => {
            "Check security.protocol and the ssl.* settings (--config or -X) against the listener"
        }
        ErrorKind::Authentication { .. } => {
            "Check sasl.mechanism and the credentials (sasl.jaas.config, or sasl.username and sasl.password)"
        }
        ErrorKind::Config { .. } => "Fix the setting named above (--config or -X)",
        _ => "Try again, and check the broker's log if it persists",
    }
}

/// What to do about a broker's error code, one sentence without the final full stop: the
/// codes the CLI's requests (Metadata, ListOffsets, Fetch, FindCoordinator, OffsetFetch,
/// OffsetCommit, ApiVersions, SASL) can meet each get advice that fits their cause.
fn code_hint(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::TOPIC_AUTHORIZATION_FAILED => {
            "The principal may not describe or read this topic; ask an admin for Describe and Read ACLs on it (kafka-acls.sh --list --topic <TOPIC> shows them)"
        }
        ErrorCode::GROUP_AUTHORIZATION_FAILED => {
            "The principal may not use this group; ask an admin for Describe and Read ACLs on it (kafka-acls.sh --list --group <GROUP> shows them)"
        }
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED => {
            "The principal lacks a cluster permission this request needs; ask an admin for it"
        }
        ErrorCode::SASL_AUTHENTICATION_FAILED => {
            "Check the SASL username and password (or token) and that the mechanism is the one the broker has this user for"
        }
        ErrorCode::UNSUPPORTED_SASL_MECHANISM => {
            "The listener does not enable this SASL mechanism; use one of its sasl.enabled.mechanisms"
        }
        ErrorCode::ILLEGAL_SASL_STATE => {
            "The broker got SASL messages it did not expect; check that --bootstrap is a SASL listener and the security protocol matches it"
        }
        ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT => {
            "The topic's records are in the old message format without timestamps (v0); use an offset, earliest or latest position instead of a time, or move the topic to message format v1 or newer"
        }
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION | ErrorCode::UNKNOWN_TOPIC_ID => {
            "Check the topic and partition with kseek metadata"
        }
        ErrorCode::INCONSISTENT_TOPIC_ID => {
            "The topic was deleted and created again meanwhile; run the command again"
        }
        ErrorCode::INVALID_TOPIC_EXCEPTION => {
            "Topic names are up to 249 letters, digits, '.', '_' and '-'; check the name"
        }
        ErrorCode::INVALID_GROUP_ID => "Give a non-empty --group",
        ErrorCode::GROUP_ID_NOT_FOUND => {
            "Check the group's name; kafka-consumer-groups.sh --list shows the groups"
        }
        ErrorCode::UNKNOWN_MEMBER_ID
        | ErrorCode::ILLEGAL_GENERATION
        | ErrorCode::REBALANCE_IN_PROGRESS
        | ErrorCode::FENCED_INSTANCE_ID
        | ErrorCode::STALE_MEMBER_EPOCH
        | ErrorCode::NON_EMPTY_GROUP => {
            "The group has active members; stop its consumers first (kafka-consumer-groups.sh --describe --group <GROUP> lists them)"
        }
        ErrorCode::OFFSET_OUT_OF_RANGE => {
            "The offset is outside the partition's log (deleted, or not written yet); pick a position inside it (kseek offsets shows the range)"
        }
        ErrorCode::INVALID_TIMESTAMP => "Give a time at or after 1970-01-01T00:00:00Z",
        ErrorCode::OFFSET_METADATA_TOO_LARGE | ErrorCode::INVALID_COMMIT_OFFSET_SIZE => {
            "The broker refused the commit's size; report it with the broker's version"
        }
        ErrorCode::UNSUPPORTED_VERSION | ErrorCode::INVALID_REQUEST => {
            "The broker refused a request kseek sent; report it with the broker's version"
        }
        ErrorCode::CORRUPT_MESSAGE | ErrorCode::KAFKA_STORAGE_ERROR => {
            "The broker's copy of the data is damaged or its disk failed; check the broker's log for the partition"
        }
        ErrorCode::UNKNOWN_SERVER_ERROR => {
            "The broker failed unexpectedly; check the broker's log, then try again"
        }
        ErrorCode::POLICY_VIOLATION | ErrorCode::SECURITY_DISABLED => {
            "The broker's configuration forbids this; ask the cluster's admin"
        }
        ErrorCode::THROTTLING_QUOTA_EXCEEDED => "A quota limits this client; wait and try again",
        code if code.is_retriable() => {
            "The cluster is moving leaders or coordinators (a broker restarting, a rebalance); try again, or give it longer with --retry-deadline"
        }
        _ => "Check the broker's log for the cause, then try again",
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
        Error::from(ErrorKind::Io {
            broker: "b:1".into(),
            source: kind.into(),
        })
    }

    #[test]
    fn network_and_kafka_errors_exit_3() {
        let kafka = [
            io(std::io::ErrorKind::ConnectionRefused),
            Error::from(ErrorKind::Bootstrap {
                servers: vec!["b:1".into()],
                source: io(std::io::ErrorKind::ConnectionRefused),
            }),
            Error::from(ErrorKind::Timeout {
                broker: "b:1".into(),
                api: ApiKey::FETCH,
                after: Duration::from_secs(1),
            }),
            Error::from(ErrorKind::ConnectionClosed {
                broker: "b:1".into(),
                reason: "eof".into(),
            }),
            Error::from(ErrorKind::Broker {
                broker: "b:1".into(),
                api: ApiKey::METADATA,
                code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                message: None,
            }),
            Error::from(ErrorKind::UnknownTopic {
                topic: "x".into(),
                broker: "b:1".into(),
            }),
            Error::from(ErrorKind::UnknownPartition {
                topic: "x".into(),
                partition: 9,
                partitions: 3,
            }),
            Error::from(ErrorKind::LeaderNotAvailable {
                topic: "x".into(),
                partition: 0,
            }),
            Error::from(ErrorKind::UnknownBroker { broker_id: 4 }),
            Error::from(ErrorKind::Partition {
                broker: "b:1".into(),
                api: ApiKey::FETCH,
                topic: "x".into(),
                partition: 0,
                code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
            }),
            Error::from(ErrorKind::NoCommittedOffset {
                group: "g".into(),
                partitions: vec![("x".into(), 0)],
            }),
            Error::from(ErrorKind::GroupHasActiveMembers {
                group: "g".into(),
                broker: "b:1".into(),
                code: ErrorCode::UNKNOWN_MEMBER_ID,
            }),
            Error::from(ErrorKind::OffsetOutOfRange {
                broker: "b:1".into(),
                topic: "x".into(),
                partition: 0,
                offset: 5,
            }),
            Error::from(ErrorKind::TimestampNotFound {
                topic: "x".into(),
                partition: 0,
                timestamp: 5,
                last_fetchable_offset: 3,
            }),
            Error::from(ErrorKind::UnsupportedTimestamp {
                broker: "b:1".into(),
                timestamp: -3,
                required_version: 7,
                broker_max_version: 6,
            }),
            Error::from(ErrorKind::Protocol {
                broker: "b:1".into(),
                source: WireError::NoCommonVersion {
                    api: "Fetch",
                    broker_min: 0,
                    broker_max: 3,
                    ours_min: 4,
                    ours_max: 17,
                },
            }),
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
            Error::from(ErrorKind::CorruptRecords {
                broker: "b:1".into(),
                topic: "x".into(),
                partition: 0,
                offset: 0,
                source: Box::new(crc.clone()),
            }),
            Error::from(ErrorKind::Protocol {
                broker: "b:1".into(),
                source: WireError::Truncated {
                    what: "x",
                    needed: 4,
                    remaining: 1,
                },
            }),
            Error::from(ErrorKind::RetriesExhausted {
                what: "w".into(),
                attempts: 2,
                elapsed: Duration::from_secs(1),
                source: Error::from(ErrorKind::Protocol {
                    broker: "b:1".into(),
                    source: crc,
                }),
            }),
        ];
        for e in &corrupt {
            assert_eq!(exit_code(e), CORRUPT, "{e:?}");
        }
    }

    #[test]
    fn unresolvable_reads_are_usage_errors() {
        let e = Error::from(ErrorKind::StartAfterEnd {
            topic: "x".into(),
            partition: 0,
            start: 9,
            end: 3,
        });
        assert_eq!(exit_code(&e), USAGE);
        assert_eq!(
            Fail::kafka("resolving the read", &e).to_string(),
            "kseek: resolving the read: partition 0 of topic \"x\": start offset 9 is after end offset 3. Pick a --from position before --to."
        );
        assert_eq!(
            exit_code(&Error::from(ErrorKind::InvalidSpec { reason: "r".into() })),
            USAGE
        );
    }

    #[test]
    fn the_new_variants_have_their_own_codes_and_hints() {
        let f = Fail::kafka("connecting", &Error::from(ErrorKind::NoBootstrapServers));
        assert_eq!(f.code, USAGE);
        assert!(
            f.message
                .ends_with("Give --bootstrap host:port (or set KSEEK_BOOTSTRAP)."),
            "{f}"
        );
        let bad = Error::from(ErrorKind::InvalidResponse {
            broker: "b:1".into(),
            api: ApiKey::LIST_OFFSETS,
            reason: "offset -1 for the latest or earliest offset for partition 0 of topic \"x\""
                .into(),
        });
        let f = Fail::kafka("resolving the read", &bad);
        assert_eq!(f.code, KAFKA);
        assert!(f.message.contains("no correct broker"), "{f}");
        assert!(!f.message.contains("--from"), "{f}");
        assert_eq!(exit_code(&Error::from(ErrorKind::ReadStalled)), OTHER);
    }

    #[test]
    fn an_unknown_topic_says_to_check_the_name_even_after_retries() {
        let e = Error::from(ErrorKind::RetriesExhausted {
            what: "fetching metadata".into(),
            attempts: 9,
            elapsed: Duration::from_secs(30),
            source: Error::from(ErrorKind::UnknownTopic {
                topic: "x".into(),
                broker: "b:1".into(),
            }),
        });
        let f = Fail::kafka("resolving the read", &e);
        assert_eq!(f.code, KAFKA);
        assert_eq!(
            f.to_string(),
            "kseek: topic \"x\" does not exist (UNKNOWN_TOPIC_OR_PARTITION). Check the name with kseek metadata."
        );
    }

    fn partition_error(code: ErrorCode) -> Error {
        Error::from(ErrorKind::Partition {
            broker: "b:1".into(),
            api: ApiKey::LIST_OFFSETS,
            topic: "x".into(),
            partition: 0,
            code,
        })
    }

    #[test]
    fn each_error_code_gets_a_hint_that_fits_its_cause() {
        for (code, says) in [
            (ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT, "message format"),
            (ErrorCode::TOPIC_AUTHORIZATION_FAILED, "ACLs on it"),
            (ErrorCode::GROUP_AUTHORIZATION_FAILED, "--group <GROUP>"),
            (
                ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
                "cluster permission",
            ),
            (
                ErrorCode::SASL_AUTHENTICATION_FAILED,
                "username and password",
            ),
            (
                ErrorCode::UNSUPPORTED_SASL_MECHANISM,
                "sasl.enabled.mechanisms",
            ),
            (ErrorCode::ILLEGAL_SASL_STATE, "SASL listener"),
            (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, "kseek metadata"),
            (ErrorCode::NOT_LEADER_OR_FOLLOWER, "--retry-deadline"),
            (ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, "--retry-deadline"),
            (
                ErrorCode::OFFSET_OUT_OF_RANGE,
                "outside the partition's log",
            ),
            (ErrorCode::UNKNOWN_MEMBER_ID, "active members"),
            (ErrorCode::GROUP_ID_NOT_FOUND, "--list"),
            (ErrorCode::INVALID_TOPIC_EXCEPTION, "249"),
            (ErrorCode::UNKNOWN_SERVER_ERROR, "broker's log"),
        ] {
            let f = Fail::kafka("resolving the read", &partition_error(code));
            assert_eq!(f.code, KAFKA, "{f}");
            assert!(f.message.contains(code.name().unwrap()), "{f}");
            assert!(f.message.contains(says), "{code:?}: {f}");
            assert!(!f.message.contains('\n'), "{f}");
        }
        // The message format limit is no question of the broker's log or access rights.
        let f = Fail::kafka(
            "resolving the read",
            &partition_error(ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT),
        );
        assert!(!f.message.contains("access rights"), "{f}");
        assert!(!f.message.contains("broker's log"), "{f}");
        // Through a retry's wrapper too, and for a whole-request error.
        let e = Error::from(ErrorKind::RetriesExhausted {
            what: "w".into(),
            attempts: 2,
            elapsed: Duration::from_secs(1),
            source: Error::from(ErrorKind::Broker {
                broker: "b:1".into(),
                api: ApiKey::SASL_AUTHENTICATE,
                code: ErrorCode::SASL_AUTHENTICATION_FAILED,
                message: Some("bad password".into()),
            }),
        });
        let f = Fail::kafka("connecting", &e);
        assert!(f.message.ends_with("username and password (or token) and that the mechanism is the one the broker has this user for."), "{f}");
    }

    #[test]
    fn an_unknown_partition_names_the_topic_and_its_partitions() {
        let e = Error::from(ErrorKind::UnknownPartition {
            topic: "x".into(),
            partition: 9,
            partitions: 3,
        });
        assert_eq!(
            Fail::kafka("resolving the read", &e).to_string(),
            "kseek: topic \"x\" has no partition 9 (it has 3: 0 to 2). Pick partitions that exist; kseek metadata --topic x lists them."
        );
    }

    #[test]
    fn a_connect_that_times_out_points_at_connect_timeout() {
        let e = Error::from(ErrorKind::Bootstrap {
            servers: vec!["10.0.0.1:9092".into()],
            source: Error::from(ErrorKind::Io {
                broker: "10.0.0.1:9092".into(),
                source: std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connect timed out after 500ms",
                ),
            }),
        });
        assert_eq!(
            Fail::kafka("connecting", &e).to_string(),
            "kseek: cannot connect to Kafka at 10.0.0.1:9092: connect timed out after 500ms. Check that Kafka is reachable at --bootstrap (a firewall may drop the connection), or raise --connect-timeout."
        );
    }

    #[test]
    fn a_listener_that_never_answers_says_so() {
        let e = Error::from(ErrorKind::Bootstrap {
            servers: vec!["b:1".into()],
            source: Error::from(ErrorKind::Timeout {
                broker: "b:1".into(),
                api: ApiKey::API_VERSIONS,
                after: Duration::from_secs(1),
            }),
        });
        let f = Fail::kafka("connecting", &e);
        assert_eq!(f.code, KAFKA);
        assert!(
            f.message.starts_with("cannot connect to Kafka at b:1: "),
            "{f}"
        );
        assert!(f.message.contains("timed out after 1s"), "{f}");
        assert!(f.message.contains("--request-timeout"), "{f}");
    }

    /// The line for the command line `args` (which must not parse).
    fn usage_line(args: &[&str]) -> String {
        use clap::Parser;
        let e = crate::args::Cli::try_parse_from(args).unwrap_err();
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let f = Fail::from_clap(&e, &args);
        assert_eq!(f.code, USAGE, "{f}");
        f.to_string()
    }

    #[test]
    fn clap_errors_become_one_line() {
        for (args, line) in [
            (
                &["kseek", "read", "--topic", "t", "--partition", "-1"][..],
                "kseek: invalid --partition \"-1\": a partition must be >= 0 (partitions count from 0). Give 0, 1, 2... or a list such as 0,2.",
            ),
            (
                &["kseek", "read", "--topic", "t", "--isolation", "committed"],
                "kseek: invalid --isolation \"committed\". Give read_uncommitted or read_committed (did you mean read_committed?).",
            ),
            (
                &["kseek", "commit", "--group", "g", "--topic", "t"],
                "kseek: commit needs --to <POS>. Add it; kseek commit --help shows the forms.",
            ),
            (
                &["kseek", "offsets", "--topic"],
                "kseek: --topic needs a value. Write --topic <TOPIC>.",
            ),
            (
                &["kseek", "read", "--topic", "t", "--bogus"],
                "kseek: read has no flag --bogus. See kseek read --help.",
            ),
            (
                &["kseek", "--bogus"],
                "kseek: kseek has no flag --bogus. See kseek --help.",
            ),
            (
                &["kseek", "read", "--topic", "t", "--follow", "--to", "now"],
                "kseek: --follow can't be used with --to. Drop one of them.",
            ),
            (
                &["kseek", "read", "--topic", "t", "--to", "now", "--to", "now"],
                "kseek: --to is given twice. Give it once.",
            ),
            (
                &["kseek", "metadatas"],
                "kseek: unknown subcommand \"metadatas\". Use read, offsets, splits, read-split, metadata, commit, committed or sql (did you mean metadata?).",
            ),
            (
                &["kseek"],
                "kseek: kseek needs a subcommand. Use read, offsets, splits, read-split, metadata, commit, committed or sql; kseek --help shows them.",
            ),
        ] {
            assert_eq!(usage_line(args), line, "{args:?}");
        }
    }

    #[test]
    fn connection_failures_say_to_check_the_bootstrap() {
        let e = Error::from(ErrorKind::Bootstrap {
            servers: vec!["127.0.0.1:1".into()],
            source: io(std::io::ErrorKind::ConnectionRefused),
        });
        let f = Fail::kafka("connecting", &e);
        assert!(
            f.message
                .starts_with("cannot connect to Kafka at 127.0.0.1:1: connection refused. Check"),
            "{f}"
        );
        let e = Error::from(ErrorKind::RetriesExhausted {
            what: "reading partition 0".into(),
            attempts: 3,
            elapsed: Duration::from_millis(29_543),
            source: e,
        });
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

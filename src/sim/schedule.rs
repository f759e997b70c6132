//! Schedules: the logs, the plan and the faults of one simulated read, and proptest's
//! strategy that makes them.

use super::*;

/// When a fault takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// At the cluster's n-th request (from 0, every API counted).
    Request(u32),
    /// At the first request at or after this virtual time.
    Time(Duration),
}

/// Where a connection breaks relative to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LossPoint {
    /// Before the request was written: the broker never saw it.
    Before,
    /// While the request was on its way: the broker may or may not have seen it.
    During,
    /// After the broker did the work: the answer was lost.
    After,
}

/// One fault of a schedule. Partition and broker numbers are taken modulo the cluster's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The partition's leadership moves to broker `to` (the next broker if `to` is the
    /// leader already) and its epoch goes up by one. The next `stale_metadata` Metadata
    /// answers still show the old leader and epoch, or no leader at all (an election under way)
    /// when `election` is set. For its first `lagging_fetches` Fetch answers the new leader's
    /// high watermark lags behind the old one's (at the batch in the middle of the log): it
    /// hands out nothing beyond it, as a new leader does until the followers report in.
    LeaderMove {
        partition: u8,
        to: u8,
        stale_metadata: u8,
        election: bool,
        lagging_fetches: u8,
    },
    /// The next `fetches` Fetch answers for the partition are NOT_LEADER_OR_FOLLOWER.
    NotLeaderStorm { partition: u8, fetches: u8 },
    /// The next `fetches` Fetch answers for the partition are FENCED_LEADER_EPOCH, or
    /// UNKNOWN_LEADER_EPOCH when `newer` (the metadata is ahead of the broker).
    FencedStorm {
        partition: u8,
        fetches: u8,
        newer: bool,
    },
    /// The next `fetches` Fetch answers for the partition, and the next `metadata` Metadata
    /// answers, say UNKNOWN_TOPIC_OR_PARTITION (a broker that doesn't know the topic yet).
    UnknownTopicOrPartition {
        partition: u8,
        fetches: u8,
        metadata: u8,
    },
    /// The connection of the next request breaks at this point; every other request in
    /// flight on it fails at the same time.
    ConnectionLoss(LossPoint),
    /// Retention moves the partition's log start up by `advance` per mille of what is left
    /// of its log: to the start of a batch (a segment deleted), or anywhere with `mid_batch`
    /// (DeleteRecords).
    Retention {
        partition: u8,
        advance: u16,
        mid_batch: bool,
    },
    /// The next Fetch answer carries no records: after the max wait (as if nothing had been
    /// replicated yet), or at once with no partitions at all when `throttled` (a quota).
    Empty { throttled: bool },
    /// The next answer takes this much longer; past [`REQUEST_TIMEOUT`] it never comes and
    /// the request times out.
    Slow { extra_ms: u32 },
    /// Every broker forgets its fetch sessions (evicted from a full cache): the next
    /// incremental fetch is FETCH_SESSION_ID_NOT_FOUND. Or, with `epoch`, each session
    /// expects an epoch one ahead (as if a request had been replayed): the next incremental
    /// fetch is INVALID_FETCH_SESSION_EPOCH.
    SessionLoss { epoch: bool },
}

/// The logs, the plan and the faults of one simulated read.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    /// Seeds the answer latencies and the broker picked for Metadata.
    pub(crate) seed: u64,
    /// How many brokers the cluster has (1 to 3).
    pub(crate) brokers: u8,
    /// The topic's partitions.
    pub(crate) partitions: Vec<PartitionSpec>,
    /// The faults and when they happen.
    pub(crate) faults: Vec<(Trigger, Fault)>,
    /// From this virtual time on, no broker answers anything, ever.
    pub(crate) blackout: Option<Duration>,
    /// Every broker is down from the first time to the second (all restarted then).
    pub(crate) outage: Option<(Duration, Duration)>,
    /// The highest Fetch version the brokers speak.
    pub(crate) fetch_version: i16,
    /// Whether the brokers have topic ids (always from Fetch v13, which needs them).
    pub(crate) topic_ids: bool,
    /// Whether the plan reads read_committed.
    pub(crate) read_committed: bool,
    /// The read's options, as the harness hands them to the machine: partition and response
    /// max bytes, the policy for OFFSET_OUT_OF_RANGE, [`ReadOptions::max_buffered_bytes`].
    pub(crate) options: ReadOptions,
    /// The caller takes one batch per step of the harness (with a small
    /// [`ReadOptions::max_buffered_bytes`]), not every batch at once.
    pub(crate) slow_caller: bool,
}

/// One partition of a [`Schedule`].
#[derive(Debug, Clone)]
pub(crate) struct PartitionSpec {
    /// The log's first offset.
    pub(crate) log_start: i64,
    /// Its batches, in order.
    pub(crate) batches: Vec<BatchSpec>,
    /// The first leader (modulo the brokers).
    pub(crate) leader: u8,
    /// The plan's start, in per mille of the log from its start.
    pub(crate) start: u16,
    /// The plan's length, in per mille of what the log holds after the start.
    pub(crate) len: u16,
}

/// One record batch of a partition log.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchSpec {
    /// How many records it holds; none for a batch compaction emptied (it keeps its
    /// offsets, as Kafka keeps such batches for the producer state).
    pub(crate) records: u8,
    /// The length of each record's value beyond its `partition:offset:` prefix.
    pub(crate) value_len: u8,
    /// Compaction removed every other offset, and the batch's last offset.
    pub(crate) gap: bool,
    /// Compressed (LZ4 where the build has it).
    pub(crate) compressed: bool,
    /// Written in a transaction, committed (`Some(false)`) or aborted (`Some(true)`) by the
    /// marker that follows the batch.
    pub(crate) aborted: Option<bool>,
}

/// The proptest strategy of schedules: 1 to 3 brokers, 1 to 4 partitions of up to 12
/// batches of 0 to 6 records, up to 12 faults at the first 24 requests or the first 3
/// virtual seconds; one time in ten a blackout in the first 2 virtual seconds, one time in
/// ten every broker down for up to 30 virtual seconds; small or default max bytes; Fetch v4
/// to v18, with or without topic ids below v13; one time in four a budget of 1 to 3,000
/// waiting bytes with a slow caller.
pub(crate) fn schedules() -> impl Strategy<Value = Schedule> {
    let batch = (
        prop_oneof![1 => Just(0u8), 9 => 1u8..=6],
        0u8..=120,
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
        prop_oneof![8 => Just(None), 1 => Just(Some(false)), 1 => Just(Some(true))],
    )
        .prop_map(|(records, value_len, gap, compressed, aborted)| BatchSpec {
            records,
            value_len,
            gap,
            compressed,
            aborted,
        });
    let partition = (
        0i64..40,
        prop::collection::vec(batch, 0..=12),
        0u8..3,
        prop_oneof![Just(0u16), 0u16..=1000],
        prop_oneof![Just(1000u16), 0u16..=1000],
    )
        .prop_map(|(log_start, batches, leader, start, len)| PartitionSpec {
            log_start,
            batches,
            leader,
            start,
            len,
        });
    // Most reads take a few dozen requests and well under a virtual second without faults:
    // the triggers fall inside them.
    let trigger = prop_oneof![
        3 => (0u32..24).prop_map(Trigger::Request),
        1 => (0u64..3_000).prop_map(|ms| Trigger::Time(Duration::from_millis(ms))),
    ];
    let loss = prop_oneof![
        Just(LossPoint::Before),
        Just(LossPoint::During),
        Just(LossPoint::After)
    ];
    let fault = prop_oneof![
        (
            any::<u8>(),
            any::<u8>(),
            0u8..4,
            any::<bool>(),
            prop_oneof![Just(0u8), 1u8..4]
        )
            .prop_map(
                |(partition, to, stale_metadata, election, lagging_fetches)| Fault::LeaderMove {
                    partition,
                    to,
                    stale_metadata,
                    election,
                    lagging_fetches,
                }
            ),
        (any::<u8>(), 1u8..8)
            .prop_map(|(partition, fetches)| Fault::NotLeaderStorm { partition, fetches }),
        (any::<u8>(), 1u8..8, prop::bool::weighted(0.3)).prop_map(|(partition, fetches, newer)| {
            Fault::FencedStorm {
                partition,
                fetches,
                newer,
            }
        }),
        (any::<u8>(), 0u8..4, 0u8..3).prop_map(|(partition, fetches, metadata)| {
            Fault::UnknownTopicOrPartition {
                partition,
                fetches,
                metadata,
            }
        }),
        loss.prop_map(Fault::ConnectionLoss),
        (any::<u8>(), 1u16..=1000, any::<bool>()).prop_map(|(partition, advance, mid_batch)| {
            Fault::Retention {
                partition,
                advance,
                mid_batch,
            }
        }),
        any::<bool>().prop_map(|throttled| Fault::Empty { throttled }),
        prop_oneof![0u32..1_000, 1_000u32..5_000].prop_map(|extra_ms| Fault::Slow { extra_ms }),
        any::<bool>().prop_map(|epoch| Fault::SessionLoss { epoch }),
    ];
    let faults = prop::collection::vec((trigger, fault), 0..=12);
    let blackout = prop::option::weighted(0.1, (0u64..2_000).prop_map(Duration::from_millis));
    let outage = prop::option::weighted(
        0.1,
        (0u64..2_000, 1u64..30_000).prop_map(|(from, len)| {
            (
                Duration::from_millis(from),
                Duration::from_millis(from + len),
            )
        }),
    );
    let partition_max_bytes = prop_oneof![64i32..400, 400i32..4_000, Just(1 << 20)];
    let fetch_max_bytes = prop_oneof![100i32..1_000, 1_000i32..10_000, Just(50 << 20)];
    let out_of_range = prop_oneof![
        4 => Just(OutOfRange::ResetToLogStart),
        1 => Just(OutOfRange::Fail),
    ];
    (
        any::<u64>(),
        1u8..=3,
        prop::collection::vec(partition, 1..=4),
        faults,
        (blackout, outage),
        (
            prop::sample::select(vec![4i16, 8, 9, 11, 12, 13, 16, 18]),
            prop::bool::weighted(0.7),
        ),
        partition_max_bytes,
        fetch_max_bytes,
        (out_of_range, any::<bool>()),
        prop_oneof![3 => Just(None), 1 => (1usize..3_000).prop_map(Some)],
    )
        .prop_map(
            |(
                seed,
                brokers,
                partitions,
                faults,
                (blackout, outage),
                (fetch_version, topic_ids),
                partition_max_bytes,
                fetch_max_bytes,
                (out_of_range, read_committed),
                max_buffered_bytes,
            )| Schedule {
                seed,
                brokers,
                partitions,
                faults,
                blackout,
                outage,
                fetch_version,
                topic_ids: topic_ids || fetch_version >= 13,
                read_committed,
                options: sim_options(partition_max_bytes, fetch_max_bytes, out_of_range)
                    .max_buffered_bytes(
                        max_buffered_bytes.unwrap_or(ReadOptions::default().max_buffered_bytes),
                    ),
                slow_caller: max_buffered_bytes.is_some(),
            },
        )
}

/// The read options of a schedule: these sizes and policy, and the harness's long-poll wait.
pub(crate) fn sim_options(
    partition_max_bytes: i32,
    fetch_max_bytes: i32,
    out_of_range: OutOfRange,
) -> ReadOptions {
    ReadOptions::default()
        .partition_max_bytes(partition_max_bytes)
        .fetch_max_bytes(fetch_max_bytes)
        .out_of_range(out_of_range)
        .max_wait(SIM_MAX_WAIT)
}

//! What a simulated cluster answered and the faults it injected, counted by kind.

/// Declares [`SimStats`] with one `u64` counter per name, each with its doc, and
/// [`SimStats::add`] over all of them, so a new counter is written once.
macro_rules! counters {
    ($($(#[$doc:meta])* $field:ident,)*) => {
        /// What a simulated cluster answered, and the faults it injected, by kind.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub(crate) struct SimStats {
            $($(#[$doc])* pub(crate) $field: u64,)*
        }

        impl SimStats {
            /// Adds `other`'s counts to these.
            pub(crate) fn add(&mut self, other: &SimStats) {
                $(self.$field += other.$field;)*
            }
        }
    };
}

counters! {
    /// Requests received, every API.
    requests,
    /// Fetch requests among them.
    fetches,
    /// Metadata requests among them.
    metadata,
    /// ListOffsets requests among them.
    list_offsets,
    /// Leader moves that took effect.
    leader_moves,
    /// Metadata answers with an old leader or no leader after a move.
    stale_metadata,
    /// Fetch answers from a new leader whose high watermark lags.
    lagging_high_watermark,
    /// Partition answers NOT_LEADER_OR_FOLLOWER (storms and fetches sent to a follower).
    not_leader,
    /// Partition answers FENCED_LEADER_EPOCH (storms and stale epochs).
    fenced,
    /// Partition answers UNKNOWN_LEADER_EPOCH (storms, and epochs ahead of the broker).
    unknown_leader_epoch,
    /// UNKNOWN_TOPIC_OR_PARTITION answers (Fetch partitions and Metadata).
    unknown_topic,
    /// Connections lost before a request was written.
    loss_before,
    /// Connections lost while a request was on its way.
    loss_during,
    /// Connections lost after the broker did the work.
    loss_after,
    /// Requests failed because another one on the same connection lost it.
    loss_collateral,
    /// Retention moves of a log start that took effect.
    retention,
    /// Partition answers OFFSET_OUT_OF_RANGE.
    out_of_range,
    /// Fetch answers emptied after the max wait.
    empty,
    /// Throttled Fetch answers without partitions.
    throttled,
    /// Incremental Fetch answers (in a fetch session).
    incremental,
    /// FETCH_SESSION_ID_NOT_FOUND answers.
    session_not_found,
    /// INVALID_FETCH_SESSION_EPOCH answers.
    session_epoch,
    /// Slow answers that still came in time.
    slow,
    /// Requests that timed out.
    timeouts,
    /// Requests refused during a blackout.
    blackout,
    /// Requests refused while every broker was down for a while.
    outage,
    /// Partition answers whose records end in a partial batch (cut by max bytes).
    cut,
    /// Partition answers that carried a whole batch larger than their limit (KIP-74).
    whole_over_limit,
    /// Answers that reached the machine after one to a request sent later (the harness
    /// counts them).
    overtaken,
}

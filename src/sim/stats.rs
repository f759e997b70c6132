//! What a simulated cluster answered and the faults it injected, counted by kind.

/// What a simulated cluster answered, and the faults it injected, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SimStats {
    /// Requests received, every API.
    pub(crate) requests: u64,
    /// Fetch requests among them.
    pub(crate) fetches: u64,
    /// Metadata requests among them.
    pub(crate) metadata: u64,
    /// ListOffsets requests among them.
    pub(crate) list_offsets: u64,
    /// Leader moves that took effect.
    pub(crate) leader_moves: u64,
    /// Metadata answers with an old leader or no leader after a move.
    pub(crate) stale_metadata: u64,
    /// Fetch answers from a new leader whose high watermark lags.
    pub(crate) lagging_high_watermark: u64,
    /// Partition answers NOT_LEADER_OR_FOLLOWER (storms and fetches sent to a follower).
    pub(crate) not_leader: u64,
    /// Partition answers FENCED_LEADER_EPOCH (storms and stale epochs).
    pub(crate) fenced: u64,
    /// Partition answers UNKNOWN_LEADER_EPOCH (storms, and epochs ahead of the broker).
    pub(crate) unknown_leader_epoch: u64,
    /// UNKNOWN_TOPIC_OR_PARTITION answers (Fetch partitions and Metadata).
    pub(crate) unknown_topic: u64,
    /// Connections lost before a request was written.
    pub(crate) loss_before: u64,
    /// Connections lost while a request was on its way.
    pub(crate) loss_during: u64,
    /// Connections lost after the broker did the work.
    pub(crate) loss_after: u64,
    /// Requests failed because another one on the same connection lost it.
    pub(crate) loss_collateral: u64,
    /// Retention moves of a log start that took effect.
    pub(crate) retention: u64,
    /// Partition answers OFFSET_OUT_OF_RANGE.
    pub(crate) out_of_range: u64,
    /// Fetch answers emptied after the max wait.
    pub(crate) empty: u64,
    /// Throttled Fetch answers without partitions.
    pub(crate) throttled: u64,
    /// Incremental Fetch answers (in a fetch session).
    pub(crate) incremental: u64,
    /// FETCH_SESSION_ID_NOT_FOUND answers.
    pub(crate) session_not_found: u64,
    /// INVALID_FETCH_SESSION_EPOCH answers.
    pub(crate) session_epoch: u64,
    /// Slow answers that still came in time.
    pub(crate) slow: u64,
    /// Requests that timed out.
    pub(crate) timeouts: u64,
    /// Requests refused during a blackout.
    pub(crate) blackout: u64,
    /// Requests refused while every broker was down for a while.
    pub(crate) outage: u64,
    /// Partition answers whose records end in a partial batch (cut by max bytes).
    pub(crate) cut: u64,
    /// Partition answers that carried a whole batch larger than their limit (KIP-74).
    pub(crate) whole_over_limit: u64,
    /// Answers that reached the machine after one to a request sent later (the harness
    /// counts them).
    pub(crate) overtaken: u64,
}

impl SimStats {
    /// Adds `other`'s counts to these.
    pub(crate) fn add(&mut self, other: &SimStats) {
        let SimStats {
            requests,
            fetches,
            metadata,
            list_offsets,
            leader_moves,
            stale_metadata,
            lagging_high_watermark,
            not_leader,
            fenced,
            unknown_leader_epoch,
            unknown_topic,
            loss_before,
            loss_during,
            loss_after,
            loss_collateral,
            retention,
            out_of_range,
            empty,
            throttled,
            incremental,
            session_not_found,
            session_epoch,
            slow,
            timeouts,
            blackout,
            outage,
            cut,
            whole_over_limit,
            overtaken,
        } = other;
        self.requests += requests;
        self.fetches += fetches;
        self.metadata += metadata;
        self.list_offsets += list_offsets;
        self.leader_moves += leader_moves;
        self.stale_metadata += stale_metadata;
        self.lagging_high_watermark += lagging_high_watermark;
        self.not_leader += not_leader;
        self.fenced += fenced;
        self.unknown_leader_epoch += unknown_leader_epoch;
        self.unknown_topic += unknown_topic;
        self.loss_before += loss_before;
        self.loss_during += loss_during;
        self.loss_after += loss_after;
        self.loss_collateral += loss_collateral;
        self.retention += retention;
        self.out_of_range += out_of_range;
        self.empty += empty;
        self.throttled += throttled;
        self.incremental += incremental;
        self.session_not_found += session_not_found;
        self.session_epoch += session_epoch;
        self.slow += slow;
        self.timeouts += timeouts;
        self.blackout += blackout;
        self.outage += outage;
        self.cut += cut;
        self.whole_over_limit += whole_over_limit;
        self.overtaken += overtaken;
    }
}

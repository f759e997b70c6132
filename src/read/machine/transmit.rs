//! What the machine gives out: the requests it asks its driver to make ([`Transmit`], a
//! Fetch as a [`PlannedFetch`]) and what the read hands out ([`Output`]).

use super::*;

/// A partition's batches from one response, then its position after them.
#[derive(Clone)]
pub(crate) struct Chunk {
    /// The partition's index in the read.
    pub(crate) idx: usize,
    pub(crate) batches: Vec<FetchedBatch>,
    /// The next offset to fetch, after these batches.
    pub(crate) position: i64,
    /// The partition reached its end.
    pub(crate) done: bool,
}

/// A request the driver must make for the machine, or a side effect it must apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transmit {
    /// Metadata for `topics`: from the client's cache when fresh (`refresh: false`), or
    /// asked of a broker (`refresh: true`, for partition discovery), one not in `avoid` if
    /// there is one (leaders that failed or hold an overdue Fetch: a frozen broker would
    /// hold the request to its timeout, and the read with it). Answer with
    /// [`ReadMachine::handle_metadata`].
    Metadata {
        id: u64,
        topics: Vec<Arc<str>>,
        refresh: bool,
        avoid: Vec<i32>,
    },
    /// A Fetch. Answer with [`ReadMachine::handle_fetch`]: the broker's address, the version
    /// sent, the response.
    Fetch(PlannedFetch),
    /// The log start offset of `topic`/`partition` (ListOffsets -2 to its leader, at
    /// `isolation`). Answer with [`ReadMachine::handle_list_offsets`].
    ListEarliest {
        id: u64,
        topic: Arc<str>,
        partition: i32,
        isolation: IsolationLevel,
    },
    /// Mark `topic`'s cached metadata stale (its leader may have moved). No answer.
    Invalidate { topic: Arc<str> },
    /// Metadata for `topics`, asked of a broker other than those in `avoid` (the leaders
    /// of overdue Fetches: a frozen broker would not answer it either), updating the
    /// client's cache. Answer with [`ReadMachine::handle_metadata`].
    LeaderCheck {
        id: u64,
        topics: Vec<Arc<str>>,
        avoid: Vec<i32>,
    },
}

/// A Fetch the machine asks for: to broker `leader` for `partitions`, in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedFetch {
    pub(crate) id: u64,
    pub(crate) leader: i32,
    pub(crate) partitions: Vec<Requested>,
    pub(crate) params: FetchParams,
    pub(crate) session: SessionRequest,
}

impl PlannedFetch {
    /// The version to send it at, given the highest the broker speaks ([`fetch_version`]).
    pub(crate) fn version(&self, highest: i16) -> i16 {
        fetch_version(highest, &self.partitions)
    }

    /// The request at `version` ([`build_fetch`]).
    pub(crate) fn request(&self, version: i16) -> FetchRequest {
        build_fetch(&self.partitions, version, &self.params, &self.session)
    }
}

/// What the read hands out, in order.
pub(crate) enum Output {
    /// A partition's batches from one response, then its position after them.
    Chunk(Chunk),
    /// A partition jumped over deleted offsets.
    DataLoss {
        idx: usize,
        loss: DataLoss,
        position: i64,
        done: bool,
    },
    /// A partition found by discovery joined the read (its index is the next one).
    Added(PartitionPosition),
    /// The read failed; nothing follows.
    Failed(Error),
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Chunk(Chunk {
                idx,
                batches,
                position,
                done,
            }) => f
                .debug_struct("Chunk")
                .field("idx", idx)
                .field("batches", &batches.len())
                .field("position", position)
                .field("done", done)
                .finish(),
            Output::DataLoss { idx, loss, .. } => f
                .debug_struct("DataLoss")
                .field("idx", idx)
                .field("loss", loss)
                .finish(),
            Output::Added(p) => f.debug_tuple("Added").field(p).finish(),
            Output::Failed(e) => f.debug_tuple("Failed").field(e).finish(),
        }
    }
}

impl Output {
    /// The record bytes it carries (its batches' sizes on the wire), which count against
    /// [`ReadOptions::max_buffered_bytes`] until the caller takes them.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        match self {
            Output::Chunk(Chunk { batches, .. }) => {
                batches.iter().map(FetchedBatch::buffered_bytes).sum()
            }
            _ => 0,
        }
    }
}

/// The request-wide Fetch fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FetchParams {
    pub(crate) max_wait_ms: i32,
    pub(crate) min_bytes: i32,
    pub(crate) max_bytes: i32,
    pub(crate) isolation: IsolationLevel,
}

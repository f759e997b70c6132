//! Fetch sessions (KIP-227): the partitions one Fetch names, the session a leader holds, and
//! which of them a Fetch must send again.

use super::*;

/// A partition in one Fetch request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requested {
    /// The partition's index in the read.
    pub(crate) idx: usize,
    pub(crate) topic: Arc<str>,
    pub(crate) partition: i32,
    /// What the request asks for the partition.
    pub(crate) sent: Sent,
    /// In an incremental fetch: the broker's session holds the partition with these very
    /// fields, so the request leaves it out (the broker still fetches it).
    pub(crate) unchanged: bool,
}

/// The fields of a partition that a broker's fetch session keeps (KIP-227): while they are
/// the same as last sent, an incremental Fetch leaves the partition out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sent {
    /// [`Uuid::ZERO`] when unknown (then the Fetch goes by name, v12 or lower).
    pub(crate) topic_id: Uuid,
    /// The offset to fetch from.
    pub(crate) position: i64,
    /// The leader epoch the metadata gave, for fencing (-1 where unknown).
    pub(crate) leader_epoch: i32,
    pub(crate) max_bytes: i32,
}

/// The fetch session fields of one Fetch (KIP-227).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionRequest {
    /// The session id: 0 for none; with epoch 0, a session to close while opening a new one.
    pub(crate) id: i32,
    /// -1 for a sessionless full fetch, 0 for a full fetch opening a session, above 0 for an
    /// incremental fetch in session `id`.
    pub(crate) epoch: i32,
    /// Partitions to drop from the session (incremental fetches only).
    pub(crate) forgotten: Vec<Requested>,
}

impl SessionRequest {
    /// A full fetch without a session (sessions off): id 0, epoch -1.
    pub(crate) const SESSIONLESS: SessionRequest = SessionRequest {
        id: 0,
        epoch: -1,
        forgotten: Vec::new(),
    };

    /// Whether this is an incremental fetch at `version` (sessions need v7).
    pub(crate) fn is_incremental(&self, version: i16) -> bool {
        self.epoch > 0 && version >= 7
    }
}

/// A fetch session with one broker, as the client tracks it (KIP-227).
#[derive(Debug, Default)]
pub(super) struct FetchSession {
    /// The broker's session id; 0 while there is none.
    id: i32,
    /// The epoch of the next request: 0 for a full fetch (which asks for a session, and
    /// closes session `id` if there is one), 1 and up for incremental ones.
    epoch: i32,
    /// What the broker holds for the session, per partition index: the fields last sent.
    held: Held,
    /// Sessions lost in a row without an incremental answer in between: the second in a row
    /// backs off like any retriable error (a broker that keeps losing sessions must not
    /// keep the read in a tight loop).
    lost_in_a_row: u32,
}

impl FetchSession {
    /// Forgets the session; the next fetch is full. `close`: ask the broker to close the
    /// old session (it may still hold it); otherwise it is known to be gone.
    pub(super) fn reset(&mut self, close: bool) {
        if !close {
            self.id = 0;
        }
        self.epoch = 0;
        self.held.clear();
    }
}

/// What a broker holds of a fetch session: per partition index of the read (dense, from 0),
/// the fields last sent, or `None`.
#[derive(Debug, Default)]
pub(super) struct Held(Vec<Option<Requested>>);

impl Held {
    /// Exactly `requested`.
    pub(super) fn of(requested: &[Requested]) -> Held {
        let mut held = Held::default();
        for r in requested {
            held.set(r);
        }
        held
    }

    /// The fields held for partition `idx`.
    pub(super) fn get(&self, idx: usize) -> Option<&Requested> {
        self.0.get(idx).and_then(Option::as_ref)
    }

    /// Holds `r`'s fields for its partition.
    pub(super) fn set(&mut self, r: &Requested) {
        if self.0.len() <= r.idx {
            self.0.resize(r.idx + 1, None);
        }
        self.0[r.idx] = Some(r.clone());
    }

    /// Forgets partition `idx`.
    pub(super) fn remove(&mut self, idx: usize) {
        if let Some(slot) = self.0.get_mut(idx) {
            *slot = None;
        }
    }

    /// Forgets every partition.
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The partitions held, in index order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Requested> {
        self.0.iter().flatten()
    }
}

/// The epoch after `epoch`: 1 follows i32::MAX (0 means a new session, KIP-227).
pub(super) fn next_epoch(epoch: i32) -> i32 {
    if epoch == i32::MAX {
        1
    } else {
        epoch + 1
    }
}

impl ReadMachine {
    /// The session fields of the next Fetch to `leader` for `requested` (every partition the
    /// session is to hold), marking the partitions the broker's session already holds as
    /// they are.
    pub(super) fn session_request(
        &mut self,
        leader: i32,
        requested: &mut [Requested],
    ) -> SessionRequest {
        if !self.options.fetch_sessions {
            return SessionRequest::SESSIONLESS;
        }
        let session = self
            .sessions
            .get_or_insert_with(leader, FetchSession::default);
        if session.epoch == 0 {
            return SessionRequest {
                id: session.id,
                epoch: 0,
                forgotten: Vec::new(),
            };
        }
        // Which partitions this request names, by index (the held ones not named are
        // forgotten, in index order).
        let mut wanted = vec![false; session.held.0.len()];
        for r in requested.iter_mut() {
            if let Some(w) = wanted.get_mut(r.idx) {
                *w = true;
            }
            r.unchanged = session
                .held
                .get(r.idx)
                .is_some_and(|held| r.sent == held.sent);
        }
        let forgotten: Vec<Requested> = session
            .held
            .iter()
            .filter(|held| !wanted[held.idx])
            .cloned()
            .collect();
        SessionRequest {
            id: session.id,
            epoch: session.epoch,
            forgotten,
        }
    }

    /// Updates the session with `leader` after a Fetch with `sent` for `requested` was
    /// answered at `version` with top-level `code` and session id `answered_id`. Returns
    /// whether the answer was a session error on an incremental fetch: then nothing of the
    /// answer applies and the partitions are fetched again at once, in a full fetch.
    pub(super) fn session_answered(
        &mut self,
        leader: i32,
        requested: &[Requested],
        sent: &SessionRequest,
        version: i16,
        code: ErrorCode,
        answered_id: i32,
    ) -> bool {
        if sent.epoch < 0 {
            return false;
        }
        let session = self
            .sessions
            .get_or_insert_with(leader, FetchSession::default);
        let incremental = sent.is_incremental(version);
        if !code.is_ok() {
            // FETCH_SESSION_ID_NOT_FOUND: the broker has no such session (evicted, or the
            // broker restarted). Other errors leave the session's epoch unknown: close it.
            session.reset(code != ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
            let session_error = [
                ErrorCode::FETCH_SESSION_ID_NOT_FOUND,
                ErrorCode::INVALID_FETCH_SESSION_EPOCH,
                ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR,
            ]
            .contains(&code);
            if !(incremental && session_error) {
                return false;
            }
            session.lost_in_a_row += 1;
            crate::log::debug!(leader, session = sent.id, epoch = sent.epoch, %code,
                "fetch session lost; fetching in full");
            return session.lost_in_a_row == 1;
        }
        if !incremental {
            // A full fetch: the broker opened a session (id above 0), or did not (id 0:
            // sessions are off, or its cache is full); then the next fetch is full again.
            session.id = answered_id;
            session.epoch = if answered_id > 0 { 1 } else { 0 };
            session.held = Held::of(requested);
            if answered_id <= 0 {
                session.held.clear();
            }
        } else if answered_id != sent.id {
            // Not the session asked for: start over.
            session.reset(true);
        } else {
            session.lost_in_a_row = 0;
            session.epoch = next_epoch(sent.epoch);
            for r in requested.iter().filter(|r| !r.unchanged) {
                session.held.set(r);
            }
            for f in &sent.forgotten {
                session.held.remove(f.idx);
            }
        }
        false
    }
}

//! Leader checks: while a Fetch is overdue or a partition backs off after its leader failed,
//! Metadata from another broker, so partitions whose leader moved are fetched from the new one.

use super::*;

impl ReadMachine {
    /// When a leader check will be due: the earliest time a Fetch with partitions is
    /// overdue, or now if a partition backs off after its leader failed it; not before the
    /// next check may go, nor before the newest check in flight has gone unanswered for
    /// [`LEADER_CHECK_TIMEOUT`].
    pub(super) fn next_leader_check_at(&self) -> Option<Instant> {
        if self.leader_checks.len() >= LEADER_CHECKS_AT_ONCE {
            return None;
        }
        let overdue = self
            .fetches
            .values()
            .filter(|f| !f.requested.is_empty())
            .map(|f| f.overdue_at)
            .min();
        // A partition backing off after its leader failed it set the next check then.
        let backing_off = self.parts.iter().any(|p| self.waits_for_leader(p));
        let due = if backing_off {
            self.next_leader_check
        } else {
            overdue
        }?;
        let unanswered = self
            .leader_checks
            .last()
            .map(|&(_, sent)| sent + LEADER_CHECK_TIMEOUT);
        let not_before = self.next_leader_check.max(unanswered);
        Some(not_before.map_or(due, |t| t.max(due)))
    }

    /// Whether `p` backs off after its leader failed it (and no request for it is out).
    pub(super) fn waits_for_leader(&self, p: &PartState) -> bool {
        !p.done && !p.in_flight && p.not_before.is_some() && p.failed_at.is_some()
    }

    /// The leaders that failed a backing-off partition or hold a Fetch overdue at `now`:
    /// Metadata is not asked of them if another broker can answer it.
    pub(super) fn suspects(&self, now: Instant) -> Vec<i32> {
        let mut suspects = Vec::new();
        let failed = self.parts.iter().filter(|p| self.waits_for_leader(p));
        // A broker that holds a Fetch past its time is suspect even after its partitions
        // were taken out of it.
        let overdue = self.fetches.values().filter(|f| f.overdue_at <= now);
        for leader in failed
            .filter_map(|p| p.failed_at)
            .chain(overdue.map(|f| f.leader))
        {
            if !suspects.contains(&leader) {
                suspects.push(leader);
            }
        }
        suspects
    }

    /// A [`Transmit::LeaderCheck`] for the topics of the overdue Fetches at `now`, if one is
    /// due.
    pub(super) fn leader_check(&mut self, now: Instant) -> Option<Transmit> {
        if self.next_leader_check_at().is_none_or(|t| t > now) {
            return None;
        }
        let mut topics: Vec<Arc<str>> = Vec::new();
        let failed = self.parts.iter().filter(|p| self.waits_for_leader(p));
        let overdue = self.fetches.values().filter(|f| f.overdue_at <= now);
        let requested = overdue.flat_map(|f| &f.requested);
        for topic in failed.map(|p| &p.topic).chain(requested.map(|r| &r.topic)) {
            if !topics.contains(topic) {
                topics.push(topic.clone());
            }
        }
        let avoid = self.suspects(now);
        let id = self.next_id();
        crate::log::debug!(
            leaders = ?avoid,
            unanswered = self.leader_checks.len(),
            "fetch overdue; checking its partitions' leaders"
        );
        self.leader_checks.push((id, now));
        self.next_leader_check = Some(now + LEADER_CHECK_EVERY);
        Some(Transmit::LeaderCheck { id, topics, avoid })
    }

    /// The answer to a leader check: the partitions of overdue Fetches whose leader moved
    /// are taken out of them, to be fetched from their new leader at once. (The broker
    /// that was leader can no longer serve them; a Fetch of them it answers late is
    /// ignored.)
    pub(super) fn leaders_checked(&mut self, now: Instant, result: Result<Vec<TopicMetadata>>) {
        let Ok(metadata) = result else {
            return; // Checked again after LEADER_CHECK_EVERY.
        };
        let leader_of = |topic: &str, partition: i32| {
            metadata
                .iter()
                .find(|t| *t.name == *topic)
                .and_then(|t| t.partition(partition))
                .map(|pm| pm.leader_id)
                .filter(|l| *l >= 0)
        };
        // Partitions backing off after their leader failed them: due at once if another
        // broker leads them now.
        for i in 0..self.parts.len() {
            let p = &self.parts[i];
            if !self.waits_for_leader(p) {
                continue;
            }
            let moved = leader_of(&p.topic, p.partition).is_some_and(|l| Some(l) != p.failed_at);
            if moved {
                let p = &mut self.parts[i];
                p.not_before = None;
                p.failed_at = None;
            }
        }
        let parts = &mut self.parts;
        for f in self.fetches.values_mut() {
            if f.overdue_at > now {
                continue;
            }
            let leader = f.leader;
            let before = f.requested.len();
            f.requested.retain(|r| {
                let moved = leader_of(&r.topic, r.partition).is_some_and(|l| l != leader);
                if moved {
                    parts[r.idx].in_flight = false;
                }
                !moved
            });
            f.detached |= f.requested.len() != before;
        }
    }
}

//! A simulated Kafka cluster at the wire level, for deterministic tests of the whole client.
//!
//! Where [`super`] drives the read machine alone against a cluster model, this module runs the
//! real [`Client`] (its metadata cache, resolution, commits, connections and retries) over
//! in-memory connections ([`crate::conn::sim_net`]) to simulated brokers that read request
//! frames (size prefix, request header, body) and answer them in Kafka's wire format through
//! kseek-protocol's message types: ApiVersions, Metadata, ListOffsets, FindCoordinator,
//! OffsetCommit, OffsetFetch, SaslHandshake, SaslAuthenticate ([`broker`]) and Fetch with
//! fetch sessions ([`fetch`]).
//!
//! Every broker shares one [`WireCluster`]: the partitions of one topic (leader, leader epoch,
//! log start, high watermark, a timestamp per offset), the group coordinator and the committed
//! offsets. Faults change it while requests are in flight: the n-th request the cluster
//! receives (counted over every broker) may move a partition's leader or the coordinator
//! before it is answered (so the old one answers NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH
//! or NOT_COORDINATOR as a real broker would), be answered with an error code, get stale
//! metadata, or lose its connection before or after the broker acts on it. With SASL
//! (PLAIN) required, a broker may also break off every SASL exchange ([`SaslFault`]).
//!
//! A seed (u64) makes a schedule of such faults with [`Rng`] (splitmix64). The tests
//! ([`tests`]) run many seeds per scenario on tokio's paused clock (timeouts and backoffs
//! pass in no real time) and check exact results against the cluster state. A failing seed
//! prints the command that runs it alone (`KSEEK_SIM_SEED`); `KSEEK_SIM_SCHEDULES` sets how
//! many seeds each scenario runs.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};

use kseek_protocol::ErrorCode;

use crate::conn::sim_net;

mod broker;
mod fetch;
#[cfg(test)]
mod tests;

/// The topic of the wire-level simulations.
pub(crate) const WIRE_TOPIC: &str = "wire";

/// The address of simulated broker `node` (the in-memory network's reserved form).
pub(crate) fn address(node: i32) -> String {
    format!("sim-{node}:{node}")
}

/// A small deterministic PRNG (splitmix64): the same seed, the same schedule.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One of `items`.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// What happens to one request, by its index among all requests the cluster receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The partition's leader moves to another broker (epoch + 1) before this request is
    /// handled.
    MoveLeader(i32),
    /// The coordinator moves to another broker before this request is handled.
    #[cfg_attr(not(feature = "group"), allow(dead_code))]
    MoveCoordinator,
    /// The answer carries this error code (at the level the API has one: the partitions of
    /// ListOffsets and OffsetCommit, the group of OffsetFetch, FindCoordinator's).
    Error(ErrorCode),
    /// A Metadata answer shows the leaders from before the last moves.
    StaleMetadata,
    /// The connection closes before the broker acts on the request.
    CloseBefore,
    /// The broker acts on the request, then closes the connection without answering.
    CloseAfter,
    /// Every broker forgets its fetch sessions before this request is handled.
    EvictSessions,
}

/// How a broker breaks off every SASL exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "sasl"), allow(dead_code))]
pub(crate) enum SaslFault {
    /// It answers SaslHandshake, then closes the connection on SaslAuthenticate.
    AfterHandshake,
    /// It starts its SaslAuthenticate answer and never finishes it.
    MidAuthenticate,
}

/// One partition of the simulated topic.
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    pub(crate) leader: i32,
    pub(crate) leader_epoch: i32,
    /// The leader before the last move (what stale metadata shows).
    pub(crate) previous_leader: i32,
    pub(crate) log_start: i64,
    /// The timestamps of the offsets `log_start..high_watermark`, non-decreasing.
    pub(crate) timestamps: Vec<i64>,
}

impl Partition {
    /// What `node` answers a request for this partition with, as a broker does: the
    /// scheduled error, not the leader, then the leader epoch check of KIP-320
    /// (`current_leader_epoch` ahead of the leader's is UNKNOWN_LEADER_EPOCH, behind it
    /// FENCED_LEADER_EPOCH; -1 asks for no check), else NONE.
    pub(crate) fn leader_check(
        &self,
        node: i32,
        current_leader_epoch: i32,
        fault: Option<Fault>,
    ) -> ErrorCode {
        if let Some(Fault::Error(code)) = fault {
            code
        } else if self.leader != node {
            ErrorCode::NOT_LEADER_OR_FOLLOWER
        } else if current_leader_epoch > self.leader_epoch {
            ErrorCode::UNKNOWN_LEADER_EPOCH
        } else if current_leader_epoch >= 0 && current_leader_epoch < self.leader_epoch {
            ErrorCode::FENCED_LEADER_EPOCH
        } else {
            ErrorCode::NONE
        }
    }

    pub(crate) fn high_watermark(&self) -> i64 {
        self.log_start + self.timestamps.len() as i64
    }

    /// The first offset whose timestamp is at or after `ts`, with that timestamp.
    pub(crate) fn offset_for_time(&self, ts: i64) -> Option<(i64, i64)> {
        let i = self.timestamps.iter().position(|&t| t >= ts)?;
        Some((self.log_start + i as i64, self.timestamps[i]))
    }
}

/// A committed offset: offset, leader epoch, metadata.
pub(crate) type Committed = (i64, i32, Option<String>);

/// The state every simulated broker shares.
#[derive(Debug, Default)]
pub(crate) struct WireCluster {
    /// Node ids of the brokers (all alive).
    pub(crate) nodes: Vec<i32>,
    pub(crate) partitions: Vec<Partition>,
    pub(crate) coordinator: i32,
    pub(crate) committed: BTreeMap<(String, i32), Committed>,
    /// Faults by request index.
    pub(crate) faults: HashMap<u64, Fault>,
    /// Requests received so far (the index of the next one).
    pub(crate) requests: u64,
    /// Faults that took effect.
    pub(crate) faults_hit: u64,
    /// Fetch sessions of every broker.
    pub(crate) sessions: fetch::Sessions,
    /// How long the broker holds the answer it just made (a Fetch's max wait).
    pub(crate) hold: std::time::Duration,
    /// The id of the last fetch session opened.
    pub(crate) last_session_id: i32,
    /// Brokers that take requests and answer none (a paused process, a partitioned host).
    pub(crate) frozen: Vec<i32>,
    /// PLAIN user name and password every connection must authenticate with, if any.
    pub(crate) sasl: Option<(String, String)>,
    /// A broker that always breaks off SASL, and how.
    pub(crate) bad_sasl: Option<(i32, SaslFault)>,
    /// A test-only break (to check that the tests can fail): the offset every
    /// ListOffsets-by-time answer is off by.
    pub(crate) skew: i64,
}

impl WireCluster {
    /// The next node after `node` (in a ring of the brokers).
    pub(crate) fn next_node(&self, node: i32) -> i32 {
        let i = self.nodes.iter().position(|&n| n == node).unwrap_or(0);
        self.nodes[(i + 1) % self.nodes.len()]
    }

    /// Counts a request and takes the fault scheduled for it, applying the cluster changes
    /// (leader and coordinator moves) at once.
    pub(crate) fn take_fault(&mut self) -> Option<Fault> {
        let index = self.requests;
        self.requests += 1;
        let fault = self.faults.remove(&index)?;
        self.faults_hit += 1;
        match fault {
            Fault::MoveLeader(p) => {
                let next = self.next_node(self.partitions[p as usize].leader);
                let part = &mut self.partitions[p as usize];
                part.previous_leader = part.leader;
                part.leader = next;
                part.leader_epoch += 1;
            }
            Fault::MoveCoordinator => self.coordinator = self.next_node(self.coordinator),
            Fault::EvictSessions => self.sessions.clear(),
            _ => {}
        }
        Some(fault)
    }

    /// `topic`'s `partition`, if the cluster has it.
    pub(crate) fn partition(&self, topic: &str, partition: i32) -> Option<&Partition> {
        self.partitions
            .get(partition as usize)
            .filter(|_| topic == WIRE_TOPIC)
    }
}

/// A handle on a simulated cluster whose brokers listen on this thread's in-memory network.
#[derive(Debug, Clone)]
pub(crate) struct SimNet {
    pub(crate) state: Arc<Mutex<WireCluster>>,
}

impl SimNet {
    /// Starts `cluster`'s brokers (replacing any other simulated brokers of this thread).
    pub(crate) fn start(cluster: WireCluster) -> SimNet {
        sim_net::clear();
        let state = Arc::new(Mutex::new(cluster));
        let nodes = state.lock().unwrap().nodes.clone();
        for node in nodes {
            let state = state.clone();
            sim_net::listen(
                &address(node),
                Rc::new(move |stream| {
                    tokio::spawn(broker::serve(state.clone(), node, stream));
                    Ok(())
                }),
            );
        }
        SimNet { state }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, WireCluster> {
        self.state.lock().unwrap()
    }

    /// The bootstrap list: every broker.
    pub(crate) fn bootstrap(&self) -> Vec<String> {
        self.lock().nodes.iter().map(|&n| address(n)).collect()
    }
}

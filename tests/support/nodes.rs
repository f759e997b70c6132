//! Node control of a private multi-node cluster ([`Broker::start_with_config`]): kill, stop,
//! pause and restart one node (the node commands of `tests/kafka/broker`), wait until the
//! cluster is whole again, see who leads and who coordinates, and run Kafka's preferred-leader
//! election.
//!
//! Node ids are 1..N, in the order of [`Broker::bootstrap`].

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kseek::protocol::messages::find_coordinator::{FindCoordinatorRequest, KEY_TYPE_GROUP};
use kseek::protocol::messages::metadata::{MetadataRequest, MetadataResponse};
use kseek::{Connection, ConnectionConfig};

use super::{kafka_script, unique_name, Broker, KafkaVersion};

/// One partition as a node's Metadata answer describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PartitionState {
    /// Partition.
    pub(crate) partition: i32,
    /// Leader node id, -1 while there is none.
    pub(crate) leader: i32,
    /// Leader epoch.
    pub(crate) leader_epoch: i32,
    /// Replica node ids, preferred leader first.
    pub(crate) replicas: Vec<i32>,
    /// In-sync replica node ids.
    pub(crate) isr: Vec<i32>,
}

/// A connection for probes: short timeouts, since a node that is starting may accept
/// connections before it answers.
fn probe_config() -> ConnectionConfig {
    ConnectionConfig::default()
        .client_id("kseek-test-probe")
        .connect_timeout(Duration::from_secs(2))
        .request_timeout(Duration::from_secs(3))
}

impl Broker {
    /// [`Broker::start`] with broker settings (`key=value`) added on every node.
    pub(crate) fn start_with_config(version: KafkaVersion, nodes: u32, config: &[&str]) -> Broker {
        let dir = std::env::temp_dir().join(unique_name(&format!("kseek-kafka-{}", version.arg())));
        let mut cmd = Command::new(kafka_script("broker"));
        cmd.args(["start", "--version", version.arg(), "--nodes"])
            .arg(nodes.to_string())
            .arg("--dir")
            .arg(&dir)
            .arg("--watch-pid")
            .arg(std::process::id().to_string());
        for c in config {
            cmd.args(["--config", c]);
        }
        let out = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("cannot run tests/kafka/broker: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "tests/kafka/broker start failed ({}): {stdout}",
            out.status
        );
        let bootstrap = stdout
            .lines()
            .find_map(|l| l.strip_prefix("BOOTSTRAP="))
            .unwrap_or_else(|| panic!("no BOOTSTRAP= line from tests/kafka/broker: {stdout}"))
            .to_string();
        Broker {
            version,
            bootstrap,
            owned_dir: Some(dir),
        }
    }

    /// The address of every node, node 1 first.
    pub(crate) fn node_addresses(&self) -> Vec<&str> {
        self.bootstrap.split(',').collect()
    }

    /// The address of node `node`.
    pub(crate) fn node_address(&self, node: i32) -> &str {
        let addresses = self.node_addresses();
        usize::try_from(node - 1)
            .ok()
            .and_then(|i| addresses.get(i).copied())
            .unwrap_or_else(|| panic!("no node {node} in {}", self.bootstrap))
    }

    fn state_dir(&self) -> &Path {
        self.owned_dir
            .as_deref()
            .expect("node commands need a cluster this process started (Broker::start)")
    }

    /// Runs `tests/kafka/broker <command> --node <node>` on this cluster; panics unless it
    /// succeeds.
    fn node_command(&self, command: &str, node: i32) {
        let status = Command::new(kafka_script("broker"))
            .args([command, "--node", &node.to_string(), "--dir"])
            .arg(self.state_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .unwrap_or_else(|e| panic!("cannot run tests/kafka/broker: {e}"));
        assert!(status.success(), "broker {command} --node {node}: {status}");
    }

    /// `kill -9` of node `node` (its whole process group); returns once it is gone.
    pub(crate) fn kill_node(&self, node: i32) {
        self.node_command("kill", node);
    }

    /// Shuts node `node` down gracefully (SIGTERM: a controlled shutdown that moves its
    /// leaderships away first); returns once it is gone.
    pub(crate) fn stop_node(&self, node: i32) {
        self.node_command("stop", node);
    }

    /// Freezes node `node` (SIGSTOP): its sockets stay open, nothing is answered.
    pub(crate) fn pause_node(&self, node: i32) {
        self.node_command("pause", node);
    }

    /// Starts node `node` again with its config and data (killing it first if it is paused);
    /// returns once it listens on its port (it may not answer yet: see
    /// [`Broker::wait_whole`]).
    pub(crate) fn restart_node(&self, node: i32) {
        self.node_command("restart", node);
    }

    /// The nodes the state file lists as down, in order.
    pub(crate) fn down_nodes(&self) -> Vec<i32> {
        let state = std::fs::read_to_string(self.state_dir().join("state")).expect("state file");
        let pids = state
            .lines()
            .find_map(|l| l.strip_prefix("PIDS="))
            .expect("PIDS= in the state file")
            .trim_matches('"');
        (1..)
            .zip(pids.split_whitespace())
            .filter(|(_, pid)| *pid == "-")
            .map(|(node, _)| node)
            .collect()
    }

    /// The nodes whose process is frozen ([`Broker::pause_node`]), in order.
    pub(crate) fn paused_nodes(&self) -> Vec<i32> {
        let state = std::fs::read_to_string(self.state_dir().join("state")).expect("state file");
        let pids = state
            .lines()
            .find_map(|l| l.strip_prefix("PIDS="))
            .expect("PIDS= in the state file")
            .trim_matches('"');
        (1..)
            .zip(pids.split_whitespace())
            .filter(|(_, pid)| {
                // /proc/<pid>/stat: "pid (comm) S ...", S = T when stopped.
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    stat.rsplit_once(") ")
                        .is_some_and(|(_, rest)| rest.starts_with('T'))
                })
            })
            .map(|(node, _)| node)
            .collect()
    }

    /// Restarts every node that is down or frozen, all at once (a KRaft quorum needs a
    /// majority of them to come up together), and waits until the cluster is whole.
    ///
    /// After a restart, "whole" takes two checks. Every node's Metadata answer must list every
    /// broker and full in-sync sets ([`Broker::wait_whole`]), but a node that has just restarted
    /// can answer from the metadata log it replayed while the controllers still elect a leader.
    /// So the Admin client of Kafka's Java tool must also see every broker and a controller
    /// (`ktool wait-ready`), which is what the next create-topic or delete-topic needs. Without
    /// that second check, a delete-topic right after all three nodes were killed once timed
    /// out "waiting for a node assignment".
    pub(crate) async fn heal(&self) {
        let mut down = self.down_nodes();
        down.extend(self.paused_nodes());
        std::thread::scope(|s| {
            for &node in &down {
                s.spawn(move || self.restart_node(node));
            }
        });
        let limit = Duration::from_secs(180);
        self.wait_whole(limit).await;
        if !down.is_empty() {
            self.wait_admin_ready(limit);
        }
    }

    /// Waits until an Admin client sees every node as a broker and names a controller
    /// (`ktool wait-ready`); panics with the tool's last reason after `limit`.
    fn wait_admin_ready(&self, limit: Duration) {
        let nodes = self.node_addresses().len().to_string();
        let timeout = limit.as_millis().to_string();
        let started = Instant::now();
        self.ktool(
            &["wait-ready", "--nodes", &nodes, "--timeout-ms", &timeout],
            None,
        );
        eprintln!("admin client ready after {:?}", started.elapsed());
    }

    /// One node's Metadata answer for every topic, or why there is none.
    pub(crate) async fn node_metadata(&self, node: i32) -> Result<MetadataResponse, String> {
        let conn = Connection::connect(self.node_address(node), probe_config())
            .await
            .map_err(|e| e.to_string())?;
        conn.send(&MetadataRequest::all_topics())
            .await
            .map_err(|e| e.to_string())
    }

    /// The partitions of `topic` as the first node that answers describes them, by partition.
    pub(crate) async fn partition_states(&self, topic: &str) -> Vec<PartitionState> {
        let mut why = Vec::new();
        for node in 1..=self.node_addresses().len() as i32 {
            match self.node_metadata(node).await {
                Ok(m) => {
                    let t = m
                        .topics
                        .iter()
                        .find(|t| t.name.as_deref() == Some(topic))
                        .unwrap_or_else(|| panic!("node {node} does not list {topic}"));
                    let mut states: Vec<PartitionState> = t
                        .partitions
                        .iter()
                        .map(|p| PartitionState {
                            partition: p.partition_index,
                            leader: p.leader_id,
                            leader_epoch: p.leader_epoch,
                            replicas: p.replica_nodes.clone(),
                            isr: p.isr_nodes.clone(),
                        })
                        .collect();
                    states.sort_by_key(|p| p.partition);
                    return states;
                }
                Err(e) => why.push(format!("node {node}: {e}")),
            }
        }
        panic!("no node answered Metadata: {why:?}");
    }

    /// Polls [`Broker::partition_states`] of `topic` (at most `limit`) until `done` holds
    /// for them, and returns them; a node's metadata can lag a moment behind an election.
    pub(crate) async fn wait_partitions(
        &self,
        topic: &str,
        what: &str,
        limit: Duration,
        done: impl Fn(&[PartitionState]) -> bool,
    ) -> Vec<PartitionState> {
        let started = Instant::now();
        loop {
            let states = self.partition_states(topic).await;
            if done(&states) {
                eprintln!("  {what} after {:?}", started.elapsed());
                return states;
            }
            assert!(
                started.elapsed() < limit,
                "not {what} after {limit:?}: {states:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (polling, at most `limit`) until every node answers Metadata listing all
    /// nodes, and every partition of every topic (internal ones included) has a leader and
    /// all its replicas in sync.
    pub(crate) async fn wait_whole(&self, limit: Duration) {
        let nodes = self.node_addresses().len() as i32;
        let deadline = Instant::now() + limit;
        let started = Instant::now();
        loop {
            let mut missing = Vec::new();
            for node in 1..=nodes {
                match self.node_metadata(node).await {
                    Err(e) => missing.push(format!("node {node}: {e}")),
                    Ok(m) => {
                        if m.brokers.len() != nodes as usize {
                            missing.push(format!("node {node} lists {} brokers", m.brokers.len()));
                        }
                        for t in &m.topics {
                            for p in &t.partitions {
                                let mut isr = p.isr_nodes.clone();
                                let mut replicas = p.replica_nodes.clone();
                                isr.sort_unstable();
                                replicas.sort_unstable();
                                if p.leader_id < 0 || isr != replicas {
                                    missing.push(format!(
                                        "node {node}: {:?}[{}] leader {} isr {:?} of {:?}",
                                        t.name, p.partition_index, p.leader_id, isr, replicas
                                    ));
                                }
                            }
                        }
                    }
                }
            }
            if missing.is_empty() {
                eprintln!("cluster whole after {:?}", started.elapsed());
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster is not whole after {limit:?}: {missing:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The node coordinating `group`, asked (FindCoordinator v4, else v3) of the first node
    /// that answers without an error.
    pub(crate) async fn coordinator_of(&self, group: &str) -> i32 {
        let mut why = Vec::new();
        for address in self.node_addresses() {
            let conn = match Connection::connect(address, probe_config()).await {
                Ok(conn) => conn,
                Err(e) => {
                    why.push(e.to_string());
                    continue;
                }
            };
            let request = FindCoordinatorRequest {
                key_type: KEY_TYPE_GROUP,
                coordinator_keys: vec![group.to_owned()],
                ..FindCoordinatorRequest::default()
            };
            match conn.send_version(&request, 4).await {
                Ok(r) => match r.coordinators.first() {
                    Some(c) if c.error_code == 0 => return c.node_id,
                    other => why.push(format!("{address}: {other:?}")),
                },
                Err(e) => why.push(e.to_string()),
            }
        }
        panic!("no node named the coordinator of {group:?}: {why:?}");
    }

    /// Runs Kafka's preferred-leader election for every partition of `topic` (partitions
    /// `0..partitions`): each moves to its first replica if that one is in sync.
    pub(crate) fn elect_preferred_leaders(&self, topic: &str, partitions: i32) {
        let file = std::env::temp_dir().join(unique_name("elect"));
        let list: Vec<String> = (0..partitions)
            .map(|p| format!("{{\"topic\":\"{topic}\",\"partition\":{p}}}"))
            .collect();
        std::fs::write(&file, format!("{{\"partitions\":[{}]}}", list.join(","))).unwrap();
        let out = self.kafka_tool(
            "org.apache.kafka.tools.LeaderElectionCommand",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--election-type",
                "PREFERRED",
                "--path-to-json-file",
                file.to_str().unwrap(),
            ],
        );
        let _ = std::fs::remove_file(file);
        eprintln!("preferred leader election: {}", out.trim());
    }

    /// Moves `topic`/`partition` to the replicas `replicas` (first = preferred leader) with
    /// Kafka's ReassignPartitionsCommand and waits (at most a minute) until it is complete.
    /// Unlike [`Broker::reassign`], any number of replicas.
    pub(crate) fn reassign_replicas(&self, topic: &str, partition: i32, replicas: &[i32]) {
        let file = std::env::temp_dir().join(unique_name("reassign"));
        let list: Vec<String> = replicas.iter().map(i32::to_string).collect();
        std::fs::write(
            &file,
            format!(
                "{{\"version\":1,\"partitions\":[{{\"topic\":\"{topic}\",\"partition\":{partition},\"replicas\":[{}]}}]}}",
                list.join(",")
            ),
        )
        .unwrap();
        let run = |mode: &str| {
            self.kafka_tool(
                "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
                &[
                    "--bootstrap-server",
                    self.bootstrap(),
                    "--reassignment-json-file",
                    file.to_str().unwrap(),
                    mode,
                ],
            )
        };
        run("--execute");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !run("--verify").contains("is completed") {
            assert!(Instant::now() < deadline, "reassignment not done");
        }
        let _ = std::fs::remove_file(file);
    }

    /// The bytes of each partition's log of `topic` as Kafka's own LogDirsCommand
    /// (`kafka-log-dirs.sh --describe`) reports them, summed over the brokers and log
    /// directories that hold a current (not future) replica: with one replica, its log's size.
    pub(crate) fn log_sizes(&self, topic: &str) -> std::collections::BTreeMap<i32, u64> {
        let class = match self.version() {
            KafkaVersion::V2_8 => "kafka.admin.LogDirsCommand",
            _ => "org.apache.kafka.tools.LogDirsCommand",
        };
        let out = self.kafka_tool(
            class,
            &[
                "--describe",
                "--bootstrap-server",
                self.bootstrap(),
                "--topic-list",
                topic,
            ],
        );
        let json = out
            .lines()
            .find(|l| l.starts_with('{'))
            .unwrap_or_else(|| panic!("no JSON in LogDirsCommand's output: {out}"));
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let mut sizes = std::collections::BTreeMap::new();
        for broker in v["brokers"].as_array().unwrap() {
            for dir in broker["logDirs"].as_array().unwrap() {
                for p in dir["partitions"].as_array().unwrap() {
                    let name = p["partition"].as_str().unwrap();
                    let Some(partition) = name.strip_prefix(&format!("{topic}-")) else {
                        continue;
                    };
                    if p["isFuture"].as_bool() == Some(true) {
                        continue;
                    }
                    *sizes.entry(partition.parse().unwrap()).or_insert(0) +=
                        p["size"].as_u64().unwrap();
                }
            }
        }
        sizes
    }

    /// Runs a command-line tool `class` of this cluster's Kafka release; panics unless it
    /// succeeds, and returns its stdout.
    pub(crate) fn kafka_tool(&self, class: &str, args: &[&str]) -> String {
        let cache = std::env::var("KSEEK_CACHE_DIR").unwrap_or_else(|_| {
            let base = std::env::var("XDG_CACHE_HOME")
                .unwrap_or_else(|_| format!("{}/.cache", std::env::var("HOME").unwrap()));
            format!("{base}/kseek")
        });
        let full = match self.version() {
            KafkaVersion::V4_4 => "4.4.0",
            KafkaVersion::V3_9 => "3.9.2",
            KafkaVersion::V2_8 => "2.8.2",
        };
        let out = Command::new("java")
            .arg("-XX:TieredStopAtLevel=1")
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                kafka_script("tool-log4j2.xml").display()
            ))
            .arg("-cp")
            .arg(format!("{cache}/kafka-{full}/lib/*"))
            .arg(class)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run java {class}: {e}"));
        assert!(
            out.status.success(),
            "{class} {args:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// The bytes waiting, unread, in the receive queues of `port`'s side of this process's TCP
/// connections to `port` on 127.0.0.1 (from `/proc/net/tcp` and `tcp6`): how much of what this process
/// sent a frozen broker has not been read. `None` when this process has no connection to
/// `port`.
pub(crate) fn unread_by_peer(port: u16) -> Option<u64> {
    // Our sockets' inodes, from our file descriptors.
    let inodes: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .ok()?
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    // Java listens on dual-stack sockets: the broker's side is in tcp6 (v4-mapped).
    let table = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect::<Vec<_>>()
        .join("\n");
    // (local port, remote port, rx queue, inode) of every line.
    let rows: Vec<(u16, u16, u64, String)> = table
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let port_of = |a: &str| u16::from_str_radix(a.rsplit(':').next()?, 16).ok();
            let rx = u64::from_str_radix(f.get(4)?.split(':').nth(1)?, 16).ok()?;
            Some((
                port_of(f.get(1)?)?,
                port_of(f.get(2)?)?,
                rx,
                f.get(9)?.to_string(),
            ))
        })
        .collect();
    let ours: Vec<u16> = rows
        .iter()
        .filter(|(_, remote, _, inode)| *remote == port && inodes.contains(inode))
        .map(|(local, ..)| *local)
        .collect();
    if ours.is_empty() {
        return None;
    }

    Some(
        rows.iter()
            .filter(|(local, remote, ..)| *local == port && ours.contains(remote))
            .map(|(_, _, rx, _)| rx)
            .sum(),
    )
}

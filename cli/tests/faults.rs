//! `kseek read` when the brokers are gone: every node down (connections refused), and a
//! broker that accepts connections and never answers (a black hole, through the fault proxy
//! of `tests/support/proxy.rs` in front of a real Kafka 4.4 broker). Each ends by its
//! deadlines with exit code 3, exactly one line on stderr and nothing on stdout.
//!
//! The library's side of these faults, against a real three-node cluster and through the
//! proxy, is in `tests/faults.rs` and `tests/netfaults/`.
//!
//! Run with `cargo test -p kseek-cli --test faults`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::net::TcpListener;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use support::proxy::FaultProxy;
use support::NewRecord;

/// Runs `kseek args`, killing it (and failing) if it runs longer than `limit`: its exit
/// status, stdout, stderr and how long it ran.
fn kseek_bounded(args: &[&str], limit: Duration) -> (ExitStatus, Vec<u8>, String, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kseek"))
        .args(args)
        .env_remove("KSEEK_BOOTSTRAP")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running kseek");
    // Poll for the exit only to bound the run's time (the outcome is the exit status).
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for kseek") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kseek {args:?} still runs after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let out = child.wait_with_output().expect("kseek's output");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (status, out.stdout, stderr, took)
}

/// Exit 3, nothing on stdout, exactly one `kseek: ` line on stderr; returns that line.
fn one_line_exit_3(status: ExitStatus, stdout: &[u8], stderr: &str) -> String {
    assert_eq!(status.code(), Some(3), "exit code (stderr: {stderr})");
    assert!(stdout.is_empty(), "nothing printed on stdout");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr: {stderr:?}");
    assert!(lines[0].starts_with("kseek: "), "{stderr:?}");
    lines[0].to_owned()
}

#[test]
fn kseek_read_of_a_cluster_whose_every_node_is_down_exits_3_with_one_line() {
    // Three addresses where nothing listens any more: every connection is refused, as to
    // nodes killed with -9.
    let nodes: Vec<String> = (0..3)
        .map(|_| {
            let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
            listener.local_addr().expect("its address").to_string()
        })
        .collect();
    let bootstrap = nodes.join(",");
    let args = [
        "read",
        "--topic",
        "events",
        "--bootstrap",
        bootstrap.as_str(),
    ];
    let (status, stdout, stderr, took) = kseek_bounded(&args, Duration::from_secs(60));
    eprintln!("kseek read of a dead cluster: {status} after {took:?}: {stderr}");
    let line = one_line_exit_3(status, &stdout, &stderr);
    assert!(
        line.contains(&nodes[0]),
        "the line names the servers: {line}"
    );
}

/// `kseek read` (default timeouts: 30 s per request, 30 s of retries) against a black hole
/// exits 3 with one line on stderr, well before it would be killed.
#[test]
fn kseek_read_against_a_broker_that_never_answers_exits_3_with_one_line() {
    let broker = support::broker();
    let topic = broker.new_topic("netfaults-cli-hole", 1, &[]);
    let input: Vec<_> = (0..5)
        .map(|i| NewRecord::new().partition(0).key(format!("k{i}")).into())
        .collect();
    broker.produce(&topic, &input);
    let proxy = FaultProxy::start(broker.bootstrap());
    proxy.set_black_hole(true);
    let args = [
        "read",
        "--topic",
        topic.as_str(),
        "--from",
        "earliest",
        "--to",
        "latest",
        "--bootstrap",
        proxy.bootstrap(),
    ];
    let (status, stdout, stderr, took) = kseek_bounded(&args, Duration::from_secs(30 + 30 + 15));
    eprintln!("kseek read against a black hole: {status} after {took:?}: {stderr}");
    one_line_exit_3(status, &stdout, &stderr);
    assert!(proxy.counters().swallowed_requests >= 1);
}

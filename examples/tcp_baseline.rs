//! The footprint baseline: the smallest tokio TCP client that does what kseek's probe
//! (`examples/seek_read_commit.rs`) does around its Kafka logic, so that the size difference
//! between the two binaries is kseek's own.
//!
//! ```text
//! cargo run --example tcp_baseline -- <bootstrap>
//! ```
//!
//! Same runtime as the probe (tokio's current-thread runtime with IO and time drivers) and the
//! same tokio features (those kseek enables). It connects under a timeout, spawns a task that
//! writes one Kafka ApiVersions v0 request (hand-encoded) and reads the size-prefixed reply,
//! and prints the reply's size and correlation id. `KSEEK_BOOTSTRAP` stands in for a missing
//! argument.

use std::process::ExitCode;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// ApiVersions v0: size 15, api key 18, version 0, correlation id 1, client id "probe".
const REQUEST: [u8; 19] = [
    0, 0, 0, 15, 0, 18, 0, 0, 0, 0, 0, 1, 0, 5, b'p', b'r', b'o', b'b', b'e',
];

fn main() -> ExitCode {
    let Some(bootstrap) = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("KSEEK_BOOTSTRAP").ok())
    else {
        eprintln!("usage: tcp_baseline <bootstrap> (or KSEEK_BOOTSTRAP)");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tcp_baseline: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(exchange(bootstrap)) {
        Ok((size, correlation_id)) => {
            println!("reply of {size} bytes, correlation id {correlation_id}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tcp_baseline: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Sends [`REQUEST`] to `broker` from a spawned task; returns the reply's size and
/// correlation id.
async fn exchange(broker: String) -> std::io::Result<(usize, i32)> {
    let timeout = Duration::from_secs(10);
    let task = tokio::spawn(async move {
        let mut stream = tokio::time::timeout(timeout, TcpStream::connect(&broker)).await??;
        stream.write_all(&REQUEST).await?;
        let mut size = [0u8; 4];
        tokio::time::timeout(timeout, stream.read_exact(&mut size)).await??;
        let mut reply = vec![0u8; u32::from_be_bytes(size).min(1 << 20) as usize];
        tokio::time::timeout(timeout, stream.read_exact(&mut reply)).await??;
        let id = reply
            .get(..4)
            .map_or(-1, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        Ok::<_, std::io::Error>((reply.len(), id))
    });
    task.await.map_err(std::io::Error::other)?
}

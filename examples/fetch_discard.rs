//! The fetch-and-discard baseline (`benches/e2e`, BENCHMARKS.md "End to end"): what the
//! broker and loopback deliver to kseek's own [`Connection`] when nothing is decoded.
//!
//! ```text
//! cargo run --release --example fetch_discard -- <bootstrap> <topic> [in-flight [codec]]
//! ```
//!
//! It resolves the topic from the earliest offset to the latest, as `kseek read` does, and
//! sends the Fetch requests the read engine sends: the negotiated version (12 when a topic
//! has no id), every partition a broker leads in one request, `max_bytes`,
//! `partition_max_bytes`, `max_wait` and `min_bytes` from [`ReadOptions::default`]. Of each
//! answer it reads only the record batch headers (base offset and last offset delta) to know
//! where the next Fetch starts, and drops the rest undecoded: no CRC check, no records.
//!
//! `in-flight` (default 1, kseek's behaviour today) splits every partition's offset range into
//! that many consecutive lanes of equal length, each fetched by its own loop on the same
//! connection, so up to `in-flight` Fetches per broker are outstanding at once: an upper bound
//! on what fetching ahead can buy. A lane's last answer may run past its end; those records
//! are not counted (they belong to the next lane), their bytes are (they crossed the socket).
//!
//! Prints one line: records, record-batch bytes received, Fetch requests, wall seconds.
//!
//! With `codec` after the in-flight count it is the codec's ceiling instead: it keeps every
//! record batch it fetched and, once all are in memory, decompresses the records section of each
//! with the codec crate kseek's default build uses (flate2, lz4_flex's frame decoder, ruzstd;
//! one call per batch into a reused buffer, no CRC, no record pass). The line then adds the
//! uncompressed bytes and `codec-seconds`, the time of the decompression alone: the fastest a
//! client decompressing with that crate on one core could go on this topic.

use std::collections::HashMap;
use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use kseek::protocol::messages::fetch::{FetchPartition, FetchRequest, FetchTopic};
use kseek::protocol::Uuid;
use kseek::{Connection, ConnectionConfig, End, ReadOptions, ReadSpec, Start};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(bootstrap), Some(topic)) = (args.next(), args.next()) else {
        eprintln!("usage: fetch_discard <bootstrap> <topic> [in-flight [codec]]");
        return ExitCode::from(2);
    };
    let in_flight = match args.next().map(|n| n.parse::<usize>()) {
        None => 1,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            eprintln!("fetch_discard: in-flight must be a positive integer");
            return ExitCode::from(2);
        }
    };
    let keep = match args.next().as_deref() {
        None => false,
        Some("codec") => true,
        Some(other) => {
            eprintln!("fetch_discard: unknown mode {other:?} (the only one is codec)");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fetch_discard: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(bootstrap, topic, in_flight, keep)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fetch_discard: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One partition's share of a lane: fetch from `position` until `end`.
#[derive(Debug, Clone)]
struct Range {
    topic: String,
    topic_id: Uuid,
    partition: i32,
    leader_epoch: i32,
    position: i64,
    end: i64,
}

/// What a lane fetched.
#[derive(Debug, Default)]
struct Totals {
    records: u64,
    bytes: u64,
    fetches: u64,
    /// The record bytes of every answer, in codec mode.
    kept: Vec<Bytes>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn run(
    bootstrap: String,
    topic: String,
    in_flight: usize,
    keep: bool,
) -> Result<(), BoxError> {
    let started = Instant::now();
    let client = kseek::Client::connect([bootstrap]).await?;
    let spec = ReadSpec::new([topic.clone()], Start::Earliest, End::Latest);
    let plan = client.resolve(&spec).await?;
    let cluster = client.cluster_metadata().await?;
    let meta = cluster
        .topics
        .iter()
        .find(|t| t.name == topic)
        .ok_or_else(|| format!("topic {topic} is not in the cluster metadata"))?;

    // Every leader's partitions, each split into `in_flight` consecutive lanes.
    let mut lanes: HashMap<i32, Vec<Vec<Range>>> = HashMap::new();
    for p in &plan.partitions {
        let end = p.end.ok_or("a partition without an end offset")?;
        let (leader, leader_epoch) = meta
            .partition(p.partition)
            .map(|m| (m.leader_id, m.leader_epoch))
            .filter(|&(id, _)| id >= 0)
            .ok_or_else(|| format!("{topic}[{}] has no leader", p.partition))?;
        let per_leader = lanes
            .entry(leader)
            .or_insert_with(|| vec![Vec::new(); in_flight]);
        let len = end - p.start;
        for (i, lane) in per_leader.iter_mut().enumerate() {
            let from = p.start + len * i as i64 / in_flight as i64;
            let to = p.start + len * (i as i64 + 1) / in_flight as i64;
            if from < to {
                lane.push(Range {
                    topic: p.topic.clone(),
                    topic_id: p.topic_id,
                    partition: p.partition,
                    leader_epoch,
                    position: from,
                    end: to,
                });
            }
        }
    }

    let options = ReadOptions::default();
    let config = client.config().connection.clone();
    let isolation = plan.isolation.0;
    let mut tasks = tokio::task::JoinSet::new();
    for (leader, leader_lanes) in lanes {
        let broker = cluster
            .brokers
            .iter()
            .find(|b| b.node_id == leader)
            .ok_or_else(|| format!("leader {leader} is not in the cluster metadata"))?;
        let conn =
            Arc::new(connect(&format!("{}:{}", broker.host, broker.port), config.clone()).await?);
        for lane in leader_lanes.into_iter().filter(|l| !l.is_empty()) {
            let conn = conn.clone();
            let options = options.clone();
            tasks.spawn(async move { fetch_lane(&conn, lane, &options, isolation, keep).await });
        }
    }
    let mut totals = Totals::default();
    while let Some(lane) = tasks.join_next().await {
        let lane = lane??;
        totals.records += lane.records;
        totals.bytes += lane.bytes;
        totals.fetches += lane.fetches;
        totals.kept.extend(lane.kept);
    }
    let seconds = started.elapsed().as_secs_f64();
    print!(
        "records {} bytes {} fetches {} in-flight {in_flight} seconds {seconds:.3}",
        totals.records, totals.bytes, totals.fetches,
    );
    if keep {
        let started = Instant::now();
        let mut uncompressed = 0;
        let mut out = Vec::new();
        for records in &totals.kept {
            uncompressed += decompress_all(records, &mut out)?;
        }
        let codec_seconds = started.elapsed().as_secs_f64();
        print!(" uncompressed {uncompressed} codec-seconds {codec_seconds:.3}");
    }
    println!();
    Ok(())
}

/// Decompresses the records section of every complete batch in `records` with the codec
/// crate itself, into `out` (reused); returns the uncompressed bytes. Batches overlap between
/// answers only past a lane's end, and codec mode runs with one lane.
fn decompress_all(records: &[u8], out: &mut Vec<u8>) -> Result<u64, BoxError> {
    let mut total = 0;
    for batch in whole_batches(records) {
        let batch = batch?;
        // Attributes at byte 21, the records section after the 61-byte header.
        let attributes = i16::from_be_bytes(batch[21..23].try_into()?);
        let section = &batch[61..];
        out.clear();
        match attributes & 7 {
            0 => out.extend_from_slice(section),
            1 => {
                flate2::bufread::GzDecoder::new(section).read_to_end(out)?;
            }
            3 => {
                lz4_flex::frame::FrameDecoder::new(section).read_to_end(out)?;
            }
            4 => {
                let mut input = section;
                ruzstd::decoding::StreamingDecoder::new(&mut input)?.read_to_end(out)?;
            }
            codec => return Err(format!("codec {codec}: no ceiling measured here").into()),
        }
        total += out.len() as u64;
    }
    Ok(total)
}

async fn connect(broker: &str, config: ConnectionConfig) -> kseek::Result<Connection> {
    Connection::connect(broker, config).await
}

/// Fetches every range of `lane` to its end, one Fetch at a time, discarding the records.
async fn fetch_lane(
    conn: &Connection,
    mut lane: Vec<Range>,
    options: &ReadOptions,
    isolation: i8,
    keep: bool,
) -> Result<Totals, BoxError> {
    let negotiated = conn.versions().version_for::<FetchRequest>()?;
    let version = if negotiated >= 13 && lane.iter().any(|r| r.topic_id.is_zero()) {
        12
    } else {
        negotiated
    };
    let max_wait_ms = i32::try_from(
        options
            .max_wait
            .min(ConnectionConfig::default().request_timeout / 2)
            .as_millis(),
    )
    .unwrap_or(i32::MAX);
    let mut totals = Totals::default();
    while lane.iter().any(|r| r.position < r.end) {
        let request = fetch_request(&lane, version, options, max_wait_ms, isolation);
        let response = conn.send_version(&request, version).await?;
        totals.fetches += 1;
        if response.error_code != 0 {
            return Err(format!("Fetch failed with error code {}", response.error_code).into());
        }
        for topic in response.responses {
            for data in topic.partitions {
                let Some(range) = lane.iter_mut().find(|r| {
                    r.partition == data.partition_index
                        && if version >= 13 {
                            r.topic_id == topic.topic_id
                        } else {
                            r.topic == topic.topic
                        }
                }) else {
                    continue;
                };
                if data.error_code != 0 {
                    return Err(format!(
                        "{}[{}] at {}: error code {}",
                        range.topic, range.partition, range.position, data.error_code
                    )
                    .into());
                }
                let records = data.records.unwrap_or_default();
                totals.bytes += records.len() as u64;
                if keep {
                    totals.kept.push(records.clone());
                }
                match next_offset(&records)? {
                    Some(next) => {
                        totals.records += (next.min(range.end) - range.position).max(0) as u64;
                        range.position = next;
                    }
                    // Nothing complete came back: at the high watermark there is nothing
                    // more to wait for (the range ends before it); otherwise ask again.
                    None if data.high_watermark <= range.position => {
                        return Err(format!(
                            "{}[{}] ends at {} before the planned end {}",
                            range.topic, range.partition, data.high_watermark, range.end
                        )
                        .into());
                    }
                    None => {}
                }
            }
        }
    }
    Ok(totals)
}

/// The Fetch for the unfinished ranges of `lane`, as the read engine builds it.
fn fetch_request(
    lane: &[Range],
    version: i16,
    options: &ReadOptions,
    max_wait_ms: i32,
    isolation: i8,
) -> FetchRequest {
    let mut topics: Vec<FetchTopic> = Vec::new();
    for r in lane.iter().filter(|r| r.position < r.end) {
        let partition = FetchPartition {
            partition: r.partition,
            current_leader_epoch: if version >= 9 { r.leader_epoch } else { -1 },
            fetch_offset: r.position,
            partition_max_bytes: options.partition_max_bytes,
            ..FetchPartition::default()
        };
        match topics.iter_mut().find(|t| t.topic == r.topic) {
            Some(t) => t.partitions.push(partition),
            None => topics.push(FetchTopic {
                topic: r.topic.clone(),
                topic_id: r.topic_id,
                partitions: vec![partition],
                ..FetchTopic::default()
            }),
        }
    }
    FetchRequest {
        max_wait_ms,
        min_bytes: options.min_bytes,
        max_bytes: options.fetch_max_bytes,
        isolation_level: kseek::IsolationLevel(isolation),
        session_id: 0,
        session_epoch: -1,
        topics,
        ..FetchRequest::default()
    }
}

/// The offset after the last complete record batch in `records`, from the batch headers
/// alone (base offset at byte 0, batch length at 8, magic at 16, last offset delta at 23), or
/// `None` when not one batch is complete.
fn next_offset(records: &[u8]) -> Result<Option<i64>, BoxError> {
    let mut next = None;
    for batch in whole_batches(records) {
        let batch = batch?;
        let base = i64::from_be_bytes(batch[0..8].try_into()?);
        let last_delta = i32::from_be_bytes(batch[23..27].try_into()?);
        next = Some(base + i64::from(last_delta) + 1);
    }
    Ok(next)
}

/// The whole record batches at the start of `records`, each at least its 61-byte magic-2
/// header long (batch length at byte 8, magic at 16); a partial batch at the end (the broker
/// cut at partition_max_bytes) is left out.
fn whole_batches(records: &[u8]) -> impl Iterator<Item = Result<&[u8], BoxError>> {
    let mut rest = records;
    std::iter::from_fn(move || {
        let length = i32::from_be_bytes(rest.get(8..12)?.try_into().ok()?);
        let batch = match usize::try_from(length).ok().and_then(|l| l.checked_add(12)) {
            Some(size) if size >= 61 => rest.get(..size)?,
            _ => {
                rest = &[];
                return Some(Err(format!("a record batch of length {length}").into()));
            }
        };
        if batch[16] != 2 {
            rest = &[];
            return Some(Err(format!(
                "record batch magic {} (only magic 2 is read here)",
                batch[16]
            )
            .into()));
        }
        rest = &rest[batch.len()..];
        Some(Ok(batch))
    })
}

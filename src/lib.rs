//! kseek: a Kafka client for reading by time, written from the wire protocol up.
//!
//! A read is resolved once, up front, into a [`Plan`]: a start and an exclusive end offset for
//! every partition, which can be inspected before any record is fetched. A bounded read always
//! ends (empty ranges, transaction markers and compaction gaps included) and returns exactly
//! the records of its range; a timestamp after the newest record means "nothing to read", never
//! offset -1. Positions can be committed to a consumer group. The contract every one of these
//! promises comes from is `docs/reading-by-time.md` in the repository.
//!
//! # How the pieces fit
//!
//! ```text
//! ClientConfig ─► Client::with_config ─► Client
//! ReadSpec (topics, Start, End, IsolationLevel) ─► Client::resolve ─► Plan (a PartitionPlan each)
//! Plan + ReadOptions ─► Client::read ─► BatchStream  (FetchedBatch: Record<'_> views, zero-copy)
//!                                         └ .records() ─► RecordStream  (ReadRecord, owned handles)
//! stream.positions() ─► CommitOffset ─► Client::commit(group, ..)
//! ```
//!
//! - [`Client`] ([`ClientConfig`]) starts from bootstrap servers, keeps a metadata cache per
//!   topic and one [`Connection`] ([`ConnectionConfig`]) per broker, opened on first use.
//!   Retriable failures ([`Error::is_retriable`]) are retried with backoff until
//!   [`ClientConfig::retry_deadline`]. Cheap to clone.
//! - [`ReadSpec`] says what to read: topics (optionally some partitions), a [`Start`], an
//!   [`End`] and an [`IsolationLevel`]. Every position has a name ([`Start::Earliest`],
//!   [`End::Latest`], [`Start::Timestamp`], [`Start::MaxTimestamp`], [`Start::Committed`], ...);
//!   none is a ListOffsets sentinel.
//! - [`Client::resolve`] turns the spec into a [`Plan`], one [`PartitionPlan`] per partition,
//!   with the log start and last fetchable offsets it saw. Looking at it is a dry run; nothing
//!   has been fetched. The [`resolve`] module lists every decision it makes.
//! - [`Client::read`] reads a plan in a background task and hands out a [`BatchStream`];
//!   [`BatchStream::records`] turns it into a [`RecordStream`]. The [`read`] module says how a
//!   read ends, what it skips and what it retries; [`ReadOptions`] tunes it.
//! - Both streams report where each partition stands ([`PartitionPosition`]); those become
//!   [`CommitOffset`]s for [`Client::commit`], which commits without joining the group.
//!   [`Client::committed`] reads a group's offsets back.
//! - [`Client::topic_config`] describes a topic's configuration ([`TopicConfig`]): each entry's
//!   value and whether the topic sets it or inherits it.
//! - The wire format (messages, record batches, framing) is the [`protocol`] crate,
//!   `kseek-protocol`, which does no IO.
//!
//! # Two ways to take the records
//!
//! The convenient path is [`RecordStream`]: one [`ReadRecord`] at a time, with its topic,
//! partition, offset, timestamp, key, value and headers. Key and value are [`bytes::Bytes`]
//! handles into the fetched buffer (no copy); the headers are a small `Vec` per record.
//!
//! The fast path is [`BatchStream`]: one [`FetchedBatch`] per record batch, whose
//! [`records`](FetchedBatch::records) are [`Record`](protocol::records::Record) views borrowing
//! the batch's buffer: no allocation and no copy per record, the CRC checked once per batch
//! and a compressed batch decompressed once into one buffer. Records outside the plan's range
//! (before the start in the first batch, at or after the end in the last) are already dropped.
//! One `await` per batch, then a plain loop; `kseek read` prints this way.
//!
//! ```no_run
//! use kseek::{End, ReadOptions, ReadSpec, Start};
//!
//! # async fn fast(client: kseek::Client) -> kseek::Result<()> {
//! let plan = client
//!     .resolve(&ReadSpec::new(["events"], Start::Earliest, End::Latest))
//!     .await?;
//! let mut batches = client.read(plan, ReadOptions::default());
//! let mut bytes = 0;
//! while let Some(batch) = batches.next().await {
//!     let batch = batch?;
//!     for record in batch.records() {
//!         // `value()` borrows the fetched buffer: nothing is copied.
//!         bytes += record?.value().map_or(0, <[u8]>::len);
//!     }
//! }
//! // What to commit: batches.positions(), or batches.positions_within_last(..) after
//! // stopping inside a batch.
//! println!("{bytes} value bytes; resume from {:?}", batches.positions());
//! # Ok(())
//! # }
//! ```
//!
//! # Read a time window, then commit
//!
//! ```no_run
//! use kseek::{CommitOffset, End, ReadOptions, ReadSpec, Start};
//!
//! # async fn window() -> kseek::Result<()> {
//! let client = kseek::Client::connect(["localhost:9092"]).await?;
//! let (ten, five_past) = (1_767_261_600_000, 1_767_261_900_000); // 10:00 and 10:05 UTC
//! let spec = ReadSpec::new(["events"], Start::Timestamp(ten), End::Timestamp(five_past));
//! let plan = client.resolve(&spec).await?; // inspect it: plan.partitions, plan.max_records()
//! let mut records = client.read(plan, ReadOptions::default()).records();
//! while let Some(record) = records.next().await {
//!     let record = record?;
//!     println!("{}@{} {:?}", record.partition, record.offset, record.value);
//! }
//! let commits: Vec<CommitOffset> = records.positions().into_iter().map(Into::into).collect();
//! client.commit("my-group", &commits).await?;
//! # Ok(())
//! # }
//! ```
//!
//! `tests/quickstart.rs` runs this same code against real Kafka 4.4 and 3.9 brokers.
//!
//! # Settings
//!
//! [`ClientConfig`], [`ConnectionConfig`], [`ReadSpec`] and [`ReadOptions`] may gain fields, so
//! they are built from their constructor or `Default` and builder-style setters:
//!
//! ```
//! use std::time::Duration;
//! use kseek::{ClientConfig, End, IsolationLevel, ReadOptions, ReadSpec, Start};
//!
//! let config = ClientConfig::new(["kafka-1:9092"])
//!     .connect_timeout(Duration::from_secs(3))
//!     .request_timeout(Duration::from_secs(10));
//! let spec = ReadSpec::new(["events"], Start::Latest, End::Unbounded)
//!     .isolation(IsolationLevel::READ_COMMITTED);
//! let options = ReadOptions::default().max_wait(Duration::from_millis(100));
//! # let _ = (config, spec, options);
//! ```
//!
//! # Features
//!
//! `gzip`, `snappy`, `lz4` and `zstd` (on by default) decode compressed batches, `zstd-c` uses
//! the C libzstd instead; `tracing` (on by default) logs retries, closes and data loss; `group`
//! (on by default) reads and commits consumer group offsets ([`Client::commit`],
//! [`Client::committed`], [`Start::Committed`], [`End::Committed`]; without it a read that
//! names a group is an [`ErrorKind::Config`] error); `tls` and `sasl` (off by default) reach
//! secured clusters. The `kseek` command line tool is its own crate, `kseek-cli`.
//!
//! The wire format lives in [`kseek_protocol`], re-exported here as [`protocol`].

pub use kseek_protocol as protocol;

mod backoff;
mod client;
mod few;
mod log;
mod log_sizes;
mod task;

pub mod cluster;
pub mod conn;
pub mod error;
#[cfg(feature = "group")]
pub mod group;
pub mod plan;
pub mod position;
pub mod properties;
pub mod read;
pub mod resolve;
#[cfg(feature = "sasl")]
pub mod sasl;
pub mod security;
#[cfg(test)]
mod sim;
#[cfg(feature = "tls")]
mod tls;
pub mod topic_config;

pub use client::{Client, ClientConfig};
pub use cluster::{BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata};
pub use conn::{Connection, ConnectionConfig};
pub use error::{Error, ErrorKind, Result};
#[cfg(feature = "group")]
pub use group::{CommitOffset, CommittedOffset};
pub use plan::{Adjusted, End, IsolationLevel, PartitionPlan, Plan, ReadSpec, Start, TimestampMs};
pub use read::{
    BatchStream, FetchedBatch, PartitionPosition, ReadOptions, ReadRecord, RecordStream,
};
pub use security::{SaslConfig, SecurityConfig, SecurityProtocol, TlsConfig, TlsVersions};
pub use topic_config::{TopicConfig, TopicConfigEntry};

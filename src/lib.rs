//! kseek: a Kafka client for reading by time, written from the wire protocol up.
//!
//! A read is resolved once, up front, into a [`Plan`]: a start and an exclusive end offset for
//! every partition, which can be inspected before any record is fetched. A bounded read always
//! ends (empty ranges, transaction markers and compaction gaps included) and returns exactly
//! the records of its range; a timestamp after the newest record means "nothing to read", never
//! offset -1. Positions can be committed to a consumer group.
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
//! The wire format lives in [`kseek_protocol`], re-exported here as [`protocol`].

pub use kseek_protocol as protocol;

mod backoff;
mod client;
mod log;

pub mod cluster;
pub mod conn;
pub mod error;
pub mod group;
pub mod plan;
pub mod read;
pub mod resolve;
pub mod security;
#[cfg(test)]
mod sim;

pub use client::{Client, ClientConfig};
pub use cluster::{BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata};
pub use conn::{Connection, ConnectionConfig};
pub use error::{Error, Result};
pub use group::{CommitOffset, CommittedOffset};
pub use plan::{End, IsolationLevel, PartitionPlan, Plan, ReadSpec, Start, TimestampMs};
pub use read::{
    BatchStream, FetchedBatch, PartitionPosition, ReadOptions, ReadRecord, RecordStream,
};
pub use security::{SaslConfig, SecurityConfig, SecurityProtocol, TlsConfig};

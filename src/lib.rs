//! kseek: a Kafka client for reading by time, written from the wire protocol up.
//!
//! The wire format lives in [`kseek_protocol`], re-exported here as [`protocol`].

pub use kseek_protocol as protocol;

pub mod cluster;
pub mod conn;
pub mod error;
pub mod group;
pub mod plan;
pub mod read;
pub mod resolve;

pub use cluster::{Client, ClientConfig, PartitionMetadata, TopicMetadata};
pub use conn::{Connection, ConnectionConfig};
pub use error::{Error, Result};
pub use group::{CommitOffset, CommittedOffset};
pub use plan::{End, IsolationLevel, PartitionPlan, Plan, ReadSpec, Start, TimestampMs};
pub use read::{BatchStream, FetchedBatch, ReadOptions, ReadRecord, RecordStream};

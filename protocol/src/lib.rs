//! The Kafka wire protocol for kseek, with no IO.
//!
//! This crate turns bytes into typed messages and back: primitives, request and response
//! headers, framing, the seven APIs a reader by time needs (ApiVersions, Metadata,
//! ListOffsets, Fetch, OffsetCommit, OffsetFetch, FindCoordinator), error codes and record
//! batches. It owns no sockets, no runtime and no clock; the `kseek` crate does the IO.
//!
//! Decoding is hostile-input safe: every length is checked against the bytes present before
//! anything is allocated, no input can make a decoder panic or loop, and trailing bytes after a
//! message are an error.
//!
//! # References
//! <https://kafka.apache.org/protocol>, and Kafka's JSON message schemas (4.2.1).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod api_key;
pub mod error;
pub mod error_code;
pub mod frame;
pub mod header;
pub mod messages;
pub mod negotiate;
pub mod primitives;
pub mod records;

pub use api_key::ApiKey;
pub use error::{Error, Result};
pub use error_code::ErrorCode;
pub use frame::{split_frame, FrameStatus};
pub use header::{RequestHeader, ResponseHeader};
pub use messages::{decode_exact, IsolationLevel, Message, Request, VersionRange};
pub use primitives::Uuid;

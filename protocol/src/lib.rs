//! The Kafka wire protocol for kseek, with no IO.
//!
//! This crate turns bytes into typed messages and back: primitives, request and response
//! headers, framing, the seven APIs a reader by time needs (ApiVersions, Metadata,
//! ListOffsets, Fetch, OffsetCommit, OffsetFetch, FindCoordinator), the two of SASL
//! authentication (SaslHandshake, SaslAuthenticate), DescribeLogDirs (log sizes, to cut a plan
//! into splits by bytes), DescribeConfigs (a topic's configuration), error codes and record
//! batches. It owns
//! no sockets, no runtime and no clock; the `kseek` crate does the IO.
//!
//! Decoding is hostile-input safe: every length is checked against the bytes present before
//! anything is allocated, no input can make a decoder panic or loop, and trailing bytes after a
//! message are an error.
//!
//! # How the pieces fit
//!
//! From the bottom up:
//! - [`primitives`]: Kafka's types on the wire (fixed-width integers, varints, strings, bytes,
//!   arrays in their classic and compact forms, UUIDs, tagged fields), each decoder naming the
//!   field it reads in its errors.
//! - [`frame`]: a pure framing function, [`split_frame`], that returns a whole size-prefixed
//!   frame or "need more bytes", refusing a frame larger than the caller's limit before reading
//!   it; [`header`] has the request and response headers.
//! - [`messages`]: one module per API. Each type implements [`Message`] (its API key, the
//!   versions this crate speaks, the first flexible version; encode and decode at any of them,
//!   exactly as Kafka's JSON schemas say) and each request implements [`Request`], which names
//!   its response type so an answer can't be decoded with the wrong decoder. The structs are
//!   declared once, each field with the versions that carry it (`since(6).ignorable()`,
//!   `.tagged(0)`, `.nullable_from(10)`, as the schemas say), and their encoders, decoders and
//!   smallest sizes follow from that declaration (the crate-private `messages::codec`).
//!   [`decode_exact`] refuses trailing bytes; `messages::encode_request_frame` writes a whole
//!   request frame.
//! - [`negotiate`]: choosing a version per API from a broker's ApiVersions answer.
//! - [`records`]: record batches (magic 2, and the legacy magic 0 and 1 message sets),
//!   decompression, transaction filtering and fetch positions, zero-copy.
//! - [`ErrorCode`] and [`ApiKey`]: open newtypes over the wire's integers, so an unknown code or
//!   key survives decoding and prints its number; [`Error`] is this crate's own error.
//!
//! # A request and its answer
//!
//! ```
//! use bytes::BytesMut;
//! use kseek_protocol::messages::encode_request_frame;
//! use kseek_protocol::messages::metadata::MetadataRequest;
//! use kseek_protocol::{decode_exact, split_frame, Message, Request, RequestHeader};
//!
//! // What a client writes: a Metadata v12 request for one topic, with its size prefix.
//! let request = MetadataRequest::for_topics(["events"]);
//! let mut wire = BytesMut::new();
//! encode_request_frame(&mut wire, 7, Some("kseek"), 12, &request)?;
//!
//! // What a broker reads back from the same bytes: a whole frame, then header and body.
//! let mut frame = split_frame(&mut wire, 1 << 20)?.expect("a whole frame");
//! let header = RequestHeader::decode(&mut frame, MetadataRequest::request_header_version(12))?;
//! assert_eq!((header.api_key, header.correlation_id), (MetadataRequest::API_KEY.0, 7));
//! let decoded: MetadataRequest = decode_exact(frame, 12)?;
//! assert_eq!(decoded, request);
//! # Ok::<(), kseek_protocol::Error>(())
//! ```
//!
//! # Record batches: views, not copies
//!
//! A Fetch response's records stay one [`bytes::Bytes`]: [`records::Batches`] splits it into
//! batches without copying (checking each CRC), and a batch's records are
//! [`records::Record`] views whose key, value and headers borrow that buffer (or one
//! decompressed buffer per compressed batch): nothing is allocated per record.
//! [`records::PartitionReader`] adds what a consumer needs on top (the fetch position, an end
//! offset, aborted transactions); [`records::OwnedRecord`] is the copy for callers who want
//! one. The [`records`] module has a worked example.
//!
//! # References
//! <https://kafka.apache.org/protocol>, and Kafka's JSON message schemas (4.2.1).
// No unsafe code, but for one module: the SSE 4.2 CRC-32C of `records::crc32`, which calls
// functions needing CPU features after detecting them (`records::crc32c`).
#![deny(unsafe_code)]
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
pub use frame::{check_frame, split_frame, FrameStatus};
pub use header::{RequestHeader, ResponseHeader};
pub use messages::{decode_exact, IsolationLevel, Message, Request, VersionRange};
pub use primitives::Uuid;

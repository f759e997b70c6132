//! Splits: units of a read that another process, or another machine, can run.
//!
//! A [`Split`] is one partition's offset range of a resolved [`Plan`], with everything needed
//! to read it the same way elsewhere: the partition's plan (topic, its id, partition, start and
//! end offsets, the leader epoch and log start it was resolved with), the plan's isolation
//! level, the exact-time bounds of the read ([`TimeFilter`]), and the client settings that are
//! not secrets (bootstrap servers, client id, timeouts and the retry schedule). TLS and SASL
//! settings stay with each worker, which passes its own [`ClientConfig`] to [`read_split`].
//!
//! A split serialises to JSON ([`Split::to_json`]) and to compact bytes ([`Split::to_bytes`],
//! postcard with a version byte in front), so a driver can hand it to a worker; both decoders
//! refuse bad input with a [`SplitError`] and never allocate more than the input justifies.
//! Reading every split of a plan, in any order and in any process, gives exactly the records
//! of reading the whole plan (see [`kseek::Plan::splits`]).

use std::time::Duration;

use kseek::read::{ReadOptions, TimeFilter};
use kseek::{Client, ClientConfig, IsolationLevel, PartitionPlan, Plan};
use serde::{Deserialize, Serialize};

use crate::{ArrowStream, BatchLimits};

/// The version byte in front of [`Split::to_bytes`].
const BYTES_VERSION: u8 = 1;

/// One partition's offset range of a resolved [`Plan`], with everything needed to read it the
/// same way in another process or on another machine.
///
/// It holds the partition's plan (topic, its id, partition, start and end offsets, the leader
/// epoch and log start it was resolved with), the plan's isolation level, the exact-time
/// bounds of the read ([`TimeFilter`]), and the client settings that are not secrets
/// ([`SplitClient`]). TLS and SASL settings stay with each worker, which passes its own
/// [`ClientConfig`] to [`read_split`]. It serialises to JSON ([`Split::to_json`]) and to
/// compact bytes ([`Split::to_bytes`]); both decoders refuse bad input with a [`SplitError`]
/// and allocate no more than the input justifies. Reading every split of a plan, in any
/// order and in any process, gives exactly the records of reading the whole plan (see
/// [`kseek::Plan::splits`]).
///
/// ```
/// use kseek_arrow::Split;
///
/// let line = r#"{"topic":"events","topic_id":"","partition":0,"start":0,"end":100,
///   "log_start_offset":0,"last_fetchable_offset":100,"leader_epoch":-1,
///   "read_committed":false,"time_start":null,"time_end":null,
///   "client":{"bootstrap":["localhost:9092"],"client_id":"kseek","connect_timeout_ms":10000,
///   "request_timeout_ms":30000,"retry_backoff_ms":100,"retry_backoff_max_ms":1000,
///   "retry_deadline_ms":30000}}"#;
/// let split = Split::from_json(line).unwrap();
/// assert_eq!(Split::from_bytes(&split.to_bytes()).unwrap(), split);
/// assert_eq!(split.plan().unwrap().max_records(), Some(100));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Split {
    /// The topic.
    pub topic: String,
    /// The topic's id as 32 hex digits; empty when the cluster has none (before Kafka 2.8).
    #[serde(default)]
    pub topic_id: String,
    /// The partition.
    pub partition: i32,
    /// The first offset to read.
    pub start: i64,
    /// The first offset not to read; `None` for an unbounded split (a read that follows the
    /// log).
    pub end: Option<i64>,
    /// The partition's log start when the plan was resolved.
    pub log_start_offset: i64,
    /// The last offset that could be read when the plan was resolved (the high watermark, or
    /// the last stable offset under read_committed).
    pub last_fetchable_offset: i64,
    /// The leader epoch the plan was resolved with (-1 when unknown).
    pub leader_epoch: i32,
    /// `true` for read_committed.
    pub read_committed: bool,
    /// The exact-time filter's lowest timestamp kept (ms, inclusive), if any.
    pub time_start: Option<i64>,
    /// The exact-time filter's first timestamp dropped (ms, exclusive), if any.
    pub time_end: Option<i64>,
    /// The client settings that are not secrets.
    pub client: SplitClient,
}

/// The client settings a [`Split`] carries (no secrets): they override a worker's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitClient {
    /// Bootstrap servers, `host:port`.
    pub bootstrap: Vec<String>,
    /// The client id sent with every request.
    pub client_id: String,
    /// [`kseek::ConnectionConfig::connect_timeout`], in ms.
    pub connect_timeout_ms: u64,
    /// [`kseek::ConnectionConfig::request_timeout`], in ms.
    pub request_timeout_ms: u64,
    /// [`ClientConfig::retry_backoff`], in ms.
    pub retry_backoff_ms: u64,
    /// [`ClientConfig::retry_backoff_max`], in ms.
    pub retry_backoff_max_ms: u64,
    /// [`ClientConfig::retry_deadline`], in ms.
    pub retry_deadline_ms: u64,
}

/// Why a split could not be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// The JSON is not a split.
    #[error("not a kseek split (JSON): {0}")]
    Json(#[from] serde_json::Error),
    /// The bytes are not a split.
    #[error("not a kseek split (bytes): {0}")]
    Bytes(String),
    /// The fields decode but do not make a split.
    #[error("not a valid kseek split: {0}")]
    Invalid(String),
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 16]> {
    if text.len() != 32 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl Split {
    /// The splits of `plan` (see [`kseek::Plan::splits`]: at most `max_offsets` offsets each),
    /// to be read with `config`'s non-secret settings and, when given, the exact-time `filter`.
    pub fn of_plan(
        plan: &Plan,
        max_offsets: u64,
        config: &ClientConfig,
        filter: Option<TimeFilter>,
    ) -> Vec<Split> {
        Split::of_plans(&plan.splits(max_offsets), config, filter)
    }

    /// One split per partition of each of `plans` (the pieces of a plan cut by
    /// [`kseek::Plan::splits`], [`kseek::Plan::splits_by_bytes`] or both), to be read with
    /// `config`'s non-secret settings and, when given, the exact-time `filter`.
    pub fn of_plans(
        plans: &[Plan],
        config: &ClientConfig,
        filter: Option<TimeFilter>,
    ) -> Vec<Split> {
        let client = SplitClient {
            bootstrap: config.bootstrap.clone(),
            client_id: config.connection.client_id.clone(),
            connect_timeout_ms: millis(config.connection.connect_timeout),
            request_timeout_ms: millis(config.connection.request_timeout),
            retry_backoff_ms: millis(config.retry_backoff),
            retry_backoff_max_ms: millis(config.retry_backoff_max),
            retry_deadline_ms: millis(config.retry_deadline),
        };
        let mut splits = Vec::new();
        for plan in plans {
            for p in &plan.partitions {
                splits.push(Split {
                    topic_id: if p.topic_id.is_zero() {
                        String::new()
                    } else {
                        hex(&p.topic_id.0)
                    },
                    topic: p.topic.clone(),
                    partition: p.partition,
                    start: p.start,
                    end: p.end,
                    log_start_offset: p.log_start_offset,
                    last_fetchable_offset: p.last_fetchable_offset,
                    leader_epoch: p.leader_epoch,
                    read_committed: plan.isolation == IsolationLevel::READ_COMMITTED,
                    time_start: filter.and_then(|f| f.start),
                    time_end: filter.and_then(|f| f.end),
                    client: client.clone(),
                });
            }
        }
        splits
    }

    /// The one-partition plan this split reads.
    ///
    /// # Errors
    /// [`SplitError::Invalid`] for a topic id that is not 32 hex digits, a negative
    /// partition or start, or an end before the start.
    pub fn plan(&self) -> Result<Plan, SplitError> {
        let topic_id = if self.topic_id.is_empty() {
            kseek::protocol::Uuid::ZERO
        } else {
            let id = unhex(&self.topic_id).ok_or_else(|| {
                SplitError::Invalid(format!("topic id {:?} is not 32 hex digits", self.topic_id))
            })?;
            kseek::protocol::Uuid(id)
        };
        if self.partition < 0 || self.start < 0 {
            return Err(SplitError::Invalid(format!(
                "partition {} from offset {}: both must be 0 or more",
                self.partition, self.start
            )));
        }
        if self.end.is_some_and(|end| end < self.start) {
            return Err(SplitError::Invalid(format!(
                "end offset {:?} is before start offset {}",
                self.end, self.start
            )));
        }
        let partition = PartitionPlan {
            topic: self.topic.clone(),
            topic_id,
            partition: self.partition,
            start: self.start,
            end: self.end,
            log_start_offset: self.log_start_offset,
            last_fetchable_offset: self.last_fetchable_offset,
            leader_epoch: self.leader_epoch,
            adjusted: None,
        };
        Ok(Plan {
            partitions: vec![partition],
            isolation: if self.read_committed {
                IsolationLevel::READ_COMMITTED
            } else {
                IsolationLevel::READ_UNCOMMITTED
            },
        })
    }

    /// The exact-time filter of the read, if it had one.
    pub fn time_filter(&self) -> Option<TimeFilter> {
        (self.time_start.is_some() || self.time_end.is_some())
            .then(|| TimeFilter::new(self.time_start, self.time_end))
    }

    /// `base` (a worker's own settings: TLS, SASL and the rest) with this split's bootstrap
    /// servers, client id, timeouts and retry schedule.
    pub fn client_config(&self, mut base: ClientConfig) -> ClientConfig {
        let c = &self.client;
        base.bootstrap = c.bootstrap.clone();
        base.connection.client_id = c.client_id.clone();
        base.connection.connect_timeout = Duration::from_millis(c.connect_timeout_ms);
        base.connection.request_timeout = Duration::from_millis(c.request_timeout_ms);
        base.retry_backoff = Duration::from_millis(c.retry_backoff_ms);
        base.retry_backoff_max = Duration::from_millis(c.retry_backoff_max_ms);
        base.retry_deadline = Duration::from_millis(c.retry_deadline_ms);
        base
    }

    /// The split as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a split is plain data")
    }

    /// A split from [`Split::to_json`]'s JSON.
    ///
    /// # Errors
    /// [`SplitError::Json`] for anything else (an unknown field included), and
    /// [`SplitError::Invalid`] as [`Split::plan`].
    pub fn from_json(json: &str) -> Result<Split, SplitError> {
        let split: Split = serde_json::from_str(json)?;
        split.plan()?;
        Ok(split)
    }

    /// The split as compact bytes: a version byte, then postcard.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![BYTES_VERSION];
        out.extend(postcard::to_allocvec(self).expect("a split is plain data"));
        out
    }

    /// A split from [`Split::to_bytes`]' bytes.
    ///
    /// # Errors
    /// [`SplitError::Bytes`] for another version, truncated or trailing bytes, and
    /// [`SplitError::Invalid`] as [`Split::plan`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Split, SplitError> {
        let Some((&version, rest)) = bytes.split_first() else {
            return Err(SplitError::Bytes("empty".to_owned()));
        };
        if version != BYTES_VERSION {
            return Err(SplitError::Bytes(format!(
                "version {version}, this kseek reads version {BYTES_VERSION}"
            )));
        }
        let (split, unused): (Split, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| SplitError::Bytes(e.to_string()))?;
        if !unused.is_empty() {
            return Err(SplitError::Bytes(format!(
                "{} bytes after the split",
                unused.len()
            )));
        }
        split.plan()?;
        Ok(split)
    }
}

/// Reads `split` as Arrow record batches within `limits`, connecting with `base` (the
/// worker's own settings: TLS, SASL) under the split's non-secret ones, fetching with
/// `options` (the split's exact-time bounds, if it has any, replace their time filter).
///
/// # Errors
/// A split that is not valid ([`kseek::ErrorKind::InvalidSpec`]), or connecting to the
/// cluster failed.
pub async fn read_split(
    split: &Split,
    base: ClientConfig,
    mut options: ReadOptions,
    limits: BatchLimits,
) -> kseek::Result<ArrowStream> {
    let plan = split.plan().map_err(|e| {
        kseek::Error::from(kseek::ErrorKind::InvalidSpec {
            reason: e.to_string(),
        })
    })?;
    let client = Client::with_config(split.client_config(base)).await?;
    if let Some(filter) = split.time_filter() {
        options = options.time_filter(filter);
    }
    Ok(ArrowStream::new(client.read(plan, options), limits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split() -> Split {
        Split {
            topic: "events".to_owned(),
            topic_id: "000102030405060708090a0b0c0d0e0f".to_owned(),
            partition: 3,
            start: 100,
            end: Some(250),
            log_start_offset: 7,
            last_fetchable_offset: 900,
            leader_epoch: 4,
            read_committed: true,
            time_start: Some(1_767_261_600_000),
            time_end: None,
            client: SplitClient {
                bootstrap: vec!["a:9092".to_owned(), "b:9092".to_owned()],
                client_id: "worker".to_owned(),
                connect_timeout_ms: 10_000,
                request_timeout_ms: 30_000,
                retry_backoff_ms: 100,
                retry_backoff_max_ms: 1_000,
                retry_deadline_ms: 30_000,
            },
        }
    }

    #[test]
    fn a_split_round_trips_through_json_and_bytes() {
        let s = split();
        assert_eq!(Split::from_json(&s.to_json()).unwrap(), s);
        let bytes = s.to_bytes();
        assert!(bytes.len() < s.to_json().len() / 2, "{} bytes", bytes.len());
        assert_eq!(Split::from_bytes(&bytes).unwrap(), s);
        let plan = s.plan().unwrap();
        assert_eq!(plan.isolation, IsolationLevel::READ_COMMITTED);
        let p = &plan.partitions[0];
        assert_eq!((p.partition, p.start, p.end), (3, 100, Some(250)));
        assert_eq!(p.topic_id.0[15], 15);
        assert_eq!(
            s.time_filter(),
            Some(TimeFilter::new(Some(1_767_261_600_000), None))
        );
        let config = s.client_config(ClientConfig::new(["ignored:1"]));
        assert_eq!(config.bootstrap, ["a:9092", "b:9092"]);
        assert_eq!(config.connection.client_id, "worker");
    }

    #[test]
    fn bad_splits_are_refused_with_a_reason() {
        let json = split().to_json();
        for (bad, why) in [
            (
                json.replace("\"partition\":3", "\"partition\":-1"),
                "0 or more",
            ),
            (json.replace("\"end\":250", "\"end\":50"), "before start"),
            (json.replace("0e0f", "0e0"), "32 hex digits"),
            (json.replace("\"start\"", "\"begin\""), "unknown field"),
            ("[]".to_owned(), "kseek split"),
        ] {
            let e = Split::from_json(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let bytes = split().to_bytes();
        assert!(Split::from_bytes(&[])
            .unwrap_err()
            .to_string()
            .contains("empty"));
        let mut other = bytes.clone();
        other[0] = 9;
        assert!(Split::from_bytes(&other)
            .unwrap_err()
            .to_string()
            .contains("version 9"));
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert!(Split::from_bytes(&trailing)
            .unwrap_err()
            .to_string()
            .contains("after"));
        // Every truncation, and every byte flipped, is an error or another valid split,
        // never a panic.
        for len in 0..bytes.len() {
            assert!(Split::from_bytes(&bytes[..len]).is_err(), "{len}");
        }
        for i in 1..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 0xff;
            let _ = Split::from_bytes(&flipped);
        }
    }

    #[test]
    fn a_length_in_the_bytes_allocates_no_more_than_the_bytes_hold() {
        // The topic's length said to be 2^32 - 1 with 3 bytes behind it.
        let bytes = [
            BYTES_VERSION,
            0xff,
            0xff,
            0xff,
            0xff,
            0x0f,
            b'a',
            b'b',
            b'c',
        ];
        assert!(Split::from_bytes(&bytes).is_err());
    }
}

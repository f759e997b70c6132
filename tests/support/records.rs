//! What the tests hand Kafka's Java client and get back from it: producer input and options,
//! records as stored or read, consumer options, offsets and commits.

use super::*;

/// One line of producer input: a record or a control operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    /// A record to send.
    Record(NewRecord),
    /// `beginTransaction()` (needs [`ProduceOptions::transactional_id`]).
    Begin,
    /// `commitTransaction()`.
    Commit,
    /// `flush()` then `abortTransaction()`: the aborted records are in the log.
    Abort,
    /// `flush()`.
    Flush,
}

impl Input {
    pub(super) fn to_json(&self) -> Value {
        match self {
            Input::Record(r) => r.to_json(),
            Input::Begin => json!({"txn": "begin"}),
            Input::Commit => json!({"txn": "commit"}),
            Input::Abort => json!({"txn": "abort"}),
            Input::Flush => json!({"flush": true}),
        }
    }
}

impl From<NewRecord> for Input {
    fn from(r: NewRecord) -> Input {
        Input::Record(r)
    }
}

/// A record to write; every field is optional (the producer picks partition and
/// timestamp when absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NewRecord {
    /// Target partition, or the producer's partitioner.
    pub(crate) partition: Option<i32>,
    /// Key bytes (`None`: a null key).
    pub(crate) key: Option<Vec<u8>>,
    /// Value bytes (`None`: a null value, a tombstone).
    pub(crate) value: Option<Vec<u8>>,
    /// Create time in milliseconds since the epoch, or the producer's clock.
    pub(crate) timestamp: Option<i64>,
    /// Headers in order; a `None` value is a null header value.
    pub(crate) headers: Vec<(String, Option<Vec<u8>>)>,
}

impl NewRecord {
    /// An empty record: null key, null value, no headers.
    pub(crate) fn new() -> NewRecord {
        NewRecord::default()
    }

    /// Sets the partition.
    pub(crate) fn partition(mut self, p: i32) -> NewRecord {
        self.partition = Some(p);
        self
    }

    /// Sets the key.
    pub(crate) fn key(mut self, k: impl AsRef<[u8]>) -> NewRecord {
        self.key = Some(k.as_ref().to_vec());
        self
    }

    /// Sets the value.
    pub(crate) fn value(mut self, v: impl AsRef<[u8]>) -> NewRecord {
        self.value = Some(v.as_ref().to_vec());
        self
    }

    /// Sets the create timestamp (ms).
    pub(crate) fn timestamp(mut self, ms: i64) -> NewRecord {
        self.timestamp = Some(ms);
        self
    }

    /// Appends a header.
    pub(crate) fn header(mut self, name: &str, value: Option<&[u8]>) -> NewRecord {
        self.headers
            .push((name.to_string(), value.map(<[u8]>::to_vec)));
        self
    }

    pub(super) fn to_json(&self) -> Value {
        let mut o = serde_json::Map::new();
        if let Some(p) = self.partition {
            o.insert("partition".into(), p.into());
        }
        if let Some(ts) = self.timestamp {
            o.insert("timestamp".into(), ts.into());
        }
        o.insert("key".into(), bytes_to_json(self.key.as_deref()));
        o.insert("value".into(), bytes_to_json(self.value.as_deref()));
        o.insert("headers".into(), headers_to_json(&self.headers));
        Value::Object(o)
    }
}

/// Settings of the Java producer.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProduceOptions {
    /// `compression.type`: none, gzip, snappy, lz4 or zstd.
    pub(crate) compression: Option<String>,
    /// `batch.size` in bytes.
    pub(crate) batch_size: Option<u32>,
    /// `linger.ms`.
    pub(crate) linger_ms: Option<u32>,
    /// `transactional.id`: makes the producer transactional.
    pub(crate) transactional_id: Option<String>,
    /// `acks`: all (default), 1 or 0.
    pub(crate) acks: Option<String>,
}

/// A record as the broker stored it or a consumer read it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Record {
    /// Partition.
    pub(crate) partition: i32,
    /// Offset in the partition.
    pub(crate) offset: i64,
    /// Timestamp (create time, or the broker's log append time on such topics).
    pub(crate) timestamp: i64,
    /// Key, `None` when null.
    pub(crate) key: Option<Vec<u8>>,
    /// Value, `None` when null.
    pub(crate) value: Option<Vec<u8>>,
    /// Headers in order.
    pub(crate) headers: Vec<(String, Option<Vec<u8>>)>,
}

impl From<&kseek::ReadRecord> for Record {
    /// What kseek handed out, in the form the producer and the Java consumer report.
    fn from(r: &kseek::ReadRecord) -> Record {
        Record {
            partition: r.partition,
            offset: r.offset,
            timestamp: r.timestamp,
            key: r.key.as_ref().map(|b| b.to_vec()),
            value: r.value.as_ref().map(|b| b.to_vec()),
            headers: r
                .headers
                .iter()
                .map(|h| {
                    (
                        String::from_utf8(h.key.to_vec()).expect("UTF-8 header name"),
                        h.value.as_ref().map(|v| v.to_vec()),
                    )
                })
                .collect(),
        }
    }
}

impl Record {
    pub(super) fn from_json(v: &Value) -> Record {
        let headers = v["headers"]
            .as_array()
            .map(|hs| {
                hs.iter()
                    .map(|h| {
                        let name = h[0].as_str().expect("header name is a string").to_string();
                        (name, bytes_from_json(&h[1]))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Record {
            partition: int(v, "partition") as i32,
            offset: int(v, "offset"),
            timestamp: int(v, "timestamp"),
            key: bytes_from_json(&v["key"]),
            value: bytes_from_json(&v["value"]),
            headers,
        }
    }

    /// The value as UTF-8 text (panics otherwise; for assertions).
    pub(crate) fn value_str(&self) -> Option<&str> {
        self.value
            .as_deref()
            .map(|v| std::str::from_utf8(v).expect("value is UTF-8"))
    }
}

/// A record written by [`Broker::produce_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    /// The record as stored.
    pub(crate) record: Record,
    /// Whether its transaction was aborted (it is in the log, but not committed).
    pub(crate) aborted: bool,
}

/// Transaction isolation of a read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// Everything up to the high watermark, aborted records included.
    #[default]
    ReadUncommitted,
    /// Up to the last stable offset, without aborted records.
    ReadCommitted,
}

impl Isolation {
    pub(super) fn arg(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read_uncommitted",
            Isolation::ReadCommitted => "read_committed",
        }
    }
}

/// Settings of the Java consumer.
#[derive(Clone, Debug, Default)]
pub(crate) struct ConsumeOptions {
    /// Consumer group: start from its committed offsets (else from the beginning).
    pub(crate) group: Option<String>,
    /// Isolation level.
    pub(crate) isolation: Isolation,
    /// Only these partitions (empty: all).
    pub(crate) partitions: Vec<i32>,
    /// Start at the first offset whose timestamp is at least this (offsetsForTimes).
    pub(crate) from_timestamp: Option<i64>,
    /// Stop after this many records instead of at the end offsets.
    pub(crate) expect: Option<u64>,
    /// Commit the final positions to [`ConsumeOptions::group`].
    pub(crate) commit: bool,
    /// Give up after this long (default 30 s).
    pub(crate) timeout_ms: Option<u64>,
}

/// What [`Broker::list_offsets`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OffsetQuery {
    /// The log start offset.
    Earliest,
    /// The end offset (high watermark, or last stable offset under read_committed).
    Latest,
    /// The offset of the record with the largest timestamp.
    MaxTimestamp,
    /// The first offset whose timestamp is at least this many ms since the epoch.
    Timestamp(i64),
}

/// One partition's answer from [`Broker::list_offsets`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PartitionOffset {
    /// Partition.
    pub(crate) partition: i32,
    /// Offset; -1 when no record matches a timestamp query.
    pub(crate) offset: i64,
    /// The matched record's timestamp, -1 for earliest/latest.
    pub(crate) timestamp: i64,
}

/// One partition's committed offset from [`Broker::describe_group`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommittedOffset {
    /// Topic.
    pub(crate) topic: String,
    /// Partition.
    pub(crate) partition: i32,
    /// Committed offset, `None` if there is none.
    pub(crate) offset: Option<i64>,
    /// Commit metadata string.
    pub(crate) metadata: Option<String>,
    /// The partition's current end offset.
    pub(crate) log_end_offset: i64,
}

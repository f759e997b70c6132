//! Kafka records read by [kseek] as Apache Arrow record batches.
//!
//! One schema for a Kafka record, the same wherever kseek hands out columns (the command
//! line's Parquet and Arrow IPC output, SQL, Python, Spark), with the names and types of
//! Spark's Kafka source so its users recognise them ([`schema`]):
//!
//! | column | Arrow type | nullable | what |
//! |---|---|---|---|
//! | `key` | `Binary` | yes | the record's key; null when the record has none |
//! | `value` | `Binary` | yes | the record's value; null for a tombstone |
//! | `topic` | `Utf8` | no | the topic |
//! | `partition` | `Int32` | no | the partition |
//! | `offset` | `Int64` | no | the record's offset |
//! | `timestamp` | `Timestamp(Microsecond, "UTC")` | no | the record's timestamp (Kafka's milliseconds × 1000) |
//! | `timestampType` | `Int32` | no | 0 CreateTime, 1 LogAppendTime, -1 none (magic 0 messages), as Spark's |
//! | `headers` | `List<Struct<key: Utf8, value: Binary>>` | no | the headers in order; a header's value may be null |
//!
//! The timestamp is in microseconds, UTC: Spark's `TimestampType` and DataFusion read it
//! without a cast. A record without a timestamp (legacy magic 0 messages: -1 ms) is -1000 µs,
//! as the Java client's -1, never made up. Header keys are Kafka strings; a key that is not
//! UTF-8 is converted as Java's `new String(bytes, UTF_8)` does, with U+FFFD for each invalid
//! sequence.
//!
//! # Building batches without a copy per record
//!
//! [`RecordBatchBuilder`] appends the records of kseek's [`FetchedBatch`]es, which are views
//! into the fetched buffer, straight into Arrow's buffers: per column one offsets buffer and
//! one values buffer that grow by bulk copies, no `Vec` or `String` per record. A batch is
//! finished when it reaches a target number of rows or of key, value and header bytes
//! ([`BatchLimits`]), so memory is bounded by those targets whatever the size of the window.
//! [`ArrowStream`] does this over a read's [`BatchStream`].
//!
//! ```no_run
//! use kseek::{End, ReadOptions, ReadSpec, Start};
//! use kseek_arrow::{ArrowStream, BatchLimits};
//!
//! # async fn example(client: kseek::Client) -> kseek::Result<()> {
//! let spec = ReadSpec::new(["events"], Start::Timestamp(1_764_460_800_000), End::Latest);
//! let plan = client.resolve(&spec).await?;
//! let mut batches = ArrowStream::new(client.read(plan, ReadOptions::default()), BatchLimits::default());
//! while let Some(batch) = batches.next().await {
//!     let batch = batch?;
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # References
//! Spark's Kafka source schema: <https://spark.apache.org/docs/latest/structured-streaming-kafka-integration.html>;
//! the Arrow columnar format: <https://arrow.apache.org/docs/format/Columnar.html>.
//!
//! [kseek]: https://docs.rs/kseek

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use arrow_array::{
    ArrayRef, BinaryArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use futures_core::Stream;
use kseek::protocol::records::{Record, TimestampType};
use kseek::{BatchStream, FetchedBatch};

mod split;
pub use split::{read_split, Split, SplitClient, SplitError};

/// The Kafka record schema (see the [crate documentation](crate)); one shared instance.
pub fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            Arc::new(Schema::new(vec![
                Field::new("key", DataType::Binary, true),
                Field::new("value", DataType::Binary, true),
                Field::new("topic", DataType::Utf8, false),
                Field::new("partition", DataType::Int32, false),
                Field::new("offset", DataType::Int64, false),
                Field::new("timestamp", timestamp_type(), false),
                Field::new("timestampType", DataType::Int32, false),
                Field::new("headers", DataType::List(header_item()), false),
            ]))
        })
        .clone()
}

/// `timestamp`'s type: microseconds since the epoch, UTC.
pub fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The fields of one header: `key` (UTF-8) and `value` (binary, nullable).
fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Binary, true),
    ])
}

/// The list item of `headers`: a non-null struct of [`header_fields`].
fn header_item() -> Arc<Field> {
    Arc::new(Field::new(
        "element",
        DataType::Struct(header_fields()),
        false,
    ))
}

/// When a record batch is finished: at `rows` rows, or once its key, value and header bytes
/// reach `bytes`, whichever comes first (a single record larger than `bytes` still makes a
/// batch of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchLimits {
    /// The most rows in one record batch.
    pub rows: usize,
    /// The key, value and header bytes after which a record batch is finished.
    pub bytes: usize,
}

impl Default for BatchLimits {
    /// 8192 rows (DataFusion's default batch size) or 8 MiB.
    fn default() -> Self {
        BatchLimits {
            rows: 8192,
            bytes: 8 << 20,
        }
    }
}

impl BatchLimits {
    /// Limits of `rows` rows and `bytes` bytes, each at least 1.
    pub fn new(rows: usize, bytes: usize) -> Self {
        BatchLimits {
            rows: rows.max(1),
            bytes: bytes.max(1),
        }
    }
}

/// A variable-length binary column being built: offsets, bytes, and validity.
#[derive(Debug, Default)]
struct ByteColumn {
    offsets: Vec<i32>,
    data: Vec<u8>,
    valid: Vec<bool>,
    nulls: usize,
}

impl ByteColumn {
    fn with_capacity(rows: usize, bytes: usize) -> ByteColumn {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        ByteColumn {
            offsets,
            data: Vec::with_capacity(bytes),
            valid: Vec::with_capacity(rows),
            nulls: 0,
        }
    }

    fn push(&mut self, value: Option<&[u8]>) {
        if let Some(v) = value {
            self.data.extend_from_slice(v);
        } else {
            self.nulls += 1;
        }
        self.valid.push(value.is_some());
        self.offsets.push(offset_at(self.data.len()));
    }

    /// The column so far as (offsets, values, nulls); empty again, with as much room.
    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer, Option<NullBuffer>) {
        let rows = self.valid.len();
        let next = ByteColumn::with_capacity(rows, self.data.len());
        let ByteColumn {
            offsets,
            data,
            valid,
            nulls,
        } = std::mem::replace(self, next);
        let nulls = (nulls > 0).then(|| NullBuffer::from(valid));
        (
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(data),
            nulls,
        )
    }

    fn binary(&mut self) -> BinaryArray {
        let (offsets, values, nulls) = self.take();
        BinaryArray::new(offsets, values, nulls)
    }

    fn utf8(&mut self) -> StringArray {
        let (offsets, values, nulls) = self.take();
        // Only `&str`s are pushed into the UTF-8 columns.
        StringArray::new(offsets, values, nulls)
    }
}

/// An Arrow 32-bit offset: a record batch's column holds less than 2 GiB, which
/// [`BatchLimits::bytes`] keeps it under unless one record alone is that large.
fn offset_at(len: usize) -> i32 {
    i32::try_from(len).expect("a record batch column holds less than 2 GiB")
}

/// Appends Kafka records to Arrow columns, and finishes them into [`RecordBatch`]es of the
/// [`schema`] within [`BatchLimits`].
///
/// Each column is plain vectors (offsets, bytes, values, validity) that the records' fields
/// are copied into, turned into Arrow arrays without a copy at [`finish`](Self::finish).
#[derive(Debug)]
pub struct RecordBatchBuilder {
    limits: BatchLimits,
    key: ByteColumn,
    value: ByteColumn,
    topic: ByteColumn,
    partition: Vec<i32>,
    offset: Vec<i64>,
    timestamp: Vec<i64>,
    timestamp_type: Vec<i32>,
    /// Per row, where its headers end in `header_keys` / `header_values`.
    header_offsets: Vec<i32>,
    header_keys: ByteColumn,
    header_values: ByteColumn,
    bytes: usize,
}

impl RecordBatchBuilder {
    /// An empty builder that finishes batches at `limits`.
    pub fn new(limits: BatchLimits) -> Self {
        // Room for a first batch of up to 1024 rows; later batches start with the room the
        // previous one ended with (see `finish`), so buffers stop growing by copies.
        let rows = limits.rows.min(1024);
        RecordBatchBuilder {
            limits,
            key: ByteColumn::with_capacity(rows, 0),
            value: ByteColumn::with_capacity(rows, 0),
            topic: ByteColumn::with_capacity(rows, 0),
            partition: Vec::with_capacity(rows),
            offset: Vec::with_capacity(rows),
            timestamp: Vec::with_capacity(rows),
            timestamp_type: Vec::with_capacity(rows),
            header_offsets: vec![0],
            header_keys: ByteColumn::with_capacity(rows, 0),
            header_values: ByteColumn::with_capacity(rows, 0),
            bytes: 0,
        }
    }

    /// The rows appended since the last [`RecordBatchBuilder::finish`].
    pub fn len(&self) -> usize {
        self.offset.len()
    }

    /// Whether no row was appended since the last [`RecordBatchBuilder::finish`].
    pub fn is_empty(&self) -> bool {
        self.offset.is_empty()
    }

    /// Whether the rows appended reach a limit: time to [`finish`](Self::finish).
    pub fn is_full(&self) -> bool {
        self.len() >= self.limits.rows || self.bytes >= self.limits.bytes
    }

    /// Appends the records of `batch` after its first `skip` ones, until the builder
    /// [`is_full`](Self::is_full) or the batch ends. Returns `None` when that was the rest of
    /// the batch, or `Some(next)`: the `skip` to continue with after
    /// [`finish`](Self::finish).
    ///
    /// # Errors
    /// A record that can't be decoded ([`kseek::ErrorKind::CorruptRecords`]): the rows of
    /// this batch appended before it stay, so a caller that stops here keeps what was read.
    pub fn append(&mut self, batch: &FetchedBatch, skip: usize) -> kseek::Result<Option<usize>> {
        self.append_records(
            batch.topic(),
            batch.partition(),
            batch.timestamp_type(),
            batch.records(),
            skip,
        )
    }

    /// [`append`](Self::append) for records from elsewhere (a record batch decoded with
    /// `kseek-protocol`, say): the records of one partition of `topic`, with their batch's
    /// timestamp type, each a zero-copy view. Stops at the first error, returning it.
    ///
    /// # Errors
    /// The first error `records` yields; the rows before it stay appended.
    pub fn append_records<'a, E>(
        &mut self,
        topic: &str,
        partition: i32,
        timestamp_type: TimestampType,
        records: impl Iterator<Item = Result<Record<'a>, E>>,
        skip: usize,
    ) -> Result<Option<usize>, E> {
        let timestamp_type = match timestamp_type {
            TimestampType::CreateTime => 0,
            TimestampType::LogAppendTime => 1,
            _ => -1,
        };
        for (at, record) in (skip..).zip(records.skip(skip)) {
            if self.is_full() {
                return Ok(Some(at));
            }
            let record = record?;
            let (key, value) = (record.key(), record.value());
            self.key.push(key);
            self.value.push(value);
            self.topic.push(Some(topic.as_bytes()));
            self.partition.push(partition);
            self.offset.push(record.offset());
            self.timestamp.push(record.timestamp().saturating_mul(1000));
            self.timestamp_type.push(timestamp_type);
            let mut bytes = key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len);
            for header in record.headers() {
                let (name, value) = (header.key(), header.value());
                bytes += name.len() + value.map_or(0, <[u8]>::len);
                match std::str::from_utf8(name) {
                    Ok(name) => self.header_keys.push(Some(name.as_bytes())),
                    Err(_) => self
                        .header_keys
                        .push(Some(String::from_utf8_lossy(name).as_bytes())),
                }
                self.header_values.push(value);
            }
            self.header_offsets
                .push(offset_at(self.header_keys.valid.len()));
            self.bytes += bytes;
        }
        Ok(None)
    }

    /// The rows appended so far as one [`RecordBatch`] of the [`schema`]; the builder is
    /// empty again, with room for as much.
    pub fn finish(&mut self) -> RecordBatch {
        let rows = self.len();
        let items = StructArray::new(
            header_fields(),
            vec![
                Arc::new(self.header_keys.utf8()) as ArrayRef,
                Arc::new(self.header_values.binary()),
            ],
            None,
        );
        let mut header_offsets = Vec::with_capacity(rows + 1);
        header_offsets.push(0);
        let header_offsets = std::mem::replace(&mut self.header_offsets, header_offsets);
        let headers = ListArray::new(
            header_item(),
            OffsetBuffer::new(ScalarBuffer::from(header_offsets)),
            Arc::new(items),
            None,
        );
        let take = |v: &mut Vec<i64>| std::mem::replace(v, Vec::with_capacity(rows));
        let take32 = |v: &mut Vec<i32>| std::mem::replace(v, Vec::with_capacity(rows));
        let timestamp =
            TimestampMicrosecondArray::new(ScalarBuffer::from(take(&mut self.timestamp)), None)
                .with_timezone("UTC");
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.key.binary()),
            Arc::new(self.value.binary()),
            Arc::new(self.topic.utf8()),
            Arc::new(Int32Array::new(
                ScalarBuffer::from(take32(&mut self.partition)),
                None,
            )),
            Arc::new(Int64Array::new(
                ScalarBuffer::from(take(&mut self.offset)),
                None,
            )),
            Arc::new(timestamp),
            Arc::new(Int32Array::new(
                ScalarBuffer::from(take32(&mut self.timestamp_type)),
                None,
            )),
            Arc::new(headers),
        ];
        self.bytes = 0;
        RecordBatch::try_new(schema(), columns)
            .expect("every column is built to the schema with one entry per row")
    }
}

/// The records of a read as Arrow [`RecordBatch`]es of the [`schema`], each within
/// [`BatchLimits`]: a [`Stream`] of `kseek::Result<RecordBatch>`, also with an inherent
/// [`ArrowStream::next`].
///
/// Record batches follow the read's order: the records of one partition in offset order,
/// partitions interleaved as the read hands them out. The stream ends after the read's last
/// batch (never for an unbounded read, though batches keep coming) or after the first error;
/// the rows appended before an error come first, as a last batch.
#[derive(Debug)]
pub struct ArrowStream {
    batches: BatchStream,
    builder: RecordBatchBuilder,
    /// A fetched batch only partly appended, and how many of its records were.
    pending: Option<(FetchedBatch, usize)>,
    /// The error to hand out after the rows before it.
    failed: Option<kseek::Error>,
    done: bool,
}

impl ArrowStream {
    /// Record batches of `batches` (a [`kseek::Client::read`]) within `limits`.
    pub fn new(batches: BatchStream, limits: BatchLimits) -> Self {
        ArrowStream {
            batches,
            builder: RecordBatchBuilder::new(limits),
            pending: None,
            failed: None,
            done: false,
        }
    }

    /// The next record batch; `None` once the read has ended.
    pub async fn next(&mut self) -> Option<kseek::Result<RecordBatch>> {
        poll_fn(|cx| self.poll_batch(cx)).await
    }

    /// The read underneath, for its data-loss reports and positions. Its positions count
    /// every fetched batch this stream has taken, rows still waiting in the builder included:
    /// they are what to commit once this stream has ended, not before.
    pub fn batch_stream(&self) -> &BatchStream {
        &self.batches
    }

    fn poll_batch(&mut self, cx: &mut Context<'_>) -> Poll<Option<kseek::Result<RecordBatch>>> {
        loop {
            if let Some((batch, skip)) = self.pending.take() {
                match self.builder.append(&batch, skip) {
                    Ok(Some(next)) => self.pending = Some((batch, next)),
                    Ok(None) => {}
                    Err(e) => {
                        self.failed = Some(e);
                        self.done = true;
                    }
                }
            }
            if self.builder.is_full() || (self.done && !self.builder.is_empty()) {
                return Poll::Ready(Some(Ok(self.builder.finish())));
            }
            if self.done {
                return Poll::Ready(self.failed.take().map(Err));
            }
            match Pin::new(&mut self.batches).poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => self.pending = Some((batch, 0)),
                Poll::Ready(Some(Err(e))) => {
                    self.failed = Some(e);
                    self.done = true;
                }
                Poll::Ready(None) => self.done = true,
                // Nothing more for now: hand out what there is rather than wait with it.
                Poll::Pending if !self.builder.is_empty() => {
                    return Poll::Ready(Some(Ok(self.builder.finish())));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Stream for ArrowStream {
    type Item = kseek::Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_batch(cx)
    }
}

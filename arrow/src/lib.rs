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
use arrow_buffer::{Buffer, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
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
    /// 8192 rows (DataFusion's default batch size) or 1 MiB. A batch's columns then fit in a
    /// core's L2 cache while they are built, and the memory freed with one batch serves the
    /// next: with 1 KiB values, building took 2.1 ms per 8 MiB of batches at an 8 MiB limit
    /// and 0.95 ms at 1 MiB (`cargo bench -p kseek-arrow --bench to_arrow`, BENCHMARKS.md).
    fn default() -> Self {
        BatchLimits {
            rows: 8192,
            bytes: 1 << 20,
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

/// A variable-length binary column being built: offsets, bytes, and validity (a bitmap made
/// only once a null comes).
#[derive(Debug)]
struct ByteColumn {
    offsets: Vec<i32>,
    data: Vec<u8>,
    nulls: NullBufferBuilder,
}

impl ByteColumn {
    fn with_capacity(rows: usize, bytes: usize) -> ByteColumn {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        ByteColumn {
            offsets,
            data: Vec::with_capacity(bytes),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    #[inline(always)]
    fn push(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => {
                self.data.extend_from_slice(v);
                self.nulls.append_non_null();
            }
            None => self.nulls.append_null(),
        }
        self.offsets.push(offset_at(self.data.len()));
    }

    /// The rows pushed so far.
    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The column so far as (offsets, values, nulls); empty again, with as much room.
    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer, Option<NullBuffer>) {
        let next = ByteColumn::with_capacity(self.len(), self.data.len());
        let ByteColumn {
            offsets,
            data,
            mut nulls,
        } = std::mem::replace(self, next);
        (
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(data),
            nulls.finish(),
        )
    }

    fn binary(&mut self) -> BinaryArray {
        let (offsets, values, nulls) = self.take();
        BinaryArray::new(offsets, values, nulls)
    }

    /// The column as UTF-8 strings: checked in one pass over its bytes; when some are not
    /// UTF-8 (a header key that a producer wrote so), each string is converted as Java's
    /// `new String(bytes, UTF_8)` does, with U+FFFD for each invalid sequence.
    fn utf8(&mut self) -> StringArray {
        let (offsets, values, nulls) = self.take();
        match StringArray::try_new(offsets.clone(), values.clone(), nulls.clone()) {
            Ok(strings) => strings,
            Err(_) => {
                let binary = BinaryArray::new(offsets, values, nulls);
                binary
                    .iter()
                    .map(|v| v.map(String::from_utf8_lossy))
                    .collect()
            }
        }
    }
}

/// An Arrow 32-bit offset: a record batch's column holds less than 2 GiB, which
/// [`BatchLimits::bytes`] keeps it under unless one record alone is that large.
#[inline]
fn offset_at(len: usize) -> i32 {
    i32::try_from(len).expect("a record batch column holds less than 2 GiB")
}

/// Rows in a row that share their topic, partition and timestamp type (those of one fetched
/// batch, or of several in a row from one partition): the three columns are filled from these
/// at [`RecordBatchBuilder::finish`], not per record.
#[derive(Debug)]
struct Run {
    topic: String,
    partition: i32,
    timestamp_type: i32,
    rows: usize,
}

/// Appends Kafka records to Arrow columns, and finishes them into [`RecordBatch`]es of the
/// [`schema`] within [`BatchLimits`].
///
/// Each column is plain vectors (offsets, bytes, values) that the records' fields are copied
/// into, turned into Arrow arrays without a copy at [`finish`](Self::finish); the columns that
/// are the same for a whole fetched batch (topic, partition, timestamp type) are kept as runs
/// and filled in at `finish`.
#[derive(Debug)]
pub struct RecordBatchBuilder {
    limits: BatchLimits,
    key: ByteColumn,
    value: ByteColumn,
    runs: Vec<Run>,
    offset: Vec<i64>,
    timestamp: Vec<i64>,
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
            runs: Vec::new(),
            offset: Vec::with_capacity(rows),
            timestamp: Vec::with_capacity(rows),
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
        let before = self.len();
        let mut outcome = Ok(None);
        for (at, record) in (skip..).zip(records.skip(skip)) {
            if self.is_full() {
                outcome = Ok(Some(at));
                break;
            }
            let record = match record {
                Ok(record) => record,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            };
            self.push(&record);
        }
        self.extend_run(topic, partition, timestamp_type, self.len() - before);
        outcome
    }

    /// One record's key, value, offset, timestamp and headers.
    #[inline]
    fn push(&mut self, record: &Record<'_>) {
        let (key, value) = (record.key(), record.value());
        self.key.push(key);
        self.value.push(value);
        self.offset.push(record.offset());
        self.timestamp.push(record.timestamp().saturating_mul(1000));
        let mut bytes = key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len);
        for header in record.headers() {
            let (name, value) = (header.key(), header.value());
            bytes += name.len() + value.map_or(0, <[u8]>::len);
            // Checked as UTF-8 once for the whole column, at `finish`.
            self.header_keys.push(Some(name));
            self.header_values.push(value);
        }
        self.header_offsets.push(offset_at(self.header_keys.len()));
        self.bytes += bytes;
    }

    /// Counts `rows` more rows of `topic`, `partition` and `timestamp_type`.
    fn extend_run(&mut self, topic: &str, partition: i32, timestamp_type: i32, rows: usize) {
        if rows == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some(run)
                if run.partition == partition
                    && run.timestamp_type == timestamp_type
                    && run.topic == topic =>
            {
                run.rows += rows;
            }
            _ => self.runs.push(Run {
                topic: topic.to_owned(),
                partition,
                timestamp_type,
                rows,
            }),
        }
    }

    /// The `topic`, `partition` and `timestampType` columns from the runs, which are emptied.
    fn run_columns(&mut self) -> (StringArray, Int32Array, Int32Array) {
        let rows = self.len();
        let bytes = self.runs.iter().map(|r| r.topic.len() * r.rows).sum();
        let mut topics = ByteColumn::with_capacity(rows, bytes);
        let mut partitions = Vec::with_capacity(rows);
        let mut types = Vec::with_capacity(rows);
        for run in self.runs.drain(..) {
            for _ in 0..run.rows {
                topics.data.extend_from_slice(run.topic.as_bytes());
                topics.offsets.push(offset_at(topics.data.len()));
            }
            topics.nulls.append_n_non_nulls(run.rows);
            partitions.extend(std::iter::repeat_n(run.partition, run.rows));
            types.extend(std::iter::repeat_n(run.timestamp_type, run.rows));
        }
        (
            topics.utf8(),
            Int32Array::new(ScalarBuffer::from(partitions), None),
            Int32Array::new(ScalarBuffer::from(types), None),
        )
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
        let (topic, partition, timestamp_type) = self.run_columns();
        let take = |v: &mut Vec<i64>| std::mem::replace(v, Vec::with_capacity(rows));
        let timestamp =
            TimestampMicrosecondArray::new(ScalarBuffer::from(take(&mut self.timestamp)), None)
                .with_timezone("UTC");
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.key.binary()),
            Arc::new(self.value.binary()),
            Arc::new(topic),
            Arc::new(partition),
            Arc::new(Int64Array::new(
                ScalarBuffer::from(take(&mut self.offset)),
                None,
            )),
            Arc::new(timestamp),
            Arc::new(timestamp_type),
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
    /// The bytes of the Kafka record batches taken from the read so far.
    fetched_bytes: u64,
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
            fetched_bytes: 0,
        }
    }

    /// The bytes of the Kafka record batches (as fetched: compressed, headers included) this
    /// stream has taken from the read so far.
    pub fn fetched_bytes(&self) -> u64 {
        self.fetched_bytes
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
                Poll::Ready(Some(Ok(batch))) => {
                    self.fetched_bytes += batch.batch().size_in_bytes() as u64;
                    self.pending = Some((batch, 0));
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use bytes::Bytes;
    use kseek::protocol::records::{
        Batches, DecodeOptions, NewRecord, RecordBatchBuilder as Encoder,
    };

    /// A record batch from `base` with one record per entry of `records`, 1 s apart.
    fn wire(base: i64, records: Vec<NewRecord>) -> Bytes {
        let mut batch = Encoder::new(base, 1_767_261_600_000);
        for r in records {
            batch.push(r);
        }
        batch.build().unwrap()
    }

    /// Appends every record of `wire` as `partition` of `topic`, finishing a record batch
    /// whenever the builder is full; returns the finished ones.
    fn append(
        builder: &mut RecordBatchBuilder,
        topic: &str,
        partition: i32,
        wire: Bytes,
    ) -> Vec<RecordBatch> {
        let mut done = Vec::new();
        for batch in Batches::new(wire, DecodeOptions::default()) {
            let batch = batch.unwrap();
            let records = batch.records().unwrap();
            let mut skip = 0;
            while let Some(next) = builder
                .append_records(
                    topic,
                    partition,
                    batch.timestamp_type(),
                    records.iter(),
                    skip,
                )
                .unwrap()
            {
                done.push(builder.finish());
                skip = next;
            }
        }
        done
    }

    fn strings(batch: &RecordBatch, column: &str) -> Vec<String> {
        let c = batch.column_by_name(column).unwrap();
        let c = c.as_any().downcast_ref::<StringArray>().unwrap();
        c.iter().map(|v| v.unwrap().to_owned()).collect()
    }

    fn ints(batch: &RecordBatch, column: &str) -> Vec<i64> {
        let c = batch.column_by_name(column).unwrap();
        if let Some(c) = c.as_any().downcast_ref::<Int32Array>() {
            return c.values().iter().map(|&v| i64::from(v)).collect();
        }
        let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
        c.values().to_vec()
    }

    #[test]
    fn rows_keep_each_fetched_batch_s_topic_partition_nulls_and_headers() {
        let mut builder = RecordBatchBuilder::new(BatchLimits::new(1000, 1 << 20));
        let first = wire(
            5,
            vec![
                NewRecord::new(0, 0).key("k0").value("v0").header("h", "x"),
                // No key, and a tombstone; a header key that is not UTF-8 and a null header.
                NewRecord::new(1, 1000)
                    .header(b"a\xffb", "y")
                    .null_header("n"),
            ],
        );
        let second = wire(40, vec![NewRecord::new(0, 2000).key("k2").value("v2")]);
        assert!(append(&mut builder, "orders", 3, first).is_empty());
        assert!(append(&mut builder, "payments", 0, second).is_empty());
        let batch = builder.finish();
        assert_eq!(batch.schema(), schema());
        assert_eq!(strings(&batch, "topic"), ["orders", "orders", "payments"]);
        assert_eq!(ints(&batch, "partition"), [3, 3, 0]);
        assert_eq!(ints(&batch, "offset"), [5, 6, 40]);
        assert_eq!(ints(&batch, "timestampType"), [0, 0, 0]);
        let ts = batch.column_by_name("timestamp").unwrap();
        let ts = ts
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        assert_eq!(ts.value(1) - ts.value(0), 1_000_000);
        let key = batch.column_by_name("key").unwrap();
        let key = key.as_any().downcast_ref::<BinaryArray>().unwrap();
        assert_eq!(
            key.iter().collect::<Vec<_>>(),
            [Some(&b"k0"[..]), None, Some(b"k2")]
        );
        let value = batch.column_by_name("value").unwrap();
        let value = value.as_any().downcast_ref::<BinaryArray>().unwrap();
        assert_eq!(value.null_count(), 1);
        let headers = batch.column_by_name("headers").unwrap();
        let headers = headers.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(headers.value_offsets(), [0, 1, 3, 3]);
        let items = headers
            .values()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let keys = items
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(
            keys.iter().collect::<Vec<_>>(),
            [Some("h"), Some("a\u{fffd}b"), Some("n")]
        );
        let values = items
            .column(1)
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        assert_eq!(
            values.iter().collect::<Vec<_>>(),
            [Some(&b"x"[..]), Some(b"y"), None]
        );
        // Empty again, and the next batch starts clean.
        assert!(builder.is_empty());
        assert_eq!(builder.finish().num_rows(), 0);
    }

    #[test]
    fn batches_end_at_the_row_and_byte_limits_and_continue_where_they_stopped() {
        let records = |n: i32| {
            (0..n)
                .map(|i| NewRecord::new(i, i64::from(i)).value(vec![b'x'; 100]))
                .collect()
        };
        let mut by_rows = RecordBatchBuilder::new(BatchLimits::new(4, 1 << 20));
        let mut done = append(&mut by_rows, "t", 1, wire(0, records(10)));
        done.push(by_rows.finish());
        let sizes: Vec<usize> = done.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(sizes, [4, 4, 2]);
        let offsets: Vec<i64> = done.iter().flat_map(|b| ints(b, "offset")).collect();
        assert_eq!(offsets, (0..10).collect::<Vec<_>>());
        assert!(done
            .iter()
            .all(|b| ints(b, "partition").iter().all(|&p| p == 1)));
        // 250 bytes: a batch ends with the record that reaches them (three of 100 bytes).
        let mut by_bytes = RecordBatchBuilder::new(BatchLimits::new(1000, 250));
        let mut done = append(&mut by_bytes, "t", 1, wire(0, records(7)));
        done.push(by_bytes.finish());
        let sizes: Vec<usize> = done.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(sizes, [3, 3, 1]);
    }
}

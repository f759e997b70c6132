//! `kseek read --output-format parquet|arrow`: the records as typed columns (kseek-arrow's
//! schema, the one of Spark's Kafka source), to a Parquet file or an Arrow IPC stream.
//!
//! Records go from each fetched batch's zero-copy views into a [`RecordBatchBuilder`], and
//! from there, a record batch at a time, into the Parquet writer (which flushes a row group
//! whenever one reaches [`ROW_GROUP_BYTES`] or [`ROW_GROUP_ROWS`], so memory does not grow
//! with the window) or the IPC stream writer. A file is written under a temporary name
//! beside the final one and renamed only once it is complete; a read that fails removes it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::{Array, BinaryArray, RecordBatch};
use kseek::read::FetchedBatch;
use kseek_arrow::{BatchLimits, RecordBatchBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel};
use parquet::file::properties::WriterProperties;

use crate::decode::{OnDecodeError, ValueColumns};
use crate::output::Printed;

/// A Parquet row group is flushed once its encoded size reaches this.
const ROW_GROUP_BYTES: usize = 64 * 1024 * 1024;
/// ... or once it holds this many rows.
const ROW_GROUP_ROWS: usize = 1024 * 1024;

/// What `read` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Parquet,
    /// An Arrow IPC stream.
    Arrow,
}

/// Parquet's page compression (`--compression`): pure Rust codecs only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ParquetCompression {
    Snappy,
    Lz4,
    Gzip,
    None,
}

impl ParquetCompression {
    fn parquet(self) -> Compression {
        match self {
            ParquetCompression::Snappy => Compression::SNAPPY,
            ParquetCompression::Lz4 => Compression::LZ4_RAW,
            ParquetCompression::Gzip => Compression::GZIP(GzipLevel::default()),
            ParquetCompression::None => Compression::UNCOMPRESSED,
        }
    }
}

/// Where the bytes go: stdout, or a file being written under a temporary name.
enum Target {
    Stdout(BufWriter<io::Stdout>),
    File {
        file: BufWriter<File>,
        temporary: PathBuf,
        path: PathBuf,
    },
    /// Something that is not a regular file (`/dev/null`, a named pipe): written as it is.
    Special(BufWriter<File>),
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Target::Stdout(w) => w.write(buf),
            Target::File { file, .. } | Target::Special(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Target::Stdout(w) => w.flush(),
            Target::File { file, .. } | Target::Special(file) => file.flush(),
        }
    }
}

impl Target {
    /// Stdout for `None`; `path` itself when it exists and is not a regular file
    /// (`/dev/null`, a pipe: never replaced by a rename); else a new file beside `path` named
    /// `.<name>.kseek-<pid>.tmp`.
    fn open(path: Option<&Path>) -> io::Result<Target> {
        let Some(path) = path else {
            return Ok(Target::Stdout(BufWriter::new(io::stdout())));
        };
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            return Ok(Target::Special(BufWriter::new(file)));
        }
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("names a directory, not a file"))?;
        let mut hidden = std::ffi::OsString::from(".");
        hidden.push(name);
        hidden.push(format!(".kseek-{}.tmp", std::process::id()));
        let temporary = path.with_file_name(hidden);
        let file = File::create(&temporary)?;
        Ok(Target::File {
            file: BufWriter::new(file),
            temporary,
            path: path.to_owned(),
        })
    }

    /// Flushes, syncs a file to disk and gives it its final name.
    fn complete(self) -> io::Result<()> {
        match self {
            Target::Stdout(mut w) => w.flush(),
            Target::Special(mut w) => w.flush(),
            Target::File {
                file,
                temporary,
                path,
            } => {
                let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
                file.sync_all()?;
                std::fs::rename(&temporary, &path)
            }
        }
    }

    /// The temporary name of a file written under one.
    fn temporary(&self) -> Option<PathBuf> {
        match self {
            Target::File { temporary, .. } => Some(temporary.clone()),
            Target::Stdout(_) | Target::Special(_) => None,
        }
    }
}

/// The writer of one format.
enum Sink {
    Parquet(ArrowWriter<Target>),
    Arrow(arrow_ipc::writer::StreamWriter<Target>),
}

/// Writes record batches of one schema as Parquet or an Arrow IPC stream, to stdout or to a
/// file that gets its name once complete.
pub(crate) struct BatchWriter {
    sink: Option<Sink>,
    /// The file's temporary name, while it is written under one.
    temporary: Option<PathBuf>,
}

/// Writes the records of fetched batches as Parquet or an Arrow IPC stream.
pub(crate) struct TableWriter {
    builder: RecordBatchBuilder,
    /// `-s key=avro`, `-s value=avro`: the key and value columns decoded into struct columns.
    pub(crate) values: Vec<ValueColumns>,
    /// Records left out by `--on-decode-error skip`.
    pub(crate) skipped: u64,
    schema: arrow_schema::SchemaRef,
    out: BatchWriter,
    /// Key and value bytes of the rows handed to the sink.
    bytes: u64,
}

impl Drop for BatchWriter {
    /// A writer dropped before [`BatchWriter::finish`] completed the file (abandoned, or a
    /// panic) removes its temporary file.
    fn drop(&mut self) {
        if self.sink.take().is_some() {
            remove(self.temporary.as_deref());
        }
    }
}

/// Removes a file's temporary name, if it has one (a failure to remove it is left: the read's
/// own error is the one to report).
fn remove(temporary: Option<&Path>) {
    if let Some(temporary) = temporary {
        let _ = std::fs::remove_file(temporary);
    }
}

fn io_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// A Parquet writer's error as the I/O error it wraps, if it is one (so a full disk stays
/// `StorageFull` and a closed pipe `BrokenPipe`).
fn parquet_error(e: parquet::errors::ParquetError) -> io::Error {
    match e {
        parquet::errors::ParquetError::External(e) => match e.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(e) => io::Error::other(e),
        },
        other => io_error(other),
    }
}

/// An Arrow writer's error as the I/O error it wraps, if it is one (so a closed pipe stays
/// `BrokenPipe`: the read ends quietly, as for text).
fn arrow_error(e: arrow_schema::ArrowError) -> io::Error {
    match e {
        arrow_schema::ArrowError::IoError(_, e) => e,
        other => io_error(other),
    }
}

impl BatchWriter {
    /// A writer of `kind` to `path` (`None` for stdout) of batches with `schema`; Parquet
    /// pages compressed with `compression`.
    pub(crate) fn create(
        kind: Kind,
        path: Option<&Path>,
        compression: ParquetCompression,
        schema: &arrow_schema::SchemaRef,
    ) -> io::Result<BatchWriter> {
        let target = Target::open(path)?;
        let temporary = target.temporary();
        let sink = || -> io::Result<Sink> {
            Ok(match kind {
                Kind::Parquet => {
                    let properties = WriterProperties::builder()
                        .set_compression(compression.parquet())
                        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
                        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                        .build();
                    Sink::Parquet(
                        ArrowWriter::try_new(target, schema.clone(), Some(properties))
                            .map_err(parquet_error)?,
                    )
                }
                Kind::Arrow => Sink::Arrow(
                    arrow_ipc::writer::StreamWriter::try_new(target, schema)
                        .map_err(arrow_error)?,
                ),
            })
        };
        // Writing the format's header may fail already (a full disk).
        let sink = sink().inspect_err(|_| remove(temporary.as_deref()))?;
        Ok(BatchWriter {
            sink: Some(sink),
            temporary,
        })
    }

    /// Writes `batch` (Parquet gathers batches into row groups).
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        match self.sink.as_mut() {
            Some(Sink::Parquet(w)) => w.write(batch).map_err(parquet_error),
            Some(Sink::Arrow(w)) => w.write(batch).map_err(arrow_error),
            None => Ok(()),
        }
    }

    /// For an Arrow stream, writes out what was written so far.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        if let Some(Sink::Arrow(w)) = self.sink.as_mut() {
            w.flush().map_err(arrow_error)?;
        }
        Ok(())
    }

    /// Finishes the file or stream (Parquet's footer, the IPC end marker) and gives a file
    /// its final name. On a failure (a full disk at the last row group, the footer or the
    /// sync) the temporary file is removed.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        let done = self.complete();
        if done.is_err() {
            remove(self.temporary.as_deref());
        }
        done
    }

    fn complete(&mut self) -> io::Result<()> {
        let target = match self.sink.take() {
            Some(Sink::Parquet(w)) => w.into_inner().map_err(parquet_error)?,
            Some(Sink::Arrow(mut w)) => {
                w.finish().map_err(arrow_error)?;
                w.into_inner().map_err(arrow_error)?
            }
            None => return Ok(()),
        };
        target.complete()
    }
}

impl TableWriter {
    /// A writer of `kind` to `path` (`None` for stdout); Parquet pages compressed with
    /// `compression`.
    pub(crate) fn create(
        kind: Kind,
        path: Option<&Path>,
        compression: ParquetCompression,
        values: Vec<ValueColumns>,
    ) -> io::Result<TableWriter> {
        let schema = values.iter().fold(kseek_arrow::schema(), |schema, v| {
            with_field(&schema, v.columns.field())
        });
        let out = BatchWriter::create(kind, path, compression, &schema)?;
        Ok(TableWriter {
            // Record batches of kseek-arrow's default size (8192 rows or 1 MiB) are handed to the
            // writers, which gather them into row groups (Parquet) or messages (IPC).
            builder: RecordBatchBuilder::new(BatchLimits::default()),
            values,
            skipped: 0,
            schema,
            out,
            bytes: 0,
        })
    }

    /// Appends at most `max` records of `batch`, handing record batches to the writer as
    /// they fill. What was appended when a record fails to decode stays appended.
    pub(crate) fn write_batch(
        &mut self,
        batch: &FetchedBatch,
        max: u64,
    ) -> Result<Printed, crate::output::BatchFailed<kseek::Error>> {
        use crate::output::BatchFailed;
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        // --on-decode-error fail: a value that does not decode stops the read before any
        // record of its batch is appended.
        for v in self
            .values
            .iter()
            .filter(|v| v.on_error == OnDecodeError::Fail)
        {
            for record in batch.records().take(max).flatten() {
                if let Some(bytes) = v.bytes_of(&record) {
                    if let Err(message) = v.columns.check(bytes) {
                        return Err(BatchFailed::Decode {
                            offset: record.offset(),
                            message: format!("the {}: {message}", v.side.name()),
                        });
                    }
                }
            }
        }
        let mut skip = 0;
        let mut appended = 0;
        loop {
            let before = self.builder.len();
            let records = batch.records().take(max);
            let step = self.builder.append_records(
                batch.topic(),
                batch.partition(),
                batch.timestamp_type(),
                records,
                skip,
            );
            appended += self.builder.len() - before;
            match step {
                Ok(Some(next)) => {
                    self.hand_over().map_err(BatchFailed::Output)?;
                    skip = next;
                }
                Ok(None) => break,
                Err(e) => return Err(BatchFailed::Read(e)),
            }
        }
        // Stopped by --count (not by the batch's end): the offset of the first record left
        // out, if any. Looked up only then, so a batch is decoded once.
        let stopped_before = if appended < max {
            None
        } else {
            batch
                .records()
                .nth(max)
                .and_then(Result::ok)
                .map(|r| r.offset())
        };
        // A builder left full is handed over by the next append, flush or finish.
        Ok(Printed {
            records: appended as u64,
            bytes: 0,
            stopped_before,
        })
    }

    /// Whether rows wait in the builder (handed over at the next [`TableWriter::flush`]).
    pub(crate) fn is_dirty(&self) -> bool {
        !self.builder.is_empty()
    }

    /// Hands the rows appended so far to the writer; for an Arrow stream, writes them out.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.hand_over()?;
        self.out.flush()
    }

    /// Finishes the file or stream (Parquet's footer, the IPC end marker) and gives a file
    /// its final name. Returns the key and value bytes written, and the records skipped.
    /// On a failure (a full disk at the last row group, the footer or the sync) the temporary
    /// file is removed, as by [`TableWriter::abandon`].
    pub(crate) fn finish(mut self) -> io::Result<(u64, u64)> {
        self.hand_over()?;
        self.out.finish()?;
        Ok((self.bytes, self.skipped))
    }

    /// Gives up: a file is removed, never left under its final name (nothing more is written
    /// to it: no last row group, no footer). Dropping the writer unfinished does the same.
    pub(crate) fn abandon(self) {
        drop(self);
    }

    fn hand_over(&mut self) -> io::Result<()> {
        if self.builder.is_empty() {
            return Ok(());
        }
        let mut batch = self.builder.finish();
        self.bytes += key_value_bytes(&batch);
        if !self.values.is_empty() {
            batch = decode_columns(&mut self.values, &self.schema, batch, &mut self.skipped)?;
        }
        self.out.write(&batch)
    }
}

/// The bytes of the key and value columns of `batch`.
/// `schema` with the field of `field`'s name (`key` or `value`) replaced by `field`.
fn with_field(
    schema: &arrow_schema::Schema,
    field: &arrow_schema::Field,
) -> arrow_schema::SchemaRef {
    let fields: Vec<arrow_schema::FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            if f.name() == field.name() {
                std::sync::Arc::new(field.clone())
            } else {
                f.clone()
            }
        })
        .collect();
    std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    ))
}

/// `batch` with its binary `key` and `value` columns decoded into the struct columns of
/// `columns` (`schema`'s); with `--on-decode-error skip`, the rows that do not decode left
/// out (counted in `skipped`).
fn decode_columns(
    columns: &mut [ValueColumns],
    schema: &arrow_schema::SchemaRef,
    batch: RecordBatch,
    skipped: &mut u64,
) -> io::Result<RecordBatch> {
    let mut arrays = batch.columns().to_vec();
    let mut failed: Vec<(usize, String)> = Vec::new();
    let mut skip = true;
    for c in columns.iter_mut() {
        let name = c.side.name();
        let at = batch
            .schema()
            .index_of(name)
            .map_err(|e| io::Error::other(e.to_string()))?;
        let raw = batch
            .column(at)
            .as_any()
            .downcast_ref::<BinaryArray>()
            .ok_or_else(|| io::Error::other(format!("the {name} column is not binary")))?;
        let decoded = c
            .columns
            .decode(raw)
            .map_err(|e| io::Error::other(format!("decoding the {name}s: {e}")))?;
        arrays[at] = decoded.column;
        failed.extend(decoded.errors);
        skip &= c.on_error == OnDecodeError::Skip;
    }
    let mut out = RecordBatch::try_new(schema.clone(), arrays)
        .map_err(|e| io::Error::other(e.to_string()))?;
    if let Some((row, why)) = failed.first() {
        if !skip {
            return Err(io::Error::other(format!("row {row}: {why}")));
        }
        let mut keep = vec![true; out.num_rows()];
        for (row, _) in &failed {
            keep[*row] = false;
        }
        *skipped += keep.iter().filter(|k| !**k).count() as u64;
        out = arrow_select::filter::filter_record_batch(&out, &keep.into())
            .map_err(|e| io::Error::other(e.to_string()))?;
    }
    Ok(out)
}

fn key_value_bytes(batch: &RecordBatch) -> u64 {
    ["key", "value"]
        .iter()
        .filter_map(|name| batch.column_by_name(name))
        .filter_map(|c| c.as_any().downcast_ref::<BinaryArray>())
        .map(|c| {
            let offsets = c.value_offsets();
            (offsets[offsets.len() - 1] - offsets[0]) as u64
        })
        .sum()
}

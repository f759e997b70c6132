//! Everything printed: records (JSON lines, raw values, or a kcat-like template), the JSON
//! escaping shared by every `--format json` output, tables, and notes on stderr.

use std::io::{self, Write};

use kseek::protocol::records::Record;

use crate::decode::{Decoding, OnDecodeError, Side};
use crate::fail::Fail;
use crate::json::write_int;
pub(crate) use crate::json::{json_str, write_json_bytes, write_json_str};

/// A record output format, parsed once from `--format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordFormat {
    /// One JSON object per line.
    Json,
    /// The value bytes and a newline.
    Raw,
    /// A kcat-like template.
    Template(Vec<Piece>),
}

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Bytes printed as they are (escapes already applied).
    Literal(Vec<u8>),
    /// `%t`
    Topic,
    /// `%p`
    Partition,
    /// `%o`
    Offset,
    /// `%T`
    Timestamp,
    /// `%k`
    Key,
    /// `%s`
    Value,
    /// `%K`
    KeyLength,
    /// `%S`
    ValueLength,
    /// `%h`: `k=v,k=v`, a null value as `NULL` (as kcat prints it)
    Headers,
}

const TOKENS: &str = "%t topic, %p partition, %o offset, %T timestamp, %k key, %s value, \
                      %K key length, %S value length, %h headers, %% a percent sign; escapes \\n \\t \\r \\\\";

impl RecordFormat {
    /// `json`, `raw`, or a template.
    pub(crate) fn parse(text: &str) -> Result<RecordFormat, String> {
        match text {
            "json" => return Ok(RecordFormat::Json),
            "raw" => return Ok(RecordFormat::Raw),
            _ => {}
        }
        let mut pieces = Vec::new();
        let mut literal = Vec::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            let token = match c {
                '%' => match chars.next() {
                    Some('t') => Piece::Topic,
                    Some('p') => Piece::Partition,
                    Some('o') => Piece::Offset,
                    Some('T') => Piece::Timestamp,
                    Some('k') => Piece::Key,
                    Some('s') => Piece::Value,
                    Some('K') => Piece::KeyLength,
                    Some('S') => Piece::ValueLength,
                    Some('h') => Piece::Headers,
                    Some('%') => {
                        literal.push(b'%');
                        continue;
                    }
                    Some(other) => {
                        return Err(format!(
                            "unknown token %{other} in --format. Use json, raw or a template of {TOKENS}"
                        ))
                    }
                    None => {
                        return Err(format!(
                            "--format ends in a lone %. Write %% for a percent sign; tokens: {TOKENS}"
                        ))
                    }
                },
                '\\' => {
                    let byte = match chars.next() {
                        Some('n') => b'\n',
                        Some('t') => b'\t',
                        Some('r') => b'\r',
                        Some('\\') => b'\\',
                        Some(other) => {
                            return Err(format!(
                                "unknown escape \\{other} in --format. Use \\n, \\t, \\r or \\\\"
                            ))
                        }
                        None => {
                            return Err(
                                "--format ends in a lone \\. Write \\\\ for a backslash".to_owned()
                            )
                        }
                    };
                    literal.push(byte);
                    continue;
                }
                c => {
                    let mut buf = [0; 4];
                    literal.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    continue;
                }
            };
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            }
            pieces.push(token);
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Ok(RecordFormat::Template(pieces))
    }

    /// Whether the format writes nothing for any record (`--format ''`).
    fn writes_nothing(&self) -> bool {
        matches!(self, RecordFormat::Template(pieces) if pieces.is_empty())
    }

    /// Appends `record` of `topic`'s `partition` to `out`: no allocation beyond `out`'s
    /// growth.
    #[inline]
    pub(crate) fn write(
        &self,
        out: &mut Vec<u8>,
        topic: &str,
        partition: i32,
        record: &Record<'_>,
    ) {
        match self {
            RecordFormat::Json => write_json_record(out, topic, partition, record),
            RecordFormat::Raw => {
                out.extend_from_slice(record.value().unwrap_or_default());
                out.push(b'\n');
            }
            RecordFormat::Template(pieces) => {
                for piece in pieces {
                    write_piece(out, piece, topic, partition, record);
                }
            }
        }
    }
}

impl RecordFormat {
    /// [`RecordFormat::write`] with the key and value decoded by `decoding`.
    pub(crate) fn write_decoded(
        &self,
        out: &mut Vec<u8>,
        topic: &str,
        partition: i32,
        r: &Record<'_>,
        decoding: &Decoding,
    ) -> Result<(), String> {
        match self {
            RecordFormat::Json => {
                write_json_head(out, topic, partition, r);
                out.extend_from_slice(b",\"key\":");
                decoding.write(out, Side::Key, r.key(), true)?;
                out.extend_from_slice(b",\"value\":");
                decoding.write(out, Side::Value, r.value(), true)?;
                write_json_headers(out, r);
            }
            RecordFormat::Raw => {
                decoding.write(out, Side::Value, r.value(), false)?;
                out.push(b'\n');
            }
            RecordFormat::Template(pieces) => {
                for piece in pieces {
                    match piece {
                        Piece::Key => decoding.write(out, Side::Key, r.key(), false)?,
                        Piece::Value => decoding.write(out, Side::Value, r.value(), false)?,
                        other => write_piece(out, other, topic, partition, r),
                    }
                }
            }
        }
        Ok(())
    }
}

/// How many formatted bytes collect, in whole batches, before they go to the output in one
/// write.
const WRITE_AT: usize = 64 * 1024;
/// How many formatted bytes of one batch may collect before they go to the output even though
/// the batch is not finished (once the rest of the batch is known to decode).
const HOLD_AT: usize = 256 * 1024;

/// Records formatted straight from a batch's record views into one reused buffer, which goes
/// to `out` in writes of [`WRITE_AT`] bytes or more (at a batch's end) or of about [`HOLD_AT`]
/// bytes (inside a large batch): no copy, allocation or `await` per record.
///
/// A batch's output leaves the buffer only once every record of the batch is known to
/// decode, so a batch that fails prints nothing (as a read through `RecordStream`, which
/// decodes a whole batch before handing out its first record).
#[derive(Debug)]
pub(crate) struct RecordWriter<W: Write> {
    format: RecordFormat,
    /// Keys and values decoded (`-s`), or printed as they are.
    pub(crate) decoding: Option<Decoding>,
    buf: Vec<u8>,
    out: W,
    /// Whether something was written since the last flush.
    dirty: bool,
}

/// What [`RecordWriter::write_batch`] printed of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Printed {
    /// Records printed.
    pub(crate) records: u64,
    /// Their key and value bytes.
    pub(crate) bytes: u64,
    /// When the limit stopped the batch before its end: the offset of its first record not
    /// printed.
    pub(crate) stopped_before: Option<i64>,
}

/// Why [`RecordWriter::write_batch`] failed.
#[derive(Debug)]
pub(crate) enum BatchFailed<E> {
    /// Writing to the output failed.
    Output(io::Error),
    /// A record of the batch failed to decode: nothing of the batch was printed.
    Read(E),
    /// A key or value of the record at `offset` did not decode with `-s`
    /// (`--on-decode-error fail`): nothing of the batch was printed.
    Decode {
        /// The record's offset.
        offset: i64,
        /// Why.
        message: String,
    },
}

impl<W: Write> RecordWriter<W> {
    /// A writer of `format` to `out`.
    pub(crate) fn new(format: RecordFormat, out: W) -> Self {
        RecordWriter {
            format,
            decoding: None,
            // Room for a full hold and a record: the buffer never grows for common records.
            buf: Vec::with_capacity(HOLD_AT + WRITE_AT),
            out,
            dirty: false,
        }
    }

    /// Formats up to `limit` of a batch's `records` (of `topic`'s `partition`). Cloning
    /// `records` must give an iterator over the same records from the same point (it is how
    /// the rest of a batch is checked before part of it is written out).
    pub(crate) fn write_batch<'a, E>(
        &mut self,
        topic: &str,
        partition: i32,
        records: impl Iterator<Item = Result<Record<'a>, E>> + Clone,
        limit: u64,
    ) -> Result<Printed, BatchFailed<E>> {
        // One loop each for a format that writes nothing (`--format ''`: a count), for one
        // without `-s`, and for `-s`: the first two small enough for the record decoder to be
        // inlined into them (BENCHMARKS.md, "The command line's record loop").
        if self.decoding.is_none() && self.format.writes_nothing() {
            self.write_records(records, limit, |_, _| Ok(true))
        } else if self.decoding.is_none() {
            self.write_records(records, limit, |w, record| {
                w.format.write(&mut w.buf, topic, partition, record);
                Ok(true)
            })
        } else {
            self.write_records(records, limit, |w, record| {
                w.write_decoded(topic, partition, record)
            })
        }
    }

    /// [`write_batch`](Self::write_batch) with `write` formatting each record into the
    /// buffer: whether it printed the record, or the offset and reason of a record whose
    /// key or value did not decode.
    #[inline(always)]
    fn write_records<'a, E>(
        &mut self,
        mut records: impl Iterator<Item = Result<Record<'a>, E>> + Clone,
        limit: u64,
        mut write: impl FnMut(&mut Self, &Record<'a>) -> Result<bool, (i64, String)>,
    ) -> Result<Printed, BatchFailed<E>> {
        // Where the batch's output starts in the buffer, until all of it is known to decode.
        let mut mark = Some(self.buf.len());
        let mut printed = Printed::default();
        while printed.records < limit {
            let record = match records.next() {
                None => {
                    self.write_out_from(WRITE_AT)?;
                    return Ok(printed);
                }
                Some(Ok(record)) => record,
                Some(Err(e)) => return Err(self.fail(mark, e)),
            };
            match write(self, &record) {
                Ok(true) => {}
                Ok(false) => continue,
                Err((offset, message)) => return Err(self.fail_decode(mark, offset, message)),
            }
            printed.records += 1;
            printed.bytes += record_bytes(&record);
            if self.buf.len() >= HOLD_AT {
                if mark.is_some() {
                    if let Some(e) = records.clone().find_map(Result::err) {
                        return Err(self.fail(mark, e));
                    }
                    mark = None;
                }
                self.write_out_from(HOLD_AT)?;
            }
        }
        // Stopped by the limit: what was printed stands only if the rest decodes too.
        if mark.is_some() {
            if let Some(e) = records.clone().find_map(Result::err) {
                return Err(self.fail(mark, e));
            }
        }
        printed.stopped_before = records.next().and_then(Result::ok).map(|r| r.offset());
        self.write_out_from(WRITE_AT)?;
        Ok(printed)
    }

    /// Formats `record` with its key and value decoded (`-s`): whether it was printed
    /// (`--on-decode-error skip` leaves it out), or its offset and why it did not decode
    /// (`--on-decode-error fail`).
    fn write_decoded(
        &mut self,
        topic: &str,
        partition: i32,
        record: &Record<'_>,
    ) -> Result<bool, (i64, String)> {
        let Some(decoding) = &mut self.decoding else {
            self.format.write(&mut self.buf, topic, partition, record);
            return Ok(true);
        };
        let at = self.buf.len();
        match self
            .format
            .write_decoded(&mut self.buf, topic, partition, record, decoding)
        {
            Ok(()) => Ok(true),
            Err(message) => {
                self.buf.truncate(at);
                match decoding.on_error {
                    OnDecodeError::Fail => Err((record.offset(), message)),
                    OnDecodeError::Skip => {
                        decoding.skipped += 1;
                        Ok(false)
                    }
                    OnDecodeError::Raw => {
                        decoding.raw += 1;
                        self.format.write(&mut self.buf, topic, partition, record);
                        Ok(true)
                    }
                }
            }
        }
    }

    fn write_out_from<E>(&mut self, at: usize) -> Result<(), BatchFailed<E>> {
        if self.buf.len() >= at {
            self.out.write_all(&self.buf).map_err(BatchFailed::Output)?;
            self.buf.clear();
            self.dirty = true;
        }
        Ok(())
    }

    /// Drops the output of a batch with a record that did not decode (from `mark`).
    fn fail_decode<E>(
        &mut self,
        mark: Option<usize>,
        offset: i64,
        message: String,
    ) -> BatchFailed<E> {
        if let Some(mark) = mark {
            self.buf.truncate(mark);
        }
        BatchFailed::Decode { offset, message }
    }

    /// Drops the output of a batch that failed (from `mark`), and passes the error on.
    fn fail<E>(&mut self, mark: Option<usize>, error: E) -> BatchFailed<E> {
        if let Some(mark) = mark {
            self.buf.truncate(mark);
        }
        BatchFailed::Read(error)
    }

    /// Whether something was printed since the last [`flush`](Self::flush).
    pub(crate) fn is_dirty(&self) -> bool {
        self.dirty || !self.buf.is_empty()
    }

    /// Writes out the buffer and flushes the output.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.dirty = false;
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.out.flush()
    }
}

fn write_piece(out: &mut Vec<u8>, piece: &Piece, topic: &str, partition: i32, r: &Record<'_>) {
    let len = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64);
    match piece {
        Piece::Literal(bytes) => out.extend_from_slice(bytes),
        Piece::Topic => out.extend_from_slice(topic.as_bytes()),
        Piece::Partition => write_int(out, i64::from(partition)),
        Piece::Offset => write_int(out, r.offset()),
        Piece::Timestamp => write_int(out, r.timestamp()),
        Piece::Key => out.extend_from_slice(r.key().unwrap_or_default()),
        Piece::Value => out.extend_from_slice(r.value().unwrap_or_default()),
        Piece::KeyLength => write_int(out, len(r.key())),
        Piece::ValueLength => write_int(out, len(r.value())),
        Piece::Headers => {
            for (i, h) in r.headers().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(h.key());
                out.push(b'=');
                // kcat writes a null header value as NULL (an empty one as nothing).
                out.extend_from_slice(h.value().unwrap_or(b"NULL"));
            }
        }
    }
}

/// `{"topic":..,"partition":..,"offset":..,"timestamp":..,"key":..,"value":..,"headers":[[k,v]]}`
/// and a newline.
fn write_json_record(out: &mut Vec<u8>, topic: &str, partition: i32, r: &Record<'_>) {
    write_json_head(out, topic, partition, r);
    out.extend_from_slice(b",\"key\":");
    write_json_bytes(out, r.key());
    out.extend_from_slice(b",\"value\":");
    write_json_bytes(out, r.value());
    write_json_headers(out, r);
}

/// `{"topic":..,"partition":..,"offset":..,"timestamp":..`
fn write_json_head(out: &mut Vec<u8>, topic: &str, partition: i32, r: &Record<'_>) {
    out.extend_from_slice(b"{\"topic\":");
    write_json_str(out, topic);
    out.extend_from_slice(b",\"partition\":");
    write_int(out, i64::from(partition));
    out.extend_from_slice(b",\"offset\":");
    write_int(out, r.offset());
    out.extend_from_slice(b",\"timestamp\":");
    write_int(out, r.timestamp());
}

/// `,"headers":[[k,v]]}` and a newline.
fn write_json_headers(out: &mut Vec<u8>, r: &Record<'_>) {
    out.extend_from_slice(b",\"headers\":[");
    for (i, h) in r.headers().enumerate() {
        out.extend_from_slice(if i > 0 { b",[" } else { b"[" });
        write_json_bytes(out, Some(h.key()));
        out.push(b',');
        write_json_bytes(out, h.value());
        out.push(b']');
    }
    out.extend_from_slice(b"]}\n");
}

/// A record's key and value bytes.
fn record_bytes(r: &Record<'_>) -> u64 {
    (r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len)) as u64
}

/// One line on stderr (a summary or a warning); a closed stderr is ignored.
pub(crate) fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Writes `text` to stdout.
pub(crate) fn print(text: &str) -> Result<(), Fail> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(output_failed)
}

/// `n`, or `null` / `-` for none.
pub(crate) fn opt(n: Option<i64>, json: bool) -> String {
    n.map_or_else(
        || if json { "null" } else { "-" }.to_owned(),
        |n| n.to_string(),
    )
}

/// Turns an output error into a failure: a closed pipe (`| head`) is a quiet stop.
pub(crate) fn output_failed(error: std::io::Error) -> Fail {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        Fail {
            code: crate::fail::OK,
            message: String::new(),
        }
    } else {
        Fail::output(&error)
    }
}

/// Writes rows as aligned columns under `header`, two spaces apart.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            if i + 1 < row.len() {
                line.push_str(&format!("{cell:<w$}  "));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use kseek::protocol::records::{DecodeOptions, NewRecord, PartitionReader, RecordBatchBuilder};

    use super::*;

    /// A record at offset 42 of partition 2 of topic `t`, as a batch of one record.
    fn record(
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> Bytes {
        let mut r = NewRecord::new(0, 0);
        if let Some(key) = key {
            r = r.key(key);
        }
        if let Some(value) = value {
            r = r.value(value);
        }
        for (k, v) in headers {
            r = match v {
                Some(v) => r.header(k, v),
                None => r.null_header(k),
            };
        }
        RecordBatchBuilder::new(42, 1_767_261_600_000)
            .record(r)
            .build()
            .unwrap()
    }

    /// What `format` prints for the records of `batches`.
    fn render(format: &str, batches: &Bytes) -> Vec<u8> {
        let f = RecordFormat::parse(format).unwrap();
        let mut w = RecordWriter::new(f, Vec::new());
        for batch in PartitionReader::new(batches.clone(), 0, DecodeOptions::default()) {
            let batch = batch.unwrap();
            w.write_batch("t", 2, batch.records(), u64::MAX).unwrap();
        }
        w.flush().unwrap();
        w.out
    }

    #[test]
    fn json_lines_in_the_documented_field_order() {
        let r = record(Some(b"k"), Some(b"v"), &[(b"h", Some(b"v")), (b"n", None)]);
        assert_eq!(
            String::from_utf8(render("json", &r)).unwrap(),
            "{\"topic\":\"t\",\"partition\":2,\"offset\":42,\"timestamp\":1767261600000,\
             \"key\":\"k\",\"value\":\"v\",\"headers\":[[\"h\",\"v\"],[\"n\",null]]}\n"
        );
        let r = record(None, Some(&[0xff, 0x00, 0x41]), &[]);
        assert_eq!(
            String::from_utf8(render("json", &r)).unwrap(),
            "{\"topic\":\"t\",\"partition\":2,\"offset\":42,\"timestamp\":1767261600000,\
             \"key\":null,\"value\":{\"base64\":\"/wBB\"},\"headers\":[]}\n"
        );
    }

    #[test]
    fn raw_prints_the_value_and_a_newline() {
        assert_eq!(
            render("raw", &record(Some(b"k"), Some(b"v\x00"), &[])),
            b"v\x00\n"
        );
        assert_eq!(render("raw", &record(Some(b"k"), None, &[])), b"\n");
    }

    #[test]
    fn every_template_token() {
        let r = record(
            Some(b"key"),
            Some(b"value"),
            &[(b"a", Some(b"1")), (b"b", None)],
        );
        assert_eq!(
            render("%t|%p|%o|%T|%k|%s|%K|%S|%h|%%|\\n\\t\\r\\\\", &r),
            b"t|2|42|1767261600000|key|value|3|5|a=1,b=NULL|%|\n\t\r\\"
        );
        assert_eq!(
            render("%p %o %T %k %s\\n", &r),
            b"2 42 1767261600000 key value\n"
        );
        assert_eq!(render("é%s", &r), "évalue".as_bytes());
    }

    #[test]
    fn template_null_key_and_value_print_empty_with_length_minus_one() {
        let r = record(None, None, &[]);
        assert_eq!(render("[%k][%s][%K][%S][%h]", &r), b"[][][-1][-1][]");
        let r = record(Some(b""), Some(b"\xff"), &[]);
        assert_eq!(render("[%k][%s][%K][%S]", &r), b"[][\xff][0][1]");
    }

    /// A batch of `n` records at offsets `base..`, values of 100 bytes.
    fn batch(base: i64, n: i32) -> Bytes {
        let mut b = RecordBatchBuilder::new(base, 1_767_261_600_000);
        for i in 0..n {
            b.push(NewRecord::new(i, i64::from(i)).value([b'v'; 100]));
        }
        b.build().unwrap()
    }

    /// The records of the one batch in `bytes`, CRC not checked.
    fn records_of(bytes: &Bytes) -> kseek::protocol::records::FilteredBatch {
        let options = DecodeOptions {
            verify_crc: false,
            ..DecodeOptions::default()
        };
        let mut reader = PartitionReader::new(bytes.clone(), 0, options);
        reader.next().unwrap().unwrap()
    }

    /// 3000 records whose declared count is one short: the last is trailing bytes, an error
    /// found only after more than HOLD_AT bytes of JSON output.
    fn broken_batch() -> Bytes {
        let mut broken = batch(3, 3000).to_vec();
        broken[57..61].copy_from_slice(&2999i32.to_be_bytes());
        Bytes::from(broken)
    }

    #[test]
    fn a_batch_that_fails_to_decode_prints_none_of_its_records() {
        let good = batch(0, 3);
        let broken = broken_batch();
        let mut w = RecordWriter::new(RecordFormat::Json, Vec::new());
        let printed = w
            .write_batch("t", 2, records_of(&good).records(), u64::MAX)
            .unwrap();
        assert_eq!(printed.records, 3);
        let failed = w.write_batch("t", 0, records_of(&broken).records(), u64::MAX);
        assert!(matches!(failed, Err(BatchFailed::Read(_))), "{failed:?}");
        w.flush().unwrap();
        assert_eq!(w.out, render("json", &good));
        // Also when the records before the limit decode: the batch is whole or not printed.
        let mut w = RecordWriter::new(RecordFormat::Json, Vec::new());
        let failed = w.write_batch("t", 0, records_of(&broken).records(), 2);
        assert!(matches!(failed, Err(BatchFailed::Read(_))), "{failed:?}");
        w.flush().unwrap();
        assert!(w.out.is_empty());
    }

    #[test]
    fn the_limit_stops_inside_a_batch_before_its_next_record() {
        let b = batch(10, 5);
        let mut w = RecordWriter::new(RecordFormat::parse("%o\\n").unwrap(), Vec::new());
        let printed = w.write_batch("t", 0, records_of(&b).records(), 2).unwrap();
        assert_eq!(
            printed,
            Printed {
                records: 2,
                bytes: 200,
                stopped_before: Some(12)
            }
        );
        // A limit that is the batch's length is no stop inside it.
        let printed = w.write_batch("t", 0, records_of(&b).records(), 5).unwrap();
        assert_eq!(printed.stopped_before, None);
        w.flush().unwrap();
        assert_eq!(w.out, b"10\n11\n10\n11\n12\n13\n14\n");
    }

    #[test]
    fn a_format_that_writes_nothing_counts_like_the_others_and_fails_alike() {
        // `--format ''` has a loop of its own (write_batch): the same counts, the same stop
        // inside a batch, the same failure of a batch that does not decode to its end.
        let b = batch(10, 5);
        let broken = broken_batch();
        let empty = RecordFormat::parse("").unwrap();
        assert!(empty.writes_nothing());
        assert!(!RecordFormat::parse("%o").unwrap().writes_nothing());
        let mut w = RecordWriter::new(empty, Vec::new());
        let all = w.write_batch("t", 0, records_of(&b).records(), u64::MAX);
        let all = all.unwrap();
        assert_eq!((all.records, all.bytes, all.stopped_before), (5, 500, None));
        let two = w.write_batch("t", 0, records_of(&b).records(), 2).unwrap();
        assert_eq!((two.records, two.stopped_before), (2, Some(12)));
        for limit in [u64::MAX, 2] {
            let failed = w.write_batch("t", 0, records_of(&broken).records(), limit);
            assert!(matches!(failed, Err(BatchFailed::Read(_))), "{failed:?}");
        }
        w.flush().unwrap();
        assert!(w.out.is_empty());
    }

    #[test]
    fn template_errors() {
        let e = RecordFormat::parse("%x").unwrap_err();
        assert!(e.starts_with("unknown token %x"), "{e}");
        assert!(RecordFormat::parse("abc%").unwrap_err().contains("lone %"));
        assert!(RecordFormat::parse("\\q")
            .unwrap_err()
            .contains("unknown escape \\q"));
        assert!(RecordFormat::parse("x\\").unwrap_err().contains("lone \\"));
        assert_eq!(
            RecordFormat::parse("plain"),
            Ok(RecordFormat::Template(vec![Piece::Literal(
                b"plain".to_vec()
            )]))
        );
    }
}

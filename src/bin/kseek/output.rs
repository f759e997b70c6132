//! Everything printed: records (JSON lines, raw values, or a kcat-like template), the JSON
//! escaping shared by every `--format json` output, tables, and notes on stderr.

use std::io::{self, Write};

use kseek::ReadRecord;

use crate::fail::Fail;

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

    /// Writes `record` to `out`.
    pub(crate) fn write(&self, out: &mut impl Write, record: &ReadRecord) -> io::Result<()> {
        match self {
            RecordFormat::Json => write_json_record(out, record),
            RecordFormat::Raw => {
                out.write_all(record.value.as_deref().unwrap_or_default())?;
                out.write_all(b"\n")
            }
            RecordFormat::Template(pieces) => {
                for piece in pieces {
                    write_piece(out, piece, record)?;
                }
                Ok(())
            }
        }
    }
}

fn write_piece(out: &mut impl Write, piece: &Piece, r: &ReadRecord) -> io::Result<()> {
    let len = |b: &Option<bytes::Bytes>| b.as_ref().map_or(-1, |b| b.len() as i64);
    match piece {
        Piece::Literal(bytes) => out.write_all(bytes),
        Piece::Topic => out.write_all(r.topic.as_bytes()),
        Piece::Partition => write!(out, "{}", r.partition),
        Piece::Offset => write!(out, "{}", r.offset),
        Piece::Timestamp => write!(out, "{}", r.timestamp),
        Piece::Key => out.write_all(r.key.as_deref().unwrap_or_default()),
        Piece::Value => out.write_all(r.value.as_deref().unwrap_or_default()),
        Piece::KeyLength => write!(out, "{}", len(&r.key)),
        Piece::ValueLength => write!(out, "{}", len(&r.value)),
        Piece::Headers => {
            for (i, h) in r.headers.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(&h.key)?;
                out.write_all(b"=")?;
                // kcat writes a null header value as NULL (an empty one as nothing).
                out.write_all(h.value.as_deref().unwrap_or(b"NULL"))?;
            }
            Ok(())
        }
    }
}

/// `{"topic":..,"partition":..,"offset":..,"timestamp":..,"key":..,"value":..,"headers":[[k,v]]}`
/// and a newline.
fn write_json_record(out: &mut impl Write, r: &ReadRecord) -> io::Result<()> {
    out.write_all(b"{\"topic\":")?;
    write_json_str(out, &r.topic)?;
    write!(
        out,
        ",\"partition\":{},\"offset\":{},\"timestamp\":{},\"key\":",
        r.partition, r.offset, r.timestamp
    )?;
    write_json_bytes(out, r.key.as_deref())?;
    out.write_all(b",\"value\":")?;
    write_json_bytes(out, r.value.as_deref())?;
    out.write_all(b",\"headers\":[")?;
    for (i, h) in r.headers.iter().enumerate() {
        out.write_all(if i > 0 { b",[" } else { b"[" })?;
        write_json_bytes(out, Some(&h.key))?;
        out.write_all(b",")?;
        write_json_bytes(out, h.value.as_deref())?;
        out.write_all(b"]")?;
    }
    out.write_all(b"]}\n")
}

/// Bytes as JSON: a string when valid UTF-8, `null` when null, else `{"base64":"..."}`.
pub(crate) fn write_json_bytes(out: &mut impl Write, bytes: Option<&[u8]>) -> io::Result<()> {
    match bytes {
        None => out.write_all(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => write_json_str(out, s),
            Err(_) => {
                out.write_all(b"{\"base64\":\"")?;
                out.write_all(base64(b).as_bytes())?;
                out.write_all(b"\"}")
            }
        },
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
pub(crate) fn write_json_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    out.write_all(b"\"")?;
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        if escape.is_empty() {
            write!(out, "\\u{b:04x}")?;
        } else {
            out.write_all(escape)?;
        }
        start = i + 1;
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
}

/// `s` as a JSON string literal.
pub(crate) fn json_str(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    // Writing to a Vec can't fail.
    let _ = write_json_str(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

/// Standard base64 with padding (RFC 4648 section 4).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
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
    use std::sync::Arc;

    use bytes::Bytes;
    use kseek::protocol::records::{OwnedHeader, TimestampType};

    use super::*;

    fn record(
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> ReadRecord {
        ReadRecord {
            topic: Arc::from("t"),
            partition: 2,
            offset: 42,
            timestamp: 1_767_261_600_000,
            timestamp_type: TimestampType::CreateTime,
            leader_epoch: 0,
            key: key.map(Bytes::copy_from_slice),
            value: value.map(Bytes::copy_from_slice),
            headers: headers
                .iter()
                .map(|(k, v)| OwnedHeader {
                    key: Bytes::copy_from_slice(k),
                    value: v.map(Bytes::copy_from_slice),
                })
                .collect(),
        }
    }

    fn render(format: &str, r: &ReadRecord) -> Vec<u8> {
        let f = RecordFormat::parse(format).unwrap();
        let mut out = Vec::new();
        f.write(&mut out, r).unwrap();
        out
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
    fn json_escapes_quotes_backslashes_and_control_characters() {
        assert_eq!(json_str("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(json_str("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(json_str("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
        assert_eq!(json_str("héllo ✓"), "\"héllo ✓\"");
        let mut out = Vec::new();
        write_json_bytes(&mut out, Some(b"\xc3\x28")).unwrap();
        assert_eq!(out, b"{\"base64\":\"wyg=\"}");
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
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

//! Avro values to JSON, straight from the binary encoding: one pass over the bytes with the
//! writer's schema (parsed by `apache-avro`), no intermediate values, every length checked
//! against the bytes present before anything is allocated or read.
//!
//! The JSON is Avro's JSON encoding as `kafka-avro-console-consumer` prints it (a union's
//! non-null value as `{"branch": value}`, bytes and fixed as strings of the code points
//! U+0000 to U+00FF, enums as their symbol), except that logical types print as what they
//! mean rather than as their underlying encoding:
//!
//! | logical type | printed as |
//! |---|---|
//! | `decimal` (bytes or fixed) | a string with the exact decimal: `"-12.3400"` (scale digits) |
//! | `date` | `"2026-12-04"` |
//! | `time-millis`, `time-micros` | `"10:00:00.250"`, `"10:00:00.250000"` |
//! | `timestamp-millis`, `-micros`, `-nanos` | `"2026-12-04T10:00:00.250Z"` (3, 6 or 9 digits) |
//! | `local-timestamp-millis`, `-micros`, `-nanos` | as timestamps, without the `Z` |
//! | `uuid` | its string |
//! | `duration` | `{"months":1,"days":2,"milliseconds":3}` |
//!
//! Dates and timestamps outside the years -9999 to 9999 print as their number. `NaN` and
//! infinite floats print as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (JSON has no
//! such numbers).

use std::collections::HashMap;

use apache_avro::schema::{DecimalSchema, Name, RecordSchema};
use apache_avro::Schema;

use crate::client::ResolvedSchema;

/// How deep values may nest (records in records, arrays of arrays): recursive schemas could
/// otherwise nest one level per byte of the payload.
pub const MAX_DEPTH: usize = 128;
/// The most items of a type encoded in zero bytes (nulls, empty records) one value may hold:
/// their count can't be checked against the bytes present.
pub const MAX_ZERO_WIDTH_ITEMS: u64 = 1 << 16;

/// A writer's schema, parsed, with the named types of its references.
#[derive(Debug, Clone)]
pub struct AvroSchema {
    root: Schema,
    names: HashMap<Name, Schema>,
}

/// Why an Avro value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AvroError(String);

impl AvroError {
    pub(crate) fn new(message: impl Into<String>) -> AvroError {
        AvroError(message.into())
    }
}

fn err<T>(message: impl Into<String>) -> Result<T, AvroError> {
    Err(AvroError(message.into()))
}

impl AvroSchema {
    /// Parses an Avro schema and the schemas it refers to.
    ///
    /// # Errors
    /// A schema that is not valid Avro, or refers to a name none of the others defines.
    pub fn parse(resolved: &ResolvedSchema) -> Result<AvroSchema, AvroError> {
        let deps: Vec<&str> = resolved
            .dependencies
            .iter()
            .map(|(_, s)| s.text.as_str())
            .collect();
        let (root, deps) = if deps.is_empty() {
            (
                Schema::parse_str(&resolved.schema.text).map_err(|e| AvroError(e.to_string()))?,
                Vec::new(),
            )
        } else {
            Schema::parse_str_with_list(&resolved.schema.text, deps)
                .map_err(|e| AvroError(e.to_string()))?
        };
        let mut names = HashMap::new();
        for s in deps.iter().chain(std::iter::once(&root)) {
            collect_names(s, &mut names);
        }
        Ok(AvroSchema { root, names })
    }

    /// Appends the JSON of the Avro binary `payload` to `out`. On error `out` may hold part
    /// of the value: the caller truncates it.
    ///
    /// # Errors
    /// Bytes that are not a value of the schema: cut short, a length or count beyond the
    /// bytes present, a union or enum index out of range, invalid UTF-8, bytes left over.
    pub fn to_json(&self, payload: &[u8], out: &mut String) -> Result<(), AvroError> {
        self.walk(payload, out)
    }

    /// [`AvroSchema::to_json`] into a byte buffer (what a writer of lines holds).
    ///
    /// # Errors
    /// As [`AvroSchema::to_json`].
    pub fn to_json_bytes(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<(), AvroError> {
        self.walk(payload, out)
    }

    /// Whether `payload` is a value of the schema, as [`AvroSchema::to_json`] would find, with
    /// nothing written.
    ///
    /// # Errors
    /// As [`AvroSchema::to_json`].
    pub fn check(&self, payload: &[u8]) -> Result<(), AvroError> {
        self.walk(payload, &mut Discard)
    }

    fn walk<S: Sink>(&self, payload: &[u8], out: &mut S) -> Result<(), AvroError> {
        let mut walker = Walker {
            names: &self.names,
            bytes: payload,
            zero_width: 0,
            out,
        };
        walker.value(&self.root, 0)?;
        if !walker.bytes.is_empty() {
            return err(format!(
                "{} bytes left after the value (written with another schema?)",
                walker.bytes.len()
            ));
        }
        Ok(())
    }
}

/// Where the walker writes: JSON text, or nowhere (a check).
trait Sink {
    /// Whether anything written is kept (formatting is skipped when not).
    const KEEPS: bool;
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
}

impl Sink for String {
    const KEEPS: bool = true;
    #[inline]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    #[inline]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

/// Whether any of the eight bytes of `word` is a control character, `"` or `\\`.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    // A byte below 0x20 (bytes of 0x80 and above are never below it: the !word mask).
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
    below_space
        || has_zero(word ^ (ONES * u64::from(b'"')))
        || has_zero(word ^ (ONES * u64::from(b'\\')))
}

impl Sink for Vec<u8> {
    const KEEPS: bool = true;
    #[inline]
    fn push_str(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
    #[inline]
    fn push(&mut self, c: char) {
        let mut buf = [0; 4];
        self.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

/// Keeps nothing: [`AvroSchema::check`].
struct Discard;

impl Sink for Discard {
    const KEEPS: bool = false;
    #[inline]
    fn push_str(&mut self, _: &str) {}
    #[inline]
    fn push(&mut self, _: char) {}
}

fn collect_names(schema: &Schema, names: &mut HashMap<Name, Schema>) {
    let named = |n: &Name| n.clone();
    match schema {
        Schema::Record(r) => {
            names.insert(named(&r.name), schema.clone());
            for f in &r.fields {
                collect_names(&f.schema, names);
            }
        }
        Schema::Enum(e) => {
            names.insert(named(&e.name), schema.clone());
        }
        Schema::Fixed(f) => {
            names.insert(named(&f.name), schema.clone());
        }
        Schema::Decimal(d) => collect_names(&d.inner, names),
        Schema::Array(a) => collect_names(&a.items, names),
        Schema::Map(m) => collect_names(&m.types, names),
        Schema::Union(u) => {
            for v in u.variants() {
                collect_names(v, names);
            }
        }
        _ => {}
    }
}

struct Walker<'a, 'o, S: Sink> {
    names: &'a HashMap<Name, Schema>,
    bytes: &'a [u8],
    zero_width: u64,
    out: &'o mut S,
}

impl<'a, S: Sink> Walker<'a, '_, S> {
    fn lookup(&self, name: &Name) -> Result<&'a Schema, AvroError> {
        let names = self.names;
        names.get(name).map_or_else(
            || {
                err(format!(
                    "the schema refers to {}, which it does not define",
                    name.fullname(None)
                ))
            },
            Ok,
        )
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], AvroError> {
        if n > self.bytes.len() {
            return err(format!(
                "cut short: {n} bytes needed, {} left",
                self.bytes.len()
            ));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn long(&mut self) -> Result<i64, AvroError> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some((&b, rest)) = self.bytes.split_first() else {
                return err("cut short inside a number");
            };
            self.bytes = rest;
            if i == 9 && b > 1 {
                return err("a number longer than 64 bits");
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        err("a number longer than 64 bits")
    }

    fn int(&mut self) -> Result<i32, AvroError> {
        let v = self.long()?;
        i32::try_from(v).or_else(|_| err(format!("{v} does not fit an Avro int")))
    }

    /// A length: not negative, at most the bytes left.
    fn len(&mut self) -> Result<usize, AvroError> {
        let n = self.long()?;
        if n < 0 || n as u64 > self.bytes.len() as u64 {
            return err(format!(
                "a length of {n} with {} bytes left",
                self.bytes.len()
            ));
        }
        Ok(n as usize)
    }

    fn string(&mut self) -> Result<&'a str, AvroError> {
        let n = self.len()?;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).or_else(|e| err(format!("a string that is not UTF-8: {e}")))
    }

    /// `s` as a JSON string.
    fn push_json_str(&mut self, s: &str) {
        if !S::KEEPS {
            return;
        }
        self.out.push('"');
        let bytes = s.as_bytes();
        // Eight bytes at a time while none needs an escape (the common case).
        let mut clean = 0;
        while let Some(word) = bytes.get(clean..clean + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
            if needs_escape(word) {
                break;
            }
            clean += 8;
        }
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate().skip(clean) {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.out.push_str(&s[start..i]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.push_str("\\u00");
                self.out.push(char::from(HEX[usize::from(b >> 4)]));
                self.out.push(char::from(HEX[usize::from(b & 0xf)]));
            } else {
                self.out.push_str(escape);
            }
            start = i + 1;
        }
        self.out.push_str(&s[start..]);
        self.out.push('"');
    }

    /// Bytes as Avro's JSON encoding has them: one code point per byte.
    fn push_latin1(&mut self, bytes: &[u8]) {
        if !S::KEEPS {
            return;
        }
        let mut s = String::with_capacity(bytes.len() * 2);
        s.extend(bytes.iter().map(|&b| char::from(b)));
        self.push_json_str(&s);
    }

    fn push_int(&mut self, v: impl itoa::Integer) {
        if S::KEEPS {
            self.out.push_str(itoa::Buffer::new().format(v));
        }
    }

    /// `v` zero-padded to `width` digits (a date or time part).
    fn push_padded(&mut self, v: u32, width: usize) {
        if !S::KEEPS {
            return;
        }
        let mut buf = itoa::Buffer::new();
        let digits = buf.format(v);
        for _ in digits.len()..width {
            self.out.push('0');
        }
        self.out.push_str(digits);
    }

    fn value(&mut self, schema: &'a Schema, depth: usize) -> Result<(), AvroError> {
        if depth > MAX_DEPTH {
            return err(format!("values nested deeper than {MAX_DEPTH} levels"));
        }
        match schema {
            Schema::Null => self.out.push_str("null"),
            Schema::Boolean => match self.take(1)?[0] {
                0 => self.out.push_str("false"),
                1 => self.out.push_str("true"),
                b => return err(format!("a boolean byte of {b}")),
            },
            Schema::Int => {
                let v = self.int()?;
                self.push_int(v);
            }
            Schema::Long => {
                let v = self.long()?;
                self.push_int(v);
            }
            Schema::Float => {
                let b = self.take(4)?;
                let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if S::KEEPS {
                    if v.is_finite() {
                        self.out.push_str(zmij::Buffer::new().format_finite(v));
                    } else {
                        self.non_finite(f64::from(v));
                    }
                }
            }
            Schema::Double => {
                let b = self.take(8)?;
                let mut a = [0; 8];
                a.copy_from_slice(b);
                let v = f64::from_le_bytes(a);
                if S::KEEPS {
                    if v.is_finite() {
                        self.out.push_str(zmij::Buffer::new().format_finite(v));
                    } else {
                        self.non_finite(v);
                    }
                }
            }
            Schema::Bytes => {
                let n = self.len()?;
                let b = self.take(n)?;
                self.push_latin1(b);
            }
            Schema::String => {
                let s = self.string()?;
                self.push_json_str(s);
            }
            Schema::Uuid => {
                let s = self.string()?;
                self.push_json_str(s);
            }
            Schema::Fixed(f) => {
                let b = self.take(f.size)?;
                self.push_latin1(b);
            }
            Schema::Enum(e) => {
                let i = self.int()?;
                let Some(symbol) = usize::try_from(i).ok().and_then(|i| e.symbols.get(i)) else {
                    return err(format!(
                        "enum index {i} of {} with {} symbols",
                        e.name.fullname(None),
                        e.symbols.len()
                    ));
                };
                self.push_json_str(symbol);
            }
            Schema::Union(u) => {
                let i = self.long()?;
                let variants = u.variants();
                let Some(branch) = usize::try_from(i).ok().and_then(|i| variants.get(i)) else {
                    return err(format!("union index {i} of a union of {}", variants.len()));
                };
                if matches!(branch, Schema::Null) {
                    self.out.push_str("null");
                } else {
                    self.out.push('{');
                    if S::KEEPS {
                        self.push_branch_name(branch);
                    }
                    self.out.push(':');
                    self.value(branch, depth + 1)?;
                    self.out.push('}');
                }
            }
            Schema::Record(r) => self.record(r, depth)?,
            Schema::Array(a) => {
                self.out.push('[');
                let mut first = true;
                self.blocks(&a.items, |w| {
                    if !std::mem::take(&mut first) {
                        w.out.push(',');
                    }
                    w.value(&a.items, depth + 1)
                })?;
                self.out.push(']');
            }
            Schema::Map(m) => {
                self.out.push('{');
                let mut first = true;
                self.blocks(&Schema::String, |w| {
                    if !std::mem::take(&mut first) {
                        w.out.push(',');
                    }
                    let key = w.string()?;
                    w.push_json_str(key);
                    w.out.push(':');
                    w.value(&m.types, depth + 1)
                })?;
                self.out.push('}');
            }
            Schema::Ref { name } => {
                let target = self.lookup(name)?;
                self.value(target, depth + 1)?;
            }
            Schema::Decimal(d) => self.decimal(d)?,
            Schema::BigDecimal => {
                let n = self.len()?;
                let b = self.take(n)?;
                let mut reader = b;
                let v = apache_avro::from_avro_datum(&Schema::BigDecimal, &mut reader, None);
                match v {
                    Ok(apache_avro::types::Value::BigDecimal(d)) => {
                        let text = d.to_string();
                        self.push_json_str(&text);
                    }
                    _ => return err("a big-decimal that does not decode"),
                }
            }
            Schema::Date => {
                let days = self.int()?;
                self.date(days);
            }
            Schema::TimeMillis => {
                let ms = self.int()?;
                self.time_of_day(i64::from(ms) * 1_000_000, 3);
            }
            Schema::TimeMicros => {
                let us = self.long()?;
                self.time_of_day(us.saturating_mul(1_000), 6);
            }
            Schema::TimestampMillis => self.timestamp(1_000_000, 3, true)?,
            Schema::TimestampMicros => self.timestamp(1_000, 6, true)?,
            Schema::TimestampNanos => self.timestamp(1, 9, true)?,
            Schema::LocalTimestampMillis => self.timestamp(1_000_000, 3, false)?,
            Schema::LocalTimestampMicros => self.timestamp(1_000, 6, false)?,
            Schema::LocalTimestampNanos => self.timestamp(1, 9, false)?,
            Schema::Duration => {
                let b = self.take(12)?;
                let n = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                self.out.push_str("{\"months\":");
                self.push_int(n(0));
                self.out.push_str(",\"days\":");
                self.push_int(n(4));
                self.out.push_str(",\"milliseconds\":");
                self.push_int(n(8));
                self.out.push('}');
            }
        }
        Ok(())
    }

    fn non_finite(&mut self, v: f64) {
        self.out.push_str(if v.is_nan() {
            "\"NaN\""
        } else if v > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    }

    fn record(&mut self, r: &'a RecordSchema, depth: usize) -> Result<(), AvroError> {
        self.out.push('{');
        for (i, field) in r.fields.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.push_json_str(&field.name);
            self.out.push(':');
            self.value(&field.schema, depth + 1)?;
        }
        self.out.push('}');
        Ok(())
    }

    /// The blocks of an array or map: `item` called once per item.
    fn blocks(
        &mut self,
        items: &'a Schema,
        mut item: impl FnMut(&mut Self) -> Result<(), AvroError>,
    ) -> Result<(), AvroError> {
        let zero_width = self.zero_width(items, 0);
        loop {
            let mut count = self.long()?;
            if count == 0 {
                return Ok(());
            }
            if count < 0 {
                count = count
                    .checked_neg()
                    .map_or_else(|| err("a block count of i64::MIN"), Ok)?;
                // The block's size in bytes, for readers that skip it.
                self.len()?;
            }
            let count = count as u64;
            if zero_width {
                self.zero_width += count;
                if self.zero_width > MAX_ZERO_WIDTH_ITEMS {
                    return err(format!(
                        "more than {MAX_ZERO_WIDTH_ITEMS} items encoded in zero bytes"
                    ));
                }
            } else if count > self.bytes.len() as u64 {
                return err(format!(
                    "a block of {count} items with {} bytes left",
                    self.bytes.len()
                ));
            }
            for _ in 0..count {
                item(self)?;
            }
        }
    }

    /// Whether values of `schema` can take zero bytes.
    fn zero_width(&self, schema: &Schema, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match schema {
            Schema::Null => true,
            Schema::Fixed(f) => f.size == 0,
            Schema::Record(r) => r
                .fields
                .iter()
                .all(|f| self.zero_width(&f.schema, depth + 1)),
            Schema::Ref { name } => self
                .names
                .get(name)
                .is_some_and(|s| self.zero_width(s, depth + 1)),
            _ => false,
        }
    }

    /// The union branch's name, as a JSON string: a primitive's, or a named type's full name.
    fn push_branch_name(&mut self, schema: &Schema) {
        let name: Result<&str, &Name> = match schema {
            Schema::Null => Ok("null"),
            Schema::Boolean => Ok("boolean"),
            Schema::Int | Schema::Date | Schema::TimeMillis => Ok("int"),
            Schema::Long
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos => Ok("long"),
            Schema::Float => Ok("float"),
            Schema::Double => Ok("double"),
            Schema::Bytes | Schema::BigDecimal => Ok("bytes"),
            Schema::String | Schema::Uuid => Ok("string"),
            Schema::Array(_) => Ok("array"),
            Schema::Map(_) => Ok("map"),
            Schema::Duration => Ok("fixed"),
            Schema::Union(_) => Ok("union"),
            Schema::Decimal(d) => return self.push_branch_name(&d.inner),
            Schema::Record(r) => Err(&r.name),
            Schema::Enum(e) => Err(&e.name),
            Schema::Fixed(f) => Err(&f.name),
            Schema::Ref { name } => Err(name),
        };
        match name {
            Ok(primitive) => {
                self.out.push('"');
                self.out.push_str(primitive);
                self.out.push('"');
            }
            Err(name) => {
                self.out.push('"');
                if let Some(ns) = name
                    .namespace
                    .as_deref()
                    .filter(|ns| !ns.is_empty() && !name.name.contains('.'))
                {
                    self.out.push_str(ns);
                    self.out.push('.');
                }
                self.out.push_str(&name.name);
                self.out.push('"');
            }
        }
    }

    fn decimal(&mut self, d: &DecimalSchema) -> Result<(), AvroError> {
        let bytes = match &*d.inner {
            Schema::Fixed(f) => self.take(f.size)?,
            _ => {
                let n = self.len()?;
                self.take(n)?
            }
        };
        if !S::KEEPS {
            return Ok(());
        }
        if bytes.len() <= 16 {
            let mut v: i128 = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
                -1
            } else {
                0
            };
            for &b in bytes {
                v = (v << 8) | i128::from(b);
            }
            let mut buf = itoa::Buffer::new();
            self.push_decimal(buf.format(v), d.scale);
        } else {
            let digits = num_bigint::BigInt::from_signed_bytes_be(bytes).to_string();
            self.push_decimal(&digits, d.scale);
        }
        Ok(())
    }

    /// `digits` (an integer, maybe negative) as a JSON string with a decimal point `scale`
    /// digits from the right.
    fn push_decimal(&mut self, digits: &str, scale: usize) {
        let (sign, digits) = match digits.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", digits),
        };
        self.out.push('"');
        self.out.push_str(sign);
        if scale == 0 {
            self.out.push_str(digits);
        } else if digits.len() <= scale {
            self.out.push_str("0.");
            for _ in digits.len()..scale {
                self.out.push('0');
            }
            self.out.push_str(digits);
        } else {
            let (int, frac) = digits.split_at(digits.len() - scale);
            self.out.push_str(int);
            self.out.push('.');
            self.out.push_str(frac);
        }
        self.out.push('"');
    }

    fn push_date(&mut self, d: jiff::civil::Date) {
        let year = d.year();
        if year < 0 {
            self.out.push('-');
        }
        self.push_padded(u32::from(year.unsigned_abs()), 4);
        self.out.push('-');
        self.push_padded(d.month() as u32, 2);
        self.out.push('-');
        self.push_padded(d.day() as u32, 2);
    }

    /// `hh:mm:ss.` and the first `digits` digits of the fraction of `nanos`.
    fn push_time(&mut self, seconds_of_day: i64, nanos: u32, digits: usize) {
        self.push_padded((seconds_of_day / 3600) as u32, 2);
        self.out.push(':');
        self.push_padded((seconds_of_day / 60 % 60) as u32, 2);
        self.out.push(':');
        self.push_padded((seconds_of_day % 60) as u32, 2);
        self.out.push('.');
        let mut buf = itoa::Buffer::new();
        let fraction = buf.format(nanos);
        let mut padded = [b'0'; 9];
        padded[9 - fraction.len()..].copy_from_slice(fraction.as_bytes());
        let digits = digits.min(9);
        self.out
            .push_str(std::str::from_utf8(&padded[..digits]).unwrap_or("000"));
    }

    fn date(&mut self, days: i32) {
        if !S::KEEPS {
            return;
        }
        match jiff::Timestamp::from_second(i64::from(days) * 86_400) {
            Ok(t) => {
                self.out.push('"');
                self.push_date(jiff::tz::Offset::UTC.to_datetime(t).date());
                self.out.push('"');
            }
            Err(_) => self.push_int(days),
        }
    }

    fn time_of_day(&mut self, nanos: i64, digits: usize) {
        if !S::KEEPS {
            return;
        }
        let (s, n) = (
            nanos.div_euclid(1_000_000_000),
            nanos.rem_euclid(1_000_000_000),
        );
        self.out.push('"');
        self.push_time(s, n as u32, digits);
        self.out.push('"');
    }

    fn timestamp(
        &mut self,
        nanos_per_unit: i128,
        digits: usize,
        utc: bool,
    ) -> Result<(), AvroError> {
        let v = self.long()?;
        if !S::KEEPS {
            return Ok(());
        }
        match jiff::Timestamp::from_nanosecond(i128::from(v) * nanos_per_unit) {
            Ok(t) => {
                let dt = jiff::tz::Offset::UTC.to_datetime(t);
                self.out.push('"');
                self.push_date(dt.date());
                self.out.push('T');
                let seconds = i64::from(dt.hour()) * 3600
                    + i64::from(dt.minute()) * 60
                    + i64::from(dt.second());
                self.push_time(seconds, dt.subsec_nanosecond() as u32, digits);
                if utc {
                    self.out.push('Z');
                }
                self.out.push('"');
            }
            Err(_) => self.push_int(v),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{RegisteredSchema, SchemaKind};

    fn schema(text: &str) -> AvroSchema {
        AvroSchema::parse(&ResolvedSchema {
            schema: RegisteredSchema {
                id: Some(1),
                subject: None,
                kind: SchemaKind::Avro,
                text: text.to_owned(),
                references: Vec::new(),
            },
            dependencies: Vec::new(),
        })
        .unwrap()
    }

    fn json(s: &AvroSchema, payload: &[u8]) -> Result<String, AvroError> {
        let mut out = String::new();
        s.to_json(payload, &mut out).map(|()| out)
    }

    #[test]
    fn decimal_points() {
        let point = |digits: &str, scale| {
            let mut out = String::new();
            let mut w = Walker {
                names: &HashMap::new(),
                bytes: &[],
                zero_width: 0,
                out: &mut out,
            };
            w.push_decimal(digits, scale);
            out
        };
        assert_eq!(point("1234", 2), "\"12.34\"");
        assert_eq!(point("-5", 3), "\"-0.005\"");
        assert_eq!(point("0", 2), "\"0.00\"");
        assert_eq!(point("77", 0), "\"77\"");
    }

    #[test]
    fn primitives_unions_and_logical_types() {
        let s = schema(
            r#"{"type":"record","name":"R","namespace":"n","fields":[
                {"name":"i","type":"int"},
                {"name":"s","type":["null","string"]},
                {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
                {"name":"day","type":{"type":"int","logicalType":"date"}},
                {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
                {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
                {"name":"m","type":{"type":"map","values":"long"}}
            ]}"#,
        );
        // i=-2 (3), s=branch 1 "hé" (02 06 68 c3 a9: 3 bytes), d=-1234 (len 2: fb 2e), day=1 (02),
        // ts=1000 (d0 0f), e=B (02), m={"k":1} (02 02 6b 02 00)
        let payload = [
            3, 2, 6, b'h', 0xc3, 0xa9, 4, 0xfb, 0x2e, 2, 0xd0, 0x0f, 2, 2, 2, b'k', 2, 0,
        ];
        assert_eq!(
            json(&s, &payload).unwrap(),
            r#"{"i":-2,"s":{"string":"hé"},"d":"-12.34","day":"1970-01-02","ts":"1970-01-01T00:00:01.000Z","e":"B","m":{"k":1}}"#
        );
    }

    #[test]
    fn lengths_beyond_the_bytes_allocate_nothing() {
        let s = schema(r#"{"type":"array","items":"long"}"#);
        // A block of 2^62 items in 10 bytes.
        let e = json(&s, &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]).unwrap_err();
        assert!(e.0.contains("items with"), "{e}");
        let s = schema(r#"{"type":"array","items":"null"}"#);
        let e = json(&s, &[0xfe, 0xff, 0xff, 0x7f]).unwrap_err();
        assert!(e.0.contains("zero bytes"), "{e}");
        let s = schema(r#""string""#);
        assert!(json(&s, &[0x80, 0x80, 0x80, 0x80, 0x01]).is_err());
        // Recursion deeper than the limit.
        let s = schema(
            r#"{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}"#,
        );
        let deep = [2u8; 400];
        assert!(json(&s, &deep).unwrap_err().0.contains("deeper"));
        let mut ok = vec![2u8; 10];
        ok.push(0);
        assert!(json(&s, &ok).is_ok());
    }

    #[test]
    fn strings_escape_at_every_position() {
        let s = schema(r#""string""#);
        for len in 0..20 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\u{1}', 'é'] {
                    let mut text: String = "a".repeat(len);
                    text.replace_range(at..at + 1, &special.to_string());
                    let mut payload = vec![(text.len() as u8) << 1];
                    payload.extend_from_slice(text.as_bytes());
                    let out = json(&s, &payload).unwrap();
                    let back: String = serde_json::from_str(&out).unwrap();
                    assert_eq!(back, text, "{out}");
                }
            }
        }
    }
}

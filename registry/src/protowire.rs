//! Protobuf messages to JSON straight from the wire bytes, with a plan made once per schema:
//! what `prost-reflect`'s `DynamicMessage` decoding and serialization print (checked against
//! them by the `registry_values` fuzz target and the unit tests), without building a dynamic
//! message per value. Well-known types (`google.protobuf.*`) go through `prost-reflect`.
//!
//! A message's fields are gathered in wire order, then printed in field-number order: a
//! singular scalar's last occurrence wins, a singular message's occurrences merge (their bytes
//! concatenated, as Protobuf merges them), repeated fields take packed and unpacked items, a
//! oneof prints its last member set, map entries print in key order (the last of equal keys).

use std::collections::HashMap;

use base64::Engine as _;
use prost_reflect::{
    Cardinality, DescriptorPool, DynamicMessage, Kind, MessageDescriptor, SerializeOptions,
};
use smallvec::SmallVec;

/// How deep messages may nest (`prost`'s limit).
const MAX_DEPTH: usize = 100;

/// The plans of every message of a descriptor pool.
#[derive(Debug, Clone)]
pub(crate) struct Plans {
    messages: Vec<MessagePlan>,
    by_name: HashMap<String, usize>,
}

#[derive(Debug, Clone)]
struct MessagePlan {
    descriptor: MessageDescriptor,
    /// Printed by prost-reflect (a well-known type).
    well_known: bool,
    /// `google.protobuf.Timestamp`, printed here as prost-reflect prints it (the common one).
    timestamp: bool,
    /// Whether any field is in a oneof.
    has_oneofs: bool,
    /// Sorted by number.
    fields: Vec<FieldPlan>,
}

#[derive(Debug, Clone)]
struct FieldPlan {
    number: u32,
    /// `"jsonName":`, escaped.
    key: String,
    kind: Scalar,
    repeated: bool,
    /// For a map field: the entry's key and value kinds.
    map: Option<(Scalar, Scalar)>,
    /// Printed when present even at its default value.
    presence: bool,
    /// The index of its oneof, when it is in one.
    oneof: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
    /// An enum: its values' names by number; `null` for `google.protobuf.NullValue`.
    Enum(HashMap<i32, String>, bool),
    /// A message: its plan's index.
    Message(usize),
}

fn scalar(kind: &Kind, by_name: &HashMap<String, usize>) -> Scalar {
    match kind {
        Kind::Double => Scalar::Double,
        Kind::Float => Scalar::Float,
        Kind::Int32 => Scalar::Int32,
        Kind::Int64 => Scalar::Int64,
        Kind::Uint32 => Scalar::Uint32,
        Kind::Uint64 => Scalar::Uint64,
        Kind::Sint32 => Scalar::Sint32,
        Kind::Sint64 => Scalar::Sint64,
        Kind::Fixed32 => Scalar::Fixed32,
        Kind::Fixed64 => Scalar::Fixed64,
        Kind::Sfixed32 => Scalar::Sfixed32,
        Kind::Sfixed64 => Scalar::Sfixed64,
        Kind::Bool => Scalar::Bool,
        Kind::String => Scalar::String,
        Kind::Bytes => Scalar::Bytes,
        Kind::Enum(e) => Scalar::Enum(
            e.values()
                .map(|v| (v.number(), v.name().to_owned()))
                .collect(),
            e.full_name() == "google.protobuf.NullValue",
        ),
        Kind::Message(m) => {
            Scalar::Message(by_name.get(m.full_name()).copied().unwrap_or(usize::MAX))
        }
    }
}

impl Plans {
    pub(crate) fn new(pool: &DescriptorPool) -> Plans {
        let by_name: HashMap<String, usize> = pool
            .all_messages()
            .enumerate()
            .map(|(i, m)| (m.full_name().to_owned(), i))
            .collect();
        let messages = pool
            .all_messages()
            .map(|m| {
                let oneofs: Vec<String> = m.oneofs().map(|o| o.name().to_owned()).collect();
                let mut fields: Vec<FieldPlan> = m
                    .fields()
                    .map(|f| {
                        let kind = f.kind();
                        let map = if f.is_map() {
                            kind.as_message().map(|entry| {
                                (
                                    scalar(&entry.map_entry_key_field().kind(), &by_name),
                                    scalar(&entry.map_entry_value_field().kind(), &by_name),
                                )
                            })
                        } else {
                            None
                        };
                        let mut key = Vec::new();
                        let _ = serde_json::to_writer(&mut key, f.json_name());
                        key.push(b':');
                        FieldPlan {
                            number: f.number(),
                            key: String::from_utf8(key).unwrap_or_default(),
                            kind: scalar(&kind, &by_name),
                            repeated: f.cardinality() == Cardinality::Repeated,
                            map,
                            presence: f.supports_presence(),
                            oneof: f
                                .containing_oneof()
                                .and_then(|o| oneofs.iter().position(|n| n == o.name())),
                        }
                    })
                    .collect();
                fields.sort_by_key(|f| f.number);
                MessagePlan {
                    has_oneofs: fields.iter().any(|f| f.oneof.is_some()),
                    well_known: m.full_name().starts_with("google.protobuf."),
                    timestamp: m.full_name() == "google.protobuf.Timestamp",
                    descriptor: m,
                    fields,
                }
            })
            .collect();
        Plans { messages, by_name }
    }

    /// Appends the JSON of `bytes`, a `message`, to `out`.
    pub(crate) fn to_json(
        &self,
        message: &MessageDescriptor,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let plan = *self
            .by_name
            .get(message.full_name())
            .ok_or_else(|| format!("no plan for {}", message.full_name()))?;
        self.message(plan, bytes, out, 0)
    }

    fn message(
        &self,
        plan: usize,
        bytes: &[u8],
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("recursion limit reached".into());
        }
        let plan = self
            .messages
            .get(plan)
            .ok_or_else(|| "a field of an unknown message type".to_owned())?;
        if plan.timestamp {
            return timestamp(bytes, out);
        }
        if plan.well_known {
            let message = DynamicMessage::decode(plan.descriptor.clone(), bytes)
                .map_err(|e| e.to_string())?;
            let mut serializer = serde_json::Serializer::new(&mut *out);
            return message
                .serialize_with_options(&mut serializer, &SerializeOptions::new())
                .map_err(|e| e.to_string());
        }
        // (field index, wire type, the field's bytes: a varint's or fixed value's, or a
        // length-delimited field's contents), in wire order.
        let mut seen: SmallVec<[(usize, u8, &[u8]); 24]> = SmallVec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let key = varint(&mut rest)?;
            let number = key >> 3;
            let wire = (key & 7) as u8;
            if number == 0 || number > u64::from(u32::MAX >> 3) {
                return Err(format!("invalid field number {number}"));
            }
            let value = take_value(&mut rest, wire)?;
            let Ok(index) = plan
                .fields
                .binary_search_by_key(&(number as u32), |f| f.number)
            else {
                continue; // an unknown field: not printed
            };
            let field = &plan.fields[index];
            let expected = wire_type(&field.kind);
            let packed = field.repeated && field.map.is_none() && wire == 2 && expected != 2;
            if wire != expected && !packed {
                return Err(format!("invalid wire type {wire} for field {number}"));
            }
            seen.push((index, wire, value));
        }
        // A oneof prints only its last member set.
        let mut oneof_last: SmallVec<[(usize, usize); 4]> = SmallVec::new();
        if plan.has_oneofs {
            for &(index, _, _) in &seen {
                if let Some(o) = plan.fields[index].oneof {
                    match oneof_last.iter_mut().find(|(of, _)| *of == o) {
                        Some(last) => last.1 = index,
                        None => oneof_last.push((o, index)),
                    }
                }
            }
        }
        // Usually in order already (serializers write fields by number).
        if !seen.is_sorted_by_key(|&(index, _, _)| index) {
            seen.sort_by_key(|&(index, _, _)| index);
        }
        out.push(b'{');
        let mut first = true;
        let mut at = 0;
        while at < seen.len() {
            let index = seen[at].0;
            let end = at + seen[at..].iter().take_while(|s| s.0 == index).count();
            let group = &seen[at..end];
            at = end;
            let field = &plan.fields[index];
            if let Some(o) = field.oneof {
                if oneof_last
                    .iter()
                    .any(|&(of, last)| of == o && last != index)
                {
                    continue;
                }
            }
            let mark = out.len();
            if !first {
                out.push(b',');
            }
            out.extend_from_slice(field.key.as_bytes());
            let printed = if let Some((key_kind, value_kind)) = &field.map {
                self.map(key_kind, value_kind, group, out, depth)?
            } else if field.repeated {
                self.list(&field.kind, group, out, depth)?
            } else {
                self.singular(field, group, out, depth)?
            };
            if printed {
                first = false;
            } else {
                out.truncate(mark);
            }
        }
        out.push(b'}');
        Ok(())
    }

    fn singular(
        &self,
        field: &FieldPlan,
        group: &[(usize, u8, &[u8])],
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool, String> {
        if let Scalar::Message(plan) = field.kind {
            // Occurrences of a message merge: their bytes, concatenated.
            if group.len() == 1 {
                self.message(plan, group[0].2, out, depth + 1)?;
            } else {
                let merged: Vec<u8> = group.iter().flat_map(|g| g.2.iter().copied()).collect();
                self.message(plan, &merged, out, depth + 1)?;
            }
            return Ok(true);
        }
        let (_, _, last) = group[group.len() - 1];
        let mut bytes = last;
        let value = read_scalar(&field.kind, &mut bytes)?;
        if !field.presence && value.is_default() {
            return Ok(false);
        }
        value.write(&field.kind, out)?;
        Ok(true)
    }

    fn list(
        &self,
        kind: &Scalar,
        group: &[(usize, u8, &[u8])],
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool, String> {
        let mark = out.len();
        out.push(b'[');
        let mut count = 0usize;
        for &(_, wire, bytes) in group {
            let packed = wire == 2 && wire_type(kind) != 2;
            let mut items = bytes;
            loop {
                if packed && items.is_empty() {
                    break;
                }
                if count > 0 {
                    out.push(b',');
                }
                count += 1;
                match kind {
                    Scalar::Message(plan) => self.message(*plan, items, out, depth + 1)?,
                    _ => read_scalar(kind, &mut items)?.write(kind, out)?,
                }
                if !packed {
                    break;
                }
            }
        }
        if count == 0 {
            out.truncate(mark);
            return Ok(false);
        }
        out.push(b']');
        Ok(true)
    }

    fn map(
        &self,
        key_kind: &Scalar,
        value_kind: &Scalar,
        group: &[(usize, u8, &[u8])],
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool, String> {
        // (key, the value's bytes, or none for a default value), last wins.
        let mut entries: Vec<(MapKey, Option<&[u8]>)> = Vec::with_capacity(group.len());
        for &(_, _, entry) in group {
            let mut rest = entry;
            let mut key = None;
            let mut value = None;
            while !rest.is_empty() {
                let tag = varint(&mut rest)?;
                let wire = (tag & 7) as u8;
                let bytes = take_value(&mut rest, wire)?;
                match tag >> 3 {
                    1 if wire == wire_type(key_kind) => {
                        let mut b = bytes;
                        key = Some(read_scalar(key_kind, &mut b)?);
                    }
                    2 if wire == wire_type(value_kind) => value = Some(bytes),
                    1 | 2 => return Err(format!("invalid wire type {wire} in a map entry")),
                    _ => {}
                }
            }
            let key = MapKey::of(key.unwrap_or_else(|| Value::default_of(key_kind)))?;
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(e) => e.1 = value,
                None => entries.push((key, value)),
            }
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        out.push(b'{');
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let mut text = Vec::new();
            let _ = serde_json::to_writer(&mut text, &key.text());
            out.extend_from_slice(&text);
            out.push(b':');
            match (value, value_kind) {
                (Some(bytes), Scalar::Message(plan)) => {
                    self.message(*plan, bytes, out, depth + 1)?
                }
                (None, Scalar::Message(plan)) => self.message(*plan, &[], out, depth + 1)?,
                (Some(bytes), kind) => {
                    let mut b = *bytes;
                    read_scalar(kind, &mut b)?.write(kind, out)?;
                }
                (None, kind) => Value::default_of(kind).write(kind, out)?,
            }
        }
        out.push(b'}');
        Ok(true)
    }
}

/// A `google.protobuf.Timestamp` as prost-reflect prints it: RFC 3339 in UTC, through
/// prost-types' own formatting, with prost-reflect's range check.
fn timestamp(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    const MIN_SECONDS: i64 = -62_135_596_800;
    const MAX_SECONDS: i64 = 253_402_300_799;
    let mut t = prost_types::Timestamp::default();
    let mut rest = bytes;
    while !rest.is_empty() {
        let key = varint(&mut rest)?;
        let wire = (key & 7) as u8;
        match (key >> 3, wire) {
            (1, 0) => t.seconds = varint(&mut rest)? as i64,
            (2, 0) => t.nanos = varint(&mut rest)? as i32,
            (1 | 2, _) => return Err(format!("invalid wire type {wire}")),
            (0, _) => return Err("invalid field number 0".into()),
            _ => {
                take_value(&mut rest, wire)?;
            }
        }
    }
    if !(MIN_SECONDS..=MAX_SECONDS).contains(&t.seconds) {
        return Err("timestamp out of range".into());
    }
    use std::io::Write as _;
    write!(out, "\"{t}\"").map_err(|e| e.to_string())
}

/// The wire type a kind is written with when not packed.
fn wire_type(kind: &Scalar) -> u8 {
    match kind {
        Scalar::Double | Scalar::Fixed64 | Scalar::Sfixed64 => 1,
        Scalar::Float | Scalar::Fixed32 | Scalar::Sfixed32 => 5,
        Scalar::String | Scalar::Bytes | Scalar::Message(_) => 2,
        _ => 0,
    }
}

fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for i in 0..10 {
        let Some((&b, rest)) = bytes.split_first() else {
            return Err("cut short inside a varint".into());
        };
        *bytes = rest;
        if i == 9 && b > 1 {
            return Err("invalid varint".into());
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("invalid varint".into())
}

/// The bytes of one field's value of wire type `wire` (a length-delimited field's contents).
fn take_value<'a>(rest: &mut &'a [u8], wire: u8) -> Result<&'a [u8], String> {
    let n = match wire {
        0 => {
            let start = *rest;
            varint(rest)?;
            return Ok(&start[..start.len() - rest.len()]);
        }
        1 => 8,
        5 => 4,
        2 => {
            let n = varint(rest)?;
            usize::try_from(n).map_err(|_| "a length too large".to_owned())?
        }
        3 | 4 => return Err("groups are not supported".into()),
        w => return Err(format!("invalid wire type {w}")),
    };
    if n > rest.len() {
        return Err(format!("a field of {n} bytes with {} left", rest.len()));
    }
    let (value, tail) = rest.split_at(n);
    *rest = tail;
    Ok(value)
}

/// A scalar read off the wire.
#[derive(Debug, Clone, PartialEq)]
enum Value<'a> {
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    Bool(bool),
    Str(&'a str),
    Bytes(&'a [u8]),
    Enum(i32),
}

fn read_scalar<'a>(kind: &Scalar, bytes: &mut &'a [u8]) -> Result<Value<'a>, String> {
    let fixed = |bytes: &mut &'a [u8], n: usize| -> Result<&'a [u8], String> {
        if bytes.len() < n {
            return Err("cut short".into());
        }
        let (v, rest) = bytes.split_at(n);
        *bytes = rest;
        Ok(v)
    };
    Ok(match kind {
        Scalar::Double => Value::F64(f64::from_le_bytes(
            fixed(bytes, 8)?.try_into().unwrap_or([0; 8]),
        )),
        Scalar::Float => Value::F32(f32::from_le_bytes(
            fixed(bytes, 4)?.try_into().unwrap_or([0; 4]),
        )),
        Scalar::Fixed64 => Value::U64(u64::from_le_bytes(
            fixed(bytes, 8)?.try_into().unwrap_or([0; 8]),
        )),
        Scalar::Sfixed64 => Value::I64(i64::from_le_bytes(
            fixed(bytes, 8)?.try_into().unwrap_or([0; 8]),
        )),
        Scalar::Fixed32 => Value::U64(u64::from(u32::from_le_bytes(
            fixed(bytes, 4)?.try_into().unwrap_or([0; 4]),
        ))),
        Scalar::Sfixed32 => Value::I64(i64::from(i32::from_le_bytes(
            fixed(bytes, 4)?.try_into().unwrap_or([0; 4]),
        ))),
        Scalar::Int32 => Value::I64(i64::from(varint(bytes)? as i32)),
        Scalar::Int64 => Value::I64(varint(bytes)? as i64),
        Scalar::Uint32 => Value::U64(u64::from(varint(bytes)? as u32)),
        Scalar::Uint64 => Value::U64(varint(bytes)?),
        Scalar::Sint32 => {
            let v = varint(bytes)? as u32;
            Value::I64(i64::from((v >> 1) as i32 ^ -((v & 1) as i32)))
        }
        Scalar::Sint64 => {
            let v = varint(bytes)?;
            Value::I64((v >> 1) as i64 ^ -((v & 1) as i64))
        }
        Scalar::Bool => Value::Bool(varint(bytes)? != 0),
        Scalar::Enum(..) => Value::Enum(varint(bytes)? as i32),
        Scalar::String => {
            let all = std::mem::take(bytes);
            Value::Str(
                std::str::from_utf8(all)
                    .map_err(|_| "invalid string value: data is not UTF-8 encoded".to_owned())?,
            )
        }
        Scalar::Bytes => Value::Bytes(std::mem::take(bytes)),
        Scalar::Message(_) => return Err("a message where a scalar was expected".into()),
    })
}

impl Value<'_> {
    fn default_of(kind: &Scalar) -> Value<'static> {
        match kind {
            Scalar::Double => Value::F64(0.0),
            Scalar::Float => Value::F32(0.0),
            Scalar::Fixed64 | Scalar::Fixed32 | Scalar::Uint32 | Scalar::Uint64 => Value::U64(0),
            Scalar::Bool => Value::Bool(false),
            Scalar::String => Value::Str(""),
            Scalar::Bytes => Value::Bytes(&[]),
            Scalar::Enum(..) => Value::Enum(0),
            _ => Value::I64(0),
        }
    }

    fn is_default(&self) -> bool {
        match self {
            Value::I64(v) => *v == 0,
            Value::U64(v) => *v == 0,
            // -0.0 too, as prost-reflect compares them.
            Value::F32(v) => *v == 0.0,
            Value::F64(v) => *v == 0.0,
            Value::Bool(v) => !v,
            Value::Str(v) => v.is_empty(),
            Value::Bytes(v) => v.is_empty(),
            Value::Enum(v) => *v == 0,
        }
    }

    fn write(&self, kind: &Scalar, out: &mut Vec<u8>) -> Result<(), String> {
        let wide = matches!(
            kind,
            Scalar::Int64 | Scalar::Uint64 | Scalar::Sint64 | Scalar::Fixed64 | Scalar::Sfixed64
        );
        let quote = |out: &mut Vec<u8>, s: &str| {
            out.push(b'"');
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        };
        match self {
            Value::I64(v) if wide => quote(out, itoa::Buffer::new().format(*v)),
            Value::U64(v) if wide => quote(out, itoa::Buffer::new().format(*v)),
            Value::I64(v) => out.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes()),
            Value::U64(v) => out.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes()),
            Value::F32(v) if v.is_finite() => {
                out.extend_from_slice(zmij::Buffer::new().format_finite(*v).as_bytes())
            }
            Value::F64(v) if v.is_finite() => {
                out.extend_from_slice(zmij::Buffer::new().format_finite(*v).as_bytes())
            }
            Value::F32(v) => non_finite(f64::from(*v), out),
            Value::F64(v) => non_finite(*v, out),
            Value::Bool(v) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
            Value::Str(s) => serde_json::to_writer(&mut *out, s).map_err(|e| e.to_string())?,
            Value::Bytes(b) => {
                out.push(b'"');
                let start = out.len();
                out.resize(start + base64::encoded_len(b.len(), true).unwrap_or(0), 0);
                let n = base64::engine::general_purpose::STANDARD
                    .encode_slice(b, &mut out[start..])
                    .map_err(|e| e.to_string())?;
                out.truncate(start + n);
                out.push(b'"');
            }
            Value::Enum(n) => match kind {
                Scalar::Enum(_, true) => out.extend_from_slice(b"null"),
                Scalar::Enum(names, _) => match names.get(n) {
                    Some(name) => {
                        serde_json::to_writer(&mut *out, name).map_err(|e| e.to_string())?
                    }
                    None => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
                },
                _ => return Err("an enum value of a field that is not an enum".into()),
            },
        }
        Ok(())
    }
}

fn non_finite(v: f64, out: &mut Vec<u8>) {
    out.extend_from_slice(if v.is_nan() {
        b"\"NaN\""
    } else if v > 0.0 {
        b"\"Infinity\""
    } else {
        b"\"-Infinity\""
    });
}

/// A map key, ordered as prost-reflect's `MapKey` (bools, then integers, then strings).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum MapKey<'a> {
    Bool(bool),
    I64(i64),
    U64(u64),
    Str(&'a str),
}

impl<'a> MapKey<'a> {
    fn of(value: Value<'a>) -> Result<MapKey<'a>, String> {
        Ok(match value {
            Value::Bool(b) => MapKey::Bool(b),
            Value::I64(v) => MapKey::I64(v),
            Value::U64(v) => MapKey::U64(v),
            Value::Str(s) => MapKey::Str(s),
            _ => return Err("a map key of a type keys can't have".into()),
        })
    }

    fn text(&self) -> String {
        match self {
            MapKey::Bool(b) => b.to_string(),
            MapKey::I64(v) => v.to_string(),
            MapKey::U64(v) => v.to_string(),
            MapKey::Str(s) => (*s).to_owned(),
        }
    }
}

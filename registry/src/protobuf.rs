//! Protobuf values to JSON: the schema (`.proto` text, compiled at run time by `protox`, pure
//! Rust, no `protoc`; or a base64 `FileDescriptorProto`, as registries answer with
//! `format=serialized`) and its references (imports) into one descriptor pool, the message
//! type picked by the message indexes of the framing, the payload decoded by `prost-reflect`.
//!
//! The JSON is Protobuf's canonical JSON mapping, as `JsonFormat.printer()` in Confluent's
//! Protobuf console consumer and `MessageToDict` in confluent-kafka print it: field names in
//! lowerCamelCase, 64-bit integers as strings, enums by name, bytes in base64, fields left at
//! their default value omitted, well-known types in their own forms (`Timestamp` as an RFC 3339
//! string, `Duration` as `"1.5s"`, wrappers as their value), and map entries in key order (so
//! the same bytes always print the same).

use std::collections::HashMap;

use base64::Engine as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, Kind, MapKey, MessageDescriptor, ReflectMessage,
    SerializeOptions, Value,
};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::client::ResolvedSchema;

/// Why a Protobuf schema or value can't be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtoError(String);

/// A Protobuf schema, compiled, with its imports.
#[derive(Debug, Clone)]
pub struct ProtoSchema {
    file: prost_reflect::FileDescriptor,
    plans: crate::protowire::Plans,
}

/// The name the schema itself gets in the pool (its imports keep the names the schema uses).
const ROOT: &str = "kseek-registry-schema.proto";

/// The registry's schema texts by the names they are imported as.
struct Sources(HashMap<String, String>);

impl FileResolver for Sources {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match self.0.get(name) {
            Some(text) => file_of(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// A schema's text as a file: `.proto` source, or a base64 `FileDescriptorProto`.
fn file_of(name: &str, text: &str) -> Result<File, protox::Error> {
    if let Some(bytes) = serialized(text) {
        if let Ok(mut file) = File::decode_file_descriptor_proto(bytes.as_slice()) {
            // Imported under the name the referring schema uses.
            let mut proto = file.file_descriptor_proto().clone();
            proto.name = Some(name.to_owned());
            file = File::from_file_descriptor_proto(proto);
            return Ok(file);
        }
    }
    File::from_source(name, text)
}

/// The bytes of a base64 text (no `.proto` source is valid base64 of a descriptor: it has
/// spaces, braces or semicolons).
fn serialized(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if text.is_empty() || text.contains(|c: char| c.is_whitespace() || c == ';' || c == '{') {
        return None;
    }
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

impl ProtoSchema {
    /// Compiles a Protobuf schema and its references.
    ///
    /// # Errors
    /// A schema or import that does not compile, an import none of the references provides.
    pub fn parse(resolved: &ResolvedSchema) -> Result<ProtoSchema, ProtoError> {
        let mut sources: HashMap<String, String> = resolved
            .dependencies
            .iter()
            .map(|(name, s)| (name.clone(), s.text.clone()))
            .collect();
        sources.insert(ROOT.to_owned(), resolved.schema.text.clone());
        let mut chain = ChainFileResolver::new();
        chain.add(Sources(sources));
        chain.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(chain);
        compiler.include_imports(true);
        compiler
            .open_file(ROOT)
            .map_err(|e| ProtoError(format!("the Protobuf schema does not compile: {e}")))?;
        let pool: DescriptorPool = compiler.descriptor_pool();
        let file = pool
            .get_file_by_name(ROOT)
            .ok_or_else(|| ProtoError("the compiled schema is missing".into()))?;
        let plans = crate::protowire::Plans::new(&pool);
        Ok(ProtoSchema { file, plans })
    }

    /// The message type at `indexes` (the first message of the file is `[0]`, its second
    /// nested message `[0, 1]`).
    ///
    /// # Errors
    /// An index past the messages there are.
    pub fn message(&self, indexes: &[i32]) -> Result<MessageDescriptor, ProtoError> {
        let missing = || {
            ProtoError(format!(
                "the message indexes {indexes:?} name no message of the schema"
            ))
        };
        let (&first, rest) = indexes.split_first().ok_or_else(missing)?;
        let mut message = self
            .file
            .messages()
            .nth(usize::try_from(first).map_err(|_| missing())?)
            .ok_or_else(missing)?;
        for &i in rest {
            let child = message
                .child_messages()
                .nth(usize::try_from(i).map_err(|_| missing())?)
                .ok_or_else(missing)?;
            message = child;
        }
        Ok(message)
    }

    /// Appends the JSON of `payload`, a message of the type at `indexes`, to `out`, straight
    /// from the wire bytes (`protowire`). On error `out` may hold part of the value.
    ///
    /// # Errors
    /// Bytes that are not a message of that type: every length is checked against the bytes
    /// present, nesting is limited to 100 levels.
    pub fn to_json(
        &self,
        indexes: &[i32],
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        let descriptor = self.message(indexes)?;
        self.plans
            .to_json(&descriptor, payload, out)
            .map_err(|e| ProtoError(format!("not a {} message: {e}", descriptor.full_name())))
    }

    /// [`ProtoSchema::to_json`] the slow way: a `prost-reflect` dynamic message, serialized
    /// (map entries in key order). The reference the fast path is checked against.
    ///
    /// # Errors
    /// As [`ProtoSchema::to_json`].
    pub fn to_json_dynamic(
        &self,
        indexes: &[i32],
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        let descriptor = self.message(indexes)?;
        let message = DynamicMessage::decode(descriptor.clone(), payload)
            .map_err(|e| ProtoError(format!("not a {} message: {e}", descriptor.full_name())))?;
        let mut serializer = serde_json::Serializer::new(out);
        Msg(&message).serialize(&mut serializer).map_err(|e| {
            ProtoError(format!(
                "cannot print the {} message: {e}",
                descriptor.full_name()
            ))
        })
    }
}

/// A message in the canonical JSON mapping, with map entries in key order (prost-reflect's
/// maps are hash maps: printed as they are, two runs over the same bytes would differ).
/// Well-known types are printed by prost-reflect (they hold no maps but `Struct`'s).
struct Msg<'a>(&'a DynamicMessage);

/// A field's value.
struct Field<'a>(&'a prost_reflect::FieldDescriptor, &'a Value);

/// One value of a kind: a singular field, an item of a list, a map entry's value.
struct Item<'a>(&'a Kind, &'a Value);

impl Serialize for Msg<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let descriptor = self.0.descriptor();
        if descriptor.full_name().starts_with("google.protobuf.") {
            return self
                .0
                .serialize_with_options(serializer, &SerializeOptions::new());
        }
        let mut map = serializer.serialize_map(None)?;
        for (field, value) in self.0.fields() {
            map.serialize_entry(field.json_name(), &Field(&field, value))?;
        }
        map.end()
    }
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kind = self.0.kind();
        match self.1 {
            Value::List(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Item(&kind, item))?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let value_kind = kind
                    .as_message()
                    .map(|entry| entry.map_entry_value_field().kind());
                let Some(value_kind) = value_kind else {
                    return Err(serde::ser::Error::custom(
                        "a map field without an entry type",
                    ));
                };
                let mut sorted: Vec<(&MapKey, &Value)> = entries.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                let mut map = serializer.serialize_map(Some(sorted.len()))?;
                for (key, value) in sorted {
                    let key = match key {
                        MapKey::Bool(b) => b.to_string(),
                        MapKey::I32(n) => n.to_string(),
                        MapKey::I64(n) => n.to_string(),
                        MapKey::U32(n) => n.to_string(),
                        MapKey::U64(n) => n.to_string(),
                        MapKey::String(s) => s.clone(),
                    };
                    map.serialize_entry(&key, &Item(&value_kind, value))?;
                }
                map.end()
            }
            value => Item(&kind, value).serialize(serializer),
        }
    }
}

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let float = |serializer: S, v: f64| {
            if v.is_nan() {
                serializer.serialize_str("NaN")
            } else if v.is_infinite() {
                serializer.serialize_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
            } else {
                serializer.serialize_f64(v)
            }
        };
        match self.1 {
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::I32(n) => serializer.serialize_i32(*n),
            Value::U32(n) => serializer.serialize_u32(*n),
            // 64-bit integers as strings, as the mapping has them (JSON numbers are doubles).
            Value::I64(n) => serializer.collect_str(n),
            Value::U64(n) => serializer.collect_str(n),
            Value::F32(v) if v.is_finite() => serializer.serialize_f32(*v),
            Value::F32(v) => float(serializer, f64::from(*v)),
            Value::F64(v) => float(serializer, *v),
            Value::String(text) => serializer.serialize_str(text),
            Value::Bytes(bytes) => {
                serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            Value::EnumNumber(n) => match self.0.as_enum() {
                Some(e) if e.full_name() == "google.protobuf.NullValue" => {
                    serializer.serialize_unit()
                }
                Some(e) => match e.get_value(*n) {
                    Some(v) => serializer.serialize_str(v.name()),
                    None => serializer.serialize_i32(*n),
                },
                None => serializer.serialize_i32(*n),
            },
            Value::Message(m) => Msg(m).serialize(serializer),
            Value::List(_) | Value::Map(_) => Err(serde::ser::Error::custom(
                "a list or map inside a list or map",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Reference, RegisteredSchema, SchemaKind};

    fn resolved(text: &str, deps: &[(&str, &str)]) -> ResolvedSchema {
        let schema = |text: &str| RegisteredSchema {
            id: None,
            subject: None,
            kind: SchemaKind::Protobuf,
            text: text.to_owned(),
            references: Vec::new(),
        };
        let mut root = schema(text);
        root.references = deps
            .iter()
            .map(|(name, _)| Reference {
                name: (*name).to_owned(),
                subject: (*name).to_owned(),
                version: 1,
            })
            .collect();
        ResolvedSchema {
            schema: root,
            dependencies: deps
                .iter()
                .map(|(n, t)| ((*n).to_owned(), schema(t)))
                .collect(),
        }
    }

    #[test]
    fn nested_messages_imports_and_well_known_types() {
        let schema = ProtoSchema::parse(&resolved(
            r#"syntax = "proto3";
               package shop;
               import "common/money.proto";
               import "google/protobuf/timestamp.proto";
               message Order {
                 int64 id = 1;
                 common.Money total = 2;
                 google.protobuf.Timestamp at = 3;
                 message Line { string sku = 1; }
                 repeated Line lines = 4;
               }"#,
            &[("common/money.proto", "syntax = \"proto3\"; package common; message Money { string currency = 1; int64 units = 2; }")],
        ))
        .unwrap();
        // Order{id: 7, total: {currency: "EUR", units: 5}, at: 1s, lines: [{sku: "a"}]}
        let payload = [
            0x08, 7, 0x12, 7, 0x0a, 3, b'E', b'U', b'R', 0x10, 5, 0x1a, 2, 0x08, 1, 0x22, 3, 0x0a,
            1, b'a',
        ];
        let mut out = Vec::new();
        schema.to_json(&[0], &payload, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"id":"7","total":{"currency":"EUR","units":"5"},"at":"1970-01-01T00:00:01Z","lines":[{"sku":"a"}]}"#
        );
        // [0, 0]: the nested Line.
        let mut out = Vec::new();
        schema.to_json(&[0, 0], &[0x0a, 1, b'b'], &mut out).unwrap();
        assert_eq!(out, br#"{"sku":"b"}"#);
        assert!(schema.message(&[1]).is_err());
        assert!(schema
            .to_json(&[0], &[0x12, 50, 1], &mut Vec::new())
            .is_err());
    }

    #[test]
    fn an_import_nobody_provides() {
        let e = ProtoSchema::parse(&resolved(
            "syntax = \"proto3\"; import \"missing.proto\"; message A { int32 a = 1; }",
            &[],
        ))
        .unwrap_err();
        assert!(e.0.contains("missing.proto"), "{e}");
    }

    #[test]
    fn maps_print_in_key_order() {
        let schema = ProtoSchema::parse(&resolved(
            "syntax = \"proto3\"; message M { map<string, int64> m = 1; }",
            &[],
        ))
        .unwrap();
        // Entries z=1, a=2, m=3, in that order on the wire.
        let entry = |k: u8, v: u8| [0x0a, 5, 0x0a, 1, k, 0x10, v];
        let payload = [entry(b'z', 1), entry(b'a', 2), entry(b'm', 3)].concat();
        let mut out = Vec::new();
        schema.to_json(&[0], &payload, &mut out).unwrap();
        assert_eq!(out, br#"{"m":{"a":"2","m":"3","z":"1"}}"#);
    }
}

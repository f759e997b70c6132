//! `-s key=FORMAT`, `-s value=FORMAT`: keys and values decoded before they are printed,
//! Avro through a Schema Registry (`-r URL`, or `schema.registry.url`).
//!
//! Schemas are fetched before a batch is formatted ([`Decoding::prepare`], the one `await`),
//! so formatting stays a plain loop; each schema id is asked once.

use std::collections::HashMap;
use std::sync::Arc;

use kseek::read::FetchedBatch;
use kseek_registry::avro::AvroSchema;
pub(crate) use kseek_registry::columns::ReaderSchema;
use kseek_registry::protobuf::ProtoSchema;
use kseek_registry::wire::Framed;
use kseek_registry::{Registry, RegistryError, SchemaKind};

use crate::fail::Fail;

/// How one side of a record (its key or its value) is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Serde {
    /// As it is: a JSON string when UTF-8, else base64 (the default).
    Bytes,
    /// UTF-8 text; anything else is a decode error.
    String,
    /// JSON text (a Confluent JSON Schema serializer's framing is taken off), printed as JSON.
    Json,
    /// Avro in Confluent's framing, with its schema from the registry.
    Avro,
    /// Protobuf in Confluent's framing (message indexes first), its schema from the registry.
    Protobuf,
    /// Whatever the registry says the framed value's schema is (Avro, Protobuf, JSON Schema);
    /// a value without the framing as `bytes`.
    Registry,
}

impl Serde {
    fn uses_registry(self) -> bool {
        matches!(self, Serde::Avro | Serde::Protobuf | Serde::Registry)
    }

    fn name(self) -> &'static str {
        match self {
            Serde::Bytes => "bytes",
            Serde::String => "string",
            Serde::Json => "json",
            Serde::Avro => "avro",
            Serde::Protobuf => "protobuf",
            Serde::Registry => "registry",
        }
    }
}

/// What a key or value that does not decode does (`--on-decode-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OnDecodeError {
    /// The read stops with an error naming the topic, partition and offset (exit 5);
    /// nothing of the record's batch is printed, a commit stops before it.
    Fail,
    /// The record is left out, and counted in the summary.
    Skip,
    /// The record is printed undecoded (as `-s bytes`), and counted in the summary.
    Raw,
}

/// Which side of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Key,
    Value,
}

impl Side {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Key => "key",
            Side::Value => "value",
        }
    }
}

/// The keys' and values' decoders, and the schemas fetched so far.
#[derive(Debug)]
pub(crate) struct Decoding {
    pub(crate) key: Serde,
    pub(crate) value: Serde,
    pub(crate) on_error: OnDecodeError,
    registry: Option<Registry>,
    /// Each schema id met: its parsed schema, or why it can't decode (an unknown id, a schema
    /// that is not Avro): a decode error for each record that uses it.
    schemas: HashMap<u32, Result<Arc<Parsed>, String>>,
    /// Records left out (`--on-decode-error skip`) and printed raw (`raw`).
    pub(crate) skipped: u64,
    pub(crate) raw: u64,
}

/// `-s` values: `FORMAT` (both sides), `key=FORMAT`, `value=FORMAT`; later wins.
pub(crate) fn parse_serdes(values: &[String]) -> Result<(Serde, Serde), Fail> {
    let (mut key, mut value) = (Serde::Bytes, Serde::Bytes);
    for v in values {
        let (side, format) = match v.split_once('=') {
            Some((side, format)) => (Some(side.trim()), format.trim()),
            None => (None, v.trim()),
        };
        let serde = match format.to_ascii_lowercase().as_str() {
            "bytes" => Serde::Bytes,
            "string" | "s" => Serde::String,
            "json" => Serde::Json,
            "avro" => Serde::Avro,
            "protobuf" => Serde::Protobuf,
            // A JSON Schema value is JSON text in Confluent's framing.
            "jsonschema" | "json_sr" => Serde::Json,
            "registry" | "auto" => Serde::Registry,
            _ => {
                return Err(Fail::usage(format!(
                    "-s {v}: unknown format {format:?}; use avro, protobuf, jsonschema, registry, json, string or bytes"
                )))
            }
        };
        match side {
            None => (key, value) = (serde, serde),
            Some("key") => key = serde,
            Some("value") => value = serde,
            Some(other) => {
                return Err(Fail::usage(format!(
                    "-s {v}: {other:?} is neither key nor value; write -s key=FORMAT or -s value=FORMAT"
                )))
            }
        }
    }
    Ok((key, value))
}

impl Decoding {
    /// Decoders for `key` and `value`; `registry` is needed when either is Avro.
    pub(crate) fn new(
        key: Serde,
        value: Serde,
        on_error: OnDecodeError,
        registry: Option<Registry>,
    ) -> Decoding {
        Decoding {
            key,
            value,
            on_error,
            registry,
            schemas: HashMap::new(),
            skipped: 0,
            raw: 0,
        }
    }

    /// The registry client, when one of the sides is Avro.
    pub(crate) fn registry(self) -> Option<Registry> {
        self.registry
    }

    /// Fetches the schemas of `batch`'s framed keys and values (`avro`, `protobuf`,
    /// `registry`) not fetched yet.
    ///
    /// # Errors
    /// The registry failed (unreachable, credentials refused, 5xx past the retry deadline):
    /// exit 6. An unknown schema id is not an error here but a decode error of its records.
    pub(crate) async fn prepare(&mut self, batch: &FetchedBatch) -> Result<(), Fail> {
        if !self.key.uses_registry() && !self.value.uses_registry() {
            return Ok(());
        }
        let Some(registry) = self.registry.clone() else {
            return Ok(());
        };
        let mut wanted = Vec::new();
        for record in batch.records().flatten() {
            for (serde, bytes) in [(self.key, record.key()), (self.value, record.value())] {
                if !serde.uses_registry() {
                    continue;
                }
                if let Some(Ok(framed)) = bytes.map(Framed::parse) {
                    if !self.schemas.contains_key(&framed.schema_id)
                        && !wanted.contains(&framed.schema_id)
                    {
                        wanted.push(framed.schema_id);
                    }
                }
            }
        }
        for id in wanted {
            let parsed = match registry.schema_by_id(id).await {
                Ok(resolved) => match resolved.schema.kind {
                    SchemaKind::Avro => AvroSchema::parse(&resolved)
                        .map(|s| Arc::new(Parsed::Avro(Box::new(s))))
                        .map_err(|e| format!("schema id {id} is not a valid Avro schema: {e}")),
                    SchemaKind::Protobuf => ProtoSchema::parse(&resolved)
                        .map(|s| Arc::new(Parsed::Protobuf(s)))
                        .map_err(|e| format!("schema id {id}: {e}")),
                    SchemaKind::Json => Ok(Arc::new(Parsed::Json)),
                    _ => Err(format!("schema id {id} is of a kind kseek does not know")),
                },
                Err(RegistryError::Status {
                    status: 404,
                    message,
                    ..
                }) => Err(format!(
                    "schema id {id} is not in the Schema Registry{}",
                    message.map(|m| format!(" ({m})")).unwrap_or_default()
                )),
                Err(e) => return Err(registry_failed(&e)),
            };
            self.schemas.insert(id, parsed);
        }
        Ok(())
    }

    /// Appends one side of a record as JSON (`json` true) or as template text.
    pub(crate) fn write(
        &self,
        out: &mut Vec<u8>,
        side: Side,
        bytes: Option<&[u8]>,
        json: bool,
    ) -> Result<(), String> {
        let serde = match side {
            Side::Key => self.key,
            Side::Value => self.value,
        };
        let Some(bytes) = bytes else {
            // A null key, a tombstone.
            if json {
                out.extend_from_slice(b"null");
            }
            return Ok(());
        };
        match serde {
            Serde::Bytes if json => crate::json::write_json_bytes(out, Some(bytes)),
            Serde::Bytes => out.extend_from_slice(bytes),
            Serde::String => {
                let s = std::str::from_utf8(bytes)
                    .map_err(|e| format!("the {} is not UTF-8 text ({e})", side.name()))?;
                if json {
                    crate::json::write_json_str(out, s);
                } else {
                    out.extend_from_slice(s.as_bytes());
                }
            }
            Serde::Json => write_json_text(out, side, bytes)?,
            // Not framed: as bytes.
            Serde::Registry if Framed::parse(bytes).is_err() => {
                if json {
                    crate::json::write_json_bytes(out, Some(bytes));
                } else {
                    out.extend_from_slice(bytes);
                }
            }
            Serde::Avro | Serde::Protobuf | Serde::Registry => {
                let framed =
                    Framed::parse(bytes).map_err(|e| format!("the {}: {e}", side.name()))?;
                let id = framed.schema_id;
                let schema = match self.schemas.get(&id) {
                    Some(Ok(schema)) => schema,
                    Some(Err(why)) => return Err(format!("the {}: {why}", side.name())),
                    None => {
                        return Err(format!(
                            "the {}: schema id {id} was not fetched (no registry)",
                            side.name()
                        ))
                    }
                };
                match (&**schema, serde) {
                    (Parsed::Avro(schema), Serde::Avro | Serde::Registry) => {
                        schema.to_json_bytes(framed.rest, out).map_err(|e| {
                            format!(
                                "the {} does not decode with its Avro schema (id {id}): {e}",
                                side.name()
                            )
                        })?;
                    }
                    (Parsed::Protobuf(schema), Serde::Protobuf | Serde::Registry) => {
                        let (indexes, payload) = framed
                            .protobuf_indexes()
                            .map_err(|e| format!("the {}: {e}", side.name()))?;
                        schema.to_json(&indexes, payload, out).map_err(|e| {
                            format!(
                                "the {} does not decode with its Protobuf schema (id {id}): {e}",
                                side.name()
                            )
                        })?;
                    }
                    (Parsed::Json, Serde::Registry) => write_json_text(out, side, framed.rest)?,
                    (parsed, _) => {
                        return Err(format!(
                            "the {}: schema id {id} is a {} schema, not {}",
                            side.name(),
                            parsed.kind_name(),
                            serde.name()
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}

/// JSON text, with a Confluent JSON Schema serializer's framing taken off when there is one.
fn write_json_text(out: &mut Vec<u8>, side: Side, bytes: &[u8]) -> Result<(), String> {
    let text = match Framed::parse(bytes) {
        Ok(framed) => framed.rest,
        Err(_) => bytes,
    };
    serde_json::from_slice::<serde::de::IgnoredAny>(text)
        .map_err(|e| format!("the {} is not JSON ({e})", side.name()))?;
    out.extend_from_slice(trim_ascii(text));
    Ok(())
}

/// A schema fetched from the registry, ready to decode with.
#[derive(Debug)]
enum Parsed {
    Avro(Box<AvroSchema>),
    Protobuf(ProtoSchema),
    /// JSON Schema: the payload is JSON text.
    Json,
}

impl Parsed {
    fn kind_name(&self) -> &'static str {
        match self {
            Parsed::Avro(_) => "AVRO",
            Parsed::Protobuf(_) => "PROTOBUF",
            Parsed::Json => "JSON",
        }
    }
}

/// `-s value=avro` (or `key=avro`) for Parquet and Arrow output: the values (keys) as one
/// struct column in a reader schema (by default the latest of `<topic>-value` or
/// `<topic>-key`), each writer schema resolved to it.
#[derive(Debug)]
pub(crate) struct ValueColumns {
    pub(crate) columns: kseek_registry::arrow::AvroColumns,
    /// Which side of the records, and the column replaced: `key` or `value`.
    pub(crate) side: Side,
    registry: Registry,
    /// Writer schema ids the registry does not have (their rows are decode errors).
    unknown: Vec<u32>,
    pub(crate) on_error: OnDecodeError,
}

impl ValueColumns {
    /// The column of `side` in the `reader` schema of `topic`'s subject for it.
    pub(crate) async fn new(
        registry: Registry,
        topic: &str,
        side: Side,
        reader: &ReaderSchema,
        on_error: OnDecodeError,
    ) -> Result<ValueColumns, Fail> {
        let subject = format!("{topic}-{}", side.name());
        let (fetched, named) = reader.fetch(&registry, &subject).await;
        let reader = match fetched {
            Ok(reader) => reader,
            Err(RegistryError::Status { status: 404, .. }) => {
                return Err(Fail {
                    code: crate::fail::DECODE,
                    message: format!(
                        "{named} is not in the Schema Registry: Parquet and Arrow output read every {} in that schema. Check the topic's name, or --{}-schema",
                        side.name(),
                        side.name()
                    ),
                })
            }
            Err(e) => return Err(registry_failed(&e)),
        };
        if reader.schema.kind != SchemaKind::Avro {
            return Err(Fail::usage(format!(
                "{named} is a {} schema, not Avro",
                reader.schema.kind.name()
            )));
        }
        let columns =
            kseek_registry::arrow::AvroColumns::new(&reader, side.name()).map_err(|e| Fail {
                code: crate::fail::DECODE,
                message: format!("{named} can't be read into columns: {e}"),
            })?;
        Ok(ValueColumns {
            columns,
            side,
            registry,
            unknown: Vec::new(),
            on_error,
        })
    }

    /// The side of `record` this column decodes.
    pub(crate) fn bytes_of<'r>(
        &self,
        record: &kseek::protocol::records::Record<'r>,
    ) -> Option<&'r [u8]> {
        match self.side {
            Side::Key => record.key(),
            Side::Value => record.value(),
        }
    }

    /// Fetches the writer schemas of `batch`'s keys or values not fetched yet.
    pub(crate) async fn prepare(&mut self, batch: &FetchedBatch) -> Result<(), Fail> {
        let mut wanted = Vec::new();
        for record in batch.records().flatten() {
            if let Some(Ok(framed)) = self.bytes_of(&record).map(Framed::parse) {
                let id = framed.schema_id;
                if !self.columns.knows(id) && !self.unknown.contains(&id) && !wanted.contains(&id) {
                    wanted.push(id);
                }
            }
        }
        for id in wanted {
            match self.registry.schema_by_id(id).await {
                Ok(resolved) if resolved.schema.kind == SchemaKind::Avro => {
                    if self.columns.add_writer(id, &resolved).is_err() {
                        self.unknown.push(id);
                    }
                }
                Ok(_) | Err(RegistryError::Status { status: 404, .. }) => self.unknown.push(id),
                Err(e) => return Err(registry_failed(&e)),
            }
        }
        Ok(())
    }
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &bytes[start..end]
}

/// The registry failed: exit 6.
pub(crate) fn registry_failed(e: &RegistryError) -> Fail {
    let hint = match e {
        RegistryError::Status {
            status: 401 | 403, ..
        } => "Check basic.auth.user.info (or bearer.auth.token) in -X or --config",
        RegistryError::Status { .. } => "Check the registry's health and logs",
        RegistryError::Unreachable { .. } => {
            "Check -r or schema.registry.url, and schema.registry.ssl.* for https"
        }
        _ => "Check -r or schema.registry.url points at a Schema Registry",
    };
    Fail {
        code: crate::fail::REGISTRY,
        message: format!("fetching a schema failed: {e}. {hint}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serdes_flags() {
        let s = |v: &[&str]| parse_serdes(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&[]).unwrap(), (Serde::Bytes, Serde::Bytes));
        assert_eq!(s(&["avro"]).unwrap(), (Serde::Avro, Serde::Avro));
        assert_eq!(
            s(&["key=string", "value=avro"]).unwrap(),
            (Serde::String, Serde::Avro)
        );
        assert!(s(&["value=xml"])
            .unwrap_err()
            .message
            .contains("unknown format"));
        assert!(s(&["val=avro"])
            .unwrap_err()
            .message
            .contains("neither key nor value"));
    }

    #[test]
    fn strings_and_json() {
        let d = Decoding::new(Serde::String, Serde::Json, OnDecodeError::Fail, None);
        let mut out = Vec::new();
        d.write(&mut out, Side::Key, Some(b"k\"1"), true).unwrap();
        d.write(&mut out, Side::Value, Some(b" {\"a\": [1]}\n"), true)
            .unwrap();
        d.write(&mut out, Side::Value, None, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"k\\\"1\"{\"a\": [1]}null"
        );
        let mut out = Vec::new();
        assert!(d
            .write(&mut out, Side::Key, Some(&[0xff]), true)
            .unwrap_err()
            .contains("not UTF-8"));
        assert!(d
            .write(&mut out, Side::Value, Some(b"{"), true)
            .unwrap_err()
            .contains("not JSON"));
        // A framed JSON Schema value.
        let mut out = Vec::new();
        d.write(&mut out, Side::Value, Some(b"\0\0\0\0\x07{\"a\":1}"), true)
            .unwrap();
        assert_eq!(out, b"{\"a\":1}");
    }
}

//! Values written by Confluent's serializers, decoded for kseek: the wire format
//! ([`wire`]), a Schema Registry client ([`Registry`]) configured with Confluent's property
//! names ([`RegistryConfig`]), Avro values rendered as JSON ([`avro`]), and a topic's Avro
//! values as Arrow columns after the Kafka record's ([`columns`]).
//!
//! Kept out of the `kseek` crate so that its footprint does not move: a program that reads
//! bytes does not carry an HTTP client.
//!
//! A value as a Confluent serializer wrote it, decoded with its schema (a program fetches the
//! schema with [`Registry::schema_by_id`]; here it is given):
//!
//! ```
//! use kseek_registry::avro::AvroSchema;
//! use kseek_registry::wire::Framed;
//! use kseek_registry::{RegisteredSchema, ResolvedSchema};
//!
//! let schema = AvroSchema::parse(&ResolvedSchema::new(RegisteredSchema::avro(
//!     r#"{"type":"record","name":"Order","fields":[
//!         {"name":"id","type":"long"},
//!         {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}"#,
//! )))?;
//! // Magic byte 0, schema id 7, then id = 21 (zigzag 42) and amount = 12.34 (1234 = 0x04d2).
//! let value = [0, 0, 0, 0, 7, 42, 4, 0x04, 0xd2];
//! let framed = Framed::parse(&value)?;
//! assert_eq!(framed.schema_id, 7);
//! let mut json = String::new();
//! schema.to_json(framed.rest, &mut json)?;
//! assert_eq!(json, r#"{"id":21,"amount":"12.34"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod arrow;
pub mod avro;
mod client;
pub mod columns;
mod config;
pub mod protobuf;
mod protowire;
mod unions;
pub mod wire;

pub use client::{
    Reference, RegisteredSchema, Registry, RegistryError, ResolvedSchema, SchemaKind, Version,
};
pub use config::{Auth, ConfigError, RegistryConfig};

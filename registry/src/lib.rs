//! Values written by Confluent's serializers, decoded for kseek: the wire format
//! ([`wire`]), a Schema Registry client ([`Registry`]) configured with Confluent's property
//! names ([`RegistryConfig`]), and Avro values rendered as JSON ([`avro`]).
//!
//! Kept out of the `kseek` crate so that its footprint does not move: a program that reads
//! bytes does not carry an HTTP client.

pub mod arrow;
pub mod avro;
mod client;
mod config;
pub mod protobuf;
mod protowire;
pub mod wire;

pub use client::{
    Reference, RegisteredSchema, Registry, RegistryError, ResolvedSchema, SchemaKind, Version,
};
pub use config::{Auth, ConfigError, RegistryConfig};

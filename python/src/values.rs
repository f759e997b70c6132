//! `value_format="avro"`: values decoded through the Schema Registry into columns.

use arrow_pyarrow::PyArrowType;
use arrow_schema::Schema;
use kseek::properties::Properties;
use kseek::ClientConfig;
use kseek_registry::columns::{ColumnsError, OnDecodeError, ReaderSchema, ValueDecoder};
use kseek_registry::{Registry, RegistryConfig};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{one_line, ConfigError, KafkaError};
use crate::runtime::block_on;
use crate::settings::settings;

/// A failure to decode values into columns: a subject that can't be used is a setting
/// ([`ConfigError`]); the registry, the network or a value that does not decode fail the read
/// ([`KafkaError`]).
pub(crate) fn columns_error(doing: &str, error: &ColumnsError) -> PyErr {
    let message = one_line(doing, error);
    match error {
        ColumnsError::Subject(_) => ConfigError::new_err(message),
        _ => KafkaError::new_err(message),
    }
}

/// How `value_format="avro"` reads values: the registry's URL (else `schema.registry.url`),
/// the reader schema (`latest`, `version:N`, `id:N`) and what a value that does not decode
/// does (`fail`, `skip`, `null`).
pub(crate) struct AvroValues<'a> {
    pub(crate) url: Option<&'a str>,
    pub(crate) schema: &'a str,
    pub(crate) on_error: &'a str,
}

/// The decoder of `topic`'s Avro values as `how` says, with the registry settings among
/// `properties`.
pub(crate) fn value_decoder(
    py: Python<'_>,
    topic: &str,
    how: &AvroValues<'_>,
    properties: &Properties,
    config: &ClientConfig,
) -> PyResult<ValueDecoder> {
    let on_error = OnDecodeError::parse(how.on_error).map_err(ConfigError::new_err)?;
    let reader = ReaderSchema::parse(how.schema)
        .map_err(|e| ConfigError::new_err(format!("value_schema {e}")))?;
    let settings = RegistryConfig::from_properties(properties, how.url, config)
        .map_err(|e| ConfigError::new_err(format!("Schema Registry settings: {e}")))?;
    let registry = Registry::new(&settings)
        .map_err(|e| ConfigError::new_err(one_line("Schema Registry settings", &e)))?;
    let topic = topic.to_owned();
    block_on(py, async move {
        ValueDecoder::with_schema(registry, &topic, reader, on_error).await
    })?
    .map(|d| {
        d.with_hint(
            "on_decode_error='skip' leaves such records out, 'null' keeps them with null fields",
        )
    })
    .map_err(|e| columns_error("reading the value schema", &e))
}

/// The Arrow schema of `topic`'s records with `value_format="avro"`: the Kafka record's
/// columns, then one per field of the reader schema (`value_schema`: `latest`, `version:N`
/// or `id:N` of the subject `<topic>-value`).
#[pyfunction]
#[pyo3(signature = (topic, *, schema_registry=None, value_schema="latest", bootstrap=None, properties=None))]
pub(crate) fn value_schema(
    py: Python<'_>,
    topic: &str,
    schema_registry: Option<&str>,
    value_schema: &str,
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyArrowType<Schema>> {
    let (config, props) = settings(bootstrap, properties)?;
    let how = AvroValues {
        url: schema_registry,
        schema: value_schema,
        on_error: "fail",
    };
    let decoder = value_decoder(py, topic, &how, &props, &config)?;
    Ok(PyArrowType(decoder.schema().as_ref().clone()))
}

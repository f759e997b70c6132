//! `kseek._kseek`, the extension module of the `kseek` Python package: plans, splits and reads
//! of Kafka windows with kseek's Rust reader, record batches handed to pyarrow through the
//! Arrow C data interface.
//!
//! The Python package (`python/kseek/`) wraps it: `kseek.plan`, `kseek.read` and the Spark data
//! source. Positions are the command line's (`kseek::position`), Kafka settings its `-X`
//! properties (`kseek::properties`).
//!
//! By concern: `settings` turns Python's arguments into client settings, topics and positions;
//! `plan` resolves plans and cuts them into splits; `reader` reads them into record batches;
//! `values` decodes Avro values through the Schema Registry; `runtime` blocks on the tokio
//! runtime with Ctrl-C still heard; `errors` holds the exceptions.

mod errors;
mod plan;
mod reader;
mod runtime;
mod settings;
mod values;

use pyo3::prelude::*;

use crate::errors::{ConfigError, KafkaError, KseekError};
use crate::plan::{PyPlan, PySplit};
use crate::reader::Reader;
use crate::values::value_schema;

/// The module.
#[pymodule]
fn _kseek(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("KseekError", py.get_type::<KseekError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("KafkaError", py.get_type::<KafkaError>())?;
    m.add_class::<PyPlan>()?;
    m.add_class::<PySplit>()?;
    m.add_class::<Reader>()?;
    m.add_function(wrap_pyfunction!(plan::plan, m)?)?;
    m.add_function(wrap_pyfunction!(value_schema, m)?)?;
    m.add_function(wrap_pyfunction!(plan::topics, m)?)?;
    Ok(())
}

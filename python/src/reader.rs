//! `Reader`: the record batches of plans and splits, read in order, as pyarrow batches.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use arrow_array::RecordBatch;
use arrow_pyarrow::PyArrowType;
use arrow_schema::Schema;
use kseek::read::{ReadOptions, TimeFilter};
use kseek::{Client, ClientConfig, Plan};
use kseek_arrow::{ArrowStream, BatchLimits, Split};
use kseek_registry::columns::{ValueColumns, ValueDecoder};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{kafka_error, ConfigError};
use crate::plan::{PyPlan, PySplit};
use crate::runtime::block_on;
use crate::settings::settings;
use crate::values::{columns_error, value_decoder, AvroValues};

/// What a [`Reader`] reads next.
pub(crate) enum Source {
    /// A whole plan, its partitions read together.
    Plan(Plan, Option<TimeFilter>),
    /// One split.
    Split(Split),
}

/// The state of a [`Reader`].
pub(crate) struct Reading {
    queue: VecDeque<Source>,
    current: Option<ArrowStream>,
    /// `value_format="avro"`: the topic's values decoded into columns, and the current
    /// stream's decoding state.
    values: Option<ValueDecoder>,
    decoding: Option<ValueColumns>,
    /// The settings each source is read with (a split's non-secret ones override them).
    config: ClientConfig,
    limits: BatchLimits,
    batch_bytes: usize,
    rows: u64,
}

/// Record batches of plans and splits, read in order: an iterator of `pyarrow.RecordBatch`
/// (`kseek.read` wraps it in a `pyarrow.RecordBatchReader`).
#[pyclass(module = "kseek")]
pub(crate) struct Reader {
    state: Mutex<Reading>,
}

impl Reader {
    fn state(&self) -> MutexGuard<'_, Reading> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Opens the read of `source`, in batches of `limits`. What is fetched ahead is bounded by
/// the batch size: Fetch responses of at most `batch_bytes` (1 to 50 MiB), and twice that
/// (2 to 64 MiB) waiting decoded.
pub(crate) async fn open(
    source: Source,
    config: &ClientConfig,
    limits: BatchLimits,
    batch_bytes: usize,
) -> kseek::Result<ArrowStream> {
    const MIB: usize = 1 << 20;
    let fetch = batch_bytes.clamp(MIB, 50 * MIB);
    let mut options =
        ReadOptions::default().fetch_max_bytes(i32::try_from(fetch).unwrap_or(i32::MAX));
    options.max_buffered_bytes = batch_bytes.saturating_mul(2).clamp(2 * MIB, 64 * MIB);
    match source {
        Source::Split(split) => {
            kseek_arrow::read_split(&split, config.clone(), options, limits).await
        }
        Source::Plan(plan, filter) => {
            if let Some(f) = filter {
                options = options.time_filter(f);
            }
            let client = Client::with_config(config.clone()).await?;
            Ok(ArrowStream::new(client.read(plan, options), limits))
        }
    }
}

#[pymethods]
impl Reader {
    /// Reads `sources` (a Plan, a Split, or a list of them) in order. `bootstrap` and
    /// `properties` are this process's own settings (TLS, SASL: a split carries none); a
    /// split's bootstrap servers, client id and timeouts override them.
    ///
    /// `value_format="avro"` decodes the values (Confluent-framed Avro) through the Schema
    /// Registry at `schema_registry` (else the property `schema.registry.url`; credentials and
    /// TLS from `properties` in Confluent's names) into one column per field of the reader
    /// schema (`value_schema`: `latest`, `version:N` or `id:N` of `<topic>-value`), after the
    /// Kafka columns: every source must be of that one topic. A value that does not decode fails the read (`on_decode_error="fail"`), is left
    /// out (`"skip"`) or keeps its row with null fields (`"null"`).
    #[new]
    #[pyo3(signature = (sources, *, batch_rows=65_536, batch_bytes=16_777_216, bootstrap=None, properties=None, value_format="bytes", schema_registry=None, value_schema="latest", on_decode_error="fail"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        sources: &Bound<'_, PyAny>,
        batch_rows: usize,
        batch_bytes: usize,
        bootstrap: Option<&str>,
        properties: Option<&Bound<'_, PyDict>>,
        value_format: &str,
        schema_registry: Option<&str>,
        value_schema: &str,
        on_decode_error: &str,
    ) -> PyResult<Reader> {
        if batch_rows == 0 || batch_bytes == 0 {
            return Err(ConfigError::new_err(
                "batch_rows and batch_bytes must be 1 or more",
            ));
        }
        let avro = match value_format {
            "bytes" => false,
            "avro" => true,
            other => {
                return Err(ConfigError::new_err(format!(
                    "value_format {other:?}: expected bytes or avro"
                )))
            }
        };
        let mut queue = VecDeque::new();
        let mut topics: Vec<String> = Vec::new();
        let (mut config, props) = settings(bootstrap, properties)?;
        let mut push = |item: &Bound<'_, PyAny>| -> PyResult<()> {
            if let Ok(p) = item.cast::<PyPlan>() {
                let p = p.get();
                if properties.is_none() && bootstrap.is_none() {
                    config = p.config.clone();
                }
                topics.extend(p.spec.topics.iter().cloned());
                queue.push_back(Source::Plan(p.plan.clone(), p.filter));
            } else if let Ok(s) = item.cast::<PySplit>() {
                topics.push(s.get().split.topic.clone());
                queue.push_back(Source::Split(s.get().split.clone()));
            } else {
                return Err(ConfigError::new_err(format!(
                    "cannot read a {}: give a kseek.Plan, a kseek.Split or a list of them",
                    item.get_type().name()?
                )));
            }
            Ok(())
        };
        if let Ok(list) = sources.cast::<PyList>() {
            for item in list.iter() {
                push(&item)?;
            }
        } else {
            push(sources)?;
        }
        topics.sort_unstable();
        topics.dedup();
        let values = match (avro, topics.as_slice()) {
            (false, _) => None,
            (true, [topic]) => {
                let how = AvroValues {
                    url: schema_registry,
                    schema: value_schema,
                    on_error: on_decode_error,
                };
                Some(value_decoder(py, topic, &how, &props, &config)?)
            }
            (true, _) => {
                return Err(ConfigError::new_err(format!(
                    "value_format='avro' reads one topic at a time (its columns are the topic's value schema), not {}",
                    if topics.is_empty() { "none".to_owned() } else { topics.join(", ") }
                )))
            }
        };
        Ok(Reader {
            state: Mutex::new(Reading {
                queue,
                current: None,
                values,
                decoding: None,
                config,
                limits: BatchLimits::new(batch_rows, batch_bytes),
                batch_bytes,
                rows: 0,
            }),
        })
    }

    /// The schema of every batch: kseek-arrow's Kafka record schema (key, value, topic,
    /// partition, offset, timestamp as timestamp[us, UTC], timestampType, headers), then the
    /// value's fields with `value_format="avro"`.
    #[getter]
    fn schema(&self) -> PyArrowType<Schema> {
        let schema = match &self.state().values {
            Some(values) => values.schema(),
            None => kseek_arrow::schema(),
        };
        PyArrowType(schema.as_ref().clone())
    }

    /// The rows handed out so far.
    #[getter]
    fn rows(&self) -> u64 {
        self.state().rows
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyArrowType<RecordBatch>>> {
        let mut state = self.state();
        loop {
            let state = &mut *state;
            if state.current.is_none() {
                let Some(source) = state.queue.pop_front() else {
                    return Ok(None);
                };
                let (config, limits) = (&state.config, state.limits);
                let stream = block_on(py, open(source, config, limits, state.batch_bytes))?
                    .map_err(|e| kafka_error("starting the read", &e))?;
                state.current = Some(stream);
                state.decoding = match &state.values {
                    Some(values) => Some(
                        values
                            .start()
                            .map_err(|e| columns_error("decoding values", &e))?,
                    ),
                    None => None,
                };
            }
            let Some(stream) = state.current.as_mut() else {
                continue;
            };
            match block_on(py, stream.next())? {
                Some(Ok(batch)) => {
                    let batch = match state.decoding.as_mut() {
                        Some(decoding) => match block_on(py, decoding.decode(batch))? {
                            Ok(batch) => batch,
                            Err(e) => {
                                state.current = None;
                                state.queue.clear();
                                return Err(columns_error("decoding values", &e));
                            }
                        },
                        None => batch,
                    };
                    state.rows += batch.num_rows() as u64;
                    return Ok(Some(PyArrowType(batch)));
                }
                Some(Err(e)) => {
                    state.current = None;
                    state.queue.clear();
                    return Err(kafka_error("reading", &e));
                }
                None => state.current = None,
            }
        }
    }

    /// Stops reading: closes the connections; the iterator ends.
    fn close(&self) {
        let mut state = self.state();
        state.current = None;
        state.queue.clear();
    }
}

//! `kseek._kseek`, the extension module of the `kseek` Python package: plans, splits and reads
//! of Kafka windows with kseek's Rust reader, record batches handed to pyarrow through the
//! Arrow C data interface.
//!
//! The Python package (`python/kseek/`) wraps it: `kseek.plan`, `kseek.read` and the Spark data
//! source. Positions are the command line's (`kseek::position`), Kafka settings its `-X`
//! properties (`kseek::properties`).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arrow_array::RecordBatch;
use arrow_pyarrow::PyArrowType;
use arrow_schema::Schema;
use kseek::position::{self, Position};
use kseek::properties::Properties;
use kseek::read::{ReadOptions, TimeFilter};
use kseek::{Client, ClientConfig, End, IsolationLevel, Plan, ReadSpec, Start};
use kseek_arrow::{ArrowStream, BatchLimits, Split};
use kseek_registry::columns::{
    ColumnsError, OnDecodeError, ReaderSchema, ValueColumns, ValueDecoder,
};
use kseek_registry::{Registry, RegistryConfig};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use tokio::runtime::Runtime;

create_exception!(
    kseek,
    KseekError,
    PyException,
    "An error of kseek; its message is one line that says what failed and why."
);
create_exception!(
    kseek,
    ConfigError,
    KseekError,
    "A bad argument, position, property or split: nothing was sent to Kafka."
);
create_exception!(
    kseek,
    KafkaError,
    KseekError,
    "Kafka, the network or the data failed the read (or resolving it)."
);

/// How often a blocked call looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// The command line's retry deadline: how long a request is retried before it fails.
const RETRY_DEADLINE: Duration = Duration::from_secs(30);

/// How long a topic not (yet) in the metadata is waited for.
const MISSING_TOPIC_WAIT: Duration = Duration::from_secs(3);

/// The process's runtime, made again after a fork (a forked child has none of the parent's
/// threads: Spark's Python workers are forked).
fn runtime() -> PyResult<Arc<Runtime>> {
    static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if let Some((owner, rt)) = slot.as_ref() {
        if *owner == pid {
            return Ok(rt.clone());
        }
    }
    if let Some((_, inherited)) = slot.take() {
        // Its threads are in the parent: dropping it would wait for them forever.
        std::mem::forget(inherited);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kseek")
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| KseekError::new_err(format!("cannot start kseek's runtime: {e}")))?;
    *slot = Some((pid, rt.clone()));
    Ok(rt)
}

/// Runs `fut` to its end without the GIL, looking for Ctrl-C (and other signals Python
/// handles) every [`SIGNAL_POLL`]: a handler's exception (KeyboardInterrupt) ends the wait,
/// dropping `fut`.
fn block_on<F>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    py.detach(|| {
        rt.block_on(async move {
            let mut fut = std::pin::pin!(fut);
            loop {
                match tokio::time::timeout(SIGNAL_POLL, fut.as_mut()).await {
                    Ok(out) => return Ok(out),
                    Err(_) => Python::attach(|py| py.check_signals())?,
                }
            }
        })
    })
}

/// An error and its sources on one line, after what was being done.
fn one_line(doing: &str, error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("{doing}: {error}");
    let mut source = error.source();
    while let Some(e) = source {
        let more = e.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = e.source();
    }
    text.replace('\n', " ")
}

/// A failure of Kafka, the network or the data, as [`KafkaError`] (or [`ConfigError`] for a
/// setting or a read the library refused before sending it).
fn kafka_error(doing: &str, error: &kseek::Error) -> PyErr {
    let message = if error.to_string().starts_with(doing) {
        one_line("", error).trim_start_matches(": ").to_owned()
    } else {
        one_line(doing, error)
    };
    match error.kind() {
        kseek::ErrorKind::Config { .. }
        | kseek::ErrorKind::InvalidSpec { .. }
        | kseek::ErrorKind::NoBootstrapServers => ConfigError::new_err(message),
        _ => KafkaError::new_err(message),
    }
}

/// The current time in ms since the epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A property value given from Python: a string, or a number or bool written as Kafka's
/// configuration files write it.
fn property_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = value.extract::<bool>() {
        return Ok(if b { "true" } else { "false" }.to_owned());
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(s.to_str()?.to_owned());
    }
    if let Ok(n) = value.extract::<i64>() {
        return Ok(n.to_string());
    }
    Err(ConfigError::new_err(format!(
        "property value {} is not a string, an integer or a bool",
        value.repr()?
    )))
}

/// The client settings of `bootstrap` and `properties` (Kafka's property names, the command
/// line's `-X`): properties first, then `bootstrap`, else `bootstrap.servers`, else
/// `$KSEEK_BOOTSTRAP`, else `localhost:9092`.
fn client_config(
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<ClientConfig> {
    settings(bootstrap, properties).map(|(config, _)| config)
}

/// [`client_config`], and the properties it was made from (the Schema Registry's settings
/// are among them, in Confluent's names).
fn settings(
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<(ClientConfig, Properties)> {
    let mut config = ClientConfig::default();
    config.retry_deadline = RETRY_DEADLINE;
    config.missing_topic_wait = MISSING_TOPIC_WAIT;
    let mut props = Properties::new();
    if let Some(dict) = properties {
        for (key, value) in dict.iter() {
            let key = key
                .cast::<PyString>()
                .map_err(|_| ConfigError::new_err("property names must be strings"))?
                .to_str()?
                .to_owned();
            props
                .set(&key, &property_text(&value)?, "properties")
                .map_err(|e| ConfigError::new_err(e.to_string()))?;
        }
    }
    let given = props
        .value("bootstrap.servers")
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    let (servers, origin) = match (bootstrap, given) {
        (Some(b), _) => (b.to_owned(), "bootstrap"),
        (None, Some(b)) => (b, "properties"),
        (None, None) => match std::env::var("KSEEK_BOOTSTRAP") {
            Ok(b) if !b.trim().is_empty() => (b, "KSEEK_BOOTSTRAP"),
            _ => ("localhost:9092".to_owned(), "the default"),
        },
    };
    props
        .set("bootstrap.servers", &servers, origin)
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    props
        .apply(&mut config)
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    Ok((config, props))
}

/// A failure to decode values into columns: a subject that can't be used is a setting
/// ([`ConfigError`]); the registry, the network or a value that does not decode fail the read
/// ([`KafkaError`]).
fn columns_error(doing: &str, error: &ColumnsError) -> PyErr {
    let message = one_line(doing, error);
    match error {
        ColumnsError::Subject(_) => ConfigError::new_err(message),
        _ => KafkaError::new_err(message),
    }
}

/// How `value_format="avro"` reads values: the registry's URL (else `schema.registry.url`),
/// the reader schema (`latest`, `version:N`, `id:N`) and what a value that does not decode
/// does (`fail`, `skip`, `null`).
struct AvroValues<'a> {
    url: Option<&'a str>,
    schema: &'a str,
    on_error: &'a str,
}

/// The decoder of `topic`'s Avro values as `how` says, with the registry settings among
/// `properties`.
fn value_decoder(
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
fn value_schema(
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

/// `read_uncommitted` or `read_committed`.
fn isolation(text: &str) -> PyResult<IsolationLevel> {
    match text.to_ascii_lowercase().replace('-', "_").as_str() {
        "read_uncommitted" => Ok(IsolationLevel::READ_UNCOMMITTED),
        "read_committed" => Ok(IsolationLevel::READ_COMMITTED),
        _ => Err(ConfigError::new_err(format!(
            "isolation {text:?} is not read_uncommitted or read_committed"
        ))),
    }
}

/// A topic name or a list of them.
fn topic_list(topics: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let names: Vec<String> = if let Ok(s) = topics.cast::<PyString>() {
        vec![s.to_str()?.to_owned()]
    } else {
        topics
            .extract()
            .map_err(|_| ConfigError::new_err("topics must be a name or a list of names"))?
    };
    if names.is_empty() || names.iter().any(|n| n.trim().is_empty()) {
        return Err(ConfigError::new_err(
            "topic names can't be empty. Give a topic name",
        ));
    }
    Ok(names)
}

/// A position given as text (the command line's forms) or as epoch milliseconds.
fn position_of(what: &str, value: &Bound<'_, PyAny>, now: i64) -> PyResult<Position> {
    if let Ok(ms) = value.extract::<i64>() {
        if value.extract::<bool>().is_err() {
            return if ms >= 0 {
                Ok(Position::Time(ms))
            } else {
                Err(ConfigError::new_err(format!(
                    "invalid {what} {ms}: epoch milliseconds can't be negative"
                )))
            };
        }
    }
    let text: String = value.extract().map_err(|_| {
        ConfigError::new_err(format!(
            "{what} must be a position (text such as \"earliest\" or \"-1h\") or epoch milliseconds"
        ))
    })?;
    position::parse(&text, now)
        .map_err(|why| ConfigError::new_err(format!("invalid {what} {text:?}: {why}")))
}

/// A resolved read: per partition, the offsets to read, with what is needed to read it or cut
/// it into splits.
#[pyclass(module = "kseek", name = "Plan", frozen)]
struct PyPlan {
    plan: Plan,
    /// The spec it was resolved from (narrowing resolves more of it).
    spec: ReadSpec,
    config: ClientConfig,
    filter: Option<TimeFilter>,
}

#[pymethods]
impl PyPlan {
    /// The partitions' ranges: dicts of topic, partition, start, end (exclusive; None when
    /// unbounded) and records (end - start; None when unbounded).
    #[getter]
    fn partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for p in &self.plan.partitions {
            let d = PyDict::new(py);
            d.set_item("topic", &p.topic)?;
            d.set_item("partition", p.partition)?;
            d.set_item("start", p.start)?;
            d.set_item("end", p.end)?;
            d.set_item("records", p.max_records())?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The most records the plan reads (the sum of end - start); None when unbounded.
    #[getter]
    fn records(&self) -> Option<u64> {
        self.plan.max_records()
    }

    /// `read_committed` or `read_uncommitted`.
    #[getter]
    fn isolation(&self) -> &'static str {
        if self.plan.isolation == IsolationLevel::READ_COMMITTED {
            "read_committed"
        } else {
            "read_uncommitted"
        }
    }

    /// The plan cut into splits: at most `max_records` offsets each and, when given, about
    /// `max_bytes` of log each (from the brokers' log sizes). Neither: one split per
    /// partition. Empty ranges make no split.
    #[pyo3(signature = (*, max_records=None, max_bytes=None))]
    fn splits(
        &self,
        py: Python<'_>,
        max_records: Option<u64>,
        max_bytes: Option<u64>,
    ) -> PyResult<Vec<PySplit>> {
        if max_records == Some(0) || max_bytes == Some(0) {
            return Err(ConfigError::new_err(
                "max_records and max_bytes must be 1 or more",
            ));
        }
        let mut pieces = match max_bytes {
            Some(max) => {
                let config = self.config.clone();
                let plan = self.plan.clone();
                let sizes = block_on(py, async move {
                    let client = Client::with_config(config).await?;
                    client.log_sizes(&plan).await
                })?
                .map_err(|e| kafka_error("describing the partitions' log sizes", &e))?;
                self.plan.splits_by_bytes(max, &sizes)
            }
            None => vec![self.plan.clone()],
        };
        if let Some(max) = max_records {
            pieces = pieces.iter().flat_map(|p| p.splits(max)).collect();
        }
        Ok(Split::of_plans(&pieces, &self.config, self.filter)
            .into_iter()
            .filter(|s| s.end != Some(s.start))
            .map(|split| PySplit { split })
            .collect())
    }

    /// This plan within pushed-down bounds: only `partitions`, offsets in
    /// [`min_offset`, `max_offset`), and records from `min_time` (ms, inclusive) to `max_time`
    /// (ms, exclusive). A time lower bound moves each start to the first offset at or after
    /// it (by ListOffsets: every earlier record is older). A time upper bound moves the ends
    /// only where it is safe: topics with LogAppendTime, or CreateTime topics given
    /// `max_lateness_ms` (how late a record may be written after its timestamp). Rows are not
    /// filtered: the caller applies its predicates to them.
    #[pyo3(signature = (*, partitions=None, min_offset=None, max_offset=None, min_time=None, max_time=None, max_lateness_ms=None))]
    #[allow(clippy::too_many_arguments)]
    fn narrow(
        &self,
        py: Python<'_>,
        partitions: Option<Vec<i32>>,
        min_offset: Option<i64>,
        max_offset: Option<i64>,
        min_time: Option<i64>,
        max_time: Option<i64>,
        max_lateness_ms: Option<i64>,
    ) -> PyResult<PyPlan> {
        let mut plan = self.plan.clone();
        if let Some(keep) = &partitions {
            plan.partitions.retain(|p| keep.contains(&p.partition));
        }
        if let Some(min) = min_offset {
            for p in &mut plan.partitions {
                p.start = p.start.max(min);
            }
        }
        if let Some(max) = max_offset {
            for p in &mut plan.partitions {
                p.end = Some(p.end.map_or(max, |e| e.min(max)));
            }
        }
        if (min_time.is_some() || max_time.is_some()) && !plan.partitions.is_empty() {
            let config = self.config.clone();
            let partitions_of: Vec<(String, i32)> = plan
                .partitions
                .iter()
                .map(|p| (p.topic.clone(), p.partition))
                .collect();
            let mut topics: Vec<String> = plan.partitions.iter().map(|p| p.topic.clone()).collect();
            topics.sort();
            topics.dedup();
            let mut spec = self.spec.clone();
            spec.strict = false;
            spec.start = min_time.map_or(Start::Earliest, Start::Timestamp);
            let bounds = block_on(py, async move {
                let client = Client::with_config(config).await?;
                // Per topic: how far the end may move (None: not at all).
                let mut ends = Vec::new();
                for topic in &topics {
                    let end = match max_time {
                        None => None,
                        Some(t) => {
                            let log_append = client
                                .topic_config(topic)
                                .await?
                                .get("message.timestamp.type")
                                .is_some_and(|v| v == "LogAppendTime");
                            match (log_append, max_lateness_ms) {
                                (true, _) => Some(t),
                                (false, Some(late)) => Some(t.saturating_add(late.max(0))),
                                (false, None) => None,
                            }
                        }
                    };
                    let mut s = spec.clone().topics([topic.clone()]);
                    s.partitions = Some(
                        partitions_of
                            .iter()
                            .filter(|(t, _)| t == topic)
                            .map(|(_, p)| *p)
                            .collect(),
                    );
                    s.end = end.map_or(End::Latest, End::Timestamp);
                    ends.push(client.resolve(&s).await?);
                }
                Ok::<_, kseek::Error>(ends)
            })?
            .map_err(|e| kafka_error("resolving the pushed-down time bounds", &e))?;
            for p in &mut plan.partitions {
                let Some(b) = bounds
                    .iter()
                    .flat_map(|b| &b.partitions)
                    .find(|b| b.topic == p.topic && b.partition == p.partition)
                else {
                    continue;
                };
                p.start = p.start.max(b.start);
                if max_time.is_some() {
                    if let Some(e) = b.end {
                        p.end = Some(p.end.map_or(e, |x| x.min(e)));
                    }
                }
            }
        }
        for p in &mut plan.partitions {
            if let Some(e) = p.end {
                if e < p.start {
                    p.end = Some(p.start);
                }
            }
        }
        Ok(PyPlan {
            plan,
            spec: self.spec.clone(),
            config: self.config.clone(),
            filter: self.filter,
        })
    }

    fn __len__(&self) -> usize {
        self.plan.partitions.len()
    }

    fn __repr__(&self) -> String {
        let records = self
            .plan
            .max_records()
            .map_or("unbounded".to_owned(), |n| n.to_string());
        format!(
            "<kseek.Plan: {} partitions, {records} records>",
            self.plan.partitions.len()
        )
    }
}

/// One partition's offset range of a plan, readable in another process or machine. Pickles
/// to compact bytes; `to_json` gives the command line's `kseek splits` line.
#[pyclass(module = "kseek", name = "Split", frozen, eq)]
#[derive(PartialEq)]
struct PySplit {
    split: Split,
}

#[pymethods]
impl PySplit {
    /// The split of a `to_json` line (or of `kseek splits`).
    #[staticmethod]
    fn from_json(json: &str) -> PyResult<PySplit> {
        Split::from_json(json.trim())
            .map(|split| PySplit { split })
            .map_err(|e| ConfigError::new_err(e.to_string()))
    }

    /// The split of `to_bytes`'s bytes.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<PySplit> {
        Split::from_bytes(bytes)
            .map(|split| PySplit { split })
            .map_err(|e| ConfigError::new_err(e.to_string()))
    }

    /// The split as one line of JSON.
    fn to_json(&self) -> String {
        self.split.to_json()
    }

    /// The split as compact bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.split.to_bytes())
    }

    #[getter]
    fn topic(&self) -> &str {
        &self.split.topic
    }

    #[getter]
    fn partition(&self) -> i32 {
        self.split.partition
    }

    #[getter]
    fn start(&self) -> i64 {
        self.split.start
    }

    /// The first offset not read; None when the split follows the log.
    #[getter]
    fn end(&self) -> Option<i64> {
        self.split.end
    }

    /// end - start; None when unbounded.
    #[getter]
    fn records(&self) -> Option<u64> {
        self.split
            .end
            .map(|e| u64::try_from(e - self.split.start).unwrap_or(0))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let from_bytes = slf.get_type().getattr("from_bytes")?;
        Ok((from_bytes, (slf.get().to_bytes(py),)))
    }

    fn __repr__(&self) -> String {
        let end = self.split.end.map_or("∞".to_owned(), |e| e.to_string());
        format!(
            "<kseek.Split {}[{}] offsets {}..{end}>",
            self.split.topic, self.split.partition, self.split.start
        )
    }
}

/// Resolves a read into a plan (see the Python package's `kseek.plan`).
#[pyfunction]
#[pyo3(signature = (topics, *, start=None, end=None, partitions=None, group=None, isolation="read_uncommitted", exact_time=false, strict=false, follow=false, bootstrap=None, properties=None))]
#[allow(clippy::too_many_arguments)]
fn plan(
    py: Python<'_>,
    topics: &Bound<'_, PyAny>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    partitions: Option<Vec<i32>>,
    group: Option<String>,
    isolation: &str,
    exact_time: bool,
    strict: bool,
    follow: bool,
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyPlan> {
    let topics = topic_list(topics)?;
    if follow && end.is_some() {
        return Err(ConfigError::new_err(
            "follow reads on after the last record: it takes no end. Leave end out",
        ));
    }
    let level = self::isolation(isolation)?;
    let config = client_config(bootstrap, properties)?;
    let now = now_ms();
    let from = match start {
        Some(v) => position_of("start", v, now)?,
        None => Position::Earliest,
    };
    let to = match end {
        Some(v) => position_of("end", v, now)?,
        None => Position::Latest,
    };
    if let (Position::Time(a), Position::Time(b)) = (&from, &to) {
        if a > b && !follow {
            return Err(ConfigError::new_err(format!(
                "start {} is after end {}. Swap them",
                position::format_time(*a),
                position::format_time(*b)
            )));
        }
    }
    let partitions = partitions.unwrap_or_default();
    if let Some(p) = partitions.iter().find(|p| **p < 0) {
        return Err(ConfigError::new_err(format!(
            "partition {p} is negative. Partitions count from 0"
        )));
    }
    let connect = config.clone();
    let (spec, plan) = block_on(py, async move {
        let client = Client::with_config(connect)
            .await
            .map_err(|e| kafka_error("connecting", &e))?;
        let selection = position::selection(&client, &topics, &partitions, &[&from, &to])
            .await
            .map_err(|e| kafka_error("fetching the topics' metadata", &e))?;
        let group = group.as_deref();
        let start =
            position::to_start(&from, "start", group, &selection).map_err(ConfigError::new_err)?;
        let end = if follow {
            End::Unbounded
        } else {
            position::to_end(&to, "end", group, &selection).map_err(ConfigError::new_err)?
        };
        let mut spec = ReadSpec::new(selection.iter().map(|(t, _)| t.clone()), start, end)
            .isolation(level)
            .strict(strict);
        spec.partitions = position::partition_filter(&partitions);
        let plan = client
            .resolve(&spec)
            .await
            .map_err(|e| kafka_error("resolving the read", &e))?;
        Ok::<_, PyErr>((spec, plan))
    })??;
    let filter = TimeFilter::from_spec(&spec).filter(|_| exact_time);
    Ok(PyPlan {
        plan,
        spec,
        config,
        filter,
    })
}

/// Kafka's internal topics, which a pattern subscription leaves out (as the Java consumer
/// does with `exclude.internal.topics`).
const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// The names of the cluster's topics, internal ones left out, in order.
#[pyfunction]
#[pyo3(signature = (*, bootstrap=None, properties=None))]
fn topics(
    py: Python<'_>,
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<String>> {
    let config = client_config(bootstrap, properties)?;
    let cluster = block_on(py, async move {
        let client = Client::with_config(config)
            .await
            .map_err(|e| kafka_error("connecting", &e))?;
        client
            .cluster_metadata()
            .await
            .map_err(|e| kafka_error("fetching the cluster's metadata", &e))
    })??;
    Ok(cluster
        .topics
        .into_iter()
        .map(|t| t.name)
        .filter(|name| !INTERNAL_TOPICS.contains(&name.as_str()))
        .collect())
}

/// What a [`Reader`] reads next.
enum Source {
    /// A whole plan, its partitions read together.
    Plan(Plan, Option<TimeFilter>),
    /// One split.
    Split(Split),
}

/// The state of a [`Reader`].
struct Reading {
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
struct Reader {
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
async fn open(
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
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(value_schema, m)?)?;
    m.add_function(wrap_pyfunction!(topics, m)?)?;
    Ok(())
}

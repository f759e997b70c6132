//! Plans and splits: `kseek.plan`, `kseek.topics`, and the `Plan` and `Split` classes.

use kseek::position::{self, Position};
use kseek::read::TimeFilter;
use kseek::{Client, ClientConfig, End, IsolationLevel, Plan, ReadSpec, Start};
use kseek_arrow::Split;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::{kafka_error, ConfigError};
use crate::runtime::block_on;
use crate::settings::{client_config, isolation, now_ms, position_of, topic_list};

/// A resolved read: per partition, the offsets to read, with what is needed to read it or cut
/// it into splits.
#[pyclass(module = "kseek", name = "Plan", frozen)]
pub(crate) struct PyPlan {
    pub(crate) plan: Plan,
    /// The spec it was resolved from (narrowing resolves more of it).
    pub(crate) spec: ReadSpec,
    pub(crate) config: ClientConfig,
    pub(crate) filter: Option<TimeFilter>,
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
pub(crate) struct PySplit {
    pub(crate) split: Split,
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
pub(crate) fn plan(
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
pub(crate) const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// The names of the cluster's topics, internal ones left out, in order.
#[pyfunction]
#[pyo3(signature = (*, bootstrap=None, properties=None))]
pub(crate) fn topics(
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

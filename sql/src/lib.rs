//! SQL over Kafka topics read by time: a [DataFusion] table provider on kseek's read plan.
//!
//! [`Kafka::register`] makes every topic of a cluster a table of a DataFusion
//! [`SessionContext`] (`SHOW TABLES` lists them from Metadata), with the Kafka record schema
//! of [`kseek_arrow::schema`] (`key`, `value`, `topic`, `partition`, `offset`, `timestamp`,
//! `timestampType`, `headers`), plus the fields of the decoded values when a table's `format`
//! is `avro` (through a Schema Registry). `CREATE EXTERNAL TABLE name STORED AS KAFKA LOCATION
//! 'topic' OPTIONS (...)` makes a table with options of its own (see [`TableOptions`]).
//!
//! # Push-down, exact results
//!
//! Predicates on `timestamp`, `partition` and `offset` (comparisons with literals, `BETWEEN`,
//! `IN`, `AND` and `OR` of them) become the read plan's per-partition offset ranges; the
//! ranges only avoid reading, and DataFusion applies every filter again on the rows, so the
//! answer is exactly the one of a full scan.
//!
//! - A lower time bound is resolved by ListOffsets (the first offset whose timestamp is at or
//!   after it) and is exact.
//! - An upper time bound is exact by index only when timestamps grow with offsets: the provider
//!   learns the topic's `message.timestamp.type` (DescribeConfigs) and pushes the bound for
//!   `LogAppendTime` topics. For `CreateTime` topics it is pushed only as far as a declared
//!   lateness (table option `max_lateness`: the read ends at the offset of `upper +
//!   max_lateness`); without one the scan reads to the end of the log and a notice says so
//!   ([`Kafka::take_notices`]).
//! - `LIMIT` without a filter stops each partition's read after that many rows.
//!
//! `EXPLAIN` shows each scan's resolved ranges (partition: start..end (records)), the pushed
//! filters and the notes, having sent only Metadata and ListOffsets. [`Kafka::fetched_bytes`]
//! counts the record batch bytes the scans fetched (`EXPLAIN ANALYZE` shows them per scan as
//! `bytes_fetched`).
//!
//! # Parallel
//!
//! Each scan is one DataFusion partition per split of its plan ([`kseek::Plan::splits`]): one
//! per Kafka partition, and a large partition cut in pieces when there are fewer partitions
//! than DataFusion's target partitions (the cores), each read on its own.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use datafusion::prelude::SessionContext;
//! use kseek_sql::{Kafka, SqlConfig};
//!
//! let client = kseek::Client::connect(["localhost:9092"]).await?;
//! let kafka = Kafka::new(client, SqlConfig::default());
//! let ctx = SessionContext::new();
//! kafka.register(&ctx).await?;
//! let batches = ctx
//!     .sql("SELECT partition, count(*) FROM orders \
//!           WHERE timestamp >= '2026-12-01T10:00:00Z' AND timestamp < '2026-12-01T10:05:00Z' \
//!           GROUP BY partition")
//!     .await?
//!     .collect()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! [DataFusion]: https://datafusion.apache.org

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use datafusion::common::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use kseek::{Client, ReadOptions};
use kseek_arrow::BatchLimits;
use kseek_registry::Registry;

mod catalog;
mod plan;
pub mod pushdown;
mod scan;
mod table;
mod values;

pub use table::{parse_duration, TableOptions, TopicTable};
// What a table does with a value that does not decode, and the error it fails with: those of
// kseek-registry's `columns`, which decodes the values.
pub use kseek_registry::columns::{OnDecodeError, ValueError};

/// The query engine, as this crate uses it.
pub use datafusion;

/// The name `CREATE EXTERNAL TABLE ... STORED AS` takes for a topic.
pub const STORED_AS: &str = "KAFKA";

/// How the tables of a [`Kafka`] read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SqlConfig {
    /// The options of every topic's table (and the defaults of `CREATE EXTERNAL TABLE`).
    pub defaults: TableOptions,
    /// The Schema Registry for tables with `format` `avro`.
    pub registry: Option<Registry>,
    /// Refuse a query whose plan reads more records than this (its scans' offset ranges).
    pub max_records: Option<u64>,
    /// The size of the Arrow record batches of a scan.
    pub limits: BatchLimits,
    /// How each split is read (fetch sizes, buffer).
    pub read: ReadOptions,
    /// The fewest offsets a split holds when a partition is cut for parallelism.
    pub min_split_offsets: u64,
}

impl Default for SqlConfig {
    fn default() -> Self {
        SqlConfig {
            defaults: TableOptions::default(),
            registry: None,
            max_records: None,
            limits: BatchLimits::default(),
            read: ReadOptions::default(),
            min_split_offsets: 100_000,
        }
    }
}

/// A cluster's topics as DataFusion tables (see the [crate documentation](crate)).
#[derive(Debug, Clone)]
pub struct Kafka {
    shared: Arc<Shared>,
}

/// What every table of a [`Kafka`] shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) defaults: TableOptions,
    pub(crate) registry: Option<Registry>,
    pub(crate) max_records: Option<u64>,
    pub(crate) limits: BatchLimits,
    pub(crate) read: ReadOptions,
    pub(crate) min_split_offsets: u64,
    pub(crate) counters: Arc<Counters>,
    notices: Mutex<Vec<String>>,
}

impl Shared {
    pub(crate) fn notice(&self, text: String) {
        let mut notices = self.notices.lock().unwrap_or_else(|e| e.into_inner());
        if !notices.contains(&text) {
            notices.push(text);
        }
    }
}

/// Counts kept across a session's scans.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    fetched_bytes: AtomicU64,
}

impl Counters {
    pub(crate) fn add_fetched(&self, bytes: u64) {
        self.fetched_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

impl Kafka {
    /// The topics of `client`'s cluster, read with `config`.
    pub fn new(client: Client, config: SqlConfig) -> Kafka {
        Kafka {
            shared: Arc::new(Shared {
                client,
                defaults: config.defaults,
                registry: config.registry,
                max_records: config.max_records,
                limits: config.limits,
                read: config.read,
                min_split_offsets: config.min_split_offsets.max(1),
                counters: Arc::default(),
                notices: Mutex::default(),
            }),
        }
    }

    /// Makes the cluster's topics (listed by Metadata now; internal `__` topics left out)
    /// the tables of `ctx`'s default schema, and `STORED AS KAFKA` known to `CREATE EXTERNAL
    /// TABLE`.
    ///
    /// # Errors
    /// Metadata failed (a [`kseek::Error`] inside [`DataFusionError::External`]).
    pub async fn register(&self, ctx: &SessionContext) -> Result<()> {
        let metadata = self
            .shared
            .client
            .cluster_metadata()
            .await
            .map_err(kafka_error)?;
        let mut topics: Vec<String> = metadata
            .topics
            .into_iter()
            .map(|t| t.name)
            .filter(|n| !n.starts_with("__"))
            .collect();
        topics.sort();
        let schema = Arc::new(catalog::TopicSchema {
            shared: self.shared.clone(),
            topics,
            created: RwLock::default(),
        });
        let state = ctx.state();
        let options = state.config().options();
        let (catalog_name, schema_name) = (
            options.catalog.default_catalog.clone(),
            options.catalog.default_schema.clone(),
        );
        let catalog = ctx.catalog(&catalog_name).ok_or_else(|| {
            DataFusionError::Plan(format!("no catalog {catalog_name:?} in the session"))
        })?;
        catalog.register_schema(&schema_name, schema)?;
        ctx.state_ref().write().table_factories_mut().insert(
            STORED_AS.to_owned(),
            Arc::new(catalog::KafkaTableFactory {
                shared: self.shared.clone(),
            }),
        );
        Ok(())
    }

    /// `topic` as a table with `options`, to register under any name.
    ///
    /// # Errors
    /// The table's value format needs a registry that is missing, or its schema can't be read.
    pub async fn table(&self, topic: &str, options: TableOptions) -> Result<TopicTable> {
        catalog::table(&self.shared, topic, options).await
    }

    /// The record batch bytes fetched by this session's scans so far (compressed, as on the
    /// wire).
    pub fn fetched_bytes(&self) -> u64 {
        self.shared.counters.fetched_bytes.load(Ordering::Relaxed)
    }

    /// The notices planning gave since the last call (an upper time bound not pushed, say),
    /// one line each.
    pub fn take_notices(&self) -> Vec<String> {
        let mut notices = self
            .shared
            .notices
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *notices)
    }
}

/// A kseek error as DataFusion's: the [`kseek::Error`] inside, for callers to find.
pub(crate) fn kafka_error(e: kseek::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// The error of type `E` that made `e`, if one did: a [`kseek::Error`] (a Kafka failure rather
/// than a query's), a [`ValueError`], a Schema Registry error. Follows DataFusion's
/// [`DataFusionError::External`] wrappers and every error's `source`.
pub fn cause<E: std::error::Error + 'static>(e: &DataFusionError) -> Option<&E> {
    let mut current: &(dyn std::error::Error + 'static) = e;
    loop {
        if let Some(found) = current.downcast_ref::<E>() {
            return Some(found);
        }
        current = match current.downcast_ref::<DataFusionError>() {
            Some(DataFusionError::External(inner)) => inner.as_ref(),
            _ => current.source()?,
        };
    }
}

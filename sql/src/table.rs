//! A topic as a table: its schema, its options, and the resolution of a query's filters into
//! the read plan's per-partition offset ranges.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use kseek::{End, IsolationLevel, PartitionPlan, Plan, ReadSpec, Start};
use tokio::sync::OnceCell;

use crate::plan::Resolved;
use crate::pushdown::{Bounds, Boxes};
use crate::scan::{splits, KafkaScanExec};
use crate::values::{OnDecodeError, ValueDecoder};
use crate::{kafka_error, Shared};

/// How a topic's table reads: the options of `CREATE EXTERNAL TABLE ... OPTIONS (...)`, or the
/// command line's defaults for every topic.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TableOptions {
    /// read_uncommitted (the default) or read_committed.
    pub isolation: IsolationLevel,
    /// How late a record's CreateTime may be, against the records after it: an upper time
    /// bound on a CreateTime topic is pushed to the offset of `upper + max_lateness` (and the
    /// rows are filtered after). `None`: the scan reads to the end of the log.
    pub max_lateness: Option<Duration>,
    /// How values are read: `None` or `bytes` as the binary `value` column only; `avro` also
    /// decoded through the Schema Registry into columns (the fields of the latest schema of
    /// the subject `<topic>-value`).
    pub format: Option<String>,
    /// What a value that does not decode does (with `format` `avro`).
    pub on_decode_error: OnDecodeError,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            isolation: IsolationLevel::READ_UNCOMMITTED,
            max_lateness: None,
            format: None,
            on_decode_error: OnDecodeError::Fail,
        }
    }
}

impl TableOptions {
    /// Sets [`TableOptions::isolation`].
    pub fn isolation(mut self, isolation: IsolationLevel) -> Self {
        self.isolation = isolation;
        self
    }

    /// Sets [`TableOptions::max_lateness`].
    pub fn max_lateness(mut self, max_lateness: Option<Duration>) -> Self {
        self.max_lateness = max_lateness;
        self
    }

    /// Applies one `OPTIONS` entry: `isolation` (`read_committed` or `read_uncommitted`),
    /// `max_lateness` (a duration such as `5m`, `30s`, `1h`, `500ms`), `format` (`bytes` or
    /// `avro`) or `on_decode_error` (`fail`, `skip` or `null`).
    ///
    /// # Errors
    /// An unknown key, or a value that does not parse; the message names both.
    pub fn set(&mut self, key: &str, value: &str) -> std::result::Result<(), String> {
        match key {
            "isolation" | "isolation.level" => {
                self.isolation = match value {
                    "read_committed" => IsolationLevel::READ_COMMITTED,
                    "read_uncommitted" => IsolationLevel::READ_UNCOMMITTED,
                    _ => {
                        return Err(format!(
                            "isolation {value:?}: expected read_committed or read_uncommitted"
                        ))
                    }
                }
            }
            "max_lateness" => self.max_lateness = Some(parse_duration(value)?),
            "format" => match value {
                "bytes" | "avro" => self.format = Some(value.to_owned()),
                _ => return Err(format!("format {value:?}: expected bytes or avro")),
            },
            "on_decode_error" => self.on_decode_error = OnDecodeError::parse(value)?,
            _ => {
                return Err(format!(
                    "unknown table option {key:?} (known: isolation, max_lateness, format, on_decode_error)"
                ))
            }
        }
        Ok(())
    }
}

/// `5m`, `30s`, `1h`, `2d`, `500ms`, or a bare number of milliseconds.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 5m, 30s, 1h, 500ms)"))?;
    let ms = match unit.trim() {
        "" | "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" | "min" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (ms, s, m, h or d)"
            ))
        }
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| format!("{text:?} is too long a duration"))
}

/// How a topic's record timestamps are set (`message.timestamp.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimestampKind {
    CreateTime,
    LogAppendTime,
}

/// A topic as a DataFusion table (see the [crate documentation](crate)).
#[derive(Debug)]
pub struct TopicTable {
    shared: Arc<Shared>,
    topic: String,
    options: TableOptions,
    schema: SchemaRef,
    values: Option<ValueDecoder>,
    timestamps: OnceCell<TimestampKind>,
}

impl TopicTable {
    pub(crate) fn new(
        shared: Arc<Shared>,
        topic: String,
        options: TableOptions,
        values: Option<ValueDecoder>,
    ) -> TopicTable {
        let schema = match &values {
            Some(v) => v.schema(),
            None => kseek_arrow::schema(),
        };
        TopicTable {
            shared,
            topic,
            options,
            schema,
            values,
            timestamps: OnceCell::new(),
        }
    }

    /// The topic read.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The table's options.
    pub fn options(&self) -> &TableOptions {
        &self.options
    }

    async fn timestamp_kind(&self) -> Result<TimestampKind> {
        self.timestamps
            .get_or_try_init(|| async {
                let config = self
                    .shared
                    .client
                    .topic_config(&self.topic)
                    .await
                    .map_err(kafka_error)?;
                Ok::<_, DataFusionError>(match config.get("message.timestamp.type") {
                    Some("LogAppendTime") => TimestampKind::LogAppendTime,
                    _ => TimestampKind::CreateTime,
                })
            })
            .await
            .copied()
    }

    /// The plan of `boxes`: per partition, the hull of each box's range.
    pub(crate) async fn resolve(&self, boxes: &Boxes, pushed: String) -> Result<Resolved> {
        let client = &self.shared.client;
        let metadata = client
            .metadata(&[self.topic.as_str()])
            .await
            .map_err(kafka_error)?;
        let all: Vec<i32> = metadata
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.partition))
            .collect();
        let mut notes = Vec::new();
        let mut merged: BTreeMap<i32, PartitionPlan> = BTreeMap::new();
        let mut resolved_once: Vec<((Start, End), Plan)> = Vec::new();
        for b in &boxes.boxes {
            let partitions: Vec<i32> = all
                .iter()
                .copied()
                .filter(|p| b.has_partition(*p))
                .collect();
            if partitions.is_empty() {
                continue;
            }
            let (start, end) = self.positions(b, &mut notes).await?;
            let key = (start.clone(), end.clone());
            let plan = match resolved_once.iter().find(|(k, _)| *k == key) {
                Some((_, plan)) => plan.clone(),
                None => {
                    let spec = ReadSpec::new([self.topic.as_str()], start, end)
                        .isolation(self.options.isolation);
                    let plan = client.resolve(&spec).await.map_err(kafka_error)?;
                    resolved_once.push((key, plan.clone()));
                    plan
                }
            };
            for p in plan.partitions {
                if !partitions.contains(&p.partition) {
                    continue;
                }
                let mut range = p.clone();
                let end = p.end.unwrap_or(p.last_fetchable_offset);
                range.start = p.start.max(b.offsets.lo);
                range.end = Some(end.min(b.offsets.hi).max(range.start));
                match merged.get_mut(&p.partition) {
                    None => {
                        merged.insert(p.partition, range);
                    }
                    Some(have) if have.is_empty() => *have = range,
                    Some(have) if !range.is_empty() => {
                        have.start = have.start.min(range.start);
                        have.end = have.end.max(range.end);
                    }
                    Some(_) => {}
                }
            }
        }
        let plan = Plan {
            partitions: merged.into_values().collect(),
            isolation: self.options.isolation,
        };
        let records = plan.max_records().unwrap_or(0);
        if let Some(max) = self.shared.max_records {
            if records > max {
                return Err(DataFusionError::Plan(format!(
                    "the query reads up to {records} records of topic {:?}, more than --max-records {max}: narrow it by timestamp, partition or offset",
                    self.topic
                )));
            }
        }
        notes.dedup();
        for n in &notes {
            self.shared.notice(n.clone());
        }
        Ok(Resolved {
            topic: self.topic.clone(),
            splits: Vec::new(),
            plan,
            pushed,
            notes,
        })
    }

    /// The ListOffsets positions of one box.
    async fn positions(&self, b: &Bounds, notes: &mut Vec<String>) -> Result<(Start, End)> {
        let start = match b.micros.lower() {
            Some(lo) => Start::Timestamp(ceil_millis(lo)),
            None => Start::Earliest,
        };
        let end = match b.micros.upper() {
            None => End::Latest,
            Some(hi) => {
                let hi = ceil_millis(hi);
                match (self.timestamp_kind().await?, self.options.max_lateness) {
                    (TimestampKind::LogAppendTime, _) => End::Timestamp(hi),
                    (TimestampKind::CreateTime, Some(late)) => {
                        let late = i64::try_from(late.as_millis()).unwrap_or(i64::MAX);
                        End::Timestamp(hi.saturating_add(late))
                    }
                    (TimestampKind::CreateTime, None) => {
                        notes.push(format!(
                            "topic {:?} has CreateTime timestamps, so the upper time bound can't be found by offset: the scan reads to the end of the log (set the table option max_lateness, or --max-lateness, to bound it)",
                            self.topic
                        ));
                        End::Latest
                    }
                }
            }
        };
        Ok((start, end))
    }
}

/// µs to ms, up: the first ms whose µs are at or after `micros`.
fn ceil_millis(micros: i64) -> i64 {
    micros.div_euclid(1_000) + i64::from(micros.rem_euclid(1_000) != 0)
}

#[async_trait]
impl TableProvider for TopicTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        // Inexact: the ranges hold every row the filter keeps and maybe more, so DataFusion
        // applies it again on the rows.
        Ok(filters
            .iter()
            .map(|f| {
                if Boxes::of_expr(f).narrows {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let boxes = Boxes::of_filters(filters);
        let pushed = if boxes.narrows {
            boxes.to_string()
        } else {
            "nothing".to_owned()
        };
        let mut resolved = self.resolve(&boxes, pushed).await?;
        let target = state.config().target_partitions();
        resolved.splits = splits(&resolved.plan, target, self.shared.min_split_offsets);
        // The values are decoded only when a column of them is read.
        let wants_values = match projection {
            None => true,
            Some(p) => p.iter().any(|i| *i >= kseek_arrow::schema().fields().len()),
        };
        Ok(Arc::new(KafkaScanExec::new(
            Arc::new(resolved),
            self.shared.clone(),
            projection.cloned(),
            self.schema.clone(),
            self.values.clone().filter(|_| wants_values),
            if filters.is_empty() { limit } else { None },
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_options_parse_or_say_why_not() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2 h"), Ok(Duration::from_secs(7_200)));
        assert_eq!(parse_duration("1500"), Ok(Duration::from_millis(1_500)));
        assert!(parse_duration("5 weeks")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("m").unwrap_err().contains("not a duration"));
        let mut o = TableOptions::default();
        o.set("isolation", "read_committed").unwrap();
        assert_eq!(o.isolation, IsolationLevel::READ_COMMITTED);
        assert!(o
            .set("isolation", "dirty")
            .unwrap_err()
            .contains("read_committed"));
        assert!(o
            .set("colour", "red")
            .unwrap_err()
            .contains("unknown table option"));
    }

    #[test]
    fn micros_round_up_to_millis() {
        assert_eq!(ceil_millis(1_000), 1);
        assert_eq!(ceil_millis(1_001), 2);
        assert_eq!(ceil_millis(-1), 0);
        assert_eq!(ceil_millis(-1_000), -1);
    }
}

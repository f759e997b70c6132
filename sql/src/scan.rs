//! The scan of one topic: one DataFusion partition per split of the resolved plan, each read by
//! kseek into Arrow record batches.

use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use kseek::Plan;
use kseek_arrow::ArrowStream;

use crate::plan::Resolved;
use crate::values::{ValueColumns, ValueDecoder};
use crate::{Counters, Shared};

/// Reads the splits of a resolved plan: partition `i` of the output is split `i`.
#[derive(Debug)]
pub(crate) struct KafkaScanExec {
    pub(crate) resolved: Arc<Resolved>,
    shared: Arc<Shared>,
    /// The columns handed out, as indexes into the table's schema (`None`: all of them).
    projection: Option<Vec<usize>>,
    values: Option<ValueDecoder>,
    /// At most this many rows per partition (a `LIMIT` with nothing to filter).
    limit: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
}

impl KafkaScanExec {
    /// The scan of `resolved`: the columns `projection` of `table_schema` (all for `None`),
    /// values decoded by `values`, at most `limit` rows per split.
    pub(crate) fn new(
        resolved: Arc<Resolved>,
        shared: Arc<Shared>,
        projection: Option<Vec<usize>>,
        table_schema: SchemaRef,
        values: Option<ValueDecoder>,
        limit: Option<usize>,
    ) -> Result<KafkaScanExec> {
        let schema = match &projection {
            Some(p) => Arc::new(table_schema.project(p)?),
            None => table_schema,
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            // At least one partition, empty when the plan has no split.
            Partitioning::UnknownPartitioning(resolved.splits.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(KafkaScanExec {
            resolved,
            shared,
            projection,
            values,
            limit,
            metrics: ExecutionPlanMetricsSet::new(),
            properties: Arc::new(properties),
        })
    }
}

impl DisplayAs for KafkaScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let r = &self.resolved;
        match t {
            DisplayFormatType::TreeRender => {
                writeln!(f, "topic={}", r.topic)?;
                writeln!(f, "records={}", r.records())?;
                writeln!(f, "splits={}", r.splits.len())
            }
            _ => {
                write!(f, "KafkaScanExec: topic={}, {r}", r.topic)?;
                if let Some(limit) = self.limit {
                    write!(f, ", limit={limit}")?;
                }
                Ok(())
            }
        }
    }
}

impl ExecutionPlan for KafkaScanExec {
    fn name(&self) -> &str {
        "KafkaScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "KafkaScanExec has no children".to_owned(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let schema = self.properties.eq_properties.schema().clone();
        let fetched = MetricBuilder::new(&self.metrics).counter("bytes_fetched", partition);
        let rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let Some(split) = self.resolved.splits.get(partition) else {
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                schema,
                futures::stream::empty(),
            )));
        };
        let scan = ScanStream {
            inner: ArrowStream::new(
                self.shared
                    .client
                    .read(split.clone(), self.shared.read.clone()),
                self.shared.limits,
            ),
            projection: self.projection.clone(),
            values: self.values.as_ref().map(ValueDecoder::start).transpose()?,
            remaining: self.limit,
            seen: 0,
            fetched,
            rows,
            counters: self.shared.counters.clone(),
        };
        let stream = futures::stream::unfold(scan, |mut scan| async move {
            scan.next().await.map(|item| (item, scan))
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}

/// One split's record batches, projected, with decoded values, cut at the limit.
struct ScanStream {
    inner: ArrowStream,
    projection: Option<Vec<usize>>,
    values: Option<ValueColumns>,
    remaining: Option<usize>,
    /// Bytes of the read already counted.
    seen: u64,
    fetched: Count,
    rows: Count,
    counters: Arc<Counters>,
}

impl ScanStream {
    async fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.remaining == Some(0) {
            return None;
        }
        let batch = self.inner.next().await;
        self.count_fetched();
        match batch? {
            Ok(batch) => Some(self.shape(batch).await),
            Err(e) => Some(Err(DataFusionError::External(Box::new(e)))),
        }
    }

    async fn shape(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let batch = match &mut self.values {
            Some(values) => values.decode(batch).await?,
            None => batch,
        };
        let mut batch = match &self.projection {
            Some(p) => batch.project(p)?,
            None => batch,
        };
        if let Some(remaining) = &mut self.remaining {
            if batch.num_rows() > *remaining {
                batch = batch.slice(0, *remaining);
            }
            *remaining -= batch.num_rows();
        }
        self.rows.add(batch.num_rows());
        Ok(batch)
    }

    fn count_fetched(&mut self) {
        let now = self.inner.fetched_bytes();
        let delta = now - self.seen;
        self.seen = now;
        if delta > 0 {
            self.fetched
                .add(usize::try_from(delta).unwrap_or(usize::MAX));
            self.counters.add_fetched(delta);
        }
    }
}

/// The splits of `plan` for `target` partitions running at once: one per Kafka partition,
/// or more when there are fewer partitions than `target`, none smaller than `min_offsets`.
pub(crate) fn splits(plan: &Plan, target: usize, min_offsets: u64) -> Vec<Plan> {
    let total: u64 = plan.partitions.iter().filter_map(|p| p.max_records()).sum();
    let per = total.div_ceil(target.max(1) as u64).max(min_offsets);
    plan.splits(per)
}

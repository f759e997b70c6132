//! Values decoded through a Schema Registry: the fields of a topic's Avro values as columns of
//! its table, after the Kafka record's. The decoding is [`kseek_registry::columns`]'s; this
//! module gives its errors as DataFusion's.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use datafusion::common::{DataFusionError, Result};
pub(crate) use kseek_registry::columns::OnDecodeError;
use kseek_registry::columns::{self, ColumnsError};
use kseek_registry::Registry;

/// How a query goes on past a value that does not decode, said after a
/// [`ValueError`](crate::ValueError).
const HINT: &str = "table option on_decode_error 'skip' or 'null' to go on";

/// A topic's Avro values, decoded in the reader schema of its `<topic>-value` subject.
#[derive(Debug, Clone)]
pub(crate) struct ValueDecoder(columns::ValueDecoder);

impl ValueDecoder {
    /// The decoder of `topic`'s values: the reader schema is the latest version of the subject
    /// `<topic>-value`.
    pub(crate) async fn new(
        registry: Registry,
        topic: &str,
        on_error: OnDecodeError,
    ) -> Result<ValueDecoder> {
        let decoder = columns::ValueDecoder::new(registry, topic, on_error)
            .await
            .map_err(datafusion_error)?;
        Ok(ValueDecoder(decoder.with_hint(HINT)))
    }

    /// The table's schema: the Kafka record's columns, then the value's fields.
    pub(crate) fn schema(&self) -> SchemaRef {
        self.0.schema()
    }

    /// A decoder for one stream of batches.
    pub(crate) fn start(&self) -> Result<ValueColumns> {
        self.0.start().map(ValueColumns).map_err(datafusion_error)
    }
}

/// The state of one stream's value decoding.
pub(crate) struct ValueColumns(columns::ValueColumns);

impl ValueColumns {
    /// `batch` (the Kafka record's columns) with the value's fields after them.
    pub(crate) async fn decode(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        self.0.decode(batch).await.map_err(datafusion_error)
    }
}

/// `e` as DataFusion's: a problem of the table's subject is the plan's; Arrow's is Arrow's;
/// the others are external, the [`ColumnsError`] inside (its source is the
/// [`ValueError`](crate::ValueError) or
/// [`kseek_registry::RegistryError`] it wraps, for [`crate::cause`] to find).
fn datafusion_error(e: ColumnsError) -> DataFusionError {
    match e {
        ColumnsError::Subject(text) => DataFusionError::Plan(text),
        ColumnsError::Arrow(e) => DataFusionError::from(e),
        e => DataFusionError::External(Box::new(e)),
    }
}

#[cfg(test)]
mod tests {
    use kseek_registry::RegistryError;

    use super::*;
    use crate::{cause, ValueError};

    #[test]
    fn a_subject_problem_is_a_plan_error() {
        let e = datafusion_error(ColumnsError::Subject("no subject".into()));
        assert!(
            matches!(&e, DataFusionError::Plan(t) if t == "no subject"),
            "{e:?}"
        );
    }

    #[test]
    fn cause_finds_the_value_error_inside() {
        let e = datafusion_error(ColumnsError::Value(ValueError::new(
            "partition 0 offset 7: bad",
        )));
        assert!(matches!(&e, DataFusionError::External(_)), "{e:?}");
        assert_eq!(e.to_string(), "External error: partition 0 offset 7: bad");
        let found = cause::<ValueError>(&e).unwrap();
        assert_eq!(found.to_string(), "partition 0 offset 7: bad");
        assert!(cause::<RegistryError>(&e).is_none());
    }

    #[test]
    fn cause_finds_the_registry_error_inside() {
        let e = datafusion_error(ColumnsError::Registry(RegistryError::Invalid {
            url: "http://registry".into(),
            message: "no".into(),
        }));
        assert!(matches!(&e, DataFusionError::External(_)), "{e:?}");
        let found = cause::<RegistryError>(&e).unwrap();
        assert_eq!(found.to_string(), "Schema Registry http://registry: no");
        assert!(cause::<ValueError>(&e).is_none());
        // Wrapped once more, as a stream's error may be.
        let outer = DataFusionError::External(Box::new(e));
        assert!(cause::<RegistryError>(&outer).is_some());
    }
}

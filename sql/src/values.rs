//! Values decoded through a Schema Registry: the fields of a topic's Avro values as columns of
//! its table, after the Kafka record's.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::common::{DataFusionError, Result};
use kseek_registry::arrow::AvroColumns;
use kseek_registry::wire::Framed;
use kseek_registry::{Registry, RegistryError, ResolvedSchema, SchemaKind, Version};

/// What to do with a value that does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnDecodeError {
    /// Fail the query with a one-line message naming the partition and offset (the default).
    #[default]
    Fail,
    /// Leave the row out.
    Skip,
    /// Keep the row, its value fields null.
    Null,
}

impl OnDecodeError {
    /// `fail`, `skip` or `null`.
    pub fn parse(text: &str) -> std::result::Result<OnDecodeError, String> {
        match text {
            "fail" => Ok(OnDecodeError::Fail),
            "skip" => Ok(OnDecodeError::Skip),
            "null" => Ok(OnDecodeError::Null),
            _ => Err(format!(
                "on_decode_error {text:?}: expected fail, skip or null"
            )),
        }
    }
}

/// A value that does not decode, in a table with `on_decode_error` `fail`: the partition, the
/// offset and why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(String);

/// A topic's Avro values, decoded in the reader schema of its `<topic>-value` subject.
#[derive(Debug, Clone)]
pub(crate) struct ValueDecoder {
    registry: Registry,
    reader: Arc<ResolvedSchema>,
    /// The table's schema: the Kafka record's columns, then one per field of the reader schema
    /// (`value_<name>` where a name is already a Kafka column).
    schema: SchemaRef,
    on_error: OnDecodeError,
}

impl ValueDecoder {
    /// The decoder of `topic`'s values: the reader schema is the latest version of the subject
    /// `<topic>-value`.
    pub(crate) async fn new(
        registry: Registry,
        topic: &str,
        on_error: OnDecodeError,
    ) -> Result<ValueDecoder> {
        let subject = format!("{topic}-value");
        let reader = registry
            .schema_by_version(&subject, Version::Latest)
            .await
            .map_err(|e| match e {
                RegistryError::Status { status: 404, .. } => DataFusionError::Plan(format!(
                    "subject {subject:?} is not in the Schema Registry: a table with format avro reads its values in that subject's latest schema"
                )),
                e => DataFusionError::External(Box::new(e)),
            })?;
        if reader.schema.kind != SchemaKind::Avro {
            return Err(DataFusionError::Plan(format!(
                "the latest schema of subject {subject:?} is {}, not Avro",
                reader.schema.kind.name()
            )));
        }
        let columns = AvroColumns::new(&reader, "value").map_err(|e| {
            DataFusionError::Plan(format!(
                "the latest schema of subject {subject:?} can't be read into columns: {e}"
            ))
        })?;
        let DataType::Struct(fields) = columns.field().data_type() else {
            return Err(DataFusionError::Internal("values are not a struct".into()));
        };
        let kafka = kseek_arrow::schema();
        let mut all: Vec<FieldRef> = kafka.fields().iter().cloned().collect();
        for f in fields {
            let name = if kafka.field_with_name(f.name()).is_ok() {
                format!("value_{}", f.name())
            } else {
                f.name().clone()
            };
            all.push(Arc::new(
                Field::new(name, f.data_type().clone(), true).with_metadata(f.metadata().clone()),
            ));
        }
        Ok(ValueDecoder {
            registry,
            reader: Arc::new(reader),
            schema: Arc::new(Schema::new(all)),
            on_error,
        })
    }

    pub(crate) fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// A decoder for one stream of batches.
    pub(crate) fn start(&self) -> Result<ValueColumns> {
        let columns = AvroColumns::new(&self.reader, "value")
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(ValueColumns {
            decoder: self.clone(),
            columns,
            unknown: Vec::new(),
        })
    }
}

/// The state of one stream's value decoding: the writer schemas met so far.
pub(crate) struct ValueColumns {
    decoder: ValueDecoder,
    columns: AvroColumns,
    /// Writer schema ids the registry does not have (their rows do not decode).
    unknown: Vec<u32>,
}

impl ValueColumns {
    /// `batch` (the Kafka record's columns) with the value's fields after them.
    pub(crate) async fn decode(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let values = batch
            .column_by_name("value")
            .and_then(|c| c.as_any().downcast_ref::<BinaryArray>())
            .ok_or_else(|| DataFusionError::Internal("no binary value column".into()))?
            .clone();
        self.fetch_writers(&values).await?;
        let decoded = self
            .columns
            .decode(&values)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let fields = decoded.column.as_struct();
        let mut arrays: Vec<ArrayRef> = batch.columns().to_vec();
        // A null struct (a tombstone, a value that did not decode) nulls its fields: the rows
        // to null are the struct's validity bits inverted, made once for every field.
        let null_rows = fields
            .nulls()
            .map(|nulls| arrow_array::BooleanArray::new(!nulls.inner(), None));
        for child in fields.columns() {
            arrays.push(match &null_rows {
                Some(mask) => arrow_select::nullif::nullif(child, mask)?,
                None => child.clone(),
            });
        }
        let mut out = RecordBatch::try_new(self.decoder.schema.clone(), arrays)?;
        if let Some((row, why)) = decoded.errors.first() {
            match self.decoder.on_error {
                OnDecodeError::Fail => {
                    let at = |name: &str| {
                        batch
                            .column_by_name(name)
                            .map(|c| arrow_cast_i64(c, *row))
                            .unwrap_or_default()
                    };
                    return Err(DataFusionError::External(Box::new(ValueError(format!(
                        "partition {} offset {}: {why} (table option on_decode_error 'skip' or 'null' to go on)",
                        at("partition"),
                        at("offset")
                    )))));
                }
                OnDecodeError::Null => {}
                OnDecodeError::Skip => {
                    let mut keep = vec![true; out.num_rows()];
                    for (row, _) in &decoded.errors {
                        keep[*row] = false;
                    }
                    out = arrow_select::filter::filter_record_batch(&out, &keep.into())?;
                }
            }
        }
        Ok(out)
    }

    /// Fetches the writer schemas of `values` not met yet.
    async fn fetch_writers(&mut self, values: &BinaryArray) -> Result<()> {
        let mut wanted: Vec<u32> = Vec::new();
        for v in values.iter().flatten() {
            if let Ok(framed) = Framed::parse(v) {
                let id = framed.schema_id;
                if !self.columns.knows(id) && !self.unknown.contains(&id) && !wanted.contains(&id) {
                    wanted.push(id);
                }
            }
        }
        for id in wanted {
            match self.decoder.registry.schema_by_id(id).await {
                Ok(writer) if writer.schema.kind == SchemaKind::Avro => {
                    if self.columns.add_writer(id, &writer).is_err() {
                        self.unknown.push(id);
                    }
                }
                Ok(_) | Err(RegistryError::Status { status: 404, .. }) => self.unknown.push(id),
                Err(e) => return Err(DataFusionError::External(Box::new(e))),
            }
        }
        Ok(())
    }
}

/// The integer at `row` of an Int32 or Int64 column, as text.
fn arrow_cast_i64(column: &ArrayRef, row: usize) -> String {
    use arrow_array::types::{Int32Type, Int64Type};
    match column.data_type() {
        DataType::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        _ => String::new(),
    }
}

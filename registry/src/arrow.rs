//! Avro values as one typed Arrow column: a struct of the value's fields in one reader schema
//! (a subject's latest version, say), whatever writer schemas the window holds, with Avro's
//! schema resolution rules (fields added with defaults, removed, promoted). Decoding is
//! `arrow-avro`'s; every payload is first checked by this crate's bounded decoder
//! ([`AvroColumns::check`]), so `arrow-avro` only meets values that decode, and a value that
//! does not is reported by row instead of failing the batch.
//!
//! An Avro union of several types (`["null", "long", "Inner"]`) is a struct with one nullable
//! field per branch that is not `null`, `member0`, `member1`, ..., as Spark's `from_avro` reads
//! it: Parquet, Spark, pandas and Polars have no union type.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{new_null_array, Array, ArrayRef, BinaryArray, StructArray};
use arrow_avro::reader::{Decoder, ReaderBuilder};
use arrow_avro::schema::{
    AvroSchema as ArrowAvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore,
};
use arrow_schema::{DataType, Field};

use crate::avro::{AvroError, AvroSchema};
use crate::client::ResolvedSchema;
use crate::wire::Framed;

/// The rows decoded in one batch, and the rows that did not decode.
#[derive(Debug)]
pub struct Decoded {
    /// One struct per row (null for a null value and for a row that did not decode).
    pub column: ArrayRef,
    /// The rows that did not decode, with why.
    pub errors: Vec<(usize, String)>,
}

/// Avro values to a struct column of a reader schema.
pub struct AvroColumns {
    reader: ArrowAvroSchema,
    /// The column as `arrow-avro` decodes it (unions as unions).
    decoded: Field,
    /// The column as [`AvroColumns::decode`] gives it (unions as structs).
    field: Field,
    /// Whether the column holds a union (see [`AvroColumns::flush`]).
    unions: bool,
    /// Writer schemas by id: this crate's (to check payloads) and the JSON for `arrow-avro`.
    writers: HashMap<u32, (AvroSchema, ArrowAvroSchema)>,
    /// One decoder per writer id, made on first use; an error when the writer's schema can't
    /// be resolved to the reader's.
    decoders: HashMap<u32, Result<Decoder, String>>,
    /// The most rows decoded before a decoder is flushed.
    batch_size: usize,
}

impl std::fmt::Debug for AvroColumns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvroColumns")
            .field("field", &self.field)
            .field("writers", &self.writers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

fn text_of(schema: &ResolvedSchema) -> Result<String, AvroError> {
    if !schema.dependencies.is_empty() {
        return Err(AvroError::new(
            "schemas with references are not supported in Arrow and Parquet output yet (JSON output supports them)",
        ));
    }
    Ok(schema.schema.text.clone())
}

impl AvroColumns {
    /// Decoding to `reader`, a record schema; the column is named `name`.
    ///
    /// # Errors
    /// A reader schema that is not an Avro record, or that `arrow-avro` can't map to Arrow.
    pub fn new(reader: &ResolvedSchema, name: &str) -> Result<AvroColumns, AvroError> {
        let text = text_of(reader)?;
        // Checked by this crate's parser first: a clear error for a schema that is not Avro.
        AvroSchema::parse(reader)?;
        let reader = ArrowAvroSchema::new(text);
        let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
        store
            .set(Fingerprint::Id(0), reader.clone())
            .map_err(|e| AvroError::new(e.to_string()))?;
        let decoder = ReaderBuilder::new()
            .with_reader_schema(reader.clone())
            .with_writer_schema_store(store)
            .with_active_fingerprint(Fingerprint::Id(0))
            .build_decoder()
            .map_err(|e| {
                AvroError::new(format!("the reader schema can't be read into Arrow: {e}"))
            })?;
        let fields = decoder.schema().fields().clone();
        let decoded = Field::new(name, DataType::Struct(fields), true);
        let field = Field::new(name, crate::unions::data_type(decoded.data_type()), true);
        let unions = crate::unions::any(decoded.data_type());
        Ok(AvroColumns {
            reader,
            decoded,
            field,
            unions,
            writers: HashMap::new(),
            decoders: HashMap::new(),
            batch_size: 8192,
        })
    }

    /// The column's field: a nullable struct of the reader schema's fields (a union of several
    /// types as a struct of its branches).
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// Whether the writer schema `id` is known.
    pub fn knows(&self, id: u32) -> bool {
        self.writers.contains_key(&id)
    }

    /// Adds the writer schema with `id`.
    ///
    /// # Errors
    /// A schema that is not valid Avro, or has references.
    pub fn add_writer(&mut self, id: u32, schema: &ResolvedSchema) -> Result<(), AvroError> {
        let ours = AvroSchema::parse(schema)?;
        let theirs = ArrowAvroSchema::new(text_of(schema)?);
        self.writers.insert(id, (ours, theirs));
        // Resolved to the reader's schema now: a writer schema that can't be is an error of
        // each of its values ([`AvroColumns::check`]), found before any is written.
        self.decoders.remove(&id);
        let _ = self.decoder(id);
        Ok(())
    }

    /// Whether `value` (Confluent-framed Avro) decodes: `Err` says why not.
    ///
    /// # Errors
    /// The framing, an unknown schema id, a payload that does not match its schema.
    pub fn check(&self, value: &[u8]) -> Result<(), String> {
        let framed = Framed::parse(value).map_err(|e| e.to_string())?;
        let id = framed.schema_id;
        let Some((checker, _)) = self.writers.get(&id) else {
            return Err(format!("schema id {id} is not in the Schema Registry"));
        };
        if let Some(Err(e)) = self.decoders.get(&id) {
            return Err(e.clone());
        }
        checker
            .check(framed.rest)
            .map_err(|e| format!("the value does not decode with its Avro schema (id {id}): {e}"))
    }

    /// The rows `id`'s decoder holds. arrow-avro 59 does not reset a union's branch offsets
    /// when it flushes (60 does), so its next rows would point past their branches: a decoder
    /// of a column with a union is made again after each flush.
    fn flush(&mut self, id: u32) -> Result<Option<arrow_array::RecordBatch>, String> {
        let batch = self.decoder(id)?.flush().map_err(|e| e.to_string())?;
        if self.unions {
            self.decoders.remove(&id);
        }
        Ok(batch)
    }

    fn decoder(&mut self, id: u32) -> Result<&mut Decoder, String> {
        if !self.decoders.contains_key(&id) {
            let made = match self.writers.get(&id) {
                None => Err(format!("schema id {id} is unknown")),
                Some((_, writer)) => {
                    let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
                    store
                        .set(Fingerprint::Id(id), writer.clone())
                        .map_err(|e| e.to_string())
                        .and_then(|_| {
                            ReaderBuilder::new()
                                .with_reader_schema(self.reader.clone())
                                .with_writer_schema_store(store)
                                .with_active_fingerprint(Fingerprint::Id(id))
                                .with_batch_size(self.batch_size)
                                .build_decoder()
                                .map_err(|e| {
                                    format!(
                                        "schema id {id} can't be read as the reader schema: {e}"
                                    )
                                })
                        })
                }
            };
            self.decoders.insert(id, made);
        }
        match self.decoders.get_mut(&id) {
            Some(Ok(d)) => Ok(d),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("schema id {id} is unknown")),
        }
    }

    /// Decodes `values` (Confluent-framed Avro; null for a tombstone) into one struct per row.
    ///
    /// # Errors
    /// `arrow-avro` failing on a value this crate's decoder accepted, or the rows not fitting
    /// together (never expected; a bug to report).
    pub fn decode(&mut self, values: &BinaryArray) -> Result<Decoded, AvroError> {
        let fail = |e: &dyn std::fmt::Display| AvroError::new(e.to_string());
        // Per writer id: the rows decoded, in order; then (source, row) for each input row.
        let mut parts: Vec<ArrayRef> = vec![new_null_array(self.decoded.data_type(), 1)];
        let mut order: Vec<(usize, usize)> = Vec::with_capacity(values.len());
        let mut errors = Vec::new();
        // Rows waiting in each id's decoder: (id, rows decoded and not flushed).
        let mut pending: Vec<(u32, Vec<usize>)> = Vec::new();
        let mut slots: Vec<Option<(usize, usize)>> = vec![None; values.len()];
        // The column's field, apart from `self` (whose decoders are borrowed in the loop).
        let field = self.decoded.clone();
        for row in 0..values.len() {
            if values.is_null(row) {
                continue;
            }
            let bytes = values.value(row);
            if let Err(e) = self.check(bytes) {
                errors.push((row, e));
                continue;
            }
            // `check` parsed the framing.
            let Ok(framed) = Framed::parse(bytes) else {
                continue;
            };
            let id = framed.schema_id;
            let full = match self.decoder(id) {
                Ok(d) => d.batch_is_full(),
                Err(e) => {
                    errors.push((row, e));
                    continue;
                }
            };
            if full {
                let batch = self.flush(id).map_err(|e| fail(&e))?;
                flush_into(&field, &mut parts, &mut pending, &mut slots, id, batch)?;
            }
            // The whole framed value: arrow-avro reads Confluent's framing itself.
            self.decoder(id)
                .map_err(|e| fail(&e))?
                .decode(bytes)
                .map_err(|e| fail(&e))?;
            match pending.iter_mut().find(|(i, _)| *i == id) {
                Some((_, rows)) => rows.push(row),
                None => pending.push((id, vec![row])),
            }
        }
        let ids: Vec<u32> = pending.iter().map(|(id, _)| *id).collect();
        for id in ids {
            let batch = self.flush(id).map_err(|e| fail(&e))?;
            flush_into(&field, &mut parts, &mut pending, &mut slots, id, batch)?;
        }
        for slot in slots {
            order.push(slot.unwrap_or((0, 0)));
        }
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let column = arrow_select::interleave::interleave(&refs, &order).map_err(|e| fail(&e))?;
        let column = if self.unions {
            crate::unions::array(&column).map_err(|e| fail(&e))?
        } else {
            column
        };
        Ok(Decoded { column, errors })
    }
}

/// Moves the rows of `batch` (flushed from `id`'s decoder) into `parts`, and records where
/// each of the rows waiting for `id` went.
fn flush_into(
    field: &Field,
    parts: &mut Vec<ArrayRef>,
    pending: &mut [(u32, Vec<usize>)],
    slots: &mut [Option<(usize, usize)>],
    id: u32,
    batch: Option<arrow_array::RecordBatch>,
) -> Result<(), AvroError> {
    let Some((_, rows)) = pending.iter_mut().find(|(i, _)| *i == id) else {
        return Ok(());
    };
    let rows = std::mem::take(rows);
    let Some(batch) = batch else {
        return if rows.is_empty() {
            Ok(())
        } else {
            Err(AvroError::new(
                "arrow-avro returned no rows for decoded values",
            ))
        };
    };
    if batch.num_rows() != rows.len() {
        return Err(AvroError::new(format!(
            "arrow-avro returned {} rows for {} values",
            batch.num_rows(),
            rows.len()
        )));
    }
    let part = parts.len();
    // The reader schema's fields, as the column declares them: a resolving decoder may add
    // metadata of its own to a field (the default of a field the writer lacks).
    let DataType::Struct(fields) = field.data_type() else {
        return Err(AvroError::new("the column is not a struct"));
    };
    let rows_decoded = StructArray::try_new(fields.clone(), batch.columns().to_vec(), None)
        .map_err(|e| {
            AvroError::new(format!(
                "the decoded rows do not fit the reader schema: {e}"
            ))
        })?;
    parts.push(Arc::new(rows_decoded));
    for (i, row) in rows.into_iter().enumerate() {
        slots[row] = Some((part, i));
    }
    Ok(())
}

//! A topic's Avro values as columns after the Kafka record's: the fields of a reader schema
//! (the latest of its `<topic>-value` subject unless a [`ReaderSchema`] says otherwise), each a typed Arrow column appended to the record batches of
//! [`kseek_arrow`] (whatever writer schemas the values were written in, resolved with
//! [`AvroColumns`]).
//!
//! [`ValueDecoder`] fetches the reader schema once and gives the table's schema; each stream
//! of batches gets its own [`ValueColumns`] ([`ValueDecoder::start`]), which fetches the writer
//! schemas its values name as it meets them. A value that does not decode fails the batch, is
//! left out or becomes nulls, as [`OnDecodeError`] says.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, BooleanArray, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Schema, SchemaRef};

use crate::arrow::AvroColumns;
use crate::avro::AvroError;
use crate::client::{Registry, RegistryError, ResolvedSchema, SchemaKind, Version};
use crate::wire::Framed;

/// What to do with a value that does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnDecodeError {
    /// Fail with a one-line message naming the partition and offset (the default).
    #[default]
    Fail,
    /// Leave the row out.
    Skip,
    /// Keep the row, its value fields null.
    Null,
}

impl OnDecodeError {
    /// `fail`, `skip` or `null`.
    ///
    /// # Errors
    /// Any other text, with a message naming the three.
    pub fn parse(text: &str) -> Result<OnDecodeError, String> {
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

/// The schema values are read in: every writer schema is resolved to it by Avro's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReaderSchema {
    /// The latest version of the subject (the default).
    #[default]
    Latest,
    /// This version of the subject.
    Version(i32),
    /// The schema with this id.
    Id(u32),
}

impl ReaderSchema {
    /// `latest`, `version:N` or `id:N`.
    ///
    /// # Errors
    /// Any other text, with a message naming the three forms.
    pub fn parse(text: &str) -> Result<ReaderSchema, String> {
        let bad = || format!("{text:?}: give latest, version:N or id:N");
        match text.trim().split_once(':') {
            None if text.trim() == "latest" => Ok(ReaderSchema::Latest),
            Some(("version", n)) => n
                .trim()
                .parse()
                .map(ReaderSchema::Version)
                .map_err(|_| bad()),
            Some(("id", n)) => n.trim().parse().map(ReaderSchema::Id).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }

    /// Fetches this schema of `subject` from `registry`; with how messages name it ("the
    /// latest schema of subject \"t-value\"", "schema id 7").
    pub async fn fetch(
        &self,
        registry: &Registry,
        subject: &str,
    ) -> (Result<ResolvedSchema, RegistryError>, String) {
        match self {
            ReaderSchema::Latest => (
                registry.schema_by_version(subject, Version::Latest).await,
                format!("the latest schema of subject {subject:?}"),
            ),
            ReaderSchema::Version(v) => (
                registry
                    .schema_by_version(subject, Version::Number(*v))
                    .await,
                format!("version {v} of subject {subject:?}"),
            ),
            ReaderSchema::Id(id) => (
                registry
                    .schema_by_id(*id)
                    .await
                    .map(|s| ResolvedSchema::clone(&s)),
                format!("schema id {id}"),
            ),
        }
    }
}

/// A value that does not decode, with [`OnDecodeError::Fail`]: the partition, the offset and
/// why (then the decoder's hint, if it has one: [`ValueDecoder::with_hint`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(String);

impl ValueError {
    /// A value error saying `message` (for a caller that decodes values its own way and
    /// reports them as this module does).
    pub fn new(message: impl Into<String>) -> ValueError {
        ValueError(message.into())
    }
}

/// Why values could not become columns.
///
/// The variants that wrap another error show its message and give it as their
/// [`source`](std::error::Error::source), so a caller walking the chain finds the
/// [`ValueError`] or [`RegistryError`] itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ColumnsError {
    /// The topic's `<topic>-value` subject is not in the registry, its latest schema is not
    /// Avro, or that schema can't be read into columns: a problem of the setup, not of a value.
    #[error("{0}")]
    Subject(String),
    /// The Schema Registry failed (a reader or writer schema could not be fetched).
    #[error("{0}")]
    Registry(#[from] RegistryError),
    /// A value does not decode, with [`OnDecodeError::Fail`].
    #[error("{0}")]
    Value(#[from] ValueError),
    /// Arrow failed to assemble the columns (never expected; a bug to report).
    #[error("{0}")]
    Arrow(#[from] ArrowError),
    /// `arrow-avro` failed on values this crate's decoder accepted (never expected; a bug to
    /// report).
    #[error("{0}")]
    Avro(#[from] AvroError),
    /// A batch without the Kafka record's binary `value` column, or a reader schema whose
    /// columns are not a struct (never expected from [`kseek_arrow`]'s batches).
    #[error("{0}")]
    Unexpected(String),
}

/// A topic's Avro values, decoded in the reader schema of its `<topic>-value` subject. Cheap
/// to clone.
#[derive(Debug, Clone)]
pub struct ValueDecoder {
    registry: Registry,
    reader: Arc<ResolvedSchema>,
    /// The Kafka record's columns, then one per field of the reader schema (`value_<name>`
    /// where a name is already a Kafka column).
    schema: SchemaRef,
    on_error: OnDecodeError,
    /// Said after a [`ValueError`]'s message, in parentheses, when not empty.
    hint: Cow<'static, str>,
}

impl ValueDecoder {
    /// The decoder of `topic`'s values: the reader schema is the latest version of the subject
    /// `<topic>-value`, fetched from `registry` now.
    ///
    /// # Errors
    /// [`ColumnsError::Subject`] when the subject is missing, not Avro, or can't be read into
    /// columns; [`ColumnsError::Registry`] when the registry fails otherwise.
    pub async fn new(
        registry: Registry,
        topic: &str,
        on_error: OnDecodeError,
    ) -> Result<ValueDecoder, ColumnsError> {
        ValueDecoder::with_schema(registry, topic, ReaderSchema::Latest, on_error).await
    }

    /// The decoder of `topic`'s values in the `reader` schema of the subject `<topic>-value`,
    /// fetched from `registry` now.
    ///
    /// # Errors
    /// As [`ValueDecoder::new`].
    pub async fn with_schema(
        registry: Registry,
        topic: &str,
        reader: ReaderSchema,
        on_error: OnDecodeError,
    ) -> Result<ValueDecoder, ColumnsError> {
        let subject = format!("{topic}-value");
        let (fetched, named) = reader.fetch(&registry, &subject).await;
        let reader = fetched.map_err(|e| match e {
            RegistryError::Status { status: 404, .. } => ColumnsError::Subject(format!(
                "{named} is not in the Schema Registry: values read as avro are read in it"
            )),
            e => ColumnsError::Registry(e),
        })?;
        ValueDecoder::with_reader(registry, &named, reader, on_error)
    }

    /// The decoder with `reader`, which messages call `named`.
    fn with_reader(
        registry: Registry,
        named: &str,
        reader: ResolvedSchema,
        on_error: OnDecodeError,
    ) -> Result<ValueDecoder, ColumnsError> {
        if reader.schema.kind != SchemaKind::Avro {
            return Err(ColumnsError::Subject(format!(
                "{named} is {}, not Avro",
                reader.schema.kind.name()
            )));
        }
        let columns = AvroColumns::new(&reader, "value").map_err(|e| {
            ColumnsError::Subject(format!("{named} can't be read into columns: {e}"))
        })?;
        let DataType::Struct(fields) = columns.field().data_type() else {
            return Err(ColumnsError::Unexpected("values are not a struct".into()));
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
            hint: Cow::Borrowed(""),
        })
    }

    /// The decoder whose [`ValueError`]s end with `hint` in parentheses (how to go on past a
    /// value that does not decode, in the caller's terms); none by default.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<Cow<'static, str>>) -> ValueDecoder {
        self.hint = hint.into();
        self
    }

    /// The schema of the decoded batches: the Kafka record's columns ([`kseek_arrow::schema`]),
    /// then one nullable column per field of the reader schema, named as the field
    /// (`value_<name>` where a name is already a Kafka column).
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// What the decoder does with a value that does not decode.
    pub fn on_error(&self) -> OnDecodeError {
        self.on_error
    }

    /// A decoder for one stream of batches.
    ///
    /// # Errors
    /// [`ColumnsError::Avro`] when the reader schema can't be read into columns (never
    /// expected: [`ValueDecoder::new`] read it).
    pub fn start(&self) -> Result<ValueColumns, ColumnsError> {
        let columns = AvroColumns::new(&self.reader, "value")?;
        Ok(ValueColumns {
            decoder: self.clone(),
            columns,
            unknown: Vec::new(),
        })
    }
}

/// The state of one stream's value decoding: the writer schemas met so far.
#[derive(Debug)]
pub struct ValueColumns {
    decoder: ValueDecoder,
    columns: AvroColumns,
    /// Writer schema ids the registry does not have (their rows do not decode).
    unknown: Vec<u32>,
}

impl ValueColumns {
    /// `batch` (the Kafka record's columns, as [`kseek_arrow`] makes them) with the value's
    /// fields after them, in the [`ValueDecoder::schema`]. A null value (a tombstone) has
    /// null fields. Writer schemas not met yet are fetched from the registry first.
    ///
    /// # Errors
    /// [`ColumnsError::Value`] for the first value that does not decode, with
    /// [`OnDecodeError::Fail`]; [`ColumnsError::Registry`] when a writer schema can't be
    /// fetched (a schema id the registry does not have is a value that does not decode);
    /// [`ColumnsError::Unexpected`] for a batch without a binary `value` column.
    pub async fn decode(&mut self, batch: RecordBatch) -> Result<RecordBatch, ColumnsError> {
        let values = batch
            .column_by_name("value")
            .and_then(|c| c.as_any().downcast_ref::<BinaryArray>())
            .ok_or_else(|| ColumnsError::Unexpected("no binary value column".into()))?
            .clone();
        self.fetch_writers(&values).await?;
        let decoded = self.columns.decode(&values)?;
        let fields = decoded.column.as_struct();
        let mut arrays: Vec<ArrayRef> = batch.columns().to_vec();
        // A null struct (a tombstone, a value that did not decode) nulls its fields: the rows
        // to null are the struct's validity bits inverted, made once for every field.
        let null_rows = fields
            .nulls()
            .map(|nulls| BooleanArray::new(!nulls.inner(), None));
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
                            .map(|c| integer_text(c, *row))
                            .unwrap_or_default()
                    };
                    let hint = &self.decoder.hint;
                    let hint = if hint.is_empty() {
                        String::new()
                    } else {
                        format!(" ({hint})")
                    };
                    return Err(ColumnsError::Value(ValueError(format!(
                        "partition {} offset {}: {why}{hint}",
                        at("partition"),
                        at("offset")
                    ))));
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
    async fn fetch_writers(&mut self, values: &BinaryArray) -> Result<(), ColumnsError> {
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
                Err(e) => return Err(ColumnsError::Registry(e)),
            }
        }
        Ok(())
    }
}

/// The integer at `row` of an Int32 or Int64 column, as text.
fn integer_text(column: &ArrayRef, row: usize) -> String {
    use arrow_array::types::{Int32Type, Int64Type};
    match column.data_type() {
        DataType::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use arrow_array::builder::OffsetBufferBuilder;
    use arrow_array::types::Int64Type;
    use arrow_array::{
        new_empty_array, Int32Array, Int64Array, ListArray, StringArray, TimestampMicrosecondArray,
    };

    use super::*;
    use crate::client::RegisteredSchema;
    use crate::config::RegistryConfig;

    const ORDER: &str = r#"{"type":"record","name":"Order","fields":[
        {"name":"id","type":"long"},
        {"name":"offset","type":"string"}]}"#;

    /// A registry that is never asked: nothing is sent until a schema is wanted.
    fn registry() -> Registry {
        Registry::new(&RegistryConfig::new("http://127.0.0.1:9").unwrap()).unwrap()
    }

    /// The decoder of `ORDER` values; writer schema id 7 is `ORDER` too.
    fn decoder(on_error: OnDecodeError) -> ValueDecoder {
        let reader = ResolvedSchema::new(RegisteredSchema::avro(ORDER));
        ValueDecoder::with_reader(
            registry(),
            r#"the latest schema of subject "orders-value""#,
            reader,
            on_error,
        )
        .unwrap()
    }

    fn start(decoder: &ValueDecoder) -> ValueColumns {
        let mut columns = decoder.start().unwrap();
        let writer = ResolvedSchema::new(RegisteredSchema::avro(ORDER));
        columns.columns.add_writer(7, &writer).unwrap();
        columns
    }

    /// A Kafka record batch of partition 3, from offset 40, with `values`.
    fn batch(values: Vec<Option<&[u8]>>) -> RecordBatch {
        let rows = values.len();
        let mut offsets = OffsetBufferBuilder::new(rows);
        for _ in 0..rows {
            offsets.push_length(0);
        }
        let kafka = kseek_arrow::schema();
        let DataType::List(item) = kafka.field_with_name("headers").unwrap().data_type() else {
            unreachable!()
        };
        let headers = ListArray::new(
            item.clone(),
            offsets.finish(),
            new_empty_array(item.data_type()),
            None,
        );
        RecordBatch::try_new(
            kafka,
            vec![
                Arc::new(BinaryArray::from(vec![None::<&[u8]>; rows])),
                Arc::new(BinaryArray::from(values)),
                Arc::new(StringArray::from(vec!["orders"; rows])),
                Arc::new(Int32Array::from(vec![3; rows])),
                Arc::new(Int64Array::from_iter_values(40..40 + rows as i64)),
                Arc::new(
                    TimestampMicrosecondArray::from(vec![1_767_261_600_000_000; rows])
                        .with_timezone("UTC"),
                ),
                Arc::new(Int32Array::from(vec![0; rows])),
                Arc::new(headers),
            ],
        )
        .unwrap()
    }

    /// Framed with schema id 7: id (zigzag long), then offset (a string).
    fn order(id: i64, offset: &str) -> Vec<u8> {
        let mut bytes = vec![0, 0, 0, 0, 7];
        bytes.push(u8::try_from((id << 1) ^ (id >> 63)).unwrap());
        bytes.push(u8::try_from(offset.len() * 2).unwrap());
        bytes.extend_from_slice(offset.as_bytes());
        bytes
    }

    fn ids(batch: &RecordBatch) -> Vec<Option<i64>> {
        batch
            .column_by_name("id")
            .unwrap()
            .as_primitive::<Int64Type>()
            .iter()
            .collect()
    }

    #[test]
    fn on_decode_error_parses_its_three_names() {
        assert_eq!(OnDecodeError::parse("fail"), Ok(OnDecodeError::Fail));
        assert_eq!(OnDecodeError::parse("skip"), Ok(OnDecodeError::Skip));
        assert_eq!(OnDecodeError::parse("null"), Ok(OnDecodeError::Null));
        assert_eq!(
            OnDecodeError::parse("drop"),
            Err(r#"on_decode_error "drop": expected fail, skip or null"#.to_owned())
        );
        assert_eq!(OnDecodeError::default(), OnDecodeError::Fail);
    }

    #[test]
    fn the_schema_is_the_kafka_columns_then_the_value_fields() {
        let schema = decoder(OnDecodeError::Fail).schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            [
                "key",
                "value",
                "topic",
                "partition",
                "offset",
                "timestamp",
                "timestampType",
                "headers",
                "id",
                "value_offset"
            ]
        );
        assert!(schema.field_with_name("id").unwrap().is_nullable());
    }

    #[test]
    fn reader_schemas_parse() {
        assert_eq!(ReaderSchema::parse("latest"), Ok(ReaderSchema::Latest));
        assert_eq!(
            ReaderSchema::parse(" version:3 "),
            Ok(ReaderSchema::Version(3))
        );
        assert_eq!(ReaderSchema::parse("id:42"), Ok(ReaderSchema::Id(42)));
        for bad in ["", "v3", "version:", "id:-1", "version:x"] {
            let e = ReaderSchema::parse(bad).unwrap_err();
            assert!(e.ends_with("give latest, version:N or id:N"), "{e}");
        }
    }

    #[test]
    fn a_subject_that_is_not_avro_is_a_setup_error() {
        let reader = ResolvedSchema::new(RegisteredSchema::protobuf("syntax = \"proto3\";"));
        let named = r#"the latest schema of subject "orders-value""#;
        let e =
            ValueDecoder::with_reader(registry(), named, reader, OnDecodeError::Fail).unwrap_err();
        assert!(matches!(e, ColumnsError::Subject(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            r#"the latest schema of subject "orders-value" is PROTOBUF, not Avro"#
        );
    }

    #[tokio::test]
    async fn values_decode_and_tombstones_have_null_fields() {
        let mut columns = start(&decoder(OnDecodeError::Fail));
        let (a, b) = (order(21, "x"), order(-2, "yz"));
        let out = columns
            .decode(batch(vec![Some(&a), None, Some(&b)]))
            .await
            .unwrap();
        assert_eq!(out.schema(), columns.decoder.schema());
        assert_eq!(ids(&out), [Some(21), None, Some(-2)]);
        let offsets: Vec<Option<&str>> = out
            .column_by_name("value_offset")
            .unwrap()
            .as_string::<i32>()
            .iter()
            .collect();
        assert_eq!(offsets, [Some("x"), None, Some("yz")]);
    }

    #[tokio::test]
    async fn a_value_that_does_not_decode_fails_with_its_partition_offset_and_hint() {
        let good = order(1, "a");
        let bad: &[u8] = b"not framed";
        let plain = decoder(OnDecodeError::Fail);
        let e = start(&plain)
            .decode(batch(vec![Some(&good), Some(bad)]))
            .await
            .unwrap_err();
        let ColumnsError::Value(v) = &e else {
            panic!("{e:?}")
        };
        let text = v.to_string();
        assert_eq!(
            text,
            "partition 3 offset 41: the first byte is 0x6e, not the Schema Registry magic byte \
             0x00 (not written by a Confluent serializer)"
        );
        // The wrapper says the value's message and gives the value error as its source.
        assert_eq!(e.to_string(), text);
        assert!(e.source().unwrap().downcast_ref::<ValueError>().is_some());

        let hinted = plain.with_hint("option on_decode_error to go on");
        let e = start(&hinted)
            .decode(batch(vec![Some(&good), Some(bad)]))
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{text} (option on_decode_error to go on)")
        );
    }

    #[tokio::test]
    async fn skip_leaves_the_row_out_and_null_keeps_it_with_null_fields() {
        let good = order(5, "a");
        let bad: &[u8] = b"\x01nope";
        let rows = || batch(vec![Some(bad), Some(&good), None]);

        let out = start(&decoder(OnDecodeError::Skip))
            .decode(rows())
            .await
            .unwrap();
        assert_eq!(ids(&out), [Some(5), None]);
        let offsets = out.column_by_name("offset").unwrap();
        assert_eq!(offsets.as_primitive::<Int64Type>().values(), &[41, 42]);

        let out = start(&decoder(OnDecodeError::Null))
            .decode(rows())
            .await
            .unwrap();
        assert_eq!(ids(&out), [None, Some(5), None]);
    }

    #[test]
    fn wrapped_errors_are_their_sources() {
        let e = ColumnsError::from(RegistryError::Invalid {
            url: "http://registry".into(),
            message: "no".into(),
        });
        assert_eq!(e.to_string(), "Schema Registry http://registry: no");
        assert!(e
            .source()
            .unwrap()
            .downcast_ref::<RegistryError>()
            .is_some());
    }
}

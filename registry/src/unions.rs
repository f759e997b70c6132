//! Avro unions of several types as structs. Parquet, Spark, pandas and Polars have no union
//! type, so a union such as `["null", "long", "Inner"]` becomes a struct with one nullable field
//! per branch that is not `null`, named `member0`, `member1`, ... in the union's order, as
//! Spark's `from_avro` names them: a row sets the field of its branch and leaves the others
//! null, and a row on the `null` branch is a null struct. A union of `null` and one type is
//! that type, nullable, already (`arrow-avro` reads it so).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait, StructArray,
    UInt32Array, UnionArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, UnionFields};

/// Whether `data_type` holds a union anywhere.
pub(crate) fn any(data_type: &DataType) -> bool {
    match data_type {
        DataType::Union(..) => true,
        DataType::Struct(fields) => fields.iter().any(|f| any(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => any(f.data_type()),
        _ => false,
    }
}

/// `data_type` with its unions as structs.
pub(crate) fn data_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Union(fields, _) => DataType::Struct(members(fields)),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        other => other.clone(),
    }
}

/// `f` with its unions as structs; a union's field becomes nullable (its `null` branch).
fn field(f: &FieldRef) -> FieldRef {
    if !any(f.data_type()) {
        return f.clone();
    }
    let nullable = f.is_nullable() || matches!(f.data_type(), DataType::Union(..));
    Arc::new(
        Field::new(f.name(), data_type(f.data_type()), nullable)
            .with_metadata(f.metadata().clone()),
    )
}

/// The struct fields of a union's branches that are not `null`.
fn members(fields: &UnionFields) -> Fields {
    fields
        .iter()
        .filter(|(_, f)| f.data_type() != &DataType::Null)
        .enumerate()
        .map(|(i, (_, f))| Field::new(format!("member{i}"), data_type(f.data_type()), true))
        .collect()
}

/// `array` with its unions as structs, of [`data_type`] of its type.
///
/// # Errors
/// Arrays that do not fit together (never expected: the layout is arrow-avro's).
pub(crate) fn array(array: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    if !any(array.data_type()) {
        return Ok(array.clone());
    }
    Ok(match array.data_type() {
        DataType::Union(fields, _) => Arc::new(union(array.as_union(), fields)?),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let columns = s
                .columns()
                .iter()
                .map(self::array)
                .collect::<Result<_, _>>()?;
            let fields = fields.iter().map(field).collect();
            Arc::new(StructArray::try_new(fields, columns, s.nulls().cloned())?)
        }
        DataType::List(f) => Arc::new(list::<i32>(array, f)?),
        DataType::LargeList(f) => Arc::new(list::<i64>(array, f)?),
        DataType::FixedSizeList(f, n) => {
            let l = array.as_fixed_size_list();
            Arc::new(FixedSizeListArray::try_new(
                field(f),
                *n,
                self::array(l.values())?,
                l.nulls().cloned(),
            )?)
        }
        DataType::Map(f, sorted) => {
            let m = array.as_map();
            let entries = self::array(&(Arc::new(m.entries().clone()) as ArrayRef))?;
            Arc::new(MapArray::try_new(
                field(f),
                m.offsets().clone(),
                entries.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        other => {
            return Err(ArrowError::NotYetImplemented(format!(
                "a union inside {other}"
            )))
        }
    })
}

/// A list (of `i32` or `i64` offsets) whose items are of `f`, with its unions as structs.
fn list<O: OffsetSizeTrait>(
    array: &ArrayRef,
    f: &FieldRef,
) -> Result<GenericListArray<O>, ArrowError> {
    let l = array.as_list::<O>();
    GenericListArray::try_new(
        field(f),
        l.offsets().clone(),
        self::array(l.values())?,
        l.nulls().cloned(),
    )
}

/// One union array as a struct: each branch's rows taken from its child into its member.
fn union(u: &UnionArray, fields: &UnionFields) -> Result<StructArray, ArrowError> {
    let rows = u.len();
    let type_ids = u.type_ids();
    // The row in its branch's child: the dense offset, or the row itself (sparse).
    let at = |row: usize| match u.offsets() {
        Some(offsets) => offsets[row] as u32,
        None => row as u32,
    };
    let mut columns: Vec<ArrayRef> = Vec::new();
    let mut on_null = vec![false; rows];
    for (id, f) in fields.iter() {
        if f.data_type() == &DataType::Null {
            for (row, t) in type_ids.iter().enumerate() {
                on_null[row] |= *t == id;
            }
            continue;
        }
        let indices: UInt32Array = type_ids
            .iter()
            .enumerate()
            .map(|(row, t)| (*t == id).then(|| at(row)))
            .collect();
        let child = self::array(u.child(id))?;
        columns.push(arrow_select::take::take(&child, &indices, None)?);
    }
    let nulls = on_null
        .iter()
        .any(|n| *n)
        .then(|| NullBuffer::from_iter(on_null.iter().map(|n| !n)));
    StructArray::try_new(members(fields), columns, nulls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, ListArray, NullArray, StringArray};
    use arrow_buffer::ScalarBuffer;

    /// `["null", "long", "string"]`, dense, as arrow-avro lays it out: rows null, 7, "a", 8.
    fn dense() -> ArrayRef {
        let fields = UnionFields::try_new(
            [0, 1, 2],
            [
                Field::new("null", DataType::Null, true),
                Field::new("long", DataType::Int64, false),
                Field::new("string", DataType::Utf8, false),
            ],
        )
        .unwrap();
        let children: Vec<ArrayRef> = vec![
            Arc::new(NullArray::new(1)),
            Arc::new(Int64Array::from(vec![7, 8])),
            Arc::new(StringArray::from(vec!["a"])),
        ];
        Arc::new(
            UnionArray::try_new(
                fields,
                ScalarBuffer::from(vec![0i8, 1, 2, 1]),
                Some(ScalarBuffer::from(vec![0i32, 0, 0, 1])),
                children,
            )
            .unwrap(),
        )
    }

    #[test]
    fn a_union_becomes_a_struct_of_its_members() {
        let out = array(&dense()).unwrap();
        assert_eq!(out.data_type(), &data_type(dense().data_type()));
        let s = out.as_struct();
        assert_eq!(s.column_names(), ["member0", "member1"]);
        assert!(s.is_null(0) && s.is_valid(1) && s.is_valid(2) && s.is_valid(3));
        let longs = s.column(0).as_primitive::<arrow_array::types::Int64Type>();
        assert_eq!(
            longs.iter().collect::<Vec<_>>(),
            [None, Some(7), None, Some(8)]
        );
        let strings = s.column(1).as_string::<i32>();
        assert_eq!(
            strings.iter().collect::<Vec<_>>(),
            [None, None, Some("a"), None]
        );
    }

    #[test]
    fn unions_inside_lists_and_structs_become_structs() {
        let item = Arc::new(Field::new("item", dense().data_type().clone(), true));
        let list: ArrayRef = Arc::new(
            ListArray::try_new(
                item,
                arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 3, 4])),
                dense(),
                None,
            )
            .unwrap(),
        );
        let outer: ArrayRef = Arc::new(
            StructArray::try_new(
                Fields::from(vec![Field::new("choices", list.data_type().clone(), false)]),
                vec![list],
                None,
            )
            .unwrap(),
        );
        assert!(any(outer.data_type()));
        let out = array(&outer).unwrap();
        assert!(!any(out.data_type()));
        assert_eq!(out.data_type(), &data_type(outer.data_type()));
        let items = out.as_struct().column(0).as_list::<i32>().value(1);
        let last = items.as_struct();
        assert_eq!(
            last.column(0)
                .as_primitive::<arrow_array::types::Int64Type>()
                .value(0),
            8
        );
    }

    #[test]
    fn a_sparse_union_takes_each_row_from_its_own_place() {
        let fields = UnionFields::try_new(
            [3, 5],
            [
                Field::new("long", DataType::Int64, false),
                Field::new("string", DataType::Utf8, false),
            ],
        )
        .unwrap();
        let sparse: ArrayRef = Arc::new(
            UnionArray::try_new(
                fields,
                ScalarBuffer::from(vec![5i8, 3]),
                None,
                vec![
                    Arc::new(Int64Array::from(vec![0, 9])),
                    Arc::new(StringArray::from(vec!["b", ""])),
                ],
            )
            .unwrap(),
        );
        let out = array(&sparse).unwrap();
        let s = out.as_struct();
        assert_eq!(s.null_count(), 0);
        let longs = s.column(0).as_primitive::<arrow_array::types::Int64Type>();
        assert_eq!(longs.iter().collect::<Vec<_>>(), [None, Some(9)]);
        let strings = s.column(1).as_string::<i32>();
        assert_eq!(strings.iter().collect::<Vec<_>>(), [Some("b"), None]);
    }
}

//! Which rows a query can want: its `WHERE` clause on `partition`, `offset` and `timestamp` as
//! boxes in those three dimensions, with no IO.
//!
//! A filter becomes a union of [`Bounds`] (its disjunctive normal form, capped in size): a
//! comparison of one of the three columns with a literal, `BETWEEN` and `IN` are boxes;
//! `AND` intersects, `OR` unites; anything else (another column, `NOT`, a function) is the
//! whole table. The boxes are always a superset of the rows the filter keeps, never a subset,
//! so the provider may read only them, and DataFusion applies every filter again on the rows
//! (the provider answers [`TableProviderFilterPushDown::Inexact`]).
//!
//! [`TableProviderFilterPushDown::Inexact`]: datafusion::logical_expr::TableProviderFilterPushDown::Inexact

use std::collections::BTreeSet;
use std::fmt;

use arrow_schema::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

/// The most boxes a filter keeps before they are merged into their hull (a superset).
const MAX_BOXES: usize = 64;

/// Integers `lo..hi`, `lo` included and `hi` excluded; `i64::MIN` and `i64::MAX` mean no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The lowest value in the range, or `i64::MIN` for no lower bound.
    pub lo: i64,
    /// The first value above the range, or `i64::MAX` for no upper bound.
    pub hi: i64,
}

impl Range {
    /// Every value.
    pub const ALL: Range = Range {
        lo: i64::MIN,
        hi: i64::MAX,
    };

    /// No value.
    pub const NONE: Range = Range { lo: 0, hi: 0 };

    /// Whether no value is in the range.
    pub fn is_empty(self) -> bool {
        self.lo >= self.hi
    }

    /// Whether `value` is in the range.
    pub fn contains(self, value: i64) -> bool {
        self.lo <= value && (value < self.hi || self.hi == i64::MAX)
    }

    /// The lower bound, if there is one.
    pub fn lower(self) -> Option<i64> {
        (self.lo != i64::MIN).then_some(self.lo)
    }

    /// The upper bound (exclusive), if there is one.
    pub fn upper(self) -> Option<i64> {
        (self.hi != i64::MAX).then_some(self.hi)
    }

    fn and(self, other: Range) -> Range {
        Range {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        }
    }

    fn hull(self, other: Range) -> Range {
        Range {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One box of a filter: the partitions, offsets and timestamps (µs since the epoch, the
/// `timestamp` column's unit) that rows in it have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// The partitions, as a range.
    pub partitions: Range,
    /// The partitions, as a list (from `=` and `IN`), if the filter names them.
    pub partition_set: Option<BTreeSet<i32>>,
    /// The offsets.
    pub offsets: Range,
    /// The timestamps, in µs since the epoch.
    pub micros: Range,
}

impl Bounds {
    /// Every row.
    pub const ALL: Bounds = Bounds {
        partitions: Range::ALL,
        partition_set: None,
        offsets: Range::ALL,
        micros: Range::ALL,
    };

    /// Whether partition `p` has rows in the box.
    pub fn has_partition(&self, p: i32) -> bool {
        self.partitions.contains(p.into())
            && self.partition_set.as_ref().is_none_or(|s| s.contains(&p))
    }

    fn is_empty(&self) -> bool {
        self.partitions.is_empty()
            || self.offsets.is_empty()
            || self.micros.is_empty()
            || self
                .partition_set
                .as_ref()
                .is_some_and(|s| !s.iter().any(|p| self.partitions.contains((*p).into())))
    }

    fn and(&self, other: &Bounds) -> Bounds {
        let partition_set = match (&self.partition_set, &other.partition_set) {
            (Some(a), Some(b)) => Some(a.intersection(b).copied().collect()),
            (Some(s), None) | (None, Some(s)) => Some(s.clone()),
            (None, None) => None,
        };
        Bounds {
            partitions: self.partitions.and(other.partitions),
            partition_set,
            offsets: self.offsets.and(other.offsets),
            micros: self.micros.and(other.micros),
        }
    }

    fn hull(&self, other: &Bounds) -> Bounds {
        let partition_set = match (&self.partition_set, &other.partition_set) {
            (Some(a), Some(b)) => Some(a.union(b).copied().collect()),
            _ => None,
        };
        Bounds {
            partitions: self.partitions.hull(other.partitions),
            partition_set,
            offsets: self.offsets.hull(other.offsets),
            micros: self.micros.hull(other.micros),
        }
    }
}

/// A filter as boxes: the rows it keeps lie in their union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boxes {
    /// The boxes, none of them empty; none at all when no row can match.
    pub boxes: Vec<Bounds>,
    /// Whether any part of the filter narrowed the table (else it is [`Bounds::ALL`]).
    pub narrows: bool,
}

impl Boxes {
    fn all() -> Boxes {
        Boxes {
            boxes: vec![Bounds::ALL],
            narrows: false,
        }
    }

    fn of(bounds: Bounds) -> Boxes {
        let boxes = if bounds.is_empty() {
            Vec::new()
        } else {
            vec![bounds]
        };
        Boxes {
            boxes,
            narrows: true,
        }
    }

    /// The boxes of all of `filters` together (their conjunction).
    pub fn of_filters(filters: &[Expr]) -> Boxes {
        filters
            .iter()
            .map(Boxes::of_expr)
            .fold(Boxes::all(), |a, b| a.and(b))
    }

    /// The boxes of one filter.
    pub fn of_expr(expr: &Expr) -> Boxes {
        match expr {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And => Boxes::of_expr(left).and(Boxes::of_expr(right)),
                Operator::Or => Boxes::of_expr(left).or(Boxes::of_expr(right)),
                _ => comparison(left, *op, right).unwrap_or_else(Boxes::all),
            },
            Expr::Between(Between {
                expr,
                negated: false,
                low,
                high,
            }) => match (
                comparison(expr, Operator::GtEq, low),
                comparison(expr, Operator::LtEq, high),
            ) {
                (Some(a), Some(b)) => a.and(b),
                _ => Boxes::all(),
            },
            Expr::InList(InList {
                expr,
                list,
                negated: false,
            }) => {
                let mut out = Boxes {
                    boxes: Vec::new(),
                    narrows: true,
                };
                for item in list {
                    match comparison(expr, Operator::Eq, item) {
                        Some(b) => out = out.or(b),
                        None => return Boxes::all(),
                    }
                }
                out
            }
            Expr::Literal(ScalarValue::Boolean(Some(true)), _) => Boxes::all(),
            Expr::Literal(ScalarValue::Boolean(_) | ScalarValue::Null, _) => Boxes {
                boxes: Vec::new(),
                narrows: true,
            },
            _ => Boxes::all(),
        }
    }

    fn and(self, other: Boxes) -> Boxes {
        let mut boxes = Vec::new();
        for a in &self.boxes {
            for b in &other.boxes {
                let both = a.and(b);
                if !both.is_empty() {
                    boxes.push(both);
                }
            }
        }
        Boxes {
            boxes,
            narrows: self.narrows || other.narrows,
        }
        .capped()
    }

    fn or(mut self, other: Boxes) -> Boxes {
        self.boxes.extend(other.boxes);
        Boxes {
            boxes: self.boxes,
            narrows: self.narrows && other.narrows,
        }
        .capped()
    }

    fn capped(mut self) -> Boxes {
        if self.boxes.len() > MAX_BOXES {
            let hull = self
                .boxes
                .iter()
                .skip(1)
                .fold(self.boxes[0].clone(), |a, b| a.hull(b));
            self.boxes = vec![hull];
        }
        self
    }

    /// The hull of the boxes: one box holding them all (`None` when there are none).
    pub fn hull(&self) -> Option<Bounds> {
        let (first, rest) = self.boxes.split_first()?;
        Some(rest.iter().fold(first.clone(), |a, b| a.hull(b)))
    }
}

impl fmt::Display for Bounds {
    /// `partition IN (1, 4) AND offset >= 3 AND timestamp < 2026-01-01T10:05:00Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(set) = &self.partition_set {
            let list: Vec<String> = set.iter().map(i32::to_string).collect();
            parts.push(format!("partition IN ({})", list.join(", ")));
        }
        let time = |micros: i64| match chrono::DateTime::from_timestamp_micros(micros) {
            Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.fZ").to_string(),
            None => format!("{micros} µs"),
        };
        let mut bounds = |name: &str, range: Range, show: &dyn Fn(i64) -> String| {
            if let Some(lo) = range.lower() {
                parts.push(format!("{name} >= {}", show(lo)));
            }
            if let Some(hi) = range.upper() {
                parts.push(format!("{name} < {}", show(hi)));
            }
        };
        if self.partition_set.is_none() {
            bounds("partition", self.partitions, &|v| v.to_string());
        }
        bounds("offset", self.offsets, &|v| v.to_string());
        bounds("timestamp", self.micros, &time);
        if parts.is_empty() {
            f.write_str("true")
        } else {
            f.write_str(&parts.join(" AND "))
        }
    }
}

impl fmt::Display for Boxes {
    /// The boxes as SQL: their conditions, OR'ed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.boxes.as_slice() {
            [] => f.write_str("false"),
            [one] => write!(f, "{one}"),
            many => {
                let parts: Vec<String> = many.iter().map(|b| format!("({b})")).collect();
                f.write_str(&parts.join(" OR "))
            }
        }
    }
}

/// The columns whose predicates become read ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Partition,
    Offset,
    Timestamp,
}

/// `expr` as one of the pushed columns, possibly under a cast that keeps every value (a
/// widening one; the timestamp to µs or ns).
fn column(expr: &Expr) -> Option<Column> {
    match expr {
        Expr::Column(c) => match c.name.as_str() {
            "partition" => Some(Column::Partition),
            "offset" => Some(Column::Offset),
            "timestamp" => Some(Column::Timestamp),
            _ => None,
        },
        // Widening casts only: every value the same after the cast.
        Expr::Cast(cast) => {
            let inner = column(&cast.expr)?;
            let exact = matches!(
                (inner, cast.field.data_type()),
                (Column::Partition, DataType::Int32 | DataType::Int64)
                    | (Column::Offset, DataType::Int64)
                    | (
                        Column::Timestamp,
                        DataType::Timestamp(TimeUnit::Microsecond | TimeUnit::Nanosecond, _)
                    )
            );
            exact.then_some(inner)
        }
        _ => None,
    }
}

/// A literal in the compared unit of `column`: integers as they are, timestamps in ns (the
/// column's µs times 1,000). `Err(())` for a NULL (no row compares true with it); `None` for
/// anything else.
fn literal(expr: &Expr, column: Column) -> Option<Result<i128, ()>> {
    let Expr::Literal(value, _) = expr else {
        return None;
    };
    if value.is_null() {
        return Some(Err(()));
    }
    let v: i128 = match (column, value) {
        (Column::Partition | Column::Offset, ScalarValue::Int8(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::Int16(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::Int32(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::Int64(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::UInt8(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::UInt16(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::UInt32(Some(v))) => (*v).into(),
        (Column::Partition | Column::Offset, ScalarValue::UInt64(Some(v))) => (*v).into(),
        (Column::Timestamp, ScalarValue::TimestampSecond(Some(v), _)) => {
            i128::from(*v) * 1_000_000_000
        }
        (Column::Timestamp, ScalarValue::TimestampMillisecond(Some(v), _)) => {
            i128::from(*v) * 1_000_000
        }
        (Column::Timestamp, ScalarValue::TimestampMicrosecond(Some(v), _)) => {
            i128::from(*v) * 1_000
        }
        (Column::Timestamp, ScalarValue::TimestampNanosecond(Some(v), _)) => (*v).into(),
        _ => return None,
    };
    Some(Ok(v))
}

/// The integers `c` with `c * k <op> x`, as a range.
fn solve(op: Operator, k: i128, x: i128) -> Option<Range> {
    let floor = x.div_euclid(k);
    let ceil = floor + i128::from(x.rem_euclid(k) != 0);
    let clamp = |v: i128| i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX });
    let (lo, hi) = match op {
        Operator::Eq if x.rem_euclid(k) == 0 => (floor, floor + 1),
        Operator::Eq => return Some(Range::NONE),
        Operator::GtEq => (ceil, i128::from(i64::MAX)),
        Operator::Gt => (floor + 1, i128::from(i64::MAX)),
        Operator::LtEq => (i128::from(i64::MIN), floor + 1),
        Operator::Lt => (i128::from(i64::MIN), ceil),
        _ => return None,
    };
    Some(Range {
        lo: clamp(lo),
        hi: clamp(hi),
    })
}

fn flipped(op: Operator) -> Operator {
    match op {
        Operator::Gt => Operator::Lt,
        Operator::GtEq => Operator::LtEq,
        Operator::Lt => Operator::Gt,
        Operator::LtEq => Operator::GtEq,
        other => other,
    }
}

/// `left <op> right` as boxes, when one side is a pushed column and the other a literal.
fn comparison(left: &Expr, op: Operator, right: &Expr) -> Option<Boxes> {
    let (col, op, lit) = match (column(left), column(right)) {
        (Some(c), _) => (c, op, right),
        (None, Some(c)) => (c, flipped(op), left),
        (None, None) => return None,
    };
    let x = match literal(lit, col)? {
        Ok(x) => x,
        Err(()) => {
            return Some(Boxes::of(Bounds {
                micros: Range::NONE,
                ..Bounds::ALL
            }))
        }
    };
    let k = if col == Column::Timestamp { 1_000 } else { 1 };
    let range = solve(op, k, x)?;
    let mut bounds = Bounds::ALL;
    match col {
        Column::Partition => {
            bounds.partitions = range;
            if let (Operator::Eq, Ok(p)) = (op, i32::try_from(range.lo)) {
                bounds.partition_set = Some(BTreeSet::from([p]));
            }
        }
        Column::Offset => bounds.offsets = range,
        Column::Timestamp => bounds.micros = range,
    }
    Some(Boxes::of(bounds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};
    use proptest::prelude::*;

    fn ts(micros: i64) -> Expr {
        lit(ScalarValue::TimestampMicrosecond(
            Some(micros),
            Some("UTC".into()),
        ))
    }

    fn one(expr: Expr) -> Bounds {
        let b = Boxes::of_expr(&expr);
        assert!(b.narrows, "{expr}");
        assert_eq!(b.boxes.len(), 1, "{expr}: {b:?}");
        b.boxes[0].clone()
    }

    #[test]
    fn comparisons_become_half_open_ranges() {
        assert_eq!(
            one(col("offset").gt_eq(lit(10i64))).offsets,
            Range {
                lo: 10,
                hi: i64::MAX
            }
        );
        assert_eq!(
            one(col("offset").gt(lit(10i64))).offsets,
            Range {
                lo: 11,
                hi: i64::MAX
            }
        );
        assert_eq!(
            one(col("offset").lt(lit(10i64))).offsets,
            Range {
                lo: i64::MIN,
                hi: 10
            }
        );
        assert_eq!(
            one(col("offset").lt_eq(lit(10i64))).offsets,
            Range {
                lo: i64::MIN,
                hi: 11
            }
        );
        assert_eq!(
            one(lit(10i64).lt(col("offset"))).offsets,
            Range {
                lo: 11,
                hi: i64::MAX
            }
        );
        assert_eq!(
            one(col("offset").eq(lit(7i64))).offsets,
            Range { lo: 7, hi: 8 }
        );
        let p = one(col("partition").eq(lit(3i32)));
        assert_eq!(p.partition_set, Some(BTreeSet::from([3])));
        assert!(p.has_partition(3) && !p.has_partition(2));
    }

    #[test]
    fn timestamps_in_other_units_round_the_right_way() {
        // µs as they are.
        assert_eq!(one(col("timestamp").gt_eq(ts(1_500))).micros.lo, 1_500);
        // ns: 1,500,001 ns is after 1,500 µs and before 1,501.
        let ns = |v| lit(ScalarValue::TimestampNanosecond(Some(v), None));
        assert_eq!(one(col("timestamp").gt_eq(ns(1_500_001))).micros.lo, 1_501);
        assert_eq!(one(col("timestamp").gt(ns(1_500_001))).micros.lo, 1_501);
        assert_eq!(one(col("timestamp").lt(ns(1_500_001))).micros.hi, 1_501);
        assert_eq!(one(col("timestamp").lt_eq(ns(1_500_001))).micros.hi, 1_501);
        assert_eq!(one(col("timestamp").lt_eq(ns(1_500_000))).micros.hi, 1_501);
        assert!(Boxes::of_expr(&col("timestamp").eq(ns(1_500_001)))
            .boxes
            .is_empty());
        let s = lit(ScalarValue::TimestampSecond(Some(2), None));
        assert_eq!(one(col("timestamp").lt(s)).micros.hi, 2_000_000);
    }

    #[test]
    fn and_intersects_or_unites_and_the_rest_is_everything() {
        let window = col("timestamp")
            .gt_eq(ts(1_000))
            .and(col("timestamp").lt(ts(2_000)));
        assert_eq!(
            one(window.clone()).micros,
            Range {
                lo: 1_000,
                hi: 2_000
            }
        );
        let two = Boxes::of_expr(&window.clone().or(col("offset").lt(lit(5i64))));
        assert_eq!(two.boxes.len(), 2);
        // A predicate on another column narrows nothing, alone or in an OR.
        let other = col("key").is_null();
        assert!(!Boxes::of_expr(&other).narrows);
        assert!(!Boxes::of_expr(&window.clone().or(other.clone())).narrows);
        // In an AND it is the whole table, so the window is kept.
        assert_eq!(
            one(window.and(other)).micros,
            Range {
                lo: 1_000,
                hi: 2_000
            }
        );
        // Contradictions are no box at all.
        let none = col("offset")
            .gt(lit(10i64))
            .and(col("offset").lt(lit(5i64)));
        assert!(Boxes::of_expr(&none).boxes.is_empty());
    }

    #[test]
    fn between_and_in_lists() {
        let b = one(col("offset").between(lit(5i64), lit(9i64)));
        assert_eq!(b.offsets, Range { lo: 5, hi: 10 });
        let list = Boxes::of_expr(&col("partition").in_list(vec![lit(1i32), lit(4i32)], false));
        assert_eq!(list.boxes.len(), 2);
        let hull = list.hull().unwrap();
        assert_eq!(hull.partition_set, Some(BTreeSet::from([1, 4])));
        assert!(!hull.has_partition(2));
        assert!(!Boxes::of_expr(&col("partition").in_list(vec![lit(1i32)], true)).narrows);
        assert!(
            !Boxes::of_expr(&Expr::Not(Box::new(
                col("offset").between(lit(1i64), lit(2i64))
            )))
            .narrows
        );
    }

    #[test]
    fn nulls_and_out_of_range_literals_match_nothing() {
        let null = lit(ScalarValue::Int64(None));
        assert!(Boxes::of_expr(&col("offset").eq(null)).boxes.is_empty());
        let huge = col("partition").eq(lit(5_000_000_000i64));
        assert!(Boxes::of_filters(&[huge])
            .boxes
            .iter()
            .all(|b| !b.has_partition(0)));
    }

    #[test]
    fn many_boxes_merge_into_their_hull() {
        let list: Vec<Expr> = (0..200i64).map(|o| lit(o * 10)).collect();
        let b = Boxes::of_expr(&col("offset").in_list(list, false));
        assert!(b.boxes.len() <= MAX_BOXES, "{}", b.boxes.len());
        assert_eq!(b.hull().unwrap().offsets, Range { lo: 0, hi: 1_991 });
    }

    /// A filter of the shapes the analysis knows, and others, over the three columns.
    fn filter() -> impl Strategy<Value = Expr> {
        let column = prop_oneof![Just("partition"), Just("offset"), Just("timestamp")];
        let value = |c: &str, v: i64| -> Expr {
            match c {
                "partition" => lit(v as i32),
                "offset" => lit(v),
                // ns that are not always whole µs, so rounding is exercised.
                _ => lit(ScalarValue::TimestampNanosecond(Some(v * 400), None)),
            }
        };
        let op = prop_oneof![
            Just(Operator::Eq),
            Just(Operator::NotEq),
            Just(Operator::Lt),
            Just(Operator::LtEq),
            Just(Operator::Gt),
            Just(Operator::GtEq),
        ];
        let leaf = prop_oneof![
            (column.clone(), op, -2i64..30, any::<bool>()).prop_map(move |(c, op, v, flip)| {
                if flip {
                    Expr::BinaryExpr(BinaryExpr::new(
                        Box::new(value(c, v)),
                        flipped(op),
                        Box::new(col(c)),
                    ))
                } else {
                    Expr::BinaryExpr(BinaryExpr::new(Box::new(col(c)), op, Box::new(value(c, v))))
                }
            }),
            (column.clone(), -2i64..30, -2i64..30)
                .prop_map(move |(c, a, b)| col(c).between(value(c, a), value(c, b))),
            (column, prop::collection::vec(-2i64..30, 0..4))
                .prop_map(move |(c, vs)| col(c)
                    .in_list(vs.into_iter().map(|v| value(c, v)).collect(), false)),
            Just(col("key").is_null()),
            Just(lit(true)),
            Just(lit(false)),
        ];
        leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| a.or(b)),
                inner.prop_map(|a| Expr::Not(Box::new(a))),
            ]
        })
    }

    /// `expr` on a row with partition `p`, offset `o`, timestamp `t` µs, and `key IS NULL`
    /// being `other`.
    fn eval(expr: &Expr, p: i64, o: i64, t: i64, other: bool) -> bool {
        let num = |e: &Expr| -> i128 {
            match e {
                Expr::Column(c) => match c.name.as_str() {
                    "partition" => p.into(),
                    "offset" => o.into(),
                    _ => i128::from(t) * 1_000,
                },
                Expr::Literal(ScalarValue::Int32(Some(v)), _) => (*v).into(),
                Expr::Literal(ScalarValue::Int64(Some(v)), _) => (*v).into(),
                Expr::Literal(ScalarValue::TimestampNanosecond(Some(v), _), _) => (*v).into(),
                other => panic!("{other}"),
            }
        };
        match expr {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And => eval(left, p, o, t, other) && eval(right, p, o, t, other),
                Operator::Or => eval(left, p, o, t, other) || eval(right, p, o, t, other),
                Operator::Eq => num(left) == num(right),
                Operator::NotEq => num(left) != num(right),
                Operator::Lt => num(left) < num(right),
                Operator::LtEq => num(left) <= num(right),
                Operator::Gt => num(left) > num(right),
                Operator::GtEq => num(left) >= num(right),
                op => panic!("{op}"),
            },
            Expr::Between(Between {
                expr,
                low,
                high,
                negated: false,
            }) => num(low) <= num(expr) && num(expr) <= num(high),
            Expr::InList(InList {
                expr,
                list,
                negated: false,
            }) => list.iter().any(|v| num(v) == num(expr)),
            Expr::Not(inner) => !eval(inner, p, o, t, other),
            Expr::IsNull(_) => other,
            Expr::Literal(ScalarValue::Boolean(Some(b)), _) => *b,
            e => panic!("{e}"),
        }
    }

    proptest! {
        /// The boxes hold every row the filter keeps: reading only them loses nothing.
        #[test]
        fn the_boxes_hold_every_row_the_filter_keeps(f in filter()) {
            let boxes = Boxes::of_expr(&f);
            for p in 0..4i64 {
                for o in -1..24i64 {
                    for t in -1..13i64 {
                        for other in [false, true] {
                            if eval(&f, p, o, t, other) {
                                let inside = boxes.boxes.iter().any(|b| {
                                    b.has_partition(p as i32) && b.offsets.contains(o) && b.micros.contains(t)
                                });
                                prop_assert!(inside, "{} keeps partition {} offset {} time {} µs, not in {:?}", f, p, o, t, boxes);
                            }
                        }
                    }
                }
            }
        }
    }
}

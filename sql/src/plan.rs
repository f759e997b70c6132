//! A scan's resolved read: per partition, the offsets a query reads, and how it was found.

use std::fmt;

use kseek::{IsolationLevel, Plan};

/// A topic's resolved read: per partition, the offsets a query reads, and why.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) topic: String,
    pub(crate) plan: Plan,
    pub(crate) splits: Vec<Plan>,
    /// What the filters that narrowed the ranges keep, as SQL.
    pub(crate) pushed: String,
    /// What could not be pushed, and why.
    pub(crate) notes: Vec<String>,
}

impl Resolved {
    pub(crate) fn records(&self) -> u64 {
        self.plan.max_records().unwrap_or(0)
    }
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let isolation = if self.plan.isolation == IsolationLevel::READ_COMMITTED {
            "read_committed"
        } else {
            "read_uncommitted"
        };
        write!(
            f,
            "isolation={isolation}, pushed=[{}], ranges=[",
            self.pushed
        )?;
        for (i, p) in self.plan.partitions.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let end = p.end.unwrap_or(p.last_fetchable_offset);
            write!(
                f,
                "{}: {}..{} ({})",
                p.partition,
                p.start,
                end,
                end - p.start
            )?;
        }
        write!(
            f,
            "], records={}, splits={}",
            self.records(),
            self.splits.len()
        )?;
        for n in &self.notes {
            write!(f, ", note: {n}")?;
        }
        Ok(())
    }
}

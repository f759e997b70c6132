//! The transaction isolation of a read, shared by ListOffsets and Fetch.

/// The transaction isolation of a read: an open newtype over the wire's `int8`, so a value this
/// crate doesn't name still survives decoding.
///
/// The same type is the `IsolationLevel` field of
/// [`ListOffsetsRequest`](crate::messages::list_offsets::ListOffsetsRequest) (v2+) and of
/// [`FetchRequest`](crate::messages::fetch::FetchRequest) (v4+).
///
/// # References
/// KIP-98; the `IsolationLevel` field of `ListOffsetsRequest.json` and `FetchRequest.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IsolationLevel(pub i8);

impl IsolationLevel {
    /// All records are visible, including those of open and aborted transactions.
    pub const READ_UNCOMMITTED: IsolationLevel = IsolationLevel(0);
    /// Only non-transactional and committed transactional records are visible; reads stop at
    /// the last stable offset.
    pub const READ_COMMITTED: IsolationLevel = IsolationLevel(1);
}

impl std::fmt::Display for IsolationLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            IsolationLevel::READ_UNCOMMITTED => f.write_str("read_uncommitted"),
            IsolationLevel::READ_COMMITTED => f.write_str("read_committed"),
            IsolationLevel(other) => write!(f, "isolation level {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_unknown_values() {
        assert_eq!(IsolationLevel::default(), IsolationLevel::READ_UNCOMMITTED);
        assert_eq!(IsolationLevel::READ_COMMITTED.to_string(), "read_committed");
        assert_eq!(IsolationLevel(7).to_string(), "isolation level 7");
    }
}

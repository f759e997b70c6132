//! The transaction isolation of a read, shared by ListOffsets and Fetch.

use crate::messages::codec::int8_newtype;

int8_newtype! {
    /// The transaction isolation of a read: an open newtype over the wire's `int8`, so a value
    /// this crate doesn't name still survives decoding.
    ///
    /// The same type is the `IsolationLevel` field of
    /// [`ListOffsetsRequest`](crate::messages::list_offsets::ListOffsetsRequest) (v2+) and of
    /// [`FetchRequest`](crate::messages::fetch::FetchRequest) (v4+).
    ///
    /// # References
    /// KIP-98; the `IsolationLevel` field of `ListOffsetsRequest.json` and `FetchRequest.json`.
    pub struct IsolationLevel(pub i8), unknown "isolation level" {
        /// All records are visible, including those of open and aborted transactions.
        READ_UNCOMMITTED = 0 => "read_uncommitted",
        /// Only non-transactional and committed transactional records are visible; reads stop
        /// at the last stable offset.
        READ_COMMITTED = 1 => "read_committed",
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

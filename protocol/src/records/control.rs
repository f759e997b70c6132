//! Control records: the transaction markers (and KRaft-internal records) that control
//! batches hold. They are never application data.
//!
//! # References
//! <https://kafka.apache.org/documentation/#controlbatch>; KIP-98; Kafka's
//! `ControlRecordType` and `EndTransactionMarker`.

use crate::error::{Error, Result};
use crate::records::record::Record;

/// The type in a control record's key. Open: unknown types survive decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ControlRecordType(pub i16);

impl ControlRecordType {
    /// The transaction was aborted: its records must be skipped under read_committed.
    pub const ABORT: ControlRecordType = ControlRecordType(0);
    /// The transaction was committed.
    pub const COMMIT: ControlRecordType = ControlRecordType(1);
}

/// A decoded control record: the key's version and type, and for transaction markers the
/// coordinator epoch from the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlRecord {
    /// The key's version (0 so far; a higher one is read the same way, as Java does).
    pub version: i16,
    /// The control record type.
    pub kind: ControlRecordType,
    /// For ABORT/COMMIT markers with a well-formed value, the transaction coordinator's epoch.
    pub coordinator_epoch: Option<i32>,
}

impl ControlRecord {
    /// Decodes the control record carried by `record` (a record of a control batch).
    ///
    /// The key is `version: int16, type: int16`; for ABORT and COMMIT the value is
    /// `version: int16, coordinator_epoch: int32`. A key shorter than 4 bytes is an error.
    pub fn parse(record: &Record<'_>) -> Result<ControlRecord> {
        let key = record.key().unwrap_or_default();
        let Some(&[v0, v1, t0, t1]) = key.first_chunk::<4>() else {
            return Err(Error::Truncated {
                what: "control record key",
                needed: 4,
                remaining: key.len(),
            });
        };
        let kind = ControlRecordType(i16::from_be_bytes([t0, t1]));
        let coordinator_epoch = match kind {
            ControlRecordType::ABORT | ControlRecordType::COMMIT => record
                .value()
                .and_then(|v| v.get(2..6))
                .and_then(|e| e.first_chunk::<4>())
                .map(|e| i32::from_be_bytes(*e)),
            _ => None,
        };
        Ok(ControlRecord {
            version: i16::from_be_bytes([v0, v1]),
            kind,
            coordinator_epoch,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Batches, DecodeOptions, NewRecord, RecordBatchBuilder};

    fn parse_key(key: &[u8], value: Option<&[u8]>) -> Result<ControlRecord> {
        let mut r = NewRecord::new(0, 0).key(key);
        if let Some(v) = value {
            r = r.value(v);
        }
        let bytes = RecordBatchBuilder::new(0, 0)
            .control(true)
            .record(r)
            .build()
            .unwrap();
        let batch = Batches::new(bytes, DecodeOptions::default())
            .next()
            .unwrap()
            .unwrap();
        let records = batch.records().unwrap();
        let record = records.iter().next().unwrap().unwrap();
        ControlRecord::parse(&record)
    }

    #[test]
    fn short_key_is_an_error_and_unknown_types_survive() {
        assert!(matches!(
            parse_key(&[0, 0, 1], None),
            Err(Error::Truncated { .. })
        ));
        // A KRaft-internal type (3) with a later key version: read as is, no epoch.
        let c = parse_key(&[0, 1, 0, 3], Some(&[0, 0])).unwrap();
        assert_eq!(c.version, 1);
        assert_eq!(c.kind, ControlRecordType(3));
        assert_eq!(c.coordinator_epoch, None);
        // A marker whose value is too short has no epoch but still parses.
        let c = parse_key(&[0, 0, 0, 0], Some(&[0, 0, 1])).unwrap();
        assert_eq!(c.kind, ControlRecordType::ABORT);
        assert_eq!(c.coordinator_epoch, None);
    }
}

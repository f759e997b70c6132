//! Kafka error codes: an open newtype over the wire's `int16`, with named constants for every
//! code Kafka 4.2.1 defines. Unknown codes survive decoding and print their number.
//!
//! The table at the `error_codes!` invocation below is generated from
//! `protocol/tools/error-codes.tsv`, a list of the codes in Kafka's
//! `clients/src/main/java/org/apache/kafka/common/protocol/Errors.java` (4.2.1): code, name,
//! whether the exception is a `RetriableException`, and a one-line description. Don't edit the
//! table by hand: update the TSV and run `python3 protocol/tools/error_codes.py` (with `--check`
//! it only verifies that this file matches the TSV).
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_error_codes>

/// A Kafka error code. `ErrorCode::NONE` (0) is success.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ErrorCode(pub i16);

// The table is stored column by column, and the names and descriptions each as one string
// with a table of end offsets, rather than as a `&'static str` per entry: in a
// position-independent binary every such pointer costs 16 bytes plus a 24-byte load-time
// relocation, about 10 KB over the whole table.
macro_rules! error_codes {
    ($($name:ident = $code:literal, $retriable:literal, $desc:literal;)*) => {
        impl ErrorCode {
            $(
                #[doc = $desc]
                pub const $name: ErrorCode = ErrorCode($code);
            )*
        }

        /// Every known code, in order.
        const CODES: &[i16] = &[$($code,)*];
        /// Whether each code is retriable.
        const RETRIABLE: &[bool] = &[$($retriable,)*];
        /// The names, concatenated; the i-th ends at `NAME_ENDS[i]`.
        const NAMES: &str = concat!($(stringify!($name),)*);
        const NAME_ENDS: [u16; CODES.len()] = ends([$(stringify!($name).len(),)*]);
        /// The descriptions, concatenated; the i-th ends at `DESCRIPTION_ENDS[i]`.
        const DESCRIPTIONS: &str = concat!($($desc,)*);
        const DESCRIPTION_ENDS: [u16; CODES.len()] = ends([$($desc.len(),)*]);
    };
}

/// The running end offsets of strings of lengths `lens`, laid end to end.
const fn ends<const N: usize>(lens: [usize; N]) -> [u16; N] {
    let mut out = [0u16; N];
    let mut end = 0;
    let mut i = 0;
    while i < N {
        end += lens[i];
        assert!(
            end <= u16::MAX as usize,
            "error code strings exceed u16 offsets"
        );
        out[i] = end as u16;
        i += 1;
    }
    out
}

/// The `idx`-th of the strings concatenated in `all` that end at `ends`.
fn piece(all: &'static str, ends: &[u16], idx: usize) -> Option<&'static str> {
    let end = usize::from(*ends.get(idx)?);
    let start = match idx.checked_sub(1) {
        Some(before) => usize::from(*ends.get(before)?),
        None => 0,
    };
    all.get(start..end)
}

error_codes! {
    UNKNOWN_SERVER_ERROR = -1, false, "Broker hit an unexpected internal error while handling the request";
    NONE = 0, false, "Success; no error";
    OFFSET_OUT_OF_RANGE = 1, false, "Requested offset lies outside the partition's available offset range";
    CORRUPT_MESSAGE = 2, true, "Record data failed CRC or size/validity checks (or null key on a compacted topic)";
    UNKNOWN_TOPIC_OR_PARTITION = 3, true, "Broker does not host the requested topic or partition (or it does not exist)";
    INVALID_FETCH_SIZE = 4, false, "Fetch size in the request is not acceptable";
    LEADER_NOT_AVAILABLE = 5, true, "Partition currently has no leader, e.g. during a leader election";
    NOT_LEADER_OR_FOLLOWER = 6, true, "Broker is not the leader (or not a replica) for the partition; refresh metadata";
    REQUEST_TIMED_OUT = 7, true, "Request did not complete before its timeout";
    BROKER_NOT_AVAILABLE = 8, false, "Target broker is not available";
    REPLICA_NOT_AVAILABLE = 9, true, "Replica for the partition is not available on this broker";
    MESSAGE_TOO_LARGE = 10, false, "A produced message exceeds the broker's maximum accepted size";
    STALE_CONTROLLER_EPOCH = 11, false, "Controller epoch is stale; controller has moved";
    OFFSET_METADATA_TOO_LARGE = 12, false, "Offset commit metadata string is longer than the broker allows";
    NETWORK_EXCEPTION = 13, true, "Connection dropped before a response arrived";
    COORDINATOR_LOAD_IN_PROGRESS = 14, true, "Group/transaction coordinator is still loading its state";
    COORDINATOR_NOT_AVAILABLE = 15, true, "Coordinator is not available";
    NOT_COORDINATOR = 16, true, "Broker contacted is not the coordinator for this group/transactional id; rediscover it";
    INVALID_TOPIC_EXCEPTION = 17, false, "Topic name is invalid or the operation is not allowed on this topic";
    RECORD_LIST_TOO_LARGE = 18, false, "Produced batch is larger than the log segment size";
    NOT_ENOUGH_REPLICAS = 19, true, "Write rejected because in-sync replicas are fewer than min.insync.replicas";
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20, true, "Write was appended but to fewer in-sync replicas than required";
    INVALID_REQUIRED_ACKS = 21, false, "acks value in a produce request is not valid";
    ILLEGAL_GENERATION = 22, false, "Group generation id supplied by the member is not current";
    INCONSISTENT_GROUP_PROTOCOL = 23, false, "Member's group protocol (type or list) is incompatible or empty";
    INVALID_GROUP_ID = 24, false, "Group id is not valid (e.g. empty)";
    UNKNOWN_MEMBER_ID = 25, false, "Coordinator does not recognise the member id";
    INVALID_SESSION_TIMEOUT = 26, false, "Session timeout is outside the broker's allowed range";
    REBALANCE_IN_PROGRESS = 27, false, "Group is rebalancing; member must rejoin";
    INVALID_COMMIT_OFFSET_SIZE = 28, false, "Offset commit rejected because of its size";
    TOPIC_AUTHORIZATION_FAILED = 29, false, "Not authorized to access the topic";
    GROUP_AUTHORIZATION_FAILED = 30, false, "Not authorized to access the group";
    CLUSTER_AUTHORIZATION_FAILED = 31, false, "Not authorized for the cluster-level operation";
    INVALID_TIMESTAMP = 32, false, "Record timestamp is outside the accepted range";
    UNSUPPORTED_SASL_MECHANISM = 33, false, "Broker does not support the requested SASL mechanism";
    ILLEGAL_SASL_STATE = 34, false, "Request is not valid in the current SASL state";
    UNSUPPORTED_VERSION = 35, false, "API version requested is not supported by the broker";
    TOPIC_ALREADY_EXISTS = 36, false, "Topic to be created already exists";
    INVALID_PARTITIONS = 37, false, "Partition count is invalid";
    INVALID_REPLICATION_FACTOR = 38, false, "Replication factor is invalid";
    INVALID_REPLICA_ASSIGNMENT = 39, false, "Replica assignment is invalid";
    INVALID_CONFIG = 40, false, "Configuration supplied is invalid";
    NOT_CONTROLLER = 41, true, "Broker is not the active controller";
    INVALID_REQUEST = 42, false, "Request is malformed or inconsistent (often a client bug)";
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43, false, "Operation not supported by the topic's message format";
    POLICY_VIOLATION = 44, false, "Request violates a configured broker policy";
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45, false, "Broker saw a producer sequence number out of order";
    DUPLICATE_SEQUENCE_NUMBER = 46, false, "Broker saw a duplicate producer sequence number";
    INVALID_PRODUCER_EPOCH = 47, false, "Producer epoch is not valid for this producer id";
    INVALID_TXN_STATE = 48, false, "Operation not allowed in the transaction's current state";
    INVALID_PRODUCER_ID_MAPPING = 49, false, "Producer id is not mapped to the given transactional id";
    INVALID_TRANSACTION_TIMEOUT = 50, false, "Transaction timeout exceeds the broker maximum";
    CONCURRENT_TRANSACTIONS = 51, true, "Another transaction operation for this producer is still in progress";
    TRANSACTION_COORDINATOR_FENCED = 52, false, "Transaction coordinator's epoch is older than the broker's view";
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53, false, "Not authorized for the transactional id";
    SECURITY_DISABLED = 54, false, "Security features are disabled on the broker";
    OPERATION_NOT_ATTEMPTED = 55, false, "Broker did not attempt the operation (a related operation in the batch failed)";
    KAFKA_STORAGE_ERROR = 56, true, "Disk/log directory error on the broker for this partition";
    LOG_DIR_NOT_FOUND = 57, false, "Requested log directory was not found";
    SASL_AUTHENTICATION_FAILED = 58, false, "SASL authentication failed";
    UNKNOWN_PRODUCER_ID = 59, false, "Broker has no state for this producer id (e.g. its records expired)";
    REASSIGNMENT_IN_PROGRESS = 60, false, "A partition reassignment is already in progress";
    DELEGATION_TOKEN_AUTH_DISABLED = 61, false, "Delegation tokens are disabled";
    DELEGATION_TOKEN_NOT_FOUND = 62, false, "Delegation token not found";
    DELEGATION_TOKEN_OWNER_MISMATCH = 63, false, "Principal is not the owner or renewer of the delegation token";
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64, false, "Delegation token requests not allowed on this kind of connection";
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65, false, "Not authorized for the delegation token operation";
    DELEGATION_TOKEN_EXPIRED = 66, false, "Delegation token has expired";
    INVALID_PRINCIPAL_TYPE = 67, false, "Principal type is not supported";
    NON_EMPTY_GROUP = 68, false, "Group is not empty (e.g. delete refused)";
    GROUP_ID_NOT_FOUND = 69, false, "Group id does not exist";
    FETCH_SESSION_ID_NOT_FOUND = 70, true, "Incremental fetch session id not found on the broker";
    INVALID_FETCH_SESSION_EPOCH = 71, true, "Incremental fetch session epoch is wrong";
    LISTENER_NOT_FOUND = 72, true, "Leader has no listener matching the one the metadata request used";
    TOPIC_DELETION_DISABLED = 73, false, "Topic deletion is disabled on the broker";
    FENCED_LEADER_EPOCH = 74, true, "Leader epoch in the request is older than the broker's";
    UNKNOWN_LEADER_EPOCH = 75, true, "Leader epoch in the request is newer than the broker knows";
    UNSUPPORTED_COMPRESSION_TYPE = 76, false, "Client does not support the partition's compression type";
    STALE_BROKER_EPOCH = 77, false, "Broker epoch changed (inter-broker)";
    OFFSET_NOT_AVAILABLE = 78, true, "Leader's high watermark not caught up after election; offset not yet safe to serve";
    MEMBER_ID_REQUIRED = 79, false, "Member must obtain a member id before joining the group (rejoin with the returned id)";
    PREFERRED_LEADER_NOT_AVAILABLE = 80, true, "Preferred leader is not available";
    GROUP_MAX_SIZE_REACHED = 81, false, "Group is at its maximum member count";
    FENCED_INSTANCE_ID = 82, false, "Static member fenced: another member registered the same group.instance.id";
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83, true, "No eligible leader is available for the partition";
    ELECTION_NOT_NEEDED = 84, true, "Leader election was not needed for the partition";
    NO_REASSIGNMENT_IN_PROGRESS = 85, false, "No partition reassignment is in progress";
    GROUP_SUBSCRIBED_TO_TOPIC = 86, false, "Cannot delete offsets of a topic the group is actively subscribed to";
    INVALID_RECORD = 87, false, "Broker-side validation rejected the record";
    UNSTABLE_OFFSET_COMMIT = 88, true, "Pending transactional offsets must be resolved before fetching offsets";
    THROTTLING_QUOTA_EXCEEDED = 89, true, "Throttling quota exceeded";
    PRODUCER_FENCED = 90, false, "A newer producer with the same transactional id fenced this one";
    RESOURCE_NOT_FOUND = 91, false, "Request refers to a resource that does not exist";
    DUPLICATE_RESOURCE = 92, false, "Request refers to the same resource twice";
    UNACCEPTABLE_CREDENTIAL = 93, false, "Credential does not meet acceptability criteria";
    INCONSISTENT_VOTER_SET = 94, false, "Sender or receiver of a voter request is not in the expected voter set (KRaft)";
    INVALID_UPDATE_VERSION = 95, false, "Update version is not valid";
    FEATURE_UPDATE_FAILED = 96, false, "Finalized feature update failed due to an unexpected server error";
    PRINCIPAL_DESERIALIZATION_FAILURE = 97, false, "Principal could not be deserialized while forwarding a request";
    SNAPSHOT_NOT_FOUND = 98, false, "Requested snapshot not found (KRaft)";
    POSITION_OUT_OF_RANGE = 99, false, "Requested snapshot position is out of range (KRaft)";
    UNKNOWN_TOPIC_ID = 100, true, "Broker does not host the given topic id";
    DUPLICATE_BROKER_REGISTRATION = 101, false, "Broker id already registered";
    BROKER_ID_NOT_REGISTERED = 102, false, "Broker id not registered";
    INCONSISTENT_TOPIC_ID = 103, true, "Topic id in the request does not match the log's topic id";
    INCONSISTENT_CLUSTER_ID = 104, false, "Cluster id in the request does not match the server's";
    TRANSACTIONAL_ID_NOT_FOUND = 105, false, "Transactional id not found";
    FETCH_SESSION_TOPIC_ID_ERROR = 106, true, "Fetch session saw inconsistent topic id usage";
    INELIGIBLE_REPLICA = 107, false, "Proposed ISR contains an ineligible replica";
    NEW_LEADER_ELECTED = 108, false, "AlterPartition applied but leadership has since changed";
    OFFSET_MOVED_TO_TIERED_STORAGE = 109, false, "Requested offset now lives only in tiered storage";
    FENCED_MEMBER_EPOCH = 110, false, "Member epoch fenced by the group coordinator; member must drop partitions and rejoin";
    UNRELEASED_INSTANCE_ID = 111, false, "Instance id is still in use by another member that must leave first";
    UNSUPPORTED_ASSIGNOR = 112, false, "Assignor or its version range is not supported by the group";
    STALE_MEMBER_EPOCH = 113, false, "Member epoch is stale; retry after heartbeat gives a new epoch";
    MISMATCHED_ENDPOINT_TYPE = 114, false, "Request sent to the wrong endpoint type (broker vs controller)";
    UNSUPPORTED_ENDPOINT_TYPE = 115, false, "Endpoint type not supported yet";
    UNKNOWN_CONTROLLER_ID = 116, false, "Controller id is unknown";
    UNKNOWN_SUBSCRIPTION_ID = 117, false, "Telemetry push used an invalid or outdated subscription id";
    TELEMETRY_TOO_LARGE = 118, false, "Telemetry push exceeds the broker size limit";
    INVALID_REGISTRATION = 119, false, "Controller judged the broker registration invalid";
    TRANSACTION_ABORTABLE = 120, false, "Transaction hit an error; the client can abort it and continue with the same transactional id";
    INVALID_RECORD_STATE = 121, false, "Record state invalid; share-group acknowledgement could not be completed";
    SHARE_SESSION_NOT_FOUND = 122, true, "Share session not found";
    INVALID_SHARE_SESSION_EPOCH = 123, true, "Share session epoch is invalid";
    FENCED_STATE_EPOCH = 124, false, "Share-group state epoch mismatch at the share coordinator";
    INVALID_VOTER_KEY = 125, false, "Voter key does not match the receiving replica (KRaft)";
    DUPLICATE_VOTER = 126, false, "Voter is already in the voter set (KRaft)";
    VOTER_NOT_FOUND = 127, false, "Voter is not in the voter set (KRaft)";
    INVALID_REGULAR_EXPRESSION = 128, false, "Regular expression in the request is invalid";
    REBOOTSTRAP_REQUIRED = 129, false, "Client metadata is stale; client should re-bootstrap";
    STREAMS_INVALID_TOPOLOGY = 130, false, "Kafka Streams topology supplied is invalid";
    STREAMS_INVALID_TOPOLOGY_EPOCH = 131, false, "Kafka Streams topology epoch is invalid";
    STREAMS_TOPOLOGY_FENCED = 132, false, "Kafka Streams topology epoch is outdated (fenced)";
    SHARE_SESSION_LIMIT_REACHED = 133, true, "Maximum number of share sessions reached";
}

impl ErrorCode {
    /// The code's index in the tables, or `None` for an unknown code.
    fn index(self) -> Option<usize> {
        // Codes run contiguously from -1, so the tables are indexed directly.
        let idx = usize::try_from(i32::from(self.0) + 1).ok()?;
        (CODES.get(idx) == Some(&self.0)).then_some(idx)
    }

    /// Whether this is success.
    pub fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// Kafka's name for the code (`NOT_LEADER_OR_FOLLOWER`), or `None` for a code this crate
    /// does not know.
    pub fn name(self) -> Option<&'static str> {
        piece(NAMES, &NAME_ENDS, self.index()?)
    }

    /// Kafka's one-line description, or `None` for an unknown code.
    pub fn description(self) -> Option<&'static str> {
        piece(DESCRIPTIONS, &DESCRIPTION_ENDS, self.index()?)
    }

    /// Whether Kafka classes the error as retriable (its exception extends
    /// `RetriableException`). Unknown codes are not retriable.
    pub fn is_retriable(self) -> bool {
        self.index()
            .and_then(|idx| RETRIABLE.get(idx))
            .is_some_and(|&retriable| retriable)
    }
}

impl core::fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        debug_named(f, self.name(), "ErrorCode", self.0)
    }
}

/// The `Debug` form of an open code newtype (this one, [`crate::ApiKey`]): `NAME(code)` for a
/// known code, `Type(code)` for an unknown one.
pub(crate) fn debug_named(
    f: &mut core::fmt::Formatter<'_>,
    name: Option<&str>,
    type_name: &str,
    code: i16,
) -> core::fmt::Result {
    write!(f, "{}({code})", name.unwrap_or(type_name))
}

impl core::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "unknown error code {}", self.0),
        }
    }
}

impl From<i16> for ErrorCode {
    fn from(v: i16) -> Self {
        ErrorCode(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_135_codes_are_named() {
        assert_eq!(CODES.len(), 135);
        assert_eq!(RETRIABLE.len(), 135);
        for (i, &code) in CODES.iter().enumerate() {
            assert_eq!(i as i32 - 1, i32::from(code), "code {code} out of place");
            let name = ErrorCode(code).name().unwrap();
            assert!(
                !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()),
                "{name}"
            );
            assert!(!ErrorCode(code).description().unwrap().is_empty());
        }
        assert_eq!(ErrorCode(-1).name(), Some("UNKNOWN_SERVER_ERROR"));
        assert_eq!(
            ErrorCode::SHARE_SESSION_LIMIT_REACHED.description(),
            Some("Maximum number of share sessions reached")
        );
        assert_eq!(
            ErrorCode::OFFSET_OUT_OF_RANGE.description(),
            Some("Requested offset lies outside the partition's available offset range")
        );
        assert_eq!(
            ErrorCode::NOT_LEADER_OR_FOLLOWER.name(),
            Some("NOT_LEADER_OR_FOLLOWER")
        );
        assert!(ErrorCode::NOT_LEADER_OR_FOLLOWER.is_retriable());
        assert!(!ErrorCode::OFFSET_OUT_OF_RANGE.is_retriable());
        assert_eq!(ErrorCode(-1), ErrorCode::UNKNOWN_SERVER_ERROR);
    }

    /// The table is what `tools/error_codes.py` makes of `tools/error-codes.tsv`.
    #[test]
    fn table_matches_the_tsv() {
        let tsv = include_str!("../tools/error-codes.tsv");
        let mut rows = tsv.lines();
        assert_eq!(rows.next(), Some("code\tname\tretriable\tdescription"));
        let mut count = 0;
        for row in rows {
            let cols: Vec<&str> = row.split('\t').collect();
            let [code, name, retriable, desc] = cols[..] else {
                panic!("{row}");
            };
            let code = ErrorCode(code.parse().unwrap());
            assert_eq!(code.name(), Some(name), "{row}");
            assert_eq!(code.is_retriable(), retriable == "true", "{row}");
            assert_eq!(code.description(), Some(desc), "{row}");
            count += 1;
        }
        assert_eq!(count, CODES.len());
    }

    #[test]
    fn unknown_codes_survive() {
        let e = ErrorCode(4242);
        assert_eq!(e.name(), None);
        assert!(!e.is_retriable());
        assert_eq!(e.to_string(), "unknown error code 4242");
        assert_eq!(ErrorCode(-7).to_string(), "unknown error code -7");
    }
}

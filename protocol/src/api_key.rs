//! API keys: an open newtype over the wire's `int16`.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_api_keys>

/// A Kafka API key. Unknown keys (a newer broker's) survive decoding and print their number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApiKey(pub i16);

macro_rules! api_keys {
    ($($name:ident = $code:literal, $display:literal;)*) => {
        impl ApiKey {
            $(
                #[doc = concat!("`", $display, "` (key ", stringify!($code), ").")]
                pub const $name: ApiKey = ApiKey($code);
            )*

            /// Kafka's name for the API (`ListOffsets`), or `None` for a key this crate does
            /// not know.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($code => Some($display),)*
                    _ => None,
                }
            }
        }
    };
}

api_keys! {
    PRODUCE = 0, "Produce";
    FETCH = 1, "Fetch";
    LIST_OFFSETS = 2, "ListOffsets";
    METADATA = 3, "Metadata";
    OFFSET_COMMIT = 8, "OffsetCommit";
    OFFSET_FETCH = 9, "OffsetFetch";
    FIND_COORDINATOR = 10, "FindCoordinator";
    JOIN_GROUP = 11, "JoinGroup";
    HEARTBEAT = 12, "Heartbeat";
    LEAVE_GROUP = 13, "LeaveGroup";
    SYNC_GROUP = 14, "SyncGroup";
    DESCRIBE_GROUPS = 15, "DescribeGroups";
    LIST_GROUPS = 16, "ListGroups";
    SASL_HANDSHAKE = 17, "SaslHandshake";
    API_VERSIONS = 18, "ApiVersions";
    CREATE_TOPICS = 19, "CreateTopics";
    DELETE_TOPICS = 20, "DeleteTopics";
    INIT_PRODUCER_ID = 22, "InitProducerId";
    ADD_PARTITIONS_TO_TXN = 24, "AddPartitionsToTxn";
    ADD_OFFSETS_TO_TXN = 25, "AddOffsetsToTxn";
    END_TXN = 26, "EndTxn";
    TXN_OFFSET_COMMIT = 28, "TxnOffsetCommit";
    DESCRIBE_CONFIGS = 32, "DescribeConfigs";
    DESCRIBE_LOG_DIRS = 35, "DescribeLogDirs";
    SASL_AUTHENTICATE = 36, "SaslAuthenticate";
    DELETE_GROUPS = 42, "DeleteGroups";
    DESCRIBE_CLUSTER = 60, "DescribeCluster";
    DESCRIBE_PRODUCERS = 61, "DescribeProducers";
    CONSUMER_GROUP_HEARTBEAT = 68, "ConsumerGroupHeartbeat";
}

impl core::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        crate::error_code::debug_named(f, self.name(), "ApiKey", self.0)
    }
}

impl core::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "api key {}", self.0),
        }
    }
}

//! Metadata (API key 3), versions 1–13: brokers, topics, partitions and their leaders.
//!
//! Version 9 is the first flexible version. Version 10 adds topic ids (and lets a request name
//! a topic by id with a null name, which brokers honour from version 12); version 13 adds a
//! top-level error code to the response. Version 0 (where an empty topic list meant "all
//! topics") is not implemented: from version 1 a null list means all topics.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_Metadata>, KIP-516 (topic ids),
//! `MetadataRequest.json` / `MetadataResponse.json` (Kafka 4.2.1).

use crate::messages::codec::{wire_message, wire_struct};
use crate::primitives::Uuid;
#[cfg(doc)]
use crate::Error;

/// The default of the `*AuthorizedOperations` bitfields: "not requested".
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// Metadata request body.
    ///
    /// `topics: None` asks for every topic; `Some(vec![])` (the schema's default) asks for none,
    /// which still returns the brokers and the controller.
    ///
    /// # References
    /// `MetadataRequest.json`.
    pub struct MetadataRequest in "MetadataRequest" {
        /// The topics to fetch metadata for, or `None` for all topics.
        pub topics: Option<Vec<MetadataRequestTopic>> = Some(Vec::new()),
        /// Whether the broker may auto-create requested topics that don't exist (versions 4+,
        /// default true; before version 4 brokers always may, so `false` can't be encoded there).
        pub allow_auto_topic_creation: bool = true => since(4),
        /// Whether to include cluster authorized operations (versions 8–10).
        pub include_cluster_authorized_operations: bool => between(8, 10),
        /// Whether to include topic authorized operations (versions 8+).
        pub include_topic_authorized_operations: bool => since(8),
    }

    /// A topic in a Metadata request.
    pub struct MetadataRequestTopic in "MetadataRequest.topics" {
        /// The topic id (versions 10+; ignorable). Brokers look topics up by id from version 12.
        pub topic_id: Uuid => since(10).ignorable(),
        /// The topic name; null (versions 10+) when asking by id. Defaults to `""`, as in the
        /// schema.
        pub name: Option<String> = Some(String::new()) => since(0).nullable_from(10),
    }
}

impl MetadataRequest {
    /// A request for every topic. (Auto-creation is left at its default: a request for all
    /// topics names none that could be created, and the default encodes at every version.)
    pub fn all_topics() -> Self {
        MetadataRequest {
            topics: None,
            ..Self::default()
        }
    }

    /// A request for the named topics, without auto-creation.
    ///
    /// Versions before 4 can't say "don't auto-create" (brokers always may), so encoding this
    /// below version 4 fails with [`Error::FieldNotInVersion`], as in Kafka's Java client.
    pub fn for_topics<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        MetadataRequest {
            topics: Some(
                names
                    .into_iter()
                    .map(|n| MetadataRequestTopic {
                        name: Some(n.into()),
                        ..MetadataRequestTopic::default()
                    })
                    .collect(),
            ),
            allow_auto_topic_creation: false,
            ..Self::default()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

wire_struct! {
    /// Metadata response body.
    ///
    /// # References
    /// `MetadataResponse.json`.
    pub struct MetadataResponse in "MetadataResponse" {
        /// Throttle time in milliseconds because of a quota violation (versions 3+; ignorable).
        pub throttle_time_ms: i32 => since(3).ignorable(),
        /// The brokers in the cluster.
        pub brokers: Vec<MetadataResponseBroker>,
        /// The cluster id, or null (versions 2+; ignorable).
        pub cluster_id: Option<String> => since(2).ignorable(),
        /// The controller's broker id, or -1 (versions 1+; ignorable).
        pub controller_id: i32 = -1,
        /// The topics.
        pub topics: Vec<MetadataResponseTopic>,
        /// Bitfield of the cluster's authorized operations (versions 8–10; default
        /// [`AUTHORIZED_OPERATIONS_OMITTED`]).
        pub cluster_authorized_operations: i32 = AUTHORIZED_OPERATIONS_OMITTED => between(8, 10),
        /// The top-level error code, or 0 (versions 13+; ignorable).
        pub error_code: i16 => since(13).ignorable(),
    }

    /// A broker in a Metadata response.
    pub struct MetadataResponseBroker in "MetadataResponse.brokers" {
        /// The broker id.
        pub node_id: i32,
        /// The broker's host name.
        pub host: String,
        /// The broker's port.
        pub port: i32,
        /// The broker's rack, or null (versions 1+; ignorable).
        pub rack: Option<String>,
    }

    /// A topic in a Metadata response.
    pub struct MetadataResponseTopic in "MetadataResponse.topics" {
        /// The topic's error code, or 0.
        pub error_code: i16,
        /// The topic name; null (versions 12+) for a topic asked for by an unknown id. Defaults
        /// to `""`, as in the schema.
        pub name: Option<String> = Some(String::new()) => since(0).nullable_from(12),
        /// The topic id, zero for a topic asked for by an unknown name (versions 10+; ignorable).
        pub topic_id: Uuid => since(10).ignorable(),
        /// Whether the topic is internal (versions 1+; ignorable).
        pub is_internal: bool,
        /// The partitions.
        pub partitions: Vec<MetadataResponsePartition>,
        /// Bitfield of the topic's authorized operations (versions 8+; default
        /// [`AUTHORIZED_OPERATIONS_OMITTED`]).
        pub topic_authorized_operations: i32 = AUTHORIZED_OPERATIONS_OMITTED => since(8),
    }

    /// A partition in a Metadata response.
    pub struct MetadataResponsePartition in "MetadataResponse.topics.partitions" {
        /// The partition's error code, or 0.
        pub error_code: i16,
        /// The partition index.
        pub partition_index: i32,
        /// The leader's broker id.
        pub leader_id: i32,
        /// The leader epoch, or -1 (versions 7+; ignorable).
        pub leader_epoch: i32 = -1 => since(7).ignorable(),
        /// All replicas of the partition.
        pub replica_nodes: Vec<i32>,
        /// The in-sync replicas.
        pub isr_nodes: Vec<i32>,
        /// The offline replicas (versions 5+; ignorable).
        pub offline_replicas: Vec<i32> => since(5).ignorable(),
    }
}

wire_message!(MetadataRequest => MetadataResponse: METADATA, versions 1..=13, first flexible 9);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::messages::decode_exact;
    use crate::messages::testing::{
        arb_unknown_tags, arb_uuid, assert_encoding_prefixes_fail, check_not_in_version,
        codec_tests, encode as enc, property_tests,
    };
    use crate::messages::Message;
    use bytes::{Bytes, BytesMut};
    use proptest::collection::vec;
    use proptest::option;
    use proptest::prelude::*;

    fn name(nullable: bool) -> BoxedStrategy<Option<String>> {
        if nullable {
            option::of("[a-zA-Z0-9._-]{0,12}").boxed()
        } else {
            "[a-zA-Z0-9._-]{0,12}".prop_map(Some).boxed()
        }
    }

    fn request(v: i16) -> impl Strategy<Value = MetadataRequest> {
        let flexible = v >= 9;
        let topic = (arb_uuid(), name(v >= 10), arb_unknown_tags(flexible)).prop_map(
            move |(topic_id, name, tags)| MetadataRequestTopic {
                topic_id: if v >= 10 { topic_id } else { Uuid::ZERO },
                name,
                unknown_tagged_fields: tags,
            },
        );
        (
            option::of(vec(topic, 0..4)),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            arb_unknown_tags(flexible),
        )
            .prop_map(move |(topics, auto, cluster_ops, topic_ops, tags)| {
                MetadataRequest {
                    topics,
                    allow_auto_topic_creation: v < 4 || auto,
                    include_cluster_authorized_operations: (8..=10).contains(&v) && cluster_ops,
                    include_topic_authorized_operations: v >= 8 && topic_ops,
                    unknown_tagged_fields: tags,
                }
            })
    }

    fn partition(v: i16) -> impl Strategy<Value = MetadataResponsePartition> {
        (
            (any::<i16>(), any::<i32>(), any::<i32>(), any::<i32>()),
            vec(any::<i32>(), 0..4),
            vec(any::<i32>(), 0..4),
            vec(any::<i32>(), 0..3),
            arb_unknown_tags(v >= 9),
        )
            .prop_map(
                move |((error_code, index, leader, epoch), replicas, isr, offline, tags)| {
                    MetadataResponsePartition {
                        error_code,
                        partition_index: index,
                        leader_id: leader,
                        leader_epoch: if v >= 7 { epoch } else { -1 },
                        replica_nodes: replicas,
                        isr_nodes: isr,
                        offline_replicas: if v >= 5 { offline } else { Vec::new() },
                        unknown_tagged_fields: tags,
                    }
                },
            )
    }

    fn topic(v: i16) -> impl Strategy<Value = MetadataResponseTopic> {
        (
            any::<i16>(),
            name(v >= 12),
            arb_uuid(),
            any::<bool>(),
            vec(partition(v), 0..3),
            any::<i32>(),
            arb_unknown_tags(v >= 9),
        )
            .prop_map(
                move |(error_code, name, id, internal, partitions, ops, tags)| {
                    MetadataResponseTopic {
                        error_code,
                        name,
                        topic_id: if v >= 10 { id } else { Uuid::ZERO },
                        is_internal: internal,
                        partitions,
                        topic_authorized_operations: if v >= 8 {
                            ops
                        } else {
                            AUTHORIZED_OPERATIONS_OMITTED
                        },
                        unknown_tagged_fields: tags,
                    }
                },
            )
    }

    fn response(v: i16) -> impl Strategy<Value = MetadataResponse> {
        let broker = (
            any::<i32>(),
            "[a-z0-9.-]{0,12}",
            any::<i32>(),
            option::of("[a-z0-9-]{0,6}"),
            arb_unknown_tags(v >= 9),
        )
            .prop_map(|(node_id, host, port, rack, tags)| MetadataResponseBroker {
                node_id,
                host,
                port,
                rack,
                unknown_tagged_fields: tags,
            });
        (
            (
                any::<i32>(),
                option::of("[a-zA-Z0-9_-]{0,22}"),
                any::<i32>(),
            ),
            vec(broker, 0..3),
            vec(topic(v), 0..3),
            any::<i32>(),
            any::<i16>(),
            arb_unknown_tags(v >= 9),
        )
            .prop_map(
                move |((throttle, cluster_id, controller), brokers, topics, ops, error, tags)| {
                    MetadataResponse {
                        throttle_time_ms: if v >= 3 { throttle } else { 0 },
                        brokers,
                        cluster_id: if v >= 2 { cluster_id } else { None },
                        controller_id: controller,
                        topics,
                        cluster_authorized_operations: if (8..=10).contains(&v) {
                            ops
                        } else {
                            AUTHORIZED_OPERATIONS_OMITTED
                        },
                        error_code: if v >= 13 { error } else { 0 },
                        unknown_tagged_fields: tags,
                    }
                },
            )
    }

    property_tests!(MetadataRequest, MetadataResponse, 128);

    /// v10 and v12: one topic asked for by id, with a null name.
    fn request_by_id(id: [u8; 16], cluster_ops: bool) -> MetadataRequest {
        MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                topic_id: Uuid(id),
                name: None,
                ..Default::default()
            }]),
            allow_auto_topic_creation: false,
            include_cluster_authorized_operations: cluster_ops,
            include_topic_authorized_operations: true,
            ..Default::default()
        }
    }

    /// The topic id of the requests by id: 15 zero bytes, then 7.
    const REQUEST_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];

    /// v10, flexible: one topic by id, no name; the three flags; no tags.
    const REQUEST_V10: &[u8] = &[
        0x02, // topics: compact 1
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7,    // topic_id
        0x00, // null name
        0x00, // topic tagged section
        0x00, // allow_auto_topic_creation
        0x01, // include_cluster_authorized_operations (8-10)
        0x01, // include_topic_authorized_operations
        0x00, // tagged section
    ];

    /// v12: the same without include_cluster_authorized_operations (gone after v10).
    const REQUEST_V12: &[u8] = &[
        0x02, // topics: compact 1
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7,    // topic_id
        0x00, // null name
        0x00, // topic tagged section
        0x00, // allow_auto_topic_creation
        0x01, // include_topic_authorized_operations
        0x00, // tagged section
    ];

    /// Broker 1 at `host`:9092 in `rack`.
    fn broker_1(host: &str, rack: Option<&str>) -> MetadataResponseBroker {
        MetadataResponseBroker {
            node_id: 1,
            host: host.into(),
            port: 9092,
            rack: rack.map(Into::into),
            ..Default::default()
        }
    }

    fn response_v1() -> MetadataResponse {
        MetadataResponse {
            brokers: vec![broker_1("h", None)],
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some("t".into()),
                partitions: vec![MetadataResponsePartition {
                    leader_id: 1,
                    replica_nodes: vec![1],
                    isr_nodes: vec![1],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// v1: broker 1 at h:9092, controller 1, topic "t" with partition 0 led by broker 1.
    const RESPONSE_V1: &[u8] = &[
        0x00, 0x00, 0x00, 0x01, // one broker
        0x00, 0x00, 0x00, 0x01, // node_id
        0x00, 0x01, b'h', // host
        0x00, 0x00, 0x23, 0x84, // port
        0xff, 0xff, // null rack
        0x00, 0x00, 0x00, 0x01, // controller_id
        0x00, 0x00, 0x00, 0x01, // one topic
        0x00, 0x00, // error_code
        0x00, 0x01, b't', // name
        0x00, // is_internal
        0x00, 0x00, 0x00, 0x01, // one partition
        0x00, 0x00, // error_code
        0x00, 0x00, 0x00, 0x00, // partition_index
        0x00, 0x00, 0x00, 0x01, // leader_id
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // replicas [1]
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // isr [1]
    ];

    /// The topic id of [`response_v13`]: 0xab, then 15 zero bytes.
    const RESPONSE_TOPIC_ID: [u8; 16] = [0xab, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

    fn response_v13() -> MetadataResponse {
        MetadataResponse {
            throttle_time_ms: 2,
            brokers: vec![broker_1("h", Some("r"))],
            cluster_id: Some("c".into()),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                error_code: 0,
                name: Some("t".into()),
                topic_id: Uuid(RESPONSE_TOPIC_ID),
                is_internal: true,
                partitions: vec![MetadataResponsePartition {
                    error_code: 0,
                    partition_index: 2,
                    leader_id: 1,
                    leader_epoch: 5,
                    replica_nodes: vec![1],
                    isr_nodes: vec![],
                    offline_replicas: vec![1],
                    ..Default::default()
                }],
                topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
                ..Default::default()
            }],
            error_code: 0,
            ..Default::default()
        }
    }

    /// v13, flexible: throttle 2, broker 1 at h:9092 in rack r, cluster c, controller 1, the
    /// internal topic "t" by id with partition 2 (epoch 5, an empty ISR, broker 1 offline).
    const RESPONSE_V13: &[u8] = &[
        0x00, 0x00, 0x00, 0x02, // throttle
        0x02, // one broker
        0x00, 0x00, 0x00, 0x01, // node_id
        0x02, b'h', // host
        0x00, 0x00, 0x23, 0x84, // port
        0x02, b'r', // rack
        0x00, // broker tagged section
        0x02, b'c', // cluster_id
        0x00, 0x00, 0x00, 0x01, // controller_id
        0x02, // one topic
        0x00, 0x00, // error_code
        0x02, b't', // name
        0xab, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    // topic_id
        0x01, // is_internal
        0x02, // one partition
        0x00, 0x00, // error_code
        0x00, 0x00, 0x00, 0x02, // partition_index
        0x00, 0x00, 0x00, 0x01, // leader_id
        0x00, 0x00, 0x00, 0x05, // leader_epoch
        0x02, 0x00, 0x00, 0x00, 0x01, // replicas [1]
        0x01, // isr []
        0x02, 0x00, 0x00, 0x00, 0x01, // offline [1]
        0x00, // partition tagged section
        0x80, 0x00, 0x00, 0x00, // topic_authorized_operations i32::MIN
        0x00, // topic tagged section
        // no cluster_authorized_operations after v10
        0x00, 0x00, // error_code (13+)
        0x00, // tagged section
    ];

    fn sample_response() -> MetadataResponse {
        MetadataResponse {
            throttle_time_ms: 1,
            brokers: vec![broker_1("b1", Some("r"))],
            cluster_id: Some("cid".into()),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some("t".into()),
                partitions: vec![MetadataResponsePartition {
                    leader_id: 1,
                    replica_nodes: vec![1, 2],
                    isr_nodes: vec![1],
                    offline_replicas: vec![2],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn prefixes_fail_and_trailing_bytes_are_refused() {
        let req = MetadataRequest::for_topics(["a", "bc"]);
        let resp = sample_response();
        for v in 1..=13 {
            // allow_auto_topic_creation false can't be sent before v4.
            let req = if v < 4 {
                MetadataRequest {
                    allow_auto_topic_creation: true,
                    ..req.clone()
                }
            } else {
                req.clone()
            };
            assert_encoding_prefixes_fail(&req, v);
            assert_encoding_prefixes_fail(&resp, v);
        }
    }

    #[test]
    fn non_ignorable_fields_absent_in_version_error() {
        let cluster_ops = MetadataRequest {
            include_cluster_authorized_operations: true,
            ..Default::default()
        };
        let topic_ops = MetadataRequest {
            include_topic_authorized_operations: true,
            ..Default::default()
        };
        check_not_in_version(&[
            (3, MetadataRequest::for_topics(["t"])),
            (11, cluster_ops.clone()),
            (7, cluster_ops),
            (7, topic_ops),
        ]);
        check_not_in_version(&[
            (
                11,
                MetadataResponse {
                    cluster_authorized_operations: 0,
                    ..Default::default()
                },
            ),
            (
                7,
                MetadataResponse {
                    topics: vec![MetadataResponseTopic {
                        topic_authorized_operations: 0,
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            ),
        ]);
        // Ignorable fields are dropped instead: v1 has no throttle, cluster id or error code.
        let ignorable = MetadataResponse {
            throttle_time_ms: 5,
            cluster_id: Some("c".into()),
            error_code: 3,
            ..Default::default()
        };
        assert_eq!(
            enc(&ignorable, 1),
            vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]
        );
    }

    #[test]
    fn null_names_only_where_the_version_allows() {
        let mut b = BytesMut::new();
        let by_id = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                topic_id: Uuid([1; 16]),
                name: None,
                ..Default::default()
            }]),
            ..Default::default()
        };
        assert!(matches!(
            by_id.encode(&mut b, 9),
            Err(Error::UnexpectedNull { version: 9, .. })
        ));
        assert!(by_id.encode(&mut b, 10).is_ok());
        // A request for all topics encodes at every version.
        for v in 1..=13 {
            assert!(MetadataRequest::all_topics().encode(&mut b, v).is_ok());
        }
        // A null name on the wire at v1: refused.
        let wire = Bytes::from_static(&[0, 0, 0, 1, 0xff, 0xff]);
        assert!(matches!(
            decode_exact::<MetadataRequest>(wire, 1),
            Err(Error::UnexpectedNull { .. })
        ));
        let resp = MetadataResponse {
            topics: vec![MetadataResponseTopic {
                name: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(resp.encode(&mut b, 11).is_err());
        assert!(resp.encode(&mut b, 12).is_ok());
    }

    codec_tests! {
        encodings {
            MetadataRequest: [
                // v1: a null array asks for all topics.
                (
                    1,
                    &[0xff, 0xff, 0xff, 0xff],
                    MetadataRequest {
                        topics: None,
                        ..Default::default()
                    },
                ),
                (
                    4,
                    &[
                        0x00, 0x00, 0x00, 0x01, // one topic
                        0x00, 0x01, b't', // name
                        0x00, // allow_auto_topic_creation false
                    ],
                    MetadataRequest::for_topics(["t"]),
                ),
                (10, REQUEST_V10, request_by_id(REQUEST_TOPIC_ID, true)),
                (12, REQUEST_V12, request_by_id(REQUEST_TOPIC_ID, false)),
            ],
            MetadataResponse: [(1, RESPONSE_V1, response_v1()), (13, RESPONSE_V13, response_v13())],
        }
        length_bombs {
            MetadataRequest: [
                // v1: topics count 0x7fffffff.
                (1, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]),
                // v9: compact topics counts 0x7fffffff and 0xffffffff.
                (9, &[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0]),
                (9, &[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0]),
            ],
            MetadataResponse: [
                // v1: brokers count 0x7fffffff.
                (1, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]),
                // v1: one broker whose host claims 0x7fff bytes.
                (1, &[0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 0, 0, 0]),
                // v9: no brokers, null cluster id, controller, topics count 0x7ffffffe.
                (
                    9,
                    &[
                        0, 0, 0, 0, 0x01, 0x00, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x07, 0,
                    ],
                ),
                // v1: replica_nodes count 0x7fffffff inside a partition (no brokers, controller,
                // one topic "t" with one partition: error, index, leader).
                (
                    1,
                    &[
                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, b't', 0, 0, 0, 0, 1, 0, 0, 0,
                        0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0,
                    ],
                ),
            ],
        }
    }
}

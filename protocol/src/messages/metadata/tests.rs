//! Tests of `metadata`: the Metadata request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

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
        .prop_map(
            move |(topics, auto, cluster_ops, topic_ops, tags)| MetadataRequest {
                topics,
                allow_auto_topic_creation: v < 4 || auto,
                include_cluster_authorized_operations: (8..=10).contains(&v) && cluster_ops,
                include_topic_authorized_operations: v >= 8 && topic_ops,
                unknown_tagged_fields: tags,
            },
        )
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
            move |(error_code, name, id, internal, partitions, ops, tags)| MetadataResponseTopic {
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

/// v12: [`REQUEST_V10`] without include_cluster_authorized_operations (gone after v10), the
/// third byte from the end.
fn request_v12_bytes() -> Vec<u8> {
    let mut bytes = REQUEST_V10.to_vec();
    bytes.remove(bytes.len() - 3);
    bytes
}

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

#[test]
fn prefixes_fail_and_trailing_bytes_are_refused() {
    let req = MetadataRequest::for_topics(["a", "bc"]);
    // Versions before 13 drop what they lack of it (all ignorable).
    let resp = response_v13();
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
        encode(&ignorable, 1),
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
            (12, &request_v12_bytes()[..], request_by_id(REQUEST_TOPIC_ID, false)),
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

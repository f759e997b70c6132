//! Tests of `list_offsets`: the ListOffsets request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

// --- helpers ------------------------------------------------------------------------------

/// The parts of a topic of the request or the response: a name, up to three partitions
/// drawn from `partition`, and unknown tags.
fn arb_topic<P: core::fmt::Debug>(
    partition: impl Strategy<Value = P>,
    flex: bool,
) -> impl Strategy<Value = (String, Vec<P>, UnknownTaggedFields)> {
    let partitions = proptest::collection::vec(partition, 0..4);
    (".{0,12}", partitions, arb_unknown_tags(flex))
}

fn arb_request(version: i16) -> impl Strategy<Value = ListOffsetsRequest> {
    let flex = ListOffsetsRequest::is_flexible(version);
    let partition = (any::<(i32, i32, i64)>(), arb_unknown_tags(flex)).prop_map(
        move |((partition_index, epoch, timestamp), tags)| ListOffsetsPartition {
            partition_index,
            current_leader_epoch: if version >= 4 { epoch } else { -1 },
            timestamp,
            unknown_tagged_fields: tags,
        },
    );
    let topic = arb_topic(partition, flex).prop_map(|(name, partitions, tags)| ListOffsetsTopic {
        name,
        partitions,
        unknown_tagged_fields: tags,
    });
    (
        any::<i32>(),
        any::<i8>(),
        proptest::collection::vec(topic, 0..4),
        any::<i32>(),
        arb_unknown_tags(flex),
    )
        .prop_map(move |(replica_id, isolation, topics, timeout_ms, tags)| {
            ListOffsetsRequest {
                replica_id,
                isolation_level: IsolationLevel(if version >= 2 { isolation } else { 0 }),
                topics,
                timeout_ms: if version >= 10 { timeout_ms } else { 0 },
                unknown_tagged_fields: tags,
            }
        })
}

fn arb_response(version: i16) -> impl Strategy<Value = ListOffsetsResponse> {
    let flex = ListOffsetsResponse::is_flexible(version);
    let partition = (any::<(i32, i16, i64, i64, i32)>(), arb_unknown_tags(flex)).prop_map(
        move |((partition_index, error_code, timestamp, offset, epoch), tags)| {
            ListOffsetsPartitionResponse {
                partition_index,
                error_code,
                timestamp,
                offset,
                leader_epoch: if version >= 4 { epoch } else { -1 },
                unknown_tagged_fields: tags,
            }
        },
    );
    let topic =
        arb_topic(partition, flex).prop_map(|(name, partitions, tags)| ListOffsetsTopicResponse {
            name,
            partitions,
            unknown_tagged_fields: tags,
        });
    (
        any::<i32>(),
        proptest::collection::vec(topic, 0..4),
        arb_unknown_tags(flex),
    )
        .prop_map(move |(throttle, topics, tags)| ListOffsetsResponse {
            throttle_time_ms: if version >= 2 { throttle } else { 0 },
            topics,
            unknown_tagged_fields: tags,
        })
}

// --- 1. round trips at every version --------------------------------------------------------

sample_property_tests!(
    ListOffsetsRequest,
    ListOffsetsResponse,
    [
        (REQUEST_V1, 1),
        (REQUEST_V10, 10),
        (RESPONSE_V2, 2),
        (RESPONSE_V8, 8),
    ]
);

// --- 2. hand-derived byte vectors ----------------------------------------------------------

/// v1, classic: replica -1, topic "t", partition 0 at EARLIEST.
const REQUEST_V1: &[u8] = &[
    0xff, 0xff, 0xff, 0xff, // replica_id -1
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x01, b't', // name "t"
    0x00, 0x00, 0x00, 0x01, // partitions: 1
    0x00, 0x00, 0x00, 0x00, // partition_index 0
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, // timestamp -2
];

fn request_v1() -> ListOffsetsRequest {
    ListOffsetsRequest {
        replica_id: CONSUMER_REPLICA_ID,
        topics: vec![ListOffsetsTopic {
            name: "t".into(),
            partitions: vec![ListOffsetsPartition {
                partition_index: 0,
                timestamp: EARLIEST,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// v10, flexible: read-committed, partition 3 at epoch 5 for MAX_TIMESTAMP, timeout 1000,
/// and an unknown tag 5 of two bytes in the body's tagged section.
const REQUEST_V10: &[u8] = &[
    0xff, 0xff, 0xff, 0xff, // replica_id -1
    0x01, // isolation_level READ_COMMITTED
    0x02, // topics: compact 1
    0x02, b't', // name "t"
    0x02, // partitions: compact 1
    0x00, 0x00, 0x00, 0x03, // partition_index 3
    0x00, 0x00, 0x00, 0x05, // current_leader_epoch 5
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, // timestamp -3
    0x00, // partition tags
    0x00, // topic tags
    0x00, 0x00, 0x03, 0xe8, // timeout_ms 1000
    0x01, 0x05, 0x02, 0xab, 0xcd, // body tags: {5: ab cd}
];

fn request_v10() -> ListOffsetsRequest {
    ListOffsetsRequest {
        replica_id: -1,
        isolation_level: IsolationLevel::READ_COMMITTED,
        topics: vec![ListOffsetsTopic {
            name: "t".into(),
            partitions: vec![ListOffsetsPartition {
                partition_index: 3,
                current_leader_epoch: 5,
                timestamp: MAX_TIMESTAMP,
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 1000,
        unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
            tag: 5,
            data: Bytes::from_static(&[0xab, 0xcd]),
        }]),
    }
}

/// v2, classic: throttle 7, topic "ab", partition 1 with error 0 at offset 42, ts 1000.
const RESPONSE_V2: &[u8] = &[
    0x00, 0x00, 0x00, 0x07, // throttle_time_ms 7
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x02, b'a', b'b', // name "ab"
    0x00, 0x00, 0x00, 0x01, // partitions: 1
    0x00, 0x00, 0x00, 0x01, // partition_index 1
    0x00, 0x00, // error_code 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, // timestamp 1000
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, // offset 42
];

fn response_v2() -> ListOffsetsResponse {
    ListOffsetsResponse {
        throttle_time_ms: 7,
        topics: vec![ListOffsetsTopicResponse {
            name: "ab".into(),
            partitions: vec![ListOffsetsPartitionResponse {
                partition_index: 1,
                error_code: 0,
                timestamp: 1000,
                offset: 42,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// v8, flexible: no throttle, topic "t" partition 0 with OFFSET_NOT_AVAILABLE (78), no
/// offset, leader epoch 9; an unknown tag 0 (one byte) on the partition.
const RESPONSE_V8: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
    0x02, // topics: compact 1
    0x02, b't', // name "t"
    0x02, // partitions: compact 1
    0x00, 0x00, 0x00, 0x00, // partition_index 0
    0x00, 0x4e, // error_code 78
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // timestamp -1
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // offset -1
    0x00, 0x00, 0x00, 0x09, // leader_epoch 9
    0x01, 0x00, 0x01, 0x7f, // partition tags: {0: 7f}
    0x00, // topic tags
    0x00, // body tags
];

fn response_v8() -> ListOffsetsResponse {
    ListOffsetsResponse {
        throttle_time_ms: 0,
        topics: vec![ListOffsetsTopicResponse {
            name: "t".into(),
            partitions: vec![ListOffsetsPartitionResponse {
                partition_index: 0,
                error_code: 78,
                timestamp: -1,
                offset: -1,
                leader_epoch: 9,
                unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
                    tag: 0,
                    data: Bytes::from_static(&[0x7f]),
                }]),
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

codec_tests! {
    encodings {
        ListOffsetsRequest: [(1, REQUEST_V1, request_v1()), (10, REQUEST_V10, request_v10())],
        ListOffsetsResponse: [(2, RESPONSE_V2, response_v2()), (8, RESPONSE_V8, response_v8())],
    }
    length_bombs {
        ListOffsetsRequest: [
            // v1: topics count 0x7fffffff.
            (1, &[0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
            // v6: compact topics count 0xffffffff.
            (6, &[0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f]),
            // v1: topic name length 0x7fff.
            (1, &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0x7f, 0xff, 0, 0, 0, 0, 0, 0]),
        ],
        ListOffsetsResponse: [
            // v1: partitions count 0x7fffffff inside a one-topic array.
            (1, &[0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
            // v7: compact topic name length 0xffffffff.
            (7, &[0, 0, 0, 0, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        ],
    }
}

// --- 3. non-ignorable fields absent from a version -----------------------------------------

#[test]
fn non_ignorable_fields_refuse_old_versions() {
    let mut req = request_v1();
    req.isolation_level = IsolationLevel::READ_COMMITTED;
    let mut buf = BytesMut::new();
    assert_eq!(
        req.encode(&mut buf, 1),
        Err(Error::FieldNotInVersion {
            what: "ListOffsetsRequest.isolation_level",
            version: 1
        })
    );
    assert!(req.encode(&mut BytesMut::new(), 2).is_ok());

    let mut resp = response_v2();
    resp.topics[0].partitions[0].leader_epoch = 3;
    assert_eq!(
        resp.encode(&mut BytesMut::new(), 3),
        Err(Error::FieldNotInVersion {
            what: "ListOffsetsResponse.partitions.leader_epoch",
            version: 3
        })
    );
    assert!(resp.encode(&mut BytesMut::new(), 4).is_ok());
}

#[test]
fn ignorable_fields_are_dropped_in_old_versions() {
    let mut req = request_v1();
    req.timeout_ms = 500;
    req.topics[0].partitions[0].current_leader_epoch = 4;
    assert_eq!(encode(&req, 1), REQUEST_V1);
    let mut resp = response_v2();
    resp.throttle_time_ms = 0;
    let v1 = encode(&resp, 1);
    resp.throttle_time_ms = 99;
    assert_eq!(encode(&resp, 1), v1);
}

// --- special timestamps --------------------------------------------------------------------

#[test]
fn special_timestamps_need_their_versions() {
    assert_eq!(min_version_for_timestamp(0), Some(1));
    assert_eq!(min_version_for_timestamp(1_700_000_000_000), Some(1));
    assert_eq!(min_version_for_timestamp(LATEST), Some(1));
    assert_eq!(min_version_for_timestamp(EARLIEST), Some(1));
    assert_eq!(min_version_for_timestamp(MAX_TIMESTAMP), Some(7));
    assert_eq!(min_version_for_timestamp(EARLIEST_LOCAL), Some(8));
    assert_eq!(min_version_for_timestamp(LATEST_TIERED), Some(9));
    assert_eq!(min_version_for_timestamp(EARLIEST_PENDING_UPLOAD), Some(11));
    assert_eq!(min_version_for_timestamp(-7), None);
    assert_eq!(min_version_for_timestamp(i64::MIN), None);

    let mut req = request_v1();
    assert_eq!(req.min_version(), Some(1));
    req.isolation_level = IsolationLevel::READ_COMMITTED;
    assert_eq!(req.min_version(), Some(2));
    req.topics[0].partitions.push(ListOffsetsPartition {
        partition_index: 1,
        timestamp: LATEST_TIERED,
        ..Default::default()
    });
    assert_eq!(req.min_version(), Some(9));
    req.topics[0].partitions[0].timestamp = -100;
    assert_eq!(req.min_version(), None);
}

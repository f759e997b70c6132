//! Tests of `offset_commit`: the OffsetCommit request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

// --- helpers ------------------------------------------------------------------------------

fn arb_request(version: i16) -> impl Strategy<Value = OffsetCommitRequest> {
    let flex = version >= 8;
    let partition = (
        any::<i32>(),
        any::<i64>(),
        any::<i32>(),
        option::of(".{0,8}"),
        arb_unknown_tags(flex),
    )
        .prop_map(
            move |(partition_index, committed_offset, epoch, committed_metadata, tags)| {
                OffsetCommitRequestPartition {
                    partition_index,
                    committed_offset,
                    committed_leader_epoch: if version >= 6 { epoch } else { -1 },
                    committed_metadata,
                    unknown_tagged_fields: tags,
                }
            },
        );
    let topic = arb_topic::<OffsetCommitRequestTopic>(version, flex, vec(partition, 0..3));
    (
        (".{0,8}", any::<i32>(), ".{0,8}", option::of(".{0,8}")),
        any::<i64>(),
        vec(topic, 0..3),
        arb_unknown_tags(flex),
    )
        .prop_map(
            move |((group_id, generation, member_id, instance), retention, topics, tags)| {
                OffsetCommitRequest {
                    group_id,
                    generation_id_or_member_epoch: generation,
                    member_id,
                    group_instance_id: if version >= 7 { instance } else { None },
                    retention_time_ms: if version <= 4 { retention } else { -1 },
                    topics,
                    unknown_tagged_fields: tags,
                }
            },
        )
}

fn arb_response(version: i16) -> impl Strategy<Value = OffsetCommitResponse> {
    let flex = version >= 8;
    let partition = (any::<i32>(), any::<i16>(), arb_unknown_tags(flex)).prop_map(
        |(partition_index, error_code, tags)| OffsetCommitResponsePartition {
            partition_index,
            error_code,
            unknown_tagged_fields: tags,
        },
    );
    let topic = arb_topic::<OffsetCommitResponseTopic>(version, flex, vec(partition, 0..4));
    (any::<i32>(), vec(topic, 0..3), arb_unknown_tags(flex)).prop_map(
        move |(throttle, topics, tags)| OffsetCommitResponse {
            throttle_time_ms: if version >= 3 { throttle } else { 0 },
            topics,
            unknown_tagged_fields: tags,
        },
    )
}

// --- 1. round trips at every version --------------------------------------------------------

sample_property_tests!(
    OffsetCommitRequest,
    OffsetCommitResponse,
    [
        (REQUEST_V2, 2),
        (REQUEST_V7, 7),
        (REQUEST_V8, 8),
        (REQUEST_V10, 10),
        (RESPONSE_V3, 3),
        (RESPONSE_V10, 10),
    ]
);

// --- 2. hand-derived byte vectors ----------------------------------------------------------

/// The one topic of a request vector, by name or by id, with its one partition.
fn topic(
    name: &str,
    topic_id: Uuid,
    partition: OffsetCommitRequestPartition,
) -> Vec<OffsetCommitRequestTopic> {
    vec![OffsetCommitRequestTopic {
        name: name.into(),
        topic_id,
        partitions: vec![partition],
        ..Default::default()
    }]
}

/// A partition of a request vector, committed at `offset` in `epoch`.
fn partition(
    partition_index: i32,
    committed_offset: i64,
    committed_leader_epoch: i32,
    committed_metadata: Option<&str>,
) -> OffsetCommitRequestPartition {
    OffsetCommitRequestPartition {
        partition_index,
        committed_offset,
        committed_leader_epoch,
        committed_metadata: committed_metadata.map(String::from),
        ..Default::default()
    }
}

/// v2, classic: group "g", generation 5, member "m", retention one day, topic "t"
/// partition 0 at offset 42 with null metadata.
const REQUEST_V2: &[u8] = &[
    0x00, 0x01, b'g', // group_id "g"
    0x00, 0x00, 0x00, 0x05, // generation_id_or_member_epoch 5
    0x00, 0x01, b'm', // member_id "m"
    0x00, 0x00, 0x00, 0x00, 0x05, 0x26, 0x5c, 0x00, // retention_time_ms 86_400_000
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x01, b't', // name "t"
    0x00, 0x00, 0x00, 0x01, // partitions: 1
    0x00, 0x00, 0x00, 0x00, // partition_index 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, // committed_offset 42
    0xff, 0xff, // committed_metadata null
];

fn request_v2() -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: "g".into(),
        generation_id_or_member_epoch: 5,
        member_id: "m".into(),
        retention_time_ms: 86_400_000,
        topics: topic("t", Uuid::ZERO, partition(0, 42, -1, None)),
        ..Default::default()
    }
}

/// v7, classic: static member "i", partition 1 at offset 7 in leader epoch 3, metadata "x".
const REQUEST_V7: &[u8] = &[
    0x00, 0x01, b'g', // group_id "g"
    0x00, 0x00, 0x00, 0x05, // generation_id_or_member_epoch 5
    0x00, 0x01, b'm', // member_id "m"
    0x00, 0x01, b'i', // group_instance_id "i"
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x01, b't', // name "t"
    0x00, 0x00, 0x00, 0x01, // partitions: 1
    0x00, 0x00, 0x00, 0x01, // partition_index 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // committed_offset 7
    0x00, 0x00, 0x00, 0x03, // committed_leader_epoch 3
    0x00, 0x01, b'x', // committed_metadata "x"
];

fn request_v7() -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: "g".into(),
        generation_id_or_member_epoch: 5,
        member_id: "m".into(),
        group_instance_id: Some("i".into()),
        topics: topic("t", Uuid::ZERO, partition(1, 7, 3, Some("x"))),
        ..Default::default()
    }
}

/// v8, flexible: commit from outside the group (epoch -1, empty member, no instance),
/// topic "t" partition 0 at offset 42 in epoch 3 with empty metadata; unknown tag 1 (two
/// bytes) on the partition.
const REQUEST_V8: &[u8] = &[
    0x02, b'g', // group_id "g"
    0xff, 0xff, 0xff, 0xff, // generation_id_or_member_epoch -1
    0x01, // member_id ""
    0x00, // group_instance_id null
    0x02, // topics: compact 1
    0x02, b't', // name "t"
    0x02, // partitions: compact 1
    0x00, 0x00, 0x00, 0x00, // partition_index 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, // committed_offset 42
    0x00, 0x00, 0x00, 0x03, // committed_leader_epoch 3
    0x01, // committed_metadata ""
    0x01, 0x01, 0x02, 0x12, 0x34, // partition tags: {1: 12 34}
    0x00, // topic tags
    0x00, // body tags
];

fn request_v8() -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: "g".into(),
        topics: topic(
            "t",
            Uuid::ZERO,
            OffsetCommitRequestPartition {
                unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
                    tag: 1,
                    data: Bytes::from_static(&[0x12, 0x34]),
                }]),
                ..partition(0, 42, 3, Some(""))
            },
        ),
        ..Default::default()
    }
}

const TOPIC_ID: [u8; 16] = [
    0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, 0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f,
];

/// v10: member "m" epoch 12, topic by id, partition 2 at offset 1000 with null metadata.
const REQUEST_V10: &[u8] = &[
    0x02, b'g', // group_id "g"
    0x00, 0x00, 0x00, 0x0c, // generation_id_or_member_epoch 12
    0x02, b'm', // member_id "m"
    0x00, // group_instance_id null
    0x02, // topics: compact 1
    0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, // topic_id
    0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f, //
    0x02, // partitions: compact 1
    0x00, 0x00, 0x00, 0x02, // partition_index 2
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, // committed_offset 1000
    0xff, 0xff, 0xff, 0xff, // committed_leader_epoch -1
    0x00, // committed_metadata null
    0x00, // partition tags
    0x00, // topic tags
    0x00, // body tags
];

fn request_v10() -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: "g".into(),
        generation_id_or_member_epoch: 12,
        member_id: "m".into(),
        topics: topic("", Uuid(TOPIC_ID), partition(2, 1000, -1, None)),
        ..Default::default()
    }
}

/// The one topic of a response vector, by name or by id, with its partitions' error codes.
fn answered(name: &str, topic_id: Uuid, errors: &[(i32, i16)]) -> Vec<OffsetCommitResponseTopic> {
    let partitions =
        errors.iter().map(
            |&(partition_index, error_code)| OffsetCommitResponsePartition {
                partition_index,
                error_code,
                ..Default::default()
            },
        );
    vec![OffsetCommitResponseTopic {
        name: name.into(),
        topic_id,
        partitions: partitions.collect(),
        ..Default::default()
    }]
}

/// v3, classic: throttle 1, topic "t": partition 0 OK, partition 1 ILLEGAL_GENERATION (22).
const RESPONSE_V3: &[u8] = &[
    0x00, 0x00, 0x00, 0x01, // throttle_time_ms 1
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x01, b't', // name "t"
    0x00, 0x00, 0x00, 0x02, // partitions: 2
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0: error 0
    0x00, 0x00, 0x00, 0x01, 0x00, 0x16, // 1: error 22
];

fn response_v3() -> OffsetCommitResponse {
    OffsetCommitResponse {
        throttle_time_ms: 1,
        topics: answered("t", Uuid::ZERO, &[(0, 0), (1, 22)]),
        ..Default::default()
    }
}

/// v10: topic by id, partition 2 with STALE_MEMBER_EPOCH (113); unknown body tag 0, empty.
const RESPONSE_V10: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
    0x02, // topics: compact 1
    0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, // topic_id
    0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f, //
    0x02, // partitions: compact 1
    0x00, 0x00, 0x00, 0x02, 0x00, 0x71, // partition 2, error 113
    0x00, // partition tags
    0x00, // topic tags
    0x01, 0x00, 0x00, // body tags: {0: empty}
];

fn response_v10() -> OffsetCommitResponse {
    OffsetCommitResponse {
        throttle_time_ms: 0,
        topics: answered("", Uuid(TOPIC_ID), &[(2, 113)]),
        unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
            tag: 0,
            data: Bytes::new(),
        }]),
    }
}

codec_tests! {
    encodings {
        OffsetCommitRequest: [
            (2, REQUEST_V2, request_v2()),
            (7, REQUEST_V7, request_v7()),
            (8, REQUEST_V8, request_v8()),
            (10, REQUEST_V10, request_v10()),
        ],
        OffsetCommitResponse: [(3, RESPONSE_V3, response_v3()), (10, RESPONSE_V10, response_v10())],
    }
    length_bombs {
        OffsetCommitRequest: [
            // v2: group_id length 0x7fff.
            (2, &[0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]),
            // v5: topics count 0x7fffffff (group "", generation 0, member "").
            (5, &[0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0]),
            // v8: compact member_id length 0xffffffff.
            (8, &[0x01, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f]),
            // v10: compact partitions count 0xffffffff after a topic id.
            (10, &[
                0x01, 0, 0, 0, 0, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0,
            ]),
        ],
        OffsetCommitResponse: [
            // v2: topics count 0x7fffffff.
            (2, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]),
            // v9: compact topics count 0xffffffff.
            (9, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0]),
        ],
    }
}

// --- 3. non-ignorable fields absent from a version -----------------------------------------

#[test]
fn group_instance_id_refuses_versions_before_7() {
    let mut buf = BytesMut::new();
    assert_eq!(
        request_v7().encode(&mut buf, 6),
        Err(Error::FieldNotInVersion {
            what: "OffsetCommitRequest.group_instance_id",
            version: 6
        })
    );
    assert!(request_v7().encode(&mut buf, 7).is_ok());
}

#[test]
fn a_refused_frame_leaves_the_buffer_as_it_was() {
    // The refusal comes after the group id is written; the frame is taken back whole.
    let mut buf = BytesMut::from(&b"earlier"[..]);
    let r = encode_request_frame(&mut buf, 1, Some("c"), 6, &request_v7());
    assert!(matches!(r, Err(Error::FieldNotInVersion { .. })), "{r:?}");
    assert_eq!(&buf[..], b"earlier");
    encode_request_frame(&mut buf, 1, Some("c"), 7, &request_v7()).unwrap();
    assert!(buf.len() > b"earlier".len());
}

#[test]
fn ignorable_fields_are_dropped_in_versions_without_them() {
    // The response has no non-ignorable field that is missing from any version: its
    // throttle time (v3+), topic name (v2–9) and topic id (v10+) are all ignorable.
    let mut resp = response_v3();
    resp.topics[0].topic_id = Uuid(TOPIC_ID);
    let v2: OffsetCommitResponse = decode_exact(encode(&resp, 2), 2).unwrap();
    assert_eq!(v2.throttle_time_ms, 0);
    assert_eq!(v2.topics[0].topic_id, Uuid::ZERO);
    let v10: OffsetCommitResponse = decode_exact(encode(&resp, 10), 10).unwrap();
    assert_eq!(v10.topics[0].name, "");
    assert_eq!(v10.topics[0].topic_id, Uuid(TOPIC_ID));

    // Request: retention time from v5, leader epoch before v6.
    let mut req = request_v7();
    req.group_instance_id = None;
    req.retention_time_ms = 1000;
    let v5: OffsetCommitRequest = decode_exact(encode(&req, 5), 5).unwrap();
    assert_eq!(v5.retention_time_ms, -1);
    assert_eq!(v5.topics[0].partitions[0].committed_leader_epoch, -1);
}

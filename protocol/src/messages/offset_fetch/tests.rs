//! Tests of `offset_fetch`: the OffsetFetch request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

// --- helpers ------------------------------------------------------------------------------

fn arb_request(version: i16) -> impl Strategy<Value = OffsetFetchRequest> {
    let flex = version >= 6;
    let partition_indexes = || vec(any::<i32>(), 0..4);
    let topic = (".{0,8}", partition_indexes(), arb_unknown_tags(flex)).prop_map(
        |(name, partition_indexes, unknown_tagged_fields)| OffsetFetchRequestTopic {
            name,
            partition_indexes,
            unknown_tagged_fields,
        },
    );
    let topics = arb_topic::<OffsetFetchRequestTopics>(version, true, partition_indexes());
    let v9 = version >= 9;
    let group = (
        ".{0,8}",
        option::of(".{0,8}"),
        any::<i32>(),
        option::of(vec(topics, 0..3)),
        arb_unknown_tags(true),
    )
        .prop_map(
            move |(group_id, member_id, epoch, topics, unknown_tagged_fields)| {
                OffsetFetchRequestGroup {
                    group_id,
                    member_id: member_id.filter(|_| v9),
                    member_epoch: if v9 { epoch } else { -1 },
                    topics,
                    unknown_tagged_fields,
                }
            },
        );
    let single = version <= 7;
    (
        ".{0,8}",
        option::of(vec(topic, 0..3)),
        vec(group, 0..3),
        any::<bool>(),
        arb_unknown_tags(flex),
    )
        .prop_map(
            move |(group_id, topics, groups, stable, tags)| OffsetFetchRequest {
                group_id: if single { group_id } else { String::new() },
                topics: match topics {
                    None if version < 2 => Some(Vec::new()),
                    t if single => t,
                    _ => Some(Vec::new()),
                },
                groups: if single { Vec::new() } else { groups },
                require_stable: version >= 7 && stable,
                unknown_tagged_fields: tags,
            },
        )
}

fn arb_response(version: i16) -> impl Strategy<Value = OffsetFetchResponse> {
    let flex = version >= 6;
    // The partitions of v8+; those of v1-7 are the same but for the leader epoch.
    let partitions = |flex| {
        (
            any::<(i32, i64, i32)>(),
            (option::of(".{0,8}"), any::<i16>()),
            arb_unknown_tags(flex),
        )
            .prop_map(|((index, offset, epoch), (metadata, error_code), tags)| {
                OffsetFetchResponsePartitions {
                    partition_index: index,
                    committed_offset: offset,
                    committed_leader_epoch: epoch,
                    metadata,
                    error_code,
                    unknown_tagged_fields: tags,
                }
            })
    };
    let partition = partitions(flex).prop_map(move |p| OffsetFetchResponsePartition {
        partition_index: p.partition_index,
        committed_offset: p.committed_offset,
        committed_leader_epoch: if version >= 5 {
            p.committed_leader_epoch
        } else {
            -1
        },
        metadata: p.metadata,
        error_code: p.error_code,
        unknown_tagged_fields: p.unknown_tagged_fields,
    });
    let topic = ((".{0,8}", vec(partition, 0..3)), arb_unknown_tags(flex)).prop_map(
        |((name, partitions), unknown_tagged_fields)| OffsetFetchResponseTopic {
            name,
            partitions,
            unknown_tagged_fields,
        },
    );
    let topics = arb_topic::<OffsetFetchResponseTopics>(version, true, vec(partitions(true), 0..3));
    let group = (
        (".{0,8}", vec(topics, 0..3)),
        any::<i16>(),
        arb_unknown_tags(true),
    )
        .prop_map(|((group_id, topics), error_code, unknown_tagged_fields)| {
            OffsetFetchResponseGroup {
                group_id,
                topics,
                error_code,
                unknown_tagged_fields,
            }
        });
    let single = version <= 7;
    (
        any::<i32>(),
        vec(topic, 0..3),
        any::<i16>(),
        vec(group, 0..3),
        arb_unknown_tags(flex),
    )
        .prop_map(
            move |(throttle, topics, error_code, groups, tags)| OffsetFetchResponse {
                throttle_time_ms: if version >= 3 { throttle } else { 0 },
                topics: if single { topics } else { Vec::new() },
                error_code: if (2..=7).contains(&version) {
                    error_code
                } else {
                    0
                },
                groups: if single { Vec::new() } else { groups },
                unknown_tagged_fields: tags,
            },
        )
}

// --- 1. round trips at every version --------------------------------------------------------

sample_property_tests!(
    OffsetFetchRequest,
    OffsetFetchResponse,
    [
        (REQUEST_V1, 1),
        (REQUEST_V3_ALL_TOPICS, 3),
        (REQUEST_V7, 7),
        (REQUEST_V9, 9),
        (REQUEST_V10, 10),
        (RESPONSE_V5, 5),
        (RESPONSE_V10, 10),
    ]
);

// --- 2. hand-derived byte vectors ----------------------------------------------------------

/// v1, classic: group "g", topic "t", partitions 0 and 1.
const REQUEST_V1: &[u8] = &[
    0x00, 0x01, b'g', // group_id "g"
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x01, b't', // name "t"
    0x00, 0x00, 0x00, 0x02, // partition_indexes: 2
    0x00, 0x00, 0x00, 0x00, // 0
    0x00, 0x00, 0x00, 0x01, // 1
];

fn request_v1() -> OffsetFetchRequest {
    OffsetFetchRequest {
        group_id: "g".into(),
        topics: Some(vec![OffsetFetchRequestTopic {
            name: "t".into(),
            partition_indexes: vec![0, 1],
            ..Default::default()
        }]),
        ..Default::default()
    }
}

/// v3, classic: group "g", null topics (all of them).
const REQUEST_V3_ALL_TOPICS: &[u8] = &[
    0x00, 0x01, b'g', // group_id "g"
    0xff, 0xff, 0xff, 0xff, // topics: null
];

/// v7, flexible single-group form: group "g", null topics, require stable.
const REQUEST_V7: &[u8] = &[
    0x02, b'g', // group_id "g"
    0x00, // topics: compact null
    0x01, // require_stable true
    0x00, // body tags
];

/// v9, multi-group form: group "g" as member "m1" epoch 7, topic "t" partition 0.
const REQUEST_V9: &[u8] = &[
    0x02, // groups: compact 1
    0x02, b'g', // group_id "g"
    0x03, b'm', b'1', // member_id "m1"
    0x00, 0x00, 0x00, 0x07, // member_epoch 7
    0x02, // topics: compact 1
    0x02, b't', // name "t"
    0x02, 0x00, 0x00, 0x00, 0x00, // partition_indexes: [0]
    0x00, // topic tags
    0x00, // group tags
    0x00, // require_stable false
    0x00, // body tags
];

fn request_v9() -> OffsetFetchRequest {
    OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: "g".into(),
            member_id: Some("m1".into()),
            member_epoch: 7,
            topics: Some(vec![OffsetFetchRequestTopics {
                name: "t".into(),
                partition_indexes: vec![0],
                ..Default::default()
            }]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

const TOPIC_ID: [u8; 16] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
];

/// v10: group "g" (no member), topic by id, partitions 0 and 1, require stable; a second
/// group "h" asking for all topics.
const REQUEST_V10: &[u8] = &[
    0x03, // groups: compact 2
    0x02, b'g', // group_id "g"
    0x00, // member_id null
    0xff, 0xff, 0xff, 0xff, // member_epoch -1
    0x02, // topics: compact 1
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, // topic_id
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, //
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // partition_indexes: [0, 1]
    0x00, // topic tags
    0x00, // group tags
    0x02, b'h', // group_id "h"
    0x00, // member_id null
    0xff, 0xff, 0xff, 0xff, // member_epoch -1
    0x00, // topics: null
    0x00, // group tags
    0x01, // require_stable true
    0x00, // body tags
];

fn request_v10() -> OffsetFetchRequest {
    OffsetFetchRequest {
        groups: vec![
            OffsetFetchRequestGroup {
                group_id: "g".into(),
                topics: Some(vec![OffsetFetchRequestTopics {
                    topic_id: Uuid(TOPIC_ID),
                    partition_indexes: vec![0, 1],
                    ..Default::default()
                }]),
                ..Default::default()
            },
            OffsetFetchRequestGroup {
                group_id: "h".into(),
                topics: None,
                ..Default::default()
            },
        ],
        require_stable: true,
        ..Default::default()
    }
}

/// v5, classic: throttle 10, topic "t" partition 0 committed at 100 in epoch 2 with null
/// metadata; no errors.
const RESPONSE_V5: &[u8] = &[
    0x00, 0x00, 0x00, 0x0a, // throttle_time_ms 10
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x01, b't', // name "t"
    0x00, 0x00, 0x00, 0x01, // partitions: 1
    0x00, 0x00, 0x00, 0x00, // partition_index 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // committed_offset 100
    0x00, 0x00, 0x00, 0x02, // committed_leader_epoch 2
    0xff, 0xff, // metadata null
    0x00, 0x00, // error_code 0
    0x00, 0x00, // top-level error_code 0
];

fn response_v5() -> OffsetFetchResponse {
    OffsetFetchResponse {
        throttle_time_ms: 10,
        topics: vec![OffsetFetchResponseTopic {
            name: "t".into(),
            partitions: vec![OffsetFetchResponsePartition {
                partition_index: 0,
                committed_offset: 100,
                committed_leader_epoch: 2,
                metadata: None,
                error_code: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// v10: group "g", topic by id, partition 1 with no committed offset and error
/// UNKNOWN_TOPIC_OR_PARTITION (3), empty metadata; unknown tag 2 on the group.
const RESPONSE_V10: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
    0x02, // groups: compact 1
    0x02, b'g', // group_id "g"
    0x02, // topics: compact 1
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, // topic_id
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, //
    0x02, // partitions: compact 1
    0x00, 0x00, 0x00, 0x01, // partition_index 1
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // committed_offset -1
    0xff, 0xff, 0xff, 0xff, // committed_leader_epoch -1
    0x01, // metadata ""
    0x00, 0x03, // error_code 3
    0x00, // partition tags
    0x00, // topic tags
    0x00, 0x00, // group error_code 0
    0x01, 0x02, 0x01, 0x99, // group tags: {2: 99}
    0x00, // body tags
];

fn response_v10() -> OffsetFetchResponse {
    OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "g".into(),
            topics: vec![OffsetFetchResponseTopics {
                topic_id: Uuid(TOPIC_ID),
                partitions: vec![OffsetFetchResponsePartitions {
                    partition_index: 1,
                    committed_offset: -1,
                    committed_leader_epoch: -1,
                    metadata: Some(String::new()),
                    error_code: 3,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            error_code: 0,
            unknown_tagged_fields: UnknownTaggedFields(vec![RawTaggedField {
                tag: 2,
                data: Bytes::from_static(&[0x99]),
            }]),
        }],
        ..Default::default()
    }
}

fn all_topics() -> OffsetFetchRequest {
    OffsetFetchRequest {
        group_id: "g".into(),
        topics: None,
        ..Default::default()
    }
}

/// [`all_topics`] asking for stable offsets only.
fn stable() -> OffsetFetchRequest {
    OffsetFetchRequest {
        require_stable: true,
        ..all_topics()
    }
}

#[test]
fn null_topics_are_refused_in_v1() {
    assert_eq!(
        decode_exact::<OffsetFetchRequest>(Bytes::from_static(REQUEST_V3_ALL_TOPICS), 1),
        Err(Error::UnexpectedNull {
            what: "OffsetFetchRequest.topics",
            version: 1
        })
    );
    let all_topics = OffsetFetchRequest {
        topics: None,
        ..Default::default()
    };
    assert!(matches!(
        all_topics.encode(&mut BytesMut::new(), 1),
        Err(Error::UnexpectedNull { .. })
    ));
}

// --- 3. length bombs -----------------------------------------------------------------------

// --- 4. non-ignorable fields absent from a version -----------------------------------------

#[test]
fn non_ignorable_fields_refuse_versions_without_them() {
    let refuse = |r: Result<()>, what: &'static str, version: i16| {
        assert_eq!(r, Err(Error::FieldNotInVersion { what, version }));
    };
    let mut enc = BytesMut::new();
    // The single-group fields in the multi-group versions, and back.
    refuse(
        request_v1().encode(&mut enc, 8),
        "OffsetFetchRequest.group_id",
        8,
    );
    let only_topics = OffsetFetchRequest {
        group_id: String::new(),
        ..request_v1()
    };
    refuse(
        only_topics.encode(&mut enc, 9),
        "OffsetFetchRequest.topics",
        9,
    );
    refuse(
        request_v9().encode(&mut enc, 7),
        "OffsetFetchRequest.groups",
        7,
    );
    let stable = OffsetFetchRequest {
        require_stable: true,
        ..request_v1()
    };
    refuse(
        stable.encode(&mut enc, 6),
        "OffsetFetchRequest.require_stable",
        6,
    );
    assert!(stable.encode(&mut enc, 7).is_ok());

    refuse(
        response_v5().encode(&mut enc, 8),
        "OffsetFetchResponse.topics",
        8,
    );
    refuse(
        response_v10().encode(&mut enc, 7),
        "OffsetFetchResponse.groups",
        7,
    );
}

#[test]
fn ignorable_fields_are_dropped_in_versions_without_them() {
    // Member id and epoch before v9, topic names in v10 and topic ids before v10.
    let mut req = request_v9();
    req.groups[0].topics.as_mut().unwrap()[0].topic_id = Uuid(TOPIC_ID);
    let v8 = encode(&req, 8);
    assert_eq!(
        decode_exact::<OffsetFetchRequest>(v8, 8).unwrap().groups[0].member_id,
        None
    );
    let v10 = encode(&req, 10);
    let back: OffsetFetchRequest = decode_exact(v10, 10).unwrap();
    assert_eq!(back.groups[0].topics.as_ref().unwrap()[0].name, "");
    // Top-level error code and leader epoch in v1.
    let mut resp = response_v5();
    resp.error_code = 15;
    let v1: OffsetFetchResponse = decode_exact(encode(&resp, 1), 1).unwrap();
    assert_eq!(v1.error_code, 0);
    assert_eq!(v1.topics[0].partitions[0].committed_leader_epoch, -1);
}

codec_tests! {
    encodings {
        OffsetFetchRequest: [
            (1, REQUEST_V1, request_v1()),
            (3, REQUEST_V3_ALL_TOPICS, all_topics()),
            (7, REQUEST_V7, stable()),
            (9, REQUEST_V9, request_v9()),
            (10, REQUEST_V10, request_v10()),
        ],
        OffsetFetchResponse: [
            (5, RESPONSE_V5, response_v5()),
            (10, RESPONSE_V10, response_v10()),
        ],
    }
    length_bombs {
        OffsetFetchRequest: [
            // v1: topics count 0x7fffffff.
            (1, &[0, 1, b'g', 0x7f, 0xff, 0xff, 0xff, 0, 0, 0]),
            // v1: partition_indexes count 0x7fffffff.
            (1, &[0, 0, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0]),
            // v8: compact groups count 0xffffffff.
            (8, &[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0]),
            // v8: compact group_id length 0xffffffff.
            (8, &[0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0]),
            // v2: group_id length 0x7fff.
            (2, &[0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]),
        ],
        OffsetFetchResponse: [
            // v3: topics count 0x7fffffff.
            (3, &[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
            // v8: compact groups count 0xffffffff.
            (8, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0]),
            // v10: compact partitions count 0xffffffff after a topic id.
            (
                10,
                &[
                    0, 0, 0, 0, 0x02, 0x02, b'g', 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0,
                ],
            ),
        ],
    }
}

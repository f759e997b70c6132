//! Tests of `fetch`.

use proptest::test_runner::Config;

use super::*;
use crate::messages::testing::prelude::*;

const ALL_VERSIONS: core::ops::RangeInclusive<i16> = 4..=18;

// ---- helpers ----------------------------------------------------------------------------

/// Runs `strategy(version)` through `check_round_trip` at every version, 64 cases each
/// (Fetch messages are large).
fn round_trip_every_version<M, S>(strategy: impl Fn(i16) -> S)
where
    M: Message + PartialEq + core::fmt::Debug,
    S: Strategy<Value = M>,
{
    let config = Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    };
    round_trip_every_version_with(config, ALL_VERSIONS, strategy);
}

fn name() -> impl Strategy<Value = String> {
    "\\PC{0,8}"
}

/// Each `(value, bad, what, good)`: encoding `value` at version `bad` fails with
/// `FieldNotInVersion` for the field `what` (a non-ignorable field `bad` lacks), and at
/// `good` succeeds.
fn check_refused<M: Message>(cases: &[(M, i16, &'static str, i16)]) {
    let mut buf = BytesMut::new();
    for (value, bad, what, good) in cases {
        assert_eq!(
            value.encode(&mut buf, *bad),
            Err(Error::FieldNotInVersion {
                what,
                version: *bad
            }),
            "{what} at v{bad}"
        );
        value.encode(&mut buf, *good).unwrap();
    }
}

/// Unknown tagged fields with these tags and payloads.
fn unknown(fields: &[(u32, &'static [u8])]) -> UnknownTaggedFields {
    let raw = |&(tag, data): &(u32, &'static [u8])| RawTaggedField {
        tag,
        data: Bytes::from_static(data),
    };
    UnknownTaggedFields(fields.iter().map(raw).collect())
}

/// A default `T` changed by `set`.
fn with<T: Default>(set: fn(&mut T)) -> T {
    let mut value = T::default();
    set(&mut value);
    value
}

/// `zeros` zero bytes, then `tail`: a frame whose head is all defaults.
fn after_zeros(zeros: usize, tail: &[u8]) -> Vec<u8> {
    [&vec![0; zeros][..], tail].concat()
}

// ---- request strategies -----------------------------------------------------------------

/// A struct of two fields and unknown tags (the tagged structs, only in flexible
/// versions), built by `make` from drawn values.
fn pair_with_tags<A: Arbitrary, B: Arbitrary, T: core::fmt::Debug>(
    flexible: bool,
    make: fn(A, B, UnknownTaggedFields) -> T,
) -> impl Strategy<Value = T> {
    (any::<A>(), any::<B>(), arb_unknown_tags_in(flexible, 0..40))
        .prop_map(move |(a, b, u)| make(a, b, u))
}

fn replica_state(v: i16) -> BoxedStrategy<ReplicaState> {
    if v < 15 {
        return Just(ReplicaState::default()).boxed();
    }
    prop_oneof![
        Just(ReplicaState::default()),
        pair_with_tags(true, |replica_id, replica_epoch, unknown_tagged_fields| {
            ReplicaState {
                replica_id,
                replica_epoch,
                unknown_tagged_fields,
            }
        }),
    ]
    .boxed()
}

fn fetch_partition(v: i16) -> impl Strategy<Value = FetchPartition> {
    (
        (any::<i32>(), any::<i32>(), any::<i64>(), any::<i32>()),
        (any::<i64>(), any::<i32>()),
        (
            prop::option::of(arb_uuid()),
            prop::option::of(any::<i64>()),
            arb_unknown_tags_in(v >= 12, 2..42),
        ),
    )
        .prop_map(
            move |((partition, cle, fo, lfe), (lso, pmb), (dir, hw, u))| FetchPartition {
                partition,
                current_leader_epoch: if v >= 9 { cle } else { -1 },
                fetch_offset: fo,
                last_fetched_epoch: if v >= 12 { lfe } else { -1 },
                log_start_offset: if v >= 5 { lso } else { -1 },
                partition_max_bytes: pmb,
                replica_directory_id: dir.filter(|_| v >= 17).unwrap_or(Uuid::ZERO),
                high_watermark: hw.filter(|_| v >= 18).unwrap_or(i64::MAX),
                unknown_tagged_fields: u,
            },
        )
}

fn fetch_topic(v: i16) -> impl Strategy<Value = FetchTopic> {
    arb_topic(v, v >= 12, prop::collection::vec(fetch_partition(v), 0..3))
}

fn forgotten_topic(v: i16) -> impl Strategy<Value = ForgottenTopic> {
    arb_topic(v, v >= 12, prop::collection::vec(any::<i32>(), 0..4))
}

fn fetch_request(v: i16) -> impl Strategy<Value = FetchRequest> {
    (
        (
            prop::option::of(name()),
            any::<i32>(),
            replica_state(v),
            any::<(i32, i32, i32, i8)>(),
        ),
        (
            any::<(i32, i32)>(),
            name(),
            arb_unknown_tags_in(v >= 12, 2..42),
        ),
        (
            prop::collection::vec(fetch_topic(v), 0..3),
            prop::collection::vec(forgotten_topic(v), 0..3),
        ),
    )
        .prop_map(
            move |(
                (cluster_id, replica_id, replica_state, (max_wait_ms, min_bytes, max_bytes, iso)),
                ((session_id, session_epoch), rack_id, u),
                (topics, forgotten),
            )| FetchRequest {
                cluster_id: cluster_id.filter(|_| v >= 12),
                replica_id: if v <= 14 { replica_id } else { -1 },
                replica_state,
                max_wait_ms,
                min_bytes,
                max_bytes,
                isolation_level: IsolationLevel(iso),
                session_id: if v >= 7 { session_id } else { 0 },
                session_epoch: if v >= 7 { session_epoch } else { -1 },
                topics,
                forgotten_topics_data: if v >= 7 { forgotten } else { Vec::new() },
                rack_id: if v >= 11 { rack_id } else { String::new() },
                unknown_tagged_fields: u,
            },
        )
}

// ---- request tests ----------------------------------------------------------------------

/// v11 (classic), written out by hand from `FetchRequest.json`.
const REQUEST_V11: &[u8] = &[
    0xff, 0xff, 0xff, 0xff, // replica_id -1
    0x00, 0x00, 0x01, 0xf4, // max_wait_ms 500
    0x00, 0x00, 0x00, 0x01, // min_bytes 1
    0x03, 0x20, 0x00, 0x00, // max_bytes 50 MiB
    0x01, // isolation_level read_committed
    0x00, 0x00, 0x00, 0x00, // session_id 0
    0xff, 0xff, 0xff, 0xff, // session_epoch -1
    0x00, 0x00, 0x00, 0x01, // topics: 1
    0x00, 0x02, b't', b'1', //   topic "t1"
    0x00, 0x00, 0x00, 0x01, //   partitions: 1
    0x00, 0x00, 0x00, 0x02, //     partition 2
    0x00, 0x00, 0x00, 0x05, //     current_leader_epoch 5
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // fetch_offset 100
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
    0x00, 0x10, 0x00, 0x00, //     partition_max_bytes 1 MiB
    0x00, 0x00, 0x00, 0x01, // forgotten_topics_data: 1
    0x00, 0x02, b't', b'2', //   topic "t2"
    0x00, 0x00, 0x00, 0x02, //   partitions: 2
    0x00, 0x00, 0x00, 0x00, //     0
    0x00, 0x00, 0x00, 0x03, //     3
    0x00, 0x03, b'r', b'1', b'a', // rack_id "r1a"
];

fn request_v11() -> FetchRequest {
    FetchRequest {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 50 << 20,
        isolation_level: IsolationLevel::READ_COMMITTED,
        topics: vec![FetchTopic {
            topic: "t1".into(),
            partitions: vec![FetchPartition {
                partition: 2,
                current_leader_epoch: 5,
                fetch_offset: 100,
                partition_max_bytes: 1 << 20,
                ..FetchPartition::default()
            }],
            ..FetchTopic::default()
        }],
        forgotten_topics_data: vec![ForgottenTopic {
            topic: "t2".into(),
            partitions: vec![0, 3],
            ..ForgottenTopic::default()
        }],
        rack_id: "r1a".into(),
        ..FetchRequest::default()
    }
}

const TOPIC_ID: [u8; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

/// v17 (flexible, topic ids, replica state, directory id, cluster id), by hand.
const REQUEST_V17: &[u8] = &[
    // no replica_id from v15
    0x00, 0x00, 0x01, 0xf4, // max_wait_ms 500
    0x00, 0x00, 0x00, 0x01, // min_bytes 1
    0x7f, 0xff, 0xff, 0xff, // max_bytes
    0x00, // isolation_level
    0x00, 0x00, 0x00, 0x07, // session_id 7
    0x00, 0x00, 0x00, 0x02, // session_epoch 2
    0x02, // topics: compact 1
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,   // topic_id
    0x02, //   partitions: compact 1
    0x00, 0x00, 0x00, 0x00, //     partition 0
    0xff, 0xff, 0xff, 0xff, //     current_leader_epoch -1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, // fetch_offset 42
    0x00, 0x00, 0x00, 0x04, //     last_fetched_epoch 4
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
    0x00, 0x10, 0x00, 0x00, //     partition_max_bytes 1 MiB
    0x01, 0x00, 0x10, //     tagged: 1 field, tag 0 (replica_directory_id), 16 bytes
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, //
    0x00, //   topic tagged: none
    0x01, // forgotten_topics_data: compact 0
    0x01, // rack_id ""
    0x02, // tagged: 2 fields
    0x00, 0x04, 0x04, b'a', b'b', b'c', // tag 0 cluster_id "abc"
    0x01, 0x0d, // tag 1 replica_state, 13 bytes
    0x00, 0x00, 0x00, 0x03, //   replica_id 3
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // replica_epoch 9
    0x00, //   tagged: none
];

fn request_v17() -> FetchRequest {
    FetchRequest {
        cluster_id: Some("abc".into()),
        replica_state: ReplicaState {
            replica_id: 3,
            replica_epoch: 9,
            ..ReplicaState::default()
        },
        max_wait_ms: 500,
        min_bytes: 1,
        session_id: 7,
        session_epoch: 2,
        topics: vec![FetchTopic {
            topic_id: Uuid(TOPIC_ID),
            partitions: vec![FetchPartition {
                fetch_offset: 42,
                last_fetched_epoch: 4,
                partition_max_bytes: 1 << 20,
                replica_directory_id: Uuid([0xaa; 16]),
                ..FetchPartition::default()
            }],
            ..FetchTopic::default()
        }],
        ..FetchRequest::default()
    }
}

/// v18: a high watermark (tag 1 of a partition), by hand.
#[rustfmt::skip]
const REQUEST_V18: &[u8] = &[
    0, 0, 0, 0, // max_wait_ms 0
    0, 0, 0, 0, // min_bytes 0
    0x7f, 0xff, 0xff, 0xff, // max_bytes
    0x00, // isolation_level
    0, 0, 0, 0, // session_id 0
    0xff, 0xff, 0xff, 0xff, // session_epoch -1
    0x02, // topics: 1
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
    0x02, // partitions: 1
    0, 0, 0, 1, // partition 1
    0xff, 0xff, 0xff, 0xff, // current_leader_epoch -1
    0, 0, 0, 0, 0, 0, 0, 0x10, // fetch_offset 16
    0xff, 0xff, 0xff, 0xff, // last_fetched_epoch -1
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
    0, 0, 0x10, 0, // partition_max_bytes 4096
    0x01, 0x01, 0x08, // tagged: tag 1 (high_watermark), 8 bytes
    0, 0, 0, 0, 0, 0, 0, 0x20, // high_watermark 32
    0x00, // topic tagged
    0x01, // forgotten_topics_data: 0
    0x01, // rack_id ""
    0x00, // tagged
];

fn request_v18() -> FetchRequest {
    FetchRequest {
        topics: vec![FetchTopic {
            topic_id: Uuid(TOPIC_ID),
            partitions: vec![FetchPartition {
                partition: 1,
                fetch_offset: 16,
                partition_max_bytes: 4096,
                high_watermark: 32,
                ..FetchPartition::default()
            }],
            ..FetchTopic::default()
        }],
        ..FetchRequest::default()
    }
}

#[test]
fn request_v18_high_watermark_read_at_v17() {
    // At v17 the same tag is unknown and kept raw; the ignorable field is dropped on encode.
    let at17: FetchRequest = decode_exact(Bytes::from_static(REQUEST_V18), 17).unwrap();
    let p = &at17.topics[0].partitions[0];
    assert_eq!(p.high_watermark, i64::MAX);
    assert_eq!(p.unknown_tagged_fields.0[0].tag, 1);
    assert_eq!(&encode(&at17, 17)[..], REQUEST_V18);
}

#[test]
fn request_prefixes_and_trailing_bytes_fail() {
    for version in ALL_VERSIONS {
        assert_encoding_prefixes_fail(&request_v17_at(version), version);
    }
}

/// [`request_v17`] with what `version` lacks put back to defaults.
fn request_v17_at(version: i16) -> FetchRequest {
    let mut r = request_v17();
    if version < 15 {
        r.replica_state = ReplicaState::default();
    }
    if version < 7 {
        r.forgotten_topics_data.clear();
    }
    if version < 12 {
        r.topics[0].partitions[0].last_fetched_epoch = -1;
    }
    r
}

#[test]
fn request_length_bombs_fail_at_once() {
    // v4: replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level (17 bytes), then
    // topics. v17 has no replica_id (13 bytes) but a session id and epoch (21 bytes).
    let cases = [
        // v4 topics count 2^31-1.
        (
            4,
            after_zeros(17, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]),
        ),
        // v4 topic name with a 32 KiB length, then a partitions count of 2^31-1.
        (4, after_zeros(17, &[0, 0, 0, 1, 0x7f, 0xff, 0, 0])),
        (
            4,
            after_zeros(17, &[0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
        ),
        // v17 compact topics count 0xffffffff, and 2^31-1.
        (
            17,
            after_zeros(21, &[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0]),
        ),
        (
            17,
            after_zeros(21, &[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0]),
        ),
    ];
    check_length_bombs::<FetchRequest>(&cases.each_ref().map(|(v, b)| (*v, &b[..])));
    // v4 topics count -1: null, where the array isn't nullable.
    let null = after_zeros(17, &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]);
    assert!(matches!(
        FetchRequest::decode(&mut Bytes::from(null), 4),
        Err(Error::InvalidValue { value: -1, .. })
    ));
}

#[test]
fn request_non_ignorable_fields_refused_where_absent() {
    let request = with::<FetchRequest>;
    let partition = |set: fn(&mut FetchPartition)| FetchRequest {
        topics: vec![FetchTopic {
            partitions: vec![with(set)],
            ..FetchTopic::default()
        }],
        ..FetchRequest::default()
    };
    check_refused(&[
        (
            request(|r| r.replica_id = 1),
            15,
            "FetchRequest.replica_id",
            14,
        ),
        (
            request(|r| r.replica_state.replica_id = 1),
            14,
            "FetchRequest.replica_state",
            15,
        ),
        (
            request(|r| r.forgotten_topics_data = vec![ForgottenTopic::default()]),
            6,
            "FetchRequest.forgotten_topics_data",
            7,
        ),
        (
            partition(|p| p.last_fetched_epoch = 3),
            11,
            "FetchRequest.topics.partitions.last_fetched_epoch",
            12,
        ),
    ]);

    // Ignorable fields are dropped silently instead.
    let r = FetchRequest {
        cluster_id: Some("c".into()),
        session_id: 5,
        rack_id: "r".into(),
        ..FetchRequest::default()
    };
    let decoded: FetchRequest = decode_exact(encode(&r, 4), 4).unwrap();
    assert_eq!(decoded, FetchRequest::default());
}

#[test]
fn request_unknown_tagged_fields_survive() {
    // v12 request carrying tag 1 (replica_state, only known from v15) and tag 9.
    let mut r = request_v17_at(12);
    r.topics[0].topic = "t".into();
    r.topics[0].topic_id = Uuid::ZERO;
    r.topics[0].partitions[0].replica_directory_id = Uuid::ZERO;
    r.unknown_tagged_fields = unknown(&[(1, &[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9, 0]), (9, b"x")]);
    check_round_trip(&r, 12).unwrap();
}

#[test]
fn out_of_range_versions_refused() {
    let mut buf = BytesMut::new();
    for v in [3, 19] {
        assert!(matches!(
            FetchRequest::default().encode(&mut buf, v),
            Err(Error::UnsupportedVersion { .. })
        ));
        assert!(FetchRequest::decode(&mut Bytes::new(), v).is_err());
    }
}

// ---- response strategies ----------------------------------------------------------------

fn epoch_end_offset() -> impl Strategy<Value = EpochEndOffset> {
    pair_with_tags(true, |epoch, end_offset, u| EpochEndOffset {
        epoch,
        end_offset,
        unknown_tagged_fields: u,
    })
}

fn leader_id_and_epoch() -> impl Strategy<Value = LeaderIdAndEpoch> {
    pair_with_tags(true, |leader_id, leader_epoch, u| LeaderIdAndEpoch {
        leader_id,
        leader_epoch,
        unknown_tagged_fields: u,
    })
}

fn snapshot_id() -> impl Strategy<Value = SnapshotId> {
    pair_with_tags(true, |end_offset, epoch, u| SnapshotId {
        end_offset,
        epoch,
        unknown_tagged_fields: u,
    })
}

fn aborted_transaction(v: i16) -> impl Strategy<Value = AbortedTransaction> {
    pair_with_tags(v >= 12, |producer_id, first_offset, u| AbortedTransaction {
        producer_id,
        first_offset,
        unknown_tagged_fields: u,
    })
}

fn node_endpoint() -> impl Strategy<Value = NodeEndpoint> {
    (
        any::<i32>(),
        name(),
        any::<i32>(),
        prop::option::of(name()),
        arb_unknown_tags_in(true, 0..40),
    )
        .prop_map(|(node_id, host, port, rack, u)| NodeEndpoint {
            node_id,
            host,
            port,
            rack,
            unknown_tagged_fields: u,
        })
}

fn partition_data(v: i16) -> impl Strategy<Value = PartitionData> {
    (
        any::<(i32, i16, i64, i64, i64, i32)>(),
        (
            prop::option::of(epoch_end_offset()),
            prop::option::of(leader_id_and_epoch()),
            prop::option::of(snapshot_id()),
        ),
        (
            prop::option::of(prop::collection::vec(aborted_transaction(v), 0..3)),
            prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
            arb_unknown_tags_in(v >= 12, 3..43),
        ),
    )
        .prop_map(
            move |(
                (index, error_code, hw, lso, log_start, preferred),
                (de, cl, snap),
                (aborted, records, u),
            )| {
                PartitionData {
                    partition_index: index,
                    error_code,
                    high_watermark: hw,
                    last_stable_offset: lso,
                    log_start_offset: if v >= 5 { log_start } else { -1 },
                    diverging_epoch: de.filter(|_| v >= 12).unwrap_or_default(),
                    current_leader: cl.filter(|_| v >= 12).unwrap_or_default(),
                    snapshot_id: snap.filter(|_| v >= 12).unwrap_or_default(),
                    aborted_transactions: aborted,
                    preferred_read_replica: if v >= 11 { preferred } else { -1 },
                    records: records.map(Bytes::from),
                    unknown_tagged_fields: u,
                }
            },
        )
}

fn fetchable_topic_response(v: i16) -> impl Strategy<Value = FetchableTopicResponse> {
    arb_topic(v, v >= 12, prop::collection::vec(partition_data(v), 0..3))
}

fn fetch_response(v: i16) -> impl Strategy<Value = FetchResponse> {
    (
        any::<i32>(),
        any::<i16>(),
        any::<i32>(),
        prop::collection::vec(fetchable_topic_response(v), 0..3),
        prop::collection::vec(node_endpoint(), 0..3),
        arb_unknown_tags_in(v >= 12, 1..41),
    )
        .prop_map(
            move |(throttle, error_code, session_id, responses, nodes, u)| FetchResponse {
                throttle_time_ms: throttle,
                error_code: if v >= 7 { error_code } else { 0 },
                session_id: if v >= 7 { session_id } else { 0 },
                responses,
                node_endpoints: if v >= 16 { nodes } else { Vec::new() },
                unknown_tagged_fields: u,
            },
        )
}

#[test]
fn request_round_trips_at_every_version() {
    round_trip_every_version(fetch_request);
}

#[test]
fn response_round_trips_at_every_version() {
    round_trip_every_version(fetch_response);
}

// ---- response tests ---------------------------------------------------------------------

/// v4 (classic), written out by hand from `FetchResponse.json`.
const RESPONSE_V4: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
    0x00, 0x00, 0x00, 0x01, // responses: 1
    0x00, 0x02, b't', b'1', //   topic "t1"
    0x00, 0x00, 0x00, 0x01, //   partitions: 1
    0x00, 0x00, 0x00, 0x00, //     partition_index 0
    0x00, 0x00, //     error_code 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, // high_watermark 10
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // last_stable_offset 9
    // no log_start_offset before v5
    0x00, 0x00, 0x00, 0x01, //     aborted_transactions: 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, // producer_id 8
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, // first_offset 3
    // no preferred_read_replica before v11
    0x00, 0x00, 0x00, 0x03, b'a', b'b', b'c', //     records: 3 bytes
];

fn response_v4() -> FetchResponse {
    FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: "t1".into(),
            partitions: vec![PartitionData {
                high_watermark: 10,
                last_stable_offset: 9,
                aborted_transactions: Some(vec![AbortedTransaction {
                    producer_id: 8,
                    first_offset: 3,
                    ..AbortedTransaction::default()
                }]),
                records: Some(Bytes::from_static(b"abc")),
                ..PartitionData::default()
            }],
            ..FetchableTopicResponse::default()
        }],
        ..FetchResponse::default()
    }
}

/// v16 (flexible, topic ids, current leader, node endpoints), by hand.
const RESPONSE_V16: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // throttle_time_ms 0
    0x00, 0x06, // error_code 6 (NOT_LEADER_OR_FOLLOWER)
    0x00, 0x00, 0x00, 0x09, // session_id 9
    0x02, // responses: compact 1
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,   // topic_id
    0x02, //   partitions: compact 1
    0x00, 0x00, 0x00, 0x01, //     partition_index 1
    0x00, 0x06, //     error_code 6
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // high_watermark 100
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, // last_stable_offset 100
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // log_start_offset 0
    0x00, //     aborted_transactions: null
    0xff, 0xff, 0xff, 0xff, //     preferred_read_replica -1
    0x03, 0xde, 0xad, //     records: compact 2 bytes
    0x03, //     tagged: 3 fields
    0x00, 0x0d, //     tag 0 (diverging_epoch), 13 bytes
    0x00, 0x00, 0x00, 0x04, //       epoch 4
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, // end_offset 80
    0x00, //       tagged: none
    0x01, 0x09, //     tag 1 (current_leader), 9 bytes
    0x00, 0x00, 0x00, 0x02, //       leader_id 2
    0x00, 0x00, 0x00, 0x05, //       leader_epoch 5
    0x00, //       tagged: none
    0x02, 0x0d, //     tag 2 (snapshot_id), 13 bytes
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, // end_offset 60
    0x00, 0x00, 0x00, 0x03, //       epoch 3
    0x00, //       tagged: none
    0x00, //   topic tagged: none
    0x01, 0x00, 0x0d, // tagged: 1 field, tag 0 (node_endpoints), 13 bytes
    0x02, //   compact 1
    0x00, 0x00, 0x00, 0x02, //   node_id 2
    0x02, b'h', //   host "h"
    0x00, 0x00, 0x23, 0x84, //   port 9092
    0x00, //   rack null
    0x00, //   tagged: none
];

fn response_v16() -> FetchResponse {
    FetchResponse {
        error_code: 6,
        session_id: 9,
        responses: vec![FetchableTopicResponse {
            topic_id: Uuid(TOPIC_ID),
            partitions: vec![PartitionData {
                partition_index: 1,
                error_code: 6,
                high_watermark: 100,
                last_stable_offset: 100,
                log_start_offset: 0,
                diverging_epoch: EpochEndOffset {
                    epoch: 4,
                    end_offset: 80,
                    ..EpochEndOffset::default()
                },
                current_leader: LeaderIdAndEpoch {
                    leader_id: 2,
                    leader_epoch: 5,
                    ..LeaderIdAndEpoch::default()
                },
                snapshot_id: SnapshotId {
                    end_offset: 60,
                    epoch: 3,
                    ..SnapshotId::default()
                },
                aborted_transactions: None,
                records: Some(Bytes::from_static(&[0xde, 0xad])),
                ..PartitionData::default()
            }],
            ..FetchableTopicResponse::default()
        }],
        node_endpoints: vec![NodeEndpoint {
            node_id: 2,
            host: "h".into(),
            port: 9092,
            rack: None,
            ..NodeEndpoint::default()
        }],
        ..FetchResponse::default()
    }
}

#[test]
fn hand_written_bytes() {
    check_encodings(&[
        (11, REQUEST_V11, request_v11()),
        (17, REQUEST_V17, request_v17()),
        (18, REQUEST_V18, request_v18()),
    ]);
    check_encodings(&[
        (4, RESPONSE_V4, response_v4()),
        (16, RESPONSE_V16, response_v16()),
    ]);
}

/// [`response_v16`] with what `version` lacks put back to defaults.
fn response_v16_at(version: i16) -> FetchResponse {
    let mut r = response_v16();
    if version < 16 {
        r.node_endpoints.clear();
    }
    if version < 12 {
        let p = &mut r.responses[0].partitions[0];
        p.diverging_epoch = EpochEndOffset::default();
        p.current_leader = LeaderIdAndEpoch::default();
        p.snapshot_id = SnapshotId::default();
    }
    if version < 7 {
        r.session_id = 0;
    }
    r
}

#[test]
fn response_prefixes_and_trailing_bytes_fail() {
    for version in ALL_VERSIONS {
        assert_encoding_prefixes_fail(&response_v16_at(version), version);
    }
}

#[test]
fn response_length_bombs_fail_at_once() {
    // The hand-written v4 frame up to the records length (7 bytes before its end) or the
    // aborted_transactions count (after 34 bytes), then 2^31-1 there.
    let bomb_at =
        |cut: usize| [&RESPONSE_V4[..cut], &[0x7f, 0xff, 0xff, 0xff][..], &[0; 6]].concat();
    let cases = [
        // v4: throttle_time_ms, then the responses count 2^31-1, and -2.
        (4, after_zeros(4, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0])),
        (4, after_zeros(4, &[0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0])),
        // v16: throttle, error_code, session_id, then compact counts 0xffffffff and 2^31-1.
        (
            16,
            after_zeros(10, &[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0]),
        ),
        (
            16,
            after_zeros(10, &[0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0]),
        ),
        (4, bomb_at(RESPONSE_V4.len() - 7)),
        (4, bomb_at(4 + 4 + 4 + 4 + 4 + 2 + 8 + 8)),
        // v4 topic name of length 0x7fff.
        (
            4,
            vec![0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0, 0, 0, 0, 0, 0],
        ),
    ];
    check_length_bombs::<FetchResponse>(&cases.each_ref().map(|(v, b)| (*v, &b[..])));
}

#[test]
fn response_non_ignorable_fields_refused_where_absent() {
    let with_partition = |p: PartitionData| FetchResponse {
        responses: vec![FetchableTopicResponse {
            partitions: vec![p],
            ..FetchableTopicResponse::default()
        }],
        ..FetchResponse::default()
    };
    let response = with::<FetchResponse>;
    let partition = |set: fn(&mut PartitionData)| with_partition(with(set));
    check_refused(&[
        (
            response(|r| r.session_id = 1),
            6,
            "FetchResponse.session_id",
            7,
        ),
        (
            response(|r| r.node_endpoints = vec![NodeEndpoint::default()]),
            15,
            "FetchResponse.node_endpoints",
            16,
        ),
        (
            partition(|p| p.preferred_read_replica = 2),
            10,
            "FetchResponse.responses.partitions.preferred_read_replica",
            11,
        ),
        (
            partition(|p| p.diverging_epoch.epoch = 1),
            11,
            "FetchResponse.responses.partitions.diverging_epoch",
            12,
        ),
        (
            partition(|p| p.current_leader.leader_id = 1),
            11,
            "FetchResponse.responses.partitions.current_leader",
            12,
        ),
        (
            partition(|p| p.snapshot_id.epoch = 1),
            11,
            "FetchResponse.responses.partitions.snapshot_id",
            12,
        ),
    ]);

    // Ignorable: error_code and log_start_offset are dropped in versions without them.
    let r = FetchResponse {
        error_code: 3,
        ..with_partition(PartitionData {
            log_start_offset: 5,
            ..PartitionData::default()
        })
    };
    let decoded: FetchResponse = decode_exact(encode(&r, 4), 4).unwrap();
    assert_eq!(decoded, with_partition(PartitionData::default()));
}

#[test]
fn two_partitions_null_and_present_records() {
    // v12 by hand: one topic "t", partition 0 with null records, partition 1 with 5 bytes.
    #[rustfmt::skip]
    let frame: &[u8] = &[
        0, 0, 0, 0, // throttle_time_ms
        0, 0, // error_code
        0, 0, 0, 0, // session_id
        0x02, // responses: 1
        0x02, b't', // topic "t"
        0x03, // partitions: 2
        // partition 0: nothing fetched
        0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 7, // high_watermark 7
        0, 0, 0, 0, 0, 0, 0, 7, // last_stable_offset 7
        0, 0, 0, 0, 0, 0, 0, 0, // log_start_offset 0
        0x01, // aborted_transactions: empty
        0xff, 0xff, 0xff, 0xff, // preferred_read_replica -1
        0x00, // records: null
        0x00, // tagged
        // partition 1: five bytes of records
        0, 0, 0, 1, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 9,
        0, 0, 0, 0, 0, 0, 0, 9,
        0, 0, 0, 0, 0, 0, 0, 0,
        0x01,
        0xff, 0xff, 0xff, 0xff,
        0x06, 1, 2, 3, 4, 5, // records: 5 bytes
        0x00,
        0x00, // topic tagged
        0x00, // response tagged
    ];
    let input = Bytes::copy_from_slice(frame);
    let resp: FetchResponse = decode_exact(input.clone(), 12).unwrap();
    let parts = &resp.responses[0].partitions;
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].records, None);
    assert_eq!(parts[0].high_watermark, 7);
    assert_eq!(parts[1].partition_index, 1);
    assert_eq!(parts[1].records.as_deref(), Some(&[1u8, 2, 3, 4, 5][..]));
    assert_eq!(parts[1].high_watermark, 9);
    assert_eq!(parts[1].aborted_transactions, Some(Vec::new()));
    assert_eq!(&encode(&resp, 12)[..], frame);
}

#[test]
fn records_are_not_copied() {
    let input = encode(&response_v16(), 16);
    let in_range = input.as_ptr_range();
    let resp: FetchResponse = decode_exact(input.clone(), 16).unwrap();
    let records = resp.responses[0].partitions[0].records.clone().unwrap();
    let r = records.as_ptr_range();
    assert!(in_range.start <= r.start && r.end <= in_range.end);
    // And it is exactly the two record bytes in the frame, not a copy of equal content.
    let offset = r.start as usize - in_range.start as usize;
    assert_eq!(&input[offset..offset + 2], &[0xde, 0xad]);

    // Same for a large classic payload.
    let big = Bytes::from(vec![7u8; 1 << 16]);
    let mut value = response_v4();
    value.responses[0].partitions[0].records = Some(big);
    let input = encode(&value, 4);
    let resp: FetchResponse = decode_exact(input.clone(), 4).unwrap();
    let records = resp.responses[0].partitions[0].records.clone().unwrap();
    assert_eq!(records.len(), 1 << 16);
    let (a, r) = (input.as_ptr_range(), records.as_ptr_range());
    assert!(a.start <= r.start && r.end <= a.end);
}

#[test]
fn response_unknown_tagged_fields_survive() {
    // v12: tag 0 at the top level is node_endpoints only from v16, so here it is unknown.
    let mut r = response_v16_at(12);
    r.responses[0].topic = "t".into();
    r.responses[0].topic_id = Uuid::ZERO;
    r.unknown_tagged_fields = unknown(&[(0, &[0x01])]);
    r.responses[0].partitions[0].unknown_tagged_fields = unknown(&[(5, b"zz")]);
    check_round_trip(&r, 12).unwrap();
}

proptest! {
    /// Neither decoder panics on arbitrary bytes (up to 160), at any version.
    #[test]
    fn decode_never_panics(data in prop::collection::vec(any::<u8>(), 0..160)) {
        decode_both::<FetchRequest, FetchResponse>(&data, ALL_VERSIONS);
    }

    #[test]
    fn response_decode_of_mutated_frames_never_panics(
        index in 0usize..RESPONSE_V16.len(),
        byte: u8,
    ) {
        let mut frame = RESPONSE_V16.to_vec();
        frame[index] = byte;
        decode_both::<FetchRequest, FetchResponse>(&frame, ALL_VERSIONS);
    }
}

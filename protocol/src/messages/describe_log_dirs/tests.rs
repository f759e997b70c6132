//! Tests of `describe_log_dirs`: the DescribeLogDirs request and response encodings, checked against bytes written
//! out by hand from the schemas, and round trips of every version.

use super::*;
use crate::messages::testing::prelude::*;

fn request(v: i16) -> impl Strategy<Value = DescribeLogDirsRequest> {
    let flexible = v >= 2;
    (
        proptest::option::of(vec(
            (
                "[a-z0-9._-]{0,12}",
                vec(any::<i32>(), 0..4),
                arb_unknown_tags(flexible),
            ),
            0..3,
        )),
        arb_unknown_tags(flexible),
    )
        .prop_map(|(topics, tags)| DescribeLogDirsRequest {
            topics: topics.map(|topics| {
                topics
                    .into_iter()
                    .map(|(topic, partitions, tags)| DescribableLogDirTopic {
                        topic,
                        partitions,
                        unknown_tagged_fields: tags,
                    })
                    .collect()
            }),
            unknown_tagged_fields: tags,
        })
}

fn response(v: i16) -> impl Strategy<Value = DescribeLogDirsResponse> {
    let flexible = v >= 2;
    let partition = (any::<(i32, i64, i64, bool)>(), arb_unknown_tags(flexible)).prop_map(
        |((partition_index, partition_size, offset_lag, is_future_key), tags)| LogDirPartition {
            partition_index,
            partition_size,
            offset_lag,
            is_future_key,
            unknown_tagged_fields: tags,
        },
    );
    let topic = (
        "[a-z0-9._-]{0,12}",
        vec(partition, 0..3),
        arb_unknown_tags(flexible),
    )
        .prop_map(|(name, partitions, tags)| LogDirTopic {
            name,
            partitions,
            unknown_tagged_fields: tags,
        });
    let result = (
        any::<i16>(),
        "[ -~]{0,16}",
        vec(topic, 0..3),
        arb_unknown_tags(flexible),
    )
        .prop_map(|(error_code, log_dir, topics, tags)| LogDirResult {
            error_code,
            log_dir,
            topics,
            unknown_tagged_fields: tags,
        });
    (
        any::<i32>(),
        any::<i16>(),
        vec(result, 0..3),
        arb_unknown_tags(flexible),
    )
        .prop_map(
            move |(throttle, error_code, results, tags)| DescribeLogDirsResponse {
                throttle_time_ms: throttle,
                error_code: if v >= 3 { error_code } else { 0 },
                results,
                unknown_tagged_fields: tags,
            },
        )
}

property_tests!(DescribeLogDirsRequest, DescribeLogDirsResponse, 64);

fn one_partition() -> DescribeLogDirsRequest {
    DescribeLogDirsRequest {
        topics: Some(vec![DescribableLogDirTopic {
            topic: "t".into(),
            partitions: vec![2],
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn answer() -> DescribeLogDirsResponse {
    DescribeLogDirsResponse {
        results: vec![LogDirResult {
            log_dir: "/d".into(),
            topics: vec![LogDirTopic {
                name: "t".into(),
                partitions: vec![LogDirPartition {
                    partition_index: 2,
                    partition_size: 4096,
                    offset_lag: 0,
                    is_future_key: false,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn prefixes_fail_and_trailing_bytes_are_refused() {
    for v in 1..=3 {
        assert_encoding_prefixes_fail(&one_partition(), v);
        assert_encoding_prefixes_fail(&answer(), v);
    }
}

#[test]
fn the_top_level_error_code_needs_version_3() {
    check_not_in_version(&[(
        2,
        DescribeLogDirsResponse {
            error_code: 31,
            ..Default::default()
        },
    )]);
}

codec_tests! {
    encodings {
        DescribeLogDirsRequest: [
            // topics: int32 count 1; topic int16 len 1 "t"; partitions int32 count 1, 2.
            (
                1,
                &[
                    0x00, 0x00, 0x00, 0x01, 0x00, 0x01, b't', 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                    0x00, 0x02,
                ],
                one_partition(),
            ),
            // Compact: count+1, len+1, count+1, then the topic's and the body's tag sections.
            (
                2,
                &[0x02, 0x02, b't', 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00],
                one_partition(),
            ),
            // All topics: a null array, -1 (int32) or 0 (compact).
            (
                1,
                &[0xff, 0xff, 0xff, 0xff],
                DescribeLogDirsRequest {
                    topics: None,
                    ..Default::default()
                },
            ),
            (
                3,
                &[0x00, 0x00],
                DescribeLogDirsRequest {
                    topics: None,
                    ..Default::default()
                },
            ),
        ],
        DescribeLogDirsResponse: [
            (
                1,
                &[
                    0x00, 0x00, 0x00, 0x00, // throttle
                    0x00, 0x00, 0x00, 0x01, // one result
                    0x00, 0x00, // error_code
                    0x00, 0x02, b'/', b'd', // log_dir
                    0x00, 0x00, 0x00, 0x01, // one topic
                    0x00, 0x01, b't', // name
                    0x00, 0x00, 0x00, 0x01, // one partition
                    0x00, 0x00, 0x00, 0x02, // partition_index
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, // partition_size 4096
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // offset_lag
                    0x00, // is_future_key
                ][..],
                answer(),
            ),
            (
                3,
                &[
                    0x00, 0x00, 0x00, 0x00, // throttle
                    0x00, 0x1f, // CLUSTER_AUTHORIZATION_FAILED
                    0x01, // no results
                    0x00, // tagged section
                ],
                DescribeLogDirsResponse {
                    error_code: 31,
                    ..Default::default()
                },
            ),
        ],
    }
    length_bombs {
        DescribeLogDirsResponse: [
            // v1: results count 0x7fffffff.
            (1, &[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0]),
            // v2: results compact count 0x7fffffff.
            (2, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0]),
            // v1: one result whose log_dir says 0x7fff bytes.
            (1, &[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0, 0]),
        ],
        DescribeLogDirsRequest: [
            // v1: topics count 0x7fffffff.
            (1, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0]),
        ],
    }
}

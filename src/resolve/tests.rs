//! Unit tests of offset resolution: which ListOffsets requests a window needs and how their
//! answers (and errors) become positions.

use std::collections::BTreeMap;

use super::*;
use crate::error::Error;
use kseek_protocol::messages::api_versions::{ApiVersion, ApiVersionsResponse};
use kseek_protocol::negotiate::negotiate;

fn key() -> Key {
    ("t".to_owned(), 0)
}

const SNAP: Snapshot = Snapshot {
    log_start: 10,
    last_fetchable: 100,
};

#[test]
fn lookups_miss_to_the_snapshot_and_hits_are_kept() {
    let lookup = Rule::Lookup(1_000);
    assert_eq!(position(lookup, SNAP, Some(42), false, &key()).unwrap(), 42);
    // The broker's -1, and a hit at or past the snapshot, resolve to the snapshot.
    assert_eq!(
        position(lookup, SNAP, Some(-1), false, &key()).unwrap(),
        100
    );
    assert_eq!(
        position(lookup, SNAP, Some(100), false, &key()).unwrap(),
        100
    );
    assert_eq!(
        position(lookup, SNAP, Some(150), false, &key()).unwrap(),
        100
    );
    assert_eq!(position(lookup, SNAP, None, false, &key()).unwrap(), 100);
    // Strict mode names what it didn't find.
    match position(lookup, SNAP, Some(-1), true, &key()).map_err(Error::into_kind) {
        Err(ErrorKind::TimestampNotFound {
            topic,
            partition,
            timestamp,
            last_fetchable_offset,
        }) => assert_eq!(
            (topic.as_str(), partition, timestamp, last_fetchable_offset),
            ("t", 0, 1_000, 100)
        ),
        other => panic!("{other:?}"),
    }
    assert!(position(lookup, SNAP, Some(150), true, &key()).is_err());
    assert_eq!(position(lookup, SNAP, Some(42), true, &key()).unwrap(), 42);
}

#[test]
fn committed_offsets_are_clamped_into_the_log() {
    let at = |o| position(Rule::Committed(o), SNAP, None, false, &key()).unwrap();
    assert_eq!(at(5), 10);
    assert_eq!(at(50), 50);
    assert_eq!(at(500), 100);
    assert_eq!(
        position(Rule::Earliest, SNAP, None, false, &key()).unwrap(),
        10
    );
    assert_eq!(
        position(Rule::Latest, SNAP, None, false, &key()).unwrap(),
        100
    );
    assert_eq!(
        position(Rule::Explicit(7), SNAP, None, false, &key()).unwrap(),
        7
    );
}

#[test]
fn committed_rules_fall_back_or_report_missing() {
    // Target 0 (t[0]) has a commit, target 1 (t[1]) none.
    let commits: Commits = vec![("g".to_owned(), vec![Some(5), None])];
    let other = ("t".to_owned(), 1);
    let start = Start::Committed {
        group: "g".into(),
        fallback: Some(Box::new(Start::Timestamp(77))),
    };
    assert_eq!(
        start_rule(&start, &key(), 0, &commits, false).unwrap(),
        Rule::Committed(5)
    );
    assert_eq!(
        start_rule(&start, &other, 1, &commits, false).unwrap(),
        Rule::Lookup(77)
    );
    assert_eq!(
        start_rule(&start, &other, 1, &commits, true).unwrap(),
        Rule::NoCommit
    );
    let no_fallback = Start::Committed {
        group: "g".into(),
        fallback: None,
    };
    assert_eq!(
        start_rule(&no_fallback, &other, 1, &commits, false).unwrap(),
        Rule::NoCommit
    );
    let end = End::Committed { group: "g".into() };
    assert_eq!(
        end_rule(&end, &key(), 0, &commits).unwrap(),
        Rule::Committed(5)
    );
    assert_eq!(end_rule(&end, &other, 1, &commits).unwrap(), Rule::NoCommit);
}

#[test]
#[cfg(feature = "group")]
fn commits_are_matched_to_targets_in_any_order() {
    let commit = |topic: &str, partition, offset| CommittedOffset {
        topic: topic.into(),
        partition,
        offset,
        leader_epoch: 0,
        metadata: None,
    };
    let mut u0 = target(0);
    u0.topic = "u".into();
    // Targets t[0], t[1], u[0]; the commits of t[0..3] and u[0], in that order and
    // shuffled: each target gets its own partition's commit, t[2] none.
    let targets = [target(0), target(1), u0];
    let mut found = vec![
        commit("t", 0, Some(5)),
        commit("t", 1, None),
        commit("t", 2, Some(7)),
        commit("u", 0, Some(9)),
    ];
    assert_eq!(
        committed_per_target(&targets, &found),
        [Some(5), None, Some(9)]
    );
    found.reverse();
    found.swap(0, 2);
    assert_eq!(
        committed_per_target(&targets, &found),
        [Some(5), None, Some(9)]
    );
    // A partition the answer leaves out has no commit.
    found.retain(|c| c.topic == "t");
    assert_eq!(
        committed_per_target(&targets, &found),
        [Some(5), None, None]
    );
}

#[test]
fn offsets_use_their_default() {
    let commits = Commits::new();
    let start = Start::Offsets {
        offsets: BTreeMap::from([(key(), 3)]),
        default: Some(Box::new(Start::Earliest)),
    };
    let other = ("t".to_owned(), 1);
    assert_eq!(
        start_rule(&start, &key(), 0, &commits, false).unwrap(),
        Rule::Explicit(3)
    );
    assert_eq!(
        start_rule(&start, &other, 1, &commits, false).unwrap(),
        Rule::Earliest
    );
    let no_default = Start::Offsets {
        offsets: BTreeMap::new(),
        default: None,
    };
    assert!(matches!(
        start_rule(&no_default, &other, 1, &commits, false).map_err(Error::into_kind),
        Err(ErrorKind::InvalidSpec { .. })
    ));
    let end = End::Offsets(BTreeMap::from([(key(), 9)]));
    assert_eq!(
        end_rule(&end, &key(), 0, &commits).unwrap(),
        Rule::Explicit(9)
    );
    assert_eq!(end_rule(&end, &other, 1, &commits).unwrap(), Rule::Latest);
}

#[test]
fn specs_are_validated() {
    let spec = |start, end| ReadSpec::new(["t"], start, end);
    assert!(validate(&spec(Start::Timestamp(5), End::Timestamp(5))).is_ok());
    assert!(validate(&spec(Start::Timestamp(6), End::Timestamp(5))).is_err());
    assert!(validate(&spec(Start::Timestamp(-3), End::Latest)).is_err());
    assert!(validate(&spec(Start::MaxTimestamp, End::Latest)).is_ok());
    assert!(validate(&spec(Start::Earliest, End::Timestamp(-2))).is_err());
    assert!(validate(&spec(
        Start::Earliest,
        End::Offsets(BTreeMap::from([(key(), -1)]))
    ))
    .is_err());
    let nested = Start::Committed {
        group: "g".into(),
        fallback: Some(Box::new(Start::Committed {
            group: "h".into(),
            fallback: None,
        })),
    };
    assert!(validate(&spec(nested, End::Latest)).is_err());
    assert!(validate(&ReadSpec::new(
        Vec::<String>::new(),
        Start::Earliest,
        End::Latest
    ))
    .is_err());
}

#[test]
fn a_spec_naming_a_group_needs_the_group_feature() {
    let committed = ReadSpec::new(
        ["t"],
        Start::Committed {
            group: "g".into(),
            fallback: None,
        },
        End::Latest,
    );
    let at_commit = ReadSpec::new(["t"], Start::Earliest, End::Committed { group: "h".into() });
    for spec in [committed, at_commit] {
        let result = validate(&spec);
        if cfg!(feature = "group") {
            assert!(result.is_ok(), "{result:?}");
        } else {
            let error = result.unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::Config { .. }),
                "{error:?}"
            );
            assert!(error.to_string().contains("`group` feature"), "{error}");
            assert!(!error.is_retriable());
        }
    }
}

/// The plan of partition t[0] with the snapshot `snap`, the rules, and the lookups'
/// answers (`None`: not asked).
fn plan_of(
    snap: Snapshot,
    rules: (Rule, Rule),
    start_hit: Option<i64>,
    end_hit: Option<i64>,
) -> Result<(i64, Option<i64>)> {
    let p = partition_plan_of(snap, rules, start_hit, end_hit)?;
    Ok((p.start, p.end))
}

/// [`plan_of`]'s whole partition plan.
fn partition_plan_of(
    snap: Snapshot,
    rules: (Rule, Rule),
    start_hit: Option<i64>,
    end_hit: Option<i64>,
) -> Result<PartitionPlan> {
    let spec = ReadSpec::new(["t"], Start::Earliest, End::Latest);
    let rounds = [
        vec![Some(snap.last_fetchable)],
        vec![Some(snap.log_start)],
        vec![start_hit],
        vec![end_hit],
    ];
    let mut plan = plan(&spec, &[target(0)], &[rules], &rounds)?;
    Ok(plan.partitions.remove(0))
}

#[test]
fn explicit_starts_outside_the_log_move_into_it_and_say_so() {
    let adjusted = |rules, end_hit| {
        let p = partition_plan_of(SNAP, rules, None, end_hit).unwrap();
        (p.start, p.end, p.adjusted)
    };
    // Past the end of a short partition (SNAP ends at 100): an empty range at its end,
    // whether the end is latest or an end time that found nothing.
    let past = Some(Adjusted::PastEnd { requested: 150 });
    assert_eq!(
        adjusted((Rule::Explicit(150), Rule::Latest), None),
        (100, Some(100), past)
    );
    assert_eq!(
        adjusted((Rule::Explicit(150), Rule::Lookup(7)), Some(-1)),
        (100, Some(100), past)
    );
    // Below the log start (10): the range starts there, and so does an end below it.
    let below = Some(Adjusted::BelowLogStart { requested: 4 });
    assert_eq!(
        adjusted((Rule::Explicit(4), Rule::Explicit(50)), None),
        (10, Some(50), below)
    );
    assert_eq!(
        adjusted((Rule::Explicit(4), Rule::Explicit(6)), None),
        (10, Some(10), below)
    );
    // Inside the log: as given, nothing adjusted.
    assert_eq!(
        adjusted((Rule::Explicit(20), Rule::Latest), None),
        (20, Some(100), None)
    );
    // An end that is not the log's end stays an error: an explicit end offset, or an end
    // time that found a record.
    for (rules, end_hit) in [
        ((Rule::Explicit(150), Rule::Explicit(50)), None),
        ((Rule::Explicit(150), Rule::Lookup(7)), Some(60)),
    ] {
        let error = partition_plan_of(SNAP, rules, None, end_hit).unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::StartAfterEnd { start: 150, .. }),
            "{rules:?}: {error:?}"
        );
    }
}

#[test]
fn a_start_after_its_end_is_an_error_for_every_kind_of_position() {
    let after = |rules, start_hit, end_hit| match plan_of(SNAP, rules, start_hit, end_hit)
        .map_err(Error::into_kind)
    {
        Err(ErrorKind::StartAfterEnd {
            topic,
            partition,
            start,
            end,
        }) => {
            assert_eq!((topic.as_str(), partition), ("t", 0));
            (start, end)
        }
        other => panic!("{rules:?}: {other:?}"),
    };
    // Latest to earliest, latest to an earlier time, a commit after the end time, a
    // timestamp start after a max-timestamp end, an offset after the end.
    assert_eq!(after((Rule::Latest, Rule::Earliest), None, None), (100, 10));
    assert_eq!(
        after((Rule::Latest, Rule::Lookup(5)), None, Some(50)),
        (100, 50)
    );
    assert_eq!(
        after((Rule::Committed(80), Rule::Lookup(5)), None, Some(50)),
        (80, 50)
    );
    assert_eq!(
        after(
            (Rule::Lookup(5), Rule::Lookup(MAX_TIMESTAMP)),
            Some(60),
            Some(40)
        ),
        (60, 40)
    );
    assert_eq!(
        after((Rule::Explicit(20), Rule::Earliest), None, None),
        (20, 10)
    );
    assert_eq!(
        after((Rule::Earliest, Rule::Explicit(3)), None, None),
        (10, 3)
    );
}

#[test]
fn equal_ends_and_start_lookups_that_find_nothing_are_empty_ranges() {
    let ok = |rules, start_hit, end_hit| plan_of(SNAP, rules, start_hit, end_hit).unwrap();
    assert_eq!(
        ok((Rule::Earliest, Rule::Earliest), None, None),
        (10, Some(10))
    );
    assert_eq!(
        ok((Rule::Latest, Rule::Latest), None, None),
        (100, Some(100))
    );
    // A start time after the newest record: nothing to read, whatever the end.
    assert_eq!(
        ok((Rule::Lookup(5), Rule::Latest), Some(-1), None),
        (100, Some(100))
    );
    assert_eq!(
        ok((Rule::Lookup(5), Rule::Earliest), Some(-1), None),
        (10, Some(10))
    );
    assert_eq!(
        ok((Rule::Lookup(5), Rule::Lookup(9)), Some(100), Some(-1)),
        (100, Some(100))
    );
    // An empty partition: latest to earliest is the one empty range.
    let empty = Snapshot {
        log_start: 5,
        last_fetchable: 5,
    };
    assert_eq!(
        plan_of(empty, (Rule::Latest, Rule::Earliest), None, None).unwrap(),
        (5, Some(5))
    );
    assert_eq!(ok((Rule::Latest, Rule::Unbounded), None, None), (100, None));
}

#[test]
fn a_leader_answering_minus_one_for_latest_or_earliest_is_an_invalid_response() {
    for offset in [Some(-1), None] {
        match answer(offset, &key(), "the log start offset", 3).map_err(Error::into_kind) {
            Err(e @ ErrorKind::InvalidResponse { .. }) => {
                assert!(!e.is_retriable());
                let text = e.to_string();
                assert!(
                    text.starts_with("broker node 3 gave an unusable ListOffsets answer"),
                    "{text}"
                );
                assert!(
                    text.contains("the log start offset of partition 0 of topic \"t\""),
                    "{text}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(answer(Some(0), &key(), "x", 3).unwrap(), 0);
}

#[test]
fn named_positions_become_rules() {
    let commits = Commits::new();
    let start = |s: Start| start_rule(&s, &key(), 0, &commits, false).unwrap();
    let end = |e: End| end_rule(&e, &key(), 0, &commits).unwrap();
    assert_eq!(start(Start::MaxTimestamp), Rule::Lookup(MAX_TIMESTAMP));
    assert_eq!(start(Start::EarliestLocal), Rule::Lookup(EARLIEST_LOCAL));
    assert_eq!(start(Start::LatestTiered), Rule::Lookup(LATEST_TIERED));
    assert_eq!(end(End::Earliest), Rule::Earliest);
    assert_eq!(end(End::MaxTimestamp), Rule::Lookup(MAX_TIMESTAMP));
    assert_eq!(end(End::EarliestLocal), Rule::Lookup(EARLIEST_LOCAL));
    assert_eq!(end(End::LatestTiered), Rule::Lookup(LATEST_TIERED));
}

fn versions(list_offsets_max: i16) -> ApiVersionMap {
    negotiate(&ApiVersionsResponse {
        api_keys: vec![ApiVersion {
            api_key: ApiKey::LIST_OFFSETS.0,
            min_version: 1,
            max_version: list_offsets_max,
            ..Default::default()
        }],
        ..Default::default()
    })
    .unwrap()
}

fn target(partition: i32) -> Target {
    Target {
        topic: "t".into(),
        topic_id: Uuid::ZERO,
        partition,
        leader_id: 1,
        leader_epoch: 4,
    }
}

#[test]
fn special_timestamps_are_refused_to_older_brokers() {
    let (a, b) = (target(0), target(1));
    let request = |ts| {
        list_offsets_request(
            &[(0, a.clone(), 0), (1, b.clone(), ts)],
            IsolationLevel::READ_COMMITTED,
        )
    };
    // A v6 broker: real timestamps fine, -3 refused with the versions in the error.
    assert_eq!(
        list_offsets_version("b:1", &versions(6), &request(1_000)).unwrap(),
        6
    );
    match list_offsets_version("b:1", &versions(6), &request(MAX_TIMESTAMP))
        .map_err(Error::into_kind)
    {
        Err(ErrorKind::UnsupportedTimestamp {
            timestamp,
            required_version,
            broker_max_version,
            ..
        }) => assert_eq!(
            (timestamp, required_version, broker_max_version),
            (-3, 7, 6)
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        list_offsets_version("b:1", &versions(7), &request(MAX_TIMESTAMP)).unwrap(),
        7
    );
    assert!(list_offsets_version("b:1", &versions(7), &request(EARLIEST_LOCAL)).is_err());
    assert_eq!(
        list_offsets_version("b:1", &versions(8), &request(EARLIEST_LOCAL)).unwrap(),
        8
    );
    assert!(list_offsets_version("b:1", &versions(8), &request(LATEST_TIERED)).is_err());
    assert_eq!(
        list_offsets_version("b:1", &versions(9), &request(LATEST_TIERED)).unwrap(),
        9
    );
    let err = list_offsets_version("b:1", &versions(6), &request(MAX_TIMESTAMP)).unwrap_err();
    assert!(err.to_string().contains("needs v7"), "{err}");
}

#[test]
fn one_request_per_leader_with_epoch_isolation_and_consumer_replica_id() {
    let mut c = target(0);
    c.topic = "u".into();
    let (a, b) = (target(0), target(1));
    let request = list_offsets_request(
        &[(0, a, LATEST), (1, c, LATEST), (2, b, LATEST)],
        IsolationLevel::READ_COMMITTED,
    );
    assert_eq!(request.replica_id, -1);
    assert_eq!(request.isolation_level, IsolationLevel::READ_COMMITTED);
    assert_eq!(request.topics.len(), 2);
    assert_eq!(request.topics[0].partitions.len(), 2);
    assert_eq!(request.topics[0].partitions[1].current_leader_epoch, 4);
}

#[test]
fn selection_reads_a_topic_once_and_refuses_unknown_partitions() {
    use crate::cluster::PartitionMetadata;
    let topic = TopicMetadata {
        name: "t".into(),
        topic_id: Uuid::ZERO,
        partitions: (0..2)
            .map(|p| PartitionMetadata {
                partition: p,
                leader_id: p,
                leader_epoch: 0,
                error_code: ErrorCode::NONE,
            })
            .collect(),
    };
    let mut spec = ReadSpec::new(["t", "t"], Start::Earliest, End::Latest);
    let targets = select(&spec, &[topic.clone(), topic.clone()]).unwrap();
    assert_eq!(targets.len(), 2);
    spec.partitions = Some(vec![1, 1]);
    assert_eq!(
        select(&spec, std::slice::from_ref(&topic)).unwrap().len(),
        1
    );
    spec.partitions = Some(vec![2]);
    assert!(matches!(
        select(&spec, &[topic]).map_err(Error::into_kind),
        Err(ErrorKind::UnknownPartition { partition: 2, .. })
    ));
}

#[tokio::test]
async fn all_answers_waits_for_every_answer_in_any_order() {
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<i64>();
    let (second_tx, second_rx) = tokio::sync::oneshot::channel::<i64>();
    let pending: Vec<BoxFuture<'_, Result<i64>>> = vec![
        Box::pin(async move { Ok(first_rx.await.unwrap_or(-1)) }),
        Box::pin(async { Ok(7) }),
        Box::pin(async move { Ok(second_rx.await.unwrap_or(-1)) }),
    ];
    // The later futures answer first, while the first still waits.
    tokio::spawn(async move {
        second_tx.send(2).unwrap();
        tokio::task::yield_now().await;
        first_tx.send(1).unwrap();
    });
    let mut got = Vec::new();
    all_answers(pending, |x| got.push(x)).await.unwrap();
    got.sort();
    assert_eq!(got, [1, 2, 7]);
    let mut none = Vec::<i64>::new();
    all_answers(Vec::new(), |x| none.push(x)).await.unwrap();
    assert!(none.is_empty());
}

#[tokio::test]
async fn all_answers_ends_at_the_first_error_and_drops_the_rest() {
    let (tx, rx) = tokio::sync::oneshot::channel::<i64>();
    let pending: Vec<BoxFuture<'_, Result<i64>>> = vec![
        Box::pin(async move { Ok(rx.await.unwrap_or(-1)) }),
        Box::pin(async { Err(ErrorKind::UnknownBroker { broker_id: 3 }.into()) }),
    ];
    let mut got = Vec::new();
    let err = all_answers(pending, |x| got.push(x)).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnknownBroker { broker_id: 3 }),
        "{err:?}"
    );
    assert!(got.is_empty());
    // The future still waiting was dropped, its receiver with it.
    assert!(tx.is_closed());
}
